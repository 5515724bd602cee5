//! ctest targets read at the grain of the test cases their binaries ran. A suite registered
//! as one ctest target (`add_test(NAME unit COMMAND unit_tests)`) is one result for hundreds of
//! cases; run under `GTEST_OUTPUT=xml:<results>/gtest/` every gtest binary ctest starts writes
//! its own report, `gtest/<binary>.xml` (`<binary>_1.xml`, `_2.xml`, … when one binary runs
//! again, as `gtest_discover_tests` does once per case); Catch2 and doctest read no reporter from
//! the environment, so the `c-cmake` recipe's test launcher (CMake 3.29's `CMAKE_TEST_LAUNCHER`)
//! adds their JUnit reporter to a binary ctest starts without
//! options and names the report `cases/<binary>.xml` the same way. `ctest --show-only=json-v1`
//! saved as `ctest-tests.json` says which binary each target runs.
//!
//! Rules of [`ParsedLog::read_binary_cases`]:
//! - A target whose binary (any word of its command, by file name) wrote a report gives way to
//!   the cases of that binary's reports: `<Suite>.<Test>` as `gtest-xml` names them, the test
//!   case as `catch2-junit` names it (Catch2's and doctest's JUnit), the worst
//!   status when a case is reported twice. Multi-SWE-bench name: the case's id (its handlers,
//!   which read ctest's lines only, name the target instead).
//! - A target whose binary wrote no report keeps its own id and status: a binary that crashed
//!   before writing its report, or one that is not a gtest binary.
//! - A target that failed while its binary's reports hold no failed case keeps its FAIL beside
//!   the cases: the failure is one no case reports (a crash in one of `gtest_discover_tests`'
//!   runs, a failure after the last case).
//! - Testcases without a `status` are gtest's listing (`--gtest_list_tests`, which
//!   `gtest_discover_tests` runs under ctest in `PRE_TEST` mode), not results: ignored.

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;
use swe_forge_core::{Framework, TestStatus};

use crate::{ParsedLog, junit, list, worst};

/// Folder of the results directory the gtest binaries write their reports into.
pub const GTEST_RESULTS_DIR: &str = "gtest/";
/// Folder of the results directory the test launcher has Catch2 and doctest binaries write their
/// JUnit reports into.
pub const CASES_RESULTS_DIR: &str = "cases/";
/// Each folder of per-binary reports and the dialect its reports are read in.
const REPORT_DIRS: [(&str, Framework); 2] =
    [(GTEST_RESULTS_DIR, Framework::GtestXml), (CASES_RESULTS_DIR, Framework::Catch2Junit)];
/// File of the results directory holding `ctest --show-only=json-v1`.
pub const CTEST_TESTS_JSON: &str = "ctest-tests.json";

#[derive(Deserialize)]
struct CtestInfo {
    #[serde(default)]
    tests: Vec<CtestTest>,
}

#[derive(Deserialize)]
struct CtestTest {
    name: String,
    #[serde(default)]
    command: Vec<String>,
}

/// The file name of a path, without a Windows `.exe`.
fn base_name(path: &str) -> &str {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    name.strip_suffix(".exe").unwrap_or(name)
}

/// The binary a report `<stem>.xml` belongs to among `binaries`: `<binary>` or `<binary>_<N>`.
fn binary_of<'a>(stem: &str, binaries: &BTreeSet<&'a str>) -> Option<&'a str> {
    if let Some(b) = binaries.get(stem) {
        return Some(b);
    }
    let (head, n) = stem.rsplit_once('_')?;
    (!n.is_empty() && n.bytes().all(|c| c.is_ascii_digit())).then(|| binaries.get(head).copied()).flatten()
}

/// Words of every warning of [`ParsedLog::read_binary_cases`] that says at which grain a run was
/// read, which a validation keeps in the record.
const GRAIN_NOTE: &str = "test case(s)";

/// Whether `warning` is one of [`ParsedLog::read_binary_cases`]' notes on the grain a run was
/// read at (targets read as cases, failed targets kept beside them).
pub fn is_grain_note(warning: &str) -> bool {
    warning.contains(GRAIN_NOTE)
}

impl ParsedLog {
    /// Replaces the ctest targets of this parse (a `ctest` or `ctest-junit` one) by the
    /// test cases their binaries reported in `files` (the run's result files: GoogleTest's,
    /// Catch2's and doctest's reports), by the rules of the module doc; a warning says how many.
    /// Without reports, or without `ctest-tests.json` to tie them to targets, the parse stays as
    /// it is.
    pub fn read_binary_cases(&mut self, files: &[(String, Vec<u8>)]) {
        let reports: Vec<(&str, &[u8], Framework)> = files
            .iter()
            .filter_map(|(path, bytes)| {
                let (dir, framework) = REPORT_DIRS.iter().find(|(dir, _)| path.starts_with(dir))?;
                let stem = path[dir.len()..].strip_suffix(".xml")?;
                (!stem.contains('/')).then_some((stem, &bytes[..], *framework))
            })
            .collect();
        if reports.is_empty() {
            return;
        }
        let Some(info) = files
            .iter()
            .find(|(path, _)| path == CTEST_TESTS_JSON)
            .and_then(|(_, bytes)| serde_json::from_slice::<CtestInfo>(bytes).ok())
        else {
            self.warnings.push(format!(
                "{} test case report(s) but no readable {CTEST_TESTS_JSON} to tie them to ctest targets; the targets are kept",
                reports.len()
            ));
            return;
        };
        let binaries: BTreeSet<&str> =
            info.tests.iter().flat_map(|t| t.command.iter().map(|w| base_name(w))).filter(|b| !b.is_empty()).collect();
        // Each binary's cases, from all its reports.
        let mut by_binary: BTreeMap<&str, junit::Parser> = BTreeMap::new();
        let mut stray = Vec::new();
        for (stem, bytes, framework) in &reports {
            match binary_of(stem, &binaries) {
                Some(b) => by_binary.entry(b).or_insert_with(|| junit::Parser::new(*framework)).read(*bytes),
                None => stray.push(*stem),
            }
        }
        let cases: BTreeMap<&str, ParsedLog> =
            by_binary.into_iter().map(|(b, p)| (b, p.finish())).filter(|(_, p)| !p.tests.is_empty()).collect();
        let mut r = Regrained::default();
        let mut used = BTreeSet::new();
        for t in &info.tests {
            let Some(status) = self.tests.get(&t.name).copied() else { continue };
            let mine: Vec<&str> = t.command.iter().map(|w| base_name(w)).filter(|b| cases.contains_key(b)).collect();
            if mine.is_empty() {
                continue;
            }
            used.extend(mine.iter().copied());
            let a_case_failed = mine.iter().any(|b| cases[b].tests.values().any(|s| *s == TestStatus::Fail));
            self.give_way(&t.name, status, a_case_failed, &mut r);
        }
        for b in &used {
            let p = &cases[b];
            for (id, s) in &p.tests {
                self.add_case(id.clone(), *s, &mut r);
            }
            self.warnings.extend(p.warnings.iter().map(|w| format!("{b}: {w}")));
        }
        self.note_regrained(
            r,
            &format!("their binaries reported ({GTEST_RESULTS_DIR}*.xml, {CASES_RESULTS_DIR}*.xml)"),
            &format!("their binary's {GRAIN_NOTE}"),
        );
        if !stray.is_empty() {
            self.warnings.push(format!(
                "{} test case report(s) of no ctest target's binary, left out: {}",
                stray.len(),
                list(&stray)
            ));
        }
    }
}

/// What reading ctest targets at the grain of their cases did, for its warnings.
#[derive(Default)]
pub(crate) struct Regrained {
    /// Targets that gave way to their cases.
    replaced: Vec<String>,
    /// Failed targets none of whose cases failed, kept beside them.
    kept_failed: Vec<String>,
    /// Cases added.
    cases: usize,
}

impl ParsedLog {
    /// Target `target` (of status `status`) gives way to its cases, unless it failed where none
    /// of them did (`a_case_failed` false): a failure no case reports, kept beside them.
    pub(crate) fn give_way(&mut self, target: &str, status: TestStatus, a_case_failed: bool, r: &mut Regrained) {
        if status == TestStatus::Fail && !a_case_failed {
            r.kept_failed.push(target.to_owned());
        } else {
            self.tests.remove(target);
            self.msb_names.remove(target);
            r.replaced.push(target.to_owned());
        }
    }

    /// Adds case `id` (its own Multi-SWE-bench name), the worst status when it is there already.
    pub(crate) fn add_case(&mut self, id: String, status: TestStatus, r: &mut Regrained) {
        r.cases += 1;
        let merged = self.tests.get(&id).map_or(status, |old| worst(*old, status));
        self.tests.insert(id.clone(), merged);
        self.msb_names.entry(id.clone()).or_insert(id);
    }

    /// The warnings of `r`: `from` says where the cases came from, `whose` names the cases none
    /// of which failed beside a failed target.
    pub(crate) fn note_regrained(&mut self, r: Regrained, from: &str, whose: &str) {
        if !r.replaced.is_empty() {
            let names: Vec<&str> = r.replaced.iter().map(String::as_str).collect();
            self.warnings.push(format!(
                "{} ctest target(s) read as the {} {GRAIN_NOTE} {from}: {}",
                names.len(),
                r.cases,
                list(&names)
            ));
        }
        if !r.kept_failed.is_empty() {
            let names: Vec<&str> = r.kept_failed.iter().map(String::as_str).collect();
            self.warnings.push(format!(
                "{} ctest target(s) failed where none of {whose} failed (a crash?); kept as targets: {}",
                names.len(),
                list(&names)
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use TestStatus::*;

    const JSON: &str = r#"{"kind":"ctestInfo","version":{"major":1,"minor":0},"tests":[
        {"name":"unit","command":["/testbed/build/unit_tests"]},
        {"name":"crashy","command":["/testbed/build/crash_tests","--flag"]},
        {"name":"script","command":["/bin/sh","/testbed/check.sh"]}]}"#;

    fn report(cases: &[(&str, &str, bool)]) -> Vec<u8> {
        let mut s = String::from("<?xml version=\"1.0\"?>\n<testsuites name=\"AllTests\">\n");
        for (suite, name, ok) in cases {
            s.push_str(&format!(
                "<testsuite name=\"{suite}\"><testcase name=\"{name}\" status=\"run\" result=\"completed\" classname=\"{suite}\">{}</testcase></testsuite>\n",
                if *ok { "" } else { "<failure message=\"no\"/>" }
            ));
        }
        s.push_str("</testsuites>\n");
        s.into_bytes()
    }

    fn targets(items: &[(&str, TestStatus)]) -> ParsedLog {
        ParsedLog {
            tests: items.iter().map(|(n, s)| (n.to_string(), *s)).collect(),
            msb_names: items.iter().map(|(n, _)| (n.to_string(), n.to_string())).collect(),
            ..ParsedLog::default()
        }
    }

    fn file(path: &str, bytes: Vec<u8>) -> (String, Vec<u8>) {
        (path.to_owned(), bytes)
    }

    #[test]
    fn a_target_gives_way_to_the_cases_its_binary_reported() {
        let mut p = targets(&[("unit", Fail), ("crashy", Fail), ("script", Pass)]);
        let files = [
            file("ctest.xml", Vec::new()),
            file(CTEST_TESTS_JSON, JSON.as_bytes().to_vec()),
            file("gtest/unit_tests.xml", report(&[("Math", "Adds", true), ("Math", "Subtracts", false)])),
            // A second run of the same binary (gtest numbers the file): its cases join.
            file("gtest/unit_tests_1.xml", report(&[("Other", "Works", true)])),
        ];
        p.read_binary_cases(&files);
        let got: Vec<(&str, TestStatus)> = p.tests.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        // crash_tests wrote no report (crashed before its end): the target stays, as does the
        // script that is no gtest binary.
        assert_eq!(
            got,
            [("Math.Adds", Pass), ("Math.Subtracts", Fail), ("Other.Works", Pass), ("crashy", Fail), ("script", Pass)]
        );
        assert_eq!(p.msb_names.get("Math.Adds").map(String::as_str), Some("Math.Adds"));
        assert!(!p.msb_names.contains_key("unit"));
        assert!(
            p.warnings.iter().any(|w| w.contains("1 ctest target(s) read as the 3 test case(s)")),
            "{:?}",
            p.warnings
        );
    }

    #[test]
    fn catch2_and_doctest_reports_name_their_test_cases() {
        let json = r#"{"tests":[{"name":"utests","command":["/b/tests/catch_tests"]},
            {"name":"doc","command":["/b/doc_tests"]}]}"#;
        let mut p = targets(&[("utests", Fail), ("doc", Pass)]);
        // Catch2 3's report (as Debian's catch2 3.7 writes it): a section after the case's `/`.
        let catch2 = br#"<?xml version="1.0" encoding="UTF-8"?>
<testsuites><testsuite name="catch_tests" errors="0" failures="1" skipped="0" tests="2">
<testcase classname="catch_tests.global" name="adds numbers" time="0.000" status="run"/>
<testcase classname="catch_tests.global" name="fails here/inner" time="0.000" status="run">
<failure message="1 == 2" type="REQUIRE">FAILED</failure></testcase>
</testsuite></testsuites>"#;
        // Catch2 2 writes no `status`; doctest writes `status="run"`.
        let catch2_v2 = br#"<testsuites><testsuite name="catch_tests"><testcase classname="catch_tests.global" name="logs" time="0.1"/></testsuite></testsuites>"#;
        let doctest = br#"<testsuites><testsuite name="doc_tests"><testcase classname="a.cpp" name="parses" status="run"/></testsuite></testsuites>"#;
        let files = [
            file(CTEST_TESTS_JSON, json.as_bytes().to_vec()),
            file("cases/catch_tests.xml", catch2.to_vec()),
            file("cases/catch_tests_1.xml", catch2_v2.to_vec()),
            file("cases/doc_tests.xml", doctest.to_vec()),
        ];
        p.read_binary_cases(&files);
        let got: Vec<(&str, TestStatus)> = p.tests.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        assert_eq!(got, [("adds numbers", Pass), ("fails here", Fail), ("logs", Pass), ("parses", Pass)]);
        assert!(
            p.warnings.iter().any(|w| w.contains("2 ctest target(s) read as the 4 test case(s)")),
            "{:?}",
            p.warnings
        );
        // The ctest-junit parse of the same files never takes a case report for ctest's own.
        let ctest = crate::parse_files(Framework::CtestJunit, &files);
        assert!(ctest.tests.is_empty(), "{:?}", ctest.tests);
    }

    #[test]
    fn a_failed_target_whose_cases_all_passed_stays_beside_them() {
        // gtest_discover_tests: one target per case, each a run of the same binary; the run of
        // `Math.Crashes` crashed and wrote nothing.
        let json = r#"{"tests":[{"name":"Math.Adds","command":["/b/unit_tests","--gtest_filter=Math.Adds"]},
            {"name":"Math.Crashes","command":["/b/unit_tests","--gtest_filter=Math.Crashes"]}]}"#;
        let mut p = targets(&[("Math.Adds", Pass), ("Math.Crashes", Fail)]);
        let listing = b"<testsuites tests=\"2\" name=\"AllTests\"><testsuite name=\"Math\" tests=\"2\">\
            <testcase name=\"Adds\" file=\"a.cpp\" line=\"3\" /><testcase name=\"Crashes\" file=\"a.cpp\" line=\"5\" />\
            </testsuite></testsuites>";
        let files = [
            file(CTEST_TESTS_JSON, json.as_bytes().to_vec()),
            // The PRE_TEST listing gtest_discover_tests runs under ctest: no results.
            file("gtest/unit_tests.xml", listing.to_vec()),
            file("gtest/unit_tests_1.xml", report(&[("Math", "Adds", true)])),
        ];
        p.read_binary_cases(&files);
        let got: Vec<(&str, TestStatus)> = p.tests.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        assert_eq!(got, [("Math.Adds", Pass), ("Math.Crashes", Fail)]);
        assert!(p.warnings.iter().any(|w| w.contains("kept as targets: Math.Crashes")), "{:?}", p.warnings);
    }

    #[test]
    fn without_the_target_list_or_reports_nothing_changes() {
        let before = targets(&[("unit", Pass)]);
        let mut p = before.clone();
        p.read_binary_cases(&[file("ctest.xml", Vec::new())]);
        assert_eq!(p, before);
        p.read_binary_cases(&[file("gtest/unit_tests.xml", report(&[("Math", "Adds", true)]))]);
        assert_eq!(p.tests, before.tests);
        assert!(p.warnings[0].contains("no readable ctest-tests.json"), "{:?}", p.warnings);
    }

    #[test]
    fn report_files_belong_to_a_binary_by_name_or_numbered_name() {
        let bins: BTreeSet<&str> = ["unit_tests", "a_2"].into_iter().collect();
        assert_eq!(binary_of("unit_tests", &bins), Some("unit_tests"));
        assert_eq!(binary_of("unit_tests_12", &bins), Some("unit_tests"));
        assert_eq!(binary_of("a_2", &bins), Some("a_2"));
        assert_eq!(binary_of("unit_tests_x", &bins), Option::None);
        assert_eq!(base_name("C:\\b\\t.exe"), "t");
    }
}
