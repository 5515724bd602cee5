//! Problem statements from an issues export and the summaries commands print: `mine --mirror
//! --issues-export` filling the texts a mirror lacks, `no_issue_text` counted and dropped by
//! curate and publish, and `--json` on mine, curate, report, publish, export, regrade and evaluate,
//! each one JSON object on stdout (on stderr when `-o -` puts the records there). No engine: the
//! evaluation's result is in its store already, and the engine's address leads nowhere.

use std::path::Path;

use serde_json::Value;
use sha2::{Digest, Sha256};
use swe_forge_core::{Instance, QualityFlag};

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
