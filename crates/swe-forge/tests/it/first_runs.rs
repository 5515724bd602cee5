//! First runs that fail for want of something another environment has (issue #56): a C project
//! whose test includes a header of a Debian `-dev` package no build file names gets the package
//! (found in the suite's `Contents` index) and says so in its provenance; a tree whose CMake
//! file builds the library only, and whose autotools run the tests, is validated with autotools;
//! an `ExternalProject` whose library Ninja cannot see is built with the Makefile generator; a
//! suite that refuses to run as root runs as an unprivileged test user; a runner that prints TAP
//! under one ctest target is graded by its tests; a dependency a fix adds to its POM is downloaded
//! for the offline fix run; a root without build files has its project in the patches' folder.

use swe_forge_core::{BuildAttempt, Instance};

use crate::environments::validate_with;
use crate::toolchains::{accepted, fixture, instance};

const CHEAP: &[&str] = &["--evidence-runs", "0", "--hunk-runs", "0", "--layout-variants", "0"];

fn attempts(r: &Instance) -> Vec<BuildAttempt> {
    r.swe_forge.as_ref().unwrap().provenance.as_ref().map(|p| p.build_attempts.clone()).unwrap_or_default()
}

fn keys(m: &swe_forge_core::TestMap) -> Vec<&str> {
    m.keys().map(String::as_str).collect()
}

const HEADER: &str = "#ifndef MATHX_H\n#define MATHX_H\nint mathx_add(int a, int b);\n#endif\n";
const SOURCE: &str = "#include \"mathx.h\"\nint mathx_add(int a, int b) { return a + b; }\n";
const SUB_HEADER: &str =
    "#ifndef MATHX_H\n#define MATHX_H\nint mathx_add(int a, int b);\nint mathx_sub(int a, int b);\n#endif\n";
const SUB_SOURCE: &str = "#include \"mathx.h\"\nint mathx_add(int a, int b) { return a + b; }\nint mathx_sub(int a, int b) { return a - b; }\n";

/// A cmocka test of `call` == `want`.
fn cmocka_test(call: &str, want: i32) -> String {
    format!(
        "#include <stdarg.h>\n#include <stddef.h>\n#include <stdint.h>\n#include <setjmp.h>\n#include <cmocka.h>\n\n#include \"mathx.h\"\n\n\
         static void check(void **state) {{\n    (void)state;\n    assert_int_equal({call}, {want});\n}}\n\n\
         int main(void) {{\n    const struct CMUnitTest tests[] = {{cmocka_unit_test(check)}};\n    return cmocka_run_group_tests(tests, NULL, NULL);\n}}\n"
    )
}

/// The header `cmocka.h` is in no image of the C toolchain, and the project's CMake file links
/// `cmocka` without a `find_package`: the setup stops on `fatal error: cmocka.h: No such file or
/// directory`, the package that provides it (`libcmocka-dev`) is found in trixie's Contents
/// index and installed, and the instance is accepted with the package in its provenance.
#[test]
fn a_header_no_build_file_names_is_installed_from_the_package_that_provides_it() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = tmp.path().join("repos");
    let cmake = |tests: &[&str]| {
        let mut s = "cmake_minimum_required(VERSION 3.13)\nproject(mathx C)\nenable_testing()\nadd_library(mathx src/mathx.c)\ntarget_include_directories(mathx PUBLIC src)\n".to_owned();
        for t in tests {
            s.push_str(&format!(
                "add_executable({t} tests/{t}.c)\ntarget_link_libraries({t} mathx cmocka)\nadd_test(NAME {t} COMMAND {t})\n"
            ));
        }
        s
    };
    let fx = fixture(
        &repos.join("forge-fixtures/cmockax"),
        "2024-03-01T00:00:00Z",
        &[
            ("CMakeLists.txt", &cmake(&["test_add"])),
            ("src/mathx.h", HEADER),
            ("src/mathx.c", SOURCE),
            ("tests/test_add.c", &cmocka_test("mathx_add(2, 3)", 5)),
        ],
        &[
            ("CMakeLists.txt", &cmake(&["test_add", "test_sub"])),
            ("tests/test_sub.c", &cmocka_test("mathx_sub(5, 3)", 2)),
        ],
        &[("src/mathx.h", SUB_HEADER), ("src/mathx.c", SUB_SOURCE)],
    );
    let inst = instance("forge-fixtures", "cmockax", 3, fx);
    let out = validate_with(&[&inst], &repos, &tmp.path().join("out"), None, CHEAP);
    let r = &out[0];
    accepted(r);
    assert_eq!(keys(&r.fixed_tests), ["test_sub"], "{:?}", r.fixed_tests);
    assert_eq!(keys(&r.p2p_tests), ["test_add"], "{:?}", r.p2p_tests);
    let a = attempts(r);
    assert_eq!(a.len(), 1, "{a:?}");
    assert_eq!(
        (a[0].kind.as_str(), a[0].action.as_str(), a[0].log.as_str()),
        ("system_package", "libcmocka-dev", "setup")
    );
    assert_eq!(a[0].found, "header cmocka.h");
    assert!(a[0].line.contains("fatal error: cmocka.h: No such file or directory"), "{a:?}");
    assert!(a[0].source.starts_with("usr/include/cmocka.h in Debian "), "{a:?}");
    let versions = &r.swe_forge.as_ref().unwrap().provenance.as_ref().unwrap().toolchain_versions;
    assert!(versions.contains("libcmocka-dev "), "the package's version is on record: {versions}");
}

/// A 2018-style C library: its CMake file builds the library only (ctest: `No tests were
/// found!!!` in every phase) and its autotools build runs the tests under `make check`. The
/// runs that reported no test send validation to the tree's next build system, and the
/// instance is accepted with autotools, the attempt in its provenance.
#[test]
fn a_tree_whose_cmake_file_runs_no_test_is_validated_with_its_autotools() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = tmp.path().join("repos");
    let makefile = |tests: &str| {
        format!(
            "AM_CFLAGS = -Wall -I$(srcdir)/src\nnoinst_LIBRARIES = libmathx.a\nlibmathx_a_SOURCES = src/mathx.c src/mathx.h\n\n\
             check_PROGRAMS = {tests}\nTESTS = $(check_PROGRAMS)\nLDADD = libmathx.a\n"
        )
    };
    let configure = "AC_INIT([mathx], [0.1.0])\nAM_INIT_AUTOMAKE([foreign subdir-objects -Wall])\nAC_PROG_CC\nAM_PROG_AR\nAC_PROG_RANLIB\nAC_CONFIG_FILES([Makefile])\nAC_OUTPUT\n";
    let check = |call: &str, want: i32| {
        format!("#include \"mathx.h\"\n\nint main(void) {{\n    return {call} == {want} ? 0 : 1;\n}}\n")
    };
    let fx = fixture(
        &repos.join("forge-fixtures/twobuilds"),
        "2018-03-01T00:00:00Z",
        &[
            (
                "CMakeLists.txt",
                "cmake_minimum_required(VERSION 3.5)\nproject(mathx C)\nadd_library(mathx src/mathx.c)\n",
            ),
            ("configure.ac", configure),
            ("Makefile.am", &makefile("tests/test_add")),
            ("src/mathx.h", HEADER),
            ("src/mathx.c", SOURCE),
            ("tests/test_add.c", &check("mathx_add(2, 3)", 5)),
        ],
        &[
            ("Makefile.am", &makefile("tests/test_add tests/test_sub")),
            ("tests/test_sub.c", &check("mathx_sub(5, 3)", 2)),
        ],
        &[("src/mathx.h", SUB_HEADER), ("src/mathx.c", SUB_SOURCE)],
    );
    let inst = instance("forge-fixtures", "twobuilds", 4, fx);
    let out = validate_with(&[&inst], &repos, &tmp.path().join("out"), None, CHEAP);
    let r = &out[0];
    accepted(r);
    // `make check` builds every test program before it runs any: with the test patch alone,
    // test_sub does not build and test_add does not run (it is set apart, not PASS_TO_PASS).
    assert_eq!(keys(&r.fixed_tests), ["tests/test_sub"], "{:?}", r.fixed_tests);
    let prov = r.swe_forge.as_ref().unwrap().provenance.as_ref().unwrap();
    assert_eq!(prov.recipe, "c-autotools");
    let a = attempts(r);
    assert_eq!(a.len(), 1, "{a:?}");
    assert_eq!((a[0].kind.as_str(), a[0].action.as_str()), ("build_system", "c-autotools"));
    assert_eq!(a[0].found, "no test in any phase with c-cmake");
    assert!(a[0].line.contains("No tests were found"), "{a:?}");
    assert_eq!(a[0].source, "the tree's build systems: c-cmake, c-autotools");
}

/// A CMake project whose test links the library an `ExternalProject` installs, by path, without
/// declaring it a byproduct: Ninja stops before building anything (`missing and no known rule to
/// make it`), the setup is configured again with the Makefile generator, which builds the
/// external project first, and the instance is accepted with the fallback in its provenance.
#[test]
fn an_external_project_ninja_cannot_see_is_built_with_makefiles() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = tmp.path().join("repos");
    let cmake = "cmake_minimum_required(VERSION 3.10)\nproject(extuse C)\ninclude(ExternalProject)\n\
                 ExternalProject_Add(mathx_ext SOURCE_DIR ${CMAKE_SOURCE_DIR}/mathx BUILD_ALWAYS 1\n\
                 \x20 CMAKE_ARGS -DCMAKE_INSTALL_PREFIX=${CMAKE_BINARY_DIR}/prefix)\n\
                 enable_testing()\nadd_executable(test_math tests/test_math.c)\nadd_dependencies(test_math mathx_ext)\n\
                 target_include_directories(test_math PRIVATE ${CMAKE_SOURCE_DIR}/mathx)\n\
                 target_link_libraries(test_math ${CMAKE_BINARY_DIR}/prefix/lib/libmathx.a)\n\
                 add_test(NAME test_math COMMAND test_math)\n";
    let sub = "cmake_minimum_required(VERSION 3.10)\nproject(mathx C)\nadd_library(mathx mathx.c)\n\
               install(TARGETS mathx ARCHIVE DESTINATION lib)\n";
    let test = |body: &str| format!("#include \"mathx.h\"\n\nint main(void) {{\n    return {body} ? 0 : 1;\n}}\n");
    let fx = fixture(
        &repos.join("forge-fixtures/extuse"),
        "2022-03-01T00:00:00Z",
        &[
            ("CMakeLists.txt", cmake),
            ("mathx/CMakeLists.txt", sub),
            ("mathx/mathx.h", SUB_HEADER),
            ("mathx/mathx.c", &SUB_SOURCE.replace("a - b", "a + b")),
            ("tests/test_math.c", &test("mathx_add(2, 3) == 5")),
        ],
        &[("tests/test_math.c", &test("mathx_add(2, 3) == 5 && mathx_sub(5, 3) == 2"))],
        &[("mathx/mathx.c", SUB_SOURCE)],
    );
    let inst = instance("forge-fixtures", "extuse", 2, fx);
    let out = validate_with(&[&inst], &repos, &tmp.path().join("out"), None, CHEAP);
    let r = &out[0];
    accepted(r);
    assert_eq!(keys(&r.fixed_tests), ["test_math"], "{:?}", r.fixed_tests);
    let a = attempts(r);
    assert_eq!(a.len(), 1, "{a:?}");
    assert_eq!((a[0].kind.as_str(), a[0].action.as_str()), ("fallback", "Unix Makefiles"));
    assert!(a[0].line.contains("missing and no known rule to make it"), "{a:?}");
}

/// A suite that refuses to run as root (as libuv's runner does: every target fails at once, the
/// line only in ctest's output of the target): the base run's output says so, the instance is
/// built again with an unprivileged test user, and accepted with that attempt in its provenance.
#[test]
fn a_suite_that_refuses_root_runs_as_a_test_user() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = tmp.path().join("repos");
    let cmake = "cmake_minimum_required(VERSION 3.10)\nproject(rootless C)\nadd_library(mathx src/mathx.c)\n\
                 target_include_directories(mathx PUBLIC src)\nenable_testing()\n\
                 add_executable(test_math tests/test_math.c)\ntarget_link_libraries(test_math mathx)\n\
                 add_test(NAME test_math COMMAND test_math)\n";
    let test = |check: &str| {
        format!(
            "#include <stdio.h>\n#include <unistd.h>\n#include \"mathx.h\"\n\nint main(void) {{\n    if (geteuid() == 0) {{\n        puts(\"This test suite cannot be run as root.\");\n        return 1;\n    }}\n    return {check} ? 0 : 1;\n}}\n"
        )
    };
    let fx = fixture(
        &repos.join("forge-fixtures/rootless"),
        "2023-03-01T00:00:00Z",
        &[
            ("CMakeLists.txt", cmake),
            ("src/mathx.h", SUB_HEADER),
            ("src/mathx.c", &SUB_SOURCE.replace("a - b", "a + b")),
            ("tests/test_math.c", &test("mathx_add(2, 3) == 5")),
        ],
        &[("tests/test_math.c", &test("mathx_add(2, 3) == 5 && mathx_sub(5, 3) == 2"))],
        &[("src/mathx.c", SUB_SOURCE)],
    );
    let inst = instance("forge-fixtures", "rootless", 3, fx);
    let out = validate_with(&[&inst], &repos, &tmp.path().join("out"), None, CHEAP);
    let r = &out[0];
    accepted(r);
    assert_eq!(keys(&r.fixed_tests), ["test_math"], "{:?}", r.fixed_tests);
    let a = attempts(r);
    assert_eq!(a.len(), 1, "{a:?}");
    assert_eq!((a[0].kind.as_str(), a[0].action.as_str()), ("test_user", "swe-forge"));
    assert_eq!(a[0].line, "This test suite cannot be run as root.", "{a:?}");
}

/// A C project whose own runner, one ctest target, prints TAP (as libuv's does): the target is
/// read as the tests of its TAP from ctest's JUnit report, and FAIL_TO_PASS names the test the
/// test patch adds, PASS_TO_PASS the others, never the target.
#[test]
fn a_runner_that_prints_tap_under_one_ctest_target_is_graded_by_its_tests() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = tmp.path().join("repos");
    let cmake = "cmake_minimum_required(VERSION 3.10)\nproject(taprun C)\nadd_library(mathx src/mathx.c)\n\
                 target_include_directories(mathx PUBLIC src)\nenable_testing()\n\
                 add_executable(runner tests/runner.c)\ntarget_link_libraries(runner mathx)\n\
                 add_test(NAME suite COMMAND runner)\n";
    let runner = |checks: &[(&str, &str)]| {
        let mut body = format!("    int failed = 0;\n    printf(\"1..{}\\n\");\n", checks.len());
        for (i, (name, check)) in checks.iter().enumerate() {
            body.push_str(&format!(
                "    if ({check}) printf(\"ok {n} - {name}\\n\"); else {{ printf(\"not ok {n} - {name}\\n\"); failed = 1; }}\n",
                n = i + 1
            ));
        }
        format!("#include <stdio.h>\n#include \"mathx.h\"\n\nint main(void) {{\n{body}    return failed;\n}}\n")
    };
    let base = [("adds", "mathx_add(2, 3) == 5"), ("adds_negatives", "mathx_add(-2, -3) == -5")];
    let with_sub = [base[0], base[1], ("subtracts", "mathx_sub(5, 3) == 2")];
    let fx = fixture(
        &repos.join("forge-fixtures/taprun"),
        "2023-03-01T00:00:00Z",
        &[
            ("CMakeLists.txt", cmake),
            ("src/mathx.h", SUB_HEADER),
            ("src/mathx.c", &SUB_SOURCE.replace("a - b", "a + b")),
            ("tests/runner.c", &runner(&base)),
        ],
        &[("tests/runner.c", &runner(&with_sub))],
        &[("src/mathx.c", SUB_SOURCE)],
    );
    let inst = instance("forge-fixtures", "taprun", 5, fx);
    let out = validate_with(&[&inst], &repos, &tmp.path().join("out"), None, CHEAP);
    let r = &out[0];
    accepted(r);
    assert_eq!(keys(&r.fixed_tests), ["suite::subtracts"], "{:?}", r.swe_forge);
    assert_eq!(keys(&r.p2p_tests), ["suite::adds", "suite::adds_negatives"], "{:?}", r.p2p_tests);
}

/// A Maven project whose fix adds a dependency to its POM and uses it: the instance layer
/// downloads it with the patched POM in place (the java-maven prefetch), so the fix run, offline,
/// compiles and runs; without the prefetch it could not resolve the artifact and ran no test.
#[test]
fn a_dependency_the_fix_adds_to_the_pom_is_there_for_the_offline_fix_run() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = tmp.path().join("repos");
    let j = crate::support::java_fixture("prefetch", "17", "4.13.2");
    let math3 = "    <dependency>\n      <groupId>org.apache.commons</groupId>\n      <artifactId>commons-math3</artifactId>\n      <version>3.6.1</version>\n    </dependency>\n  </dependencies>";
    let pom = j.pom.replace("  </dependencies>", math3);
    let fixed =
        j.half_fixed.replace("return x / 2;", "return org.apache.commons.math3.util.FastMath.min(x / 2, x / 2);");
    assert_ne!(fixed, j.half_fixed);
    let fx = fixture(
        &repos.join("forge-fixtures/prefetch"),
        "2023-06-01T00:00:00Z",
        &[
            ("pom.xml", &j.pom),
            ("src/main/java/fixtures/Half.java", &j.half_base),
            (
                "src/test/java/fixtures/ZeroTest.java",
                &j.half_test
                    .replace("HalfTest", "ZeroTest")
                    .replace("assertEquals(2, Half.of(4))", "assertEquals(0, 0)"),
            ),
        ],
        &[("src/test/java/fixtures/HalfTest.java", j.half_test)],
        &[("pom.xml", &pom), ("src/main/java/fixtures/Half.java", &fixed)],
    );
    let inst = instance("forge-fixtures", "prefetch", 6, fx);
    let out = validate_with(&[&inst], &repos, &tmp.path().join("out"), None, CHEAP);
    let r = &out[0];
    accepted(r);
    assert_eq!(keys(&r.fixed_tests), ["fixtures.HalfTest#halves"], "{:?}", r.fixed_tests);
}

/// GoogleTest from github.com, out of reach here: an empty submodule (no local copy holds it) and,
/// at a later commit, a CMake `FetchContent_Declare` of it. Debian's `googletest` source stands in
/// for both (`recipes/stand-ins.toml`): the submodule folder is filled from it, the declaration
/// pointed at it (`FETCHCONTENT_SOURCE_DIR_GOOGLETEST`), the provenance says so, and both
/// instances are graded by their cases. Before, the first setup failed `needs_network` on the
/// empty submodule and the second's configure could not download the archive.
#[test]
fn googletest_from_an_unreachable_host_is_stood_in_for_by_debians() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = tmp.path().join("repos");
    let dir = repos.join("forge-fixtures/gtestsub");
    let head =
        "cmake_minimum_required(VERSION 3.14)\nproject(gtestsub CXX)\nset(CMAKE_CXX_STANDARD 14)\nenable_testing()\n";
    let tail = "add_library(mathx mathx.cpp)\nadd_executable(unit unit.cpp)\ntarget_link_libraries(unit mathx gtest_main)\n\
                add_test(NAME unit COMMAND unit)\n";
    let by_submodule = format!("{head}add_subdirectory(extern/googletest)\n{tail}");
    let by_fetch = format!(
        "{head}include(FetchContent)\nFetchContent_Declare(\n  googletest\n  URL https://github.com/google/googletest/archive/refs/tags/v1.14.0.zip\n)\n\
         FetchContent_MakeAvailable(googletest)\n{tail}"
    );
    let math = |sub: &str| {
        format!("int mathx_add(int a, int b) {{ return a + b; }}\nint mathx_sub(int a, int b) {{ return {sub}; }}\n")
    };
    let unit = |more: &str| {
        format!(
            "#include <gtest/gtest.h>\nint mathx_add(int a, int b);\nint mathx_sub(int a, int b);\n\
             TEST(Math, Adds) {{ EXPECT_EQ(mathx_add(2, 3), 5); }}\n{more}"
        )
    };
    let subtracts = unit("TEST(Math, Subtracts) { EXPECT_EQ(mathx_sub(5, 3), 2); }\n");
    let date = "2023-06-01T00:00:00Z";
    let gitmodules = "[submodule \"extern/googletest\"]\n\tpath = extern/googletest\n\turl = https://github.com/google/googletest.git\n";
    let (_, test1, fix1) = fixture(
        &dir,
        date,
        &[
            ("CMakeLists.txt", &by_submodule),
            (".gitmodules", gitmodules),
            ("mathx.cpp", &math("a + b")),
            ("unit.cpp", &unit("")),
        ],
        &[("unit.cpp", &subtracts)],
        &[("mathx.cpp", &math("a - b"))],
    );
    let git = |args: &[&str]| swe_forge_test_support::git(&dir, args);
    git(&["update-index", "--add", "--cacheinfo", "160000,0123456789abcdef0123456789abcdef01234567,extern/googletest"]);
    swe_forge_test_support::git_at(&dir, date, &["commit", "-q", "--amend", "-m", "base"]);
    let base1 = git(&["rev-parse", "HEAD"]);
    git(&["rm", "-q", "--cached", "extern/googletest", ".gitmodules"]);
    std::fs::remove_file(dir.join(".gitmodules")).unwrap();
    let fx2 = fixture(
        &dir,
        "2023-07-01T00:00:00Z",
        &[("CMakeLists.txt", &by_fetch)],
        &[("unit.cpp", &subtracts)],
        &[("mathx.cpp", &math("a - b"))],
    );
    let first = instance("forge-fixtures", "gtestsub", 1, (base1, test1, fix1));
    let second = instance("forge-fixtures", "gtestsub", 2, fx2);
    let out = validate_with(&[&first, &second], &repos, &tmp.path().join("out"), None, CHEAP);
    for (r, stood_in) in out.iter().zip(["the submodule extern/googletest", "`FetchContent_Declare(googletest"]) {
        accepted(r);
        assert_eq!(keys(&r.f2p_tests), ["Math.Subtracts"], "{}: {:?}", r.instance_id, r.f2p_tests);
        assert_eq!(keys(&r.p2p_tests), ["Math.Adds"], "{}: {:?}", r.instance_id, r.p2p_tests);
        let prov = r.swe_forge.as_ref().unwrap().provenance.as_ref().unwrap();
        let notes = format!("{prov:?}");
        assert!(notes.contains(&format!("stand-in: Debian's GoogleTest (googletest) for {stood_in}")), "{notes}");
    }
}

/// A test script that names no runner (`npm run lint && npm run build && npm run test-cov`, the
/// runner two scripts down, a karma browser run after it) whose tests load what `build` makes:
/// the recipe is the runner the scripts start first (mocha; karma, a dependency too, decided
/// before) with that script's options, and `build` runs before each test run, as does the
/// command the runner's own script runs before it (`node scripts/gen.js && mocha ...`). Before, karma ran
/// no test in any phase (or mocha without the build found no module): `suite_never_ran`.
#[test]
fn the_runner_and_the_build_a_test_script_runs_through_other_scripts_are_found() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = tmp.path().join("repos");
    // karma is a dependency (a local stub, so that the install stays small), as in projects
    // whose browser run comes after the unit tests.
    let package = r#"{
  "name": "chained",
  "version": "1.0.0",
  "scripts": {
    "test": "npm run lint && npm run build && npm run test-cov && npm run test-browser",
    "lint": "eslint lib",
    "build": "node scripts/build.js",
    "test-cov": "npm run test-spec",
    "test-spec": "node scripts/gen.js && mocha --recursive spec -R dot",
    "test-browser": "karma start"
  },
  "devDependencies": { "mocha": "10.2.0", "karma": "file:./stub/karma" }
}
"#;
    let build = "const fs = require('fs');\nfs.mkdirSync('dist', { recursive: true });\n\
                 fs.copyFileSync('lib/sum.js', 'dist/sum.js');\n";
    // A command of the runner's own script, before its call, generates a file the specs load.
    let generate = "const fs = require('fs');\nfs.mkdirSync('gen', { recursive: true });\n\
               fs.writeFileSync('gen/kind.json', JSON.stringify('function'));\n";
    let sum = |body: &str| format!("module.exports = function sum(a, b) {{\n  return {body};\n}};\n");
    let spec = |more: &str| {
        format!(
            "const assert = require('assert');\nconst sum = require('../dist/sum');\nconst kind = require('../gen/kind.json');\n\n\
             describe('sum', function () {{\n  it('is a function', function () {{\n    assert.strictEqual(typeof sum, kind);\n  }});\n{more}}});\n"
        )
    };
    let adds = spec("  it('adds', function () {\n    assert.strictEqual(sum(2, 3), 5);\n  });\n");
    let fx = fixture(
        &repos.join("forge-fixtures/chained"),
        "2024-01-01T00:00:00Z",
        &[
            ("package.json", package),
            ("stub/karma/package.json", "{\"name\": \"karma\", \"version\": \"0.0.0\"}\n"),
            ("scripts/build.js", build),
            ("scripts/gen.js", generate),
            ("lib/sum.js", &sum("a - b")),
            (".gitignore", "dist/\ngen/\nnode_modules/\n"),
            ("spec/sum.spec.js", &spec("")),
        ],
        &[("spec/sum.spec.js", &adds)],
        &[("lib/sum.js", &sum("a + b"))],
    );
    let inst = instance("forge-fixtures", "chained", 1, fx);
    let out = validate_with(&[&inst], &repos, &tmp.path().join("out"), None, CHEAP);
    let r = &out[0];
    accepted(r);
    assert_eq!(keys(&r.f2p_tests), ["sum > adds"], "{:?}", r.f2p_tests);
    assert_eq!(keys(&r.p2p_tests), ["sum > is a function"], "{:?}", r.p2p_tests);
    let m = r.swe_forge.as_ref().unwrap();
    let prov = m.provenance.as_ref().unwrap();
    let said = format!("{prov:?}");
    assert!(said.contains("js-mocha"), "{said}");
    assert!(said.contains("`npm run build`, `node scripts/gen.js` before each test run"), "{said}");
}

/// A native addon (`binding.gyp`: npm runs `node-gyp rebuild` when it installs) on a Node release
/// from the npm registry: node-gyp builds it against that release's own headers
/// (`npm_config_nodedir`), where before it tried to download them from nodejs.org (out of reach
/// here) and the setup failed.
#[test]
fn a_native_addon_builds_against_the_node_releases_own_headers() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = tmp.path().join("repos");
    let package = r#"{
  "name": "nativeaddon",
  "version": "1.0.0",
  "gypfile": true,
  "scripts": { "test": "mocha" },
  "devDependencies": { "mocha": "10.2.0" }
}
"#;
    let gyp = "{ \"targets\": [ { \"target_name\": \"addon\", \"sources\": [ \"src/addon.c\" ] } ] }\n";
    let addon = "#include <node_api.h>\n\
static napi_value Twice(napi_env env, napi_callback_info info) {\n\
  size_t argc = 1; napi_value argv[1]; double x; napi_value out;\n\
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);\n\
  napi_get_value_double(env, argv[0], &x);\n\
  napi_create_double(env, 2 * x, &out);\n  return out;\n}\n\
static napi_value Init(napi_env env, napi_value exports) {\n\
  napi_value fn;\n  napi_create_function(env, \"twice\", NAPI_AUTO_LENGTH, Twice, NULL, &fn);\n\
  napi_set_named_property(env, exports, \"twice\", fn);\n  return exports;\n}\n\
NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)\n";
    let addon_test = "const assert = require('assert');\nconst addon = require('../build/Release/addon.node');\n\n\
describe('addon', function () {\n  it('doubles', function () {\n    assert.strictEqual(addon.twice(2), 4);\n  });\n});\n";
    let sum = |body: &str| format!("module.exports = function sum(a, b) {{\n  return {body};\n}};\n");
    let sum_test = "const assert = require('assert');\nconst sum = require('../sum');\n\n\
describe('sum', function () {\n  it('adds', function () {\n    assert.strictEqual(sum(2, 3), 5);\n  });\n});\n";
    let fx = fixture(
        &repos.join("forge-fixtures/nativeaddon"),
        "2023-01-01T00:00:00Z",
        &[
            ("package.json", package),
            (".nvmrc", "v16\n"),
            (".gitignore", "build/\nnode_modules/\n"),
            ("binding.gyp", gyp),
            ("src/addon.c", addon),
            ("sum.js", &sum("a - b")),
            ("test/addon.test.js", addon_test),
        ],
        &[("test/sum.test.js", sum_test)],
        &[("sum.js", &sum("a + b"))],
    );
    let inst = instance("forge-fixtures", "nativeaddon", 1, fx);
    let out = validate_with(&[&inst], &repos, &tmp.path().join("out"), None, CHEAP);
    let r = &out[0];
    accepted(r);
    assert_eq!(keys(&r.f2p_tests), ["sum > adds"], "{:?}", r.f2p_tests);
    assert_eq!(keys(&r.p2p_tests), ["addon > doubles"], "{:?}", r.p2p_tests);
    let c = crate::toolchains::choice(r);
    assert_eq!(c.toolchain, "node16", "{c:?}");
}

/// A repository with no build file at its root, two crates side by side (`lib/` and
/// `lib_tests/`, whose tests use `lib` by path, as crates of 2016 were laid out): the project is
/// the folder of the patches' files that has a build file (the test patch's first), and every
/// command runs there. Before, `unsupported_environment` ("no known build files").
#[test]
fn a_project_in_a_folder_of_a_root_without_build_files_is_validated_there() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = tmp.path().join("repos");
    let lib = |body: &str| format!("pub fn add(a: u32, b: u32) -> u32 {{\n    {body}\n}}\n");
    let tests = |more: &str| format!("#[test]\nfn adds_zero() {{\n    assert_eq!(lib::add(2, 0), 2);\n}}\n{more}");
    let fx = fixture(
        &repos.join("forge-fixtures/twocrates"),
        "2024-01-01T00:00:00Z",
        &[
            ("README.md", "Two crates, no workspace.\n"),
            ("lib/Cargo.toml", "[package]\nname = \"lib\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"),
            ("lib/src/lib.rs", &lib("a")),
            (
                "lib_tests/Cargo.toml",
                "[package]\nname = \"lib_tests\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\n[dependencies]\nlib = { path = \"../lib\" }\n",
            ),
            ("lib_tests/src/lib.rs", ""),
            ("lib_tests/tests/add.rs", &tests("")),
        ],
        &[("lib_tests/tests/add.rs", &tests("\n#[test]\nfn adds() {\n    assert_eq!(lib::add(2, 3), 5);\n}\n"))],
        &[("lib/src/lib.rs", &lib("a + b"))],
    );
    let inst = instance("forge-fixtures", "twocrates", 1, fx);
    let out = validate_with(&[&inst], &repos, &tmp.path().join("out"), None, CHEAP);
    let r = &out[0];
    accepted(r);
    assert_eq!(keys(&r.f2p_tests), ["add::adds"], "{:?}", r.f2p_tests);
    assert_eq!(keys(&r.p2p_tests), ["add::adds_zero"], "{:?}", r.p2p_tests);
    let said = format!("{:?}", r.swe_forge.as_ref().unwrap().provenance);
    assert!(said.contains("the project is in lib_tests/"), "{said}");
}
