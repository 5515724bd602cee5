//! The keep rules, as Multi-SWE-bench applies them, each failure a machine-readable reason.

use swe_forge_core::{Categorized, PhaseStatuses, RejectReason, Rejection, TestStatus};

/// Rejections for an instance whose three runs produced `c`; empty means keep.
///
/// 1. the fix run has tests;
/// 2. at least one test is fixed (f2p, s2p or n2p);
/// 3. no test goes PASS (test run) -> FAIL (fix run);
/// 4. no anomaly: PASS at base, NONE or SKIP with the test patch, FAIL with the fix.
pub fn keep_rules(c: &Categorized, fix: &PhaseStatuses) -> Vec<Rejection> {
    let mut out = Vec::new();
    if fix.values().all(|s| *s == TestStatus::None) {
        out.push(Rejection::new(RejectReason::NoTestsInFixRun, "the fix run reported no test"));
    }
    if c.fixed.is_empty() {
        out.push(Rejection::new(RejectReason::NoFixedTests, "no test goes from FAIL, SKIP or NONE to PASS"));
    }
    let names = |pred: &dyn Fn(&swe_forge_core::Transition) -> bool| {
        c.all.iter().filter(|(_, t)| pred(t)).map(|(n, _)| n.as_str()).collect::<Vec<_>>()
    };
    let p2f = names(&|t| t.test == TestStatus::Pass && t.fix == TestStatus::Fail);
    if !p2f.is_empty() {
        out.push(Rejection::new(RejectReason::PassToFail, p2f.join(", ")));
    }
    let anomalies = names(&|t| {
        t.run == TestStatus::Pass && matches!(t.test, TestStatus::None | TestStatus::Skip) && t.fix == TestStatus::Fail
    });
    if !anomalies.is_empty() {
        out.push(Rejection::new(RejectReason::Anomaly, anomalies.join(", ")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use TestStatus::*;
    use swe_forge_core::categorize;

    fn check(rows: &[(&str, TestStatus, TestStatus, TestStatus)]) -> Vec<RejectReason> {
        let mut p = [PhaseStatuses::new(), PhaseStatuses::new(), PhaseStatuses::new()];
        for (n, a, b, c) in rows {
            for (m, s) in p.iter_mut().zip([a, b, c]) {
                if *s != None {
                    m.insert(n.to_string(), *s);
                }
            }
        }
        keep_rules(&categorize(&p[0], &p[1], &p[2]), &p[2]).into_iter().map(|r| r.reason).collect()
    }

    #[test]
    fn rules() {
        assert_eq!(check(&[("a", Pass, Pass, Pass), ("b", None, Fail, Pass)]), []);
        assert_eq!(check(&[("a", Pass, Pass, Pass)]), [RejectReason::NoFixedTests]);
        assert_eq!(check(&[]), [RejectReason::NoTestsInFixRun, RejectReason::NoFixedTests]);
        assert_eq!(check(&[("a", Pass, Pass, Fail), ("b", Fail, Fail, Pass)]), [RejectReason::PassToFail]);
        assert_eq!(check(&[("a", Pass, None, Fail), ("b", Fail, Fail, Pass)]), [RejectReason::Anomaly]);
        // FAIL -> FAIL is tolerated, as in Multi-SWE-bench.
        assert_eq!(check(&[("a", Fail, Fail, Fail), ("b", None, None, Pass)]), []);
    }
}
