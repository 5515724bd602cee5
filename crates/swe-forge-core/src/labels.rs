//! The label rule: which tests an instance lists, and the evidence of how its phases ran.
//!
//! Multi-SWE-bench sorts every test by its test -> fix transition alone: a test that PASSED on
//! the base, did not report with the test patch (NONE) and passes with the fix becomes n2p, and
//! with it FAIL_TO_PASS. When the test run stopped early (a fail-fast runner, a test patch that
//! does not compile without the fix, a crash) that turns every test the run never reached into
//! FAIL_TO_PASS. Under [`LabelRule::Strict`] (swe-forge's default) such a test is *not run in the
//! test phase*: it is kept out of every category and listed on its own (`not_run_in_test`), for
//! every framework alike (ctest, `make check`, Maven, jest, Go, cargo, ...).
//!
//! That holds for a test whose own body the test patch changes too. Its old version passed at the
//! base; its new version never ran without the fix, so no run shows it failing, only that the tree
//! with the test patch does not build. Which tests a patch "changes" could only be guessed from its
//! lines, and the guess depended on the id's shape: a Go or Rust function, a Java method or a jest
//! title by its name, but a ctest target, an automake script, a Java class or a jest file by its
//! file or any line naming it, so a `Makefile.am` or `CMakeLists.txt` line listing every test made
//! all of them FAIL_TO_PASS when the whole suite's build broke. The strict rule reads statuses only.
//! A test the test patch adds (NONE at the base) is FAIL_TO_PASS as before. Under [`LabelRule::Msb`]
//! (the `msb` profile) the categories are Multi-SWE-bench's, unchanged.
//!
//! [`Truncation`] is the evidence that a phase ran fewer tests than the others, with its cause.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::{Phase, TestMap, TestStatus, Transition};

/// How tests become categories.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LabelRule {
    /// swe-forge's rule: a test that passed on the base and did not run in the test phase is
    /// not FAIL_TO_PASS (nor in any category), even when the test patch changes it.
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
    /// patch explains (the tests it adds are FAIL_TO_PASS, every test that passed at the base is
    /// set apart), or a crash in a test the fix repairs. Otherwise the instance is rejected
    /// `truncated_run`. Tolerated or not, no test is FAIL_TO_PASS only because this phase did
    /// not run it.
    pub tolerated: bool,
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
    /// Tests that passed on the base and pass with the fix but did not run in the test phase
    /// (whether or not the test patch changes them): under the strict rule in no category.
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
    /// Whether it gave a verdict: then it did on the final lists what the gold patch did (the
    /// tests it failed that every gold run passed are `unstable`, out of the lists).
    pub held: bool,
    /// Listed tests that passed in every gold run and were missing or failed under it.
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
