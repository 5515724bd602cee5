//! GitHub mode: list a repository's closed PRs in a window through GraphQL search (one request per
//! page of up to 100 PRs, with files, commit messages and closing issue references), decide every
//! PR that the listing alone can rule out, look up the issues named only by keywords (one request
//! per page), and fetch one diff per remaining PR: from a local clone when it has the commits,
//! else through REST (`application/vnd.github.diff`), which GraphQL cannot serve.
//!
//! GitHub search serves at most 1,000 results per query: a window with more is cut in halves
//! until each half fits. Pages are journalled, so a killed mine restarts at the first page that
//! was not finished and writes no duplicate.

use std::collections::BTreeMap;
use std::path::PathBuf;

use swe_forge_core::{Base, ResolvedIssue};
use swe_forge_git::SourceRepo;

use crate::candidate::{Candidate, IssueTexts, LinkedIssue, MergeEvidence, MineSource, MiningNotes};
use crate::client::Client;
use crate::dates::Window;
use crate::error::MineError;
use crate::funnel::Decision;
use crate::graphql::{PullRequestNode, lookup_issues, search_page};
use crate::journal::Journal;
use crate::links::{IssueRef, closing_references};
use crate::mirror::{changed_lines, diff_commits};
use crate::split::{SplitPatch, is_test_path, split_patch};
use crate::{Limits, Reporter, new_record};

/// GitHub search's ceiling on the results of one query.
const SEARCH_CAP: u64 = 1000;

/// What to mine from GitHub.
#[derive(Debug, Clone)]
pub struct GithubOptions {
    /// `owner/name` of each repository.
    pub repos: Vec<String>,
    /// Window on the time PRs were closed (merged PRs are closed when merged).
    pub window: Window,
    /// PRs per listing page (GitHub allows 100).
    pub page_size: u32,
    /// Size limits.
    pub limits: Limits,
    /// Drop PRs that close no issue (default).
    pub require_issue: bool,
    /// Local clones (`<dir>/<owner>/<name>`, as for `validate --repos`) to take diffs from
    /// instead of the API, when they have the commits.
    pub repos_dir: Option<PathBuf>,
}

impl GithubOptions {
    /// Defaults for `repos`.
    pub fn new(repos: Vec<String>) -> GithubOptions {
        GithubOptions {
            repos,
            window: Window::ALL,
            page_size: 50,
            limits: Limits::default(),
            require_issue: true,
            repos_dir: None,
        }
    }
}

/// A PR that survived the listing-only checks.
struct Pending {
    pr: PullRequestNode,
    number: u64,
    refs: Vec<(IssueRef, bool, bool)>,
}

/// Mines every repository of `opts` into `journal`.
pub async fn mine_github(
    opts: &GithubOptions,
    client: &Client,
    journal: &mut Journal,
    reporter: &dyn Reporter,
) -> Result<(), MineError> {
    for repo in &opts.repos {
        let (owner, name) = repo
            .split_once('/')
            .filter(|(o, n)| !o.is_empty() && !n.is_empty() && !n.contains('/'))
            .ok_or_else(|| MineError::Invalid { what: "repository", message: format!("{repo:?} is not owner/name") })?;
        journal.note_repo(repo);
        let local = opts.repos_dir.as_ref().and_then(|d| SourceRepo::locate(d, owner, name).ok());
        let mut windows = vec![opts.window];
        while let Some(window) = windows.pop() {
            let key = window.search_range();
            if journal.is_complete(repo, &key) {
                continue;
            }
            let query = format!("repo:{repo} is:pr is:closed closed:{key} sort:created-asc");
            let mut cursor = journal.resume_cursor(repo, &key).map(str::to_owned);
            loop {
                let page = search_page(client, &query, opts.page_size, cursor.as_deref()).await?;
                if cursor.is_none()
                    && page.issue_count > SEARCH_CAP
                    && window.since > i64::MIN
                    && window.until < i64::MAX
                {
                    if let Some((a, b)) = halves(window) {
                        tracing::debug!(repo, window = %key, count = page.issue_count, "window over the search cap, halving");
                        windows.push(b);
                        windows.push(a);
                        break;
                    }
                } else if cursor.is_none() && page.issue_count > SEARCH_CAP {
                    tracing::warn!(
                        repo,
                        count = page.issue_count,
                        "more than 1,000 PRs in an open window: give --since and --until"
                    );
                }
                let prs: Vec<PullRequestNode> =
                    page.nodes.into_iter().flatten().filter(|p| p.number.is_some()).collect();
                reporter.listed(repo, prs.len());
                decide_page(opts, client, journal, reporter, repo, local.as_ref(), prs).await?;
                match (page.page_info.has_next_page, page.page_info.end_cursor) {
                    (true, Some(end)) => {
                        journal.page_done(repo, &key, &end)?;
                        cursor = Some(end);
                    }
                    _ => {
                        journal.window_complete(repo, &key)?;
                        break;
                    }
                }
            }
        }
    }
    Ok(())
}

fn halves(w: Window) -> Option<(Window, Window)> {
    if w.until - w.since < 2 {
        return None;
    }
    let mid = w.since + (w.until - w.since) / 2;
    Some((Window { since: w.since, until: mid }, Window { since: mid + 1, until: w.until }))
}

async fn decide_page(
    opts: &GithubOptions,
    client: &Client,
    journal: &mut Journal,
    reporter: &dyn Reporter,
    repo: &str,
    local: Option<&SourceRepo>,
    prs: Vec<PullRequestNode>,
) -> Result<(), MineError> {
    let mut pending: Vec<Pending> = Vec::new();
    for pr in prs {
        let number = pr.number.expect("filtered");
        if journal.is_decided(repo, number) {
            continue;
        }
        let refs = issue_refs(&pr, repo, number);
        let references_issue = !refs.is_empty();
        match triage(&pr, opts, references_issue) {
            Some(d) => {
                journal.decide(repo, number, d, references_issue, None)?;
                reporter.decided(repo, number, d);
            }
            None => pending.push(Pending { pr, number, refs }),
        }
    }
    // Issue texts that the listing did not carry (keyword references GitHub did not link).
    let missing: Vec<IssueRef> = pending
        .iter()
        .flat_map(|p| p.refs.iter().filter(|(_, github, _)| !github).map(|(r, _, _)| r.clone()))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let looked_up = if missing.is_empty() { BTreeMap::new() } else { lookup_issues(client, &missing).await? };
    for p in pending {
        let Pending { pr, number, refs } = p;
        let references_issue = !refs.is_empty();
        let issues = linked_issues(&pr, &refs, &looked_up, repo);
        if opts.require_issue && issues.is_empty() {
            journal.decide(repo, number, Decision::NoLinkedIssue, references_issue, None)?;
            reporter.decided(repo, number, Decision::NoLinkedIssue);
            continue;
        }
        let diff = match pr_diff(client, local, repo, &pr).await {
            Ok(d) => d,
            Err(MineError::Api { status: Some(status), message, .. }) => {
                tracing::warn!(repo, number, status, message, "diff unavailable");
                journal.decide(repo, number, Decision::DiffUnavailable, references_issue, None)?;
                reporter.decided(repo, number, Decision::DiffUnavailable);
                continue;
            }
            Err(e) => return Err(e),
        };
        let split = split_patch(&diff);
        let decision = split_decision(&opts.limits, &split);
        if decision != Decision::Kept {
            journal.decide(repo, number, decision, references_issue, None)?;
            reporter.decided(repo, number, decision);
            continue;
        }
        let candidate = github_candidate(repo, number, &pr, issues, split);
        journal.decide(repo, number, Decision::Kept, references_issue, Some(&candidate))?;
        reporter.decided(repo, number, Decision::Kept);
    }
    Ok(())
}

/// The issues of `refs` whose text is known: GitHub's links carry theirs, the others were looked
/// up (`looked_up`); each with how it was found.
fn linked_issues(
    pr: &PullRequestNode,
    refs: &[(IssueRef, bool, bool)],
    looked_up: &BTreeMap<IssueRef, (String, Option<String>)>,
    repo: &str,
) -> Vec<(LinkedIssue, ResolvedIssue)> {
    let mut issues = Vec::new();
    for (r, github, keyword) in refs {
        let text = if *github { closing_text(pr, r) } else { looked_up.get(r).cloned() };
        if let Some((title, body)) = text {
            issues.push((
                LinkedIssue {
                    repo: r.repo.clone(),
                    number: r.number,
                    cross_repo: r.is_cross_repo(repo),
                    github_link: *github,
                    keyword: *keyword,
                },
                ResolvedIssue { number: r.number, title, body },
            ));
        }
    }
    issues
}

/// What the split of a PR's diff decides: too large for `limits`, no tests, no fix, or kept.
fn split_decision(limits: &Limits, split: &SplitPatch) -> Decision {
    if !limits.allows(split.test_files.len() + split.fix_files.len(), changed_lines(&split.fix_patch)) {
        Decision::TooLarge
    } else if split.test_patch.is_empty() {
        Decision::NoTests
    } else if split.fix_patch.is_empty() {
        Decision::NoFix
    } else {
        Decision::Kept
    }
}

/// The candidate of PR `number` of `repo` (`org/name`), kept with `issues` and `split`.
fn github_candidate(
    repo: &str,
    number: u64,
    pr: &PullRequestNode,
    issues: Vec<(LinkedIssue, ResolvedIssue)>,
    split: SplitPatch,
) -> Candidate {
    let (org, name) = repo.split_once('/').expect("checked");
    let mut record = new_record(org, name, number, &pr.title, pr.body.clone());
    let label_owner = pr.base_repository.as_ref().map_or(org, |b| b.owner.login.as_str());
    record.base = Base {
        label: format!("{label_owner}:{}", pr.base_ref_name),
        ref_: pr.base_ref_name.clone(),
        sha: pr.base_ref_oid.clone(),
    };
    record.resolved_issues = issues.iter().map(|(_, r)| r.clone()).collect();
    record.fix_patch = split.fix_patch;
    record.test_patch = split.test_patch;
    crate::set_dates(&mut record, pr.merged_at.as_deref(), pr.created_at.as_deref());
    crate::flag_missing_text(&mut record);
    let mining = MiningNotes {
        source: MineSource::Github,
        merge_evidence: MergeEvidence::Github,
        head_sha: pr.head_ref_oid.clone(),
        merge_commit: pr.merge_commit.as_ref().map(|m| m.oid.clone()),
        merged_at: pr.merged_at.clone(),
        issue_texts: if issues.is_empty() { IssueTexts::NoIssue } else { IssueTexts::Resolved },
        issues: issues.into_iter().map(|(l, _)| l).collect(),
        test_files: split.test_files,
        fix_files: split.fix_files,
        flags: split.flags,
    };
    Candidate { record, mining }
}

/// Every issue the PR closes: GitHub's links first, then keyword references from the title, body
/// and commit messages; (reference, linked by GitHub, found by keyword). The PR itself is not an issue.
fn issue_refs(pr: &PullRequestNode, repo: &str, number: u64) -> Vec<(IssueRef, bool, bool)> {
    let mut out: Vec<(IssueRef, bool, bool)> = Vec::new();
    for i in pr.closing_issues_references.iter().flat_map(|c| c.items()) {
        let r = IssueRef {
            repo: i.repository.as_ref().map_or(repo.to_owned(), |x| x.name_with_owner.clone()),
            number: i.number,
        };
        if !out.iter().any(|(o, _, _)| o == &r) {
            out.push((r, true, false));
        }
    }
    let mut text = format!("{}\n{}\n", pr.title, pr.body.as_deref().unwrap_or_default());
    for c in pr.commits.iter().flat_map(|c| c.items()) {
        text.push_str(&c.commit.message);
        text.push('\n');
    }
    for r in closing_references(&text, repo) {
        if r.number == number && !r.is_cross_repo(repo) {
            continue;
        }
        match out.iter_mut().find(|(o, _, _)| o.repo.eq_ignore_ascii_case(&r.repo) && o.number == r.number) {
            Some(entry) => entry.2 = true,
            None => out.push((r, false, true)),
        }
    }
    out
}

fn closing_text(pr: &PullRequestNode, r: &IssueRef) -> Option<(String, Option<String>)> {
    pr.closing_issues_references
        .iter()
        .flat_map(|c| c.items())
        .find(|i| {
            i.number == r.number
                && i.repository.as_ref().is_none_or(|x| x.name_with_owner.eq_ignore_ascii_case(&r.repo))
        })
        .map(|i| (i.title.clone(), i.body.clone()))
}

/// Decisions the listing alone supports; `None` means the PR needs its diff.
fn triage(pr: &PullRequestNode, opts: &GithubOptions, references_issue: bool) -> Option<Decision> {
    if !pr.merged {
        return Some(Decision::NotMerged);
    }
    if pr.is_draft {
        return Some(Decision::Draft);
    }
    if pr.is_bot() {
        return Some(Decision::Bot);
    }
    let files: Vec<_> = pr.files.iter().flat_map(|f| f.items()).collect();
    let total = pr.files.as_ref().and_then(|f| f.total_count).unwrap_or(pr.changed_files);
    let complete = files.len() as u64 >= total.max(pr.changed_files);
    let fix_lines: u64 = files.iter().filter(|f| !is_test_path(&f.path)).map(|f| f.additions + f.deletions).sum();
    if !opts.limits.allows(pr.changed_files as usize, if complete { fix_lines as usize } else { 0 }) {
        return Some(Decision::TooLarge);
    }
    if opts.require_issue && !references_issue {
        return Some(Decision::NoLinkedIssue);
    }
    if complete {
        let tests = files.iter().filter(|f| is_test_path(&f.path)).count();
        if tests == 0 {
            return Some(Decision::NoTests);
        }
        // The split only ever moves files to the test side (fixtures next to tests), so a PR of
        // test paths only has no fix; the reverse is not certain and waits for the diff.
        if tests == files.len() {
            return Some(Decision::NoFix);
        }
    }
    None
}

/// The PR's diff (merge base of base and head -> head): from the local clone when it has both
/// commits, else one REST request.
async fn pr_diff(
    client: &Client,
    local: Option<&SourceRepo>,
    repo: &str,
    pr: &PullRequestNode,
) -> Result<String, MineError> {
    if let Some(l) = local
        && let Some(d) = local_diff(l, &pr.base_ref_oid, &pr.head_ref_oid)
    {
        return Ok(d);
    }
    let number = pr.number.expect("filtered");
    client
        .get(&format!("/repos/{repo}/pulls/{number}"), "application/vnd.github.diff", |b| {
            Ok::<_, std::convert::Infallible>(b.to_owned())
        })
        .await
}

fn local_diff(repo: &SourceRepo, base: &str, head: &str) -> Option<String> {
    let git = repo.git();
    let (b, h) = (git2::Oid::from_str(base).ok()?, git2::Oid::from_str(head).ok()?);
    git.find_commit(b).ok()?;
    git.find_commit(h).ok()?;
    let merge_base = git.merge_base(b, h).ok()?;
    diff_commits(git, merge_base, h).ok()
}
