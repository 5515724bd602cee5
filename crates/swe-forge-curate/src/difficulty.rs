//! The difficulty heuristic: a weighted sum of log-scaled measurements of the instance, cut into
//! easy / medium / hard at two thresholds. Every input is kept on the record
//! (`swe_forge.difficulty.features`) so users can re-cut the labels their own way. The weights and
//! thresholds come from Multi-SWE-bench's human time-to-fix labels; docs/difficulty-calibration.md
//! has the data, the commands and the agreement they reach.

use swe_forge_core::{DifficultyFeatures, DifficultyLabel, Instance};

use swe_forge_core::PatchShape;

/// Weights of the score and the two cut points. `score = Σ weight · log2(1 + feature)`;
/// `score < easy_below` is easy, `score >= hard_from` is hard, anything between is medium.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Heuristic {
    /// Weight of the fix patch's changed lines (added + removed).
    pub lines: f64,
    /// Weight of the fix patch's files beyond the first.
    pub files: f64,
    /// Weight of the fix patch's hunks beyond the first.
    pub hunks: f64,
    /// Weight of the fix patch's directories beyond the first.
    pub dirs: f64,
    /// Weight of the number of fixed tests.
    pub fixed_tests: f64,
    /// Weight of the issue text length, in hundreds of characters.
    pub issue: f64,
    /// Scores below this are easy.
    pub easy_below: f64,
    /// Scores from this on are hard.
    pub hard_from: f64,
}

impl Heuristic {
    /// The calibrated heuristic (docs/difficulty-calibration.md, "Result"). Changing a number here
    /// means re-running the calibration and updating that document.
    pub const CALIBRATED: Heuristic = Heuristic {
        lines: 1.0,
        files: 0.5,
        hunks: 0.0,
        dirs: 0.5,
        fixed_tests: 0.0,
        issue: 0.0,
        easy_below: 3.5,
        hard_from: 7.2,
    };

    /// The score of a set of features (higher is harder).
    pub fn score(&self, f: &DifficultyFeatures) -> f64 {
        let l = |x: u64| (1.0 + x as f64).log2();
        let beyond_first = |x: u64| l(x.saturating_sub(1));
        self.lines * l(f.fix_lines_added + f.fix_lines_removed)
            + self.files * beyond_first(f.fix_files)
            + self.hunks * beyond_first(f.fix_hunks)
            + self.dirs * beyond_first(f.fix_dirs)
            + self.fixed_tests * l(f.fixed_tests)
            + self.issue * l(f.issue_chars / 100)
    }

    /// The label of a score.
    pub fn label(&self, score: f64) -> DifficultyLabel {
        if score < self.easy_below {
            DifficultyLabel::Easy
        } else if score >= self.hard_from {
            DifficultyLabel::Hard
        } else {
            DifficultyLabel::Medium
        }
    }
}

impl Default for Heuristic {
    fn default() -> Heuristic {
        Heuristic::CALIBRATED
    }
}

/// Measures an instance.
pub fn features(inst: &Instance) -> DifficultyFeatures {
    let fix = PatchShape::of(&inst.fix_patch);
    let test = PatchShape::of(&inst.test_patch);
    let fixed_tests = if inst.fixed_tests.is_empty() {
        inst.f2p_tests.len() + inst.s2p_tests.len() + inst.n2p_tests.len()
    } else {
        inst.fixed_tests.len()
    };
    let issue_chars: usize = if inst.resolved_issues.is_empty() {
        inst.title.chars().count() + inst.body.as_deref().map_or(0, |b| b.chars().count())
    } else {
        inst.resolved_issues
            .iter()
            .map(|i| i.title.chars().count() + i.body.as_deref().map_or(0, |b| b.chars().count()))
            .sum()
    };
    DifficultyFeatures {
        fix_files: fix.files.len() as u64,
        fix_hunks: fix.hunks,
        fix_lines_added: fix.added,
        fix_lines_removed: fix.removed,
        fix_dirs: fix.directories(),
        fix_top_dirs: fix.top_dirs(),
        test_files: test.files.len() as u64,
        test_lines: test.changed_lines(),
        fixed_tests: fixed_tests as u64,
        issue_chars: issue_chars as u64,
    }
}

/// The heuristic's score and label for an instance.
pub fn heuristic_label(inst: &Instance, h: &Heuristic) -> (DifficultyFeatures, f64, DifficultyLabel) {
    let f = features(inst);
    let score = h.score(&f);
    (f, score, h.label(score))
}

#[cfg(test)]
mod tests {
    use super::*;

    use swe_forge_test_support::devset;

    #[test]
    fn features_of_published_records() {
        let all = devset();
        let get = |id: &str| features(all.iter().find(|r| r.instance_id == id).unwrap());
        let f = get("serde-rs__serde-2798");
        assert_eq!((f.fix_files, f.fix_hunks, f.fix_lines_added, f.fix_lines_removed), (2, 2, 18, 37));
        assert_eq!((f.fix_dirs, f.fix_top_dirs, f.fixed_tests), (2, 1, 297));
        assert!(f.issue_chars > 100 && f.test_files >= 1, "{f:?}");
        let f = get("yhirose__cpp-httplib-1765");
        assert_eq!((f.fix_files, f.fix_hunks, f.fix_lines_added + f.fix_lines_removed, f.fixed_tests), (1, 1, 1, 1));
    }

    #[test]
    fn labels_follow_the_thresholds() {
        let h = Heuristic::CALIBRATED;
        let small =
            DifficultyFeatures { fix_files: 1, fix_hunks: 1, fix_lines_added: 1, fix_dirs: 1, ..Default::default() };
        let large = DifficultyFeatures {
            fix_files: 12,
            fix_hunks: 40,
            fix_lines_added: 800,
            fix_lines_removed: 200,
            fix_dirs: 6,
            ..Default::default()
        };
        assert_eq!(h.label(h.score(&small)), DifficultyLabel::Easy);
        assert_eq!(h.label(h.score(&large)), DifficultyLabel::Hard);
        assert!(h.score(&small) < h.score(&large));
        assert_eq!(h.label(h.easy_below), DifficultyLabel::Medium);
        assert_eq!(h.label(h.hard_from), DifficultyLabel::Hard);
    }
}
