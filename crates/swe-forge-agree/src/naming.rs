//! The names a comparison uses, and the two sides of a comparison as [`View`]s: what a
//! published record says (its category maps and run results, verbatim) and what our three runs
//! say once their canonical ids are mapped to the same naming.
//!
//! Multi-SWE-bench records name tests the way each repository's hand-written parser saw them
//! (Java classes, bare Go names, jest `file:title`, cargo `module::test`); our logs carry
//! canonical ids plus that name ([`ParsedLog::msb_names`]), named by the record's repository
//! where handlers differ (Go subtests: the validator's parses apply
//! `swe_forge_logparse::MsbNaming`, so the logs given here already carry the repository's names). Comparing in Multi-SWE-bench naming
//! rolls each run up to those names first ([`msb_rollup`]: a Java class fails when one of its
//! methods fails) and only then derives the categories, exactly as the published harness did.
//! Comparing two swe-forge records uses the canonical ids as they are.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use swe_forge_core::{Categorized, Instance, Phase, PhaseStatuses, TestResult, TestStatus, Transition, categorize};
use swe_forge_logparse::{Naming, ParsedLog};

/// The parsed logs of our three runs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PhaseLogs {
    /// The run at the base commit.
    pub run: ParsedLog,
    /// The run with the test patch.
    pub test: ParsedLog,
    /// The run with both patches.
    pub fix: ParsedLog,
}

impl PhaseLogs {
    /// What a swe-forge record keeps of its three runs: the statuses of its run results (flaky
    /// tests already left out) with the Multi-SWE-bench names of `swe_forge.msb_names`; None for
    /// a record that keeps no names (not made by swe-forge, or made before they were kept).
    pub fn of_record(inst: &Instance) -> Option<PhaseLogs> {
        let names = inst.swe_forge.as_ref()?.msb_names.as_ref()?;
        let log =
            |r: &TestResult| ParsedLog { tests: statuses_of(r), msb_names: names.clone(), ..ParsedLog::default() };
        Some(PhaseLogs {
            run: log(&inst.run_result),
            test: log(&inst.test_patch_result),
            fix: log(&inst.fix_patch_result),
        })
    }

    /// The log of `phase`.
    pub fn get(&self, phase: Phase) -> &ParsedLog {
        match phase {
            Phase::Run => &self.run,
            Phase::Test => &self.test,
            Phase::Fix => &self.fix,
        }
    }
}

/// One side of a comparison, in one naming: per-run statuses and the categories.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct View {
    /// Statuses of the run, test and fix runs (tests absent from a run are NONE).
    pub phases: [PhaseStatuses; 3],
    /// f2p, s2p, n2p, p2p and fixed (= FAIL_TO_PASS), with every test's transition.
    pub categories: Categorized,
}

impl View {
    /// What a published record says: its category maps verbatim (they are the published truth),
    /// and per-run statuses from its three run results and the transitions in its maps.
    pub fn published(inst: &Instance) -> View {
        let mut phases =
            [statuses_of(&inst.run_result), statuses_of(&inst.test_patch_result), statuses_of(&inst.fix_patch_result)];
        let mut all = swe_forge_core::TestMap::new();
        for map in [&inst.p2p_tests, &inst.f2p_tests, &inst.s2p_tests, &inst.n2p_tests, &inst.fixed_tests] {
            for (name, t) in map {
                all.insert(name.clone(), *t);
                for (p, s) in phases.iter_mut().zip([t.run, t.test, t.fix]) {
                    if s != TestStatus::None {
                        p.entry(name.clone()).or_insert(s);
                    }
                }
            }
        }
        for (i, p) in phases.iter().enumerate() {
            for (name, s) in p {
                let t = all.entry(name.clone()).or_insert(Transition {
                    run: TestStatus::None,
                    test: TestStatus::None,
                    fix: TestStatus::None,
                });
                match i {
                    0 => t.run = *s,
                    1 => t.test = *s,
                    _ => t.fix = *s,
                }
            }
        }
        let categories = Categorized {
            all,
            p2p: inst.p2p_tests.clone(),
            f2p: inst.f2p_tests.clone(),
            s2p: inst.s2p_tests.clone(),
            n2p: inst.n2p_tests.clone(),
            fixed: if inst.fixed_tests.is_empty() {
                inst.f2p_tests
                    .iter()
                    .chain(&inst.s2p_tests)
                    .chain(&inst.n2p_tests)
                    .map(|(k, v)| (k.clone(), *v))
                    .collect()
            } else {
                inst.fixed_tests.clone()
            },
            not_run_in_test: inst
                .swe_forge
                .as_ref()
                .and_then(|m| m.labels.as_ref())
                .map(|l| l.not_run_in_test.clone())
                .unwrap_or_default(),
        };
        View { phases, categories }
    }

    /// What our three runs say in `naming` (resolved): statuses per run, then the categories
    /// derived from them with the Multi-SWE-bench rule. Tests in `flaky` (canonical ids whose
    /// outcome differed between repeated runs) are left out, as the validator leaves them out.
    pub fn ours(logs: &PhaseLogs, naming: Naming, flaky: &BTreeSet<String>) -> View {
        let statuses = |log: &ParsedLog| {
            if flaky.is_empty() {
                return naming.statuses(log);
            }
            let mut kept = log.clone();
            kept.tests.retain(|id, _| !flaky.contains(id));
            naming.statuses(&kept)
        };
        let phases = [statuses(&logs.run), statuses(&logs.test), statuses(&logs.fix)];
        let categories = categorize(&phases[0], &phases[1], &phases[2]);
        View { phases, categories }
    }

    /// `ids` (canonical) under `naming`: themselves, or the Multi-SWE-bench names the logs give them.
    pub fn names_of(logs: &PhaseLogs, naming: Naming, ids: &BTreeSet<String>) -> BTreeSet<String> {
        match naming {
            Naming::Canonical => ids.clone(),
            Naming::Msb | Naming::Auto => ids
                .iter()
                .filter_map(|id| [&logs.run, &logs.test, &logs.fix].iter().find_map(|l| l.msb_names.get(id)).cloned())
                .collect(),
        }
    }

    /// Every test name seen in any run or category.
    pub fn names(&self) -> BTreeSet<&str> {
        self.categories
            .all
            .keys()
            .map(String::as_str)
            .chain(self.phases.iter().flat_map(|p| p.keys().map(String::as_str)))
            .collect()
    }

    /// A test's three statuses (NONE where absent).
    pub fn transition(&self, name: &str) -> Transition {
        let get = |p: &PhaseStatuses| p.get(name).copied().unwrap_or(TestStatus::None);
        Transition { run: get(&self.phases[0]), test: get(&self.phases[1]), fix: get(&self.phases[2]) }
    }

    /// The run results in Multi-SWE-bench's shape, one per phase.
    pub fn results(&self) -> [TestResult; 3] {
        [
            TestResult::from_statuses(&self.phases[0]),
            TestResult::from_statuses(&self.phases[1]),
            TestResult::from_statuses(&self.phases[2]),
        ]
    }
}

fn statuses_of(r: &TestResult) -> PhaseStatuses {
    let mut out = PhaseStatuses::new();
    for (list, s) in
        [(&r.skipped_tests, TestStatus::Skip), (&r.passed_tests, TestStatus::Pass), (&r.failed_tests, TestStatus::Fail)]
    {
        for name in list {
            out.insert(name.clone(), s);
        }
    }
    out
}

/// A copy of `ours` (the validator's record) whose test maps and run results are those of
/// `view`: the re-derived record in the comparison's naming, ready to stand in for the
/// published one.
pub fn rederive(ours: &Instance, view: &View) -> Instance {
    let mut out = ours.clone();
    let [run, test, fix] = view.results();
    out.set_results(&view.categories, run, test, fix);
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use TestStatus::*;

    pub(crate) fn log(items: &[(&str, &str, TestStatus)]) -> ParsedLog {
        ParsedLog {
            tests: items.iter().map(|(id, _, s)| (id.to_string(), *s)).collect(),
            msb_names: items
                .iter()
                .filter(|(_, n, _)| !n.is_empty())
                .map(|(id, n, _)| (id.to_string(), n.to_string()))
                .collect(),
            warnings: Vec::new(),
            timed_out: BTreeSet::new(),
            build_failed: false,
        }
    }

    #[test]
    fn msb_naming_rolls_methods_up_to_classes_before_categorising() {
        // One method of class A is fixed, another passes throughout: the class is f2p, not p2p.
        let logs = PhaseLogs {
            run: log(&[("a.A#x", "a.A", Pass), ("a.A#y", "a.A", Pass)]),
            test: log(&[("a.A#x", "a.A", Pass), ("a.A#y", "a.A", Fail), ("crate::doc::d", "", Pass)]),
            fix: log(&[("a.A#x", "a.A", Pass), ("a.A#y", "a.A", Pass), ("crate::doc::d", "", Pass)]),
        };
        let msb = View::ours(&logs, Naming::Msb, &BTreeSet::new());
        assert_eq!(msb.categories.f2p.keys().collect::<Vec<_>>(), ["a.A"]);
        assert!(msb.categories.p2p.is_empty(), "doctests have no Multi-SWE-bench name");
        let canonical = View::ours(&logs, Naming::Canonical, &BTreeSet::new());
        assert_eq!(canonical.categories.f2p.keys().collect::<Vec<_>>(), ["a.A#y"]);
        assert_eq!(canonical.categories.p2p.len(), 2);
    }

    #[test]
    fn published_view_keeps_the_published_maps_and_reads_runs() {
        let t = |run, test, fix| Transition { run, test, fix };
        let mut inst = crate::tests::record("o", "r", 1);
        inst.f2p_tests = BTreeMap::from([("a".to_owned(), t(Pass, Fail, Pass))]);
        inst.n2p_tests = BTreeMap::from([("b".to_owned(), t(None, None, Pass))]);
        inst.run_result.passed_tests = vec!["a".into(), "c".into()];
        inst.run_result.passed_count = 2;
        let v = View::published(&inst);
        assert_eq!(v.categories.fixed.keys().collect::<Vec<_>>(), ["a", "b"], "fixed filled in from f2p+s2p+n2p");
        assert_eq!(v.transition("c"), t(Pass, None, None));
        assert_eq!(v.transition("a"), t(Pass, Fail, Pass));
        assert_eq!(v.names().len(), 3);
    }
}
