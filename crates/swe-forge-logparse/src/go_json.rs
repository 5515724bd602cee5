//! The `go test -json` parser: one JSON event per line (`Action`, `Package`, `Test`, `Output`,
//! `FailedBuild`, ...), other lines ignored. Canonical id `<Package>::<Test>` (subtests keep
//! their `/sub` path); Multi-SWE-bench name = the bare test name (`TestA/case`), as most of
//! that harness's Go handlers record it ([`crate::ParsedLog::name_go_subtests`] applies the rule
//! of the repositories whose handler drops the last `/` level).
//!
//! A test's status is its last `pass`/`fail`/`skip` event. A test still running when the log
//! ends (its `run` not followed by a terminal action) is FAIL when its package reported `fail`
//! (panic, timeout, `os.Exit`), otherwise left out. Build failures of a package (a `fail`
//! action with `FailedBuild`, or `FAIL pkg [build failed]` output) produce a warning only.
//!
//! go test's own timeout arrives as `output` events of the package (test2json files them under
//! the last test it saw start): `panic: test timed out after 10m0s`, `\trunning tests:`, then
//! one `\t\t<Test> (<duration>)` per running test. The tests listed count as FAIL and go to
//! [`ParsedLog::timed_out`]; without a list (older Go), the tests of a failed package that were
//! still running. The block is read by `go_verbose::Timeout`, as in the text parser.

use std::collections::BTreeMap;
use std::io::BufRead;

use serde::Deserialize;
use swe_forge_core::TestStatus;

use crate::go_verbose::Timeout;
use crate::{ParsedLog, Recorder, list, text};

/// The fields of a test2json event this parser reads; others are ignored.
#[derive(Deserialize)]
struct Event {
    #[serde(rename = "Action")]
    action: String,
    #[serde(rename = "Package", default)]
    package: Option<String>,
    #[serde(rename = "Test", default)]
    test: Option<String>,
    #[serde(rename = "Output", default)]
    output: Option<String>,
    #[serde(rename = "FailedBuild", default)]
    failed_build: Option<String>,
    #[serde(rename = "ImportPath", default)]
    import_path: Option<String>,
}

/// Whether `line` (already cleaned) is a test2json event.
pub(crate) fn is_event(line: &str) -> bool {
    let line = line.trim();
    line.starts_with('{')
        && serde_json::from_str::<Event>(line).is_ok_and(|e| e.package.is_some() || e.import_path.is_some())
}

#[derive(Default)]
struct TestState {
    /// A `run` was seen and no terminal action after it.
    running: bool,
    /// The last terminal action.
    status: Option<TestStatus>,
}

#[derive(Default)]
struct Package {
    tests: BTreeMap<String, TestState>,
    /// The package's own terminal action.
    result: Option<TestStatus>,
    /// Why the build failed, when it did.
    build_failed: Option<String>,
    /// go test's timeout, when its panic was printed.
    timeout: Timeout,
}

fn terminal(action: &str) -> Option<TestStatus> {
    match action {
        "pass" => Some(TestStatus::Pass),
        "fail" => Some(TestStatus::Fail),
        "skip" => Some(TestStatus::Skip),
        _ => None,
    }
}

/// `FAIL\t<pkg> [build failed]` (or `[setup failed]`): the package name.
fn build_failure_line(line: &str) -> Option<(&str, &str)> {
    let rest = line.trim().strip_prefix("FAIL")?;
    if !rest.starts_with(char::is_whitespace) {
        return None;
    }
    let mut words = rest.split_whitespace();
    let pkg = words.next()?;
    let reason = words.next()?;
    (reason == "[build" || reason == "[setup").then_some((pkg, reason.trim_start_matches('[')))
}

pub(crate) fn parse(reader: impl BufRead) -> ParsedLog {
    let mut packages: BTreeMap<String, Package> = BTreeMap::new();
    let mut malformed = 0usize;
    let read_warnings = text::for_each_line(reader, |line| event_line(line, &mut packages, &mut malformed));
    let mut parsed = report(packages);
    if malformed > 0 {
        parsed.warnings.push(format!("{malformed} line(s) looked like test2json events but did not parse"));
    }
    parsed.warnings.extend(read_warnings);
    parsed
}

fn event_line(line: &str, packages: &mut BTreeMap<String, Package>, malformed: &mut usize) {
    let line = line.trim();
    if !line.starts_with('{') {
        if let Some((pkg, what)) = build_failure_line(line) {
            packages.entry(pkg.to_owned()).or_default().build_failed.get_or_insert_with(|| format!("{what} failed"));
        }
        return;
    }
    let event: Event = match serde_json::from_str(line) {
        Ok(e) => e,
        Err(_) => {
            if line.contains("\"Action\"") {
                *malformed += 1;
            }
            return;
        }
    };
    let Some(pkg_name) = event.package.filter(|p| !p.is_empty()) else {
        // `build-output` / `build-fail` events carry `ImportPath` only; the package's own
        // `fail` event with `FailedBuild` follows and is what we report.
        return;
    };
    let pkg = packages.entry(pkg_name).or_default();
    // The timeout's panic is output of whichever test test2json saw last, or of the package.
    if event.action == "output"
        && let Some(out) = &event.output
    {
        let out = out.trim_end_matches(['\n', '\r']);
        if pkg.timeout.wants(out)
            && let Some(name) = pkg.timeout.line(out)
        {
            pkg.tests.entry(name.to_owned()).or_default().running = true;
        }
    }
    match event.test.filter(|t| !t.is_empty()) {
        Some(test) => {
            if event.action == "run" {
                pkg.tests.entry(test).or_default().running = true;
            } else if let Some(status) = terminal(&event.action) {
                let state = pkg.tests.entry(test).or_default();
                state.running = false;
                state.status = Some(status);
            }
        }
        None => {
            if let Some(status) = terminal(&event.action) {
                pkg.result = Some(status);
                if let Some(dep) = event.failed_build.filter(|d| !d.is_empty()) {
                    pkg.build_failed = Some(format!("build of {dep} failed"));
                }
            } else if event.action == "output"
                && let Some(out) = event.output
                && let Some((_, what)) = build_failure_line(&out)
            {
                pkg.build_failed.get_or_insert_with(|| format!("{what} failed"));
            }
        }
    }
}

fn report(packages: BTreeMap<String, Package>) -> ParsedLog {
    let mut parsed = Recorder::default();
    for (pkg_name, pkg) in packages {
        let mut killed = Vec::new();
        let mut crashed = Vec::new();
        let mut unfinished = Vec::new();
        for (test, state) in &pkg.tests {
            let status = if pkg.timeout.killed(test, state.running, pkg.result) {
                parsed.timed_out.insert(format!("{pkg_name}::{test}"));
                killed.push(test.as_str());
                Some(TestStatus::Fail)
            } else if state.running {
                if pkg.result == Some(TestStatus::Fail) {
                    crashed.push(test.as_str());
                    Some(TestStatus::Fail)
                } else {
                    if state.status.is_none() {
                        unfinished.push(test.as_str());
                    }
                    state.status
                }
            } else {
                state.status
            };
            if let Some(status) = status {
                parsed.record(format!("{pkg_name}::{test}"), Some(test.clone()), status);
            }
        }
        if let Some(why) = &pkg.build_failed {
            parsed.build_failed(format!("package {pkg_name}: {why}; none of its tests ran"));
        } else if pkg.result == Some(TestStatus::Fail) && pkg.tests.is_empty() {
            parsed.warnings.push(format!(
                "package {pkg_name} failed without reporting any test (setup, TestMain or init failure?)"
            ));
        }
        if let Some(warning) = pkg.timeout.warning(&pkg_name, &killed) {
            parsed.warnings.push(warning);
        }
        if !crashed.is_empty() {
            parsed.warnings.push(format!(
                "package {pkg_name} failed while {} test(s) had no result ({}); counted as FAIL",
                crashed.len(),
                list(&crashed)
            ));
        }
        if !unfinished.is_empty() {
            let why = if pkg.result.is_none() { " never finished (log truncated?)" } else { "" };
            parsed.warnings.push(format!(
                "package {pkg_name}{why}: {} started test(s) without result left out ({})",
                unfinished.len(),
                list(&unfinished)
            ));
        }
    }
    parsed.into_parsed()
}
