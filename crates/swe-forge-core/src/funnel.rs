//! The grain of a validation, from its records: how many candidates built their image, how many
//! ran their tests one by one and how many as one target only (graded by the exit code, or one
//! test or ctest target standing for the suite), how many reported no test, how many were
//! accepted, and the rejections by reason. `validate` and `run` end with it.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::{Instance, ValidationStatus};

/// The counts of a validation's funnel ([`ValidationFunnel::of`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ValidationFunnel {
    /// Records validated.
    pub candidates: u64,
    /// Those whose instance image was built (the record names it).
    pub built: u64,
    /// Built, and their runs reported per-test results (two tests or more).
    pub per_test: u64,
    /// Built, and their runs reported one test only: each phase graded by its exit code
    /// (`labels.exit_code_graded`), or one test or ctest target standing for the suite.
    pub one_target: u64,
    /// Built, and no phase reported any test (the suite never ran, or no run finished).
    pub no_test: u64,
    /// Accepted.
    pub accepted: u64,
    /// Rejected.
    pub rejected: u64,
    /// Rejected records by reason (a record with two reasons counts under both).
    pub reasons: BTreeMap<String, u64>,
}

impl ValidationFunnel {
    /// The funnel of `records` (validated records; a candidate never validated counts as one that
    /// was neither built nor decided).
    pub fn of<'a>(records: impl IntoIterator<Item = &'a Instance>) -> ValidationFunnel {
        let mut f = ValidationFunnel::default();
        for r in records {
            f.add(r);
        }
        f
    }

    fn add(&mut self, r: &Instance) {
        self.candidates += 1;
        match r.status() {
            ValidationStatus::Accepted => self.accepted += 1,
            ValidationStatus::Rejected => {
                self.rejected += 1;
                let reasons: BTreeSet<&str> =
                    r.swe_forge.iter().flat_map(|m| &m.rejections).map(|x| x.reason.as_str()).collect();
                for reason in reasons {
                    *self.reasons.entry(reason.to_owned()).or_default() += 1;
                }
            }
            ValidationStatus::Candidate => {}
        }
        let Some(meta) = r.swe_forge.as_ref().filter(|m| m.image.is_some()) else { return };
        self.built += 1;
        let tests: BTreeSet<&String> = [&r.run_result, &r.test_patch_result, &r.fix_patch_result]
            .into_iter()
            .flat_map(|x| x.passed_tests.iter().chain(&x.failed_tests).chain(&x.skipped_tests))
            .collect();
        let exit_code_graded = meta.labels.as_ref().is_some_and(|l| l.exit_code_graded);
        match tests.len() {
            0 => self.no_test += 1,
            1 => self.one_target += 1,
            _ if exit_code_graded => self.one_target += 1,
            _ => self.per_test += 1,
        }
    }

    /// The reasons, most frequent first (then by name).
    pub fn reasons_by_count(&self) -> Vec<(&str, u64)> {
        let mut out: Vec<(&str, u64)> = self.reasons.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        out.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        out
    }

    /// The funnel as lines of text for a terminal, one count a line.
    pub fn lines(&self) -> Vec<String> {
        let mut out = vec![format!("funnel of {} candidates:", self.candidates)];
        let row = |n: u64, what: &str| format!("  {n:>6}  {what}");
        out.push(row(self.built, "built their image"));
        out.push(row(self.per_test, "ran their tests one by one (per-test results)"));
        out.push(row(self.one_target, "ran as one target only (graded by exit code, or one test for the suite)"));
        out.push(row(self.no_test, "reported no test in any phase"));
        out.push(row(self.accepted, "accepted"));
        out.push(row(self.rejected, "rejected, by reason (a record can have several):"));
        for (reason, n) in self.reasons_by_count() {
            out.push(format!("  {n:>6}    {reason}"));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ALL_TESTS, ForgeMeta, Labels, RejectReason, Rejection, TestResult};

    fn record(status: ValidationStatus, image: bool, tests: &[&str], reasons: &[RejectReason]) -> Instance {
        let mut inst: Instance = serde_json::from_value(serde_json::json!({
            "org": "o", "repo": "r", "number": 1, "state": "closed", "title": "t", "body": null,
            "base": {"label": "o:main", "ref": "main", "sha": "0"}, "resolved_issues": [],
            "fix_patch": "", "test_patch": "",
            "swe_forge": {"schema_version": 1, "status": status.as_str()}
        }))
        .unwrap();
        let meta: &mut ForgeMeta = inst.swe_forge.as_mut().unwrap();
        meta.image = image.then(|| "swe-forge/o__r-1:abc".to_owned());
        meta.rejections = reasons.iter().map(|r| Rejection::new(*r, "")).collect();
        inst.fix_patch_result = TestResult {
            passed_tests: tests.iter().map(|t| t.to_string()).collect(),
            passed_count: tests.len() as u64,
            ..TestResult::default()
        };
        inst
    }

    #[test]
    fn the_funnel_counts_builds_grain_and_reasons() {
        use RejectReason::*;
        use ValidationStatus::{Accepted, Rejected};
        let mut exit_coded = record(Accepted, true, &[ALL_TESTS], &[]);
        exit_coded.swe_forge.as_mut().unwrap().labels = Some(Labels { exit_code_graded: true, ..Labels::default() });
        let records = [
            record(Accepted, true, &["a::x", "a::y"], &[]),
            record(Accepted, true, &["a::x", "a::y", "a::z"], &[]),
            exit_coded,
            // One ctest target standing for the whole suite.
            record(Rejected, true, &["unit_tests"], &[NoFixedTests]),
            record(Rejected, true, &[], &[SuiteNeverRan]),
            record(Rejected, true, &["a::x", "a::y"], &[PassToFail, Anomaly]),
            record(Rejected, false, &[], &[ImageBuildFailed]),
            record(Rejected, false, &[], &[TestPatchDoesNotApply]),
            record(Rejected, false, &[], &[NoFixedTests, NoFixedTests]),
        ];
        let f = ValidationFunnel::of(&records);
        assert_eq!(
            (f.candidates, f.built, f.per_test, f.one_target, f.no_test, f.accepted, f.rejected),
            (9, 6, 3, 2, 1, 3, 6)
        );
        assert_eq!(
            f.reasons_by_count(),
            [
                ("no_fixed_tests", 2),
                ("anomaly", 1),
                ("image_build_failed", 1),
                ("pass_to_fail", 1),
                ("suite_never_ran", 1),
                ("test_patch_does_not_apply", 1)
            ]
        );
        let text = f.lines().join("\n");
        assert!(text.starts_with("funnel of 9 candidates:\n       6  built their image\n"), "{text}");
        assert!(text.contains("\n       2  ran as one target only"), "{text}");
        assert!(text.ends_with("\n       1    test_patch_does_not_apply"), "{text}");
        let json = serde_json::to_value(&f).unwrap();
        assert_eq!(json["one_target"], 2);
        assert_eq!(json["reasons"]["no_fixed_tests"], 2);
    }
}
