//! The review questionnaire's keep rule and the record's form of a stored review (the review
//! page itself is `swe-forge-review`).
//!
//! The questions follow Multi-SWE-bench's annotation sheets (themselves modelled on SWE-bench
//! Verified): a severe problem not covered by the other questions (yes/no), issue clarity (0-3),
//! test adequacy (0-3), time to fix (<15 min, 15 min-1 h, 1-4 h, >4 h), and free notes.

use serde::{Deserialize, Serialize};
use swe_forge_core::{Review, TimeToFix};
use swe_forge_store::ReviewRow;

/// Which reviews keep an instance. Multi-SWE-bench's rule (reproduced from its sheets) is the
/// default: no severe problem, clarity >= 2, adequacy >= 2.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeepRule {
    /// Keep instances flagged with a severe problem.
    pub allow_severe: bool,
    /// Lowest issue clarity kept.
    pub min_clarity: u8,
    /// Lowest test adequacy kept.
    pub min_adequacy: u8,
}

impl Default for KeepRule {
    fn default() -> KeepRule {
        KeepRule { allow_severe: false, min_clarity: 2, min_adequacy: 2 }
    }
}

impl KeepRule {
    /// Whether these answers keep the instance.
    pub fn keeps(&self, row: &ReviewRow) -> bool {
        (self.allow_severe || !row.severe_problem)
            && row.issue_clarity >= self.min_clarity
            && row.test_adequacy >= self.min_adequacy
    }
}

/// The record's form of a stored review, with the keep rule's verdict.
pub fn review_from_row(row: &ReviewRow, rule: &KeepRule) -> Review {
    Review {
        reviewer: row.reviewer.clone(),
        reviewed_at: row.created_at.clone(),
        severe_problem: row.severe_problem,
        issue_clarity: row.issue_clarity,
        test_adequacy: row.test_adequacy,
        time_to_fix: row.time_to_fix.as_deref().and_then(TimeToFix::parse),
        notes: row.notes.clone(),
        keep: rule.keeps(row),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(severe: bool, clarity: u8, adequacy: u8) -> ReviewRow {
        ReviewRow {
            instance_id: "a__b-1".into(),
            reviewer: "alice".into(),
            severe_problem: severe,
            issue_clarity: clarity,
            test_adequacy: adequacy,
            time_to_fix: Some("1h-4h".into()),
            notes: String::new(),
            created_at: "2026-01-02T03:04:05.000Z".into(),
        }
    }

    #[test]
    fn the_default_rule_is_msbs() {
        let rule = KeepRule::default();
        assert!(rule.keeps(&row(false, 2, 2)));
        assert!(!rule.keeps(&row(true, 3, 3)));
        assert!(!rule.keeps(&row(false, 1, 3)));
        assert!(!rule.keeps(&row(false, 3, 1)));
        let lenient = KeepRule { allow_severe: true, min_clarity: 1, min_adequacy: 0 };
        assert!(lenient.keeps(&row(true, 1, 0)));
        let r = review_from_row(&row(false, 3, 2), &rule);
        assert_eq!(
            (r.keep, r.time_to_fix, r.reviewed_at.as_str()),
            (true, Some(TimeToFix::Under4Hours), "2026-01-02T03:04:05.000Z")
        );
    }
}
