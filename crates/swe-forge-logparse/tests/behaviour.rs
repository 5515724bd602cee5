//! Behaviour the golden files do not pin down: framework names, detection, Multi-SWE-bench
//! names, warnings, and small hand-made logs for individual rules.

use std::fs;
use std::path::Path;

use swe_forge_core::TestStatus::{self, Fail, Pass, Skip};
use swe_forge_logparse::{Framework, ParsedLog, detect, parse};

fn data(case: &str) -> Vec<u8> {
    fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("test_data").join(case)).expect("test data file")
}

fn status(p: &ParsedLog, id: &str) -> Option<TestStatus> {
    p.tests.get(id).copied()
}

fn warned(p: &ParsedLog, needle: &str) -> bool {
    p.warnings.iter().any(|w| w.contains(needle))
}

#[test]
fn framework_names_round_trip() {
    for fw in Framework::ALL {
        assert_eq!(fw.name().parse::<Framework>(), Ok(fw));
        assert_eq!(fw.to_string(), fw.name());
    }
    assert_eq!("go-test-json".parse(), Ok(Framework::GoTestJson));
    assert_eq!("go-test".parse(), Ok(Framework::GoTestVerbose));
    assert_eq!("cargo-test".parse(), Ok(Framework::CargoLibtest));
    let err = "pytest".parse::<Framework>().unwrap_err();
    assert!(err.to_string().contains("pytest") && err.to_string().contains("cargo-test"), "{err}");
}

#[test]
fn detect_each_format() {
    assert_eq!(detect(&data("go-test-json/mixed.log")), Some(Framework::GoTestJson));
    assert_eq!(detect(&data("go-test-json/old_build_failure.log")), Some(Framework::GoTestJson));
    assert_eq!(detect(&data("go-test/mixed.log")), Some(Framework::GoTestVerbose));
    assert_eq!(detect(&data("go-test/ansi.log")), Some(Framework::GoTestVerbose));
    assert_eq!(detect(&data("cargo-test/no_fail_fast.log")), Some(Framework::CargoLibtest));
    assert_eq!(detect(&data("cargo-test/crlf.log")), Some(Framework::CargoLibtest));
    assert_eq!(detect(b"test a::b ... ok\n"), Some(Framework::CargoLibtest));
    assert_eq!(detect(b"--- PASS: TestA (0.00s)\nok  \tx\t0.1s\n"), Some(Framework::GoTestVerbose));
    assert_eq!(detect(b"{\"Action\":\"pass\",\"Package\":\"p\",\"Test\":\"TestA\"}\r\n"), Some(Framework::GoTestJson));
}

#[test]
fn detect_nothing_in_noise() {
    assert_eq!(detect(b""), None);
    assert_eq!(detect(b"\xff\xfe\x00garbage\n"), None);
    assert_eq!(detect(b"go: downloading example.com/x v1.0.0\n{\"not\":\"an event\"}\n"), None);
    assert_eq!(detect(&data("cargo-test/compile_error.log")), None);
    assert_eq!(detect(b"     Running `rustc --crate-name x`\n"), None);
}

#[test]
fn cargo_msb_names_are_bare_paths_and_doctests_have_none() {
    let p = parse(Framework::CargoLibtest, &data("cargo-test/no_fail_fast.log"));
    assert_eq!(p.msb_names.get("mycrate::tests::panics").map(String::as_str), Some("tests::panics"));
    assert_eq!(p.msb_names.get("mycrate[bin]::tests::shared").map(String::as_str), Some("tests::shared"));
    assert_eq!(p.msb_names.get("bar::shared").map(String::as_str), Some("shared"));
    assert!(p.msb_names.keys().all(|id| !id.contains("::doc::")));
    assert_eq!(status(&p, "mycrate::doc::src/lib.rs - add (line 31) - compile fail"), Some(Pass));
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
}

#[test]
fn go_msb_names_are_bare_test_names() {
    for fw in [Framework::GoTestJson, Framework::GoTestVerbose] {
        let case = if fw == Framework::GoTestJson { "go-test-json/mixed.log" } else { "go-test/mixed.log" };
        let p = parse(fw, &data(case));
        assert_eq!(
            p.msb_names.get("example.com/m/alpha::TestSub/sub_case").map(String::as_str),
            Some("TestSub/sub_case")
        );
        assert_eq!(p.msb_names.get("example.com/m/beta::TestShared").map(String::as_str), Some("TestShared"));
        assert_eq!(p.msb_names.len(), p.tests.len());
        assert!(warned(&p, "example.com/m/broken"), "{fw}: {:?}", p.warnings);
    }
}

#[test]
fn cargo_crashed_binary_leaves_unreported_tests_out() {
    for case in ["cargo-test/crash_abort.log", "cargo-test/crash_abort_nocapture.log"] {
        let p = parse(Framework::CargoLibtest, &data(case));
        assert_eq!(status(&p, "crashy::tests::a_first"), Some(Pass));
        assert_eq!(status(&p, "crashy::tests::b_aborts"), None);
        assert_eq!(status(&p, "crashy::tests::c_never_reported"), None);
        assert!(warned(&p, "tests::b_aborts") && warned(&p, "1 of 3"), "{case}: {:?}", p.warnings);
    }
}

#[test]
fn cargo_truncated_and_mismatched_logs_warn() {
    let p = parse(Framework::CargoLibtest, &data("cargo-test/truncated.log"));
    assert!(warned(&p, "log ends") && warned(&p, "test binary bar"), "{:?}", p.warnings);
    let p = parse(Framework::CargoLibtest, &data("cargo-test/nocapture_glued_lines.log"));
    assert!(warned(&p, "a::four"), "{:?}", p.warnings);
    assert!(warned(&p, "summary says 3 passed"), "{:?}", p.warnings);
    let p = parse(Framework::CargoLibtest, &data("cargo-test/compile_error.log"));
    assert!(p.tests.is_empty());
    assert!(warned(&p, "could not compile") && warned(&p, "no test results"), "{:?}", p.warnings);
}

#[test]
fn cargo_same_named_binaries_are_numbered() {
    let p = parse(Framework::CargoLibtest, &data("cargo-test/workspace_same_target_name.log"));
    assert_eq!(status(&p, "integration::only_in_alpha"), Some(Pass));
    assert_eq!(status(&p, "integration#2::only_in_beta"), Some(Pass));
    assert!(warned(&p, "integration#2"), "{:?}", p.warnings);
}

#[test]
fn cargo_small_rules() {
    let log = b"test before_any_header ... ok\n\
        \x20    Running unittests src/main.rs (target/debug/deps/tool-0123456789abcdef)\n\
        running 4 tests\n\
        test a ... ignored, slow\n\
        test b - should panic ... ok\n\
        test c ... \n\
        printed by c\n\
        FAILED\n\
        test d ... ok <0.001s>\n\
        test result: FAILED. 2 passed; 1 failed; 1 ignored; 0 measured; 0 filtered out\n";
    let p = parse(Framework::CargoLibtest, log);
    assert_eq!(status(&p, "?::before_any_header"), Some(Pass));
    assert_eq!(status(&p, "tool[bin]::a"), Some(Skip));
    assert_eq!(status(&p, "tool[bin]::b"), Some(Pass));
    assert_eq!(status(&p, "tool[bin]::c"), Some(Fail));
    assert_eq!(status(&p, "tool[bin]::d"), Some(Pass));
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
}

#[test]
fn go_json_rules() {
    let log = br#"{"Action":"run","Package":"p","Test":"TestTwice"}
{"Action":"fail","Package":"p","Test":"TestTwice"}
{"Action":"run","Package":"p","Test":"TestTwice"}
{"Action":"pass","Package":"p","Test":"TestTwice"}
{"Action":"run","Package":"p","Test":"TestCrash"}
{"Action":"fail","Package":"p"}
{"Action":"run","Package":"q","Test":"TestOrphan"}
{"Action":"pass","Package":"q"}
{"Action":"output","Package":"r","Output":"FAIL\tr [setup failed]\n"}
{"Action":"fail","Package":"r"}
not json at all
{"Action":"pass","Package":"p","Test":
"#;
    let p = parse(Framework::GoTestJson, log);
    assert_eq!(status(&p, "p::TestTwice"), Some(Pass));
    assert_eq!(status(&p, "p::TestCrash"), Some(Fail));
    assert_eq!(status(&p, "q::TestOrphan"), None);
    assert_eq!(p.tests.len(), 2);
    assert!(warned(&p, "TestCrash") && warned(&p, "TestOrphan"), "{:?}", p.warnings);
    assert!(warned(&p, "package r: setup failed"), "{:?}", p.warnings);
    assert!(warned(&p, "did not parse"), "{:?}", p.warnings);
}

#[test]
fn go_verbose_rules() {
    let log = b"=== RUN   TestA\n--- PASS: TestA (0.00s)\n=== RUN   TestCrash\npanic: boom\n\
        FAIL\texample.com/p\t0.01s\n\
        ?   \texample.com/empty\t[no test files]\n\
        --- SKIP: TestB (0.00s)\nok  \texample.com/q\t(cached)\n\
        FAIL\texample.com/r [setup failed]\n";
    let p = parse(Framework::GoTestVerbose, log);
    assert_eq!(status(&p, "example.com/p::TestA"), Some(Pass));
    assert_eq!(status(&p, "example.com/p::TestCrash"), Some(Fail));
    assert_eq!(status(&p, "example.com/q::TestB"), Some(Skip));
    assert_eq!(p.tests.len(), 3);
    assert!(warned(&p, "TestCrash") && warned(&p, "example.com/r: setup failed"), "{:?}", p.warnings);
}

#[test]
fn empty_log_warns() {
    for fw in Framework::ALL {
        let p = parse(fw, b"");
        assert!(p.tests.is_empty() && p.msb_names.is_empty());
        assert!(warned(&p, "no test results"), "{fw}: {:?}", p.warnings);
    }
}
