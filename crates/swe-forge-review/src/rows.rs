//! The record's forms of the state store's review and decision rows
//! (`swe_forge_core::Review`, `swe_forge_core::Decision`), which `swe-forge-curate` takes.

use swe_forge_core::{Decision, Review, TimeToFix, Verdict};
use swe_forge_curate::KeepRule;
use swe_forge_store::{DecisionRow, ReviewRow};

/// The record's form of a stored review, with the keep rule's verdict (a time-to-fix answer this
/// build does not know reads as none).
pub fn review_from_row(row: &ReviewRow, rule: &KeepRule) -> Review {
    rule.judge(Review {
        reviewer: row.reviewer.clone(),
        reviewed_at: row.created_at.clone(),
        severe_problem: row.severe_problem,
        issue_clarity: row.issue_clarity,
        test_adequacy: row.test_adequacy,
        time_to_fix: row.time_to_fix.as_deref().and_then(TimeToFix::parse),
        notes: row.notes.clone(),
        keep: false,
    })
}

/// The record's form of a stored decision; None for a verdict this build does not know.
pub fn decision_from_row(row: &DecisionRow) -> Option<Decision> {
    Some(Decision {
        verdict: Verdict::parse(&row.verdict)?,
        reason: row.reason.clone(),
        reviewer: row.reviewer.clone(),
        decided_at: row.created_at.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(severe: bool, clarity: u8, adequacy: u8, time: Option<&str>) -> ReviewRow {
        ReviewRow {
            instance_id: "a__b-1".into(),
            reviewer: "alice".into(),
            severe_problem: severe,
            issue_clarity: clarity,
            test_adequacy: adequacy,
            time_to_fix: time.map(Into::into),
            notes: "n".into(),
            created_at: "2026-01-02T03:04:05.000Z".into(),
        }
    }

    #[test]
    fn a_review_row_becomes_the_records_review_with_the_rules_verdict() {
        let rule = KeepRule::default();
        let r = review_from_row(&row(false, 3, 2, Some("1h-4h")), &rule);
        assert_eq!(
            r,
            Review {
                reviewer: "alice".into(),
                reviewed_at: "2026-01-02T03:04:05.000Z".into(),
                severe_problem: false,
                issue_clarity: 3,
                test_adequacy: 2,
                time_to_fix: Some(TimeToFix::Under4Hours),
                notes: "n".into(),
                keep: true,
            }
        );
        assert!(!review_from_row(&row(true, 3, 3, None), &rule).keep);
        assert_eq!(review_from_row(&row(false, 3, 3, Some("a week")), &rule).time_to_fix, None);
    }

    #[test]
    fn a_decision_row_becomes_the_records_decision_unless_its_verdict_is_unknown() {
        let row = |verdict: &str| DecisionRow {
            instance_id: "a__b-1".into(),
            reviewer: "bob".into(),
            verdict: verdict.into(),
            reason: "why".into(),
            created_at: "2026-01-02T00:00:00.000Z".into(),
        };
        assert_eq!(
            decision_from_row(&row("needs_work")),
            Some(Decision {
                verdict: Verdict::NeedsWork,
                reason: "why".into(),
                reviewer: "bob".into(),
                decided_at: "2026-01-02T00:00:00.000Z".into(),
            })
        );
        assert_eq!(decision_from_row(&row("maybe")), None);
    }
}
