//! Local mirror mode: mining a git repository that holds a GitHub repository's `refs/pull/N/head`
//! refs and base branch, without any API. Pull requests are found three ways:
//!
//! - `Merge pull request #N from ...` merge commits on the base branch's first-parent history:
//!   base = first parent, the PR's change = first parent -> merge commit;
//! - squash commits titled `... (#N)` on the same history: base = parent, change = parent -> commit;
//! - `refs/pull/N/head` refs not found above: base = merge base with the branch, change = base ->
//!   head. Whether such a PR was merged is unknown (`merge_evidence: pull_ref_only`); `merged_only`
//!   drops them.
//!
//! Issue texts are not in git: they come from saved GitHub exports (`issue_exports`, read by
//! [`IssueExport`]), which also give each PR its title and body. A linked issue no export holds gets
//! an empty title and the candidate says `issue_texts: missing`; a candidate with no text at all
//! raises `no_issue_text`. Reads the repository only; never writes to it, never touches the network.

use std::collections::{BTreeMap, HashMap, btree_map};
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use git2::{DiffFormat, DiffOptions, Oid, Repository};
use regex::Regex;
use swe_forge_git::SourceRepo;

use crate::candidate::{Candidate, IssueTexts, LinkedIssue, MergeEvidence, MineSource, MiningNotes};
use crate::dates::{Window, format_time};
use crate::error::MineError;
use crate::funnel::Decision;
use crate::issue_export::IssueExport;
use crate::journal::Journal;
use crate::links::{IssueRef, closing_references};
use crate::split::split_patch;
use crate::{Limits, Reporter, new_record};

/// What to mine from a mirror.
#[derive(Debug, Clone)]
pub struct MirrorOptions {
    /// The git repository (bare or not).
    pub path: PathBuf,
    /// `owner/name`; by default the last two components of `path` (`.../owner/name[.git]` or
    /// `.../owner__name[.git]`).
    pub repo: Option<String>,
    /// Base branch; by default the branch HEAD names, else `main` or `master`.
    pub branch: Option<String>,
    /// Merge time window (commit time of the merge or squash commit, or of the PR head).
    pub window: Window,
    /// Drop `refs/pull/N/head` refs that no merge or squash commit proves merged.
    pub merged_only: bool,
    /// Drop PRs whose texts reference no issue.
    pub require_issue: bool,
    /// Size limits.
    pub limits: Limits,
    /// Saved GitHub exports (`gh api` pages, REST items, GH Archive events) that hold the texts
    /// of the repository's issues and pull requests ([`IssueExport`]); none: no issue text.
    pub issue_exports: Vec<PathBuf>,
}

impl MirrorOptions {
    /// Defaults for the mirror at `path`.
    pub fn new(path: impl Into<PathBuf>) -> MirrorOptions {
        MirrorOptions {
            path: path.into(),
            repo: None,
            branch: None,
            window: Window::ALL,
            merged_only: false,
            require_issue: false,
            limits: Limits::default(),
            issue_exports: Vec::new(),
        }
    }
}

static MERGE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^Merge pull request #([0-9]+) from ").expect("valid regex"));
static SQUASH: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^(.*?)\s*\(#([0-9]+)\)\s*$").expect("valid regex"));

/// One PR found in the mirror.
struct Found {
    evidence: MergeEvidence,
    base: Oid,
    /// Tree state after the PR: the merge or squash commit, or the PR head.
    after: Oid,
    head: Option<Oid>,
    merge_commit: Option<Oid>,
    time: i64,
    title: String,
    body: Option<String>,
    /// Title, body and commit messages, searched for closing keywords.
    texts: String,
    base_unknown: bool,
}

/// Mines the mirror into `journal`; PRs already decided there are skipped.
pub fn mine_mirror(opts: &MirrorOptions, journal: &mut Journal, reporter: &dyn Reporter) -> Result<(), MineError> {
    let source = SourceRepo::open(&opts.path)?;
    let git = source.git();
    let err = |op: &'static str| move |source| MineError::Mirror { op, path: opts.path.clone(), source };
    let full_name = mirror_repo_name(opts)?;
    let (branch, tip) = base_branch(git, opts.branch.as_deref()).ok_or_else(|| MineError::Invalid {
        what: "branch",
        message: format!("no base branch in {} (give one with --branch)", opts.path.display()),
    })?;
    let export = read_export(opts, &full_name, reporter)?;
    journal.note_repo(&full_name);
    let mut warnings = Vec::new();
    let found = find_prs(git, tip, &mut warnings).map_err(err("find pull requests"))?;
    for warning in warnings {
        reporter.warned(&full_name, &warning);
    }
    reporter.listed(&full_name, found.len());
    let mirror = Mirror { git, full_name: &full_name, branch: &branch, export: export.as_ref() };
    for (number, mut f) in found {
        if !opts.window.contains(f.time) || journal.is_decided(&full_name, number) {
            continue;
        }
        mirror.take_texts(number, &mut f);
        let refs: Vec<_> = closing_references(&f.texts, &full_name)
            .into_iter()
            .filter(|r| r.number != number || r.is_cross_repo(&full_name))
            .filter(|r| !mirror.is_pull_request(r))
            .collect();
        let references_issue = !refs.is_empty();
        // A head already on the base branch was merged (fast-forward or rebase), but its base is lost.
        let decision = if f.base_unknown {
            Decision::BaseUnknown
        } else if f.evidence == MergeEvidence::PullRefOnly && opts.merged_only {
            Decision::NotMerged
        } else if opts.require_issue && !references_issue {
            Decision::NoLinkedIssue
        } else {
            let diff = match diff_commits(git, f.base, f.after) {
                Ok(d) => d,
                Err(e) => {
                    tracing::warn!(number, error = %e, "cannot diff pull request");
                    journal.decide(&full_name, number, Decision::DiffUnavailable, references_issue, None)?;
                    reporter.decided(&full_name, number, Decision::DiffUnavailable);
                    continue;
                }
            };
            let split = split_patch(&diff);
            if !opts.limits.allows(split.test_files.len() + split.fix_files.len(), changed_lines(&split.fix_patch)) {
                Decision::TooLarge
            } else if split.test_patch.is_empty() {
                Decision::NoTests
            } else if split.fix_patch.is_empty() {
                Decision::NoFix
            } else {
                let candidate = mirror.candidate(number, &f, &refs, split);
                journal.decide(&full_name, number, Decision::Kept, references_issue, Some(&candidate))?;
                reporter.decided(&full_name, number, Decision::Kept);
                continue;
            }
        };
        journal.decide(&full_name, number, decision, references_issue, None)?;
        reporter.decided(&full_name, number, decision);
    }
    Ok(())
}

/// The texts of the repository's issues and pull requests in `opts.issue_exports`, when it names
/// any; what was found is said through `reporter`.
fn read_export(opts: &MirrorOptions, repo: &str, reporter: &dyn Reporter) -> Result<Option<IssueExport>, MineError> {
    if opts.issue_exports.is_empty() {
        return Ok(None);
    }
    let export = IssueExport::read(&opts.issue_exports, repo)?;
    let (issues, pulls) = export.counts();
    reporter.noted(
        repo,
        &format!(
            "issues export: {issues} issues and {pulls} pull requests of {repo} (of {} items read)",
            export.items()
        ),
    );
    Ok(Some(export))
}

/// What every candidate of one mirror shares.
struct Mirror<'a> {
    git: &'a Repository,
    full_name: &'a str,
    branch: &'a str,
    export: Option<&'a IssueExport>,
}

impl Mirror<'_> {
    /// The PR's own title and body from the export, in place of the commit's (the texts searched
    /// for closing references get them too).
    fn take_texts(&self, number: u64, f: &mut Found) {
        let Some(t) = self.export.and_then(|e| e.get(number)).filter(|t| t.pull_request || !t.title.is_empty()) else {
            return;
        };
        f.texts = format!("{}\n{}\n{}", t.title, t.body.as_deref().unwrap_or_default(), f.texts);
        if !t.title.trim().is_empty() {
            f.title = t.title.clone();
        }
        f.body = t.body.clone().filter(|b| !b.trim().is_empty()).or(f.body.take());
    }

    /// Whether the export says `r`, a reference of this repository, names a pull request (which
    /// closes nothing on GitHub).
    fn is_pull_request(&self, r: &IssueRef) -> bool {
        !r.is_cross_repo(self.full_name) && self.export.and_then(|e| e.get(r.number)).is_some_and(|t| t.pull_request)
    }

    /// The candidate of PR `number`, found as `f`, closing `refs`, split as `split`: the issues'
    /// texts from the export where it has them, empty placeholders (`issue_texts: missing`) where not.
    fn candidate(&self, number: u64, f: &Found, refs: &[IssueRef], split: crate::split::SplitPatch) -> Candidate {
        let (org, name) = self.full_name.split_once('/').expect("checked owner/name");
        let issues: Vec<LinkedIssue> = refs
            .iter()
            .map(|r| LinkedIssue {
                repo: r.repo.clone(),
                number: r.number,
                cross_repo: r.is_cross_repo(self.full_name),
                github_link: false,
                keyword: true,
            })
            .collect();
        let text =
            |r: &IssueRef| self.export.filter(|_| !r.is_cross_repo(self.full_name)).and_then(|e| e.get(r.number));
        let mut record = new_record(org, name, number, &f.title, f.body.clone());
        record.base = swe_forge_core::Base {
            label: format!("{org}:{}", self.branch),
            ref_: self.branch.to_owned(),
            sha: f.base.to_string(),
        };
        record.resolved_issues = refs
            .iter()
            .map(|r| match text(r) {
                Some(t) => {
                    swe_forge_core::ResolvedIssue { number: r.number, title: t.title.clone(), body: t.body.clone() }
                }
                None => swe_forge_core::ResolvedIssue { number: r.number, title: String::new(), body: None },
            })
            .collect();
        record.fix_patch = split.fix_patch;
        record.test_patch = split.test_patch;
        // A mirror does not know when the PR was opened: its first commit's author date stands for
        // it (the PR was opened no earlier).
        let opened = first_authored(self.git, f.head.unwrap_or(f.after), f.base).map(format_time);
        crate::set_dates(&mut record, Some(&format_time(f.time)), opened.as_deref());
        crate::flag_missing_text(&mut record);
        let issue_texts = if issues.is_empty() {
            IssueTexts::NoIssue
        } else if refs.iter().all(|r| text(r).is_some()) {
            IssueTexts::Resolved
        } else {
            IssueTexts::Missing
        };
        let mining = MiningNotes {
            source: MineSource::Mirror,
            merge_evidence: f.evidence,
            head_sha: f.head.unwrap_or(f.after).to_string(),
            merge_commit: f.merge_commit.map(|o| o.to_string()),
            merged_at: Some(format_time(f.time)),
            issue_texts,
            issues,
            test_files: split.test_files,
            fix_files: split.fix_files,
            flags: split.flags,
        };
        Candidate { record, mining }
    }
}

/// The mirror's `owner/name`: given, or from its path; refused when no image can carry it.
fn mirror_repo_name(opts: &MirrorOptions) -> Result<String, MineError> {
    let full_name = match &opts.repo {
        Some(r) => r.clone(),
        None => repo_name_from_path(&opts.path)?,
    };
    let (org, name) = full_name.split_once('/').ok_or_else(|| MineError::Invalid {
        what: "repository",
        message: format!("{full_name:?} is not owner/name"),
    })?;
    // Its images are named after it: a name no image can carry is refused here, not after a
    // validation's retries as an `infrastructure` rejection ("invalid reference format").
    if let Some(problem) = swe_forge_core::image_name_problem(org, name) {
        let from = if opts.repo.is_some() { String::new() } else { format!(" (named after {})", opts.path.display()) };
        return Err(MineError::Invalid {
            what: "repository",
            message: format!(
                "{full_name}{from} cannot name a Docker image: {problem}; give its GitHub name with --github-repo OWNER/NAME"
            ),
        });
    }
    Ok(full_name)
}

/// `owner/name` from `.../owner/name(.git)` or `.../owner__name(.git)`, as the path is written:
/// a symbolic link (`mirrors/acme/widget` pointing into a cache) is named after the link, not
/// its target's folders; a path whose last two steps are no names (`..`) after its target.
pub fn repo_name_from_path(path: &Path) -> Result<String, MineError> {
    let written = std::path::absolute(path).map_err(MineError::io(path))?;
    let named =
        |p: &Path| p.file_name().is_some() && p.parent().and_then(Path::file_name).is_some() && !p.ends_with("..");
    let abs = if named(&written) { written } else { path.canonicalize().map_err(MineError::io(path))? };
    let strip = |s: &str| s.strip_suffix(".git").unwrap_or(s).to_owned();
    let name = abs.file_name().map(|n| strip(&n.to_string_lossy()));
    if let Some((o, r)) = name.as_deref().and_then(|n| n.split_once("__")) {
        return Ok(format!("{o}/{r}"));
    }
    let owner = abs.parent().and_then(Path::file_name).map(|n| n.to_string_lossy().into_owned());
    match (owner, name) {
        (Some(o), Some(n)) if !o.is_empty() && !n.is_empty() => Ok(format!("{o}/{n}")),
        _ => Err(MineError::Invalid {
            what: "repository",
            message: format!("cannot tell owner/name from {} (give --github-repo OWNER/NAME)", path.display()),
        }),
    }
}

fn base_branch(git: &Repository, wanted: Option<&str>) -> Option<(String, Oid)> {
    let tip = |b: &str| {
        [format!("refs/heads/{b}"), format!("refs/remotes/origin/{b}")]
            .iter()
            .find_map(|r| git.refname_to_id(r).ok())
            .map(|oid| (b.to_owned(), oid))
    };
    if let Some(b) = wanted {
        return tip(b);
    }
    let head = git.find_reference("HEAD").ok().and_then(|h| h.symbolic_target().ok().flatten().map(str::to_owned));
    head.and_then(|h| h.strip_prefix("refs/heads/").and_then(tip)).or_else(|| tip("main")).or_else(|| tip("master"))
}

/// The earliest author date (Unix seconds) of the commits on `head` that `base` lacks; the
/// head's own when there are none or the walk fails.
fn first_authored(git: &Repository, head: Oid, base: Oid) -> Option<i64> {
    let own = || git.find_commit(head).ok().map(|c| c.author().when().seconds());
    let walked = (|| -> Result<Option<i64>, git2::Error> {
        let mut walk = git.revwalk()?;
        walk.push(head)?;
        walk.hide(base)?;
        let mut first: Option<i64> = None;
        for oid in walk {
            let t = git.find_commit(oid?)?.author().when().seconds();
            first = Some(first.map_or(t, |f| f.min(t)));
        }
        Ok(first)
    })();
    walked.ok().flatten().or_else(own)
}

/// The mirror's `refs/pull/<N>/head` refs by pull request number. A ref whose number is not
/// decimal digits (`refs/pull/abc/head`) is skipped, and of two refs of one number
/// (`refs/pull/0012/head` and `refs/pull/12/head`) the one GitHub writes is kept, the other
/// skipped; each with a line in `warnings`.
fn pull_refs<'r>(
    git: &'r Repository,
    warnings: &mut Vec<String>,
) -> Result<BTreeMap<u64, git2::Reference<'r>>, git2::Error> {
    let mut refs: BTreeMap<u64, (String, git2::Reference<'r>)> = BTreeMap::new();
    for r in git.references_glob("refs/pull/*/head")? {
        let r = r?;
        let name = String::from_utf8_lossy(r.name_bytes()).into_owned();
        let number = name.strip_prefix("refs/pull/").and_then(|n| n.strip_suffix("/head"));
        let Some(n) =
            number.filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())).and_then(|n| n.parse().ok())
        else {
            warnings.push(format!("{name}: not a pull request number, skipped"));
            continue;
        };
        let canonical = format!("refs/pull/{n}/head");
        match refs.remove(&n) {
            None => {
                refs.insert(n, (name, r));
            }
            Some((first, kept)) => {
                let (keep, skip) = if name == canonical { ((name, r), first) } else { ((first, kept), name) };
                warnings.push(format!(
                    "{skip} and {} both name pull request {n}: {} is mined, {skip} skipped",
                    keep.0, keep.0
                ));
                refs.insert(n, keep);
            }
        }
    }
    Ok(refs.into_iter().map(|(n, (_, r))| (n, r)).collect())
}

/// A pull request merged by the merge commit `c` ("Merge pull request #N from ...").
fn merged_by(git: &Repository, c: &git2::Commit<'_>, summary: &str, rest: &str) -> Result<Found, git2::Error> {
    let (base, head) = (c.parent_id(0)?, c.parent_id(1)?);
    let (title, body) = match rest.split_once('\n') {
        Some((t, b)) => (t.trim().to_owned(), Some(b.trim().to_owned()).filter(|b| !b.is_empty())),
        None => (rest.to_owned(), None),
    };
    let texts = format!("{title}\n{}\n{}", body.as_deref().unwrap_or_default(), messages(git, head, base)?);
    Ok(Found {
        evidence: MergeEvidence::MergeCommit,
        base,
        after: oid_of(c),
        head: Some(head),
        merge_commit: Some(oid_of(c)),
        time: c.time().seconds(),
        title: if title.is_empty() { summary.to_owned() } else { title },
        body,
        texts,
        base_unknown: false,
    })
}

/// The merge commit's summary and the rest of its message.
fn summary_and_rest(c: &git2::Commit<'_>) -> (String, String) {
    let message = String::from_utf8_lossy(c.message_bytes()).into_owned();
    let summary = message.lines().next().unwrap_or_default().to_owned();
    let rest = message.split_once('\n').map(|x| x.1.trim().to_owned()).unwrap_or_default();
    (summary, rest)
}

/// Pull requests merged off the branch's first-parent line: into a development branch that
/// reaches the branch through a merge of its own (`develop` into `master`) or a fast-forward.
/// Their "Merge pull request #N" commits are reachable from `tip` only through a second parent;
/// each number not found on the first-parent line is added to `found`. Returns every merge
/// commit reachable from `tip` by its second parent, for heads merged by a merge commit of
/// another wording.
fn side_merges(git: &Repository, tip: Oid, found: &mut BTreeMap<u64, Found>) -> Result<HashMap<Oid, Oid>, git2::Error> {
    let mut by_head = HashMap::new();
    let mut walk = git.revwalk()?;
    walk.push(tip)?;
    for oid in walk {
        let c = git.find_commit(oid?)?;
        if c.parent_count() < 2 {
            continue;
        }
        by_head.entry(c.parent_id(1)?).or_insert(c.id());
        let (summary, rest) = summary_and_rest(&c);
        let Some(n) = MERGE.captures(&summary).and_then(|m| m[1].parse::<u64>().ok()) else { continue };
        if let btree_map::Entry::Vacant(e) = found.entry(n) {
            e.insert(merged_by(git, &c, &summary, &rest)?);
        }
    }
    Ok(by_head)
}

fn find_prs(git: &Repository, tip: Oid, warnings: &mut Vec<String>) -> Result<BTreeMap<u64, Found>, git2::Error> {
    let mut found: BTreeMap<u64, Found> = BTreeMap::new();
    let mut walk = git.revwalk()?;
    walk.push(tip)?;
    walk.simplify_first_parent()?;
    for oid in walk {
        let c = git.find_commit(oid?)?;
        let (summary, rest) = summary_and_rest(&c);
        if c.parent_count() >= 2 {
            let Some(n) = MERGE.captures(&summary).and_then(|m| m[1].parse::<u64>().ok()) else { continue };
            if let btree_map::Entry::Vacant(e) = found.entry(n) {
                e.insert(merged_by(git, &c, &summary, &rest)?);
            }
        } else if c.parent_count() == 1
            && let Some(m) = SQUASH.captures(&summary)
            && let Ok(n) = m[2].parse::<u64>()
        {
            let body = Some(rest.clone()).filter(|b| !b.is_empty());
            found.entry(n).or_insert(Found {
                evidence: MergeEvidence::SquashCommit,
                base: c.parent_id(0)?,
                after: oid_of(&c),
                head: None,
                merge_commit: Some(oid_of(&c)),
                time: c.time().seconds(),
                title: m[1].to_owned(),
                body,
                texts: String::from_utf8_lossy(c.message_bytes()).into_owned(),
                base_unknown: false,
            });
        }
    }
    let by_head = side_merges(git, tip, &mut found)?;
    for (n, r) in pull_refs(git, warnings)? {
        // A ref that names no commit (a blob, a tree: a broken or hand-made mirror) makes no
        // candidate; it does not stop the repository's other pull requests.
        let head = match r.peel_to_commit() {
            Ok(head) => head,
            Err(e) => {
                tracing::warn!(number = n, error = %e.message(), "refs/pull/{n}/head names no commit: skipped");
                continue;
            }
        };
        let head_id = oid_of(&head);
        if let Some(f) = found.get_mut(&n) {
            f.head.get_or_insert(head_id);
            continue;
        }
        let merged_in = head_id == tip || git.graph_descendant_of(tip, head_id)?;
        if let Some(merge) = by_head.get(&head_id).filter(|_| merged_in) {
            let c = git.find_commit(*merge)?;
            let (summary, rest) = summary_and_rest(&c);
            found.insert(n, merged_by(git, &c, &summary, &rest)?);
            continue;
        }
        // A head with no history in common with the branch (a PR to another branch that was
        // rewritten, an orphan branch) has no base either.
        let merge_base = if merged_in { None } else { git.merge_base(tip, head_id).ok() };
        let base_unknown = merged_in || merge_base.is_none();
        let base = merge_base.unwrap_or(head_id);
        let message = String::from_utf8_lossy(head.message_bytes()).into_owned();
        let title = message.lines().next().unwrap_or_default().to_owned();
        let body = message.split_once('\n').map(|x| x.1.trim().to_owned()).filter(|b| !b.is_empty());
        found.insert(
            n,
            Found {
                evidence: MergeEvidence::PullRefOnly,
                base,
                after: head_id,
                head: Some(head_id),
                merge_commit: None,
                time: head.time().seconds(),
                title,
                body,
                texts: if base_unknown { String::new() } else { messages(git, head_id, base)? },
                base_unknown,
            },
        );
    }
    Ok(found)
}

fn oid_of(c: &git2::Commit<'_>) -> Oid {
    c.id()
}

/// Messages of the commits reachable from `head` and not from `base` (at most 250).
fn messages(git: &Repository, head: Oid, base: Oid) -> Result<String, git2::Error> {
    let mut walk = git.revwalk()?;
    walk.push(head)?;
    walk.hide(base)?;
    let mut out = String::new();
    for oid in walk.take(250) {
        let c = git.find_commit(oid?)?;
        out.push_str(&String::from_utf8_lossy(c.message_bytes()));
        out.push('\n');
    }
    Ok(out)
}

/// The unified diff (`git diff` format, binary files as `GIT binary patch`) between two commits.
pub fn diff_commits(git: &Repository, old: Oid, new: Oid) -> Result<String, git2::Error> {
    let old_tree = git.find_commit(old)?.tree()?;
    let new_tree = git.find_commit(new)?.tree()?;
    let mut opts = DiffOptions::new();
    opts.show_binary(true);
    let diff = git.diff_tree_to_tree(Some(&old_tree), Some(&new_tree), Some(&mut opts))?;
    let mut buf: Vec<u8> = Vec::new();
    diff.print(DiffFormat::Patch, |_, _, line| {
        if matches!(line.origin(), '+' | '-' | ' ') {
            buf.push(line.origin() as u8);
        }
        buf.extend_from_slice(line.content());
        true
    })?;
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

/// Added plus removed lines of a patch (core's one rule: lines inside hunks).
pub(crate) fn changed_lines(patch: &str) -> usize {
    swe_forge_core::PatchShape::of(patch).changed_lines() as usize
}
