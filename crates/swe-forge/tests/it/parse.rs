//! `swe-forge parse` end to end: a log with the format detected or named, a results directory,
//! Multi-SWE-bench granularity, the exit-code check, and bad input.

use std::path::PathBuf;

use crate::support::{root, swe_forge, text};

fn data(case: &str) -> PathBuf {
    root().join("crates/swe-forge-logparse/test_data").join(case)
}

fn lines(stdout: &[u8]) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(stdout).lines().map(|l| serde_json::from_str(l).expect("a JSON line")).collect()
}

fn find<'a>(lines: &'a [serde_json::Value], key: &str, value: &str) -> &'a serde_json::Value {
    lines.iter().find(|l| l[key] == value).unwrap_or_else(|| panic!("no line with {key} = {value}"))
}

#[test]
fn parses_a_log_with_the_format_detected() {
    let out = swe_forge(&["parse", data("jest/verbose.log").to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let lines = lines(&out.stdout);
    assert_eq!(lines.len(), 14);
    let t = find(&lines, "id", "tests/math.test.js > math > nested block > param 3");
    assert_eq!(t["status"], "FAIL");
    assert_eq!(t["msb"], "tests/math.test.js:param 3");
    assert_eq!(find(&lines, "id", "tests/unit/broken.test.js")["status"], "FAIL");
    // Keys come in a fixed order: id, msb, status.
    let first = String::from_utf8_lossy(&out.stdout).lines().next().unwrap().to_owned();
    assert!(first.starts_with("{\"id\":") && first.contains(",\"msb\":") && first.ends_with('}'), "{first}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("14 tests with the jest parser: 8 passed, 4 failed, 2 skipped"), "{stderr}");
}

#[test]
fn parses_a_results_directory_and_rolls_up_to_classes() {
    let dir = data("junit-xml/surefire_reports");
    let out = swe_forge(&["parse", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let tests = lines(&out.stdout);
    assert_eq!(find(&tests, "id", "com.example.CalcTest#isSmall[3]")["status"], "FAIL");
    assert_eq!(find(&tests, "id", "com.example.CalcTest#isSmall[3]")["msb"], "com.example.CalcTest");
    assert!(String::from_utf8_lossy(&out.stderr).contains("junit-xml parser"), "{}", text(&out));

    let out = swe_forge(&["parse", "--msb", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let classes = lines(&out.stdout);
    assert_eq!(classes.len(), 5, "{classes:?}");
    assert_eq!(find(&classes, "msb", "com.example.AllGoodTest")["status"], "PASS");
    assert_eq!(find(&classes, "msb", "com.example.CalcTest")["status"], "FAIL");
    assert_eq!(find(&classes, "msb", "com.example.nested.SkippedClassTest")["status"], "SKIP");

    let out = swe_forge(&["parse", data("automake/trs_files").to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(find(&lines(&out.stdout), "id", "tests/xpass")["status"], "FAIL");
}

#[test]
fn named_format_warnings_and_exit_code_check() {
    let log = data("gtest/segfault.log");
    let out = swe_forge(&["parse", "--framework", "gtest", "--exit-code", "0", log.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let tests = lines(&out.stdout);
    assert_eq!(tests.len(), 1);
    assert_eq!(find(&tests, "id", "CrashSuite.First")["status"], "PASS");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("warning: 1 gtest test(s) started without a result"), "{stderr}");
    assert!(stderr.contains("CrashSuite.Segfaults"), "{stderr}");

    let out = swe_forge(&["parse", "-f", "gtest", "--exit-code", "139", log.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("but the test command exited 139"), "{stderr}");
}

#[test]
fn bad_input_is_explained() {
    let out = swe_forge(&["parse", "--framework", "pytest", data("jest/verbose.log").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("unknown log parser `pytest`"), "{}", text(&out));

    let tmp = tempfile::tempdir().unwrap();
    let noise = tmp.path().join("noise.log");
    std::fs::write(&noise, "hello\nworld\n").unwrap();
    let out = swe_forge(&["parse", noise.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("no known test output format found; name one with --framework"), "{}", text(&out));

    let out = swe_forge(&["parse", tmp.path().join("missing.log").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out).contains("missing.log"), "{}", text(&out));
}
