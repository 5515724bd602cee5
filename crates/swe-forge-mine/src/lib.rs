//! Mining: merged pull requests of a repository, the issues they close and their diffs split into
//! `fix_patch` and `test_patch`, written as candidate records (Multi-SWE-bench format, no test
//! lists yet) for `swe-forge validate`, with a funnel report per repository.
//!
//! Two sources: GitHub (`github`: GraphQL listings in batches, one REST diff per candidate, token
//! rotation, rate limits, an ETag cache) and local mirrors (`mirror`: `refs/pull/*`, merge and
//! squash commits, no API; issue texts from a saved export, [`IssueExport`]). Both write through
//! a [`Journal`] so that an interrupted mine resumes without duplicates.
//!
//! Never prints (progress goes through [`Reporter`]); never writes a token anywhere; never writes
//! to a mirror.

mod candidate;
mod client;
mod dates;
mod error;
mod funnel;
mod github;
mod graphql;
mod issue_export;
mod journal;
mod links;
mod mirror;
mod split;

pub use candidate::{Candidate, IssueTexts, LinkedIssue, MergeEvidence, MineSource, MiningNotes};
pub use client::{Client, ClientOptions, RequestStats, Token, load_tokens};
pub use dates::{Window, format_time, parse_time};
pub use error::MineError;
pub use funnel::{Decision, Funnel, markdown_table};
pub use github::{GithubOptions, mine_github};
pub use issue_export::{ExportedText, IssueExport};
pub use journal::{Journal, progress_path};
pub use links::{IssueRef, closing_references, strip_html_comments};
pub use mirror::{MirrorOptions, diff_commits, mine_mirror, repo_name_from_path};
pub use split::{SplitFlag, SplitPatch, is_test_path, split_patch};

use swe_forge_core::{Base, Instance, TestResult};

/// Size limits: a PR over either is dropped as `too_large`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Limits {
    /// Changed files (test and non-test).
    pub max_files: Option<usize>,
    /// Added plus removed lines of the fix patch.
    pub max_fix_lines: Option<usize>,
}

impl Limits {
    /// Whether a PR with `files` changed files and `fix_lines` changed fix lines is allowed.
    pub fn allows(&self, files: usize, fix_lines: usize) -> bool {
        self.max_files.is_none_or(|m| files <= m) && self.max_fix_lines.is_none_or(|m| fix_lines <= m)
    }
}

/// Progress of a mine, for the binary to draw.
pub trait Reporter: Sync {
    /// `count` pull requests were listed for `repo` (one listing page or the whole mirror).
    fn listed(&self, repo: &str, count: usize);
    /// One pull request was decided.
    fn decided(&self, repo: &str, number: u64, decision: Decision);
    /// Something of `repo` was skipped or is doubtful (a mirror's ref that names no pull
    /// request); by default a warning in the log.
    fn warned(&self, repo: &str, message: &str) {
        tracing::warn!(repo, "{message}");
    }
    /// Something of `repo` worth a line (what an issues export held); by default an info event.
    fn noted(&self, repo: &str, message: &str) {
        tracing::info!(repo, "{message}");
    }
}

/// A reporter that reports nothing.
pub struct Quiet;

impl Reporter for Quiet {
    fn listed(&self, _repo: &str, _count: usize) {}
    fn decided(&self, _repo: &str, _number: u64, _decision: Decision) {}
}

/// A candidate record with everything but base, issues and patches.
pub(crate) fn new_record(org: &str, repo: &str, number: u64, title: &str, body: Option<String>) -> Instance {
    let mut r = Instance {
        org: org.to_owned(),
        repo: repo.to_owned(),
        number,
        state: "closed".to_owned(),
        title: title.to_owned(),
        body,
        base: Base { label: String::new(), ref_: String::new(), sha: String::new() },
        resolved_issues: Vec::new(),
        fix_patch: String::new(),
        test_patch: String::new(),
        fixed_tests: Default::default(),
        p2p_tests: Default::default(),
        f2p_tests: Default::default(),
        s2p_tests: Default::default(),
        n2p_tests: Default::default(),
        run_result: TestResult::default(),
        test_patch_result: TestResult::default(),
        fix_patch_result: TestResult::default(),
        instance_id: String::new(),
        hints: None,
        tag: None,
        number_interval: None,
        lang: None,
        swe_forge: None,
    };
    r.instance_id = r.expected_id();
    r
}

/// Raises `no_issue_text` on a candidate that gives a solver nothing to read
/// ([`swe_forge_core::lacks_issue_text`]), in its `swe_forge.quality` (made when missing).
pub(crate) fn flag_missing_text(record: &mut Instance) {
    if !swe_forge_core::lacks_issue_text(record) {
        return;
    }
    let meta = record
        .swe_forge
        .get_or_insert_with(|| swe_forge_core::ForgeMeta::new(swe_forge_core::ValidationStatus::Candidate));
    let quality = meta.quality.get_or_insert_with(|| swe_forge_core::Quality {
        version: swe_forge_core::QUALITY_VERSION,
        ..Default::default()
    });
    quality.raise(swe_forge_core::QualityFlag::NoIssueText);
}

/// Gives a candidate its dates under `swe_forge` (status `candidate`), where validation, curate's
/// splits and the exports read them: `merged_at` and `created_at` (RFC 3339; one that does not
/// parse, `T25:61:61Z` or year 0000, is left out with a warning).
pub(crate) fn set_dates(record: &mut Instance, merged_at: Option<&str>, created_at: Option<&str>) {
    let id = record.instance_id.clone();
    let parse = |t: Option<&str>| {
        t.and_then(|t| {
            swe_forge_core::Timestamp::parse(t)
                .inspect_err(|e| tracing::warn!(instance = %id, "{e}: the date is left out"))
                .ok()
        })
    };
    let (merged_at, created_at) = (parse(merged_at), parse(created_at));
    if merged_at.is_none() && created_at.is_none() {
        return;
    }
    let meta = record
        .swe_forge
        .get_or_insert_with(|| swe_forge_core::ForgeMeta::new(swe_forge_core::ValidationStatus::Candidate));
    meta.merged_at = merged_at;
    meta.created_at = created_at;
}
