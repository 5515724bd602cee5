//! Behaviour the golden files do not pin down: framework names, detection, Multi-SWE-bench
//! names, warnings, and small hand-made logs for individual rules.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use swe_forge_core::TestStatus::{self, Fail, Pass, Skip};
use swe_forge_logparse::{Framework, GoSubtests, ParsedLog, detect, parse, parse_files};

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
    // `test tests::panics - should panic ... ok` does not match Multi-SWE-bench's
    // `test (\S+) ... ok`: that harness never names should-panic tests (rayon-rs/rayon's
    // published records leave all of them out).
    assert_eq!(p.msb_names.get("mycrate::tests::panics"), None);
    assert_eq!(status(&p, "mycrate::tests::panics"), Some(Pass));
    assert_eq!(p.msb_names.get("mycrate[bin]::tests::shared").map(String::as_str), Some("tests::shared"));
    assert_eq!(p.msb_names.get("bar::shared").map(String::as_str), Some("shared"));
    assert!(p.msb_names.keys().all(|id| !id.contains("::doc::")));
    assert_eq!(status(&p, "mycrate::doc::src/lib.rs - add - compile fail"), Some(Pass));
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
}

/// The same crate tested twice, the second time with one line added at the top of `src/lib.rs`
/// (as a fix whose first hunk adds a comment): libtest names every doctest by another line, the
/// ids stay. Items with several doctests number them in line order, in text and JSON alike.
#[test]
fn doctest_ids_do_not_move_with_their_lines() {
    for fw in [Framework::CargoLibtest, Framework::LibtestJson] {
        let dir = if fw == Framework::CargoLibtest { "cargo-test" } else { "libtest-json" };
        let base_log = data(&format!("{dir}/doctests_base.log"));
        let shifted_log = data(&format!("{dir}/doctests_shifted.log"));
        assert!(String::from_utf8_lossy(&base_log).contains("Map<V>::get (line 54)"));
        assert!(String::from_utf8_lossy(&shifted_log).contains("Map<V>::get (line 55)"));
        let (base, shifted) = (parse(fw, &base_log), parse(fw, &shifted_log));
        assert_eq!(base.tests, shifted.tests, "{fw:?}");
        assert_eq!(base.tests.len(), 6);
        assert!(base.tests.keys().all(|id| !id.contains("(line ")), "{:?}", base.tests);
        // `Map<V>::get` has two doctests (lines 48 and 54): the second, failing, is numbered.
        assert_eq!(status(&base, "docord::doc::src/lib.rs - Map<V>::get"), Some(Pass));
        assert_eq!(status(&base, "docord::doc::src/lib.rs - Map<V>::get (doctest 2)"), Some(Fail));
        assert_eq!(status(&base, "docord::doc::src/lib.rs - Map<V>::new"), Some(Pass));
        // `Map` has three, the third a compile-fail block (libtest's text marks it, JSON does not).
        let third = if fw == Framework::CargoLibtest { " - compile fail" } else { "" };
        assert_eq!(status(&base, &format!("docord::doc::src/lib.rs - Map (doctest 3){third}")), Some(Pass));
        assert!(base.msb_names.is_empty(), "doctests have no Multi-SWE-bench name");
        assert!(base.warnings.iter().all(|w| !w.contains("summary says")), "{:?}", base.warnings);
    }
}

#[test]
fn go_msb_names_are_bare_test_names() {
    for fw in [Framework::GoTestJson, Framework::GoTestVerbose] {
        let case = if fw == Framework::GoTestJson { "go-test-json/mixed.log" } else { "go-test/mixed.log" };
        let p = parse(fw, &data(case));
        assert_eq!(
            p.msb_names.get("example.com/m/alpha::TestSub/sub_case").map(String::as_str),
            Some("TestSub/sub_case"),
            "most of Multi-SWE-bench's Go handlers keep the full name (cli/cli's)"
        );
        let mut base = p.clone();
        base.name_go_subtests(fw, GoSubtests::Base);
        assert_eq!(
            base.msb_names.get("example.com/m/alpha::TestSub/sub_case").map(String::as_str),
            Some("TestSub"),
            "grpc-go's handler drops the last `/` level (`get_base_name`)"
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
    assert!(p.build_failed);
    assert!(!parse(Framework::CargoLibtest, &data("cargo-test/truncated.log")).build_failed);
}

#[test]
fn a_go_package_that_did_not_build_is_a_build_failure_in_both_go_formats() {
    let verbose = "ok  \texample.com/m/a\t0.01s\nFAIL\texample.com/m/b [build failed]\nFAIL\n";
    let p = parse(Framework::GoTestVerbose, verbose.as_bytes());
    assert!(p.build_failed && warned(&p, "none of its tests ran"), "{:?}", p.warnings);
    let json = "{\"Action\":\"output\",\"Package\":\"p\",\"Output\":\"FAIL\\tp [build failed]\\n\"}\n{\"Action\":\"fail\",\"Package\":\"p\",\"FailedBuild\":\"p.test\"}\n";
    let p = parse(Framework::GoTestJson, json.as_bytes());
    assert!(p.build_failed && warned(&p, "none of its tests ran"), "{:?}", p.warnings);
    let passing = "=== RUN   TestA\n--- PASS: TestA (0.00s)\nPASS\nok  \texample.com/m/a\t0.01s\n";
    assert!(!parse(Framework::GoTestVerbose, passing.as_bytes()).build_failed);
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
    assert_eq!(p.msb_names.get("tool[bin]::b"), None, "Multi-SWE-bench cannot see should-panic tests");
    assert_eq!(p.msb_names.get("tool[bin]::a").map(String::as_str), Some("a"));
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
fn go_timeout_kills_are_listed_failed_and_keep_their_names() {
    // Real captures: `-timeout 2s`, a top-level test, and a subtest under `Test` (grpc-go's shape).
    for fw in [Framework::GoTestJson, Framework::GoTestVerbose] {
        let dir = if fw == Framework::GoTestJson { "go-test-json" } else { "go-test" };
        let p = parse(fw, &data(&format!("{dir}/crash_panic_timeout.log")));
        assert_eq!(p.timed_out.iter().collect::<Vec<_>>(), ["example.com/crash/slow::TestHangs"], "{fw}");
        assert_eq!(status(&p, "example.com/crash/panicky::TestPanics"), Some(Fail), "{fw}: a panic is no timeout");
        assert!(warned(&p, "package example.com/crash/slow: go test's timeout (test timed out after 2s) killed 1"));

        let p = parse(fw, &data(&format!("{dir}/timeout_subtests.log")));
        let hung = "example.com/hang/test::Test/SocketHangs";
        assert_eq!(p.timed_out.iter().collect::<Vec<_>>(), ["example.com/hang/test::Test", hung], "{fw}");
        assert_eq!(status(&p, hung), Some(Fail));
        assert_eq!(p.msb_names.get(hung).map(String::as_str), Some("Test/SocketHangs"));
        assert_eq!(status(&p, "example.com/hang/zlast::TestOther"), Some(Pass), "{fw}: the next package is clean");
        assert!(warned(&p, "killed 2 running test(s) (Test, Test/SocketHangs)"), "{fw}: {:?}", p.warnings);
    }
}

#[test]
fn go_timeout_block_rules() {
    // The shape of grpc-go's `test` package killed after 10 minutes; the block belongs to the
    // package of the summary line that follows. `TestListedOnly` never printed `=== RUN`.
    let text = "=== RUN   Test\n=== RUN   Test/CZSocketGetSecurityValueTLS\n\
        panic: test timed out after 10m0s\n\trunning tests:\n\t\tTest (10m0s)\n\
        \t\tTest/CZSocketGetSecurityValueTLS (9m53s)\n\t\tTestListedOnly (1.5s)\n\n\
        goroutine 1234 [running]:\nTestNotAnEntry (2s)\n\t\tTestAfterTheList (2s)\n\
        FAIL\tgoogle.golang.org/grpc/test\t600.055s\n\
        === RUN   TestA\n--- PASS: TestA (0.00s)\nok  \tgoogle.golang.org/grpc/other\t0.1s\n";
    let p = parse(Framework::GoTestVerbose, text.as_bytes());
    let ids = [
        "google.golang.org/grpc/test::Test",
        "google.golang.org/grpc/test::Test/CZSocketGetSecurityValueTLS",
        "google.golang.org/grpc/test::TestListedOnly",
    ];
    assert_eq!(p.timed_out.iter().collect::<Vec<_>>(), ids);
    for id in ids {
        assert_eq!(status(&p, id), Some(Fail), "{id}");
    }
    assert_eq!(p.tests.len(), 4, "{:?}", p.tests);
    assert_eq!(status(&p, "google.golang.org/grpc/other::TestA"), Some(Pass));
    assert!(warned(&p, "(test timed out after 10m0s) killed 3"), "{:?}", p.warnings);

    // The same as test2json events, the panic as output of the package and of a test.
    let json = r#"{"Action":"run","Package":"g/test","Test":"Test"}
{"Action":"run","Package":"g/test","Test":"Test/CZSocketGetSecurityValueTLS"}
{"Action":"run","Package":"g/test","Test":"TestDone"}
{"Action":"pass","Package":"g/test","Test":"TestDone"}
{"Action":"output","Package":"g/test","Output":"panic: test timed out after 10m0s\n"}
{"Action":"output","Package":"g/test","Test":"Test/CZSocketGetSecurityValueTLS","Output":"\trunning tests:\n"}
{"Action":"run","Package":"g/other","Test":"TestB"}
{"Action":"output","Package":"g/other","Output":"\t\tTestOtherPackage (1s)\n"}
{"Action":"output","Package":"g/test","Output":"\t\tTest (10m0s)\n"}
{"Action":"output","Package":"g/test","Output":"\t\tTest/CZSocketGetSecurityValueTLS (9m53s)\n"}
{"Action":"output","Package":"g/test","Output":"\n"}
{"Action":"output","Package":"g/test","Output":"\t\tTestAfterTheList (1s)\n"}
{"Action":"output","Package":"g/test","Output":"FAIL\tg/test\t600.055s\n"}
{"Action":"fail","Package":"g/test"}
{"Action":"pass","Package":"g/other","Test":"TestB"}
{"Action":"pass","Package":"g/other"}
"#;
    let p = parse(Framework::GoTestJson, json.as_bytes());
    assert_eq!(p.timed_out.iter().collect::<Vec<_>>(), ["g/test::Test", "g/test::Test/CZSocketGetSecurityValueTLS"]);
    assert_eq!(status(&p, "g/test::Test/CZSocketGetSecurityValueTLS"), Some(Fail));
    let mut grpc = p.clone();
    grpc.name_go_subtests(Framework::GoTestJson, GoSubtests::Base);
    assert_eq!(grpc.msb_names.get("g/test::Test/CZSocketGetSecurityValueTLS").map(String::as_str), Some("Test"));
    assert_eq!(status(&p, "g/test::TestDone"), Some(Pass));
    assert_eq!(status(&p, "g/other::TestB"), Some(Pass));
    assert_eq!(p.tests.len(), 4, "{:?}", p.tests);

    // Older Go printed no list: the tests running when the package failed are the ones killed.
    let old = b"=== RUN   TestA\n--- PASS: TestA (0.00s)\n=== RUN   TestHang\n\
        panic: test timed out after 10m0s\n\ngoroutine 5 [running]:\nFAIL\tp\t600.1s\n";
    let p = parse(Framework::GoTestVerbose, old);
    assert_eq!(p.timed_out.iter().collect::<Vec<_>>(), ["p::TestHang"]);
    assert_eq!((status(&p, "p::TestHang"), status(&p, "p::TestA")), (Some(Fail), Some(Pass)));
    let old_json = br#"{"Action":"run","Package":"p","Test":"TestHang"}
{"Action":"output","Package":"p","Test":"TestHang","Output":"panic: test timed out after 10m0s\n"}
{"Action":"fail","Package":"p"}
"#;
    let p = parse(Framework::GoTestJson, old_json);
    assert_eq!(p.timed_out.iter().collect::<Vec<_>>(), ["p::TestHang"]);

    // A panic of another kind, or a list-like line outside a timeout block, kills nothing.
    let p = parse(
        Framework::GoTestVerbose,
        b"=== RUN   TestCrash\npanic: boom\n\trunning tests:\n\t\tTestCrash (1s)\nFAIL\tp\t0.1s\n",
    );
    assert!(p.timed_out.is_empty() && status(&p, "p::TestCrash") == Some(Fail), "{p:?}");
    assert!(warned(&p, "had no result (TestCrash)"), "{:?}", p.warnings);
}

#[test]
fn parsed_logs_without_timed_out_still_load() {
    let kept = r#"{"tests":{"p::TestA":"PASS"},"msb_names":{"p::TestA":"TestA"},"warnings":[]}"#;
    let p: ParsedLog = serde_json::from_str(kept).unwrap();
    assert!(p.timed_out.is_empty());
    assert_eq!(serde_json::to_string(&p).unwrap(), kept, "an empty list is not written");
    let p = parse(Framework::GoTestVerbose, &data("go-test/crash_panic_timeout.log"));
    let back: ParsedLog = serde_json::from_str(&serde_json::to_string(&p).unwrap()).unwrap();
    assert_eq!(back, p);
}

#[test]
fn empty_log_warns() {
    for fw in Framework::ALL {
        let p = parse(fw, b"");
        assert!(p.tests.is_empty() && p.msb_names.is_empty());
        assert!(warned(&p, "no test results"), "{fw}: {:?}", p.warnings);
    }
}

#[test]
fn ctest_tests_without_an_executable_say_the_build_failed() {
    // Both ctest reports hold `missing_exe`, whose binary does not exist: absent (it did not
    // run), and a warning; `skipped_by_code` (`SKIP_RETURN_CODE`) ran and skipped itself.
    for (f, file) in [(Framework::Ctest, "ctest/serial.log"), (Framework::CtestJunit, "ctest-junit/report.log")] {
        let p = parse(f, &data(file));
        assert_eq!(status(&p, "missing_exe"), None, "{file}");
        assert_eq!(status(&p, "skipped_by_code"), Some(Skip), "{file}");
        assert!(warned(&p, "build failed: 1 ctest test(s) had no executable: missing_exe"), "{file}: {:?}", p.warnings);
        assert!(p.build_failed, "{file}");
    }
    // A disabled test, or a `Not Run` without a missing executable, is no build failure.
    let log = "      Start  1: off\n1/2 Test #1: off ....***Not Run (Disabled)   0.00 sec\n      Start  2: req\n\
               2/2 Test #2: req ....***Not Run   0.00 sec\n";
    let p = parse(Framework::Ctest, log.as_bytes());
    assert_eq!(status(&p, "req"), None);
    assert_eq!(status(&p, "off"), Some(Skip));
    assert!(!warned(&p, "build failed") && !p.build_failed, "{:?}", p.warnings);
}

#[test]
fn crashes_truncation_and_partial_output_are_warned_about() {
    let cases: &[(Framework, &str, &str)] = &[
        (Framework::MavenSurefire, "maven-surefire/fork_crash.log", "the forked VM crashed"),
        (Framework::Gtest, "gtest/segfault.log", "CrashSuite.Segfaults"),
        (Framework::Gtest, "gtest/truncated.log", "Small/ParamTest.IsSmall/1"),
        (Framework::Catch2, "catch2/failures_only.log", "run with -s"),
        (Framework::JestJson, "jest-json/truncated.log", "cut short or malformed"),
        (Framework::JestJson, "jest-json/with_text_report.log", "tests/unit/broken.test.js"),
        (Framework::MochaJson, "mocha-json/truncated.log", "cut short or malformed"),
        (Framework::MochaJson, "mocha-json/report.log", "\"before all\" hook"),
        (Framework::Mocha, "mocha/spec.log", "\"before all\" hook"),
        (Framework::JunitXml, "junit-xml/truncated.log", "truncated"),
        (Framework::Tap, "tap/prove_verbose.log", "t/crash.t promised 3 tests but 1 reported"),
        (Framework::Tap, "tap/truncated.log", "ends inside subtest with subtests"),
        (Framework::Jest, "jest/process_exit.log", "no test results"),
    ];
    for (fw, case, needle) in cases {
        let p = parse(*fw, &data(case));
        assert!(warned(&p, needle), "{case}: no warning containing {needle:?} in {:?}", p.warnings);
    }
    // Clean real logs give no warnings (ctest's hold a test without an executable: see
    // `ctest_tests_without_an_executable_say_the_build_failed`).
    for (fw, case) in [
        (Framework::Gtest, "gtest/basic.log"),
        (Framework::Jest, "jest/verbose.log"),
        (Framework::Vitest, "vitest/verbose.log"),
        (Framework::NodeTest, "node-test/spec.log"),
        (Framework::Automake, "automake/make_check.log"),
        (Framework::Catch2Xml, "catch2-xml/report.log"),
        (Framework::JunitXml, "junit-xml/surefire_one_file.log"),
        (Framework::MavenSurefire, "maven-surefire/junit5_mixed.log"),
    ] {
        let p = parse(fw, &data(case));
        assert!(p.warnings.is_empty(), "{case}: {:?}", p.warnings);
    }
}

#[test]
fn a_test_that_never_reported_is_absent_never_pass() {
    // gtest: the binary died inside Segfaults; NeverRuns never started.
    let p = parse(Framework::Gtest, &data("gtest/segfault.log"));
    assert_eq!(status(&p, "CrashSuite.First"), Some(Pass));
    assert_eq!(status(&p, "CrashSuite.Segfaults"), None);
    assert_eq!(status(&p, "CrashSuite.NeverRuns"), None);
    // Surefire: the forked VM died; no class of that fork is PASS.
    let p = parse(Framework::MavenSurefire, &data("maven-surefire/fork_crash.log"));
    assert!(p.tests.is_empty(), "{:?}", p.tests);
    // jest: process.exit in a test ends the run before any result is printed.
    assert!(parse(Framework::Jest, &data("jest/process_exit.log")).tests.is_empty());
    // TAP: a script dying after its first test.
    let p = parse(Framework::Tap, &data("tap/prove_verbose.log"));
    assert_eq!(status(&p, "t/crash.t::before the crash"), Some(Pass));
    assert_eq!(p.tests.keys().filter(|k| k.starts_with("t/crash.t::")).count(), 1);
    // ctest: a test started but the log ends.
    let p =
        parse(Framework::Ctest, b"      Start  1: a\n 1/2 Test  #1: a ....   Passed    0.01 sec\n      Start  2: b\n");
    assert_eq!(status(&p, "a"), Some(Pass));
    assert_eq!(status(&p, "b"), None);
    assert!(warned(&p, "started without a result"), "{:?}", p.warnings);
}

#[test]
fn printed_lines_cannot_fake_results() {
    // A gtest test printing an OK line for a test that is not running.
    let p = parse(Framework::Gtest, &data("gtest/basic.log"));
    assert!(!p.tests.contains_key("fake"));
    // A ctest test printing a ctest result line (with --output-on-failure).
    let p = parse(Framework::Ctest, &data("ctest/parallel_output_on_failure.log"));
    assert!(!p.tests.contains_key("fake"));
    assert_eq!(status(&p, "prints_output"), Some(Fail));
}

#[test]
fn text_and_structured_reports_agree() {
    let pairs: &[(Framework, &str, Framework, &str)] = &[
        (Framework::Jest, "jest/verbose.log", Framework::JestJson, "jest-json/with_text_report.log"),
        (Framework::NodeTest, "node-test/spec.log", Framework::Tap, "tap/node_tap.log"),
        (Framework::Gtest, "gtest/basic.log", Framework::GtestXml, "gtest-xml/report.log"),
        (Framework::Ctest, "ctest/serial.log", Framework::CtestJunit, "ctest-junit/report.log"),
        (Framework::Catch2, "catch2/success.log", Framework::Catch2Xml, "catch2-xml/report.log"),
        (Framework::Catch2Xml, "catch2-xml/report.log", Framework::Catch2Junit, "catch2-junit/report.log"),
    ];
    for (fa, a, fb, b) in pairs {
        let (pa, pb) = (parse(*fa, &data(a)), parse(*fb, &data(b)));
        assert_eq!(pa.tests, pb.tests, "{a} vs {b}");
    }
    // Vitest's text names files only when they fail to load; the tests agree.
    let text = parse(Framework::Vitest, &data("vitest/verbose.log"));
    let json = parse(Framework::VitestJson, &data("vitest-json/report.log"));
    for (id, st) in &text.tests {
        assert_eq!(json.tests.get(id), Some(st), "{id}");
    }
    // nextest's JUnit ids are cargo-test's.
    let p = parse(Framework::NextestJunit, &data("nextest-junit/report.log"));
    assert_eq!(status(&p, "mycrate::tests::flaky"), Some(Pass));
    assert_eq!(status(&p, "tool[bin]::tests::shared"), Some(Pass));
    assert_eq!(p.msb_names.get("integration::shared").map(String::as_str), Some("shared"));
}

#[test]
fn exit_code_check() {
    use swe_forge_logparse::exit_code_consistent;
    let p = parse(Framework::Gtest, &data("gtest/segfault.log"));
    assert!(exit_code_consistent(&p, Some(139)).is_some_and(|m| m.contains("exited 139")));
    assert_eq!(exit_code_consistent(&p, Some(0)), None);
    assert_eq!(exit_code_consistent(&p, None), None);
    let p = parse(Framework::Gtest, &data("gtest/basic.log"));
    assert!(exit_code_consistent(&p, Some(0)).is_some_and(|m| m.contains("2 test(s) failed")));
    assert_eq!(exit_code_consistent(&p, Some(1)), None);
    assert_eq!(exit_code_consistent(&parse(Framework::Gtest, b""), Some(1)), None);
}

#[test]
fn results_directories() {
    use swe_forge_logparse::parse_files;
    let files = vec![
        (
            "reports/TEST-a.xml".to_owned(),
            b"<testsuite name=\"p.A\"><testcase name=\"x\" classname=\"p.A\"/></testsuite>".to_vec(),
        ),
        (
            "reports/TEST-b.xml".to_owned(),
            b"<testsuite name=\"p.B\"><testcase name=\"y\" classname=\"p.B\"><error/></testcase>".to_vec(),
        ),
        ("reports/a.txt".to_owned(), b"Tests run: 1".to_vec()),
    ];
    let p = parse_files(Framework::JunitXml, &files);
    assert_eq!(status(&p, "p.A#x"), Some(Pass));
    assert_eq!(status(&p, "p.B#y"), Some(Fail));
    assert_eq!(p.tests.len(), 2);
    let p = parse_files(Framework::JunitXml, &files[2..]);
    assert!(warned(&p, "no result files ending in .xml"), "{:?}", p.warnings);
    let trs = vec![("t/a.trs".to_owned(), b":test-result: XPASS\n:global-test-result: XPASS\n".to_vec())];
    assert_eq!(status(&parse_files(Framework::Automake, &trs), "t/a"), Some(Fail));
}

#[test]
fn libtest_json_ids_and_names_are_cargo_tests() {
    let text = parse(Framework::CargoLibtest, &data("cargo-test/no_fail_fast.log"));
    let json = parse(Framework::LibtestJson, &data("libtest-json/no_fail_fast.log"));
    assert_eq!(detect(&data("libtest-json/no_fail_fast.log")), Some(Framework::LibtestJson));
    assert_eq!(detect(&data("libtest-json/nextest_plus.log")), Some(Framework::LibtestJson));
    // The same run in both formats: the same ids and statuses, but for the suffix libtest's
    // text adds to a compile-fail doctest's name.
    let unsuffixed = |id: &String| id.replace(" - compile fail", "");
    let text_tests: BTreeMap<_, _> = text.tests.iter().map(|(id, s)| (unsuffixed(id), *s)).collect();
    let json_tests: BTreeMap<_, _> = json.tests.iter().map(|(id, s)| (id.clone(), *s)).collect();
    assert_eq!(json_tests, text_tests);
    for (id, name) in &text.msb_names {
        assert_eq!(json.msb_names.get(id), Some(name), "{id}");
    }
    // Should-panic tests carry no marker in JSON, so Multi-SWE-bench's name is the path.
    assert_eq!(json.msb_names.get("mycrate::tests::panics").map(String::as_str), Some("tests::panics"));
    assert!(!json.msb_names.keys().any(|id| id.contains("::doc::")));
    assert!(json.warnings.is_empty(), "{:?}", json.warnings);
    // nextest: the binary from the name, `[bin]` from the kind, the last of three tries.
    let nextest = parse(Framework::LibtestJson, &data("libtest-json/nextest_plus.log"));
    let non_doc: Vec<_> = text.tests.iter().filter(|(id, _)| !id.contains("::doc::")).collect();
    assert_eq!(nextest.tests.iter().collect::<Vec<_>>(), non_doc);
    assert!(nextest.warnings.is_empty(), "{:?}", nextest.warnings);
}

#[test]
fn libtest_json_truncated_and_stray_lines() {
    let p = parse(Framework::LibtestJson, &data("libtest-json/truncated.log"));
    assert_eq!(status(&p, "bar::shared"), Some(Pass));
    assert_eq!(status(&p, "bar::bar_fails"), None);
    assert!(warned(&p, "log ends") && warned(&p, "test binary bar") && warned(&p, "bar_fails"), "{:?}", p.warnings);
    // Output that looks like libtest's text is not a result; a timeout is not a status; a
    // summary that disagrees warns; a crashed binary leaves its running tests out.
    let log = b"     Running tests/a.rs (target/debug/deps/a-0123456789abcdef)\n\
        {\"type\":\"suite\",\"event\":\"started\",\"test_count\":3}\n\
        {\"type\":\"test\",\"event\":\"started\",\"name\":\"one\"}\n\
        test printed ... ok\n\
        {\"type\":\"test\",\"event\":\"timeout\",\"name\":\"one\"}\n\
        {\"type\":\"test\",\"event\":\"ok\",\"name\":\"one\"}\n\
        {\"type\":\"suite\",\"event\":\"ok\",\"passed\":2,\"failed\":0,\"ignored\":0}\n\
        \x20    Running tests/b.rs (target/debug/deps/b-0123456789abcdef)\n\
        {\"type\":\"suite\",\"event\":\"started\",\"test_count\":2}\n\
        {\"type\":\"test\",\"event\":\"started\",\"name\":\"crashes\"}\n\
        error: test failed, to rerun pass `--test b`\n\
        {\"type\":\"bench\",\"name\":\"fast\",\"median\":10,\"deviation\":1}\n";
    let p = parse(Framework::LibtestJson, log);
    assert_eq!(p.tests.keys().collect::<Vec<_>>(), ["a::one", "b::fast"]);
    assert!(warned(&p, "summary says 2 passed"), "{:?}", p.warnings);
    assert!(warned(&p, "left out: crashes"), "{:?}", p.warnings);
}

/// ctest 3.31's report of a target whose executable a failed build deleted, run through the
/// `c-cmake` recipe's test launcher: ctest saw the launcher, ran it and calls the target failed;
/// the launcher's line says the executable does not exist, so the target is not run (absent, the
/// build failure noted), as ctest's own `Unable to find executable` is.
#[test]
fn a_target_the_launcher_found_missing_is_not_run() {
    let xml = r#"<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="Linux-c++" tests="2" failures="1" disabled="0" skipped="0" hostname="h" time="0" timestamp="2026-12-07T18:40:00">
	<testcase name="unit" classname="unit" time="0.002" status="fail">
		<failure message="Failed"/>
		<properties/>
		<system-out>swe-forge: not run: /testbed/build/tests does not exist
</system-out>
	</testcase>
	<testcase name="other" classname="other" time="0.1" status="run">
		<properties/>
		<system-out>ok
</system-out>
	</testcase>
</testsuite>
"#;
    let p = parse_files(Framework::CtestJunit, &[("ctest.xml".to_owned(), xml.as_bytes().to_vec())]);
    assert_eq!(p.tests.iter().map(|(k, v)| (k.as_str(), *v)).collect::<Vec<_>>(), [("other", TestStatus::Pass)]);
    assert!(p.build_failed, "{:?}", p.warnings);
}
