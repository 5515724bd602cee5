//! The exit-code check: printed lines can fake a pass (a test that prints `--- PASS: X`, a
//! truncated log), so parsed results are checked against the test command's exit code, as
//! SWE-bench does since users showed such fakes.

use memchr::memmem;
use swe_forge_core::TestStatus;

use crate::ParsedLog;

/// Describes how `parsed` contradicts the test command's `exit_code`, or `None` when they
/// agree (or the exit code is unknown, or no test reported): some test failed but the command
/// exited 0, or every reported test passed or was skipped (at least one passed) but the command
/// exited non-zero (a crash, a build failure or a failure the parser did not see).
pub fn exit_code_consistent(parsed: &ParsedLog, exit_code: Option<i64>) -> Option<String> {
    let code = exit_code?;
    let failed = parsed.tests.values().filter(|s| **s == TestStatus::Fail).count();
    let passed = parsed.tests.values().filter(|s| **s == TestStatus::Pass).count();
    if code == 0 && failed > 0 {
        Some(format!("{failed} test(s) failed but the test command exited 0"))
    } else if code != 0 && failed == 0 && passed > 0 {
        Some(format!("every reported test passed or was skipped ({passed} passed) but the test command exited {code}"))
    } else {
        None
    }
}

/// Lowercase phrases with which runners say they found or ran no test: ctest (`No tests were
/// found!!!`), jest (`No tests found`), go (`testing: warning: no tests to run`), pytest (`no
/// tests ran`, `collected 0 items`), PHPUnit (`No tests executed!`), unittest (`Ran 0 tests`),
/// libtest (`running 0 tests`).
const NO_TEST_PHRASES: [&str; 8] = [
    "no tests were found",
    "no tests found",
    "no tests to run",
    "no tests ran",
    "no tests executed",
    "ran 0 tests",
    "running 0 tests",
    "collected 0 items",
];

/// Words after `0 tests` that still say no test ran (`0 tests, 0 assertions`, `Executed 0
/// tests`); `0 tests failed` is a count of failures, not of tests.
const AFTER_ZERO_TESTS: [&str; 9] = ["", ",", ".", "!", " ran", " run", " found", " executed", " in "];

/// The first line of `log` (trimmed, at most 300 characters) in which the test runner says it
/// found or ran no test, or None. Go's `[no test files]` counts only when no package reported
/// (`ok` or `FAIL` lines): go prints it for each package without tests. Meant for a run graded by
/// its exit code, whose log has no per-test result: such a run's exit code says nothing of tests.
pub fn no_tests_ran(log: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(log);
    let lines = || text.lines().map(|l| l.trim());
    let package_reported = lines().any(|l| l.starts_with("ok ") || l.starts_with("ok\t") || l.starts_with("FAIL\t"));
    lines()
        .find(|l| {
            let lower = l.to_ascii_lowercase();
            NO_TEST_PHRASES.iter().any(|p| memmem::find(lower.as_bytes(), p.as_bytes()).is_some())
                || zero_tests(&lower)
                || (!package_reported && memmem::find(lower.as_bytes(), b"[no test files]").is_some())
        })
        .map(|l| l.chars().take(300).collect())
}

/// `0 tests` as a count of its own (not the end of `10 tests`) followed by end of line or one of
/// [`AFTER_ZERO_TESTS`].
fn zero_tests(lower: &str) -> bool {
    const ZERO: &str = "0 tests";
    memmem::find_iter(lower.as_bytes(), ZERO.as_bytes()).any(|at| {
        let before = lower[..at].chars().next_back();
        let after = &lower[at + ZERO.len()..];
        !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '.')
            && AFTER_ZERO_TESTS.iter().any(|w| if w.is_empty() { after.is_empty() } else { after.starts_with(w) })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A C++ library's test run whose tests run inside the build (as seen in a JSON library): the
    /// build failed, and ctest found none, so the command exited 0.
    #[test]
    fn a_runner_that_found_no_test_is_seen() {
        let log = include_bytes!("../test_data/ctest/no_tests_found.log");
        assert_eq!(no_tests_ran(log).as_deref(), Some("No tests were found!!!"));
        for (line, want) in [
            ("testing: warning: no tests to run\nPASS\nok  \tp\t0.01s", true),
            ("?   \texample.com/p\t[no test files]", true),
            ("?   \texample.com/p\t[no test files]\nok  \texample.com/q\t0.1s", false),
            ("Ran 0 tests in 0.000s\n\nOK", true),
            ("============ no tests ran in 0.01s ============", true),
            ("collected 0 items", true),
            ("No tests found, exiting with code 1", true),
            ("OK (0 tests, 0 assertions)", true),
            ("Executed 0 tests", true),
            ("Ran 10 tests in 0.1s", false),
            ("100% tests passed, 0 tests failed out of 3", false),
            ("All 57 tests passed.", false),
            ("Running test suite base....\nPASSED", false),
            ("", false),
        ] {
            assert_eq!(no_tests_ran(line.as_bytes()).is_some(), want, "{line}");
        }
        // Any bytes: a count in binary noise is still read, and nothing panics.
        assert!(no_tests_ran(b"\xff\xfe0 tests").is_some());
    }
}
