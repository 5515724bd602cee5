//! Which paths of a diff are tests, and which are the configuration of a test runner: the one
//! rule mining uses to split a pull request (`is_test_path`) and evaluation uses to drop what a
//! model's patch changes in tests (`test_change_rule`). Path components are compared whole:
//! `latest/x.go`, `contest.c` and `attestation.rs` are not tests.

use crate::{DiffLine, diff_lines};

/// Directory names whose whole subtree is tests or test data, in any language:
/// `src/test/**` (Maven/Gradle), `tests/**` (Rust, Python, C/C++), `test/**` (C/C++, JS, mocha),
/// `benches/**` (Rust), `__tests__/**` (Jest), `testdata/**` (Go), snapshot and mock folders.
pub const TEST_DIRS: &[&str] =
    &["test", "tests", "__tests__", "benches", "testdata", "test_data", "test-data", "__snapshots__", "__mocks__"];

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

/// Whether `path` is a test file by its language's convention.
pub fn is_test_path(path: &str) -> bool {
    test_path_rule(path).is_some()
}

/// The convention that makes `path` a test file (`test directory tests/`, `Go *_test.go`, ...),
/// or none.
pub fn test_path_rule(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    let file = parts.pop()?;
    if let Some(d) = parts.iter().find(|d| TEST_DIRS.contains(d)) {
        return Some(format!("test directory {d}/"));
    }
    if let Some(d) = parts.iter().find(|d| is_test_dir_name(d)) {
        return Some(format!("test directory {d}/ (test_*, *_test(s), *-test(s))"));
    }
    let (stem, ext) = match file.rsplit_once('.') {
        Some((s, e)) if !s.is_empty() => (s, e),
        _ => (file, ""),
    };
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

#[cfg(test)]
mod tests {
    use super::*;

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
            "src/main/java/FooTest.java",
            "core/src/main/java/FooTests.java",
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
        ];
        for p in not_tests {
            assert!(!is_test_path(p), "{p} should not be a test file");
        }
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
    }
}
