//! Parsers from raw test-run logs and result files to per-test statuses keyed by canonical
//! test ids.
//!
//! A validation runs a repository's test command three times in Docker and keeps the merged
//! stdout/stderr of each run, and where the recipe asks for it the framework's own result files
//! (JUnit XML, `.trs` files). [`parse`] / [`parse_reader`] turn one log into a [`ParsedLog`],
//! [`parse_files`] a set of result files: the status of every test that reported one, keyed by
//! a canonical id that is unique within the run, the name Multi-SWE-bench's own log parsers
//! would have used for the same test, the tests the framework's own timeout killed (go test's
//! `panic: test timed out after …`), and warnings about anything suspicious (crashed binaries,
//! build failures, truncated logs, summary counts that disagree). [`detect`] guesses the format,
//! [`msb_rollup`] gives statuses at Multi-SWE-bench's granularity (a Java class fails when one
//! of its methods fails) and [`exit_code_consistent`] checks parsed results against the test
//! command's exit code.
//!
//! # Invariants
//!
//! - Parsers never panic and accept any bytes: logs are decoded lossily, ANSI escape sequences
//!   and carriage returns are removed, and lines that are not test output are ignored.
//! - A test that did not report a status is absent (read as NONE), never PASS: a suite that
//!   crashed half way leaves its unreported tests out, with a warning.
//! - Parsing streams: memory depends on the number of tests, not on the size of the log (lines
//!   longer than 4 MiB are cut; structured reports are read element by element).
//!
//! # Canonical ids
//!
//! | framework | id | Multi-SWE-bench name |
//! |---|---|---|
//! | `go-test-json`, `go-test` | `<package>::<Test>/<sub>` | `<Test>/<sub>`; `<Test>` for the repositories whose handler drops the last `/` level ([`MsbNaming`], [`ParsedLog::name_go_subtests`]) |
//! | `cargo-test` | `<binary>::<module>::<test>`, `<crate>::doc::<file> - <item>` (` (doctest K)` for an item's K-th doctest; no line: [`stable_ids`]) | `<module>::<test>` (doctests: none) |
//! | `libtest-json` | as `cargo-test` (nextest: `<binary>` from its `<package>::<binary>$<test>`) | as `cargo-test` |
//! | `nextest-junit` | as `cargo-test` | as `cargo-test` |
//! | `maven-surefire`, `junit-xml` | `<pkg>.<Class>#<method>` (`#method[1]` for parameterised), `<pkg>.<Class>` for class-level results; `junit-xml` without a class (node:test): `<suite> > <name>` | `<pkg>.<Class>`; the name |
//! | `jest`, `jest-json`, `vitest-json` | `<file> > <describe> > <title>`; `<file>` for the file itself | `<file>:<title>`; `<file>` (jest: the title, or the full title, for the repositories of [`MsbNaming`]: [`JestNames`]) |
//! | `vitest` | `<file> > <describe> > <title>`; `<file>` | the id |
//! | `mocha` | `<describe> > <title>` | `<title>`; the full title or the id for some repositories ([`MochaNames`]) |
//! | `mocha-json` | `<file> > <describe…> > <title>` | `fullTitle`; `<file>:<fullTitle>` for some repositories ([`MochaJsonNames`]) |
//! | `node-test` | `<parent> > <title>` | `<title>` |
//! | `tap` | `<file>::<parent> > <description>` (file when known) | `<description>` |
//! | `ctest`, `ctest-junit` | the ctest target name | the id, for `Passed` and `***Failed` lines only (what the handlers match); lower-cased for the repositories whose handler lower-cases it ([`MsbNaming`], [`ParsedLog::name_ctest_targets`]) |
//! | `gtest`, `gtest-xml` | `<Suite>.<Test>` (`Inst/Suite.Test/0` when parameterised) | the id |
//! | `catch2`, `catch2-xml`, `catch2-junit` | the test case name | the id |
//! | `automake` | the test script (`tests/a.sh`), `<script>::<description>` for TAP-driver results | the script |
//!
//! One file per format: `go_json.rs`, `go_verbose.rs`, `cargo_libtest.rs`, `libtest_json.rs`, `surefire.rs`,
//! `junit.rs` (every JUnit XML dialect), `jest_text.rs`, `jest_json.rs` (jest and vitest JSON),
//! `vitest_text.rs`, `mocha_text.rs`, `mocha_json.rs`, `node_spec.rs`, `tap.rs`, `ctest.rs`
//! (and `ctest_cases.rs`: ctest targets read as the GoogleTest cases their binaries reported),
//! `gtest.rs`, `catch2_text.rs`, `catch2_xml.rs`, `automake.rs`; `text.rs` owns line reading
//! and cleaning, `json_doc.rs` finding JSON reports inside a log, `detect.rs` format detection,
//! `stable.rs` doctest ids without their line numbers, `msb.rs` Multi-SWE-bench granularity (and the per-repository rules of
//! `pipelines/naming/msb.toml`; `msb_js.rs` the jest and mocha ones), `error.rs` the errors of those rules and `exit_code.rs` the
//! exit-code check.

use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::{BufReader, Read};

use serde::{Deserialize, Serialize};
use swe_forge_core::TestStatus;

/// A substring searcher for a literal, built once: `str::find` with a `&str` pattern builds a
/// new searcher on every call, which costs more than the search on short log lines.
macro_rules! needle {
    ($s:literal) => {{
        static NEEDLE: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
            std::sync::LazyLock::new(|| memchr::memmem::Finder::new($s));
        &*NEEDLE
    }};
}

mod automake;
mod cargo_libtest;
mod catch2_text;
mod catch2_xml;
mod ctest;
mod ctest_cases;
mod ctest_tap;
mod detect;
mod error;
mod exit_code;
mod go_json;
mod go_verbose;
mod gtest;
mod jest_json;
mod jest_text;
mod json_doc;
mod junit;
mod libtest_json;
mod mocha_json;
mod mocha_text;
mod msb;
mod msb_js;
mod naming;
mod node_spec;
mod stable;
mod surefire;
mod tap;
mod text;
mod time_bomb;
mod verdict;
mod vitest_text;
mod xml_bound;

pub use ctest_cases::{CASES_RESULTS_DIR, CTEST_TESTS_JSON, GTEST_RESULTS_DIR, is_grain_note};
pub use ctest_tap::CTEST_JUNIT;
pub use error::{MsbNamingError, UnknownNaming};
pub use exit_code::{exit_code_consistent, no_tests_ran};
pub use msb::{CtestNames, GoSubtests, MsbNaming, RepoNaming, msb_rollup};
pub use msb_js::{JestNames, MochaJsonNames, MochaNames};
pub use naming::Naming;
pub use stable::{stable_id, stable_ids};
// The format names live in core so that records carry them typed; this crate's API is unchanged.
pub use swe_forge_core::{Framework, UnknownFramework};
pub use time_bomb::time_bomb_evidence;
pub use verdict::parse_verdicts;

/// What one log says about its tests.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParsedLog {
    /// Canonical test id -> status. Only tests that reported a status (or, for Go, that were
    /// running when their package failed) appear; never [`TestStatus::None`].
    pub tests: BTreeMap<String, TestStatus>,
    /// Canonical test id -> the name Multi-SWE-bench's parser would give the test. Tests that
    /// parser cannot name (Rust doctests) are absent. Several ids may share one name. Go tests
    /// carry their full names as parsed; [`ParsedLog::name_go_subtests`] applies a repository's
    /// rule.
    pub msb_names: BTreeMap<String, String>,
    /// Human-readable notes about crashes, build failures, truncation and count mismatches.
    pub warnings: Vec<String>,
    /// Canonical ids of the tests the test framework's own timeout killed (go test's
    /// `-timeout`, 10 minutes by default: `panic: test timed out after …` and its `running
    /// tests:` list). Each is also in [`ParsedLog::tests`] as FAIL.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub timed_out: BTreeSet<String>,
    /// The code under test did not build in this run (a Go package, a crate, a test executable
    /// ctest or a JUnit report found missing); one of the warnings says which. What callers act
    /// on, instead of the warnings' text.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub build_failed: bool,
}

/// Collects results while a log is parsed. Hash maps, because canonical ids share long
/// prefixes (`tests/a.test.js > describe > …`) and an ordered map would compare those bytes on
/// every insert; [`Recorder::into_parsed`] sorts once at the end.
#[derive(Default)]
pub(crate) struct Recorder {
    pub(crate) tests: HashMap<String, TestStatus>,
    pub(crate) msb_names: HashMap<String, String>,
    pub(crate) warnings: Vec<String>,
    pub(crate) timed_out: BTreeSet<String>,
    pub(crate) build_failed: bool,
}

impl Recorder {
    /// Notes that the code under test did not build, with the warning that says what.
    pub(crate) fn build_failed(&mut self, warning: String) {
        self.build_failed = true;
        self.warnings.push(warning);
    }

    /// Records `status` for `id` (a later report of the same id replaces an earlier one, as a
    /// retried test's last attempt is its result).
    pub(crate) fn record(&mut self, id: String, msb_name: Option<String>, status: TestStatus) {
        self.set(id, msb_name, |_| status);
    }

    /// [`Recorder::record`] for an id the caller built in a buffer of its own: a test reported
    /// again (the common case in a long log) costs a lookup, no allocation; the Multi-SWE-bench
    /// name is only made for a new id.
    pub(crate) fn record_str(&mut self, id: &str, msb_name: impl FnOnce() -> Option<String>, status: TestStatus) {
        match self.tests.get_mut(id) {
            Some(old) => *old = status,
            None => self.record(id.to_owned(), msb_name(), status),
        }
    }

    /// Records `status` for `id` unless a worse status is already there (FAIL > PASS > SKIP):
    /// for formats where a repeated id means two different tests that share a name.
    pub(crate) fn record_worst(&mut self, id: String, msb_name: Option<String>, status: TestStatus) {
        self.set(id, msb_name, |old| old.map_or(status, |o| worst(o, status)));
    }

    /// The Multi-SWE-bench name is a function of the id, so only a new id records one.
    fn set(&mut self, id: String, msb_name: Option<String>, status: impl FnOnce(Option<TestStatus>) -> TestStatus) {
        match self.tests.entry(id) {
            Entry::Occupied(mut e) => {
                let old = *e.get();
                e.insert(status(Some(old)));
            }
            Entry::Vacant(e) => {
                if let Some(name) = msb_name {
                    self.msb_names.insert(e.key().clone(), name);
                }
                e.insert(status(None));
            }
        }
    }

    /// The sorted result.
    pub(crate) fn into_parsed(self) -> ParsedLog {
        ParsedLog {
            tests: self.tests.into_iter().collect(),
            msb_names: self.msb_names.into_iter().collect(),
            warnings: self.warnings,
            timed_out: self.timed_out,
            build_failed: self.build_failed,
        }
    }
}

/// FAIL over PASS over SKIP.
pub(crate) fn worst(a: TestStatus, b: TestStatus) -> TestStatus {
    fn rank(s: TestStatus) -> u8 {
        match s {
            TestStatus::Fail => 3,
            TestStatus::Pass => 2,
            TestStatus::Skip => 1,
            TestStatus::None => 0,
        }
    }
    if rank(b) > rank(a) { b } else { a }
}

/// A parser fed one cleaned line at a time.
pub(crate) trait LineParser {
    /// Handles one line (without its `\n`, ANSI codes and `\r` overwrites already removed).
    fn line(&mut self, line: &str);
    /// Ends the input and returns what was found.
    fn finish(self: Box<Self>) -> ParsedLog;
    /// Lines this parser can use start (after spaces) with a byte this accepts; `None`: any.
    fn first_byte(&self) -> Option<text::FirstByte> {
        None
    }
}

fn line_parser(framework: Framework) -> Option<Box<dyn LineParser>> {
    Some(match framework {
        Framework::GoTestVerbose => Box::new(go_verbose::Parser::default()),
        Framework::CargoLibtest => Box::new(cargo_libtest::Parser::default()),
        Framework::LibtestJson => Box::new(libtest_json::Parser::default()),
        Framework::MavenSurefire => Box::new(surefire::Parser::default()),
        Framework::Jest => Box::new(jest_text::Parser::default()),
        Framework::Mocha => Box::new(mocha_text::Parser::default()),
        Framework::Vitest => Box::new(vitest_text::Parser::default()),
        Framework::NodeTest => Box::new(node_spec::Parser::default()),
        Framework::Tap => Box::new(tap::Parser::default()),
        Framework::Ctest => Box::new(ctest::Parser::default()),
        Framework::Gtest => Box::new(gtest::Parser::default()),
        Framework::Catch2 => Box::new(catch2_text::Parser::default()),
        Framework::Automake => Box::new(automake::Parser::default()),
        _ => return None,
    })
}

/// Parses `log` as output of `framework`. Accepts any bytes and never panics.
pub fn parse(framework: Framework, log: &[u8]) -> ParsedLog {
    parse_reader(framework, log)
}

/// Parses the log read from `reader` as output of `framework`, streaming: memory does not grow
/// with the size of the log. A read error ends the log early, with a warning.
pub fn parse_reader(framework: Framework, reader: impl Read) -> ParsedLog {
    let reader = BufReader::with_capacity(1 << 16, reader);
    let mut parsed = match framework {
        Framework::GoTestJson => go_json::parse(reader),
        Framework::JestJson | Framework::VitestJson => jest_json::parse(reader),
        Framework::MochaJson => mocha_json::parse(reader),
        Framework::Catch2Xml => catch2_xml::parse(reader),
        Framework::NextestJunit
        | Framework::JunitXml
        | Framework::CtestJunit
        | Framework::GtestXml
        | Framework::Catch2Junit => {
            let mut p = junit::Parser::new(framework);
            p.read(reader);
            p.finish()
        }
        _ => match line_parser(framework) {
            Some(mut p) => {
                let wants = p.first_byte();
                let warnings = text::for_each_line_where(reader, wants, |l| p.line(l));
                let mut parsed = p.finish();
                parsed.warnings.extend(warnings);
                parsed
            }
            None => ParsedLog::default(),
        },
    };
    parsed.stabilize_ids(framework);
    if parsed.tests.is_empty() {
        parsed.warnings.push(format!("no test results found in the log ({} parser)", framework.name()));
    }
    parsed
}

/// Parses a set of result files (path, contents) written by one run, such as the JUnit XML files
/// of `target/surefire-reports/` or `build/test-results/`, or automake's `.trs` files. Files
/// whose extension is not the framework's [`Framework::result_file_extension`] are ignored;
/// for formats without result files every file is parsed as a log. Files are read in path
/// order; a test reported by two files keeps the later report.
pub fn parse_files(framework: Framework, files: &[(String, Vec<u8>)]) -> ParsedLog {
    // The test case reports beside ctest's, or beside another runner's tests saved in ctest's
    // form (meson's), are read by `ParsedLog::read_binary_cases`, not as results of this format.
    let by_binary = framework == Framework::CtestJunit || files.iter().any(|(path, _)| path == CTEST_TESTS_JSON);
    let mut sorted: Vec<&(String, Vec<u8>)> = files
        .iter()
        .filter(|(path, _)| !by_binary || !(path.starts_with(GTEST_RESULTS_DIR) || path.starts_with(CASES_RESULTS_DIR)))
        .filter(|(path, _)| match framework.result_file_extension() {
            Some(ext) => path.rsplit_once('.').is_some_and(|(_, e)| e.eq_ignore_ascii_case(ext)),
            None => true,
        })
        .collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    let mut parsed = match framework {
        Framework::NextestJunit
        | Framework::JunitXml
        | Framework::CtestJunit
        | Framework::GtestXml
        | Framework::Catch2Junit => {
            let mut p = junit::Parser::new(framework);
            for (_, bytes) in &sorted {
                p.read(BufReader::new(&bytes[..]));
            }
            p.finish()
        }
        Framework::Automake => automake::parse_trs_files(&sorted),
        _ => {
            let mut merged = ParsedLog::default();
            for (path, bytes) in &sorted {
                let one = parse_reader(framework, &bytes[..]);
                merged.tests.extend(one.tests);
                merged.msb_names.extend(one.msb_names);
                merged.timed_out.extend(one.timed_out);
                merged.build_failed |= one.build_failed;
                merged.warnings.extend(one.warnings.into_iter().map(|w| format!("{path}: {w}")));
            }
            merged.warnings.retain(|w| !w.contains("no test results found"));
            merged
        }
    };
    if sorted.is_empty() {
        parsed.warnings.push(format!(
            "no result files{} among {} file(s)",
            framework.result_file_extension().map(|e| format!(" ending in .{e}")).unwrap_or_default(),
            files.len()
        ));
    }
    parsed.stabilize_ids(framework);
    if parsed.tests.is_empty() {
        parsed.warnings.push(format!("no test results found in the files ({} parser)", framework.name()));
    }
    parsed
}

/// Runs only the line scan of the text parsers on `reader` (reading, cutting at 4 MiB, lossy
/// UTF-8, ANSI and `\r` removal) with no parser behind it: (lines, bytes of cleaned text). For
/// the benchmark (`benches/throughput.rs`), which measures the scan apart from the parsers.
#[doc(hidden)]
pub fn scan_lines(reader: impl Read) -> (u64, u64) {
    let (mut lines, mut bytes) = (0u64, 0u64);
    let reader = BufReader::with_capacity(1 << 16, reader);
    text::for_each_line(reader, |l| {
        lines += 1;
        bytes += l.len() as u64;
    });
    (lines, bytes)
}

/// How much of a log [`detect`] reads: test output starts long before this.
const DETECT_PREFIX: usize = 32 << 20;

/// Guesses which framework produced `log` from its first 32 MiB; `None` when it shows no sign
/// of any.
pub fn detect(log: &[u8]) -> Option<Framework> {
    detect::detect(&text::decode(&log[..log.len().min(DETECT_PREFIX)]))
}

/// How many test names a warning lists before eliding the rest.
const NAMES_IN_WARNING: usize = 5;

/// The warning for ctest tests whose executable was missing: the run's build failed and ctest went
/// on.
pub(crate) fn not_built_warning(names: &[&str]) -> String {
    format!("build failed: {} ctest test(s) had no executable: {}", names.len(), list(names))
}

/// Up to [`NAMES_IN_WARNING`] names joined by `, `, with a count of the rest.
pub(crate) fn list(names: &[&str]) -> String {
    let mut s = names.iter().take(NAMES_IN_WARNING).copied().collect::<Vec<_>>().join(", ");
    if names.len() > NAMES_IN_WARNING {
        s.push_str(&format!(", and {} more", names.len() - NAMES_IN_WARNING));
    }
    s
}
