//! Grading, in one place for every command: a run's output parsed with the record's parsers,
//! repeated runs merged (a test whose outcome differs between them is flaky), then either the
//! categories and keep rules of a validation ([`grade`]) or the verdict on a prediction
//! ([`grade_prediction`]). Validate, regrade, revalidate and evaluate all stand on these.

use std::collections::BTreeMap;
use std::path::Path;
use std::str::FromStr;

use swe_forge_core::{
    Categorized, ForgeMeta, Instance, PassRates, PhaseStatuses, RejectReason, Rejection, RunLogs, TestResult,
    TestStatus, categorize,
};
use swe_forge_logparse::{Framework, ParsedLog};

use crate::flaky::merge;
use crate::keep_rules;

/// Reasons decided by the keep rules; every other rejection (timeout, oom, ...) stands apart.
pub(crate) const KEEP_RULE_REASONS: [RejectReason; 4] =
    [RejectReason::NoTestsInFixRun, RejectReason::NoFixedTests, RejectReason::PassToFail, RejectReason::Anomaly];

/// The parsers of an instance: the log's, and the structured result files' when the recipe
/// collects them (they are preferred when a run left any).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Parsers {
    /// Parses the run's log.
    pub log: Framework,
    /// Parses the run's result files.
    pub results: Option<Framework>,
}

impl Parsers {
    /// The parsers named `log` and `results`; an unknown name is an error.
    pub fn named(log: &str, results: Option<&str>) -> Result<Parsers, String> {
        let framework = |n: &str| Framework::from_str(n).map_err(|e| e.to_string());
        Ok(Parsers { log: framework(log)?, results: results.map(framework).transpose()? })
    }

    /// The parsers a validated record names.
    pub fn of(meta: &ForgeMeta) -> Result<Parsers, String> {
        Parsers::named(meta.parser.as_deref().unwrap_or_default(), meta.results_parser.as_deref())
    }

    /// One run's statuses: from its result files when there are any and a parser for them,
    /// from its log otherwise.
    pub fn parse(&self, log: &[u8], files: &[(String, Vec<u8>)]) -> ParsedLog {
        match (self.results, files.is_empty()) {
            (Some(rp), false) => swe_forge_logparse::parse_files(rp, files),
            _ => swe_forge_logparse::parse(self.log, log),
        }
    }

    /// Run `label` parsed again from what `logs` kept of it; None when its log is gone.
    pub fn reparse(&self, logs: &RunLogs, label: &str) -> Option<ParsedLog> {
        // A kept log is at most the run's log cap; anything longer (or not a file) is cut.
        let log = swe_forge_fs::read_capped(&logs.log(label), swe_forge_fs::READ_CAP).ok()?.bytes;
        Some(self.parse(&log, &read_tree(&logs.results(label))))
    }
}

/// What the runs of a validation say: the categories, the three run results, the flaky tests
/// and the keep rules' verdict.
#[derive(Debug, Clone)]
pub struct Grade {
    /// Every test's transition and the categories.
    pub categorized: Categorized,
    /// The run, test and fix results.
    pub results: [TestResult; 3],
    /// Tests whose outcome differed between repeats of a phase, with their pass rates.
    pub flaky: BTreeMap<String, PassRates>,
    /// Share of tests with one outcome in every repeat.
    pub stability: f64,
    /// The keep rules' rejections; empty means keep.
    pub rejections: Vec<Rejection>,
}

/// Grades the statuses of every attempt of the three phases (`runs[phase][attempt]`).
pub fn grade(runs: &[Vec<PhaseStatuses>; 3]) -> Grade {
    let merged = merge(runs);
    let [run, test, fix] = &merged.phases;
    let categorized = categorize(run, test, fix);
    let rejections = keep_rules(&categorized, fix);
    Grade {
        results: [TestResult::from_statuses(run), TestResult::from_statuses(test), TestResult::from_statuses(fix)],
        categorized,
        flaky: merged.flaky,
        stability: merged.stability,
        rejections,
    }
}

impl Grade {
    /// Puts the categories, run results and flaky tests on the record; returns the keep rules'
    /// rejections.
    pub fn record(self, inst: &mut Instance, meta: &mut ForgeMeta) -> Vec<Rejection> {
        let [run, test, fix] = self.results;
        inst.set_results(&self.categorized, run, test, fix);
        meta.flaky = self.flaky;
        meta.stability = Some(self.stability);
        self.rejections
    }
}

/// The verdict on one prediction: every FAIL_TO_PASS and PASS_TO_PASS test must pass. A listed
/// test whose outcome differs between the attempts is flaky and counts neither way.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Verdict {
    /// Every listed test that is not flaky passed (and at least one listed test is not flaky).
    pub resolved: bool,
    /// FAIL_TO_PASS tests that passed.
    pub f2p_passed: Vec<String>,
    /// FAIL_TO_PASS tests that did not pass, with the status seen.
    pub f2p_failed: BTreeMap<String, TestStatus>,
    /// PASS_TO_PASS tests that passed.
    pub p2p_passed: Vec<String>,
    /// PASS_TO_PASS tests that did not pass, with the status seen.
    pub p2p_failed: BTreeMap<String, TestStatus>,
    /// Listed tests whose outcome differed between attempts, with their pass rate.
    pub flaky: BTreeMap<String, f64>,
}

/// Grades the attempts of an evaluation run against the record's lists.
pub fn grade_prediction<'a>(
    attempts: Vec<PhaseStatuses>,
    f2p: impl IntoIterator<Item = &'a String>,
    p2p: impl IntoIterator<Item = &'a String>,
) -> Verdict {
    // An evaluation run is the fix phase with the model's patch in place of the fix patch.
    let merged = merge(&[Vec::new(), Vec::new(), attempts]);
    let mut v = Verdict::default();
    for (list, passed, failed) in [
        (f2p.into_iter().collect::<Vec<_>>(), &mut v.f2p_passed, &mut v.f2p_failed),
        (p2p.into_iter().collect(), &mut v.p2p_passed, &mut v.p2p_failed),
    ] {
        for name in list {
            if let Some(rates) = merged.flaky.get(name) {
                v.flaky.insert(name.clone(), rates.fix.unwrap_or(0.0));
                continue;
            }
            match merged.phases[2].get(name).copied().unwrap_or(TestStatus::None) {
                TestStatus::Pass => passed.push(name.clone()),
                other => {
                    failed.insert(name.clone(), other);
                }
            }
        }
    }
    v.resolved =
        v.f2p_failed.is_empty() && v.p2p_failed.is_empty() && !(v.f2p_passed.is_empty() && v.p2p_passed.is_empty());
    v
}

/// The regular files under `dir`, relative path -> content, sorted (none when `dir` is absent):
/// symlinks out of it, loops, FIFOs and devices left out, each file cut to its head and tail
/// beyond `swe_forge_fs::READ_CAP` (`swe_forge_fs::read_tree`).
fn read_tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    match swe_forge_fs::read_tree(dir, swe_forge_fs::READ_CAP) {
        Ok(tree) => {
            for s in &tree.skipped {
                tracing::warn!(dir = %dir.display(), "{s}");
            }
            tree.files
        }
        Err(e) => {
            tracing::warn!(dir = %dir.display(), error = %e, "cannot read result files");
            Vec::new()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use TestStatus::*;

    fn p(items: &[(&str, TestStatus)]) -> PhaseStatuses {
        items.iter().map(|(n, s)| (n.to_string(), *s)).collect()
    }

    #[test]
    fn a_prediction_resolves_when_every_listed_test_passes() {
        let f2p = vec!["f".to_owned()];
        let p2p = vec!["a".to_owned(), "b".to_owned()];
        let v = grade_prediction(vec![p(&[("f", Pass), ("a", Pass), ("b", Pass), ("x", Fail)])], &f2p, &p2p);
        assert!(v.resolved, "{v:?}");
        assert_eq!(v.f2p_passed, ["f"]);
        let v = grade_prediction(vec![p(&[("f", Fail), ("a", Pass)])], &f2p, &p2p);
        assert!(!v.resolved);
        assert_eq!(v.f2p_failed, BTreeMap::from([("f".to_owned(), Fail)]));
        assert_eq!(v.p2p_failed, BTreeMap::from([("b".to_owned(), None)]), "a test that did not run failed");
        // A listed test that differs between attempts is flaky, not against the prediction.
        let v = grade_prediction(
            vec![p(&[("f", Pass), ("a", Pass), ("b", Fail)]), p(&[("f", Pass), ("a", Pass), ("b", Pass)])],
            &f2p,
            &p2p,
        );
        assert!(v.resolved, "{v:?}");
        assert_eq!(v.flaky, BTreeMap::from([("b".to_owned(), 0.5)]));
        // Nothing listed passed or failed: not resolved.
        assert!(!grade_prediction(vec![p(&[])], &Vec::new(), &Vec::new()).resolved);
    }

    #[test]
    fn validation_grades_categories_and_keep_rules() {
        let runs =
            [vec![p(&[("a", Pass)])], vec![p(&[("a", Pass), ("f", Fail)])], vec![p(&[("a", Pass), ("f", Pass)])]];
        let g = grade(&runs);
        assert!(g.rejections.is_empty());
        assert_eq!(g.categorized.f2p.keys().collect::<Vec<_>>(), ["f"]);
        assert_eq!(g.results[2].passed_count, 2);
        let runs = [vec![p(&[("a", Pass)])], vec![p(&[("a", Pass)])], vec![p(&[("a", Pass)])]];
        assert_eq!(grade(&runs).rejections[0].reason, RejectReason::NoFixedTests);
    }
}
