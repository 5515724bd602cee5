//! ctest targets whose program prints TAP, read at the grain of its tests. A C project's own
//! runner registered as one ctest target (libuv's `uv_run_tests` prints `1..N`, then `ok 1 -
//! tcp_ping_pong` or `not ok 2 - … # SKIP …` per test) is one result for hundreds of tests;
//! ctest's JUnit report (`ctest.xml`, written with `--output-junit`, each target's output in its
//! `<system-out>`: the `c-cmake` recipe raises ctest's output limits so that a passing target's
//! is kept whole) holds those lines.
//!
//! Rules of [`ParsedLog::read_target_tap`]: a target whose output has a TAP plan (`1..N`) and at
//! least one TAP result gives way to those results, `<target>::<TAP id>` (the `tap` parser's id);
//! a FAIL target none of whose TAP results failed keeps its FAIL beside them (a crash after the
//! last result). Multi-SWE-bench name: the id.

use std::collections::BTreeMap;

use quick_xml::events::Event;
use swe_forge_core::{Framework, TestStatus};

use crate::ParsedLog;
use crate::ctest_cases::Regrained;

/// File of the results directory holding ctest's JUnit report.
pub const CTEST_JUNIT: &str = "ctest.xml";

/// Each `<testcase>` name of a ctest JUnit report with the text of its `<system-out>`.
fn target_outputs(xml: &[u8]) -> BTreeMap<String, String> {
    let mut reader = quick_xml::Reader::from_reader(xml);
    let config = reader.config_mut();
    config.check_end_names = false;
    config.allow_unmatched_ends = true;
    let (mut out, mut buf) = (BTreeMap::new(), Vec::new());
    let (mut case, mut in_out): (Option<String>, bool) = (None, false);
    loop {
        buf.clear();
        match reader.read_event_into(&mut buf) {
            Ok(Event::Eof) | Err(_) => break,
            Ok(Event::Start(e)) if e.local_name().as_ref() == b"testcase" => {
                case = e
                    .attributes()
                    .flatten()
                    .find(|a| a.key.as_ref() == b"name")
                    .map(|a| String::from_utf8_lossy(&a.value).into_owned());
            }
            Ok(Event::Start(e)) if e.local_name().as_ref() == b"system-out" => in_out = case.is_some(),
            Ok(Event::End(e)) if e.local_name().as_ref() == b"system-out" => in_out = false,
            Ok(Event::End(e)) if e.local_name().as_ref() == b"testcase" => case = None,
            Ok(Event::Text(t)) if in_out => push(&mut out, &case, &String::from_utf8_lossy(&t)),
            Ok(Event::CData(t)) if in_out => push(&mut out, &case, &String::from_utf8_lossy(&t)),
            // `&amp;` and the like come as references of their own.
            Ok(Event::GeneralRef(r)) if in_out => {
                let name = String::from_utf8_lossy(&r).into_owned();
                let text = match quick_xml::escape::unescape(&format!("&{name};")) {
                    Ok(t) => t.into_owned(),
                    Err(_) => format!("&{name};"),
                };
                push(&mut out, &case, &text);
            }
            Ok(_) => {}
        }
    }
    out
}

/// Appends `text` to the output of target `case`.
fn push(out: &mut BTreeMap<String, String>, case: &Option<String>, text: &str) {
    out.entry(case.clone().unwrap_or_default()).or_default().push_str(text);
}

/// Whether `text` has a TAP plan line (`1..N`).
fn has_plan(text: &str) -> bool {
    text.lines().any(|l| {
        l.trim().strip_prefix("1..").is_some_and(|n| {
            n.split_whitespace().next().is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()) && !n.is_empty())
        })
    })
}

impl ParsedLog {
    /// Replaces the ctest targets of this parse whose output in `ctest.xml` (among `files`, the
    /// run's result files) is TAP by the TAP results, by the rules of the module doc; a warning
    /// says how many.
    pub fn read_target_tap(&mut self, files: &[(String, Vec<u8>)]) {
        let Some((_, xml)) = files.iter().find(|(path, _)| path == CTEST_JUNIT) else { return };
        let mut r = Regrained::default();
        for (target, output) in target_outputs(xml) {
            let Some(status) = self.tests.get(&target).copied() else { continue };
            if !has_plan(&output) {
                continue;
            }
            let tap = crate::parse(Framework::Tap, output.as_bytes());
            if tap.tests.is_empty() {
                continue;
            }
            let a_case_failed = tap.tests.values().any(|s| *s == TestStatus::Fail);
            self.give_way(&target, status, a_case_failed, &mut r);
            for (id, s) in tap.tests {
                self.add_case(format!("{target}::{id}"), s, &mut r);
            }
        }
        self.note_regrained(r, &format!("of the TAP they printed ({CTEST_JUNIT})"), "the test case(s) of their TAP");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ctest 3.31's `--output-junit` report of two targets: a TAP runner (as libuv's prints) and
    /// a plain test.
    const XML: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="Linux-cc" tests="2" failures="1" disabled="0" skipped="0" hostname="h" time="0" timestamp="2026-12-07T17:21:10">
	<testcase name="uv_test" classname="uv_test" time="0.5" status="fail">
		<failure message="Failed"/>
		<properties/>
		<system-out>1..3
ok 1 - tcp_ping_pong
not ok 2 - udp_send &amp; receive
# exit code 6
ok 3 - fs_poll # SKIP no inotify
</system-out>
	</testcase>
	<testcase name="plain" classname="plain" time="0.1" status="run">
		<properties/>
		<system-out>all good
ok so far
</system-out>
	</testcase>
</testsuite>
"#;

    #[test]
    fn a_target_that_prints_tap_gives_way_to_its_results() {
        let mut p = ParsedLog {
            tests: [("uv_test".to_owned(), TestStatus::Fail), ("plain".to_owned(), TestStatus::Pass)].into(),
            ..ParsedLog::default()
        };
        p.read_target_tap(&[(CTEST_JUNIT.to_owned(), XML.as_bytes().to_vec())]);
        let got: Vec<(&str, TestStatus)> = p.tests.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        assert_eq!(
            got,
            [
                ("plain", TestStatus::Pass),
                ("uv_test::fs_poll", TestStatus::Skip),
                ("uv_test::tcp_ping_pong", TestStatus::Pass),
                ("uv_test::udp_send & receive", TestStatus::Fail),
            ]
        );
        assert!(
            p.warnings[0].starts_with("1 ctest target(s) read as the 3 test case(s) of the TAP"),
            "{:?}",
            p.warnings
        );
        // Without ctest's report, or a plan, nothing changes.
        let before = p.clone();
        p.read_target_tap(&[]);
        assert_eq!(p, before);
        assert!(!has_plan("ok 1 - a\n1..x\n") && has_plan("  1..12\n"));
    }
}
