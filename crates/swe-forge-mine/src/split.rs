//! Splitting a pull request's diff into `test_patch` and `fix_patch` by the test-file conventions
//! of each language, never by a substring of the path (Multi-SWE-bench's split puts `latest/` and
//! `contest.c` into the test patch).
//!
//! Owns: deciding which paths of a diff (cut by `swe_forge_core::file_diffs`) are tests, fixtures
//! next to tests, and the flag for Rust `#[cfg(test)]` modules edited inside source files. Does
//! not read repositories or the network.

use serde::{Deserialize, Serialize};
use swe_forge_core::{DiffLine, diff_lines, file_diffs};

/// A diff divided into its two halves.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SplitPatch {
    /// Everything that is not a test file.
    pub fix_patch: String,
    /// Test files and the test data next to them.
    pub test_patch: String,
    /// Paths that went into `test_patch`.
    pub test_files: Vec<String>,
    /// Paths that went into `fix_patch`.
    pub fix_files: Vec<String>,
    /// Things a reviewer should know about the split.
    pub flags: Vec<SplitFlag>,
}

/// Something the split could not decide cleanly.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "path")]
pub enum SplitFlag {
    /// A Rust source file (fix side) adds or edits lines of a `#[cfg(test)]` module or a `#[test]`
    /// function: part of the tests lives in the fix patch.
    RustInlineTests(String),
    /// The fix patch touches no source-code file (only docs, configuration or data).
    FixWithoutSourceCode(String),
}

impl SplitPatch {
    /// Both halves are non-empty: the only shape that can become an instance.
    pub fn is_candidate(&self) -> bool {
        !self.fix_patch.is_empty() && !self.test_patch.is_empty()
    }
}

/// Directory names whose whole subtree is tests or test data, in any language:
/// `src/test/**` (Maven/Gradle), `tests/**` (Rust, Python, C/C++), `test/**` (C/C++, JS), `benches/**`
/// (Rust), `__tests__/**` (Jest), `testdata/**` (Go), snapshot and mock folders.
const TEST_DIRS: &[&str] =
    &["test", "tests", "__tests__", "benches", "testdata", "test_data", "test-data", "__snapshots__", "__mocks__"];

/// Names of fixture folders that count as tests when they sit next to tests of the same PR.
const FIXTURE_DIRS: &[&str] = &["fixtures", "fixture", "__fixtures__"];

const SCRIPT_EXTS: &[&str] = &["js", "jsx", "ts", "tsx", "mjs", "cjs", "mts", "cts", "vue", "svelte"];
const JVM_EXTS: &[&str] = &["java", "kt", "kts", "scala", "groovy"];
const C_EXTS: &[&str] = &["c", "cc", "cpp", "cxx", "h", "hpp"];

/// Whether `path` is a test file by its language's convention. Path components are compared
/// whole: `latest/x.go`, `contest.c` and `attestation.rs` are not tests.
pub fn is_test_path(path: &str) -> bool {
    let mut parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    let Some(file) = parts.pop() else { return false };
    if parts.iter().any(|d| TEST_DIRS.contains(d)) {
        return true;
    }
    let (stem, ext) = match file.rsplit_once('.') {
        Some((s, e)) if !s.is_empty() => (s, e),
        _ => (file, ""),
    };
    match ext {
        "go" => stem.ends_with("_test"),
        "rs" => stem == "tests" || stem.ends_with("_tests") || stem.ends_with("_test"),
        "py" => stem.starts_with("test_") || stem.ends_with("_test") || stem == "conftest" || stem == "tests",
        "rb" => stem.ends_with("_spec") || stem.ends_with("_test"),
        "php" => stem.ends_with("Test"),
        "cs" => stem.ends_with("Test") || stem.ends_with("Tests"),
        "snap" => true,
        e if JVM_EXTS.contains(&e) => {
            stem.ends_with("Test")
                || stem.ends_with("Tests")
                || stem.ends_with("TestCase")
                || stem.ends_with("IT")
                || stem.ends_with("Spec")
                || (stem.starts_with("Test") && stem[4..].starts_with(|c: char| c.is_ascii_uppercase()))
        }
        e if SCRIPT_EXTS.contains(&e) => {
            // `x.test.ts`, `x.spec.js`, `x.e2e-spec.ts`; and a file named `test.js` or `spec.ts`
            // beside the code it tests (date-fns's `src/addDays/test.js`).
            let inner = stem.rsplit('.').next().unwrap_or_default();
            matches!(stem, "test" | "tests" | "spec")
                || (stem.contains('.') && (inner == "test" || inner == "spec" || inner.ends_with("-spec")))
        }
        e if C_EXTS.contains(&e) => {
            stem.ends_with("_test")
                || stem.ends_with("_tests")
                || stem.ends_with("_unittest")
                || stem.starts_with("test_")
                || stem.ends_with("-test")
        }
        _ => {
            // `*.spec.*` for any other extension (e.g. `x.spec.yaml` fixtures of a spec runner).
            stem.ends_with(".spec") || stem.ends_with(".test")
        }
    }
}

/// Source-code extensions: a fix patch with none of these is flagged.
const CODE_EXTS: &[&str] = &[
    "go", "rs", "py", "rb", "php", "cs", "java", "kt", "kts", "scala", "groovy", "js", "jsx", "ts", "tsx", "mjs",
    "cjs", "mts", "cts", "vue", "svelte", "c", "cc", "cpp", "cxx", "h", "hh", "hpp", "hxx", "swift", "m", "mm", "sh",
    "lua", "ex", "exs", "erl", "hs", "ml", "zig", "dart", "jl", "clj", "fs", "sql", "y", "l",
];

/// Splits a diff into test and fix halves. A fixture folder (`fixtures/`, `__fixtures__/`) goes to
/// the test side when the same PR has a test file next to it: in the folder's parent directory or
/// in a test directory (`__tests__/`, `test/`, ...) right under that parent.
pub fn split_patch(diff: &str) -> SplitPatch {
    let files = file_diffs(diff);
    let mut is_test: Vec<bool> = files.iter().map(|f| is_test_path(&f.path)).collect();
    let test_dirs: Vec<String> = files
        .iter()
        .zip(&is_test)
        .filter(|(_, t)| **t)
        .map(|(f, _)| f.path.rsplit_once('/').map_or(String::new(), |(d, _)| format!("{d}/")))
        .collect();
    for (i, f) in files.iter().enumerate() {
        if is_test[i] {
            continue;
        }
        let parts: Vec<&str> = f.path.split('/').collect();
        for (k, part) in parts[..parts.len().saturating_sub(1)].iter().enumerate() {
            if FIXTURE_DIRS.contains(part) {
                let parent = if k == 0 { String::new() } else { format!("{}/", parts[..k].join("/")) };
                let next_to_tests = |d: &String| {
                    d.strip_prefix(parent.as_str()).is_some_and(|rest| {
                        rest.is_empty() || rest.split('/').next().is_some_and(|c| TEST_DIRS.contains(&c))
                    })
                };
                if test_dirs.iter().any(next_to_tests) {
                    is_test[i] = true;
                    break;
                }
            }
        }
    }
    let mut out = SplitPatch::default();
    for (f, test) in files.into_iter().zip(is_test) {
        if test {
            out.test_patch.push_str(f.text);
            out.test_files.push(f.path);
        } else {
            if f.path.ends_with(".rs") && edits_inline_rust_tests(f.text) {
                out.flags.push(SplitFlag::RustInlineTests(f.path.clone()));
            }
            out.fix_patch.push_str(f.text);
            out.fix_files.push(f.path);
        }
    }
    if !out.fix_files.is_empty() && !out.fix_files.iter().any(|p| is_code_path(p)) {
        out.flags.push(SplitFlag::FixWithoutSourceCode(out.fix_files.join(", ")));
    }
    out
}

fn is_code_path(path: &str) -> bool {
    path.rsplit_once('.').is_some_and(|(_, e)| CODE_EXTS.contains(&e))
}

/// An added or removed line, or the hunk's context header, mentions a Rust test module or test
/// function.
fn edits_inline_rust_tests(text: &str) -> bool {
    diff_lines(text).any(|(_, l)| match l {
        DiffLine::Added(body) | DiffLine::Removed(body) | DiffLine::HunkStart(body) => {
            body.contains("#[cfg(test)]") || body.contains("#[test]") || body.contains("mod tests")
        }
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
            "Cargo.toml",
            "README.md",
            "src/lib.rs",
            "stack.go",
        ];
        for p in not_tests {
            assert!(!is_test_path(p), "{p} should not be a test file");
        }
    }

    fn file_diff(path: &str, added: &str) -> String {
        format!(
            "diff --git a/{path} b/{path}\nindex 1111111..2222222 100644\n--- a/{path}\n+++ b/{path}\n@@ -1 +1,2 @@\n x\n+{added}\n"
        )
    }

    #[test]
    fn file_pieces_keep_every_byte_and_find_paths() {
        let new_file = "diff --git a/new.go b/new.go\nnew file mode 100644\nindex 0000000..3333333\n--- /dev/null\n+++ b/new.go\n@@ -0,0 +1 @@\n+package x\n";
        let deleted = "diff --git a/old_test.go b/old_test.go\ndeleted file mode 100644\nindex 3333333..0000000\n--- a/old_test.go\n+++ /dev/null\n@@ -1 +0,0 @@\n-package x\n";
        let renamed = "diff --git a/a.go b/b_test.go\nsimilarity index 100%\nrename from a.go\nrename to b_test.go\n";
        let binary = "diff --git a/testdata/img.png b/testdata/img.png\nindex 1111111..2222222 100644\nBinary files a/testdata/img.png and b/testdata/img.png differ\n";
        let all = format!("{}{new_file}{deleted}{renamed}{binary}", file_diff("stack.go", "y"));
        let files = file_diffs(&all);
        let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["stack.go", "new.go", "old_test.go", "b_test.go", "testdata/img.png"]);
        assert_eq!(files.iter().map(|f| f.text).collect::<String>(), all);
    }

    #[test]
    fn split_puts_tests_and_fixtures_next_to_tests_on_the_test_side() {
        let diff = [
            file_diff("src/lib/parse.js", "a"),
            file_diff("src/lib/__tests__/parse.js", "b"),
            file_diff("src/lib/fixtures/input.json", "c"),
            file_diff("fixtures/unrelated.json", "d"),
            file_diff("latest/notes.go", "e"),
        ]
        .concat();
        let s = split_patch(&diff);
        assert_eq!(s.test_files, ["src/lib/__tests__/parse.js", "src/lib/fixtures/input.json"]);
        assert_eq!(s.fix_files, ["src/lib/parse.js", "fixtures/unrelated.json", "latest/notes.go"]);
        assert!(s.is_candidate());
        assert!(s.flags.is_empty(), "{:?}", s.flags);
    }

    #[test]
    fn a_pr_without_tests_or_without_a_fix_is_no_candidate() {
        assert!(!split_patch(&file_diff("stack.go", "a")).is_candidate());
        assert!(!split_patch(&file_diff("stack_test.go", "a")).is_candidate());
        assert!(!split_patch("").is_candidate());
    }

    #[test]
    fn rust_tests_inside_a_source_file_are_flagged() {
        let diff = [file_diff("src/ring.rs", "#[cfg(test)]"), file_diff("tests/capacity.rs", "x")].concat();
        let s = split_patch(&diff);
        assert_eq!(s.flags, [SplitFlag::RustInlineTests("src/ring.rs".into())]);
        let plain = [file_diff("src/ring.rs", "fn x() {}"), file_diff("tests/capacity.rs", "x")].concat();
        assert!(split_patch(&plain).flags.is_empty());
    }

    #[test]
    fn a_fix_of_only_docs_is_flagged() {
        let diff = [file_diff("README.md", "a"), file_diff("x_test.go", "b")].concat();
        assert_eq!(split_patch(&diff).flags, [SplitFlag::FixWithoutSourceCode("README.md".into())]);
    }
}
