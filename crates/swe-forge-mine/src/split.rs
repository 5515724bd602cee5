//! Splitting a pull request's diff into `test_patch` and `fix_patch` by the test-file conventions
//! of each language, never by a substring of the path (Multi-SWE-bench's split puts `latest/` and
//! `contest.c` into the test patch).
//!
//! Owns: deciding which paths of a diff (cut by `swe_forge_core::file_diffs`) are tests (by
//! `swe_forge_core::is_test_path`, the rule evaluation shares: a Maven/Gradle source set first,
//! so `src/main/java/FooSpec.java` is fix), fixtures next to tests, and the
//! flag for Rust `#[cfg(test)]` modules edited inside source files. Does not read repositories or
//! the network.

use serde::{Deserialize, Serialize};
pub use swe_forge_core::is_test_path;
use swe_forge_core::{DiffLine, TEST_DIRS, diff_lines, file_diffs, partition_hunks};

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

/// Names of fixture folders that count as tests when they sit next to tests of the same PR.
const FIXTURE_DIRS: &[&str] = &["fixtures", "fixture", "__fixtures__"];

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
            continue;
        }
        if !f.path.ends_with(".rs") {
            out.fix_patch.push_str(f.text);
            out.fix_files.push(f.path);
            continue;
        }
        // A Rust source file: the hunks inside its test module go with the tests.
        let (tests, code) = partition_hunks(f.text, is_rust_test_module_hunk);
        if !tests.is_empty() {
            out.test_patch.push_str(&tests);
            out.test_files.push(f.path.clone());
        }
        if !code.is_empty() {
            if edits_inline_rust_tests(&code) {
                out.flags.push(SplitFlag::RustInlineTests(f.path.clone()));
            }
            out.fix_patch.push_str(&code);
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

/// A hunk of a Rust source file that changes only its test module: either git's context line
/// (the last unindented line before the hunk) opens a test module (`mod tests {`, `mod test {`,
/// `mod parse_tests {`; not `pub`, which ships to users) and no change follows the module's
/// unindented closing `}`, or every line the hunk adds is one new `#[cfg(test)]` module, closed
/// within the hunk, and it removes nothing.
fn is_rust_test_module_hunk(hunk: &str) -> bool {
    let mut lines = diff_lines(hunk).map(|(_, l)| l);
    let Some(DiffLine::HunkStart(header)) = lines.next() else { return false };
    let body: Vec<DiffLine> = lines.collect();
    let context = header.splitn(3, "@@").nth(2).unwrap_or("").trim();
    if opens_test_module(context) {
        let closed = body
            .iter()
            .position(|l| matches!(l, DiffLine::Context("}") | DiffLine::Added("}") | DiffLine::Removed("}")));
        return closed
            .is_none_or(|at| body[at..].iter().all(|l| matches!(l, DiffLine::Context(_) | DiffLine::NoNewline)));
    }
    if body.iter().any(|l| matches!(l, DiffLine::Removed(_))) {
        return false;
    }
    let added: Vec<&str> = body
        .iter()
        .filter_map(|l| if let DiffLine::Added(t) = l { Some(*t) } else { None })
        .skip_while(|t| t.trim().is_empty())
        .collect();
    let Some(last) = added.iter().rposition(|t| !t.trim().is_empty()) else { return false };
    let mut items = added[..=last].iter().filter(|t| !t.trim().is_empty());
    if items.next().map(|t| t.trim()) != Some("#[cfg(test)]") || !items.next().is_some_and(|t| opens_test_module_any(t))
    {
        return false;
    }
    // The module closes on the last added line and nowhere before: one module, nothing after it.
    let closes = added[..=last].iter().filter(|t| **t == "}").count();
    added[last] == "}" && closes == 1
}

/// `mod tests {` and the like, as git's hunk context shows it: a test-named module, not public.
fn opens_test_module(line: &str) -> bool {
    !line.starts_with("pub") && opens_test_module_any(line)
}

/// `mod <name> {` (any visibility) whose name says tests: `test`, `tests`, `*_test(s)`, `test(s)_*`.
fn opens_test_module_any(line: &str) -> bool {
    let line = line.trim();
    let rest = line.split_once("mod ").filter(|(vis, _)| vis.is_empty() || vis.starts_with("pub")).map(|(_, r)| r);
    let Some(rest) = rest else { return false };
    let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
    let after = rest[name.len()..].trim_start();
    after.starts_with('{')
        && (matches!(name.as_str(), "test" | "tests")
            || ["_test", "_tests"].iter().any(|s| name.ends_with(s))
            || ["test_", "tests_"].iter().any(|p| name.starts_with(p)))
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
    fn main_code_named_like_a_test_travels_with_the_fix() {
        // Spock-style `*Spec` and `*Test` names under `src/main/` are main code (a Maven or Gradle
        // layout decides before the name rules); everything under `src/test/` is a test.
        let diff = [
            file_diff("vavr/src/main/java/io/vavr/control/ValidationSpec.java", "a"),
            file_diff("vavr/src/main/kotlin/io/vavr/TestSupport.kt", "b"),
            file_diff("vavr/src/test/java/io/vavr/control/ValidationSpecTest.java", "c"),
            file_diff("vavr/src/test/resources/validation.json", "d"),
        ]
        .concat();
        let s = split_patch(&diff);
        assert_eq!(
            s.fix_files,
            ["vavr/src/main/java/io/vavr/control/ValidationSpec.java", "vavr/src/main/kotlin/io/vavr/TestSupport.kt"]
        );
        assert_eq!(
            s.test_files,
            ["vavr/src/test/java/io/vavr/control/ValidationSpecTest.java", "vavr/src/test/resources/validation.json"]
        );
    }

    #[test]
    fn a_pr_without_tests_or_without_a_fix_is_no_candidate() {
        assert!(!split_patch(&file_diff("stack.go", "a")).is_candidate());
        assert!(!split_patch(&file_diff("stack_test.go", "a")).is_candidate());
        assert!(!split_patch("").is_candidate());
    }

    #[test]
    fn hunks_of_a_rust_test_module_are_told_from_the_code_around_it() {
        let hunk = |ctx: &str, body: &str| format!("@@ -10,3 +10,4 @@{ctx}\n{body}");
        let inside = " x\n+    #[test]\n+    fn t() {}\n y\n";
        assert!(is_rust_test_module_hunk(&hunk(" mod tests {", inside)));
        assert!(is_rust_test_module_hunk(&hunk(" mod parse_tests {", inside)));
        // Public test helpers ship to users; other modules and functions are code.
        assert!(!is_rust_test_module_hunk(&hunk(" pub mod test {", inside)));
        assert!(!is_rust_test_module_hunk(&hunk(" impl Ring {", inside)));
        assert!(!is_rust_test_module_hunk(&hunk("", inside)));
        // A change after the module's closing brace is code.
        let past_end = "     }\n }\n \n+fn after() {}\n";
        assert!(!is_rust_test_module_hunk(&hunk(" mod tests {", past_end)));
        assert!(is_rust_test_module_hunk(&hunk(" mod tests {", "+    fn u() {}\n }\n")));
        // A whole new test module; not one that is followed by code, nor a bare attribute.
        let new_module = " }\n+\n+#[cfg(test)]\n+mod tests {\n+    #[test]\n+    fn t() {\n+    }\n+}\n";
        assert!(is_rust_test_module_hunk(&hunk(" impl Ring {", new_module)));
        let then_code = format!("{new_module}+fn more() {{\n+}}\n");
        assert!(!is_rust_test_module_hunk(&hunk(" impl Ring {", &then_code)));
        assert!(!is_rust_test_module_hunk(&hunk("", "+#[cfg(test)]\n+use x;\n")));
        assert!(!is_rust_test_module_hunk(&hunk("", "-fn gone() {}\n+#[cfg(test)]\n+mod tests {\n+}\n")));
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
