//! The libtest JSON parser: `cargo test -- -Z unstable-options --format json --report-time`
//! and cargo-nextest's `--message-format libtest-json` (and `libtest-json-plus`), one JSON
//! object per line, mixed with cargo's own text on stderr.
//!
//! Events: `{"type":"suite","event":"started","test_count":N}`, then per test `started` and
//! one of `ok`, `failed` (with `stdout`, `message`, `reason`), `ignored` (with `message`), and
//! a `suite` event `ok`/`failed` with the counts; `timeout` only says a test has run for over
//! 60 seconds (it still ends with one of the others); `bench` results count as PASS, as in
//! the text parser.
//!
//! Canonical ids and Multi-SWE-bench names are the `cargo-test` parser's, so text and JSON
//! runs of one repository compare: cargo's `Running <src> (<path>/deps/<name>-<hash>)` and
//! `Doc-tests <crate>` lines (text, between the JSON lines) name the binary, and this file
//! hands them and every event to [`crate::cargo_libtest`]'s state. nextest names each test
//! `<package>::<binary>$<test>` (`#N` appended after N attempts, `@stress-N` in stress runs):
//! the binary comes from the name (`-` as `_`, as in cargo's file names) with the kind marker
//! of `libtest-json-plus`'s `nextest` object (`tool[bin]`); without that object a binary's
//! unit tests cannot be told from its library's. Doctests that libtest prints with
//! ` - compile fail` carry no such suffix here, so their ids differ from the text parser's
//! (their line, removed from every doctest id by `stable.rs`, gives the same numbers in both).
//!
//! Lines that are not JSON events are only read as cargo's headers and its reports of a
//! crashed binary or a failed build, never as test results (a test's own output may look like
//! anything). A truncated or malformed JSON line is skipped; a test without a final event is
//! left out with a warning, as in the text parser.

use std::borrow::Cow;
use std::collections::HashMap;

use serde::Deserialize;
use swe_forge_core::TestStatus;

use crate::{LineParser, ParsedLog, cargo_libtest, list};

/// One line of libtest's (or nextest's) JSON output; other fields are ignored.
#[derive(Deserialize)]
struct Event<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(default, borrow)]
    event: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    name: Option<Cow<'a, str>>,
    #[serde(default)]
    test_count: Option<usize>,
    #[serde(default)]
    passed: Option<usize>,
    #[serde(default)]
    failed: Option<usize>,
    #[serde(default)]
    ignored: Option<usize>,
    #[serde(default, borrow)]
    nextest: Option<Nextest<'a>>,
}

/// The `nextest` object of `libtest-json-plus` suite events.
#[derive(Deserialize)]
struct Nextest<'a> {
    #[serde(rename = "crate", borrow)]
    krate: Cow<'a, str>,
    #[serde(borrow)]
    test_binary: Cow<'a, str>,
    #[serde(borrow)]
    kind: Cow<'a, str>,
}

/// A test binary of `libtest-json-plus`, whose events interleave with other binaries'.
#[derive(Default)]
struct Suite {
    expected: Option<usize>,
    /// Passed, failed, ignored.
    counts: (usize, usize, usize),
    /// Tests started and not finished.
    pending: Vec<String>,
}

/// Line-by-line state of a libtest JSON log.
#[derive(Default)]
pub(crate) struct Parser {
    cargo: cargo_libtest::Parser,
    /// nextest `<package>::<binary>` -> kind marker (`[bin]`), from `libtest-json-plus`.
    kinds: HashMap<String, &'static str>,
    /// nextest `<package>::<binary>` -> its suite, from `libtest-json-plus`'s suite events
    /// (plain `libtest-json` prints each binary's events together, as libtest does).
    suites: HashMap<String, Suite>,
    /// The binary prefix being built, kept to reuse its allocation.
    prefix: String,
}

/// Whether `line` is a libtest JSON event (for detection).
pub(crate) fn is_event(line: &str) -> bool {
    let line = line.trim();
    line.starts_with('{') && event(line).is_some()
}

fn event(line: &str) -> Option<Event<'_>> {
    serde_json::from_str::<Event>(line).ok().filter(|e| matches!(e.kind.as_ref(), "test" | "suite" | "bench"))
}

/// The final status of a test event; `None` for `started`, `timeout` and unknown events.
fn status(kind: &str, event: Option<&str>) -> Option<TestStatus> {
    match (kind, event) {
        ("bench", _) => Some(TestStatus::Pass),
        ("test", Some("ok")) => Some(TestStatus::Pass),
        ("test", Some("failed")) => Some(TestStatus::Fail),
        ("test", Some("ignored")) => Some(TestStatus::Skip),
        _ => None,
    }
}

/// The kind marker of a nextest binary kind, as the text parser gives cargo's.
fn kind_marker(kind: &str) -> &'static str {
    match kind {
        "bin" => "[bin]",
        "example" => "[example]",
        "bench" => "[bench]",
        _ => "",
    }
}

/// A nextest name `<package>::<binary>[@stress-N]$<test>[#N]`: (`<package>::<binary>`, test).
fn nextest_name(name: &str) -> Option<(&str, &str)> {
    let (binary, test) = name.split_once('$')?;
    let binary = binary.split_once("@stress-").map_or(binary, |(b, _)| b);
    let test = match test.rsplit_once('#') {
        Some((t, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => t,
        _ => test,
    };
    (binary.contains("::") && !test.is_empty()).then_some((binary, test))
}

impl Parser {
    fn event(&mut self, e: Event<'_>) {
        if e.kind == "suite" {
            match e.event.as_deref() {
                Some("started") => match &e.nextest {
                    Some(n) => {
                        let key = format!("{}::{}", n.krate, n.test_binary);
                        self.kinds.insert(key.clone(), kind_marker(&n.kind));
                        let old = self.suites.insert(key.clone(), Suite { expected: e.test_count, ..Suite::default() });
                        if let Some(old) = old {
                            self.suite_unfinished(&key, old, "it started again");
                        }
                    }
                    None => self.cargo.suite_started(e.test_count),
                },
                Some("ok" | "failed") => {
                    let counts = match (e.passed, e.failed, e.ignored) {
                        (Some(p), Some(f), Some(i)) => Some((p, f, i)),
                        _ => None,
                    };
                    let key = e.nextest.as_ref().map(|n| format!("{}::{}", n.krate, n.test_binary));
                    match key.and_then(|k| self.suites.remove(&k).map(|s| (k, s))) {
                        Some((key, suite)) => self.suite_finished(&key, suite, counts),
                        None => self.cargo.suite_finished(counts),
                    }
                }
                _ => {}
            }
            return;
        }
        let Some(name) = e.name.as_deref().map(str::trim).filter(|n| !n.is_empty()) else { return };
        let status = status(&e.kind, e.event.as_deref());
        let nextest = nextest_name(name);
        let test = nextest.map_or(name, |(_, t)| t);
        let suite = nextest.and_then(|(binary, _)| self.suites.get_mut(binary));
        match (status, suite) {
            (None, Some(suite)) if e.event.as_deref() == Some("started") => suite.pending.push(test.to_owned()),
            (None, None) if e.kind == "test" && e.event.as_deref() == Some("started") => self.cargo.test_started(test),
            (None, _) => {}
            (Some(status), suite) => {
                let count_here = suite.is_none();
                if let Some(suite) = suite {
                    if let Some(i) = suite.pending.iter().rposition(|p| p == test) {
                        suite.pending.remove(i);
                    }
                    match status {
                        TestStatus::Pass => suite.counts.0 += 1,
                        TestStatus::Fail => suite.counts.1 += 1,
                        TestStatus::Skip | TestStatus::None => suite.counts.2 += 1,
                    }
                }
                match nextest {
                    Some((binary, test)) => {
                        self.prefix.clear();
                        match binary.split_once("::") {
                            Some((_, b)) => self.prefix.extend(b.chars().map(|c| if c == '-' { '_' } else { c })),
                            None => self.prefix.push_str(binary),
                        }
                        self.prefix.push_str(self.kinds.get(binary).copied().unwrap_or(""));
                        self.cargo.record_in(&self.prefix, test, status, count_here);
                    }
                    None => self.cargo.test_finished(test, status),
                }
            }
        }
    }

    /// The summary of a `libtest-json-plus` suite: warnings as the text parser gives them.
    fn suite_finished(&mut self, key: &str, suite: Suite, counts: Option<(usize, usize, usize)>) {
        if !suite.pending.is_empty() {
            let names: Vec<&str> = suite.pending.iter().map(String::as_str).collect();
            self.cargo.warn(format!(
                "test binary {key}: {} test(s) printed no recognisable status; left out: {}",
                names.len(),
                list(&names)
            ));
        }
        if let Some((p, f, i)) = counts
            && (p, f, i) != suite.counts
        {
            let (lp, lf, li) = suite.counts;
            self.cargo.warn(format!(
                "test binary {key}: summary says {p} passed, {f} failed, {i} ignored but the log shows {lp} passed, {lf} failed, {li} ignored"
            ));
        }
    }

    /// A `libtest-json-plus` suite without summary.
    fn suite_unfinished(&mut self, key: &str, suite: Suite, why: &str) {
        let (p, f, i) = suite.counts;
        let reported = p + f + i;
        if suite.pending.is_empty() && suite.expected.is_none_or(|e| e <= reported) {
            return;
        }
        let of = suite.expected.map_or_else(String::new, |e| format!(" of {e}"));
        let names: Vec<&str> = suite.pending.iter().map(String::as_str).collect();
        let left_out =
            if names.is_empty() { String::new() } else { format!("; without status, left out: {}", list(&names)) };
        self.cargo.warn(format!(
            "test binary {key} stopped before its summary ({why}): {reported}{of} test(s) reported{left_out}"
        ));
    }
}

impl LineParser for Parser {
    fn line(&mut self, line: &str) {
        let trimmed = line.trim();
        if trimmed.starts_with('{') {
            if let Some(e) = event(trimmed) {
                self.event(e);
            }
            return;
        }
        if !self.cargo.header(line) {
            self.cargo.stop_line(line.trim_end());
        }
    }

    fn finish(mut self: Box<Self>) -> ParsedLog {
        let mut open: Vec<(String, Suite)> = std::mem::take(&mut self.suites).into_iter().collect();
        open.sort_by(|a, b| a.0.cmp(&b.0));
        for (key, suite) in open {
            self.suite_unfinished(&key, suite, "log ends");
        }
        self.cargo.finish_log()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nextest_names() {
        assert_eq!(nextest_name("my-crate::my_crate$tests::a"), Some(("my-crate::my_crate", "tests::a")));
        assert_eq!(nextest_name("my-crate::tool$tests::a#3"), Some(("my-crate::tool", "tests::a")));
        assert_eq!(nextest_name("c::it@stress-2$t"), Some(("c::it", "t")));
        assert_eq!(nextest_name("tests::a"), None);
        assert_eq!(nextest_name("c$x"), None);
    }

    #[test]
    fn events() {
        assert!(is_event(r#"{ "type": "suite", "event": "started", "test_count": 2 }"#));
        assert!(is_event(r#"{"type":"test","event":"ok","name":"a"}"#));
        assert!(!is_event(r#"{ "Action": "run" }"#));
        assert_eq!(status("test", Some("timeout")), None);
        assert_eq!(status("bench", None), Some(TestStatus::Pass));
    }
}
