//! The exit-code check: printed lines can fake a pass (a test that prints `--- PASS: X`, a
//! truncated log), so parsed results are checked against the test command's exit code, as
//! SWE-bench does since users showed such fakes.

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
