//! The Multi-SWE-bench categories, derived from the test -> fix transition only.
//!
//! p2p = PASS->PASS, f2p = FAIL->PASS, s2p = SKIP->PASS, n2p = NONE->PASS and
//! fixed = f2p + s2p + n2p. Tests that end anywhere but PASS belong to no category.

use std::collections::{BTreeMap, BTreeSet};

use crate::{PhaseStatuses, TestMap, TestStatus, Transition};

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
}

/// Joins the three runs' statuses and sorts every test into its category.
pub fn categorize(run: &PhaseStatuses, test: &PhaseStatuses, fix: &PhaseStatuses) -> Categorized {
    let names: BTreeSet<&String> = run.keys().chain(test.keys()).chain(fix.keys()).collect();
    let get = |m: &PhaseStatuses, n: &str| m.get(n).copied().unwrap_or(TestStatus::None);
    let mut out = Categorized::default();
    for name in names {
        let t = Transition { run: get(run, name), test: get(test, name), fix: get(fix, name) };
        out.all.insert(name.clone(), t);
        if t.fix != TestStatus::Pass {
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
