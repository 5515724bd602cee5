//! Repeated runs: a test whose outcome differs between the runs of one phase is flaky. Flaky
//! tests get their pass rates and leave every category; the others keep their common status.

use std::collections::{BTreeMap, BTreeSet};

use swe_forge_core::{PassRates, PhaseStatuses, TestStatus};

/// The three phases' statuses after merging repeats, the flaky tests, and the stability figure
/// (share of tests with one outcome in every run; 1.0 when there are no tests).
pub(crate) struct Merged {
    pub phases: [PhaseStatuses; 3],
    pub flaky: BTreeMap<String, PassRates>,
    pub stability: f64,
}

/// Merges `runs[phase][attempt]`.
pub(crate) fn merge(runs: &[Vec<PhaseStatuses>; 3]) -> Merged {
    let names: BTreeSet<&String> = runs.iter().flatten().flat_map(|m| m.keys()).collect();
    let status = |m: &PhaseStatuses, n: &str| m.get(n).copied().unwrap_or(TestStatus::None);
    let mut flaky = BTreeMap::new();
    let mut phases: [PhaseStatuses; 3] = Default::default();
    for name in &names {
        let unstable = runs.iter().any(|attempts| {
            let mut it = attempts.iter().map(|m| status(m, name));
            let first = it.next();
            it.any(|s| Some(s) != first)
        });
        if unstable {
            let rate = |attempts: &Vec<PhaseStatuses>| {
                let seen = attempts.iter().any(|m| m.contains_key(*name));
                let passes = attempts.iter().filter(|m| status(m, name) == TestStatus::Pass).count();
                seen.then(|| passes as f64 / attempts.len().max(1) as f64)
            };
            flaky.insert((*name).clone(), PassRates { run: rate(&runs[0]), test: rate(&runs[1]), fix: rate(&runs[2]) });
            continue;
        }
        for (i, attempts) in runs.iter().enumerate() {
            if let Some(s) = attempts.first().and_then(|m| m.get(*name)) {
                phases[i].insert((*name).clone(), *s);
            }
        }
    }
    let stability = if names.is_empty() { 1.0 } else { 1.0 - flaky.len() as f64 / names.len() as f64 };
    Merged { phases, flaky, stability }
}

#[cfg(test)]
mod tests {
    use super::*;
    use TestStatus::*;

    fn p(items: &[(&str, TestStatus)]) -> PhaseStatuses {
        items.iter().map(|(n, s)| (n.to_string(), *s)).collect()
    }

    #[test]
    fn differing_outcomes_are_flaky_and_leave_the_phases() {
        let runs = [
            vec![p(&[("a", Pass), ("f", Pass)]), p(&[("a", Pass), ("f", Fail)]), p(&[("a", Pass), ("f", Pass)])],
            vec![p(&[("a", Pass), ("b", Fail)]), p(&[("a", Pass), ("b", Fail)]), p(&[("a", Pass), ("b", Fail)])],
            vec![p(&[("a", Pass), ("b", Pass)]), p(&[("a", Pass), ("b", Pass)]), p(&[("a", Pass), ("b", Pass)])],
        ];
        let m = merge(&runs);
        assert_eq!(m.flaky.keys().collect::<Vec<_>>(), ["f"]);
        let f = m.flaky["f"];
        assert!((f.run.unwrap() - 2.0 / 3.0).abs() < 1e-9);
        assert_eq!(f.test, Option::None);
        assert!(!m.phases[0].contains_key("f"));
        assert_eq!(m.phases[1]["b"], Fail);
        assert!((m.stability - 2.0 / 3.0).abs() < 1e-9);
        // A test that vanishes in one repeat is flaky too.
        let gone = [
            vec![p(&[("x", Pass)]), p(&[])],
            vec![p(&[("x", Pass)]), p(&[("x", Pass)])],
            vec![p(&[("x", Pass)]), p(&[("x", Pass)])],
        ];
        assert!(merge(&gone).flaky.contains_key("x"));
        // One attempt: nothing is flaky.
        let once = [vec![p(&[("x", Fail)])], vec![p(&[("x", Fail)])], vec![p(&[("x", Pass)])]];
        let m = merge(&once);
        assert!(m.flaky.is_empty());
        assert_eq!(m.stability, 1.0);
    }
}
