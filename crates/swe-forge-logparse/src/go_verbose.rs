//! The `go test -v` text parser: `=== RUN` lines, `--- PASS/FAIL/SKIP: name (0.00s)` result
//! lines (indented for subtests) and per-package summary lines (`ok  \tpkg\t0.01s`,
//! `FAIL\tpkg\t0.01s`, `FAIL\tpkg [build failed]`, `?   \tpkg\t[no test files]`).
//!
//! `go test` prints each package's output in one block ending with its summary line, so the
//! results seen since the previous summary belong to the package named by the next one;
//! results after the last summary go to package `?`. Canonical id `<pkg>::<Test>`;
//! Multi-SWE-bench name = the bare test name (`TestA/case`), as most of that harness's Go
//! handlers record it; [`crate::ParsedLog::name_go_subtests`] applies the rule of the
//! repositories whose handler drops the last `/` level. As in the JSON parser, a test that printed
//! `=== RUN` but no result counts as FAIL when its package failed, and is left out otherwise.
//!
//! When go test's own `-timeout` (10 minutes by default) kills a test binary, it prints
//! `panic: test timed out after 10m0s` and (recent Go versions) a `running tests:` list of the
//! tests (and their parents) that were running, one per line (`\t\tTest/Sub (9m53s)`). Those
//! tests count as FAIL and go to [`ParsedLog::timed_out`] under the package of the summary line
//! that follows, as every other result of the block does. Without the list (older Go) the tests
//! that were running without a result when the package failed are the ones the timeout killed.

use std::collections::{BTreeMap, BTreeSet};

use swe_forge_core::TestStatus;

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

/// `\t\tTest/Sub (9m53s)` of a `running tests:` list: the test name. The line is indented and
/// holds the name, a space and a Go duration in parentheses.
fn running_test(line: &str) -> Option<&str> {
    if !line.starts_with(['\t', ' ']) {
        return None;
    }
    let (name, duration) = line.trim().rsplit_once(" (")?;
    let duration = duration.strip_suffix(')')?;
    let is_duration = duration.ends_with('s')
        && duration.starts_with(|c: char| c.is_ascii_digit())
        && duration.chars().all(|c| c.is_ascii_digit() || matches!(c, '.' | 'h' | 'm' | 's' | 'µ' | 'u' | 'n'));
    (is_duration && !name.is_empty() && !name.contains(char::is_whitespace)).then_some(name)
}

/// What a package's output says about go test's own timeout: the `panic: test timed out after
/// …` line and the `running tests:` list after it. Fed every output line of one package.
#[derive(Default)]
pub(crate) struct Timeout {
    /// The `after …` text of the panic (`10m0s`), once the panic line was seen.
    pub(crate) after: Option<String>,
    /// The tests listed as running when the timeout fired.
    pub(crate) running: BTreeSet<String>,
    /// Where in the block the next line is.
    state: TimeoutState,
}

#[derive(Default, Clone, Copy, PartialEq, Eq)]
enum TimeoutState {
    /// Not inside a timeout block.
    #[default]
    Idle,
    /// Right after the panic line: `running tests:` may follow.
    Panicked,
    /// Inside the `running tests:` list.
    Listing,
}

impl Timeout {
    /// Reads one output line; returns the test name when the line lists a running test.
    pub(crate) fn line<'a>(&mut self, line: &'a str) -> Option<&'a str> {
        match self.state {
            TimeoutState::Listing => {
                if let Some(name) = running_test(line) {
                    self.running.insert(name.to_owned());
                    return Some(name);
                }
                self.state = TimeoutState::Idle;
            }
            TimeoutState::Panicked if line.trim() == "running tests:" => {
                self.state = TimeoutState::Listing;
                return None;
            }
            TimeoutState::Panicked | TimeoutState::Idle => self.state = TimeoutState::Idle,
        }
        if let Some(after) = line.trim().strip_prefix("panic: test timed out after ") {
            self.after = Some(after.trim().to_owned());
            self.state = TimeoutState::Panicked;
        }
        None
    }

    /// Whether a line may belong to a timeout block (a cheap test before [`Timeout::line`]).
    pub(crate) fn wants(&self, line: &str) -> bool {
        self.state != TimeoutState::Idle || line.trim_start().starts_with("panic: test timed out")
    }

    /// Whether `test`, running without a result in a package that ended as `pkg_result`, was
    /// killed by the timeout: listed as running, or, when the panic printed no list (older
    /// Go), running in a package that failed.
    pub(crate) fn killed(&self, test: &str, running: bool, pkg_result: Option<TestStatus>) -> bool {
        running
            && (self.running.contains(test)
                || (self.after.is_some() && self.running.is_empty() && pkg_result == Some(TestStatus::Fail)))
    }

    /// The warning for the tests in `killed` (names), when there are any.
    pub(crate) fn warning(&self, pkg: &str, killed: &[&str]) -> Option<String> {
        if killed.is_empty() {
            return None;
        }
        Some(format!(
            "package {pkg}: go test's timeout (test timed out after {}) killed {} running test(s) ({}); counted as FAIL",
            self.after.as_deref().unwrap_or("?"),
            killed.len(),
            list(killed)
        ))
    }
}

/// Line-by-line state: results not yet attributed to a package.
#[derive(Default)]
pub(crate) struct Parser {
    parsed: Recorder,
    pending: BTreeMap<String, TestState>,
    /// The timeout block of the pending output, if any.
    timeout: Timeout,
}

impl Parser {
    /// Attributes the pending tests to `pkg`, whose own result is `pkg_result`.
    fn flush(&mut self, pkg: &str, pkg_result: Option<TestStatus>) {
        let timeout = std::mem::take(&mut self.timeout);
        let mut killed = Vec::new();
        let mut crashed = Vec::new();
        let mut unfinished = Vec::new();
        for (test, state) in std::mem::take(&mut self.pending) {
            let status = if timeout.killed(&test, state.running, pkg_result) {
                self.parsed.timed_out.insert(format!("{pkg}::{test}"));
                killed.push(test.clone());
                Some(TestStatus::Fail)
            } else if state.running && pkg_result == Some(TestStatus::Fail) {
                crashed.push(test.clone());
                Some(TestStatus::Fail)
            } else {
                if state.running && state.status.is_none() {
                    unfinished.push(test.clone());
                }
                state.status
            };
            if let Some(status) = status {
                self.parsed.record(format!("{pkg}::{test}"), Some(test), status);
            }
        }
        let names: Vec<&str> = killed.iter().map(String::as_str).collect();
        if let Some(warning) = timeout.warning(pkg, &names) {
            self.parsed.warnings.push(warning);
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
        if self.timeout.wants(line)
            && let Some(name) = self.timeout.line(line)
        {
            match self.pending.get_mut(name) {
                Some(state) => state.running = true,
                None => self.pending.entry(name.to_owned()).or_default().running = true,
            }
            return;
        }
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
                    self.parsed.build_failed(format!("package {pkg}: {what} failed; none of its tests ran"));
                    self.flush(pkg, Some(TestStatus::Fail));
                }
                Summary::NoTestFiles => {}
            }
        }
    }

    fn first_byte(&self) -> Option<crate::text::FirstByte> {
        // `p`anic and `r`unning tests: of a timeout, and the tests it lists (`T`est, `F`uzz,
        // `B`enchmark, `E`xample).
        Some(|b| matches!(b, b'=' | b'-' | b'o' | b'F' | b'?' | b'p' | b'r' | b'T' | b'B' | b'E'))
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
