//! Labels you can trust, on the real engine and real toolchains: a test the test phase did not
//! run never becomes FAIL_TO_PASS. A fail-fast mocha project gets exactly its FAIL_TO_PASS and
//! the full PASS_TO_PASS; a test patch that does not compile without the fix (Maven, Go, and C
//! under `make check`, where it breaks the whole suite's build) keeps only the tests it adds; a
//! test run that crashed half-way is rejected `truncated_run`.

use swe_forge_core::{Instance, LabelRule, Phase, TruncationCause};

use crate::environments::{validate, validate_with};
use crate::support::{make_repos, read_records, root, swe_forge, text};
use crate::toolchains::{accepted, fixture, instance};

fn keys(m: &swe_forge_core::TestMap) -> Vec<&str> {
    m.keys().map(String::as_str).collect()
}

fn labels(r: &Instance) -> &swe_forge_core::Labels {
    r.swe_forge.as_ref().unwrap().labels.as_ref().unwrap_or_else(|| panic!("no labels: {:?}", r.swe_forge))
}

fn notes(r: &Instance) -> Vec<String> {
    r.swe_forge.as_ref().unwrap().provenance.as_ref().unwrap().test_command_notes.clone()
}

#[test]
fn a_fail_fast_mocha_project_gets_exactly_its_fail_to_pass_and_the_full_pass_to_pass() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = tmp.path().join("repos");
    // The developer's `npm test` and the project's .mocharc both bail at the first failure; the
    // CI script does not.
    let package = r#"{
  "name": "bailing",
  "version": "1.0.0",
  "scripts": { "test": "mocha --bail", "test:ci": "mocha --reporter spec" },
  "devDependencies": { "mocha": "10.2.0" }
}
"#;
    let sum = |body: &str| format!("module.exports = function sum(a, b) {{\n  return {body};\n}};\n");
    let suite = |name: &str, titles: &[&str], first: &str| {
        let mut s = format!(
            "const assert = require('assert');\nconst sum = require('../sum');\n\ndescribe('{name}', function () {{\n{first}"
        );
        for t in titles {
            s.push_str(&format!("  it('{t}', function () {{\n    assert.ok(true);\n  }});\n"));
        }
        s.push_str("});\n");
        s
    };
    let adds = "  it('sum adds two numbers', function () {\n    assert.strictEqual(sum(2, 3), 5);\n  });\n";
    let fx = fixture(
        &repos.join("forge-fixtures/bailing"),
        "2024-03-01T00:00:00Z",
        &[
            ("package.json", package),
            (".mocharc.yml", "bail: true\n"),
            ("sum.js", &sum("a - b")),
            ("test/a.test.js", &suite("alpha", &["first one", "second one"], "")),
            ("test/b.test.js", &suite("beta", &["third one", "fourth one"], "")),
        ],
        &[("test/a.test.js", &suite("alpha", &["first one", "second one"], adds))],
        &[("sum.js", &sum("a + b"))],
    );
    let inst = instance("forge-fixtures", "bailing", 4, fx);
    let out = validate(&[&inst], &repos, &tmp.path().join("out"), None);
    let r = &out[0];
    accepted(r);
    // Without fail-fast switched off the test run stops at the new test: the four others would
    // be NONE -> PASS, FAIL_TO_PASS by Multi-SWE-bench's rule.
    assert_eq!(keys(&r.fixed_tests), ["alpha > sum adds two numbers"], "{:?}", r.fixed_tests);
    assert_eq!(
        keys(&r.p2p_tests),
        ["alpha > first one", "alpha > second one", "beta > fourth one", "beta > third one"]
    );
    let l = labels(r);
    assert_eq!(l.rule, LabelRule::Strict);
    assert!(l.truncated.is_empty() && l.not_run_in_test.is_empty(), "{l:?}");
    assert_eq!(r.test_patch_result.passed_count + r.test_patch_result.failed_count, 5, "{:?}", r.test_patch_result);
    assert!(notes(r).iter().any(|n| n.contains("fail-fast off")), "{:?}", notes(r));

    // `npm test` for every mocha project (as the msb profile has it): the CI's `test:ci` runs
    // instead, and the provenance says so.
    let pipeline = tmp.path().join("pipeline.toml");
    std::fs::write(
        &pipeline,
        "name = \"npm-test\"\n[source]\nrecords = \"-\"\nrepos = \"-\"\n[output]\nvalidated = \"-\"\n\
         [overrides.\"recipe:js-mocha\"]\ntest_command = \"npm test\"\n",
    )
    .unwrap();
    let ci = validate(&[&inst], &repos, &tmp.path().join("ci"), Some(&pipeline));
    accepted(&ci[0]);
    assert_eq!(keys(&ci[0].fixed_tests), ["alpha > sum adds two numbers"], "{:?}", ci[0].fixed_tests);
    assert_eq!(ci[0].p2p_tests.len(), 4, "{:?}", ci[0].p2p_tests);
    let meta = ci[0].swe_forge.as_ref().unwrap();
    assert_eq!(meta.test_command.as_deref(), Some("npm run test:ci"));
    assert!(notes(&ci[0]).iter().any(|n| n.contains("scripts.test:ci")), "{:?}", notes(&ci[0]));
}

#[test]
fn a_maven_test_patch_that_does_not_compile_without_the_fix_keeps_only_its_own_tests() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = tmp.path().join("repos");
    let j = crate::support::java_fixture("nocompile", "17", "4.13.2");
    let half = |extra: &str| {
        format!(
            "package fixtures;\n\npublic class Half {{\n    public static int of(int x) {{\n        return x / 2;\n    }}\n{extra}}}\n"
        )
    };
    let test = |extra: &str| {
        format!(
            "package fixtures;\n\nimport static org.junit.Assert.assertEquals;\n\nimport org.junit.Test;\n\npublic class HalfTest {{\n    @Test\n    public void halves() {{\n        assertEquals(2, Half.of(4));\n    }}\n\n    @Test\n    public void halvesZero() {{\n        assertEquals(0, Half.of(0));\n    }}\n{extra}}}\n"
        )
    };
    // OtherTest has a `quarters` of its own, on the base: the test patch's `quarters` is
    // HalfTest's, so OtherTest#quarters is not the test patch's (commons-cli 58's testBuilder).
    let other = "package fixtures;\n\nimport static org.junit.Assert.assertTrue;\n\nimport org.junit.Test;\n\npublic class OtherTest {\n    @Test\n    public void holds() {\n        assertTrue(true);\n    }\n\n    @Test\n    public void quarters() {\n        assertTrue(true);\n    }\n}\n";
    let fx = fixture(
        &repos.join("forge-fixtures/nocompile"),
        "2024-03-01T00:00:00Z",
        &[
            ("pom.xml", &j.pom),
            ("src/main/java/fixtures/Half.java", &half("")),
            ("src/test/java/fixtures/HalfTest.java", &test("")),
            ("src/test/java/fixtures/OtherTest.java", other),
        ],
        &[(
            "src/test/java/fixtures/HalfTest.java",
            &test("\n    @Test\n    public void quarters() {\n        assertEquals(2, Half.quarter(8));\n    }\n"),
        )],
        &[(
            "src/main/java/fixtures/Half.java",
            &half("\n    public static int quarter(int x) {\n        return x / 4;\n    }\n"),
        )],
    );
    let inst = instance("forge-fixtures", "nocompile", 9, fx);
    let out = validate(&[&inst], &repos, &tmp.path().join("out"), None);
    let r = &out[0];
    accepted(r);
    // The test module does not compile with the test patch alone, so no test ran: only the one
    // the test patch adds is FAIL_TO_PASS; the four that passed on the base are set apart.
    assert_eq!(keys(&r.fixed_tests), ["fixtures.HalfTest#quarters"], "{:?}", r.fixed_tests);
    let l = labels(r);
    assert_eq!(
        keys(&l.not_run_in_test),
        [
            "fixtures.HalfTest#halves",
            "fixtures.HalfTest#halvesZero",
            "fixtures.OtherTest#holds",
            "fixtures.OtherTest#quarters"
        ]
    );
    let t = &l.truncated[0];
    assert_eq!(
        (t.phase, t.cause, t.reported, t.missing, t.tolerated),
        (Phase::Test, TruncationCause::CompileFailure, 0, 4, true)
    );
    assert!(t.evidence.contains("COMPILATION ERROR"), "{t:?}");
}

#[test]
fn a_go_test_patch_that_does_not_compile_keeps_its_tests_and_a_panic_in_the_fixed_test_is_labelled() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = tmp.path().join("repos");
    let stack = |extra: &str| {
        format!(
            "package gostk\n\n// Stack is a LIFO stack of ints.\ntype Stack struct {{\n\titems []int\n}}\n\n// Push adds v.\nfunc (s *Stack) Push(v int) {{\n\ts.items = append(s.items, v)\n}}\n\n// Len is the number of items.\nfunc (s *Stack) Len() int {{\n\treturn len(s.items)\n}}\n{extra}"
        )
    };
    let tests = |extra: &str| {
        format!(
            "package gostk\n\nimport \"testing\"\n\nfunc TestPush(t *testing.T) {{\n\tvar s Stack\n\ts.Push(1)\n\tif s.Len() != 1 {{\n\t\tt.Fatal(\"len\")\n\t}}\n}}\n\nfunc TestLen(t *testing.T) {{\n\tvar s Stack\n\tif s.Len() != 0 {{\n\t\tt.Fatal(\"len\")\n\t}}\n}}\n{extra}"
        )
    };
    let peek = "\n// Peek returns the top item.\nfunc (s *Stack) Peek() int {\n\tif len(s.items) == 0 {\n\t\treturn 0\n\t}\n\treturn s.items[len(s.items)-1]\n}\n";
    // A comment copied from another test names it (ssl_exporter 61): a mention, not a change.
    let peek_test = "\n// TestLen tests a stack\nfunc TestPeek(t *testing.T) {\n\tvar s Stack\n\ts.Push(3)\n\tif s.Peek() != 3 {\n\t\tt.Fatal(\"peek\")\n\t}\n}\n";
    let files =
        [("go.mod", "module example.com/gostk\n\ngo 1.21\n"), ("stack.go", &stack("")), ("stack_test.go", &tests(""))];
    let dir = repos.join("forge-fixtures/gostk");
    let fx = fixture(
        &dir,
        "2024-03-01T00:00:00Z",
        &files,
        &[("stack_test.go", &tests(peek_test))],
        &[("stack.go", &stack(peek))],
    );
    let compiles = instance("forge-fixtures", "gostk", 1, fx);
    // A second history: the base has Peek, which panics on an empty stack; the test patch adds a
    // test (in a file Go runs first) that panics without the fix, and the panic ends the package's
    // test binary before the other tests run. The panic is the failure the fix repairs (half of a
    // Go library's PRs look like this): kept, with the tests that did not run labelled.
    let crash_dir = tmp.path().join("crash/forge-fixtures/gostk");
    let panicky =
        "\n// Peek returns the top item.\nfunc (s *Stack) Peek() int {\n\treturn s.items[len(s.items)-1]\n}\n";
    let empty_test = "package gostk\n\nimport \"testing\"\n\nfunc TestAPeekEmpty(t *testing.T) {\n\tvar s Stack\n\tif s.Peek() != 0 {\n\t\tt.Fatal(\"peek\")\n\t}\n}\n";
    let fx = fixture(
        &crash_dir,
        "2024-03-01T00:00:00Z",
        &[
            ("go.mod", "module example.com/gostk\n\ngo 1.21\n"),
            ("stack.go", &stack(panicky)),
            ("stack_test.go", &tests("")),
        ],
        &[("a_test.go", empty_test)],
        &[("stack.go", &stack(peek))],
    );
    let crashes = instance("forge-fixtures", "gostk", 2, fx);
    // Both histories in one repository: the crash's commits fetched next to the first one's.
    let git = |args: &[&str]| {
        let o = std::process::Command::new("git").args(args).current_dir(&dir).output().unwrap();
        assert!(o.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&o.stderr));
    };
    git(&["fetch", "-q", crash_dir.to_str().unwrap(), &format!("{}:refs/heads/crash", crashes.base.sha)]);

    let out = validate(&[&compiles, &crashes], &repos, &tmp.path().join("out"), None);
    let r = out.iter().find(|r| r.number == 1).unwrap();
    accepted(r);
    assert_eq!(keys(&r.fixed_tests), ["example.com/gostk::TestPeek"], "{:?}", r.fixed_tests);
    assert!(r.p2p_tests.is_empty(), "{:?}", r.p2p_tests);
    let l = labels(r);
    assert_eq!(keys(&l.not_run_in_test), ["example.com/gostk::TestLen", "example.com/gostk::TestPush"]);
    assert_eq!(l.truncated[0].cause, TruncationCause::CompileFailure, "{:?}", l.truncated);

    let c = out.iter().find(|r| r.number == 2).unwrap();
    accepted(c);
    assert_eq!(keys(&c.fixed_tests), ["example.com/gostk::TestAPeekEmpty"], "{:?}", c.fixed_tests);
    let l = labels(c);
    assert_eq!(keys(&l.not_run_in_test), ["example.com/gostk::TestLen", "example.com/gostk::TestPush"]);
    let t = &l.truncated[0];
    assert_eq!((t.phase, t.cause, t.missing, t.tolerated), (Phase::Test, TruncationCause::Crash, 2, true), "{t:?}");
    assert!(t.evidence.contains("panic: runtime error"), "{t:?}");
}

/// Issue #57: a C library whose test patch breaks the build of the whole suite (`make -k check`
/// builds every test program before it runs any; the new test calls `cstr_reverse`, which only the
/// fix adds). The test patch's `Makefile.am` line names every test and it rewrites `test_upper.c`:
/// the three tests that passed at the base and ran nothing with the test patch are set apart,
/// whatever lines name them, and the new test alone is FAIL_TO_PASS.
#[test]
fn a_c_test_patch_that_breaks_the_whole_build_keeps_only_its_new_test() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = tmp.path().join("repos");
    let makefile = |extra: &str| {
        format!(
            "AM_CFLAGS = -Wall -I$(srcdir)/src\nnoinst_LIBRARIES = libcstr.a\nlibcstr_a_SOURCES = src/cstr.c src/cstr.h\n\n\
             check_PROGRAMS = tests/test_trim tests/test_count tests/test_upper{}\nTESTS = $(check_PROGRAMS)\n\
             LDADD = libcstr.a\n",
            if extra.is_empty() { String::new() } else { format!(" {extra}") }
        )
    };
    let configure = "AC_INIT([cstr], [0.1.0])\nAM_INIT_AUTOMAKE([foreign subdir-objects -Wall])\nAC_PROG_CC\nAM_PROG_AR\nAC_PROG_RANLIB\nAC_CONFIG_FILES([Makefile])\nAC_OUTPUT\n";
    let header = |extra: &str| {
        format!(
            "#ifndef CSTR_H\n#define CSTR_H\n#include <stddef.h>\n\nsize_t cstr_count(const char *s, char c);\nchar *cstr_trim(char *s);\nchar *cstr_upper(char *s);\n{extra}\n#endif\n"
        )
    };
    let source = |extra: &str| {
        format!(
            "#include \"cstr.h\"\n\n#include <ctype.h>\n#include <string.h>\n\n\
             size_t cstr_count(const char *s, char c) {{\n    size_t n = 0;\n    for (; *s; s++) n += *s == c;\n    return n;\n}}\n\n\
             char *cstr_trim(char *s) {{\n    size_t len = strlen(s);\n    while (len > 0 && s[len - 1] == ' ') s[--len] = '\\0';\n    size_t at = strspn(s, \" \");\n    memmove(s, s + at, len - at + 1);\n    return s;\n}}\n\n\
             char *cstr_upper(char *s) {{\n    for (char *p = s; *p; p++) *p = (char)toupper((unsigned char)*p);\n    return s;\n}}\n{extra}"
        )
    };
    let reverse = "\nchar *cstr_reverse(char *s) {\n    for (size_t i = 0, j = strlen(s); i + 1 < j; i++, j--) {\n        char c = s[i];\n        s[i] = s[j - 1];\n        s[j - 1] = c;\n    }\n    return s;\n}\n";
    let check = |call: &str, want: &str| {
        format!(
            "#include <stdio.h>\n#include <string.h>\n\n#include \"cstr.h\"\n\nint main(void) {{\n    char buf[] = \"  ab c  \";\n    if (strcmp({call}, \"{want}\") != 0) {{\n        fprintf(stderr, \"got '%s'\\n\", buf);\n        return 1;\n    }}\n    return 0;\n}}\n"
        )
    };
    let count = "#include <stdio.h>\n\n#include \"cstr.h\"\n\nint main(void) {\n    return cstr_count(\"banana\", 'a') == 3 ? 0 : 1;\n}\n";
    let fx = fixture(
        &repos.join("forge-fixtures/cbuild"),
        "2024-03-01T00:00:00Z",
        &[
            ("configure.ac", configure),
            ("Makefile.am", &makefile("")),
            ("src/cstr.h", &header("")),
            ("src/cstr.c", &source("")),
            ("tests/test_trim.c", &check("cstr_trim(buf)", "ab c")),
            ("tests/test_count.c", count),
            ("tests/test_upper.c", &check("cstr_upper(buf)", "  AB C  ")),
        ],
        &[
            ("Makefile.am", &makefile("tests/test_reverse")),
            ("tests/test_reverse.c", &check("cstr_reverse(cstr_trim(buf))", "c ba")),
            // A test the test patch rewrites (it passed at the base, in its old version).
            ("tests/test_upper.c", &check("cstr_upper(cstr_trim(buf))", "AB C")),
        ],
        &[
            ("src/cstr.h", &header("/* Reverses s in place; returns s. */\nchar *cstr_reverse(char *s);\n")),
            ("src/cstr.c", &source(reverse)),
        ],
    );
    let inst = instance("forge-fixtures", "cbuild", 5, fx);
    let out = validate(&[&inst], &repos, &tmp.path().join("out"), None);
    let r = &out[0];
    accepted(r);
    assert_eq!(keys(&r.fixed_tests), ["tests/test_reverse"], "{:?}", r.fixed_tests);
    assert!(r.p2p_tests.is_empty(), "{:?}", r.p2p_tests);
    let l = labels(r);
    assert_eq!(keys(&l.not_run_in_test), ["tests/test_count", "tests/test_trim", "tests/test_upper"], "{l:?}");
    let t = &l.truncated[0];
    assert_eq!(
        (t.phase, t.cause, t.reported, t.missing, t.tolerated),
        (Phase::Test, TruncationCause::CompileFailure, 0, 3, true),
        "{t:?}"
    );
}

#[test]
fn evidence_holds_for_a_good_instance_and_catches_a_gold_patch_that_needs_a_test_file() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = make_repos(tmp.path());
    let fixtures = read_records(&root().join("data/fixtures/instances.jsonl"));
    let good = fixtures.iter().find(|r| r.instance_id == "forge-fixtures__gostack-1").unwrap();
    // The fix patch brings a test helper the new test calls: validation's fix run has it, but
    // evaluation drops a prediction's test files, so the gold patch cannot resolve there.
    let stack = |extra: &str| {
        format!(
            "package gohelp\n\ntype Stack struct{{ items []int }}\n\nfunc (s *Stack) Push(v int) {{ s.items = append(s.items, v) }}\n\nfunc (s *Stack) Len() int {{ return len(s.items) }}\n{extra}"
        )
    };
    let base_test = "package gohelp\n\nimport \"testing\"\n\nfunc TestLen(t *testing.T) {\n\tvar s Stack\n\tif s.Len() != 0 {\n\t\tt.Fatal(\"len\")\n\t}\n}\n";
    let peek_test = "package gohelp\n\nimport \"testing\"\n\nfunc TestPeek(t *testing.T) {\n\tvar s Stack\n\ts.Push(3)\n\tmustEqual(t, s.Peek(), 3)\n}\n";
    let helper = "package gohelp\n\nimport \"testing\"\n\nfunc mustEqual(t *testing.T, got, want int) {\n\tif got != want {\n\t\tt.Fatalf(\"got %d, want %d\", got, want)\n\t}\n}\n";
    let fx = fixture(
        &repos.join("forge-fixtures/gohelp"),
        "2024-03-01T00:00:00Z",
        &[("go.mod", "module example.com/gohelp\n\ngo 1.21\n"), ("stack.go", &stack("")), ("stack_test.go", base_test)],
        &[("peek_test.go", peek_test)],
        &[
            ("stack.go", &stack("\nfunc (s *Stack) Peek() int { return s.items[len(s.items)-1] }\n")),
            ("helper_test.go", helper),
        ],
    );
    let bad = instance("forge-fixtures", "gohelp", 3, fx);
    let dir = tmp.path().join("out");
    let out = validate_with(&[good, &bad], &repos, &dir, None, &["--evidence-runs", "2"]);
    let get =
        |n: u64| out.iter().find(|r| r.number == n && r.repo == if n == 1 { "gostack" } else { "gohelp" }).unwrap();
    let (g, b) = (get(1), get(3));
    accepted(g);
    accepted(b);
    let evidence = |r: &Instance| r.swe_forge.as_ref().unwrap().evidence.clone().unwrap_or_else(|| panic!("{r:?}"));
    let e = evidence(g);
    assert_eq!((e.gold_runs, e.gold_resolved), (2, 2), "{e:?}");
    let controls: Vec<(&str, bool, usize)> =
        e.controls.iter().map(|c| (c.name.as_str(), c.resolved, c.f2p_passed.len())).collect();
    assert_eq!(controls, [("empty_patch", false, 0), ("test_patch_alone", false, 0)]);
    assert!(e.complete());
    // The evaluation logs are kept beside the validation's.
    let logs = dir.join("validated.work/evidence/logs/gold-1/forge-fixtures__gostack-1");
    assert!(logs.join("eval.log").is_file(), "{}", logs.display());
    let e = evidence(b);
    assert_eq!((e.gold_runs, e.gold_resolved), (2, 0), "{e:?}");
    assert!(!e.complete());
    let warnings = &b.swe_forge.as_ref().unwrap().warnings;
    assert!(
        warnings.iter().any(|w| w.starts_with("evidence: gold run 1 through evaluation: unresolved")),
        "{warnings:?}"
    );

    // curate --require-evidence keeps the instance whose evidence holds, and the card says why.
    let curated = tmp.path().join("curated.jsonl");
    let o = swe_forge(&[
        "curate",
        "--dataset",
        dir.join("validated.jsonl").to_str().unwrap(),
        "--out",
        curated.to_str().unwrap(),
        "--kept-only",
        "--require-evidence",
        "--no-dedup",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("1 without complete evidence"), "{}", text(&o));
    let kept: Vec<String> = read_records(&curated).into_iter().map(|r| r.instance_id).collect();
    assert_eq!(kept, ["forge-fixtures__gostack-1"]);
    let card = tmp.path().join("card");
    let o = swe_forge(&[
        "report",
        "--dataset",
        dir.join("validated.jsonl").to_str().unwrap(),
        "--out",
        card.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let md = std::fs::read_to_string(card.join("README.md")).unwrap();
    assert!(
        md.contains(
            "| complete: the gold patch resolved every time through evaluation, both negative controls held, every layout variant held | 1 |"
        ),
        "{md}"
    );
    assert!(md.contains("| the gold patch did not always resolve through evaluation | 1 |"), "{md}");
}

/// A GoogleTest suite and a Catch2 suite, each registered as one ctest target (`add_test(NAME unit
/// COMMAND unit_tests)`), are graded case by case: the gtest binary writes its report under
/// `GTEST_OUTPUT`, the Catch2 binary through the recipe's test launcher, and FAIL_TO_PASS names
/// the cases the test patch adds, PASS_TO_PASS the cases that passed all along, never the targets.
/// The same suites as two meson tests are graded the same way (the launcher as `meson test`'s
/// wrapper, the tests' commands from `meson introspect`).
#[test]
fn a_gtest_and_a_catch2_suite_each_one_ctest_target_are_graded_by_their_cases() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = tmp.path().join("repos");
    let cmake = "cmake_minimum_required(VERSION 3.16)\nproject(ops CXX)\nset(CMAKE_CXX_STANDARD 17)\n\
                 add_library(ops src/ops.cpp)\ntarget_include_directories(ops PUBLIC src)\n\n\
                 enable_testing()\nfind_package(GTest REQUIRED)\nadd_executable(unit_tests tests/ops_test.cpp)\n\
                 target_link_libraries(unit_tests ops GTest::gtest_main)\nadd_test(NAME unit COMMAND unit_tests)\n\
                 find_package(Catch2 3 REQUIRED)\nadd_executable(catch_tests tests/ops_catch.cpp)\n\
                 target_link_libraries(catch_tests ops Catch2::Catch2WithMain)\nadd_test(NAME catch COMMAND catch_tests)\n";
    let header = "#pragma once\n\nint add(int a, int b);\nint sub(int a, int b);\nint mul(int a, int b);\n";
    let source = |mul: &str| {
        format!(
            "#include \"ops.h\"\n\nint add(int a, int b) {{ return a + b; }}\nint sub(int a, int b) {{ return a - b; }}\nint mul(int a, int b) {{ return {mul}; }}\n"
        )
    };
    let tests = |extra: &str| {
        format!(
            "#include <gtest/gtest.h>\n\n#include \"ops.h\"\n\nTEST(Ops, Adds) {{ EXPECT_EQ(add(2, 3), 5); }}\n\
             TEST(Ops, Subtracts) {{ EXPECT_EQ(sub(2, 3), -1); }}\n{extra}"
        )
    };
    let catch2 = |extra: &str| {
        format!(
            "#include <catch2/catch_test_macros.hpp>\n\n#include \"ops.h\"\n\nTEST_CASE(\"adds\") {{ REQUIRE(add(2, 3) == 5); }}\n{extra}"
        )
    };
    // The same suites built by CMake (one ctest target each) and by meson (one meson test each,
    // which `meson test --wrapper` runs through the launcher).
    let meson = "project('ops', 'cpp', default_options: ['cpp_std=c++17'])\n\
                 ops = static_library('ops', 'src/ops.cpp', include_directories: 'src')\n\
                 gtest = dependency('gtest', main: true)\ncatch2 = dependency('catch2-with-main')\n\
                 test('unit', executable('unit_tests', 'tests/ops_test.cpp', link_with: ops, include_directories: 'src', dependencies: gtest))\n\
                 test('catch', executable('catch_tests', 'tests/ops_catch.cpp', link_with: ops, include_directories: 'src', dependencies: catch2))\n";
    let built_by = |name: &str, build_file: (&str, &str)| {
        let fx = fixture(
            &repos.join("forge-fixtures").join(name),
            "2024-03-01T00:00:00Z",
            &[
                build_file,
                ("src/ops.h", header),
                ("src/ops.cpp", &source("a + b")),
                ("tests/ops_test.cpp", &tests("")),
                ("tests/ops_catch.cpp", &catch2("")),
            ],
            &[
                ("tests/ops_test.cpp", &tests("TEST(Ops, Multiplies) { EXPECT_EQ(mul(2, 3), 6); }\n")),
                (
                    "tests/ops_catch.cpp",
                    &catch2("TEST_CASE(\"multiplies\") { SECTION(\"small\") { REQUIRE(mul(2, 3) == 6); } }\n"),
                ),
            ],
            &[("src/ops.cpp", &source("a * b"))],
        );
        instance("forge-fixtures", name, 3, fx)
    };
    let inst = built_by("gtestone", ("CMakeLists.txt", cmake));
    let by_meson = built_by("gtestmeson", ("meson.build", meson));
    let out = validate_with(
        &[&inst, &by_meson],
        &repos,
        &tmp.path().join("out"),
        None,
        &["--evidence-runs", "0", "--hunk-runs", "0", "--layout-variants", "0"],
    );
    for r in &out {
        accepted(r);
        assert_eq!(keys(&r.fixed_tests), ["Ops.Multiplies", "multiplies"], "{}: {:?}", r.instance_id, r.swe_forge);
        assert_eq!(keys(&r.p2p_tests), ["Ops.Adds", "Ops.Subtracts", "adds"], "{}: {:?}", r.instance_id, r.p2p_tests);
        let warnings = &r.swe_forge.as_ref().unwrap().warnings;
        assert!(
            warnings.iter().any(|w| w.contains("fix run: 2 ctest target(s) read as the 5 test case(s)")),
            "{}: {warnings:?}",
            r.instance_id
        );
    }
}
