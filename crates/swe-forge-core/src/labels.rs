//! The label rule: which tests an instance lists, and the evidence of how its phases ran.
//!
//! Multi-SWE-bench sorts every test by its test -> fix transition alone: a test that PASSED on
//! the base, did not report with the test patch (NONE) and passes with the fix becomes n2p, and
//! with it FAIL_TO_PASS. When the test run stopped early (a fail-fast runner, a test patch that
//! does not compile without the fix, a crash) that turns every test the run never reached into
//! FAIL_TO_PASS. Under [`LabelRule::Strict`] (swe-forge's default) such a test is *not run in the
//! test phase*: it is kept out of every category and listed on its own, unless the test patch
//! adds or changes it (then not compiling before the fix is failing before the fix). Under
//! [`LabelRule::Msb`] (the `msb` profile) the categories are Multi-SWE-bench's, unchanged.
//!
//! [`Truncation`] is the evidence that a phase ran fewer tests than the others, with its cause.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use serde::{Deserialize, Serialize};

use crate::patch::{DiffLine, diff_lines, file_diffs};
use crate::{Phase, TestMap, TestStatus, Transition};

/// How tests become categories.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LabelRule {
    /// swe-forge's rule: a test that passed on the base and did not run in the test phase is
    /// not FAIL_TO_PASS (nor in any category) unless the test patch adds or changes it.
    #[default]
    Strict,
    /// Multi-SWE-bench's rule: the test -> fix transition alone.
    Msb,
}

impl LabelRule {
    /// The snake_case name used in records and profiles.
    pub fn as_str(self) -> &'static str {
        match self {
            LabelRule::Strict => "strict",
            LabelRule::Msb => "msb",
        }
    }
}

/// Why a phase reported fewer tests than the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TruncationCause {
    /// The runner stopped at a failure on purpose (`--bail`, `-failfast`, `--stop-on-failure`,
    /// plain `cargo test`, a `set -e` chain).
    FailFast,
    /// Code or tests did not compile, so a module, package or binary ran no test.
    CompileFailure,
    /// The run was killed by its timeout.
    Timeout,
    /// A jest or vitest run reported far fewer tests than the tree has test files (a suite
    /// that parsed the runner's arguments and ended it, a config that ran one file).
    ShortSuite,
    /// The runner died in the middle (a signal, a segmentation fault, out of memory).
    Crash,
    /// None of the above could be told from the run.
    Unknown,
}

impl TruncationCause {
    /// The snake_case name used in records and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            TruncationCause::FailFast => "fail_fast",
            TruncationCause::CompileFailure => "compile_failure",
            TruncationCause::Timeout => "timeout",
            TruncationCause::ShortSuite => "short_suite",
            TruncationCause::Crash => "crash",
            TruncationCause::Unknown => "unknown",
        }
    }
}

/// A phase that did not report tests the phases around it reported.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Truncation {
    /// The phase that ran fewer tests (`test` or `fix`).
    pub phase: Phase,
    /// Why, as far as the run tells.
    pub cause: TruncationCause,
    /// Tests this phase reported.
    pub reported: u64,
    /// Tests both other phases reported that this one did not.
    pub missing: u64,
    /// What in the run shows the cause (a log line, the flag), when something does.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub evidence: String,
    /// Whether the instance's lists can stand on this phase anyway: a compile failure the test
    /// patch explains (its tests are FAIL_TO_PASS, the rest is set apart), or a truncation too
    /// small to matter. Otherwise the instance is rejected `truncated_run`.
    pub tolerated: bool,
}

/// What the test patch adds or changes, to tell which tests it touches.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TestPatchTouch {
    /// Paths of the files it changes.
    paths: Vec<String>,
    /// Their names without extensions (`FooTest`, `foo_test`, `foo.test` -> `foo`).
    stems: BTreeSet<String>,
    /// Every added and removed line and every hunk header's context, one per line.
    text: String,
    /// The same per file: its name without extensions (`ParserTestCase`), its lines.
    files: Vec<(String, String)>,
}

impl TestPatchTouch {
    /// Reads `test_patch`.
    pub fn of(test_patch: &str) -> TestPatchTouch {
        let mut t = TestPatchTouch::default();
        for f in file_diffs(test_patch) {
            // A deleted file's tests are gone; its lines say nothing of the tests that remain.
            if f.text
                .lines()
                .take_while(|l| !l.starts_with("@@"))
                .any(|l| l.starts_with("deleted file mode") || l == "+++ /dev/null")
            {
                continue;
            }
            let name = f.path.rsplit('/').next().unwrap_or(&f.path).to_owned();
            let mut stem = name.as_str();
            while let Some((s, _)) = stem.rsplit_once('.') {
                if s.is_empty() {
                    break;
                }
                stem = s;
                t.stems.insert(stem.to_owned());
            }
            for suffix in ["_test", "_spec", "Test", "Tests", "Spec", "_tests"] {
                if let Some(s) = stem.strip_suffix(suffix).filter(|s| s.len() >= 3) {
                    t.stems.insert(s.to_owned());
                }
            }
            t.paths.push(f.path.clone());
            let comments = comment_marks(&name);
            // A hunk's context names the function the hunk starts in (git's `@@ ... @@ func
            // TestX(`); it counts when the first change comes before that function's closing
            // brace, not when the hunk only appends after it.
            let mut header: Option<&str> = None;
            let mut own = String::new();
            for (_, line) in diff_lines(f.text) {
                match line {
                    DiffLine::HunkStart(h) => header = h.splitn(3, "@@").nth(2),
                    DiffLine::Context(l) if l.starts_with('}') => header = None,
                    // A comment changes no test: a name in it (`// TestCheckFile tests a file`
                    // copied above another function) is a mention.
                    DiffLine::Added(l) | DiffLine::Removed(l) if is_comment(l, comments) => {}
                    DiffLine::Added(l) | DiffLine::Removed(l) => {
                        for text in [header.take().unwrap_or_default(), l] {
                            own.push_str(text);
                            own.push('\n');
                        }
                    }
                    _ => {}
                }
            }
            t.text.push_str(&own);
            let first_stem = name.split('.').next().unwrap_or(&name).to_owned();
            t.files.push((first_stem, own));
        }
        t
    }

    /// [`TestPatchTouch::touches`], knowing every test id of the runs (`ids`): a method name a
    /// file changes then belongs to that file's class when the class has a test of that name
    /// (`DefaultParserTest#testBuilder` added to `DefaultParserTest.java` does not touch
    /// `CommandLineTest#testBuilder`), and to every class with a test of that name when it has
    /// none (an abstract superclass's `ParserTestCase.java` changing `testLongOptionQuoteHandling`
    /// touches `GnuParserTest#testLongOptionQuoteHandling`, which inherits it).
    pub fn among<'a>(&'a self, ids: impl IntoIterator<Item = &'a str>) -> Touches<'a> {
        let methods = ids.into_iter().filter_map(class_and_method).collect();
        Touches { patch: self, methods }
    }

    /// Whether the test patch adds or changes test `id` (a canonical id). A test with a name of
    /// its own (the function, method or title after the last `::`, `#` or ` > `; each level of a
    /// Go subtest) is touched when that name is on a line the patch adds or removes (a whole-line
    /// comment does not count) or in a hunk's context (Go's `func TestX(`); a file- or class-level id (a jest file, a Java class,
    /// a ctest or automake name) when it is a changed path, names a changed file, or its last
    /// part is on such a line. Changing a file does not touch the other methods in it: a test
    /// patch that adds a method to a class whose module then fails to compile does not make the
    /// class's other methods FAIL_TO_PASS.
    pub fn touches(&self, id: &str) -> bool {
        self.among([]).touches(id)
    }
}

/// A [`TestPatchTouch`] that knows the runs' test ids ([`TestPatchTouch::among`]).
#[derive(Debug)]
pub struct Touches<'a> {
    patch: &'a TestPatchTouch,
    /// `(class's simple name, method)` of every `pkg.Class#method` id.
    methods: HashSet<(&'a str, &'a str)>,
}

impl Touches<'_> {
    /// Whether the test patch adds or changes test `id` ([`TestPatchTouch::touches`], with a
    /// method attributed to its own class as [`TestPatchTouch::among`] says).
    pub fn touches(&self, id: &str) -> bool {
        let patch = self.patch;
        let long_enough = |n: &str| n.chars().count() >= 4;
        if patch.paths.iter().any(|p| id == p) {
            return true;
        }
        // The class and its outer classes (`pkg.Outer$Inner`): a file of any of them is its own.
        if let Some((class_path, _)) = id.rsplit_once('#').filter(|_| class_and_method(id).is_some()) {
            let names = own_names(id).unwrap_or_default();
            return patch.files.iter().any(|(stem, text)| {
                names.iter().any(|n| long_enough(n) && contains_word(text, n))
                    && (class_path.split(['.', '$']).any(|p| p == stem)
                        || !names.iter().any(|n| self.methods.contains(&(stem.as_str(), n.as_str()))))
            });
        }
        let in_text = |n: &str| long_enough(n) && contains_word(&patch.text, n);
        if let Some(names) = own_names(id) {
            return names.iter().any(|n| in_text(n));
        }
        let parts: Vec<&str> = id.split([':', '.', '/', ' ']).map(str::trim).filter(|p| !p.is_empty()).collect();
        parts.iter().any(|p| patch.stems.contains(*p)) || parts.last().is_some_and(|p| in_text(p))
    }
}

/// How whole-line comments start in the file named `name`, by its extension: `//` and block
/// comment lines in Go, Rust, Java, Kotlin, Scala, JavaScript, TypeScript, C, C++, C# and Swift; `#`
/// in Python, Ruby, shell and Perl. None for other files (a C `#include` is no comment).
fn comment_marks(name: &str) -> &'static [&'static str] {
    const SLASHES: &[&str] = &["//", "/*", "*/", "* ", "*"];
    const HASH: &[&str] = &["#"];
    let ext = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase()).unwrap_or_default();
    match ext.as_str() {
        "go" | "rs" | "java" | "kt" | "kts" | "scala" | "groovy" | "js" | "jsx" | "mjs" | "cjs" | "ts" | "tsx"
        | "mts" | "cts" | "c" | "h" | "cc" | "cpp" | "cxx" | "hpp" | "hh" | "hxx" | "cs" | "swift" | "dart" => SLASHES,
        "py" | "rb" | "sh" | "bash" | "bats" | "pl" | "pm" | "t" => HASH,
        _ => &[],
    }
}

/// Whether `line` (an added or removed line) is a comment by `marks`; `*` alone or followed by a
/// space continues a block comment (`*p = x` is code).
fn is_comment(line: &str, marks: &[&str]) -> bool {
    let line = line.trim();
    marks.iter().any(|m| if *m == "*" { line == "*" } else { line.starts_with(m) })
}

/// `(simple class name, method)` of a `pkg.Outer$Inner#method[params]` id (`Inner`, `method`).
fn class_and_method(id: &str) -> Option<(&str, &str)> {
    let (class, method) = id.rsplit_once('#')?;
    let simple = class.rsplit(['.', '$']).next().unwrap_or(class);
    let method = method.split(['[', '(']).next().unwrap_or(method).trim();
    (!simple.is_empty() && !method.is_empty()).then_some((simple, method))
}

/// Whether `name` is in `text` with no letter, digit or `_` right before or after it.
fn contains_word(text: &str, name: &str) -> bool {
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    text.match_indices(name)
        .any(|(at, _)| !word(text[..at].chars().next_back()) && !word(text[at + name.len()..].chars().next()))
}

/// The test's own name, when its id has one: the last ` > ` level (jest, vitest, mocha), what
/// follows the last `::` or `#` (Go, Rust, Java methods) split at Go's subtest `/`, parameters
/// dropped. None for file- and class-level ids.
fn own_names(id: &str) -> Option<Vec<String>> {
    if let Some((_, last)) = id.rsplit_once(" > ") {
        return Some(vec![last.trim().to_owned()]);
    }
    let tail = match (id.rsplit_once('#'), id.rsplit_once("::")) {
        (Some((_, t)), _) | (None, Some((_, t))) => t,
        (None, None) => return None,
    };
    // A name with spaces is one name (a Rust doctest, `path - item (line 3)`); Go subtests have
    // none (go test turns them into `_`) and are split at each level; parameters are dropped.
    if tail.contains(char::is_whitespace) {
        return Some(vec![tail.trim().to_owned()]);
    }
    let tail = tail.split(['[', '(']).next().unwrap_or(tail);
    Some(tail.split('/').map(|s| s.trim().to_owned()).filter(|s| !s.is_empty()).collect())
}

/// Tests `phase` did not report that both other phases reported, as counts: (reported by
/// `phase`, missing from it).
pub fn phase_gap(all: &TestMap, phase: Phase) -> (u64, u64) {
    let status = |t: &Transition, p: Phase| match p {
        Phase::Run => t.run,
        Phase::Test => t.test,
        Phase::Fix => t.fix,
    };
    let others: Vec<Phase> = Phase::ALL.into_iter().filter(|p| *p != phase).collect();
    let mut reported = 0;
    let mut missing = 0;
    for t in all.values() {
        if status(t, phase) != TestStatus::None {
            reported += 1;
        } else if others.iter().all(|p| status(t, *p) != TestStatus::None) {
            missing += 1;
        }
    }
    (reported, missing)
}

/// Evidence of how an instance's lists were labelled (`swe_forge.labels`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Labels {
    /// The rule the categories follow.
    pub rule: LabelRule,
    /// Tests that passed on the base and pass with the fix but did not run in the test phase,
    /// which the test patch does not touch: under the strict rule in no category.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub not_run_in_test: TestMap,
    /// Phases that ran fewer tests than the others, with their causes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub truncated: Vec<Truncation>,
    /// Share of FAIL_TO_PASS that is n2p (NONE in the test phase), 0.0 to 1.0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub n2p_share: Option<f64>,
    /// No run printed a per-test result: each phase was graded as one test, [`ALL_TESTS`], by its
    /// test command's exit code (0 passes, any other fails, a killed run reports nothing).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub exit_code_graded: bool,
    /// Phases graded by their exit code whose log says the runner found or ran no test (ctest's
    /// `No tests were found!!!`, which exits 0), with that line: their [`ALL_TESTS`] is NONE, so
    /// it is in neither list, whatever the exit code.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub no_tests_ran: BTreeMap<Phase, String>,
    /// jest and vitest: the test files of the tree with the test patch, by the runners' default
    /// patterns ([`crate::is_js_suite_file`]); a fix run that reports far fewer tests is truncated
    /// (`short_suite`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite_files: Option<u64>,
    /// Tests left out of FAIL_TO_PASS and PASS_TO_PASS because they depend on the gold patch's
    /// layout: each passed with the gold patch and was missing or failed under a layout variant
    /// of it (id -> which variant and what it saw, `blank_line: NONE`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub unstable: BTreeMap<String, String>,
}

/// The one test of a suite whose runs print no per-test result (Multi-SWE-bench's name): the
/// test command, graded by its exit code.
pub const ALL_TESTS: &str = "all tests";

/// The status of [`ALL_TESTS`] in a run that ended with `exit_code` (None: killed, by its timeout
/// or otherwise).
pub fn exit_code_status(exit_code: Option<i64>) -> TestStatus {
    match exit_code {
        Some(0) => TestStatus::Pass,
        Some(_) => TestStatus::Fail,
        None => TestStatus::None,
    }
}

/// A negative control: a prediction that must not resolve the instance, run through
/// evaluation's own path.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Control {
    /// `empty_patch` (nothing but the test patch) or `test_patch_alone` (the test patch as the
    /// prediction: evaluation puts the test files back, so it gains nothing).
    pub name: String,
    /// FAIL_TO_PASS tests that passed in it: none when the control holds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub f2p_passed: Vec<String>,
    /// Whether the evaluation graded it resolved (it must not).
    pub resolved: bool,
}

/// What an accepted instance was checked with beyond its three phases (`swe_forge.evidence`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Evidence {
    /// Runs of the gold patch (the fix patch as a prediction) through evaluation's own path.
    pub gold_runs: u32,
    /// How many of them evaluation graded resolved.
    pub gold_resolved: u32,
    /// The negative controls.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub controls: Vec<Control>,
    /// Log lines of the three phases that show a test reaching for the network (runs have none):
    /// such tests fail here and may pass elsewhere.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub network: Vec<String>,
    /// The layout variants of the gold patch graded through evaluation's own path
    /// ([`crate::LayoutVariant`]), in the order they ran.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub layout: Vec<LayoutRun>,
}

/// One layout variant of the gold patch, graded as a prediction (`swe_forge.evidence.layout`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LayoutRun {
    /// The variant: `blank_line` or `offset_hunks` ([`crate::LayoutVariant::as_str`]).
    pub variant: String,
    /// Whether it resolves the instance on its final lists (its unstable tests left out).
    pub held: bool,
    /// Listed tests that passed with the gold patch and were missing or failed under it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unstable: Vec<String>,
    /// Why it gave no verdict (the variant did not apply, the run did not end), when it gave none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl Evidence {
    /// Layout variants that held, and how many were graded.
    pub fn layout_held(&self) -> (usize, usize) {
        (self.layout.iter().filter(|l| l.held).count(), self.layout.len())
    }

    /// Whether the evidence holds: the gold patch resolved every time it ran (and ran), both
    /// negative controls ran, resolved nothing and passed no FAIL_TO_PASS test, and every layout
    /// variant graded held.
    pub fn complete(&self) -> bool {
        self.layout.iter().all(|l| l.held)
            && self.gold_runs > 0
            && self.gold_resolved == self.gold_runs
            && ["empty_patch", "test_patch_alone"]
                .iter()
                .all(|n| self.controls.iter().any(|c| c.name == *n && !c.resolved && c.f2p_passed.is_empty()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PATCH: &str = "diff --git a/src/test/java/dev/x/SlugsTest.java b/src/test/java/dev/x/SlugsTest.java
--- a/src/test/java/dev/x/SlugsTest.java
+++ b/src/test/java/dev/x/SlugsTest.java
@@ -10,3 +10,7 @@ public class SlugsTest {
     }
+    @Test
+    public void collapsesRuns() {
+        assertEquals(\"a-b\", Slugs.of(\"a--b\"));
+    }
 }
diff --git a/stack_test.go b/stack_test.go
--- a/stack_test.go
+++ b/stack_test.go
@@ -20,2 +20,3 @@ func TestPopEmpty(t *testing.T) {
 \ts := New[int]()
+\t_ = s.Peek()
 }
diff --git a/test/duration.test.js b/test/duration.test.js
--- a/test/duration.test.js
+++ b/test/duration.test.js
@@ -1,2 +1,3 @@ describe('parse', () => {
+  it('rejects negative values', () => {});
 });
";

    #[test]
    fn the_test_patch_touches_its_files_classes_and_functions() {
        let t = TestPatchTouch::of(PATCH);
        // Java: the class the patch changes (its file), at method and class level.
        assert!(t.touches("dev.x.SlugsTest#collapsesRuns"));
        assert!(!t.touches("dev.x.SlugsTest#keepsLetters"), "another method of the changed class");
        assert!(t.touches("dev.x.SlugsTest"), "a class-level id: its file changed");
        assert!(!t.touches("dev.x.OtherTest#collapse"), "a word, not a part of one");
        // Go: the function whose body a hunk changes (hunk context), not its neighbours.
        assert!(t.touches("example.com/gostack::TestPopEmpty"));
        assert!(t.touches("example.com/gostack::TestPopEmpty/sub"));
        assert!(!t.touches("example.com/gostack::TestLen"));
        // A hunk that appends after a function names it in its context: not a change of it.
        let append = TestPatchTouch::of(
            "diff --git a/s_test.go b/s_test.go\n--- a/s_test.go\n+++ b/s_test.go\n@@ -20,2 +20,4 @@ func TestLen(t *testing.T) {\n \t}\n }\n+\n+func TestPopEmptyReturnsError(t *testing.T) {}\n",
        );
        assert!(!append.touches("example.com/gostack::TestLen"));
        assert!(append.touches("example.com/gostack::TestPopEmptyReturnsError"));
        // jest ids start with the path; mocha ids are titles.
        assert!(t.touches("test/duration.test.js"));
        assert!(!t.touches("test/duration.test.js > parse > accepts ms"));
        assert!(t.touches("test/duration.test.js > parse > rejects negative values"));
        assert!(t.touches("parse > rejects negative values"));
        assert!(!t.touches("format > pads hours"));
        assert!(!TestPatchTouch::of("").touches("anything"));
        // A deleted file's lines touch nothing; a doctest's name is one name (serde 2798's test
        // patch deletes a UI test that mentions `structs` and `serde_derive`).
        let deleting = TestPatchTouch::of(
            "diff --git a/t/ui/x.stderr b/t/ui/x.stderr\ndeleted file mode 100644\n--- a/t/ui/x.stderr\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-error: only in structs\n-use serde_derive::Serialize;\n",
        );
        assert!(!deleting.touches("test_annotations::flatten::internally_tagged::structs"));
        assert!(!t.touches("serde_derive::doc::serde_derive/src/lib.rs - (line 3)"));
        assert!(!deleting.touches("serde_derive::doc::serde_derive/src/lib.rs - (line 3)"));
    }

    /// A test patch adds `config_test.go` with a comment copied from `file_test.go`, which it
    /// does not change, above another test (seen in a Go exporter). The package did not compile in
    /// the test phase, so `TestCheckFile` (PASS, NONE, PASS) must not count as written by it.
    #[test]
    fn a_name_in_a_comment_touches_no_test() {
        let t = TestPatchTouch::of(
            "diff --git a/check/config_test.go b/check/config_test.go
new file mode 100644
--- /dev/null
+++ b/check/config_test.go
@@ -0,0 +1,8 @@
+package check
+
+// TestCheckFile tests a file
+func TestCheckConfig(t *testing.T) {
+\tcert, path, err := writeTestConfig(\"\", \"config\")
+\t/* TestCheckFileGlob */
+\t*cert = x509.Certificate{}
+}
diff --git a/tests/test_cli.py b/tests/test_cli.py
--- a/tests/test_cli.py
+++ b/tests/test_cli.py
@@ -1,1 +1,3 @@
+# test_parse_args moved to test_args.py
+def test_version():
+    pass
",
        );
        assert!(t.touches("example.com/certcheck/check::TestCheckConfig"));
        assert!(!t.touches("example.com/certcheck/check::TestCheckFile"));
        assert!(!t.touches("example.com/certcheck/check::TestCheckFileGlob"));
        assert!(t.touches("tests/test_cli.py::test_version"));
        assert!(!t.touches("tests/test_cli.py::test_parse_args"));
        // The strict rule then sets the untouched test apart instead of calling it FAIL_TO_PASS.
        let id = "example.com/certcheck/check::TestCheckFile";
        let pass = crate::PhaseStatuses::from([(id.to_owned(), TestStatus::Pass)]);
        let c = crate::categorize_with(&pass, &crate::PhaseStatuses::new(), &pass, LabelRule::Strict, &t);
        assert!(c.fixed.is_empty() && c.not_run_in_test.contains_key(id), "{c:?}");
    }

    /// commons-cli 58: the test patch adds `testBuilder` to `DefaultParserTest` (which has it
    /// among the runs' tests), and changes `testLongOptionQuoteHandling` in the abstract
    /// `ParserTestCase` (no test of its own: its subclasses inherit it).
    #[test]
    fn a_changed_method_belongs_to_its_files_class_when_that_class_runs_it() {
        let t = TestPatchTouch::of(
            "diff --git a/src/test/java/o/DefaultParserTest.java b/src/test/java/o/DefaultParserTest.java
--- a/src/test/java/o/DefaultParserTest.java
+++ b/src/test/java/o/DefaultParserTest.java
@@ -40,2 +40,6 @@ public class DefaultParserTest extends ParserTestCase {
     }
+    @Test
+    public void testBuilder() throws Exception {
+        parser = DefaultParser.builder().build();
+    }
 }
diff --git a/src/test/java/o/ParserTestCase.java b/src/test/java/o/ParserTestCase.java
--- a/src/test/java/o/ParserTestCase.java
+++ b/src/test/java/o/ParserTestCase.java
@@ -70,3 +70,3 @@ public void testLongOptionQuoteHandling() throws Exception {
         parser = newParser();
-        String[] args = {\"--bfile\", \"quoted string\"};
+        String[] args = {\"--bfile\", \"\\\"quoted string\\\"\"};
     }
",
        );
        let ids = [
            "o.DefaultParserTest#testBuilder",
            "o.CommandLineTest#testBuilder",
            "o.GnuParserTest#testLongOptionQuoteHandling",
            "o.DefaultParserTest#testLongOptionQuoteHandling",
            "o.GnuParserTest#testSimpleShort",
        ];
        let among = t.among(ids);
        assert!(among.touches("o.DefaultParserTest#testBuilder"));
        assert!(!among.touches("o.CommandLineTest#testBuilder"), "another class's method of that name");
        assert!(among.touches("o.GnuParserTest#testLongOptionQuoteHandling"), "inherited from the superclass");
        assert!(among.touches("o.DefaultParserTest#testLongOptionQuoteHandling"));
        assert!(!among.touches("o.GnuParserTest#testSimpleShort"));
        // Without the runs' ids every class with the name counts (the superclass case).
        assert!(t.touches("o.CommandLineTest#testBuilder"));
        // A nested class's test lives in its outer class's file.
        let nested = TestPatchTouch::of(
            "diff --git a/src/test/java/o/OuterTest.java b/src/test/java/o/OuterTest.java\n--- a/src/test/java/o/OuterTest.java\n+++ b/src/test/java/o/OuterTest.java\n@@ -1,1 +1,2 @@\n class OuterTest {\n+  @Test void addsOne() {}\n",
        );
        let ids = ["o.OuterTest$Inner#addsOne", "o.OuterTest#addsOne"];
        assert!(nested.among(ids).touches("o.OuterTest$Inner#addsOne"));
    }

    #[test]
    fn evidence_is_complete_when_gold_always_resolves_and_both_controls_hold() {
        let control = |name: &str, passed: &[&str]| Control {
            name: name.into(),
            f2p_passed: passed.iter().map(|s| (*s).to_owned()).collect(),
            resolved: false,
        };
        let mut e = Evidence {
            gold_runs: 3,
            gold_resolved: 3,
            controls: vec![control("empty_patch", &[]), control("test_patch_alone", &[])],
            network: Vec::new(),
            layout: Vec::new(),
        };
        assert!(e.complete());
        e.gold_resolved = 2;
        assert!(!e.complete(), "gold resolved 2 of 3");
        e.gold_resolved = 3;
        e.controls[1] = control("test_patch_alone", &["t"]);
        assert!(!e.complete(), "a control passed a FAIL_TO_PASS test");
        e.controls.pop();
        assert!(!e.complete(), "a control missing");
        e.controls.push(control("test_patch_alone", &[]));
        let variant = |held: bool| LayoutRun { variant: "blank_line".into(), held, ..LayoutRun::default() };
        e.layout = vec![variant(true), variant(true)];
        assert!(e.complete() && e.layout_held() == (2, 2));
        e.layout[1] = variant(false);
        assert!(!e.complete(), "a layout variant gave no verdict");
        assert!(!Evidence::default().complete(), "nothing ran");
    }

    #[test]
    fn a_phase_gap_counts_tests_both_other_phases_reported() {
        let t = |run, test, fix| Transition { run, test, fix };
        use TestStatus::*;
        let all: TestMap = [
            ("a".to_owned(), t(Pass, None, Pass)),
            ("b".to_owned(), t(Pass, Pass, Pass)),
            ("c".to_owned(), t(None, None, Pass)),
            ("d".to_owned(), t(Pass, Fail, None)),
        ]
        .into();
        assert_eq!(phase_gap(&all, Phase::Test), (2, 1));
        assert_eq!(phase_gap(&all, Phase::Fix), (3, 1));
    }
}
