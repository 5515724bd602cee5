//! Format detection: scores each line by the formats that would print it and picks the format
//! with the highest score. Summary or header lines that only one runner prints score high, so
//! an outer runner wins over the output of the tests it ran (ctest over gtest lines). XML
//! reports are told apart by their root and attributes. test2json events win ties over
//! `go test -v` text (a `go test -json` log also carries `-v` text inside JSON strings).

use crate::{
    Framework, automake, cargo_libtest, catch2_text, ctest, go_json, go_verbose, gtest, jest_json, jest_text,
    libtest_json, mocha_text, node_spec, surefire, tap, text, vitest_text,
};

/// How far into the log XML markers are looked for.
const XML_PREFIX: usize = 64 << 10;

pub(crate) fn detect(log: &str) -> Option<Framework> {
    if let Some(fw) = detect_xml(log) {
        return Some(fw);
    }
    let mut scores: Vec<(Framework, u64)> = Framework::ALL.iter().map(|f| (*f, 0)).collect();
    let mut add = |fw: Framework, n: u64| {
        if let Some(s) = scores.iter_mut().find(|(f, _)| *f == fw) {
            s.1 += n;
        }
    };
    let mut after_brace = false;
    for line in log.split('\n') {
        let line = text::clean_line(line);
        let line = line.trim_end();
        let trimmed = line.trim_start();
        if trimmed.starts_with('{') {
            add(Framework::GoTestJson, u64::from(go_json::is_event(trimmed)));
            // Above cargo's `Running` headers, which a libtest JSON log also holds.
            add(Framework::LibtestJson, u64::from(libtest_json::is_event(trimmed)) * 2);
            match jest_json::signature(trimmed) {
                Some(true) => add(Framework::JestJson, 10_000),
                Some(false) => add(Framework::VitestJson, 10_000),
                None => {}
            }
            after_brace = trimmed == "{";
            continue;
        }
        if after_brace && trimmed.starts_with("\"stats\": {") {
            add(Framework::MochaJson, 10_000);
        }
        after_brace = false;
        if go_verbose::result(line).is_some()
            || go_verbose::run(line).is_some()
            || matches!(go_verbose::summary(line), Some(go_verbose::Summary::Ok(_) | go_verbose::Summary::Fail(_)))
        {
            add(Framework::GoTestVerbose, 1);
        } else if trimmed.strip_prefix("Running ").is_some_and(|r| cargo_libtest::running_header(r.trim()).is_some())
            || trimmed.starts_with("Doc-tests ")
            || trimmed.starts_with("test result: ")
            || cargo_libtest::running_count(line).is_some()
            || cargo_libtest::test_line(line).is_some_and(|(_, rest)| cargo_libtest::status_word(rest).is_some())
        {
            add(Framework::CargoLibtest, 1);
        }
        add(Framework::MavenSurefire, u64::from(surefire::signature(line)));
        add(Framework::Jest, u64::from(jest_text::signature(line)) * 2);
        add(Framework::Vitest, u64::from(vitest_text::signature(line)) * 2);
        add(Framework::Mocha, u64::from(mocha_text::signature(line)) * 50);
        add(Framework::NodeTest, u64::from(node_spec::signature(line)) * 50);
        add(Framework::Tap, u64::from(tap::signature(line)));
        add(Framework::Ctest, u64::from(ctest::signature(line)) * 100);
        add(Framework::Gtest, u64::from(gtest::signature(line)));
        add(Framework::Catch2, u64::from(catch2_text::signature(line)));
        add(Framework::Automake, u64::from(automake::signature(line)));
    }
    // Ties go to the earlier framework in `Framework::ALL` (test2json before `go test -v`).
    let best = scores.iter().map(|(_, s)| *s).max().unwrap_or(0);
    if best == 0 {
        return None;
    }
    scores.into_iter().find(|(_, s)| *s == best).map(|(f, _)| f)
}

/// Which XML report `log` is, when it is one.
fn detect_xml(log: &str) -> Option<Framework> {
    let head = match log.char_indices().nth(XML_PREFIX) {
        Some((i, _)) => &log[..i],
        None => log,
    };
    let start = head.trim_start();
    if !(start.starts_with("<?xml") || start.starts_with("<testsuite") || start.starts_with("<Catch")) {
        return None;
    }
    Some(if head.contains("<Catch") {
        Framework::Catch2Xml
    } else if head.contains("name=\"nextest-run\"") {
        Framework::NextestJunit
    } else if head.contains("name=\"AllTests\"") || head.contains("result=\"completed\"") {
        Framework::GtestXml
    } else if head.contains(".global\" name=") {
        Framework::Catch2Junit
    } else if head.contains("<testsuite name=\"(empty)\"") || ctest_junit(head) {
        Framework::CtestJunit
    } else {
        Framework::JunitXml
    })
}

/// ctest writes `classname` equal to `name` and a `status` attribute on every test case.
fn ctest_junit(head: &str) -> bool {
    head.split("<testcase ").skip(1).take(3).any(|case| {
        let get =
            |key: &str| case.split_once(&format!("{key}=\"")).and_then(|(_, r)| r.split_once('"')).map(|(v, _)| v);
        get("name").is_some() && get("name") == get("classname") && get("status").is_some()
    })
}
