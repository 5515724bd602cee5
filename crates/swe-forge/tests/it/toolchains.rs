//! The toolchain of a pull request's own time, with no override, on the real engine: a Maven
//! project of 2012 whose pom asks for source 1.6 gets JDK 8 (JDK 21 no longer compiles it); a
//! Node project whose `.nvmrc` asks for 16 gets Node 16 from the npm registry; a project whose
//! setup (or whose suite, in the base run) fails on today's Node in a way that names the toolchain
//! gets the next older version, both attempts in the provenance; C++ that needs MINSIGSTKSZ to be a
//! constant, an allocator today's libstdc++ rejects or a build's Python 2 script gets bullseye's C
//! library, GCC and Python 2; a C project with only a Makefile runs its `test` target; a C project
//! gets the Debian packages its CI installs.
//! Node 16 and 18 share one packages image; JDK 8 is the image the revalidate tests build too.
use std::path::Path;

use swe_forge_core::{Instance, ToolchainChoice, ValidationStatus};
use swe_forge_test_support::{git, git_at, record};

use crate::environments::{in_image, validate};

/// A repository at `dir` whose one commit (made at `date`) holds `files`; returns the commit,
/// the test patch and the fix patch (`test` and `fix` files changed).
pub(crate) fn fixture(
    dir: &Path,
    date: &str,
    files: &[(&str, &str)],
    test: &[(&str, &str)],
    fix: &[(&str, &str)],
) -> (String, String, String) {
    std::fs::create_dir_all(dir).unwrap();
    git(dir, &["init", "-q"]);
    let write = |files: &[(&str, &str)]| {
        for (path, content) in files {
            let p = dir.join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, content).unwrap();
        }
    };
    write(files);
    git(dir, &["add", "-A"]);
    git_at(dir, date, &["commit", "-qm", "base"]);
    let base = git(dir, &["rev-parse", "HEAD"]);
    let diff = |files: &[(&str, &str)]| {
        write(files);
        git(dir, &["add", "-A"]);
        let d = git(dir, &["diff", "--cached", "--binary"]) + "\n";
        git(dir, &["reset", "-q", "--hard"]);
        d
    };
    (base.clone(), diff(test), diff(fix))
}

pub(crate) fn instance(
    org: &str,
    repo: &str,
    number: u64,
    (sha, test_patch, fix_patch): (String, String, String),
) -> Instance {
    let mut r = record(org, repo, number);
    r.base.sha = sha;
    r.test_patch = test_patch;
    r.fix_patch = fix_patch;
    r
}

pub(crate) fn choice(r: &Instance) -> &ToolchainChoice {
    let prov = r.swe_forge.as_ref().unwrap().provenance.as_ref().unwrap_or_else(|| panic!("{r:?}"));
    prov.toolchain_choice.as_ref().unwrap_or_else(|| panic!("{prov:?}"))
}

pub(crate) fn accepted(r: &Instance) {
    let m = r.swe_forge.as_ref().unwrap();
    assert_eq!(m.status, ValidationStatus::Accepted, "{:?}", m.rejections);
}

#[test]
fn a_pom_asking_for_source_6_gets_jdk_8_with_no_override() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = tmp.path().join("repos");
    let j = crate::support::java_fixture("legacy", "1.6", "4.12");
    let fx = fixture(
        &repos.join("forge-fixtures/legacy"),
        "2012-06-01T00:00:00Z",
        &[
            ("pom.xml", &j.pom),
            ("src/main/java/fixtures/Half.java", &j.half_base),
            ("src/test/java/fixtures/JavaVersionTest.java", j.version_test),
        ],
        &[("src/test/java/fixtures/HalfTest.java", j.half_test)],
        &[("src/main/java/fixtures/Half.java", &j.half_fixed)],
    );
    let inst = instance("forge-fixtures", "legacy", 3, fx);
    let out = validate(&[&inst], &repos, &tmp.path().join("out"), None);
    let r = &out[0];
    accepted(r);
    assert!(r.p2p_tests.keys().any(|k| k.contains("JavaVersionTest")), "ran on Java 8: {:?}", r.p2p_tests.keys());
    assert!(r.f2p_tests.keys().any(|k| k.contains("HalfTest")), "{:?}", r.f2p_tests.keys());
    let c = choice(r);
    assert_eq!((c.family.as_str(), c.version.as_str(), c.toolchain.as_str()), ("java", "8", "java8"), "{c:?}");
    assert!(c.reason.contains("pom.xml maven.compiler.source = 1.6") && c.reason.contains("2012-06-01"), "{c:?}");
    assert!(c.attempts.is_empty() && !c.overridden, "{c:?}");
    let prov = r.swe_forge.as_ref().unwrap().provenance.as_ref().unwrap();
    assert!(prov.toolchain_image.contains("toolchain-java8"), "{prov:?}");
    assert_eq!(prov.requested_versions["pom.xml maven.compiler.target"], "1.6");
    assert!(prov.toolchain_versions.contains("1.8.0"), "{}", prov.toolchain_versions);
}

/// A mocha project; `version.test.js` passes only on Node `major`, `sum.test.js` is the test
/// patch's (failing before the fix).
fn node_fixture(dir: &Path, date: &str, major: u32, extra: &[(&str, &str)]) -> (String, String, String) {
    let package = r#"{
  "name": "legacy-node",
  "version": "1.0.0",
  "scripts": { "test": "mocha" },
  "devDependencies": { "mocha": "10.2.0" }
}
"#;
    let sum = |body: &str| format!("module.exports = function sum(a, b) {{\n  return {body};\n}};\n");
    let version_test = format!(
        "const assert = require('assert');\n\ndescribe('node', function () {{\n  it('is version {major}', function () {{\n    assert.strictEqual(process.versions.node.split('.')[0], '{major}');\n  }});\n}});\n"
    );
    let sum_test = "const assert = require('assert');\nconst sum = require('../sum');\n\ndescribe('sum', function () {\n  it('adds', function () {\n    assert.strictEqual(sum(2, 3), 5);\n  });\n});\n";
    let sum_js = sum("a - b");
    let mut files: Vec<(&str, &str)> =
        vec![("package.json", package), ("sum.js", &sum_js), ("test/version.test.js", &version_test)];
    files.extend_from_slice(extra);
    fixture(dir, date, &files, &[("test/sum.test.js", sum_test)], &[("sum.js", &sum("a + b"))])
}

#[test]
fn an_nvmrc_asking_for_node_16_gets_node_16_from_the_npm_registry() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = tmp.path().join("repos");
    let fx = node_fixture(&repos.join("forge-fixtures/oldnode"), "2024-01-01T00:00:00Z", 16, &[(".nvmrc", "v16\n")]);
    let inst = instance("forge-fixtures", "oldnode", 5, fx);
    let out = validate(&[&inst], &repos, &tmp.path().join("out"), None);
    let r = &out[0];
    accepted(r);
    assert!(r.p2p_tests.keys().any(|k| k.contains("is version 16")), "{:?}", r.p2p_tests.keys());
    let c = choice(r);
    assert_eq!((c.family.as_str(), c.version.as_str(), c.toolchain.as_str()), ("node", "16", "node16"), "{c:?}");
    assert!(c.reason.contains(".nvmrc = v16"), "{c:?}");
    let prov = r.swe_forge.as_ref().unwrap().provenance.as_ref().unwrap();
    assert!(prov.toolchain_versions.starts_with("v16.20.2\n8.19.4"), "{}", prov.toolchain_versions);
    // The tarballs were fetched with the CA bundle, which is in no image, nor are the tarballs.
    let (found, _) = in_image(
        &prov.toolchain_image,
        "ls /run/swe-forge /tmp/node.tgz /tmp/npm.tgz 2>/dev/null; env | grep -c -i -e ca_bundle -e ssl_cert -e extra_ca",
    );
    assert_eq!(found, "0", "{found}");

    // An override that names the recipe (as the devset's do, for their test commands) says nothing
    // of its version: the .nvmrc still decides.
    let pipeline = tmp.path().join("pipeline.toml");
    std::fs::write(
        &pipeline,
        "name = \"named\"\n[source]\nrecords = \"-\"\nrepos = \"-\"\n[output]\nvalidated = \"-\"\n\
         [overrides.\"forge-fixtures/oldnode\"]\nrecipe = \"js-mocha\"\n",
    )
    .unwrap();
    let named = validate(&[&inst], &repos, &tmp.path().join("named"), Some(&pipeline));
    accepted(&named[0]);
    let c = choice(&named[0]);
    assert_eq!((c.toolchain.as_str(), c.overridden), ("node16", false), "{c:?}");
    assert!(named[0].p2p_tests.keys().any(|k| k.contains("is version 16")), "{:?}", named[0].p2p_tests.keys());
}

#[test]
fn a_setup_that_fails_because_of_the_toolchain_gets_the_next_version() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = tmp.path().join("repos");
    // Nothing pins a version and the commit is of 2024: Debian's Node 20 first. Its install
    // fails as webpack 4 does on Node 17 and later; Node 18 is the next older version here.
    let preinstall = r#"{
  "name": "legacy-node",
  "version": "1.0.0",
  "scripts": {
    "preinstall": "node -e \"if (+process.versions.node.split('.')[0] >= 19) { console.error('Error: error:0308010C:digital envelope routines::unsupported'); process.exit(1) }\"",
    "test": "mocha"
  },
  "devDependencies": { "mocha": "10.2.0" }
}
"#;
    let fx = node_fixture(
        &repos.join("forge-fixtures/webpack4"),
        "2024-01-01T00:00:00Z",
        18,
        &[("package.json", preinstall)],
    );
    let inst = instance("forge-fixtures", "webpack4", 7, fx);
    let out = validate(&[&inst], &repos, &tmp.path().join("out"), None);
    let r = &out[0];
    accepted(r);
    assert!(r.p2p_tests.keys().any(|k| k.contains("is version 18")), "{:?}", r.p2p_tests.keys());
    let c = choice(r);
    assert_eq!(c.toolchain, "node18", "{c:?}");
    assert_eq!(c.attempts.len(), 1, "{c:?}");
    assert_eq!(c.attempts[0].toolchain, "node");
    assert!(c.attempts[0].error.contains("digital envelope routines::unsupported"), "{c:?}");
    assert!(c.reason.starts_with("nothing pins a version"), "{c:?}");
    // A later run over the same state store (a resumed or extended run, another process) starts
    // the repository's next instance at the version the search found: no failed attempt again.
    let mut later = inst.clone();
    later.number = 8;
    later.instance_id = later.expected_id();
    let out = validate(&[&inst, &later], &repos, &tmp.path().join("out"), None);
    let r = out.iter().find(|r| r.number == 8).unwrap();
    accepted(r);
    let c = choice(r);
    assert_eq!((c.toolchain.as_str(), c.attempts.len()), ("node18", 0), "{c:?}");
    assert!(c.reason.contains("found by the search of an earlier instance"), "{c:?}");
}

#[test]
fn a_c_project_with_only_a_makefile_runs_its_test_target() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = tmp.path().join("repos");
    let makefile = "CC ?= cc\n\nall: tests\n\ntests: calc.c tests.c\n\t$(CC) -o tests calc.c tests.c\n\ntest: tests\n\t./tests\n\n.PHONY: all test\n";
    let calc =
        |sub: &str| format!("int add(int a, int b) {{ return a + b; }}\nint sub(int a, int b) {{ return {sub}; }}\n");
    let tests = |checks: &str| {
        format!(
            "#include <stdio.h>\n\nint add(int, int);\nint sub(int, int);\nstatic int failed;\n\n\
static void check(const char *name, int ok) {{\n    printf(\"%s: %s\\n\", ok ? \"PASS\" : \"FAIL\", name);\n    failed |= !ok;\n}}\n\n\
int main(void) {{\n{checks}    return failed;\n}}\n"
        )
    };
    let fx = fixture(
        &repos.join("forge-fixtures/plainmake"),
        "2024-01-01T00:00:00Z",
        &[
            ("Makefile", makefile),
            ("calc.c", &calc("a + b")),
            ("tests.c", &tests("    check(\"add\", add(2, 3) == 5);\n")),
        ],
        &[("tests.c", &tests("    check(\"add\", add(2, 3) == 5);\n    check(\"sub\", sub(5, 3) == 2);\n"))],
        &[("calc.c", &calc("a - b"))],
    );
    let inst = instance("forge-fixtures", "plainmake", 2, fx);
    let out = validate(&[&inst], &repos, &tmp.path().join("out"), None);
    let r = &out[0];
    accepted(r);
    assert_eq!(r.f2p_tests.keys().collect::<Vec<_>>(), ["sub"]);
    assert_eq!(r.p2p_tests.keys().collect::<Vec<_>>(), ["add"]);
    let prov = r.swe_forge.as_ref().unwrap().provenance.as_ref().unwrap();
    assert_eq!(prov.recipe, "c-make");
    let c = choice(r);
    assert_eq!((c.family.as_str(), c.toolchain.as_str()), ("c", "cfamily"), "{c:?}");
}

/// A C library whose `make check` runs shell scripts that print no per-test result: each run is
/// one test, `all tests`, graded by the command's exit code, and the record says so.
#[test]
fn a_suite_with_no_per_test_output_is_graded_by_its_exit_code() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = tmp.path().join("repos");
    let makefile = "CC ?= cc\n\nall: calc\n\ncalc: calc.c main.c\n\t$(CC) -o calc calc.c main.c\n\ncheck: calc\n\tsh tests/run.sh\n\n.PHONY: all check\n";
    let calc =
        |sub: &str| format!("int add(int a, int b) {{ return a + b; }}\nint sub(int a, int b) {{ return {sub}; }}\n");
    let main = "#include <stdio.h>\n#include <stdlib.h>\n\nint add(int, int);\nint sub(int, int);\n\nint main(int argc, char **argv) {\n    int a = atoi(argv[2]), b = atoi(argv[3]);\n    printf(\"%d\\n\", argv[1][0] == '+' ? add(a, b) : sub(a, b));\n    return 0;\n}\n";
    // Quiet on success, as many such scripts are: nothing a parser could read as a test.
    let run = |checks: &str| format!("#!/bin/sh\nset -e\n{checks}");
    let add = "test \"$(./calc + 2 3)\" = 5\n";
    let sub = "test \"$(./calc - 5 3)\" = 2\n";
    let fx = fixture(
        &repos.join("forge-fixtures/quietcheck"),
        "2024-01-01T00:00:00Z",
        &[("Makefile", makefile), ("calc.c", &calc("a + b")), ("main.c", main), ("tests/run.sh", &run(add))],
        &[("tests/run.sh", &run(&format!("{add}{sub}")))],
        &[("calc.c", &calc("a - b"))],
    );
    let inst = instance("forge-fixtures", "quietcheck", 3, fx);
    let out =
        crate::environments::validate_with(&[&inst], &repos, &tmp.path().join("out"), None, &["--evidence-runs", "2"]);
    let r = &out[0];
    accepted(r);
    assert_eq!(r.f2p_tests.keys().collect::<Vec<_>>(), [swe_forge_core::ALL_TESTS]);
    assert!(r.p2p_tests.is_empty(), "{:?}", r.p2p_tests);
    let m = r.swe_forge.as_ref().unwrap();
    assert!(m.labels.as_ref().is_some_and(|l| l.exit_code_graded && l.no_tests_ran.is_empty()), "{:?}", m.labels);
    // Each of the three phases' runs held that one test.
    let phases: Vec<u64> = m.runs.iter().take(3).map(|r| r.tests).collect();
    assert_eq!(phases, [1, 1, 1], "{:?}", m.runs);
    // Its evidence went through evaluation's path, graded the same way: the gold patch resolves,
    // the controls do not.
    let evidence = m.evidence.as_ref().expect("evidence");
    assert_eq!((evidence.gold_runs, evidence.gold_resolved), (2, 2), "{evidence:?}");
    assert_eq!(evidence.controls.len(), 2, "{evidence:?}");
    assert!(evidence.controls.iter().all(|c| !c.resolved), "{evidence:?}");
}

#[test]
fn cpp_code_that_needs_a_constant_minsigstksz_gets_an_older_c_library() {
    // Sized by MINSIGSTKSZ at file scope, as Catch2 2 and doctest did: glibc 2.34 made it a
    // sysconf() call, so this compiles on bullseye's glibc 2.31 only.
    let c = cpp_of_its_time_on_an_older_c_library(
        "sigstack",
        "#include <csignal>\n\nstatic char altStackMem[MINSIGSTKSZ];\n",
        "sizeof altStackMem > 0",
    );
    assert!(c.attempts[0].error.contains("altStackMem") || c.attempts[0].error.contains("MINSIGSTKSZ"), "{c:?}");
}

#[test]
fn cpp_code_whose_allocator_todays_libstdcxx_rejects_gets_an_older_compiler() {
    // An allocator that inherits std::allocator's `rebind` (nlohmann/json's tests before 3.11.3):
    // libstdc++ 13 and later stop the build with a static assertion; bullseye's GCC 10 builds it.
    let c = cpp_of_its_time_on_an_older_c_library(
        "allocator",
        "#include <memory>\n#include <vector>\n\ntemplate <class T> struct bad_allocator : std::allocator<T> {};\n\
static std::vector<int, bad_allocator<int>> kept(1);\n",
        "kept.size() == 1",
    );
    assert!(c.attempts[0].error.contains("rebind_alloc<A::value_type> must be A"), "{c:?}");
}

/// A CMake project of 2019 (as Catch2 2 and doctest users were) whose test file starts with
/// `prelude`, which today's C library or compiler rejects; `stack` checks `kept`, the patches add
/// `sub`. Validated with no override, it must be accepted on bullseye after one failed attempt on
/// today's toolchain, its tests run under bullseye's CMake (3.18, older than ctest's
/// `--test-dir`); returns the choice.
fn cpp_of_its_time_on_an_older_c_library(name: &str, prelude: &str, kept: &str) -> ToolchainChoice {
    let r = cpp_of_its_time(name, "", prelude, kept);
    let c = choice(&r);
    assert_eq!((c.toolchain.as_str(), c.attempts.len()), ("cfamily-bullseye", 1), "{c:?}");
    assert_eq!(c.attempts[0].toolchain, "cfamily");
    let prov = r.swe_forge.as_ref().unwrap().provenance.as_ref().unwrap();
    assert!(prov.base_image.starts_with("swe-forge/base:bullseye-"), "{prov:?}");
    assert!(prov.toolchain_versions.contains("(Debian 10."), "{}", prov.toolchain_versions);
    c.clone()
}

/// The project of [`cpp_of_its_time_on_an_older_c_library`], its CMakeLists.txt starting with
/// `flags`, validated with no override: the accepted record, `sub` fixed and `stack` kept.
fn cpp_of_its_time(name: &str, flags: &str, prelude: &str, kept: &str) -> Instance {
    let tmp = tempfile::tempdir().unwrap();
    let repos = tmp.path().join("repos");
    let cmake = |tests: &str| {
        format!(
            "cmake_minimum_required(VERSION 3.5)\nproject({name} CXX)\n{flags}enable_testing()\nadd_executable(tests calc.cpp tests.cpp)\n{tests}"
        )
    };
    let calc = |sub: &str| format!("int sub(int a, int b) {{ return {sub}; }}\n");
    let tests = |checks: &str| {
        format!(
            "{prelude}#include <cstring>\n\nint sub(int, int);\n\n\
int main(int argc, char **argv) {{\n    const char *name = argc > 1 ? argv[1] : \"\";\n\
    if (!std::strcmp(name, \"stack\")) return {kept} ? 0 : 1;\n{checks}    return 2;\n}}\n"
        )
    };
    let fx = fixture(
        &repos.join("forge-fixtures").join(name),
        "2019-06-01T00:00:00Z",
        &[
            ("CMakeLists.txt", &cmake("add_test(NAME stack COMMAND tests stack)\n")),
            ("calc.cpp", &calc("a + b")),
            ("tests.cpp", &tests("")),
        ],
        &[
            (
                "CMakeLists.txt",
                &cmake("add_test(NAME stack COMMAND tests stack)\nadd_test(NAME sub COMMAND tests sub)\n"),
            ),
            ("tests.cpp", &tests("    if (!std::strcmp(name, \"sub\")) return sub(5, 3) == 2 ? 0 : 1;\n")),
        ],
        &[("calc.cpp", &calc("a - b"))],
    );
    let inst = instance("forge-fixtures", name, 4, fx);
    let out = validate(&[&inst], &repos, &tmp.path().join("out"), None);
    let r = out.into_iter().next().unwrap();
    accepted(&r);
    assert_eq!(r.f2p_tests.keys().collect::<Vec<_>>(), ["sub"]);
    assert_eq!(r.p2p_tests.keys().collect::<Vec<_>>(), ["stack"]);
    r
}

#[test]
fn a_build_that_runs_a_python_2_script_gets_bullseye_with_python_2() {
    // jsoncpp of 2014: `find_package(PythonInterp 2.6)` and a test script of Python 2 run by the
    // build; today's toolchain has only Python 3, on which the script is a syntax error.
    let r = cpp_of_its_time(
        "python2",
        "find_package(PythonInterp 2.6 REQUIRED)\n\
file(WRITE ${CMAKE_BINARY_DIR}/check.py \"try:\\n    open('/none')\\nexcept IOError, e:\\n    print 'checked'\\n\")\n\
add_custom_target(check_py ALL ${PYTHON_EXECUTABLE} ${CMAKE_BINARY_DIR}/check.py)\n",
        "",
        "true",
    );
    let c = choice(&r);
    assert_eq!((c.toolchain.as_str(), c.attempts.len()), ("cfamily-bullseye", 1), "{c:?}");
    assert!(c.attempts[0].error.contains("SyntaxError: multiple exception types must be parenthesized"), "{c:?}");
}

/// A test patch whose CMake file calls what only the fix's includes (`check_cxx_compiler_flag`, the
/// fix adding `include(CheckCXXCompilerFlag)`, as toml11's first PR did): CMake cannot configure the
/// test run's tree, so none of its executables is built, and the environment's, built from the
/// base, must not run in their place and pass the test the test patch made stricter: the test is
/// not run, and set apart.
#[test]
fn a_test_run_cmake_cannot_configure_does_not_run_the_last_builds_executables() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = tmp.path().join("repos");
    let root = |include: &str| {
        format!(
            "cmake_minimum_required(VERSION 3.10)\nproject(strict CXX)\n{include}enable_testing()\nadd_library(calc calc.cpp)\nadd_subdirectory(tests)\n"
        )
    };
    let tests_cmake = |check: &str| {
        format!(
            "{check}add_executable(tests tests.cpp)\ntarget_link_libraries(tests calc)\nadd_test(NAME sub COMMAND tests)\n"
        )
    };
    let tests = |checks: &str| format!("int sub(int, int);\nint main() {{ return sub(5, 3) == 2{checks} ? 0 : 1; }}\n");
    let fx = fixture(
        &repos.join("forge-fixtures/strict"),
        "2018-03-01T00:00:00Z",
        &[
            ("CMakeLists.txt", &root("")),
            ("calc.cpp", "int sub(int a, int b) { return a > b ? a - b : 0; }\n"),
            ("tests/CMakeLists.txt", &tests_cmake("")),
            ("tests/tests.cpp", &tests("")),
        ],
        &[
            ("tests/CMakeLists.txt", &tests_cmake("check_cxx_compiler_flag(-Wall HAS_WALL)\n")),
            ("tests/tests.cpp", &tests(" && sub(3, 5) == -2")),
        ],
        &[
            ("CMakeLists.txt", &root("include(CheckCXXCompilerFlag)\n")),
            ("calc.cpp", "int sub(int a, int b) { return a - b; }\n"),
        ],
    );
    let inst = instance("forge-fixtures", "strict", 6, fx);
    let out = validate(&[&inst], &repos, &tmp.path().join("out"), None);
    let r = &out[0];
    // `sub` passed at the base and did not run with the test patch (`Not Run`, not the last
    // build's binary, which would have passed): set apart, so no test is fixed. (The test run
    // that reported nothing is truncated too: a CMake file that does not configure is no
    // compile failure the truncation rule knows.)
    let meta = r.swe_forge.as_ref().unwrap();
    use swe_forge_core::RejectReason::{FixedTestsPassedAtBase, TruncatedRun};
    assert_eq!(crate::pipeline::reasons(r), [FixedTestsPassedAtBase, TruncatedRun], "{meta:?}");
    let labels = meta.labels.as_ref().unwrap();
    assert_eq!(labels.not_run_in_test.keys().collect::<Vec<_>>(), ["sub"], "{labels:?}");
}

#[test]
fn tests_a_cmake_build_runs_as_its_own_steps_run_in_every_phase_and_are_read_from_their_lines() {
    // jsoncpp before 2019: no `add_test`, so ctest finds nothing; the test runner is a POST_BUILD
    // step of its executable and prints `Testing <name>: OK|FAILED`. A step that runs only when
    // the executable is linked again would say nothing in the base run (nothing changed since
    // the setup): every phase builds from clean and reports every test.
    let tmp = tempfile::tempdir().unwrap();
    let repos = tmp.path().join("repos");
    let cmake = "cmake_minimum_required(VERSION 3.5)\nproject(steps CXX)\nadd_executable(tests calc.cpp tests.cpp)\n\
add_custom_command(TARGET tests POST_BUILD COMMAND tests)\n";
    let calc = |sub: &str| format!("int sub(int a, int b) {{ return {sub}; }}\n");
    let tests = |checks: &str| {
        format!(
            "#include <cstdio>\n\nint sub(int, int);\nstatic int failed = 0;\n\
static void check(const char *name, bool ok) {{ std::printf(\"Testing %s: %s\\n\", name, ok ? \"OK\" : \"FAILED\"); failed += !ok; }}\n\n\
int main() {{\n    check(\"Calc/stack\", 1 + 1 == 2);\n{checks}    return failed;\n}}\n"
        )
    };
    let fx = fixture(
        &repos.join("forge-fixtures").join("buildsteps"),
        "2015-03-01T00:00:00Z",
        &[("CMakeLists.txt", cmake), ("calc.cpp", &calc("a + b")), ("tests.cpp", &tests(""))],
        &[("tests.cpp", &tests("    check(\"Calc/sub\", sub(5, 3) == 2);\n"))],
        &[("calc.cpp", &calc("a - b"))],
    );
    let inst = instance("forge-fixtures", "buildsteps", 5, fx);
    let r = validate(&[&inst], &repos, &tmp.path().join("out"), None).into_iter().next().unwrap();
    accepted(&r);
    assert_eq!(r.f2p_tests.keys().collect::<Vec<_>>(), ["Calc/sub"]);
    assert_eq!(r.p2p_tests.keys().collect::<Vec<_>>(), ["Calc/stack"]);
    let m = r.swe_forge.as_ref().unwrap();
    let tests: Vec<u64> = m.runs.iter().map(|run| run.tests).collect();
    assert_eq!(tests, [1, 2, 2], "every phase reports its tests, the base run too: {:?}", m.runs);
    assert!(!m.labels.as_ref().is_some_and(|l| l.exit_code_graded), "{:?}", m.labels);
}

#[test]
fn a_warning_only_todays_compiler_has_made_an_error_gets_an_older_compiler() {
    // GCC 13 added -Wself-move to -Wall; bullseye's GCC 10 builds the project's `-Werror` clean.
    let r = cpp_of_its_time(
        "selfmove",
        "set(CMAKE_CXX_FLAGS \"${CMAKE_CXX_FLAGS} -Wall -Werror\")\n",
        "#include <string>\n#include <utility>\n\nstatic int self_moved() { std::string s = \"a\"; s = std::move(s); return 1; }\n",
        "self_moved() == 1",
    );
    let c = choice(&r);
    assert_eq!((c.toolchain.as_str(), c.attempts.len()), ("cfamily-bullseye", 1), "{c:?}");
    assert!(c.attempts[0].error.contains("[-Werror=self-move]"), "{c:?}");
    let m = r.swe_forge.as_ref().unwrap();
    assert!(!swe_forge_core::Warning::WarningsNotErrors.on(&m.warnings), "{:?}", m.warnings);
}

#[test]
fn a_warning_every_compiler_here_has_made_an_error_is_built_by_the_wno_error_wrapper_last() {
    // GCC 9 and later warn of a redundant move under -Wextra, and every compiler of an unused
    // parameter: GCC 14, 10 and 9 and clang 9 stop; the wrapper builds it and the record says so.
    let r = cpp_of_its_time(
        "werror",
        "set(CMAKE_CXX_FLAGS \"${CMAKE_CXX_FLAGS} -Wall -Wextra -Werror -Werror=redundant-move\")\n",
        "#include <string>\n#include <utility>\n\nstatic std::string moved(std::string s, int unused) { return std::move(s); }\n",
        "moved(\"a\", 0).size() == 1",
    );
    let c = choice(&r);
    let tried: Vec<&str> = c.attempts.iter().map(|a| a.toolchain.as_str()).collect();
    assert_eq!(tried, ["cfamily", "cfamily-bullseye", "cfamily-bullseye-gcc9", "cfamily-bullseye-clang9"], "{c:?}");
    assert!(c.attempts.iter().all(|a| a.error.contains("[-Werror")), "{c:?}");
    assert_eq!(c.toolchain, "cfamily-bullseye-wno-error");
    let m = r.swe_forge.as_ref().unwrap();
    let w =
        m.warnings.iter().find(|w| w.starts_with("warnings_not_errors")).unwrap_or_else(|| panic!("{:?}", m.warnings));
    assert!(w.contains("cfamily-bullseye-wno-error") && w.contains("[-Werror"), "{w}");
    let prov = m.provenance.as_ref().unwrap();
    assert!(prov.toolchain_versions.contains("-Wno-error appended"), "{}", prov.toolchain_versions);
}

#[test]
fn a_c_project_gets_the_debian_packages_its_ci_installs() {
    // ccache of 2019: configure stops on `please install gperf` / `please install libzstd`,
    // which its `.travis.yml` installs with apt (Ubuntu xenial's `libzstd1-dev`, which Debian
    // calls `libzstd-dev`); a name no suite has is skipped, not a failed build.
    let tmp = tempfile::tempdir().unwrap();
    let repos = tmp.path().join("repos");
    let cmake = |tests: &str| {
        format!(
            "cmake_minimum_required(VERSION 3.5)\nproject(keywords C)\nfind_program(GPERF gperf)\n\
if(NOT GPERF)\n  message(FATAL_ERROR \"please install gperf\")\nendif()\n\
find_path(ZSTD_H zstd.h)\nif(NOT ZSTD_H)\n  message(FATAL_ERROR \"please install libzstd\")\nendif()\n\
enable_testing()\nadd_executable(tests calc.c tests.c)\ntarget_link_libraries(tests zstd)\n{tests}"
        )
    };
    let calc = |sub: &str| format!("int sub(int a, int b) {{ return {sub}; }}\n");
    let tests = |checks: &str| {
        format!(
            "#include <string.h>\n#include <zstd.h>\n\nint sub(int, int);\n\n\
int main(int argc, char **argv) {{\n    const char *name = argc > 1 ? argv[1] : \"\";\n\
    if (!strcmp(name, \"bound\")) return ZSTD_compressBound(0) > 0 ? 0 : 1;\n{checks}    return 2;\n}}\n"
        )
    };
    let travis =
        "language: c\naddons:\n  apt:\n    packages:\n      - gperf\n      - libzstd1-dev\n      - xenial-only-tool\n";
    let fx = fixture(
        &repos.join("forge-fixtures").join("cipackages"),
        "2019-06-01T00:00:00Z",
        &[
            (".travis.yml", travis),
            ("CMakeLists.txt", &cmake("add_test(NAME bound COMMAND tests bound)\n")),
            ("calc.c", &calc("a + b")),
            ("tests.c", &tests("")),
        ],
        &[
            (
                "CMakeLists.txt",
                &cmake("add_test(NAME bound COMMAND tests bound)\nadd_test(NAME sub COMMAND tests sub)\n"),
            ),
            ("tests.c", &tests("    if (!strcmp(name, \"sub\")) return sub(5, 3) == 2 ? 0 : 1;\n")),
        ],
        &[("calc.c", &calc("a - b"))],
    );
    let inst = instance("forge-fixtures", "cipackages", 7, fx);
    let r = validate(&[&inst], &repos, &tmp.path().join("out"), None).into_iter().next().unwrap();
    accepted(&r);
    assert_eq!(r.f2p_tests.keys().collect::<Vec<_>>(), ["sub"]);
    assert_eq!(r.p2p_tests.keys().collect::<Vec<_>>(), ["bound"]);
    let prov = r.swe_forge.as_ref().unwrap().provenance.as_ref().unwrap();
    assert_eq!(
        prov.requested_versions.get(".travis.yml addons.apt.packages").map(String::as_str),
        Some("gperf libzstd1-dev xenial-only-tool"),
        "{prov:?}"
    );
    // What was installed, with its version: `libzstd1-dev` went in as `libzstd-dev`.
    assert!(prov.toolchain_versions.contains("\ngperf "), "{}", prov.toolchain_versions);
    assert!(prov.toolchain_versions.contains("\nlibzstd-dev "), "{}", prov.toolchain_versions);
    assert!(!prov.toolchain_versions.contains("xenial-only-tool"), "{}", prov.toolchain_versions);
    assert!(prov.toolchain_image.starts_with("swe-forge/toolchain-cfamily:"), "{prov:?}");
}

#[test]
fn go_of_the_gopath_era_gets_a_go_mod_pinned_to_its_time_and_the_go_of_its_time() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = tmp.path().join("repos");
    // No go.mod (code of 2019 written for a GOPATH): the setup makes one, resolves the imports
    // through the module proxy and pins each to its newest release before the commit (uuid v1.1.1
    // of 2019-02-27; today's is newer). golang.org/x/text's newest release declares a `go 1.2x.0`
    // that Go 1.15 cannot parse, which failed the whole resolution before each module found was
    // pinned (nothing resolved, no test ran). The example imports the package as the repository
    // was spelled then (`Forge-Fixtures`): the module is named so (a module named after today's
    // spelling made every run fail on a case-insensitive import collision). A hook imports a
    // module no proxy serves: an empty package stands in, so that only the hook fails to build
    // (Go 1.15 stopped every package on it). Nothing pins a Go: the
    // oldest here, bullseye's 1.15, on which a flag named `-dash` still works (Go 1.16 and later
    // panic on it).
    let id = "package gopath\n\nimport (\n\t\"github.com/google/uuid\"\n\t\"golang.org/x/text/language\"\n)\n\n\
// ID is a fresh identifier.\nfunc ID() string { return uuid.New().String() }\n\n\
// Tag is the base of a language tag.\nfunc Tag(s string) string { b, _ := language.Make(s).Base(); return b.String() }\n";
    let example =
        "package main\n\nimport \"github.com/Forge-Fixtures/gopath\"\n\nfunc main() { println(gopath.Sum(1, 2)) }\n";
    let gone = "package gone\n\nimport \"github.com/forge-fixtures-gone/nothing-here\"\n\n// Hook is gone.\nfunc Hook() { nothing.Do() }\n";
    let sum = |body: &str| format!("package gopath\n\n// Sum adds.\nfunc Sum(a, b int) int {{ return {body} }}\n");
    let flags = "package gopath\n\nimport (\n\t\"flag\"\n\t\"testing\"\n)\n\n\
func TestDashName(t *testing.T) {\n\tfs := flag.NewFlagSet(\"t\", flag.ContinueOnError)\n\tfs.Bool(\"-dash\", false, \"\")\n}\n\n\
func TestID(t *testing.T) {\n\tif len(ID()) != 36 || Tag(\"en-US\") != \"en\" {\n\t\tt.Fatal(ID(), Tag(\"en-US\"))\n\t}\n}\n";
    let sum_test = "package gopath\n\nimport \"testing\"\n\nfunc TestSum(t *testing.T) {\n\tif Sum(2, 3) != 5 {\n\t\tt.Fatal(Sum(2, 3))\n\t}\n}\n";
    let fx = fixture(
        &repos.join("forge-fixtures/gopath"),
        "2019-06-01T00:00:00Z",
        &[
            ("id.go", id),
            ("sum.go", &sum("a - b")),
            ("flags_test.go", flags),
            ("examples/demo/main.go", example),
            ("hooks/gone/gone.go", gone),
        ],
        &[("sum_test.go", sum_test)],
        &[("sum.go", &sum("a + b"))],
    );
    // A later commit spells the import as the repository is named now: its layer, on the
    // environment of the first, renames the module (it kept the first's name, so that the example
    // imported the repository's own package from the proxy, and every run failed on the collision).
    let later = fixture(
        &repos.join("forge-fixtures/gopath"),
        "2019-08-01T00:00:00Z",
        &[("examples/demo/main.go", &example.replace("Forge-Fixtures", "forge-fixtures"))],
        &[("sum_test.go", sum_test)],
        &[("sum.go", &sum("a + b"))],
    );
    let inst = instance("forge-fixtures", "gopath", 3, fx);
    let renamed = instance("forge-fixtures", "gopath", 4, later);
    let out = validate(&[&inst, &renamed], &repos, &tmp.path().join("out"), None);
    accepted(&out[1]);
    assert_eq!(out[1].f2p_tests.keys().collect::<Vec<_>>(), ["github.com/forge-fixtures/gopath::TestSum"]);
    let r = &out[0];
    accepted(r);
    let pkg = "github.com/Forge-Fixtures/gopath::";
    assert_eq!(r.f2p_tests.keys().collect::<Vec<_>>(), [&format!("{pkg}TestSum")]);
    assert_eq!(r.p2p_tests.keys().collect::<Vec<_>>(), [&format!("{pkg}TestDashName"), &format!("{pkg}TestID")]);
    let c = choice(r);
    assert_eq!((c.toolchain.as_str(), c.attempts.len()), ("go115", 0), "{c:?}");
    let prov = r.swe_forge.as_ref().unwrap().provenance.as_ref().unwrap();
    assert!(prov.toolchain_versions.contains("go1.15"), "{}", prov.toolchain_versions);
    assert!(prov.requested_versions["go.mod"].contains("GOPATH"), "{:?}", prov.requested_versions);
    let image = r.swe_forge.as_ref().unwrap().image.as_deref().unwrap();
    let (module, _) = in_image(
        image,
        "cd /testbed && head -1 go.mod && GOFLAGS=-mod=mod go list -m github.com/google/uuid golang.org/x/text",
    );
    let lines: Vec<&str> = module.lines().collect();
    assert_eq!(lines[..2], ["module github.com/Forge-Fixtures/gopath", "github.com/google/uuid v1.1.1"], "{module}");
    assert!(lines[2].starts_with("golang.org/x/text v0.3."), "a release before 2019-06: {module}");
}

#[test]
fn a_base_run_that_fails_because_of_the_toolchain_gets_the_next_version() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = tmp.path().join("repos");
    // The setup passes on Debian's Node 20; loading the suite fails as webpack 4 does on Node 17
    // and later, so the base run runs no test. Node 18 is the next older version here.
    let setup = "if (+process.versions.node.split('.')[0] >= 19) {\n  throw new Error('error:0308010C:digital envelope routines::unsupported');\n}\n";
    let fx =
        node_fixture(&repos.join("forge-fixtures/loadfail"), "2024-01-01T00:00:00Z", 18, &[("test/setup.js", setup)]);
    let inst = instance("forge-fixtures", "loadfail", 8, fx);
    let out = validate(&[&inst], &repos, &tmp.path().join("out"), None);
    let r = &out[0];
    accepted(r);
    assert!(r.p2p_tests.keys().any(|k| k.contains("is version 18")), "{:?}", r.p2p_tests.keys());
    let c = choice(r);
    assert_eq!((c.toolchain.as_str(), c.attempts.len()), ("node18", 1), "{c:?}");
    assert!(c.attempts[0].error.contains("digital envelope routines::unsupported"), "{c:?}");
    let m = r.swe_forge.as_ref().unwrap();
    assert_eq!(m.runs.len(), 3, "the runs on Node 20 are not kept: {:?}", m.runs);
}

/// A Go suite of 2019 whose TLS test uses a certificate valid for one year from then: the test
/// fails today in every run, and the record is flagged `time_bomb` with the line that says so; the
/// fixed test still counts. A test before it makes an expired certificate on purpose and passes:
/// its line (ssl_exporter's `TestProbeHandlerTCPExpired`) is not the evidence. The Go test command has a per-package `-timeout`, so a hanging
/// package costs minutes and the others keep their results.
#[test]
fn a_test_whose_certificate_expired_flags_the_instance_time_bomb() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = tmp.path().join("repos");
    let greet = |word: &str| {
        format!(
            "package tlsclock\n\n// Greeting is what the server says.\nfunc Greeting() string {{ return \"{word}\" }}\n"
        )
    };
    let tls_test = r#"package tlsclock

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io/ioutil"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// The fixture's certificate, valid for a year from June 2019 as the project made it then.
func fixtureCert(t *testing.T) (tls.Certificate, *x509.CertPool) {
	return makeCert(t, time.Date(2019, 6, 1, 0, 0, 0, 0, time.UTC), time.Date(2020, 6, 1, 0, 0, 0, 0, time.UTC))
}

func makeCert(t *testing.T, notBefore, notAfter time.Time) (tls.Certificate, *x509.CertPool) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "127.0.0.1"},
		NotBefore:             notBefore,
		NotAfter:              notAfter,
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:                  true,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(parsed)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pool
}

// A test of expiry: a certificate that expired yesterday, made so on purpose, is refused.
func TestExpiredIsRefused(t *testing.T) {
	cert, pool := makeCert(t, time.Now().AddDate(0, 0, -2), time.Now().AddDate(0, 0, -1))
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.StartTLS()
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	if _, err := client.Get(srv.URL); err == nil {
		t.Fatal("an expired certificate was accepted")
	} else {
		t.Log(err)
	}
}

func TestGreetingOverTLS(t *testing.T) {
	cert, pool := fixtureCert(t)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(Greeting()))
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.StartTLS()
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := client.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := ioutil.ReadAll(resp.Body)
	if len(body) == 0 {
		t.Fatal("no greeting")
	}
}
"#;
    let greet_test = "package tlsclock\n\nimport \"testing\"\n\nfunc TestGreeting(t *testing.T) {\n\tif Greeting() != \"hello\" {\n\t\tt.Fatal(Greeting())\n\t}\n}\n";
    let fx = fixture(
        &repos.join("forge-fixtures/tlsclock"),
        "2019-06-15T00:00:00Z",
        &[("greeting.go", &greet("hi")), ("tls_test.go", tls_test)],
        &[("greeting_test.go", greet_test)],
        &[("greeting.go", &greet("hello"))],
    );
    let inst = instance("forge-fixtures", "tlsclock", 4, fx);
    let out = validate(&[&inst], &repos, &tmp.path().join("out"), None);
    let r = &out[0];
    accepted(r);
    let pkg = "github.com/forge-fixtures/tlsclock::";
    assert_eq!(r.f2p_tests.keys().collect::<Vec<_>>(), [&format!("{pkg}TestGreeting")]);
    assert!(!r.p2p_tests.keys().any(|k| k.ends_with("TestGreetingOverTLS")), "{:?}", r.p2p_tests.keys());
    assert!(r.p2p_tests.contains_key(&format!("{pkg}TestExpiredIsRefused")), "{:?}", r.p2p_tests.keys());
    let m = r.swe_forge.as_ref().unwrap();
    let bomb: Vec<&String> = m.warnings.iter().filter(|w| w.starts_with("time_bomb")).collect();
    assert_eq!(bomb.len(), 1, "{:?}", m.warnings);
    assert!(
        bomb[0].contains("TestGreetingOverTLS") && bomb[0].contains("x509: certificate has expired"),
        "{}",
        bomb[0]
    );
    let command = m.test_command.as_deref().unwrap_or_default();
    assert!(command.contains(" -timeout "), "{command}");
}

/// Two validations of one instance at once, in two processes on one engine: its image is made
/// once (the other waits for it and uses it), and no commit is left behind as a dangling image.
#[test]
fn two_processes_making_one_instance_image_commit_it_once() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = tmp.path().join("repos");
    // Unique content, so that no earlier run made this image.
    let stamp = format!("/* {} */\n", tmp.path().display());
    let makefile = "CC ?= cc\n\nall: tests\n\ntests: calc.c tests.c\n\t$(CC) -o tests calc.c tests.c\n\ntest: tests\n\t./tests\n\n.PHONY: all test\n";
    let calc = |body: &str| format!("{stamp}int twice(int a) {{ return {body}; }}\n");
    let tests = "#include <stdio.h>\n\nint twice(int);\n\nint main(void) {\n    int ok = twice(2) == 4;\n    printf(\"%s: twice\\n\", ok ? \"PASS\" : \"FAIL\");\n    return !ok;\n}\n";
    let fx = fixture(
        &repos.join("forge-fixtures/twoprocs"),
        "2024-01-01T00:00:00Z",
        &[("Makefile", makefile), ("calc.c", &calc("a + 1")), ("tests.c", "int main(void) { return 0; }\n")],
        &[("tests.c", tests)],
        &[("calc.c", &calc("a * 2"))],
    );
    let inst = instance("forge-fixtures", "twoprocs", 5, fx);
    let input = tmp.path().join("records.jsonl");
    swe_forge_core::write_jsonl(std::fs::File::create(&input).unwrap(), [&inst]).unwrap();
    let spawn = |name: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_swe-forge"))
            .args(["validate", "--records", input.to_str().unwrap(), "--repos", repos.to_str().unwrap()])
            .args(["--out", tmp.path().join(name).join("v.jsonl").to_str().unwrap(), "--evidence-runs", "0"])
            .env("SWE_FORGE_NO_PROGRESS", "1")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn("a"), spawn("b"));
    let mut images = Vec::new();
    for (name, child) in [("a", a), ("b", b)] {
        let o = child.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", crate::support::text(&o));
        let r = &crate::support::read_records(&tmp.path().join(name).join("v.jsonl"))[0];
        accepted(r);
        images.push(r.swe_forge.as_ref().unwrap().image.clone().unwrap());
    }
    assert_eq!(images[0], images[1]);
    let label = format!("label=dev.swe-forge.instance={}", inst.instance_id);
    let listed = |extra: &[&str]| {
        let o = std::process::Command::new("docker")
            .args(["images", "-q", "--no-trunc", "--filter", &label])
            .args(extra)
            .output()
            .unwrap();
        String::from_utf8_lossy(&o.stdout).lines().map(str::to_owned).collect::<Vec<_>>()
    };
    let dangling = listed(&["--filter", "dangling=true"]);
    for id in &dangling {
        let _ = std::process::Command::new("docker").args(["rmi", id]).output();
    }
    assert!(dangling.is_empty(), "the image was committed twice: {dangling:?}");
    // This run's image (its content is of this run only) is of no use to another.
    let o = std::process::Command::new("docker").args(["rmi", &images[0]]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}
