//! What is kept of every run: its log, its result files and its parsed statuses. The parsed
//! statuses of every run are kept next to its log as `<label>.parsed.json`: canonical
//! ids, statuses and the Multi-SWE-bench name of each test. Later stages (re-validation against
//! published lists) compare in other harnesses' naming from these files without parsing the
//! logs again. Writing is best effort: a failure is logged and never fails the instance.

use std::path::Path;

use swe_forge_core::{Instance, RunLogs};
use swe_forge_logparse::ParsedLog;

use super::grade::Parsers;

/// Writes `parsed` where `logs` keeps the parse of run `label`.
pub(crate) fn keep(logs: &RunLogs, label: &str, parsed: &ParsedLog) {
    let path = logs.parsed(label);
    let result = std::fs::create_dir_all(logs.dir()).and_then(|()| {
        let json = serde_json::to_vec(parsed).map_err(std::io::Error::other)?;
        std::fs::write(&path, json)
    });
    if let Err(e) = result {
        tracing::warn!(path = %path.display(), error = %e, "could not keep a parsed run");
    }
}

/// Writes the log of run `label`.
pub(crate) fn write_log(logs: &RunLogs, label: &str, log: &[u8]) {
    let result = std::fs::create_dir_all(logs.dir()).and_then(|()| std::fs::write(logs.log(label), log));
    if let Err(e) = result {
        tracing::warn!(dir = %logs.dir().display(), error = %e, "could not write a run log");
    }
}

/// Keeps a structured result file under its relative path (for re-grading).
pub(crate) fn write_result_file(dir: &std::path::Path, rel: &str, content: &[u8]) {
    let path = dir.join(rel);
    let result = path.parent().map_or(Ok(()), std::fs::create_dir_all).and_then(|()| std::fs::write(&path, content));
    if let Err(e) = result {
        tracing::warn!(path = %path.display(), error = %e, "could not keep a result file");
    }
}

/// The kept parse of run `label` of `instance_id` under `work_dir` (the validator's work
/// folder), when there is one.
pub fn read_parsed(work_dir: &Path, instance_id: &str, label: &str) -> Option<ParsedLog> {
    // Not a regular file (a FIFO), or cut: no kept parse.
    let kept =
        swe_forge_fs::read_file_capped(&RunLogs::new(work_dir, instance_id).parsed(label), swe_forge_fs::READ_CAP)
            .ok()?;
    if kept.truncated {
        return None;
    }
    serde_json::from_slice(&kept.bytes).ok()
}

/// Run `label` of `inst` parsed again from its kept log and result files under `work_dir`,
/// with this build's parsers and the parsers its record names (as `regrade` does), Go subtests
/// named as Multi-SWE-bench's handler of its repository names them; None when the record names
/// no parser or the log is gone.
pub fn reparse(inst: &Instance, work_dir: &Path, label: &str) -> Option<ParsedLog> {
    let parsers = Parsers::of(inst).ok()?;
    parsers.reparse(&RunLogs::new(work_dir, &inst.instance_id), label)
}

/// Run `label` of `inst`: its kept log parsed again ([`reparse`]), else its kept parse
/// ([`read_parsed`]) with the Multi-SWE-bench naming of its repository (a parse kept by an older
/// build may carry another); None when neither is there.
pub fn kept_parse(inst: &Instance, work_dir: &Path, label: &str) -> Option<ParsedLog> {
    reparse(inst, work_dir, label).or_else(|| {
        let parsed = read_parsed(work_dir, &inst.instance_id, label)?;
        Some(match Parsers::of(inst) {
            Ok(parsers) => parsers.name(parsed),
            Err(_) => parsed,
        })
    })
}

#[cfg(test)]
mod tests {
    use swe_forge_logparse::{Framework, GoSubtests};

    use super::*;

    #[test]
    fn a_kept_parse_reads_back() {
        let tmp = tempfile::tempdir().unwrap();
        let mut parsed = ParsedLog::default();
        parsed.tests.insert("p::TestA".into(), swe_forge_core::TestStatus::Pass);
        parsed.msb_names.insert("p::TestA".into(), "TestA".into());
        keep(&RunLogs::new(tmp.path(), "o__r-1"), "fix", &parsed);
        assert_eq!(read_parsed(tmp.path(), "o__r-1", "fix"), Some(parsed));
        assert_eq!(read_parsed(tmp.path(), "o__r-1", "run"), None);
    }

    #[test]
    fn a_kept_log_parses_again_with_the_record_s_parser() {
        let tmp = tempfile::tempdir().unwrap();
        let mut inst: Instance = serde_json::from_value(serde_json::json!({
            "org": "o", "repo": "r", "number": 1, "state": "closed", "title": "t", "body": null,
            "base": {"label": "o:main", "ref": "main", "sha": "0000000000000000000000000000000000000000"},
            "resolved_issues": [], "fix_patch": "", "test_patch": "", "instance_id": "o__r-1"
        }))
        .unwrap();
        assert_eq!(reparse(&inst, tmp.path(), "fix"), None, "no swe_forge block, no parser");
        let mut meta = swe_forge_core::ForgeMeta::new(swe_forge_core::ValidationStatus::Accepted);
        meta.parser = Some(Framework::GoTestVerbose);
        inst.swe_forge = Some(meta);
        let dir = tmp.path().join("logs/o__r-1");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("fix.log"), "=== RUN   TestA\n--- PASS: TestA (0.00s)\nok  \tp\t0.01s\n").unwrap();
        let parsed = reparse(&inst, tmp.path(), "fix").unwrap();
        assert_eq!(parsed.msb_names.get("p::TestA").map(String::as_str), Some("TestA"));
    }

    /// An accepted record of `org/repo` whose log parser is `parser`.
    fn record(org: &str, repo: &str, parser: Framework) -> Instance {
        let mut inst: Instance = serde_json::from_value(serde_json::json!({
            "org": org, "repo": repo, "number": 1, "state": "closed", "title": "t", "body": null,
            "base": {"label": "o:main", "ref": "main", "sha": "0000000000000000000000000000000000000000"},
            "resolved_issues": [], "fix_patch": "", "test_patch": "", "instance_id": format!("{org}__{repo}-1")
        }))
        .unwrap();
        let mut meta = swe_forge_core::ForgeMeta::new(swe_forge_core::ValidationStatus::Accepted);
        meta.parser = Some(parser);
        inst.swe_forge = Some(meta);
        inst
    }

    #[test]
    fn catch2_s_ctest_targets_are_lower_cased_from_its_log_and_from_its_junit_results() {
        let tmp = tempfile::tempdir().unwrap();
        let log = "    Start 1: ApprovalTests\n1/1 Test #1: ApprovalTests ....   Passed    0.50 sec\n";
        let junit = br#"<?xml version="1.0"?><testsuite name="t"><testcase name="ApprovalTests" status="run"/><testcase name="RunTests" status="run"/></testsuite>"#;
        for (org, repo, want, want_run) in
            [("catchorg", "Catch2", "approvaltests", "runtests"), ("fmtlib", "fmt", "ApprovalTests", "RunTests")]
        {
            let mut inst = record(org, repo, Framework::Ctest);
            let dir = tmp.path().join("logs").join(&inst.instance_id);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("fix.log"), log).unwrap();
            let parsed = reparse(&inst, tmp.path(), "fix").unwrap();
            assert_eq!(parsed.msb_names["ApprovalTests"], want, "{org}/{repo}: from the log");

            inst.swe_forge.as_mut().unwrap().results_parser = Some(Framework::CtestJunit);
            std::fs::create_dir_all(dir.join("fix-results")).unwrap();
            std::fs::write(dir.join("fix-results/ctest.xml"), junit).unwrap();
            let parsed = reparse(&inst, tmp.path(), "fix").unwrap();
            assert_eq!(parsed.tests.len(), 2, "{org}/{repo}: read from the JUnit results, not the log");
            assert_eq!(parsed.msb_names["ApprovalTests"], want, "{org}/{repo}: from the JUnit results");
            assert_eq!(parsed.msb_names["RunTests"], want_run, "{org}/{repo}: from the JUnit results");
        }
    }

    #[test]
    fn go_subtests_are_named_as_the_repository_s_multi_swe_bench_handler_names_them() {
        let tmp = tempfile::tempdir().unwrap();
        let log = "=== RUN   TestA\n=== RUN   TestA/case\n--- PASS: TestA (0.00s)\n    --- PASS: TestA/case (0.00s)\nok  \tp\t0.01s\n";
        for (org, repo, want) in [("grpc", "grpc-go", "TestA"), ("cli", "cli", "TestA/case")] {
            let inst = record(org, repo, Framework::GoTestVerbose);
            let dir = tmp.path().join("logs").join(&inst.instance_id);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("fix.log"), log).unwrap();
            let parsed = reparse(&inst, tmp.path(), "fix").unwrap();
            assert_eq!(parsed.msb_names["p::TestA/case"], want, "{org}/{repo}");
            assert_eq!(kept_parse(&inst, tmp.path(), "fix").unwrap(), parsed);

            // A parse kept under the other rule (an older build named every Go subtest by its
            // parent) reads with the repository's rule once its log is gone.
            let mut other = parsed.clone();
            let flip = if want == "TestA" { GoSubtests::Full } else { GoSubtests::Base };
            other.name_go_subtests(Framework::GoTestVerbose, flip);
            assert_ne!(other, parsed);
            keep(&RunLogs::new(tmp.path(), &inst.instance_id), "fix", &other);
            std::fs::remove_file(dir.join("fix.log")).unwrap();
            assert_eq!(kept_parse(&inst, tmp.path(), "fix").unwrap(), parsed, "{org}/{repo}");
        }
    }
}
