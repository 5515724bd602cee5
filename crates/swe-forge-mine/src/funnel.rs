//! The funnel report: how many PRs of a repository survived each stage, and why the others were
//! dropped. Built from the per-PR decisions of the progress journal, so a resumed mine reports the
//! same numbers as an uninterrupted one.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use swe_forge_core::MarkdownTable;

/// What became of one pull request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Written as a candidate.
    Kept,
    /// Closed without being merged.
    NotMerged,
    /// Still a draft.
    Draft,
    /// Opened by a bot account.
    Bot,
    /// More changed files or lines than the limits allow.
    TooLarge,
    /// No closing reference to an issue (when one is required).
    NoLinkedIssue,
    /// No test file changed.
    NoTests,
    /// Only test files changed.
    NoFix,
    /// The diff could not be obtained (missing commits, API error on this PR).
    DiffUnavailable,
    /// The base could not be determined (mirror mode: fast-forward merges, heads without a
    /// common history with the branch).
    BaseUnknown,
}

impl Decision {
    /// The last funnel stage this decision passed: 0 seen, 1 merged, 2 linked, 3 with tests, 4 kept.
    fn stage(self) -> usize {
        match self {
            Decision::NotMerged => 0,
            Decision::Draft | Decision::Bot | Decision::TooLarge | Decision::NoLinkedIssue | Decision::BaseUnknown => 1,
            Decision::NoTests | Decision::NoFix => 2,
            Decision::DiffUnavailable => 3,
            Decision::Kept => 4,
        }
    }

    /// snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Kept => "kept",
            Decision::NotMerged => "not_merged",
            Decision::Draft => "draft",
            Decision::Bot => "bot",
            Decision::TooLarge => "too_large",
            Decision::NoLinkedIssue => "no_linked_issue",
            Decision::NoTests => "no_tests",
            Decision::NoFix => "no_fix",
            Decision::DiffUnavailable => "diff_unavailable",
            Decision::BaseUnknown => "base_unknown",
        }
    }
}

/// Counts per stage for one repository. Each stage counts the PRs that passed it and every
/// stage before it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Funnel {
    /// `owner/name`.
    pub repo: String,
    /// PRs listed in the window.
    pub seen: u64,
    /// ...that were merged (and, in mirror mode, PR refs whose merge is unknown, unless excluded).
    pub merged: u64,
    /// ...that are no draft, no bot's, within the size limits and link an issue (when required).
    pub linked: u64,
    /// ...that change both test and non-test files.
    pub with_tests: u64,
    /// ...written as candidates.
    pub kept: u64,
    /// PRs that reference at least one issue, whatever their other stages.
    pub with_issue_reference: u64,
    /// Drops by reason.
    pub dropped: BTreeMap<String, u64>,
}

impl Funnel {
    /// An empty funnel for `repo`.
    pub fn new(repo: &str) -> Funnel {
        Funnel { repo: repo.to_owned(), ..Funnel::default() }
    }

    /// Counts one PR's decision.
    pub fn count(&mut self, decision: Decision, references_issue: bool) {
        let stage = decision.stage();
        self.seen += 1;
        for (i, field) in
            [&mut self.merged, &mut self.linked, &mut self.with_tests, &mut self.kept].into_iter().enumerate()
        {
            if stage > i {
                *field += 1;
            }
        }
        if references_issue {
            self.with_issue_reference += 1;
        }
        if decision != Decision::Kept {
            *self.dropped.entry(decision.as_str().to_owned()).or_default() += 1;
        }
    }
}

/// A Markdown table of funnels, one row per repository.
pub fn markdown_table(funnels: &[Funnel]) -> String {
    let mut table = MarkdownTable::new([
        "repository",
        "seen",
        "merged",
        "linked",
        "with tests",
        "kept",
        "with issue reference",
        "dropped",
    ])
    .right(1..7);
    for f in funnels {
        let dropped: Vec<String> = f.dropped.iter().map(|(k, v)| format!("{k} {v}")).collect();
        table.row([
            f.repo.clone(),
            f.seen.to_string(),
            f.merged.to_string(),
            f.linked.to_string(),
            f.with_tests.to_string(),
            f.kept.to_string(),
            f.with_issue_reference.to_string(),
            dropped.join(", "),
        ]);
    }
    table.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stages_are_cumulative() {
        let mut f = Funnel::new("o/r");
        for d in [Decision::Kept, Decision::NotMerged, Decision::Bot, Decision::NoTests, Decision::Kept] {
            f.count(d, d == Decision::Kept);
        }
        assert_eq!((f.seen, f.merged, f.linked, f.with_tests, f.kept), (5, 4, 3, 2, 2));
        assert_eq!(f.with_issue_reference, 2);
        assert_eq!(f.dropped.get("bot"), Some(&1));
        let mut clean = Funnel::new("a/b");
        clean.count(Decision::Kept, false);
        assert_eq!(
            markdown_table(&[f, clean]),
            "| repository | seen | merged | linked | with tests | kept | with issue reference | dropped |\n\
             |---|---:|---:|---:|---:|---:|---:|---|\n\
             | o/r | 5 | 4 | 3 | 2 | 2 | 2 | bot 1, no_tests 1, not_merged 1 |\n\
             | a/b | 1 | 1 | 1 | 1 | 1 | 0 |  |\n"
        );
    }
}
