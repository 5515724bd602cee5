//! The Catch2 console reporter parser (v2 and v3). Each reported test case is a block: a line
//! of dashes, the test case name, indented section names, another line of dashes, the source
//! location, a line of dots, then assertions `file:line: FAILED:` / `PASSED:` / `SKIPPED:`.
//!
//! By default Catch2 prints blocks only for failing test cases; with `-s` it prints every
//! assertion, so passing test cases appear too. A test case is FAIL when any of its blocks
//! failed, else SKIP when skipped, else PASS; test cases never printed are absent (a warning
//! says so when the closing `test cases:` count is larger). Canonical id and Multi-SWE-bench
//! name: the test case name.

use swe_forge_core::TestStatus;

use crate::{LineParser, ParsedLog, Recorder};

#[derive(Default, PartialEq)]
enum State {
    #[default]
    Outside,
    /// After the opening dashes: the next line is the name.
    Name,
    /// Section names, until the closing dashes.
    Sections,
    /// Assertions of the test case.
    Body,
}

/// Line-by-line state of a Catch2 console log.
#[derive(Default)]
pub(crate) struct Parser {
    parsed: Recorder,
    state: State,
    case: Option<String>,
    announced: Option<u64>,
}

fn dashes(line: &str) -> bool {
    line.len() >= 40 && line.bytes().all(|b| b == b'-')
}

/// `path:12: FAILED:` and friends.
fn assertion(line: &str) -> Option<TestStatus> {
    let t = line.trim_end();
    if t.ends_with(": FAILED:") || t == "FAILED:" {
        Some(TestStatus::Fail)
    } else if t.ends_with(": PASSED:") || t == "PASSED:" {
        Some(TestStatus::Pass)
    } else if t.ends_with(": SKIPPED:") || t == "SKIPPED:" {
        Some(TestStatus::Skip)
    } else {
        None
    }
}

/// `test cases: 5 | 2 passed | 3 failed`: the total.
fn summary(line: &str) -> Option<u64> {
    let rest = line.trim().strip_prefix("test cases:")?;
    rest.split('|').next()?.trim().parse().ok()
}

impl LineParser for Parser {
    fn line(&mut self, line: &str) {
        let t = line.trim_end();
        if dashes(t) {
            self.state = match self.state {
                State::Name | State::Sections => State::Body,
                _ => State::Name,
            };
            return;
        }
        match self.state {
            State::Name => {
                self.case = Some(t.trim().to_owned());
                self.state = State::Sections;
            }
            State::Sections => {}
            State::Body | State::Outside => {
                if t.starts_with("=====") {
                    self.state = State::Outside;
                    self.case = None;
                } else if let Some(n) = summary(t) {
                    self.announced = Some(n);
                } else if let Some(status) = assertion(t)
                    && let Some(case) = self.case.clone().filter(|_| self.state == State::Body)
                {
                    self.parsed.record_worst(case.clone(), Some(case), status);
                }
            }
        }
    }

    fn finish(mut self: Box<Self>) -> ParsedLog {
        if let Some(n) = self.announced
            && (self.parsed.tests.len() as u64) < n
        {
            self.parsed.warnings.push(format!(
                "Catch2 ran {n} test case(s) but printed {}; run with -s (or -r xml / -r junit) to see passing ones",
                self.parsed.tests.len()
            ));
        }
        self.parsed.into_parsed()
    }
}

/// Signature lines for detection.
pub(crate) fn signature(line: &str) -> u32 {
    if summary(line).is_some() || line.contains(" is a Catch v") || line.contains(" is a Catch2 v") { 100 } else { 0 }
}
