//! Problem statements from an issues export and the summaries commands print: `mine --mirror
//! --issues-export` filling the texts a mirror lacks, `no_issue_text` counted and dropped by
//! curate and publish, and `--json` on mine, curate, report, publish, export, regrade, evaluate,
//! revalidate, bench scale and the `images` subcommands, each one JSON object on stdout (on stderr
//! when `-o -` puts the records there). No engine but for `images`' (three tiny images built from
//! scratch): the evaluation's result is in its store already, revalidate only reports, and the
//! engine's address leads nowhere.

use std::path::Path;

use serde_json::Value;
use sha2::{Digest, Sha256};
use swe_forge_core::{ForgeMeta, Instance, QualityFlag, RejectReason, Rejection, ValidationStatus};

use crate::support::{make_repos, read_records, root, swe_forge, text};

/// The one JSON object a command printed on stdout.
fn json_of(o: &std::process::Output) -> Value {
    assert!(o.status.success(), "{}", text(o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(stdout.trim().lines().count(), 1, "one line on stdout: {stdout}");
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

fn flags(r: &Instance) -> Vec<QualityFlag> {
    r.swe_forge.as_ref().and_then(|m| m.quality.as_ref()).map(|q| q.flags.clone()).unwrap_or_default()
}

/// A mirror mined alone gives candidates with no text, raising `no_issue_text`, said on stderr;
/// with `data/fixtures/github-issues.json` (a `gh api --paginate` export) each has its pull
/// request's and issues' texts. Curate counts the flag and `--drop-flag` leaves those out.
#[test]
fn mine_reads_texts_from_an_issues_export_and_curate_drops_no_issue_text() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = make_repos(tmp.path());
    let mirror = repos.join("forge-fixtures/gostack");
    let export = root().join("data/fixtures/github-issues.json");
    let bare = tmp.path().join("bare.jsonl");
    let o = swe_forge(&["mine", "--mirror", mirror.to_str().unwrap(), "-o", bare.to_str().unwrap(), "--json"]);
    let summary = json_of(&o);
    assert_eq!((summary["candidates"].as_u64(), summary["no_issue_text"].as_u64()), (Some(4), Some(4)), "{summary}");
    assert_eq!(summary["repositories"][0]["repo"], "forge-fixtures/gostack");
    assert!(String::from_utf8_lossy(&o.stderr).contains("--issues-export"), "{}", text(&o));
    assert!(read_records(&bare).iter().all(|r| flags(r) == [QualityFlag::NoIssueText]));

    let mined = tmp.path().join("mined.jsonl");
    let o = swe_forge(&[
        "mine",
        "--mirror",
        mirror.to_str().unwrap(),
        "--issues-export",
        export.to_str().unwrap(),
        "-o",
        mined.to_str().unwrap(),
        "--json",
    ]);
    let summary = json_of(&o);
    assert_eq!((summary["candidates"].as_u64(), summary["no_issue_text"].as_u64()), (Some(4), Some(0)), "{summary}");
    assert!(text(&o).contains("issues export: 3 issues and 6 pull requests of forge-fixtures/gostack"), "{}", text(&o));
    let recorded = read_records(&root().join("data/fixtures/instances.jsonl"));
    for r in read_records(&mined) {
        let want = recorded.iter().find(|w| w.instance_id == r.instance_id).unwrap();
        assert_eq!((&r.title, &r.body), (&want.title, &want.body), "{}", r.instance_id);
        assert_eq!(r.resolved_issues[0].title, want.resolved_issues[0].title, "{}", r.instance_id);
        assert!(flags(&r).is_empty(), "{}", r.instance_id);
    }
    // Candidates go to a file mine resumes from: `-o -` is refused, before anything is written.
    let o = swe_forge(&["mine", "--mirror", mirror.to_str().unwrap(), "-o", "-"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(o.stdout.is_empty() && text(&o).contains("give a path"), "{}", text(&o));
    // An export is for mirrors; a file that is not one is named.
    let o = swe_forge(&["mine", "--github-repo", "a/b", "--issues-export", export.to_str().unwrap(), "-o", "x.jsonl"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let junk = tmp.path().join("junk.json");
    std::fs::write(&junk, "[1, 2]").unwrap();
    let o = swe_forge(&[
        "mine",
        "--mirror",
        mirror.to_str().unwrap(),
        "--issues-export",
        junk.to_str().unwrap(),
        "-o",
        tmp.path().join("junk-out.jsonl").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("junk.json: not a GitHub issues export"), "{}", text(&o));

    // Curate counts the flag of every kept candidate and drops it on request; with `-o -` stdout
    // carries the records alone and the JSON summary goes to stderr.
    let curate = |dataset: &Path, extra: &[&str]| {
        let mut args = vec!["curate", "--dataset", dataset.to_str().unwrap(), "--no-store", "--json"];
        args.extend_from_slice(extra);
        swe_forge(&args)
    };
    let o = curate(&bare, &["-o", tmp.path().join("c.jsonl").to_str().unwrap()]);
    let summary = json_of(&o);
    assert_eq!((summary["flags"]["no_issue_text"].as_u64(), summary["kept"].as_u64()), (Some(4), Some(4)));
    assert_eq!(summary["flagged_dropped"], Value::Null);
    let o = curate(&bare, &["-o", "-", "--kept-only", "--drop-flag", "no_issue_text"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(o.stdout.is_empty(), "no record is kept: {}", String::from_utf8_lossy(&o.stdout));
    let summary: Value = serde_json::from_str(String::from_utf8_lossy(&o.stderr).lines().last().unwrap()).unwrap();
    assert_eq!((summary["flagged_dropped"].as_u64(), summary["kept"].as_u64()), (Some(4), Some(0)), "{summary}");
    let o = curate(&mined, &["-o", "-", "--kept-only", "--drop-flag", "no_issue_text"]);
    let lines: Vec<Instance> =
        String::from_utf8_lossy(&o.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 4, "{}", text(&o));
    let o = curate(&bare, &["-o", "x.jsonl", "--drop-flag", "no_text"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

/// `report`, `publish` and `export` print one JSON object with --json; publish leaves out the
/// instances of a `--drop-flag` and says how many; export's records on stdout push the summary
/// to stderr.
#[test]
fn report_publish_and_export_summaries_as_json() {
    let tmp = tempfile::tempdir().unwrap();
    let dataset = tmp.path().join("validated.jsonl");
    let mut records = crate::curate::fixture(&dataset);
    let meta = records[0].swe_forge.as_mut().unwrap();
    meta.quality.get_or_insert_with(Default::default).raise(QualityFlag::NoIssueText);
    swe_forge_core::write_jsonl(std::fs::File::create(&dataset).unwrap(), &records).unwrap();
    let d = dataset.to_str().unwrap();
    let accepted = records.iter().filter(|r| r.status() == swe_forge_core::ValidationStatus::Accepted).count();

    let card = tmp.path().join("card");
    let report = json_of(&swe_forge(&["report", "--dataset", d, "--no-store", "-o", card.to_str().unwrap(), "--json"]));
    assert_eq!(report["records"].as_u64(), Some(records.len() as u64), "{report}");
    assert_eq!(report["kept"].as_u64(), Some(accepted as u64), "{report}");
    assert!(report["card"].as_str().unwrap().ends_with("README.md"));

    let hub = tmp.path().join("hub");
    let o = swe_forge(&[
        "publish",
        "--dataset",
        d,
        "--no-store",
        "-o",
        hub.to_str().unwrap(),
        "--license",
        "mit",
        "--drop-flag",
        "no_issue_text",
        "--json",
    ]);
    let published = json_of(&o);
    assert!(text(&o).contains("publish: 1 instance(s) left out for raising no_issue_text"), "{}", text(&o));
    assert_eq!(published["flag_dropped"].as_u64(), Some(1), "{published}");
    assert_eq!(published["license"], "mit");
    let default = published["configs"].as_array().unwrap().iter().find(|c| c["name"] == "default").unwrap();
    assert_eq!(default["splits"][0]["name"], "test");
    assert_eq!(default["splits"][0]["rows"].as_u64(), Some(accepted as u64 - 1), "{published}");
    let rows = crate::support::published_rows(&hub);
    assert!(rows.iter().all(|r| r.instance_id != records[0].instance_id));

    let o = swe_forge(&["export", "--records", d, "--no-store", "-o", "-", "--json"]);
    assert!(o.status.success(), "{}", text(&o));
    let exported: Vec<Instance> =
        String::from_utf8_lossy(&o.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let summary: Value = serde_json::from_str(String::from_utf8_lossy(&o.stderr).lines().last().unwrap()).unwrap();
    assert_eq!(summary["exported"].as_u64(), Some(exported.len() as u64), "{summary}");
    assert_eq!(summary["records"].as_u64(), Some(records.len() as u64));
    let parquet = tmp.path().join("out.parquet");
    let summary =
        json_of(&swe_forge(&["export", "--records", d, "--no-store", "-o", parquet.to_str().unwrap(), "--json"]));
    assert_eq!(summary["parquet"], parquet.to_str().unwrap());

    // Regrade of records without kept runs changes nothing, and says so in JSON.
    let regraded = tmp.path().join("regraded.jsonl");
    let o = swe_forge(&[
        "regrade",
        "--records",
        d,
        "--work-dir",
        tmp.path().join("none.work").to_str().unwrap(),
        "-o",
        regraded.to_str().unwrap(),
        "--json",
    ]);
    let summary = json_of(&o);
    assert_eq!(summary["records"].as_u64(), Some(records.len() as u64), "{summary}");
}

/// The digest under which `evaluate` finds a stored evaluation still answering (as
/// `commands/evaluate.rs` computes it): when it drifts, the run below needs an engine and fails.
fn evaluation_digest(inst: &Instance, patch: &str) -> String {
    let lists = serde_json::to_string(&(&inst.fixed_tests, &inst.p2p_tests)).unwrap();
    let mut h = Sha256::new();
    for part in [
        swe_forge_store::input_digest(inst),
        lists,
        String::new(),
        patch.to_owned(),
        "0".into(),
        "evaluation-rules-2".into(),
    ] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// `evaluate --json`: summary.json's object on stdout, with the output folder.
#[test]
fn evaluate_summary_as_json() {
    let tmp = tempfile::tempdir().unwrap();
    let mut record = read_records(&root().join("data/devset/instances.jsonl")).remove(0);
    record.swe_forge = None;
    let dataset = tmp.path().join("published.jsonl");
    swe_forge_core::write_jsonl(std::fs::File::create(&dataset).unwrap(), std::slice::from_ref(&record)).unwrap();
    let out = tmp.path().join("eval");
    std::fs::create_dir_all(&out).unwrap();
    let mut store = swe_forge_store::Store::open_writer(&out.join("state.sqlite")).unwrap();
    let evaluation = serde_json::json!({
        "instance_id": record.instance_id, "model": "gold", "outcome": "resolved", "logs": "", "runs": [], "warnings": []
    });
    let digest = evaluation_digest(&record, &record.fix_patch);
    store.save_evaluation(&record.instance_id, "gold", &digest, &evaluation.to_string()).unwrap();
    drop(store);
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_swe-forge"))
        .args(["evaluate", "--dataset", dataset.to_str().unwrap(), "--predictions", "gold", "--reruns", "0"])
        .args(["-o", out.to_str().unwrap(), "--json"])
        .env("DOCKER_HOST", format!("unix://{}", tmp.path().join("no-engine.sock").display()))
        .env("SWE_FORGE_NO_PROGRESS", "1")
        .output()
        .unwrap();
    let summary = json_of(&o);
    assert_eq!(summary["resolved_instances"].as_u64(), Some(1), "{summary}");
    assert_eq!(summary["out"], out.to_str().unwrap());
    assert_eq!(summary["stopped"], false);
}

/// `revalidate --report-only --json` with no engine: the table's figures in one object, an
/// instance re-validated earlier (taken over from its `revalidated.jsonl`, not run: its patch
/// does not apply) and one pending.
#[test]
fn revalidate_summary_as_json() {
    let tmp = tempfile::tempdir().unwrap();
    let published: Vec<Instance> =
        read_records(&root().join("data/devset/instances.jsonl")).into_iter().take(2).collect();
    let records = tmp.path().join("published.jsonl");
    swe_forge_core::write_jsonl(std::fs::File::create(&records).unwrap(), &published).unwrap();
    let out = tmp.path().join("audit");
    std::fs::create_dir_all(&out).unwrap();
    let mut ours = published[0].clone();
    let mut meta = ForgeMeta::new(ValidationStatus::Rejected);
    meta.rejections.push(Rejection::new(RejectReason::TestPatchDoesNotApply, "error: patch failed: a.rs:1"));
    ours.swe_forge = Some(meta);
    swe_forge_core::write_jsonl(std::fs::File::create(out.join("revalidated.jsonl")).unwrap(), [&ours]).unwrap();
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_swe-forge"))
        .args(["revalidate", "--records", records.to_str().unwrap(), "--report-only", "--json"])
        .args(["--repos", tmp.path().join("repos").to_str().unwrap(), "-o", out.to_str().unwrap()])
        .env("DOCKER_HOST", format!("unix://{}", tmp.path().join("no-engine.sock").display()))
        .env("SWE_FORGE_NO_PROGRESS", "1")
        .output()
        .unwrap();
    let summary = json_of(&o);
    assert_eq!((summary["profile"].as_str(), summary["records"].as_u64()), (Some("default"), Some(2)), "{summary}");
    assert_eq!(summary["out"], out.to_str().unwrap());
    assert_eq!(summary["stopped"], false);
    let report: Value = serde_json::from_slice(&std::fs::read(out.join("agreement.json")).unwrap()).unwrap();
    assert_eq!(summary["overall"], report["overall"], "agreement.json's tally");
    assert_eq!((summary["overall"]["instances"].as_u64(), summary["overall"]["compared"].as_u64()), (Some(2), Some(0)));
    let rows = summary["instances"].as_array().unwrap();
    assert_eq!(rows[0]["instance_id"], published[0].instance_id.as_str());
    assert_eq!(
        (rows[0]["outcome"].as_str(), rows[0]["cause"].as_str()),
        (Some("not_run"), Some("patch_does_not_apply"))
    );
    assert_eq!(rows[0]["fail_to_pass"], Value::Null);
    assert_eq!(
        (rows[1]["outcome"].as_str(), rows[1]["instance_id"].as_str()),
        (Some("pending"), Some(&*published[1].instance_id))
    );
    // Without --json, the table.
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_swe-forge"))
        .args(["revalidate", "--records", records.to_str().unwrap(), "--report-only"])
        .args(["--repos", tmp.path().join("repos").to_str().unwrap(), "-o", out.to_str().unwrap()])
        .env("DOCKER_HOST", format!("unix://{}", tmp.path().join("no-engine.sock").display()))
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(table.contains("not run") && table.contains("0 of 0 compared instances agree exactly"), "{}", text(&o));
}

/// `bench scale --json`, its cheapest mode (no engine): a measurement per command and size.
#[test]
fn bench_scale_summary_as_json() {
    let summary = json_of(&swe_forge(&["bench", "scale", "--sizes", "3", "--command", "export,regrade", "--json"]));
    let rows = summary["measurements"].as_array().unwrap_or_else(|| panic!("{summary}"));
    let commands: Vec<&str> = rows.iter().map(|r| r["command"].as_str().unwrap()).collect();
    assert_eq!(commands, ["export", "regrade"], "{summary}");
    for r in rows {
        assert_eq!(r["records"].as_u64(), Some(3), "{r}");
        assert!(r["input_bytes"].as_u64().unwrap() > 0 && r["peak_rss_bytes"].as_u64().unwrap() > 0, "{r}");
        assert!(r["wall_ms"].as_u64().is_some(), "{r}");
    }
}

/// Three tiny images built from scratch (toolchain, environment, instance, a file each), labelled
/// as swe-forge labels its own under a repository of this process's, removed when dropped.
struct TinyImages {
    toolchain: String,
    env: String,
    instance: String,
    repo: String,
}

impl TinyImages {
    fn build(dir: &Path) -> TinyImages {
        let repo = format!("tiny{}", std::process::id());
        let tag = |t: &str| format!("swe-forge/json-fixtures__{repo}:{t}");
        let images = TinyImages { toolchain: tag("toolchain"), env: tag("env-1"), instance: tag("pr-1-1"), repo };
        images.remove();
        let layers = [
            (&images.toolchain, "FROM scratch\nCOPY a /a\n".to_owned()),
            (&images.env, images.layer(&images.toolchain, "environment", "b")),
            (&images.instance, images.layer(&images.env, "instance", "c")),
        ];
        for (i, (tag, dockerfile)) in layers.iter().enumerate() {
            std::fs::write(dir.join(["a", "b", "c"][i]), vec![b'x' + i as u8; 4096 * (i + 1)]).unwrap();
            std::fs::write(dir.join("Dockerfile"), dockerfile).unwrap();
            let o = std::process::Command::new("docker").args(["build", "-q", "-t", tag]).arg(dir).output().unwrap();
            assert!(o.status.success(), "{}", text(&o));
        }
        images
    }

    fn layer(&self, from: &str, role: &str, file: &str) -> String {
        let repo = format!("json-fixtures/{}", self.repo);
        format!("FROM {from}\nLABEL dev.swe-forge.role={role} dev.swe-forge.repository={repo}\nCOPY {file} /{file}\n")
    }

    /// A fixture record of this repository whose image is the instance image.
    fn record(&self) -> Instance {
        let mut r = read_records(&root().join("data/fixtures/instances.jsonl")).remove(0);
        r.org = "json-fixtures".into();
        r.repo.clone_from(&self.repo);
        r.instance_id = r.expected_id();
        let mut meta = ForgeMeta::new(ValidationStatus::Accepted);
        meta.image = Some(self.instance.clone());
        meta.provenance = Some(swe_forge_core::Provenance {
            toolchain_image: self.toolchain.clone(),
            env_image: self.env.clone(),
            env_commit: "0123456789abcdef".into(),
            env_build_ms: Some(2500),
            image_build_ms: Some(1500),
            ..Default::default()
        });
        r.swe_forge = Some(meta);
        r
    }

    fn remove(&self) {
        let _ = std::process::Command::new("docker")
            .args(["rmi", "-f", &self.instance, &self.env, &self.toolchain])
            .output();
    }
}

impl Drop for TinyImages {
    fn drop(&mut self) {
        self.remove();
    }
}

/// The `images` subcommands with `--json` on the real engine, on three tiny images: sizes (the
/// tables' bytes), prune and cleanup dry runs (counts and lists), save (the archive), pull (here
/// already: nothing fetched), push and verify of records that name no image.
#[test]
fn images_summaries_as_json() {
    let tmp = tempfile::tempdir().unwrap();
    let context = tmp.path().join("context");
    std::fs::create_dir_all(&context).unwrap();
    let images = TinyImages::build(&context);
    let record = images.record();
    let records = tmp.path().join("records.jsonl");
    swe_forge_core::write_jsonl(std::fs::File::create(&records).unwrap(), [&record]).unwrap();
    let r = records.to_str().unwrap();

    let sizes = json_of(&swe_forge(&["images", "sizes", "--records", r, "--json"]));
    let row = &sizes["instances"][0];
    assert_eq!(row["instance_id"], record.instance_id.as_str(), "{sizes}");
    assert_eq!((row["layers"].as_u64(), row["build_ms"].as_u64()), (Some(1), Some(1500)), "{sizes}");
    assert_eq!(
        (row["environment_image"].as_str(), row["env_commit"].as_str()),
        (Some(&*images.env), Some("0123456789ab"))
    );
    assert!(
        row["disk_bytes"].as_u64().unwrap() >= 3 * 4096 && row["tar_bytes"].as_u64().unwrap() >= 3 * 4096,
        "{sizes}"
    );
    assert!(row["gzip_bytes"].as_u64().unwrap() < row["tar_bytes"].as_u64().unwrap(), "{sizes}");
    let env = &sizes["environments"][0];
    assert_eq!((env["toolchain_image"].as_str(), env["build_ms"].as_u64()), (Some(&*images.toolchain), Some(2500)));
    assert_eq!(env["instances"], serde_json::json!([record.instance_id]));
    assert_eq!(sizes["median"]["count"].as_u64(), Some(1));
    assert_eq!(sizes["median"]["disk_bytes"], row["disk_bytes"]);
    let shared = sizes["median_with_environment_share"]["disk_bytes"].as_u64().unwrap();
    assert_eq!(shared, row["disk_bytes"].as_u64().unwrap() + env["disk_bytes"].as_u64().unwrap(), "{sizes}");

    let pruned = json_of(&swe_forge(&["images", "prune", "--keep", r, "--dry-run", "--json"]));
    assert_eq!((pruned["images_removed"].as_u64(), pruned["images_kept"].as_u64()), (Some(0), Some(2)), "{pruned}");
    assert_eq!((pruned["repositories"].as_u64(), pruned["dry_run"].as_bool()), (Some(1), Some(true)));
    assert_eq!(pruned["containers_removed"].as_u64(), Some(pruned["containers"].as_array().unwrap().len() as u64));
    let mut bare = record.clone();
    bare.swe_forge = None;
    let bare_records = tmp.path().join("bare.jsonl");
    swe_forge_core::write_jsonl(std::fs::File::create(&bare_records).unwrap(), [&bare]).unwrap();
    let b = bare_records.to_str().unwrap();
    let pruned = json_of(&swe_forge(&["images", "prune", "--keep", b, "--dry-run", "--json"]));
    assert_eq!(pruned["images_removed"].as_u64(), Some(2), "{pruned}");
    assert_eq!(pruned["images"][0], serde_json::json!({ "role": "instance", "tag": images.instance }));
    let cleanup = json_of(&swe_forge(&["images", "cleanup", "--dry-run", "--json"]));
    assert_eq!(cleanup["dry_run"], true, "{cleanup}");
    assert!(cleanup["containers"].is_array() && cleanup.get("images").is_none(), "{cleanup}");

    let archive = tmp.path().join("images.tar");
    let saved = json_of(&swe_forge(&["images", "save", "--records", r, "-o", archive.to_str().unwrap(), "--json"]));
    assert_eq!(saved["images"], serde_json::json!([images.toolchain, images.env, images.instance]), "{saved}");
    assert_eq!(saved["size_bytes"].as_u64(), Some(std::fs::metadata(&archive).unwrap().len()));
    let pulled = json_of(&swe_forge(&["images", "pull", "--records", r, "--registry", "127.0.0.1:9", "--json"]));
    assert_eq!(pulled["ready"].as_u64(), Some(3), "{pulled}");
    assert!(pulled["images"].as_array().unwrap().iter().all(|i| i["pulled"] == false && i["id"].is_string()));
    assert_eq!(pulled["images"][2]["reference"], format!("127.0.0.1:9/{}", images.instance));

    // Records that name no image: nothing pushed (the records on stdout, the summary on stderr
    // with `-o -`), nothing verified.
    let o = swe_forge(&["images", "push", "--records", b, "--registry", "127.0.0.1:9", "-o", "-", "--json"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout).lines().count(), 1, "the record: {}", text(&o));
    let pushed: Value = serde_json::from_str(String::from_utf8_lossy(&o.stderr).lines().last().unwrap()).unwrap();
    assert_eq!((pushed["pushed"].as_u64(), pushed["registry"].as_str()), (Some(0), Some("127.0.0.1:9")), "{pushed}");
    let verified = json_of(&swe_forge(&["images", "verify", "--records", b, "--repos", "none", "--json"]));
    assert_eq!((verified["records"].as_u64(), verified["failed"].as_u64()), (Some(0), Some(0)), "{verified}");
}
