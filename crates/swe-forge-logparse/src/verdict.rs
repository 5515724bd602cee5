//! Lines of a hand-written test runner, one per test with its verdict at the end: jsoncpp's
//! `Testing ValueTest/null: OK` (its own C++ runner) and `TESTING: test/data/x.json FAILED` (its
//! Python runner), as many projects' CMake builds run them as build steps, where ctest finds no
//! test. Read only when a run's own parser found none ([`parse_verdicts`] is the fallback the
//! validator applies), so a log in a known format never reaches it.
//!
//! nodeunit's default reporter (grunt's nodeunit task) prints one such line per test file, its
//! verdict glued to it: `Testing ar-ma.js......OK`, `Testing ka.jsF....` (a failed assertion).
//!
//! A line is `<Testing|TESTING|Test|TEST>[:] <name>[:] <verdict>`, the verdict one of `OK`,
//! `PASS`, `PASSED` (PASS), `FAIL`, `FAILED`, `ERROR` (FAIL), `SKIP`, `SKIPPED` (SKIP), in capitals
//! as such runners print them. Canonical id and Multi-SWE-bench name: the name as printed. A name
//! printed twice (a runner run twice) keeps its worse verdict.

use swe_forge_core::TestStatus;

use crate::{ParsedLog, Recorder, text};

/// The test and its verdict, when `line` is a verdict line.
pub(crate) fn verdict_line(line: &str) -> Option<(TestStatus, &str)> {
    let line = line.trim();
    if let Some(found) = nodeunit_line(line) {
        return Some(found);
    }
    let rest = ["TESTING", "Testing", "TEST", "Test"].iter().find_map(|w| line.strip_prefix(w))?;
    let rest = rest.strip_prefix(':').unwrap_or(rest).strip_prefix(' ')?;
    let (name, verdict) = rest.rsplit_once(' ')?;
    let status = match verdict {
        "OK" | "PASS" | "PASSED" => TestStatus::Pass,
        "FAIL" | "FAILED" | "ERROR" => TestStatus::Fail,
        "SKIP" | "SKIPPED" => TestStatus::Skip,
        _ => return None,
    };
    let name = name.trim().trim_end_matches(':').trim_end();
    let plausible = !name.is_empty() && name.len() <= 500 && !name.starts_with('-');
    plausible.then_some((status, name))
}

/// A test file's line of nodeunit's default reporter (as grunt's nodeunit task prints it): the
/// file, a dot per passing assertion and `F` per failed one, glued to the name, then `OK` when
/// none failed: `Testing ar-ma.js......OK` (PASS), `Testing ka.jsF....` (FAIL). Graded by file.
fn nodeunit_line(line: &str) -> Option<(TestStatus, &str)> {
    let rest = line.strip_prefix("Testing ")?;
    let (progress_end, ok) = match rest.strip_suffix("OK") {
        Some(r) => (r, true),
        None => (rest, false),
    };
    let name = progress_end.trim_end_matches(['.', 'F']);
    let progress = &progress_end[name.len()..];
    let failed = progress.contains('F');
    let plausible = !progress.is_empty()
        && !name.is_empty()
        && !name.contains(char::is_whitespace)
        && [".js", ".coffee", ".ts"].iter().any(|e| name.ends_with(e))
        && (ok != failed);
    plausible.then_some((if failed { TestStatus::Fail } else { TestStatus::Pass }, name))
}

/// The verdict lines of `log`; no test when it has none.
pub fn parse_verdicts(log: &[u8]) -> ParsedLog {
    let mut parsed = Recorder::default();
    let mut warnings = text::for_each_line_where(log, Some(|b| b == b'T'), |line| {
        if let Some((status, name)) = verdict_line(line) {
            parsed.record_worst(name.to_owned(), Some(name.to_owned()), status);
        }
    });
    let mut out = parsed.into_parsed();
    out.warnings.append(&mut warnings);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lines_of_jsoncpps_two_runners_and_what_is_not_a_verdict() {
        let log = "-- Configuring done (0.2s)\n\
Testing ValueTest/null: OK\n\
Testing ValueTest/compareInt: FAILED\n\
TESTING: /testbed/test/data/test_comment_00.json FAILED\n\
TESTING: /testbed/test/data/test_real_01.json OK\n\
TESTING: /testbed/test/data/test_real_01.json FAILED\n\
Test project /testbed/build\n\
Test results: 56 passed, 1 failed.\n\
Testing: OK\n\
Test -x FAILED\n\
TEST skipped_case SKIPPED\n\
Testing something: ok\n";
        let parsed = parse_verdicts(log.as_bytes());
        let got: Vec<(&str, TestStatus)> = parsed.tests.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        assert_eq!(
            got,
            [
                ("/testbed/test/data/test_comment_00.json", TestStatus::Fail),
                ("/testbed/test/data/test_real_01.json", TestStatus::Fail),
                ("ValueTest/compareInt", TestStatus::Fail),
                ("ValueTest/null", TestStatus::Pass),
                ("skipped_case", TestStatus::Skip),
            ]
        );
        assert_eq!(parsed.msb_names["ValueTest/null"], "ValueTest/null");
        // nodeunit's reporter, as grunt prints it (moment of 2013): a line per test file.
        let nodeunit = "Running \"nodeunit:all\" (nodeunit) task\nTesting ar-ma.js......................OK\n\
Testing ka.jsF.....F...\n>> lang:ka - parse\nTesting moment.js....\nTesting notes.txt....OK\n";
        let parsed = parse_verdicts(nodeunit.as_bytes());
        let got: Vec<(&str, TestStatus)> = parsed.tests.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        assert_eq!(got, [("ar-ma.js", TestStatus::Pass), ("ka.js", TestStatus::Fail)]);
        assert!(parse_verdicts(b"Test project /x\nNo tests were found!!!\n").tests.is_empty());
    }
}
