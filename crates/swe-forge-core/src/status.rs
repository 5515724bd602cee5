//! Per-test statuses and the three validation phases.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

/// The outcome of one test in one run, as Multi-SWE-bench spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum TestStatus {
    /// The test ran and passed.
    Pass,
    /// The test ran and failed (errors count as failures).
    Fail,
    /// The test was reported as skipped or ignored.
    Skip,
    /// The test is absent from that run's results.
    None,
}

impl TestStatus {
    /// The upper-case spelling used in records.
    pub fn as_str(self) -> &'static str {
        match self {
            TestStatus::Pass => "PASS",
            TestStatus::Fail => "FAIL",
            TestStatus::Skip => "SKIP",
            TestStatus::None => "NONE",
        }
    }
}

impl fmt::Display for TestStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The three runs of a validation, in the order they happen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// The base commit alone.
    Run,
    /// The base commit with the test patch applied.
    Test,
    /// The base commit with the test patch and the fix patch applied.
    Fix,
}

impl Phase {
    /// All phases in execution order.
    pub const ALL: [Phase; 3] = [Phase::Run, Phase::Test, Phase::Fix];

    /// Lower-case name used in file names and reasons.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Run => "run",
            Phase::Test => "test",
            Phase::Fix => "fix",
        }
    }
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Statuses of every test seen in one run, keyed by test id. Tests never reported are
/// absent (and read as [`TestStatus::None`]).
pub type PhaseStatuses = BTreeMap<String, TestStatus>;

/// A test's status in the three runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Transition {
    /// Status at the base commit.
    pub run: TestStatus,
    /// Status with the test patch.
    pub test: TestStatus,
    /// Status with the test and fix patches.
    pub fix: TestStatus,
}
