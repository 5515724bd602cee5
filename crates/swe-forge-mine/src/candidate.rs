//! The miner's output line: a Multi-SWE-bench record (no test lists yet) plus a top-level
//! `mining` object that says where the record came from and what a reviewer should check.
//!
//! `swe-forge validate` and Multi-SWE-bench readers ignore the extra key (the record's schema
//! allows additional top-level properties). The notes stay in this crate until the core record
//! grows a place for them under `swe_forge`.

use serde::{Deserialize, Serialize};
use swe_forge_core::Instance;

use crate::split::SplitFlag;

/// A mined candidate: the record and the miner's notes about it.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// The record, ready for `swe-forge validate`.
    pub record: Instance,
    /// How it was mined.
    pub mining: MiningNotes,
}

/// What the miner knows about a candidate beyond the record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MiningNotes {
    /// `github` or `mirror`.
    pub source: MineSource,
    /// Why the miner believes the PR was merged.
    pub merge_evidence: MergeEvidence,
    /// Last commit of the PR branch.
    pub head_sha: String,
    /// The merge or squash commit on the base branch, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merge_commit: Option<String>,
    /// When the PR was merged (RFC 3339, UTC), or when its last commit was made in mirror mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged_at: Option<String>,
    /// Every issue the PR closes, with where the link was found.
    pub issues: Vec<LinkedIssue>,
    /// Whether the issue titles and bodies in `resolved_issues` are real (`resolved`) or empty
    /// placeholders (`missing`, mirror mode).
    pub issue_texts: IssueTexts,
    /// Paths in `test_patch`.
    pub test_files: Vec<String>,
    /// Paths in `fix_patch`.
    pub fix_files: Vec<String>,
    /// Doubts about the split.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<SplitFlag>,
}

/// Where candidates come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MineSource {
    /// GitHub's GraphQL and REST APIs.
    Github,
    /// A local git repository with `refs/pull/*` refs.
    Mirror,
}

/// How a PR is known to be merged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MergeEvidence {
    /// GitHub says `merged: true`.
    Github,
    /// A `Merge pull request #N` commit on the base branch.
    MergeCommit,
    /// A commit titled `... (#N)` on the base branch.
    SquashCommit,
    /// Only a `refs/pull/N/head` ref: merged or not is unknown.
    PullRefOnly,
}

/// One linked issue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkedIssue {
    /// `owner/name` of the issue's repository.
    pub repo: String,
    /// Issue number.
    pub number: u64,
    /// The issue lives in another repository than the PR.
    pub cross_repo: bool,
    /// Found by GitHub (`closingIssuesReferences`).
    pub github_link: bool,
    /// Found by a closing keyword in the title, body or a commit message.
    pub keyword: bool,
}

/// Whether issue texts were fetched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IssueTexts {
    /// Titles and bodies come from GitHub.
    Resolved,
    /// Titles are empty and bodies null: fill them in before using the record as a benchmark task.
    Missing,
    /// The PR links no issue.
    NoIssue,
}

impl Candidate {
    /// One JSON line (without the newline): the record's fields, then `mining`.
    pub fn to_json_line(&self) -> String {
        let mut value = serde_json::to_value(&self.record).expect("records serialize");
        let notes = serde_json::to_value(&self.mining).expect("notes serialize");
        if let serde_json::Value::Object(map) = &mut value {
            map.insert("mining".to_owned(), notes);
        }
        value.to_string()
    }

    /// Reads a line written by [`Candidate::to_json_line`].
    pub fn from_json_line(line: &str) -> Result<Candidate, serde_json::Error> {
        let mut value: serde_json::Value = serde_json::from_str(line)?;
        let notes = value.as_object_mut().and_then(|m| m.remove("mining")).unwrap_or(serde_json::Value::Null);
        let mut record: Instance = serde_json::from_value(value)?;
        if record.instance_id.is_empty() {
            record.instance_id = record.expected_id();
        }
        Ok(Candidate { record, mining: serde_json::from_value(notes)? })
    }
}
