//! Which paths of a diff are tests, and which are the configuration of a test runner: the one
//! rule mining uses to split a pull request (`is_test_path`) and evaluation uses to drop what a
//! model's patch changes in tests (`test_change_rule`). Path components are compared whole:
//! `latest/x.go`, `contest.c` and `attestation.rs` are not tests.
//!
//! A Maven/Gradle source set decides before any name rule (`source_set_at`): under
//! `src/main/java/` a `FooSpec.java` or `FooTest.java` is main code, under `src/test/` or
//! `src/integrationTest/` every file is a test. The layout is the JVM's only: `src/<set>/` counts
//! when a JVM source root follows (`java/`, `kotlin/`, `scala/`, `groovy/`, `resources/`), so an
//! Electron app's `src/main/ipc.test.js` and an Italian locale's `src/it/` keep the name rules.

use crate::{DiffLine, diff_lines};

/// Directory names whose whole subtree is tests or test data, in any language:
/// `test/**` (C/C++, JS, mocha; Maven/Gradle's `src/test/**`), `tests/**` (Rust, Python, C/C++),
/// `unittests/**` (C/C++: LLVM's layout), `benches/**` (Rust), `__tests__/**` (Jest),
/// `testdata/**` (Go), snapshot and mock folders.
pub const TEST_DIRS: &[&str] = &[
    "test",
    "tests",
    "unittest",
    "unittests",
    "__tests__",
    "benches",
    "testdata",
    "test_data",
    "test-data",
    "__snapshots__",
    "__mocks__",
];

const SCRIPT_EXTS: &[&str] = &["js", "jsx", "ts", "tsx", "mjs", "cjs", "mts", "cts", "vue", "svelte"];
const JVM_EXTS: &[&str] = &["java", "kt", "kts", "scala", "groovy"];
const C_EXTS: &[&str] = &["c", "cc", "cpp", "cxx", "h", "hpp"];

/// A folder named as tests with a word of its own: `test_lib_json/` (jsoncpp's unit tests),
/// `unit_tests/`, `integration-tests/`, `parser_test/`.
fn is_test_dir_name(d: &str) -> bool {
    ["test_", "tests_", "test-", "tests-"].iter().any(|p| d.len() > p.len() && d.starts_with(p))
        || ["_test", "_tests", "-test", "-tests", "unittest", "unittests"]
            .iter()
            .any(|s| d.len() > s.len() && d.ends_with(s))
}

/// Whether `path` is a test file that jest and vitest run by their default patterns
/// (`**/__tests__/**/*.[jt]s?(x)`, `**/*.{test,spec}.[jt]s?(x)`, and `.mjs`/`.cjs`/`.mts`/`.cts`),
/// outside `node_modules/`.
pub fn is_js_suite_file(path: &str) -> bool {
    const EXTS: [&str; 8] = ["js", "jsx", "ts", "tsx", "mjs", "cjs", "mts", "cts"];
    let parts: Vec<&str> = path.split('/').collect();
    if parts.contains(&"node_modules") {
        return false;
    }
    let file = parts.last().copied().unwrap_or_default();
    let Some((stem, ext)) = file.rsplit_once('.') else { return false };
    if !EXTS.contains(&ext) || stem.ends_with(".d") {
        return false;
    }
    parts[..parts.len() - 1].contains(&"__tests__") || stem.ends_with(".test") || stem.ends_with(".spec")
}

/// What a Maven/Gradle source set holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SourceSet {
    /// Main code: `src/main/`, Kotlin Multiplatform's `src/commonMain/`, `src/jvmMain/`.
    Main,
    /// Tests and what only tests use: `src/test/`, `src/it/`, `src/testFixtures/`,
    /// `src/integrationTest/`, `src/androidTest/`, `src/jvmTest/`.
    Test,
}

/// The folders a JVM source set keeps its files in (`src/main/java/`, `src/test/resources/`).
const JVM_ROOTS: &[&str] = &["java", "kotlin", "scala", "groovy", "resources"];

/// What the source set named `name` holds, when the name says: `main` and `*Main` are main code;
/// `test`, `it`, `test*` followed by a capital (`testFixtures`, `testDebug`) and `*Test(s)` are tests.
fn source_set_kind(name: &str) -> Option<SourceSet> {
    let capital_after = |p: &str| name.strip_prefix(p).is_some_and(|r| r.starts_with(|c: char| c.is_ascii_uppercase()));
    if name == "main" || (name.len() > 4 && name.ends_with("Main")) {
        Some(SourceSet::Main)
    } else if matches!(name, "test" | "tests" | "it")
        || capital_after("test")
        || (name.len() > 4 && (name.ends_with("Test") || name.ends_with("Tests")))
    {
        Some(SourceSet::Test)
    } else {
        None
    }
}

/// The source set `dirs` (the folders of a path, from one on) starts, with its name: `dirs` is
/// `src/<set>/...` and a JVM source root follows the set (`src/main/java/`), or for a test set
/// a root anywhere below it or `file` is JVM source (maven-invoker's `src/it/<project>/`).
fn source_set_at<'a>(dirs: &[&'a str], file: &str) -> Option<(SourceSet, &'a str)> {
    let [src, set, below @ ..] = dirs else { return None };
    if *src != "src" {
        return None;
    }
    let kind = source_set_kind(set)?;
    let is_jvm_file = file.rsplit_once('.').is_some_and(|(_, e)| JVM_EXTS.contains(&e));
    let rooted = match kind {
        SourceSet::Main => below.first().is_some_and(|d| JVM_ROOTS.contains(d)),
        SourceSet::Test => below.iter().any(|d| JVM_ROOTS.contains(d)) || is_jvm_file,
    };
    rooted.then_some((kind, *set))
}

/// Whether `path` is a test file by its language's convention.
pub fn is_test_path(path: &str) -> bool {
    test_path_rule(path).is_some()
}

/// The convention that makes `path` a test file (`test directory tests/`, `Go *_test.go`, ...),
/// or none. A test folder outside a Maven/Gradle source set makes all below it tests
/// (`integration-tests/app/src/main/java/`); else the source set decides (main code is never a
/// test, whatever its name); else the file's name by its language's rule.
pub fn test_path_rule(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    let file = parts.pop()?;
    let layout = (0..parts.len()).find_map(|i| source_set_at(&parts[i..], file).map(|s| (i, s)));
    let outer = &parts[..layout.map_or(parts.len(), |(i, _)| i)];
    if let Some(d) = outer.iter().find(|d| TEST_DIRS.contains(d)) {
        return Some(format!("test directory {d}/"));
    }
    if let Some(d) = outer.iter().find(|d| is_test_dir_name(d)) {
        return Some(format!("test directory {d}/ (test_*, *_test(s), *-test(s))"));
    }
    match layout {
        Some((_, (SourceSet::Main, _))) => return None,
        Some((_, (SourceSet::Test, set))) => return Some(format!("Maven/Gradle test source set src/{set}/")),
        None => {}
    }
    let (stem, ext) = match file.rsplit_once('.') {
        Some((s, e)) if !s.is_empty() => (s, e),
        _ => (file, ""),
    };
    // `spec/` holds a JavaScript or Ruby project's tests (Jasmine's and RSpec's default folder,
    // mocha's `--recursive spec`), its scripts and their fixtures; elsewhere a `spec/` folder may
    // hold a specification (a language's, a format's), so only script files below one count.
    if (SCRIPT_EXTS.contains(&ext) || ext == "rb")
        && let Some(d) = outer.iter().find(|d| matches!(**d, "spec" | "specs"))
    {
        return Some(format!("JS/Ruby spec folder {d}/"));
    }
    let rule = match ext {
        "go" => stem.ends_with("_test").then_some("Go *_test.go"),
        "rs" => (stem == "tests" || stem.ends_with("_tests") || stem.ends_with("_test"))
            .then_some("Rust tests.rs, *_test(s).rs"),
        "py" => (stem.starts_with("test_") || stem.ends_with("_test") || stem == "conftest" || stem == "tests")
            .then_some("Python test_*.py, *_test.py, conftest.py"),
        "rb" => (stem.ends_with("_spec") || stem.ends_with("_test")).then_some("Ruby *_spec.rb, *_test.rb"),
        "php" => stem.ends_with("Test").then_some("PHP *Test.php"),
        "cs" => (stem.ends_with("Test") || stem.ends_with("Tests")).then_some("C# *Test(s).cs"),
        "snap" => Some("snapshot *.snap"),
        e if JVM_EXTS.contains(&e) => (stem.ends_with("Test")
            || stem.ends_with("Tests")
            || stem.ends_with("TestCase")
            || stem.ends_with("IT")
            || stem.ends_with("Spec")
            || (stem.starts_with("Test") && stem[4..].starts_with(|c: char| c.is_ascii_uppercase())))
        .then_some("JVM test class *Test, *Tests, *IT, Test*, *Spec"),
        e if SCRIPT_EXTS.contains(&e) => {
            // `x.test.ts`, `x.spec.js`, `x.e2e-spec.ts`; and a file named `test.js` or `spec.ts`
            // beside the code it tests (date-fns's `src/addDays/test.js`).
            let inner = stem.rsplit('.').next().unwrap_or_default();
            (matches!(stem, "test" | "tests" | "spec")
                || (stem.contains('.') && (inner == "test" || inner == "spec" || inner.ends_with("-spec"))))
            .then_some("JS/TS *.test.*, *.spec.*, test.js")
        }
        e if C_EXTS.contains(&e) => (stem.ends_with("_test")
            || stem.ends_with("_tests")
            || stem.ends_with("_unittest")
            || stem.starts_with("test_")
            || stem.ends_with("-test"))
        .then_some("C/C++ *_test.c, test_*.c"),
        // `*.spec.*` for any other extension (e.g. `x.spec.yaml` fixtures of a spec runner).
        _ => (stem.ends_with(".spec") || stem.ends_with(".test")).then_some("*.spec.*, *.test.*"),
    };
    rule.map(str::to_owned)
}

/// Configuration files of test runners, by file name: prefixes of the name (`jest.config.js`,
/// `.mocharc.yml`) or whole names.
const RUNNER_CONFIG_PREFIXES: &[(&str, &str)] = &[
    ("jest.config.", "jest configuration"),
    ("vitest.config.", "vitest configuration"),
    ("vitest.workspace.", "vitest configuration"),
    (".mocharc", "mocha configuration"),
    ("karma.conf", "karma configuration"),
    ("jasmine.json", "jasmine configuration"),
    ("CTestTestfile.cmake", "ctest configuration"),
    ("CTestCustom.cmake", "ctest configuration"),
    ("pytest.ini", "pytest configuration"),
    ("mocha.opts", "mocha configuration"),
];

/// Words in the changed lines of a `pom.xml` that set how Maven runs tests.
const POM_TEST_SETTINGS: &[&str] = &[
    "surefire",
    "failsafe",
    "skipTests",
    "maven.test.",
    "testFailureIgnore",
    "testSourceDirectory",
    "<testIncludes>",
    "<testExcludes>",
];

/// Whether the change `diff` (one file's piece of a diff) to `path` configures a test runner,
/// and which rule says so: jest, vitest, mocha, karma, ctest and pytest configuration files,
/// cargo's `.cargo/config(.toml)` (its `runner` wraps every test binary), and a `pom.xml` whose
/// changed lines name surefire, failsafe or Maven's test switches.
pub fn runner_config_rule(path: &str, diff: &str) -> Option<&'static str> {
    let mut parts = path.rsplit('/');
    let file = parts.next()?;
    let dir = parts.next();
    if let Some((_, rule)) = RUNNER_CONFIG_PREFIXES.iter().find(|(p, _)| file.starts_with(p)) {
        return Some(rule);
    }
    if dir == Some(".cargo") && matches!(file, "config" | "config.toml") {
        return Some("cargo configuration (.cargo/config)");
    }
    if file == "pom.xml"
        && diff_lines(diff).any(|(_, l)| match l {
            DiffLine::Added(body) | DiffLine::Removed(body) => POM_TEST_SETTINGS.iter().any(|w| body.contains(w)),
            _ => false,
        })
    {
        return Some("Maven test settings in pom.xml");
    }
    None
}

/// Why a model's change `diff` to `path` is not graded: a test file or a test runner's
/// configuration (see [`test_path_rule`] and [`runner_config_rule`]).
pub fn test_change_rule(path: &str, diff: &str) -> Option<String> {
    test_path_rule(path)
        .map(|r| format!("test file: {r}"))
        .or_else(|| runner_config_rule(path, diff).map(|r| format!("test runner configuration: {r}")))
}

/// The files a grader puts back to the base before it applies the test patch, so that a model's
/// change to a test cannot count: every path the test patch names, except the source files whose
/// tests live inside them. Those are the files the fix patch changes too (a Rust file whose
/// `#[cfg(test)]` module the pull request edited, split by hunk) and Rust `.rs` files that are
/// no test path (a test module added to a file the fix leaves alone): putting them back would
/// undo the model's change to the code beside the tests; the test patch is applied over it.
pub fn restored_test_files(test_patch: &str, fix_patch: &str) -> Vec<String> {
    let fixed = crate::PatchShape::of(fix_patch).touched;
    crate::PatchShape::of(test_patch)
        .touched
        .into_iter()
        .filter(|p| (is_test_path(p) || !p.ends_with(".rs")) && !fixed.contains(p))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_files_with_tests_inside_are_not_put_back() {
        let diff = |p: &str| format!("diff --git a/{p} b/{p}\n--- a/{p}\n+++ b/{p}\n@@ -1 +1 @@\n-a\n+b\n");
        let test_patch =
            [diff("tests/api.rs"), diff("src/ring.rs"), diff("src/queue.rs"), diff("testdata/x.json")].concat();
        let fix_patch = [diff("src/ring.rs"), diff("src/lib.rs")].concat();
        assert_eq!(restored_test_files(&test_patch, &fix_patch), ["tests/api.rs", "testdata/x.json"]);
        let go = [diff("stack_test.go"), diff("testdata/in.txt")].concat();
        assert_eq!(restored_test_files(&go, &diff("stack.go")), ["stack_test.go", "testdata/in.txt"]);
    }

    #[test]
    fn js_suite_files_follow_jests_default_patterns() {
        for p in ["test/argv.test.js", "src/__tests__/parse.ts", "a/b.spec.tsx", "lib/x.test.mjs"] {
            assert!(is_js_suite_file(p), "{p}");
        }
        for p in ["src/parse.ts", "node_modules/x/a.test.js", "types/a.test.d.ts", "test/helpers.js", "x.test.json"] {
            assert!(!is_js_suite_file(p), "{p}");
        }
    }

    #[test]
    fn test_file_conventions_per_language() {
        let tests = [
            // Java / Kotlin (Maven and Gradle layouts, class-name suffixes)
            "gson/src/test/java/com/google/gson/JsonTest.java",
            "lib/BarIT.java",
            "app/src/test/kotlin/x/Util.kt",
            "src/TestParser.java",
            // Go
            "pkg/stack_test.go",
            "internal/x/testdata/golden.json",
            // Rust
            "tests/capacity.rs",
            "crates/foo/tests/it/main.rs",
            "benches/bench.rs",
            "src/parser/tests.rs",
            // JS / TS
            "src/__tests__/button.tsx",
            "src/util.test.ts",
            "lib/a.test.js",
            "ui/Widget.test.jsx",
            "ui/Widget.test.tsx",
            "lib/router.spec.js",
            "src/app.e2e-spec.ts",
            "src/__snapshots__/x.snap",
            "src/addDays/test.js",
            "src/locale/en-US/test.ts",
            "lib/router/spec.js",
            // Python
            "tests/test_api.py",
            "pkg/test_util.py",
            "pkg/util_test.py",
            "conftest.py",
            // C / C++
            "test/json.cpp",
            "tests/unit/check_queue.c",
            "src/queue_test.cc",
            "src/queue_unittest.cc",
            "src/test_lib_json/main.cpp",
            "src/test_lib_json/jsontest.h",
            "unit_tests/parser.c",
            "unittests/array.cpp",
            "spec/helpers.js",
            "spec/models/user.rb",
            "packages/core/specs/parser.ts",
            "llvm/unittests/Support/Path.cpp",
            "tools/integration-tests/run.sh",
            // Ruby, PHP, C#
            "spec/models/user_spec.rb",
            "tests/Unit/UserTest.php",
            "Project.Tests/ParserTests.cs",
        ];
        for p in tests {
            assert!(is_test_path(p), "{p} should be a test file");
        }
        let not_tests = [
            // Multi-SWE-bench's substring split misfiles these
            "latest/version.go",
            "src/contest.c",
            "src/attestation.rs",
            "docs/testing.md",
            "src/protest/main.go",
            "cmd/testify_helper.go",
            "src/main/java/com/x/Tester.java",
            "src/main/java/com/x/Testimony.java",
            "src/latest.ts",
            "src/test-utils.ts",
            "src/testing.js",
            "src/attest.ts",
            "src/contest.spec_helper.rb.txt",
            "src/latest_release/main.c",
            "src/attest-tool/main.go",
            "src/unittest.c",
            "src/tests_/x.c",
            "Cargo.toml",
            "README.md",
            "src/lib.rs",
            "stack.go",
            // A specification, not tests: only script files below `spec/` are.
            "spec/toml-1.0.md",
            "spec/grammar.abnf",
        ];
        for p in not_tests {
            assert!(!is_test_path(p), "{p} should not be a test file");
        }
    }

    #[test]
    fn maven_and_gradle_source_sets_decide_before_the_name_rules() {
        let rule = |p: &str| test_path_rule(p);
        // Main code named like a test (Spock's `*Spec`, a `*Test` helper) is main code.
        for p in [
            "src/main/java/io/vavr/control/ValidationSpec.java",
            "src/main/java/FooTest.java",
            "core/src/main/java/FooTests.java",
            "module-a/src/main/java/com/acme/parser/ParserSpec.java",
            "services/billing/module-b/src/main/java/com/acme/test/TestSupport.java",
            "src/main/kotlin/com/acme/DslSpec.kt",
            "lib/src/main/scala/com/acme/TestKit.scala",
            "src/main/groovy/com/acme/BuildSpec.groovy",
            "src/main/resources/tests/fixture.json",
            "shared/src/commonMain/kotlin/com/acme/PlatformTest.kt",
        ] {
            assert_eq!(rule(p), None, "{p} is main code");
        }
        // Every file of a test source set is a test, whatever its name.
        for (p, set) in [
            ("src/test/java/com/acme/Helpers.java", "test"),
            ("module-a/src/test/kotlin/com/acme/Fakes.kt", "test"),
            ("src/test/resources/expected/out.json", "test"),
            ("src/it/java/com/acme/Roundtrip.java", "it"),
            ("src/it/simple-project/src/main/java/App.java", "it"),
            ("src/it/simple-project/verify.groovy", "it"),
            ("lib/src/testFixtures/java/com/acme/Builders.java", "testFixtures"),
            ("app/src/integrationTest/kotlin/Db.kt", "integrationTest"),
            ("app/src/androidTest/java/com/acme/MainScreen.java", "androidTest"),
            ("shared/src/jvmTest/kotlin/Platform.kt", "jvmTest"),
        ] {
            assert_eq!(rule(p), Some(format!("Maven/Gradle test source set src/{set}/")), "{p}");
        }
        // A test folder outside the source set holds tests: an integration-test module's main
        // code, a fixture project inside a test source set.
        assert_eq!(
            rule("integration-tests/app/src/main/java/App.java").as_deref(),
            Some("test directory integration-tests/ (test_*, *_test(s), *-test(s))")
        );
        assert_eq!(
            rule("src/test/resources/projects/demo/src/main/java/App.java").as_deref(),
            Some("Maven/Gradle test source set src/test/")
        );
        // The layout is the JVM's: a JS app's `src/main/` (Electron) and an `src/it/` locale folder
        // keep the name rules.
        assert!(is_test_path("src/main/ipc.test.js"));
        assert!(is_test_path("src/main/__tests__/window.ts"));
        assert!(!is_test_path("src/main/index.js"));
        assert!(!is_test_path("src/it/messages.json"));
        assert_eq!(rule("src/test/unit/parse.spec.js").as_deref(), Some("test directory test/"));
        // Outside the layout the JVM name rules stand.
        assert!(is_test_path("lib/FooSpec.groovy") && is_test_path("app/src/debug/java/FooTest.java"));
    }

    #[test]
    fn runner_configuration_is_named_by_its_rule() {
        let plain = "@@ -1 +1 @@\n-a\n+b\n";
        for (path, rule) in [
            ("jest.config.js", "jest configuration"),
            ("web/jest.config.ts", "jest configuration"),
            ("vitest.config.mts", "vitest configuration"),
            (".mocharc.yml", "mocha configuration"),
            (".mocharc.json", "mocha configuration"),
            ("karma.conf.js", "karma configuration"),
            ("build/CTestTestfile.cmake", "ctest configuration"),
            (".cargo/config.toml", "cargo configuration (.cargo/config)"),
            ("crates/x/.cargo/config", "cargo configuration (.cargo/config)"),
        ] {
            assert_eq!(runner_config_rule(path, plain), Some(rule), "{path}");
        }
        let surefire = "@@ -1 +1 @@\n-<version>1</version>\n+<artifactId>maven-surefire-plugin</artifactId>\n";
        assert_eq!(runner_config_rule("pom.xml", surefire), Some("Maven test settings in pom.xml"));
        assert_eq!(runner_config_rule("pom.xml", plain), None, "a dependency bump is not a test setting");
        for path in ["package.json", "Cargo.toml", "src/jest.ts", "config.toml", "vite.config.ts"] {
            assert_eq!(runner_config_rule(path, plain), None, "{path}");
        }
        assert_eq!(test_change_rule("stack_test.go", plain).as_deref(), Some("test file: Go *_test.go"));
        assert_eq!(test_change_rule("x/tests/a.rs", plain).as_deref(), Some("test file: test directory tests/"));
        assert_eq!(
            test_change_rule("jest.config.js", plain).as_deref(),
            Some("test runner configuration: jest configuration")
        );
        assert_eq!(test_change_rule("stack.go", plain), None);
        // A model's change to main code named like a test is graded, not dropped.
        assert_eq!(test_change_rule("src/main/java/a/FooSpec.java", plain), None);
    }
}
