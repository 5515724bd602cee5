//! Parsers from raw test-run logs to per-test statuses keyed by canonical test ids.
//!
//! A validation runs a repository's test command three times in Docker and keeps the merged
//! stdout/stderr of each run. [`parse`] turns one such log into a [`ParsedLog`]: the status of
//! every test that reported one, keyed by a canonical id that is unique within the run (package
//! or test binary plus test name), the name Multi-SWE-bench's own log parsers would have used
//! for the same test, and warnings about anything suspicious (crashed binaries, build failures,
//! truncated logs, summary counts that disagree). [`detect`] guesses the log format.
//!
//! Parsers never panic and accept any bytes: the log is decoded lossily, ANSI escape sequences
//! and carriage returns are removed, and lines that are not test output are ignored. One file
//! per log format: [`Framework::GoTestJson`] in `go_json.rs`, [`Framework::GoTestVerbose`] in
//! `go_verbose.rs`, [`Framework::CargoLibtest`] in `cargo_libtest.rs`; `text.rs` owns decoding
//! and line cleaning, `detect.rs` owns format detection.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use swe_forge_core::TestStatus;

mod cargo_libtest;
mod detect;
mod go_json;
mod go_verbose;
mod text;

/// A test-output format this crate can parse.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Framework {
    /// `go test -json` event stream (`go-test-json`).
    GoTestJson,
    /// `go test -v` text output (`go-test`).
    GoTestVerbose,
    /// libtest text output of `cargo test` (`cargo-test`).
    CargoLibtest,
}

impl Framework {
    /// Every framework, in declaration order.
    pub const ALL: [Framework; 3] = [Framework::GoTestJson, Framework::GoTestVerbose, Framework::CargoLibtest];

    /// The parser name used in recipes: `go-test-json`, `go-test` or `cargo-test`.
    pub fn name(self) -> &'static str {
        match self {
            Framework::GoTestJson => "go-test-json",
            Framework::GoTestVerbose => "go-test",
            Framework::CargoLibtest => "cargo-test",
        }
    }
}

impl fmt::Display for Framework {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The error of [`Framework::from_str`]: the name matches no framework.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownFramework(pub String);

impl fmt::Display for UnknownFramework {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown log parser `{}` (known: ", self.0)?;
        for (i, fw) in Framework::ALL.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(fw.name())?;
        }
        f.write_str(")")
    }
}

impl std::error::Error for UnknownFramework {}

impl FromStr for Framework {
    type Err = UnknownFramework;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Framework::ALL.into_iter().find(|fw| fw.name() == s).ok_or_else(|| UnknownFramework(s.to_owned()))
    }
}

/// What one log says about its tests.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParsedLog {
    /// Canonical test id -> status. Only tests that reported a status (or, for Go, that were
    /// running when their package failed) appear; never [`TestStatus::None`].
    pub tests: BTreeMap<String, TestStatus>,
    /// Canonical test id -> the name Multi-SWE-bench's parser would give the test. Tests that
    /// parser cannot name (Rust doctests) are absent. Several ids may share one name.
    pub msb_names: BTreeMap<String, String>,
    /// Human-readable notes about crashes, build failures, truncation and count mismatches.
    pub warnings: Vec<String>,
}

impl ParsedLog {
    /// Records `status` for `id` (a later report of the same id replaces an earlier one).
    pub(crate) fn record(&mut self, id: String, msb_name: Option<String>, status: TestStatus) {
        if let Some(name) = msb_name {
            self.msb_names.insert(id.clone(), name);
        }
        self.tests.insert(id, status);
    }
}

/// Parses `log` as output of `framework`. Accepts any bytes and never panics.
pub fn parse(framework: Framework, log: &[u8]) -> ParsedLog {
    let text = text::decode(log);
    let mut parsed = match framework {
        Framework::GoTestJson => go_json::parse(&text),
        Framework::GoTestVerbose => go_verbose::parse(&text),
        Framework::CargoLibtest => cargo_libtest::parse(&text),
    };
    if parsed.tests.is_empty() {
        parsed.warnings.push(format!("no test results found in the log ({} parser)", framework.name()));
    }
    parsed
}

/// Guesses which framework produced `log`; `None` when it shows no sign of any.
pub fn detect(log: &[u8]) -> Option<Framework> {
    detect::detect(&text::decode(log))
}

/// How many test names a warning lists before eliding the rest.
const NAMES_IN_WARNING: usize = 5;

/// Up to [`NAMES_IN_WARNING`] names joined by `, `, with a count of the rest.
pub(crate) fn list(names: &[&str]) -> String {
    let mut s = names.iter().take(NAMES_IN_WARNING).copied().collect::<Vec<_>>().join(", ");
    if names.len() > NAMES_IN_WARNING {
        s.push_str(&format!(", and {} more", names.len() - NAMES_IN_WARNING));
    }
    s
}
