//! The Multi-SWE-bench categories, derived from the test -> fix transition only.
//!
//! p2p = PASS->PASS, f2p = FAIL->PASS, s2p = SKIP->PASS, n2p = NONE->PASS and
//! fixed = f2p + s2p + n2p. Tests that end anywhere but PASS belong to no category.
//! [`categorize_with`] applies a [`LabelRule`]: under the strict rule a test that passed on the
//! base and did not run in the test phase is in no category, whatever the framework and whatever
//! the test patch changes ([`crate::labels`] says why).

use std::collections::{BTreeMap, BTreeSet};

use crate::{LabelRule, PhaseStatuses, TestMap, TestStatus, Transition};

/// Every test's transition and the category maps derived from them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Categorized {
    /// Every test seen in any run, with its three statuses.
    pub all: TestMap,
    /// PASS -> PASS.
    pub p2p: TestMap,
    /// FAIL -> PASS.
    pub f2p: TestMap,
    /// SKIP -> PASS.
    pub s2p: TestMap,
    /// NONE -> PASS.
    pub n2p: TestMap,
    /// f2p + s2p + n2p.
    pub fixed: TestMap,
    /// PASS on the base, NONE in the test phase, PASS with the fix: under the strict rule in no
    /// category above, even when the test patch rewrites the test (empty under Multi-SWE-bench's).
    pub not_run_in_test: TestMap,
}

/// Joins the three runs' statuses and sorts every test into its category, as Multi-SWE-bench
/// does.
pub fn categorize(run: &PhaseStatuses, test: &PhaseStatuses, fix: &PhaseStatuses) -> Categorized {
    categorize_with(run, test, fix, LabelRule::Msb)
}

/// [`categorize`] under `rule`. Under [`LabelRule::Strict`] every PASS, NONE, PASS test goes to
/// [`Categorized::not_run_in_test`], for every framework and id shape (a Go or Rust function, a
/// Java method or class, a jest file or title, a ctest or automake name): the rule reads the three
/// statuses only.
pub fn categorize_with(run: &PhaseStatuses, test: &PhaseStatuses, fix: &PhaseStatuses, rule: LabelRule) -> Categorized {
    let names: BTreeSet<&String> = run.keys().chain(test.keys()).chain(fix.keys()).collect();
    let get = |m: &PhaseStatuses, n: &str| m.get(n).copied().unwrap_or(TestStatus::None);
    let mut out = Categorized::default();
    for &name in &names {
        let t = Transition { run: get(run, name), test: get(test, name), fix: get(fix, name) };
        out.all.insert(name.clone(), t);
        if t.fix != TestStatus::Pass {
            continue;
        }
        if rule == LabelRule::Strict && t.run == TestStatus::Pass && t.test == TestStatus::None {
            out.not_run_in_test.insert(name.clone(), t);
            continue;
        }
        let bucket: &mut BTreeMap<String, Transition> = match t.test {
            TestStatus::Pass => &mut out.p2p,
            TestStatus::Fail => &mut out.f2p,
            TestStatus::Skip => &mut out.s2p,
            TestStatus::None => &mut out.n2p,
        };
        bucket.insert(name.clone(), t);
        if t.test != TestStatus::Pass {
            out.fixed.insert(name.clone(), t);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use TestStatus::*;

    fn phase(items: &[(&str, TestStatus)]) -> PhaseStatuses {
        items.iter().map(|(n, s)| (n.to_string(), *s)).collect()
    }

    #[test]
    fn every_transition_lands_in_its_category() {
        let run = phase(&[("a", Pass), ("b", Fail), ("c", Skip), ("e", Pass)]);
        let test = phase(&[("a", Pass), ("b", Fail), ("c", Skip), ("e", Pass), ("f", Fail)]);
        let fix = phase(&[("a", Pass), ("b", Pass), ("c", Pass), ("d", Pass), ("e", Fail), ("f", Fail)]);
        let c = categorize(&run, &test, &fix);
        let keys = |m: &TestMap| m.keys().cloned().collect::<Vec<_>>();
        assert_eq!(keys(&c.p2p), ["a"]);
        assert_eq!(keys(&c.f2p), ["b"]);
        assert_eq!(keys(&c.s2p), ["c"]);
        assert_eq!(keys(&c.n2p), ["d"]);
        assert_eq!(keys(&c.fixed), ["b", "c", "d"]);
        assert_eq!(c.all.len(), 6);
        assert_eq!(c.all["d"], Transition { run: None, test: None, fix: Pass });
        assert_eq!(c.all["e"].fix, Fail);
    }

    #[test]
    fn the_strict_rule_sets_apart_every_test_the_test_phase_did_not_run() {
        // Each id shape passed on the base and did not run with the test patch (a fail-fast stop,
        // a module or a whole suite that did not compile): not a test the fix makes pass, whether
        // or not the test patch rewrote it. `b` is new and `d` failed on the base: both fixed.
        let not_run = [
            "p::a",
            "p::TestC",
            "crate::tests::parses",
            "dev.x.SlugsTest#collapsesRuns",
            "dev.x.SlugsTest",
            "test/duration.test.js",
            "test/duration.test.js > parse > rejects negative values",
            "tests/test_trim",
            "unit_tests",
        ];
        let mut run = phase(&[("p::d", Fail)]);
        let mut fix = phase(&[("p::b", Pass), ("p::d", Pass)]);
        for id in not_run {
            run.insert(id.to_owned(), Pass);
            fix.insert(id.to_owned(), Pass);
        }
        let test = phase(&[]);
        let c = categorize_with(&run, &test, &fix, LabelRule::Strict);
        let keys = |m: &TestMap| m.keys().cloned().collect::<Vec<_>>();
        assert_eq!(keys(&c.n2p), ["p::b", "p::d"]);
        assert_eq!(keys(&c.fixed), ["p::b", "p::d"]);
        let mut sorted = not_run.map(str::to_owned).to_vec();
        sorted.sort();
        assert_eq!(keys(&c.not_run_in_test), sorted);
        assert!(c.p2p.is_empty());
        // Multi-SWE-bench's rule keeps them all in n2p.
        let m = categorize_with(&run, &test, &fix, LabelRule::Msb);
        assert_eq!(m.n2p.len(), not_run.len() + 2);
        assert!(m.not_run_in_test.is_empty());
        assert_eq!(m, categorize(&run, &test, &fix));
        // A test that failed or was skipped with the test patch ran: fixed under both rules.
        let test = phase(&[("p::a", Fail), ("tests/test_trim", Skip)]);
        let c = categorize_with(&run, &test, &fix, LabelRule::Strict);
        assert_eq!(keys(&c.f2p), ["p::a"]);
        assert_eq!(keys(&c.s2p), ["tests/test_trim"]);
    }

    #[test]
    fn published_records_obey_the_rules() {
        // Each devset record's maps must be what `categorize` derives from its own transitions.
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/devset/instances.jsonl");
        let text = std::fs::read_to_string(path).unwrap();
        for inst in crate::read_jsonl(text.as_bytes()).unwrap() {
            let mut run = PhaseStatuses::new();
            let mut test = PhaseStatuses::new();
            let mut fix = PhaseStatuses::new();
            for m in [&inst.p2p_tests, &inst.f2p_tests, &inst.s2p_tests, &inst.n2p_tests] {
                for (n, t) in m {
                    for (p, s) in [(&mut run, t.run), (&mut test, t.test), (&mut fix, t.fix)] {
                        if s != None {
                            p.insert(n.clone(), s);
                        }
                    }
                }
            }
            let c = categorize(&run, &test, &fix);
            assert_eq!(c.f2p, inst.f2p_tests, "{}", inst.instance_id);
            assert_eq!(c.n2p, inst.n2p_tests, "{}", inst.instance_id);
            assert_eq!(c.fixed, inst.fixed_tests, "{}", inst.instance_id);
        }
    }
}
