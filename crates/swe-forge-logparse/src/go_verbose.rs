//! The `go test -v` text parser: `=== RUN` lines, `--- PASS/FAIL/SKIP: name (0.00s)` result
//! lines (indented for subtests) and per-package summary lines (`ok  \tpkg\t0.01s`,
//! `FAIL\tpkg\t0.01s`, `FAIL\tpkg [build failed]`, `?   \tpkg\t[no test files]`).
//!
//! `go test` prints each package's output in one block ending with its summary line, so the
//! results seen since the previous summary belong to the package named by the next one;
//! results after the last summary go to package `?`. Canonical id `<pkg>::<Test>`;
//! Multi-SWE-bench name = the bare test name without its last `/` level (`TestA/case` ->
//! `TestA`), as that harness's Go handlers record it. As in the JSON parser, a test that printed
//! `=== RUN` but no result counts as FAIL when its package failed, and is left out otherwise.

use std::collections::BTreeMap;

use swe_forge_core::TestStatus;

use crate::msb::go_base_name;
use crate::{LineParser, ParsedLog, Recorder, list};

/// Package name used when no summary line follows a test's result.
const UNKNOWN_PACKAGE: &str = "?";

#[derive(Default)]
struct TestState {
    running: bool,
    status: Option<TestStatus>,
}

pub(crate) enum Summary<'a> {
    Ok(&'a str),
    Fail(&'a str),
    BuildFailed(&'a str, &'a str),
    NoTestFiles,
}

/// Recognises a package summary line.
pub(crate) fn summary(line: &str) -> Option<Summary<'_>> {
    if !line.starts_with(['o', 'F', '?']) {
        return None;
    }
    let mut words = line.split_whitespace();
    let head = words.next()?;
    let pkg = words.next()?;
    let tail = words.next()?;
    // The head must be followed by whitespace (`ok  \t`, `FAIL\t`, `?   \t`), not be a prefix.
    if line.get(head.len()..).is_none_or(|r| !r.starts_with(char::is_whitespace)) {
        return None;
    }
    let timing = tail.starts_with(|c: char| c.is_ascii_digit()) || tail == "(cached)";
    match head {
        "ok" if timing => Some(Summary::Ok(pkg)),
        "FAIL" if timing => Some(Summary::Fail(pkg)),
        "FAIL" if tail == "[build" || tail == "[setup" => Some(Summary::BuildFailed(pkg, &tail[1..])),
        "?" if tail == "[no" => Some(Summary::NoTestFiles),
        _ => None,
    }
}

/// `--- PASS: name (0.00s)` and friends, any indentation: the name and status.
pub(crate) fn result(line: &str) -> Option<(&str, TestStatus)> {
    let rest = line.trim_start().strip_prefix("--- ")?;
    let (status, rest) = if let Some(r) = rest.strip_prefix("PASS:") {
        (TestStatus::Pass, r)
    } else if let Some(r) = rest.strip_prefix("FAIL:") {
        (TestStatus::Fail, r)
    } else if let Some(r) = rest.strip_prefix("SKIP:") {
        (TestStatus::Skip, r)
    } else {
        return None;
    };
    Some((rest.split_whitespace().next()?, status))
}

/// `=== RUN   name`: the name.
pub(crate) fn run(line: &str) -> Option<&str> {
    let rest = line.trim_start().strip_prefix("=== RUN")?;
    if !rest.starts_with(char::is_whitespace) {
        return None;
    }
    rest.split_whitespace().next()
}

/// Line-by-line state: results not yet attributed to a package.
#[derive(Default)]
pub(crate) struct Parser {
    parsed: Recorder,
    pending: BTreeMap<String, TestState>,
}

impl Parser {
    /// Attributes the pending tests to `pkg`, whose own result is `pkg_result`.
    fn flush(&mut self, pkg: &str, pkg_result: Option<TestStatus>) {
        let mut crashed = Vec::new();
        let mut unfinished = Vec::new();
        for (test, state) in std::mem::take(&mut self.pending) {
            let status = if state.running && pkg_result == Some(TestStatus::Fail) {
                crashed.push(test.clone());
                Some(TestStatus::Fail)
            } else {
                if state.running && state.status.is_none() {
                    unfinished.push(test.clone());
                }
                state.status
            };
            if let Some(status) = status {
                self.parsed.record(format!("{pkg}::{test}"), Some(go_base_name(&test).to_owned()), status);
            }
        }
        if !crashed.is_empty() {
            let names: Vec<&str> = crashed.iter().map(String::as_str).collect();
            self.parsed.warnings.push(format!(
                "package {pkg} failed while {} test(s) had no result ({}); counted as FAIL",
                names.len(),
                list(&names)
            ));
        }
        if !unfinished.is_empty() {
            let names: Vec<&str> = unfinished.iter().map(String::as_str).collect();
            let why = if pkg_result.is_none() { " (no summary line follows; log truncated?)" } else { "" };
            self.parsed.warnings.push(format!(
                "package {pkg}{why}: {} started test(s) without result left out ({})",
                names.len(),
                list(&names)
            ));
        }
    }
}

impl LineParser for Parser {
    fn line(&mut self, line: &str) {
        let line = line.trim_end();
        if let Some((name, status)) = result(line) {
            let state = match self.pending.get_mut(name) {
                Some(state) => state,
                None => self.pending.entry(name.to_owned()).or_default(),
            };
            state.running = false;
            state.status = Some(status);
        } else if let Some(name) = run(line) {
            match self.pending.get_mut(name) {
                Some(state) => state.running = true,
                None => self.pending.entry(name.to_owned()).or_default().running = true,
            }
        } else if let Some(s) = summary(line) {
            match s {
                Summary::Ok(pkg) => self.flush(pkg, Some(TestStatus::Pass)),
                Summary::Fail(pkg) => self.flush(pkg, Some(TestStatus::Fail)),
                Summary::BuildFailed(pkg, what) => {
                    self.parsed.warnings.push(format!("package {pkg}: {what} failed; none of its tests ran"));
                    self.flush(pkg, Some(TestStatus::Fail));
                }
                Summary::NoTestFiles => {}
            }
        }
    }

    fn first_byte(&self) -> Option<crate::text::FirstByte> {
        Some(|b| matches!(b, b'=' | b'-' | b'o' | b'F' | b'?'))
    }

    fn finish(mut self: Box<Self>) -> ParsedLog {
        if !self.pending.is_empty() {
            let n = self.pending.values().filter(|s| s.status.is_some()).count();
            if n > 0 {
                self.parsed.warnings.push(format!(
                    "{n} test result(s) not followed by a package summary line; attributed to package `{UNKNOWN_PACKAGE}`"
                ));
            }
            self.flush(UNKNOWN_PACKAGE, None);
        }
        self.parsed.into_parsed()
    }
}
