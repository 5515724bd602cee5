//! The review questionnaire's keep rule, applied to the record's form of a review
//! (`swe_forge_core::Review`; the review page, which saves them, is `swe-forge-review`).
//!
//! The questions follow Multi-SWE-bench's annotation sheets (themselves modelled on SWE-bench
//! Verified): a severe problem not covered by the other questions (yes/no), issue clarity (0-3),
//! test adequacy (0-3), time to fix (<15 min, 15 min-1 h, 1-4 h, >4 h), and free notes.

use serde::{Deserialize, Serialize};
use swe_forge_core::Review;

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
    /// Whether these answers keep the instance (the review's own `keep` is not read).
    pub fn keeps(&self, review: &Review) -> bool {
        (self.allow_severe || !review.severe_problem)
            && review.issue_clarity >= self.min_clarity
            && review.test_adequacy >= self.min_adequacy
    }

    /// `review` with `keep` set to this rule's verdict on its answers.
    pub fn judge(&self, review: Review) -> Review {
        Review { keep: self.keeps(&review), ..review }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn review(severe: bool, clarity: u8, adequacy: u8, keep: bool) -> Review {
        Review {
            reviewer: "alice".into(),
            reviewed_at: "2026-01-02T03:04:05.000Z".into(),
            severe_problem: severe,
            issue_clarity: clarity,
            test_adequacy: adequacy,
            time_to_fix: None,
            notes: String::new(),
            keep,
        }
    }

    #[test]
    fn the_default_rule_is_msbs() {
        let rule = KeepRule::default();
        assert!(rule.keeps(&review(false, 2, 2, false)));
        assert!(!rule.keeps(&review(true, 3, 3, true)));
        assert!(!rule.keeps(&review(false, 1, 3, true)));
        assert!(!rule.keeps(&review(false, 3, 1, true)));
        let lenient = KeepRule { allow_severe: true, min_clarity: 1, min_adequacy: 0 };
        assert!(lenient.keeps(&review(true, 1, 0, false)));
    }

    #[test]
    fn judging_sets_keep_from_the_answers_alone() {
        let rule = KeepRule::default();
        assert_eq!(rule.judge(review(false, 3, 2, false)), review(false, 3, 2, true));
        assert_eq!(rule.judge(review(false, 1, 2, true)), review(false, 1, 2, false));
    }
}
