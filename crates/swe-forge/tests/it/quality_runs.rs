//! The quality signals that need test runs, on the real engine: the fix patch with one hunk left
//! out at a time (`swe_forge.quality.hunks`), and the gold and empty-patch runs repeated
//! (`swe_forge.quality.flakiness`).

use swe_forge_core::{QualityFlag, ValidationStatus};

use crate::environments::validate_with;
use crate::support::{make_repos, read_records, root};

/// The hunk of gostack-1's fix that no test needs: `Push` allocates room for eight items up
/// front (the demo's untested-hunk fixture).
const UNTESTED_HUNK: &str = "stack.go @@ -13,6 +13,9 @@ type Stack[T any] struct {";

/// gostack-1's fix has three hunks in one file: the package comment reworded (no code: never left
/// out), `Push`'s allocation (leaving it out keeps TestPopEmptyReturnsError passing: untested) and
/// `Pop`'s fix (leaving it out fails it: tested). Its tests are steady: two gold runs agree, two
/// empty-patch runs agree, and no `flaky` flag is raised.
#[test]
fn a_hunk_no_fail_to_pass_test_needs_is_untested_and_steady_runs_are_not_flaky() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = make_repos(tmp.path());
    let fixtures = read_records(&root().join("data/fixtures/instances.jsonl"));
    let r = fixtures.into_iter().find(|r| r.instance_id == "forge-fixtures__gostack-1").unwrap();
    assert!(r.fix_patch.contains("+// Package gostack is a small generic stack"), "{}", r.fix_patch);
    let dir = tmp.path().join("out");
    let done = validate_with(&[&r], &repos, &dir, None, &["--evidence-runs", "2", "--hunk-runs", "4"]);
    let m = done[0].swe_forge.as_ref().unwrap();
    assert_eq!(done[0].status(), ValidationStatus::Accepted, "{m:?}");
    let q = m.quality.as_ref().expect("a quality block");
    let hunks = q.hunks.as_ref().expect("hunk runs");
    assert_eq!((hunks.hunks, hunks.not_code, hunks.tried), (3, 1, 2), "{hunks:?} {:?}", m.warnings);
    assert_eq!(hunks.untested, [UNTESTED_HUNK], "{hunks:?}");
    assert_eq!(hunks.untested_share, 0.5);
    assert!(hunks.seconds > 0.0, "{hunks:?}");
    let flakiness = q.flakiness.as_ref().expect("flakiness");
    assert_eq!(flakiness.runs, 2);
    assert!(flakiness.gold_disagreements.is_empty() && flakiness.empty_disagreements.is_empty(), "{flakiness:?}");
    assert_eq!(q.flags, [QualityFlag::UntestedHunks]);
    let evidence = m.evidence.as_ref().unwrap();
    assert!(evidence.complete() && evidence.gold_runs == 2, "{evidence:?}");
    // Each hunk run keeps its log under the evidence folder, named by the hunk left out (the
    // first hunk, the comment, has none); the
    // empty patch's second run has a folder of its own (`_` is escaped in model folders).
    let logs = dir.join("validated.work/evidence/logs");
    for (run, log) in [("hunk-2", "hunk-2.log"), ("hunk-3", "hunk-3.log"), ("empty%5Fpatch-2", "eval.log")] {
        let path = logs.join(run).join("forge-fixtures__gostack-1").join(log);
        assert!(path.is_file(), "{}", path.display());
    }
}
