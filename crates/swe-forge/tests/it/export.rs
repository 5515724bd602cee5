//! `swe-forge export` end to end: records and SWE-bench rows in JSONL and Parquet, read back
//! by the commands that take records (Parquet told from JSONL by its first bytes), Multi-SWE-bench
//! test names from kept parsed runs, and every Python reader dataset users have
//! (`scripts/python-readers.sh`: pandas on pyarrow 15 and current, polars, duckdb, `datasets`
//! 2.19 and current, SWE-bench's `make_test_spec` in 4.1.0 and 5.0.2 and 5.0.2's grading,
//! Multi-SWE-bench's `Dataset.from_json`, `swe-forge parse --msb --repo` names against
//! Multi-SWE-bench's own `parse_log` on the real logs of `crates/swe-forge-logparse/test_data`, and
//! `export --naming msb` against `parse_log` of the kept logs for a Go repository of each naming).

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};
use swe_forge_core::{ForgeMeta, Instance, Provenance, RejectReason, Rejection, TestStatus, ValidationStatus};

use crate::support::{read_records, root, swe_forge, text};

/// The 22 published devset records, the Go fixture instance as swe-forge would accept it (with
/// an image, provenance and canonical ids) and a rejected variant.
pub(crate) fn sample_records() -> Vec<Instance> {
    let mut records = read_records(&root().join("data/devset/instances.jsonl"));
    let fixtures = read_records(&root().join("data/fixtures/instances.jsonl"));
    let mut go = fixtures.into_iter().find(|r| r.instance_id == "forge-fixtures__gostack-1").unwrap();
    let t = |run, test, fix| swe_forge_core::Transition { run, test, fix };
    let (p, f, n) = (TestStatus::Pass, TestStatus::Fail, TestStatus::None);
    go.fixed_tests.insert("gostack::TestPopEmptyReturnsError".into(), t(n, f, p));
    go.f2p_tests = go.fixed_tests.clone();
    for name in ["gostack::TestLen", "gostack::TestPushThenPop"] {
        go.p2p_tests.insert(name.into(), t(p, p, p));
    }
    go.run_result.passed_tests = vec!["gostack::TestLen".into(), "gostack::TestPushThenPop".into()];
    go.run_result.passed_count = 2;
    go.test_patch_result.passed_tests = go.run_result.passed_tests.clone();
    go.test_patch_result.passed_count = 2;
    go.test_patch_result.failed_tests = vec!["gostack::TestPopEmptyReturnsError".into()];
    go.test_patch_result.failed_count = 1;
    go.fix_patch_result.passed_tests =
        [&go.run_result.passed_tests[..], &go.test_patch_result.failed_tests[..]].concat();
    go.fix_patch_result.passed_tests.sort();
    go.fix_patch_result.passed_count = 3;
    go.lang = Some("go".into());
    let mut meta = ForgeMeta::new(ValidationStatus::Accepted);
    meta.parser = Some(swe_forge_core::Framework::GoTestVerbose);
    meta.image = Some("swe-forge/forge-fixtures_m_gostack:pr-1".into());
    meta.merged_at = Some(swe_forge_core::Timestamp::parse("2024-05-06T07:08:09Z").unwrap());
    meta.created_at = Some(swe_forge_core::Timestamp::parse("2024-05-01T12:00:00Z").unwrap());
    meta.provenance = Some(Provenance {
        env_commit: go.base.sha.clone(),
        env_image: "swe-forge/forge-fixtures__gostack:env-0123456789ab".into(),
        ..Provenance::default()
    });
    let control = |name: &str| swe_forge_core::Control { name: name.into(), f2p_passed: vec![], resolved: false };
    meta.evidence = Some(swe_forge_core::Evidence {
        gold_runs: 2,
        gold_resolved: 2,
        controls: vec![control("empty_patch"), control("test_patch_alone")],
        network: vec![],
        layout: vec![],
    });
    meta.warnings = vec!["exit code 1 with no failed test".into()];
    go.swe_forge = Some(meta);
    let mut rejected = records[1].clone();
    (rejected.org, rejected.repo, rejected.number) = ("variant".into(), "rejected".into(), 2);
    rejected.instance_id = "variant__rejected-2".into();
    rejected.body = None;
    let mut meta = ForgeMeta::new(ValidationStatus::Rejected);
    meta.rejections = vec![Rejection::new(RejectReason::NoFixedTests, "nothing went to PASS")];
    rejected.swe_forge = Some(meta);
    records.push(go);
    records.push(rejected);
    records
}

pub(crate) fn write_records(path: &Path, records: &[Instance]) {
    let mut out = Vec::new();
    swe_forge_core::write_jsonl(&mut out, records).unwrap();
    std::fs::write(path, out).unwrap();
}

fn export(args: &[&str]) {
    let out = swe_forge(&[&["export"], args].concat());
    assert!(out.status.success(), "export {args:?}: {}", text(&out));
}

fn jsonl(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// Writes every export of the sample records into `dir`, as the Python readers expect them.
fn write_exports(dir: &Path) -> Vec<Instance> {
    let input = dir.join("input.jsonl");
    write_records(&input, &sample_records());
    let p = |name: &str| dir.join(name).to_str().unwrap().to_owned();
    export(&[
        "--records",
        &p("input.jsonl"),
        "--all",
        "--jsonl",
        &p("records.jsonl"),
        "--parquet",
        &p("instances.parquet"),
        "--tests-parquet",
        &p("tests.parquet"),
    ]);
    // Read back from Parquet: the records file's format is told by its first bytes.
    export(&[
        "--records",
        &p("instances.parquet"),
        "--all",
        "--format",
        "swebench",
        "--jsonl",
        &p("swebench.jsonl"),
        "--parquet",
        &p("swebench.parquet"),
    ]);
    read_records(&dir.join("records.jsonl"))
}

#[test]
fn records_and_swebench_exports_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let records = write_exports(dir.path());
    assert_eq!(records.len(), 24);
    // Parquet written by export reads as the same records (what every command taking records uses).
    let from_parquet = swe_forge_export::read_records(dir.path().join("instances.parquet")).unwrap();
    assert_eq!(from_parquet, records);

    let rows = jsonl(&dir.path().join("swebench.jsonl"));
    assert_eq!(rows.len(), records.len());
    let go = rows.iter().find(|r| r["instance_id"] == "forge-fixtures__gostack-1").unwrap();
    assert_eq!(go["repo"], "forge-fixtures/gostack");
    assert_eq!(go["FAIL_TO_PASS"], r#"["gostack::TestPopEmptyReturnsError"]"#);
    assert_eq!(go["PASS_TO_PASS"], r#"["gostack::TestLen","gostack::TestPushThenPop"]"#);
    assert_eq!(go["image"], "swe-forge/forge-fixtures_m_gostack:pr-1");
    // SWE-bench's `created_at` is when the pull request was opened, not merged; the version names
    // the repository environment (its image's tag), the key SWE-bench 4.x looks install specs up by.
    assert_eq!(go["created_at"], "2024-05-01T12:00:00Z");
    assert_eq!(go["version"], "env-0123456789ab");
    let published = rows.iter().find(|r| r["instance_id"] == "tokio-rs__tracing-1619").unwrap();
    assert_eq!(published["created_at"], Value::Null, "a record that does not know when its PR was opened");

    // The flat columns of the instances table: filters need no JSON function.
    let flat = swe_forge_export::read_flat_columns(dir.path().join("instances.parquet")).unwrap();
    let want: Vec<(String, swe_forge_export::FlatFields)> =
        records.iter().map(|r| (r.instance_id.clone(), swe_forge_export::FlatFields::of(r))).collect();
    assert_eq!(flat, want);
    let (_, go_flat) = flat.iter().find(|(id, _)| id == "forge-fixtures__gostack-1").unwrap();
    assert!(go_flat.evidence_complete);
    assert_eq!(go_flat.image.as_deref(), Some("swe-forge/forge-fixtures_m_gostack:pr-1"));
    assert_eq!(go_flat.warnings, ["exit code 1 with no failed test"]);
    assert_eq!(go_flat.quality_flags, Vec::<String>::new());
    assert_eq!(
        (go_flat.created_at.as_deref(), go_flat.merged_at.as_deref()),
        (Some("2024-05-01T12:00:00Z"), Some("2024-05-06T07:08:09Z"))
    );
    let (_, rejected_flat) = flat.iter().find(|(id, _)| id == "variant__rejected-2").unwrap();
    assert!(!rejected_flat.evidence_complete && rejected_flat.image.is_none());
    // SWE-bench 5's fields: the image contract's script, then the run's results in the generic
    // `[PASSED] <id>` lines its `parse_log_jest_json` reads.
    assert_eq!(go["log_parser"], "parse_log_jest_json");
    assert_eq!(go["eval_type"], "pass_and_fail");
    let script = go["eval_script"].as_str().unwrap();
    assert!(script.contains("/swe-forge/run-tests > /tmp/swe-forge-run.log 2>&1\n"), "{script}");
    assert!(
        script.ends_with("/tmp/swe-forge-run.log /swe-forge/results 'go-test' ''\nfi\n(exit $swe_forge_code)\n: '>>>>> End Test Output'\n"),
        "{script}"
    );
    assert!(script.contains(go["test_patch"].as_str().unwrap()), "{script}");
    assert!(script.contains("perl /tmp/swe-forge-forgery.pl /tmp/swe-forge-model.diff >"), "{script}");
    assert!(go["problem_statement"].as_str().unwrap().starts_with("Pop on an empty stack does not report an error\n"));
    let published = rows.iter().find(|r| r["instance_id"] == "tokio-rs__tracing-1619").unwrap();
    assert_eq!(published["image"], Value::Null);
    assert_eq!((&published["eval_script"], &published["log_parser"]), (&json!(""), &json!("")));

    // A SWE-bench export is refused where records are read, with the reason.
    let out = swe_forge(&[
        "export",
        "--records",
        dir.path().join("swebench.parquet").to_str().unwrap(),
        "--jsonl",
        dir.path().join("x.jsonl").to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    assert!(text(&out).contains("holds the `swebench` table, not `instances`"), "{}", text(&out));
}

/// Kept parses of the Go fixture's three runs, as validate leaves them in its work folder.
pub(crate) fn keep_parsed_runs(work: &Path) {
    let dir = work.join("logs/forge-fixtures__gostack-1");
    std::fs::create_dir_all(&dir).unwrap();
    let names = json!({
        "gostack::TestLen": "TestLen",
        "gostack::TestPushThenPop": "TestPushThenPop",
        "gostack::TestPopEmptyReturnsError": "TestPopEmptyReturnsError"
    });
    let run = json!({"tests": {"gostack::TestLen": "PASS", "gostack::TestPushThenPop": "PASS"}, "msb_names": names, "warnings": []});
    let test = json!({"tests": {"gostack::TestLen": "PASS", "gostack::TestPushThenPop": "PASS",
        "gostack::TestPopEmptyReturnsError": "FAIL"}, "msb_names": names, "warnings": []});
    let fix = json!({"tests": {"gostack::TestLen": "PASS", "gostack::TestPushThenPop": "PASS",
        "gostack::TestPopEmptyReturnsError": "PASS"}, "msb_names": names, "warnings": []});
    for (label, v) in [("run", run), ("test", test), ("fix", fix)] {
        std::fs::write(dir.join(format!("{label}.parsed.json")), v.to_string()).unwrap();
    }
}

#[test]
fn naming_msb_uses_multi_swe_bench_names_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("validated.jsonl");
    write_records(&input, &sample_records());
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_owned();

    // Without the kept runs there is nothing to derive the names from: an error naming the folder.
    let out = swe_forge(&["export", "--records", &p("validated.jsonl"), "--naming", "msb", "--jsonl", &p("x.jsonl")]);
    assert!(!out.status.success());
    assert!(text(&out).contains("forge-fixtures__gostack-1: --naming msb needs"), "{}", text(&out));

    // The default work folder is the records path with `.work`, as validate makes it.
    keep_parsed_runs(&dir.path().join("validated.work"));
    export(&[
        "--records",
        &p("validated.jsonl"),
        "--naming",
        "msb",
        "--jsonl",
        &p("msb.jsonl"),
        "--parquet",
        &p("msb.parquet"),
    ]);
    let records = read_records(&dir.path().join("msb.jsonl"));
    assert_eq!(records.len(), 1, "only the accepted record");
    let go = &records[0];
    assert_eq!(go.f2p_tests.keys().collect::<Vec<_>>(), ["TestPopEmptyReturnsError"]);
    assert_eq!(go.fixed_tests.keys().collect::<Vec<_>>(), ["TestPopEmptyReturnsError"]);
    assert_eq!(go.p2p_tests.keys().collect::<Vec<_>>(), ["TestLen", "TestPushThenPop"]);
    assert_eq!(go.fix_patch_result.passed_tests, ["TestLen", "TestPopEmptyReturnsError", "TestPushThenPop"]);
    assert_eq!(swe_forge_export::read_records(dir.path().join("msb.parquet")).unwrap(), records);

    let work = p("validated.work");
    export(&[
        "--records",
        &p("validated.jsonl"),
        "--naming",
        "msb",
        "--work-dir",
        &work,
        "--format",
        "swebench",
        "--jsonl",
        &p("msb-swebench.jsonl"),
    ]);
    let rows = jsonl(&dir.path().join("msb-swebench.jsonl"));
    assert_eq!(rows[0]["FAIL_TO_PASS"], r#"["TestPopEmptyReturnsError"]"#);
    assert_eq!(rows[0]["PASS_TO_PASS"], r#"["TestLen","TestPushThenPop"]"#);
}

/// `go test -v` output of the Go fixture's three runs with subtests, as validation keeps it
/// (`<work>/logs/<id>/<phase>.log`): `TestLen` has two subtests, the fixed test one that fails
/// before the fix.
const GOSTACK_LOGS: [(&str, &str); 3] = [
    (
        "run",
        "=== RUN   TestLen\n=== RUN   TestLen/empty\n=== RUN   TestLen/two\n--- PASS: TestLen (0.00s)\n    \
         --- PASS: TestLen/empty (0.00s)\n    --- PASS: TestLen/two (0.00s)\n=== RUN   TestPushThenPop\n\
         --- PASS: TestPushThenPop (0.00s)\nPASS\nok  \tgostack\t0.004s\n",
    ),
    (
        "test",
        "=== RUN   TestLen\n=== RUN   TestLen/empty\n=== RUN   TestLen/two\n--- PASS: TestLen (0.00s)\n    \
         --- PASS: TestLen/empty (0.00s)\n    --- PASS: TestLen/two (0.00s)\n=== RUN   TestPopEmptyReturnsError\n\
         === RUN   TestPopEmptyReturnsError/new_stack\n    stack_test.go:31: Pop on an empty stack returned no error\n\
         --- FAIL: TestPopEmptyReturnsError (0.00s)\n    --- FAIL: TestPopEmptyReturnsError/new_stack (0.00s)\n\
         === RUN   TestPushThenPop\n--- PASS: TestPushThenPop (0.00s)\nFAIL\nFAIL\tgostack\t0.004s\nFAIL\n",
    ),
    (
        "fix",
        "=== RUN   TestLen\n=== RUN   TestLen/empty\n=== RUN   TestLen/two\n--- PASS: TestLen (0.00s)\n    \
         --- PASS: TestLen/empty (0.00s)\n    --- PASS: TestLen/two (0.00s)\n=== RUN   TestPopEmptyReturnsError\n\
         === RUN   TestPopEmptyReturnsError/new_stack\n--- PASS: TestPopEmptyReturnsError (0.00s)\n    \
         --- PASS: TestPopEmptyReturnsError/new_stack (0.00s)\n=== RUN   TestPushThenPop\n\
         --- PASS: TestPushThenPop (0.00s)\nPASS\nok  \tgostack\t0.004s\n",
    ),
];

/// Exports, with `--naming msb`, the accepted Go fixture record twice from the runs of
/// [`GOSTACK_LOGS`] kept under `<dir>/msb-work`: as itself (`forge-fixtures/gostack`, no
/// Multi-SWE-bench handler: full subtest names) and as `grpc/grpc-go` (a handler that names a
/// subtest by its parent). Writes `<dir>/msb.jsonl`; returns its records.
fn write_msb_export(dir: &Path) -> Vec<Instance> {
    let go = sample_records().into_iter().find(|r| r.instance_id == "forge-fixtures__gostack-1").unwrap();
    let mut grpc = go.clone();
    (grpc.org, grpc.repo, grpc.instance_id) = ("grpc".into(), "grpc-go".into(), "grpc__grpc-go-1".into());
    for id in [&go.instance_id, &grpc.instance_id] {
        let logs = dir.join("msb-work/logs").join(id);
        std::fs::create_dir_all(&logs).unwrap();
        for (label, log) in GOSTACK_LOGS {
            std::fs::write(logs.join(format!("{label}.log")), log).unwrap();
        }
    }
    write_records(&dir.join("msb-input.jsonl"), &[go, grpc]);
    let p = |name: &str| dir.join(name).to_str().unwrap().to_owned();
    export(&[
        "--records",
        &p("msb-input.jsonl"),
        "--naming",
        "msb",
        "--work-dir",
        &p("msb-work"),
        "--jsonl",
        &p("msb.jsonl"),
    ]);
    // The same in SWE-bench's shape, for its harness's own grading (scripts/python_readers.py).
    export(&[
        "--records",
        &p("msb-input.jsonl"),
        "--naming",
        "msb",
        "--work-dir",
        &p("msb-work"),
        "--format",
        "swebench",
        "--jsonl",
        &p("msb-swebench.jsonl"),
    ]);
    read_records(&dir.join("msb.jsonl"))
}

#[test]
fn naming_msb_names_go_subtests_as_the_repository_s_handler_does() {
    let dir = tempfile::tempdir().unwrap();
    let records = write_msb_export(dir.path());
    let by_repo = |repo: &str| records.iter().find(|r| r.repo == repo).unwrap();
    let keys = |m: &swe_forge_core::TestMap| m.keys().cloned().collect::<Vec<_>>();

    // No handler for forge-fixtures/gostack: full names, as 14 of the 19 Go handlers keep them.
    let full = by_repo("gostack");
    assert_eq!(keys(&full.f2p_tests), ["TestPopEmptyReturnsError", "TestPopEmptyReturnsError/new_stack"]);
    assert_eq!(keys(&full.p2p_tests), ["TestLen", "TestLen/empty", "TestLen/two", "TestPushThenPop"]);
    assert_eq!(full.test_patch_result.failed_tests, ["TestPopEmptyReturnsError", "TestPopEmptyReturnsError/new_stack"]);

    // grpc-go's handler (pipelines/naming/msb.toml) drops the last level.
    let base = by_repo("grpc-go");
    assert_eq!(keys(&base.f2p_tests), ["TestPopEmptyReturnsError"]);
    assert_eq!(keys(&base.p2p_tests), ["TestLen", "TestPushThenPop"]);
    assert_eq!(base.fix_patch_result.passed_tests, ["TestLen", "TestPopEmptyReturnsError", "TestPushThenPop"]);

    // `parse --msb --repo` names the same way; without --repo, full names.
    let log = dir.path().join("msb-work/logs/grpc__grpc-go-1/fix.log");
    let names = |extra: &[&str]| {
        let out = swe_forge(&[&["parse", "--msb", "-f", "go-test", log.to_str().unwrap()], extra].concat());
        assert!(out.status.success(), "{}", text(&out));
        let lines = String::from_utf8(out.stdout).unwrap();
        lines
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap()["msb"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&["--repo", "grpc/grpc-go"]), ["TestLen", "TestPopEmptyReturnsError", "TestPushThenPop"]);
    assert_eq!(names(&["--repo", "cli/cli"]).len(), 6);
    assert_eq!(names(&[]).len(), 6);
}

#[test]
fn python_readers_read_every_export() {
    let dir = tempfile::tempdir().unwrap();
    write_exports(dir.path());
    write_msb_export(dir.path());
    // A folder `publish` writes with README-style splits by language: Hugging Face `datasets`
    // loads the `test` split of the default and of each language's configuration.
    let splits = dir.path().join("splits");
    std::fs::create_dir_all(&splits).unwrap();
    std::fs::copy(dir.path().join("input.jsonl"), splits.join("go.jsonl")).unwrap();
    let (input, hub) = (dir.path().join("input.jsonl"), dir.path().join("hub"));
    let (i, h, s) = (input.to_str().unwrap(), hub.to_str().unwrap(), splits.to_str().unwrap());
    let o = swe_forge(&["publish", "--dataset", i, "--out", h, "--splits", s, "--license", "mit"]);
    assert!(o.status.success(), "{}", text(&o));
    let out = Command::new("bash")
        .arg(root().join("scripts/python-readers.sh"))
        .arg(dir.path())
        .env("SWE_FORGE_BIN", env!("CARGO_BIN_EXE_swe-forge"))
        .output()
        .expect("bash runs");
    let log = text(&out);
    eprintln!("{log}");
    assert!(out.status.success(), "a Python reader failed:\n{log}");
    for reader in [
        "pandas.read_parquet instances (pandas 2.1",
        "datasets 2.19",
        "polars.read_parquet",
        "duckdb",
        "ok   datasets.load_dataset of the publish folder, lang_go split test (datasets 2.19",
        "ok   datasets.load_dataset of the publish folder, split test (datasets 2.19",
    ] {
        assert!(log.contains(reader), "{reader} did not run:\n{log}");
    }
    // Only pip failing to install the harness packages may leave them out.
    for (check, set) in [
        ("ok   Multi-SWE-bench names: swe-forge parse --msb", "harness"),
        ("ok   Multi-SWE-bench names: export --naming msb", "harness"),
        ("ok   swebench make_test_spec on swebench.jsonl rows (swebench 4.1.0)", "harness"),
        ("ok   swebench make_test_spec on swebench.jsonl and swebench.parquet rows (swebench 5.0.2)", "swebench5"),
        ("ok   swebench grading of the --naming msb rows", "swebench5"),
    ] {
        let skipped = format!("python-readers: {set}: pip could not install");
        assert!(log.contains(check) || log.contains(&skipped), "{check} did not run:\n{log}");
    }
}

#[test]
fn review_and_curate_read_an_instances_parquet_table() {
    let dir = tempfile::tempdir().unwrap();
    let records = write_exports(dir.path());
    let parquet = dir.path().join("instances.parquet");

    let out = swe_forge(&[
        "curate",
        "--dataset",
        parquet.to_str().unwrap(),
        "--out",
        dir.path().join("curated.jsonl").to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(read_records(&dir.path().join("curated.jsonl")).len(), records.len());

    // The review page serves a JSONL copy of the table.
    let mut child = Command::new(env!("CARGO_BIN_EXE_swe-forge"))
        .args(["review", "--port", "0", "--dataset"])
        .arg(&parquet)
        .arg("--store")
        .arg(dir.path().join("state.sqlite"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(child.stdout.take().unwrap()), &mut line).unwrap();
    child.kill().unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(line.starts_with("http://127.0.0.1:"), "review printed {line:?}: {}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(&format!("{} instances", records.len())), "{stderr}");
}

#[test]
fn an_output_that_is_the_input_or_another_output_is_refused_and_skipped_records_are_counted() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("records.jsonl");
    let records = sample_records();
    write_records(&input, &records);
    let before = std::fs::read(&input).unwrap();
    let input_s = input.to_str().unwrap();
    let refused = |args: &[&str], says: &str| {
        let o = swe_forge(&[&["export", "--records", input_s], args].concat());
        assert_eq!(o.status.code(), Some(1), "{}", text(&o));
        assert!(text(&o).contains(says), "{}", text(&o));
    };
    refused(&["--jsonl", input_s], "--jsonl");
    // Another spelling of the same file is the same file.
    let dotted = tmp.path().join(".").join("records.jsonl");
    refused(&["--parquet", dotted.to_str().unwrap()], "is the input (--records)");
    assert_eq!(std::fs::read(&input).unwrap(), before, "the input is untouched");
    let out = tmp.path().join("out.parquet");
    refused(
        &["--parquet", out.to_str().unwrap(), "--tests-parquet", out.to_str().unwrap()],
        "--parquet and --tests-parquet name the same file",
    );
    assert!(!out.exists());
    // A new file named two ways (`d/../s.out`) is one file too.
    std::fs::create_dir_all(tmp.path().join("d")).unwrap();
    let new = tmp.path().join("s.out");
    let roundabout = tmp.path().join("d").join("..").join("s.out");
    refused(
        &["--jsonl", new.to_str().unwrap(), "--parquet", roundabout.to_str().unwrap()],
        "--jsonl and --parquet name the same file",
    );
    assert!(!new.exists());
    // A dangling symlink to the other output is that output (before: exit 0, the JSONL lost).
    let link = tmp.path().join("link.parquet");
    std::os::unix::fs::symlink(&new, &link).unwrap();
    refused(
        &["--jsonl", new.to_str().unwrap(), "--parquet", link.to_str().unwrap()],
        "--jsonl and --parquet name the same file",
    );
    assert!(!new.exists());
    // 22 published records (never validated here) and one rejected one are skipped, and said so.
    let o = swe_forge(&["export", "--records", input_s, "--jsonl", tmp.path().join("o.jsonl").to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let skipped = records.len() - 1;
    assert!(
        text(&o).contains(&format!(
            "skipping {skipped} of {} records: 1 rejected, {} never validated",
            records.len(),
            skipped - 1
        )),
        "{}",
        text(&o)
    );
}

#[test]
fn a_harbor_export_takes_a_folder_and_refuses_what_it_cannot_write() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("input.jsonl");
    let mut records = sample_records();
    let go = records.iter_mut().find(|r| r.instance_id == "forge-fixtures__gostack-1").unwrap();
    go.swe_forge.as_mut().unwrap().image_id = Some("sha256:0123".into());
    write_records(&input, &records);
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_owned();
    let refused_with = |code: i32, args: &[&str], why: &str| {
        let out = swe_forge(&[&["export", "--records", &p("input.jsonl")], args].concat());
        assert_eq!(out.status.code(), Some(code), "{args:?}: {}", text(&out));
        assert!(text(&out).contains(why), "{args:?}: {}", text(&out));
    };
    // Outputs missing or flags that do not go together: usage errors (2), as clap's.
    let usage = |args: &[&str], why: &str| refused_with(2, args, why);
    usage(&[], "nothing to export: give -o, --jsonl, --parquet and/or --tests-parquet");
    usage(&["--format", "harbor"], "give --dir DIR");
    usage(&["--format", "harbor", "--dir", &p("h"), "--jsonl", &p("x.jsonl")], "only task folders");
    usage(&["--dir", &p("h")], "--dir is for --format harbor");
    // Records swe-forge did not build (published Multi-SWE-bench ones) have no image to start from.
    refused_with(1, &["--all", "--format", "harbor", "--dir", &p("h")], ": not validated by swe-forge");
    assert!(!dir.path().join("h").exists());
    export(&["--records", &p("input.jsonl"), "--format", "harbor", "--dir", &p("h")]);
    let go = dir.path().join("h/forge-fixtures__gostack-1");
    for f in ["instruction.md", "task.toml", "environment/Dockerfile", "tests/test.sh", "solution/solve.sh"] {
        assert!(go.join(f).is_file(), "{f}");
    }
    assert_eq!(
        std::fs::read_to_string(go.join("tests/fail_to_pass.txt")).unwrap(),
        "gostack::TestPopEmptyReturnsError\n"
    );
    // A folder of the user's is never replaced.
    std::fs::create_dir(dir.path().join("mine")).unwrap();
    std::fs::write(dir.path().join("mine/a.txt"), "x").unwrap();
    refused_with(1, &["--format", "harbor", "--dir", &p("mine")], "not a Harbor export");
}

/// `-o` names the output as in every other command: a `.parquet` file is `--parquet`, a folder
/// with `--format harbor` is `--dir`, anything else is `--jsonl` (`-` is stdout, which then
/// carries only the records); given with the flag it stands for, a usage error.
#[test]
fn export_takes_o_as_every_command_does() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("input.jsonl");
    let mut records = sample_records();
    let go = records.iter_mut().find(|r| r.instance_id == "forge-fixtures__gostack-1").unwrap();
    go.swe_forge.as_mut().unwrap().image_id = Some("sha256:0123".into());
    write_records(&input, &records);
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_owned();
    let input = p("input.jsonl");
    export(&["--records", &input, "--jsonl", &p("a.jsonl"), "--parquet", &p("a.parquet")]);
    export(&["--records", &input, "-o", &p("b.jsonl")]);
    export(&["--records", &input, "-o", &p("b.parquet")]);
    assert_eq!(std::fs::read(p("a.jsonl")).unwrap(), std::fs::read(p("b.jsonl")).unwrap());
    assert_eq!(
        swe_forge_export::read_records(p("a.parquet")).unwrap(),
        swe_forge_export::read_records(p("b.parquet")).unwrap()
    );
    export(&["--records", &input, "--format", "harbor", "-o", &p("h")]);
    assert!(dir.path().join("h/forge-fixtures__gostack-1/task.toml").is_file());
    let o = swe_forge(&["export", "--records", &input, "-o", "-"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(o.stdout, std::fs::read(p("a.jsonl")).unwrap(), "stdout holds the records only");
    let o = swe_forge(&["export", "--records", &input, "-o", &p("c.jsonl"), "--jsonl", &p("d.jsonl")]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("is --jsonl here, which is given too"), "{}", text(&o));
}

/// A record keeps both namings of its tests (`swe_forge.msb_names`): validate's output, moved to
/// another folder with no work folder beside it, exports with `--naming msb` and no other flag,
/// and says what the kept runs under `--work-dir` say.
#[test]
fn naming_msb_works_from_the_records_alone_anywhere() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = crate::support::make_repos(tmp.path());
    let fixtures = read_records(&root().join("data/fixtures/instances.jsonl"));
    let go = fixtures.iter().find(|r| r.instance_id == "forge-fixtures__gostack-1").unwrap();
    let done = crate::environments::validate(&[go], &repos, &tmp.path().join("v"), None);
    assert_eq!(done[0].status(), ValidationStatus::Accepted, "{:?}", done[0].swe_forge);
    let names = done[0].swe_forge.as_ref().unwrap().msb_names.clone().expect("validate keeps the names");
    assert_eq!(names.get("gostack::TestPopEmptyReturnsError").map(String::as_str), Some("TestPopEmptyReturnsError"));

    let elsewhere = tmp.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::copy(tmp.path().join("v/validated.jsonl"), elsewhere.join("validated.jsonl")).unwrap();
    let p = |name: &str| elsewhere.join(name).to_str().unwrap().to_owned();
    export(&["--records", &p("validated.jsonl"), "--naming", "msb", "--jsonl", &p("msb.jsonl")]);
    assert!(!elsewhere.join("validated.work").exists(), "no work folder was needed");
    let work = tmp.path().join("v/validated.work");
    export(&[
        "--records",
        &p("validated.jsonl"),
        "--naming",
        "msb",
        "--work-dir",
        work.to_str().unwrap(),
        "--jsonl",
        &p("from-logs.jsonl"),
    ]);
    let from_records = read_records(&elsewhere.join("msb.jsonl"));
    assert_eq!(from_records, read_records(&elsewhere.join("from-logs.jsonl")), "both ways agree");
    let r = &from_records[0];
    assert_eq!(r.f2p_tests.keys().collect::<Vec<_>>(), ["TestPopEmptyReturnsError"]);
    assert_eq!(r.p2p_tests.keys().collect::<Vec<_>>(), ["TestLen", "TestPushThenPop"]);
    // The same for SWE-bench rows, whose eval script renames results with the names.
    export(&[
        "--records",
        &p("validated.jsonl"),
        "--naming",
        "msb",
        "--format",
        "swebench",
        "--jsonl",
        &p("msb-swebench.jsonl"),
    ]);
    let rows = jsonl(&elsewhere.join("msb-swebench.jsonl"));
    assert_eq!(rows[0]["FAIL_TO_PASS"], r#"["TestPopEmptyReturnsError"]"#);
    assert!(rows[0].get("swe_forge").is_none(), "SWE-bench rows carry none of swe-forge's block");
}
