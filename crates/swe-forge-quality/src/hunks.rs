//! Which hunks of a fix are worth leaving out to see whether the tests need them: those that
//! change code the project ships. A hunk of documentation (`Readme.md`, `CHANGELOG.md`), of an
//! example, of a configuration file (`.eslintrc.js`, `jest.config.js`), or one that only rewords
//! comments or reformats (`};` to `}`) can never be needed by a test, so leaving it out says nothing about the tests.

use swe_forge_core::{DiffLine, diff_lines, file_diffs};

use crate::defs::Lang;

/// Folders whose files no test of the project runs as the project's code.
const NOT_SHIPPED: &[&str] = &["doc", "docs", "example", "examples", "sample", "samples", "benchmark", "benchmarks"];

/// Whether `path` is code the project ships: a source file of a language we read, not in a
/// documentation or examples folder, not a dotfile or a tool's configuration script.
pub fn is_shipped_code(path: &str) -> bool {
    if Lang::of(path).is_none() {
        return false;
    }
    let mut parts: Vec<&str> = path.split('/').collect();
    let name = parts.pop().unwrap_or_default();
    let configuration = name.starts_with('.')
        || name.contains(".config.")
        || ["gruntfile.js", "gulpfile.js", "webpack.config.js", "karma.conf.js"]
            .contains(&name.to_lowercase().as_str());
    !configuration && !parts.iter().any(|p| NOT_SHIPPED.contains(&p.to_lowercase().as_str()))
}

/// The hunks of `fix_patch` (indices as [`swe_forge_core::patch_hunks`] counts them) that change
/// shipped code ([`is_shipped_code`]): lines that are neither blank nor comments, and whose change
/// is more than formatting (`};` to `}`, re-indenting, quote style).
pub fn code_hunks(fix_patch: &str) -> Vec<usize> {
    let mut out = Vec::new();
    let mut index = 0usize;
    for f in file_diffs(fix_patch) {
        if !is_shipped_code(&f.path) {
            index += diff_lines(f.text).filter(|(_, l)| matches!(l, DiffLine::HunkStart(_))).count();
            continue;
        }
        let mut current: Option<(usize, Vec<String>, Vec<String>)> = None;
        for (_, line) in diff_lines(f.text) {
            match line {
                DiffLine::HunkStart(_) => {
                    out.extend(current.take().and_then(changes_code));
                    current = Some((index, Vec::new(), Vec::new()));
                    index += 1;
                }
                DiffLine::Added(t) if !comment_or_blank(t) => {
                    if let Some((_, added, _)) = current.as_mut() {
                        added.push(formatting_folded(t));
                    }
                }
                DiffLine::Removed(t) if !comment_or_blank(t) => {
                    if let Some((_, _, removed)) = current.as_mut() {
                        removed.push(formatting_folded(t));
                    }
                }
                _ => {}
            }
        }
        out.extend(current.and_then(changes_code));
    }
    out
}

/// The hunk's index when its added and removed lines differ by more than formatting.
fn changes_code((index, mut added, mut removed): (usize, Vec<String>, Vec<String>)) -> Option<usize> {
    added.retain(|l| !l.is_empty());
    removed.retain(|l| !l.is_empty());
    added.sort();
    removed.sort();
    (added != removed).then_some(index)
}

/// A line without what formatters change: whitespace, a closing `;` or `,`, quote style.
fn formatting_folded(line: &str) -> String {
    let folded: String = line.chars().filter(|c| !c.is_whitespace()).map(|c| if c == '\'' { '"' } else { c }).collect();
    folded.trim_end_matches([';', ',']).to_owned()
}

/// A blank line or a comment line of the C family, Go, Rust, Java and JavaScript (`//`, `/*`,
/// `*`, `*/`); a block comment's inner lines start with `*` by convention.
fn comment_or_blank(line: &str) -> bool {
    let t = line.trim();
    t.is_empty() || ["//", "/*", "*"].iter().any(|p| t.starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docs_examples_configuration_and_comment_only_hunks_are_not_left_out() {
        let patch = "\
diff --git a/stack.go b/stack.go
--- a/stack.go
+++ b/stack.go
@@ -13,6 +13,9 @@ type Stack[T any] struct {
 func (s *Stack[T]) Push(v T) {
+\tif s.items == nil {
+\t\ts.items = make([]T, 0, 8)
+\t}
@@ -28,6 +31,6 @@ func (s *Stack[T]) Pop() (T, error) {
-// Len returns the number of items on the stack.
+// Len returns how many items the stack holds.
@@ -40,3 +43,3 @@ func (s *Stack[T]) Len() int {
-\t/* old */ return 0
+\treturn len(s.items)
diff --git a/Readme.md b/Readme.md
--- a/Readme.md
+++ b/Readme.md
@@ -1 +1 @@
-old
+new
diff --git a/examples/pizza.js b/examples/pizza.js
--- a/examples/pizza.js
+++ b/examples/pizza.js
@@ -1 +1 @@
-const a = 1;
+const a = 2;
diff --git a/.eslintrc.js b/.eslintrc.js
--- a/.eslintrc.js
+++ b/.eslintrc.js
@@ -1 +1 @@
-module.exports = {};
+module.exports = { root: true };
diff --git a/lib/command.js b/lib/command.js
--- a/lib/command.js
+++ b/lib/command.js
@@ -5,2 +5,3 @@ class Command {
+    this._name = name;
@@ -49,7 +49,7 @@ class Argument {
   name() {
-  };
+  }
@@ -60,2 +60,2 @@ class Argument {
-    const a = require('x');
+  const a = require(\"x\")
";
        assert_eq!(swe_forge_core::patch_hunks(patch).len(), 9);
        // commander-1683's `};` to `}` and a re-formatted line change no code.
        assert_eq!(code_hunks(patch), [0, 2, 6]);
        assert!(is_shipped_code("src/lib.rs") && is_shipped_code("include/nlohmann/json.hpp"));
        assert!(
            !is_shipped_code("docs/conf.js") && !is_shipped_code("jest.config.js") && !is_shipped_code("CHANGELOG.md")
        );
    }
}
