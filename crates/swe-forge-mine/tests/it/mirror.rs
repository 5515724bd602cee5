//! Local mirror mode on the project's fixture repositories and on a repository with merge and
//! squash commits.

use std::path::Path;

use swe_forge_mine::{Decision, IssueTexts, MergeEvidence, MirrorOptions, Quiet, mine_mirror};

use crate::support::{git, make_fixture_repos, open_journal, read_candidates, root, write};

#[test]
fn fixture_pr_1_is_mined_exactly_as_the_recorded_candidate() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = make_fixture_repos(tmp.path());
    let out = tmp.path().join("mined.jsonl");
    let mut journal = open_journal(&out);
    for name in ["gostack", "ringq"] {
        mine_mirror(&MirrorOptions::new(repos.join("forge-fixtures").join(name)), &mut journal, &Quiet).unwrap();
    }
    let mined = read_candidates(&out);
    let recorded =
        swe_forge_core::read_jsonl(std::fs::read(root().join("data/fixtures/instances.jsonl")).unwrap().as_slice())
            .unwrap();
    let ids: Vec<&str> = mined.iter().map(|c| c.record.instance_id.as_str()).collect();
    // PR 3 has no ref (its test patch does not apply), PR 5's ref only holds the tests.
    assert_eq!(
        ids,
        [
            "forge-fixtures__gostack-1",
            "forge-fixtures__gostack-2",
            "forge-fixtures__gostack-4",
            "forge-fixtures__gostack-6",
            "forge-fixtures__ringq-7"
        ]
    );
    for c in &mined {
        let want = recorded.iter().find(|r| r.instance_id == c.record.instance_id).unwrap();
        assert_eq!(c.record.base, want.base, "{}", want.instance_id);
        if c.record.repo == "gostack" {
            assert_eq!(c.record.fix_patch, want.fix_patch, "{}", want.instance_id);
            assert_eq!(c.record.test_patch, want.test_patch, "{}", want.instance_id);
        } else {
            // ringq-7's recorded test patch was written by hand with `diff --git a/b/tests/capacity.rs
            // b/tests/capacity.rs` for a new file; git reads the `+++` line, so only that header differs.
            assert_eq!(headers_normalized(&c.record.fix_patch), headers_normalized(&want.fix_patch));
            assert_eq!(headers_normalized(&c.record.test_patch), headers_normalized(&want.test_patch));
        }
        assert_eq!(c.mining.merge_evidence, MergeEvidence::PullRefOnly);
        // A mirror's PR was opened no earlier than its first commit: that commit's author date is
        // its `created_at`; `merged_at` is the head's date, as `mining.merged_at`.
        let meta = c.record.swe_forge.as_ref().expect("dated");
        let repo = repos.join("forge-fixtures").join(&c.record.repo);
        let range = format!("{}..{}", c.record.base.sha, c.mining.head_sha);
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(&repo)
            .args(["log", "--format=%at", &range])
            .output()
            .unwrap();
        let first = String::from_utf8(out.stdout).unwrap().lines().map(|l| l.parse::<i64>().unwrap()).min().unwrap();
        assert_eq!(meta.created_at.as_ref().map(|t| t.as_str().to_owned()), Some(swe_forge_core::rfc3339_utc(first)));
        assert_eq!(meta.merged_at.as_ref().map(|t| t.as_str()), c.mining.merged_at.as_deref());
        assert!(meta.created_at <= meta.merged_at, "{}", want.instance_id);
        // "Fix #1" in the fixture's commit names the PR itself, not an issue.
        assert_eq!(c.mining.issue_texts, IssueTexts::NoIssue);
        assert!(c.record.resolved_issues.is_empty());
    }
    let funnels = journal.funnels();
    let gostack = &funnels[0];
    assert_eq!((gostack.seen, gostack.merged, gostack.with_tests, gostack.kept), (5, 5, 4, 4));
    assert_eq!(gostack.dropped.get("no_fix"), Some(&1));
}

fn headers_normalized(patch: &str) -> String {
    patch.lines().filter(|l| !l.starts_with("diff --git ")).collect::<Vec<_>>().join("\n")
}

/// A repository whose main branch has a merge commit for PR 11, a squash commit for PR 12, a
/// rebase-merged PR 14 (its head is on main), an unmerged PR 13 reachable only through its ref and
/// a PR 15 whose head shares no history with main.
fn merge_and_squash_repo(dir: &Path) {
    git(dir, &["init", "-q", "-b", "main"]);
    write(dir, "lib.go", "package lib\n\nfunc A() int { return 1 }\n");
    write(dir, "lib_test.go", "package lib\n");
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "Initial commit"]);
    // PR 11 on a branch, merged with a merge commit.
    git(dir, &["checkout", "-q", "-b", "feature"]);
    write(dir, "lib.go", "package lib\n\nfunc A() int { return 2 }\n");
    git(dir, &["commit", "-q", "-am", "Return 2 from A\n\nFixes #100"]);
    write(dir, "lib_test.go", "package lib\n\n// TestA checks A.\n");
    git(dir, &["commit", "-q", "-am", "Test A"]);
    git(dir, &["update-ref", "refs/pull/11/head", "HEAD"]);
    git(dir, &["checkout", "-q", "main"]);
    // main moves on before the merge
    write(dir, "README.md", "docs\n");
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "Add a readme"]);
    git(
        dir,
        &["merge", "-q", "--no-ff", "feature", "-m", "Merge pull request #11 from dev/feature\n\nReturn 2 from A"],
    );
    // PR 12 squashed onto main, closing two issues (one in another repository).
    write(dir, "lib.go", "package lib\n\nfunc A() int { return 3 }\n");
    write(dir, "testdata/a.txt", "3\n");
    write(dir, "lib_test.go", "package lib\n\n// TestA checks A returns 3.\n");
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "Fix thing (#12)\n\n* fix\n\nFixes: #101\nCloses other/lib#5"]);
    // PR 13: pushed, never merged.
    let main = git(dir, &["rev-parse", "HEAD"]);
    git(dir, &["checkout", "-q", "--detach"]);
    write(dir, "lib.go", "package lib\n\nfunc A() int { return 4 }\n");
    write(dir, "lib_test.go", "package lib\n\n// TestA checks 4.\n");
    git(dir, &["commit", "-q", "-am", "Try 4"]);
    git(dir, &["update-ref", "refs/pull/13/head", "HEAD"]);
    git(dir, &["checkout", "-q", "main"]);
    assert_eq!(git(dir, &["rev-parse", "HEAD"]), main);
    // PR 14: rebase-merged (fast-forward), so its head is on main and its base is unknown.
    write(dir, "lib.go", "package lib\n\nfunc A() int { return 5 }\n");
    write(dir, "lib_test.go", "package lib\n\n// TestA checks 5.\n");
    git(dir, &["commit", "-q", "-am", "Return 5"]);
    git(dir, &["update-ref", "refs/pull/14/head", "HEAD"]);
    // PR 15: a head with no history in common with main (as real mirrors have).
    git(dir, &["checkout", "-q", "--orphan", "elsewhere"]);
    git(dir, &["commit", "-q", "-m", "Unrelated root"]);
    git(dir, &["update-ref", "refs/pull/15/head", "HEAD"]);
    git(dir, &["checkout", "-q", "-f", "main"]);
    // PRs 16 and 17: refs that name a blob and a tree, not a commit (a broken mirror); they make no
    // candidate and stop nothing.
    let blob = git(dir, &["rev-parse", "HEAD:lib.go"]);
    git(dir, &["update-ref", "refs/pull/16/head", &blob]);
    let tree = git(dir, &["rev-parse", "HEAD^{tree}"]);
    git(dir, &["update-ref", "refs/pull/17/head", &tree]);
}

#[test]
fn merge_commits_squash_commits_and_pull_refs_are_found() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("acme").join("lib");
    std::fs::create_dir_all(&dir).unwrap();
    merge_and_squash_repo(&dir);
    let out = tmp.path().join("out.jsonl");
    let mut journal = open_journal(&out);
    mine_mirror(&MirrorOptions::new(&dir), &mut journal, &Quiet).unwrap();
    let mined = read_candidates(&out);
    let by_number = |n: u64| mined.iter().find(|c| c.record.number == n).unwrap_or_else(|| panic!("PR {n} not mined"));

    let merged = by_number(11);
    assert_eq!(merged.mining.merge_evidence, MergeEvidence::MergeCommit);
    assert_eq!(merged.record.title, "Return 2 from A");
    assert_eq!(merged.record.base.sha, git(&dir, &["rev-parse", "HEAD~2^1"]), "base = first parent of the merge");
    assert_eq!(merged.record.base.label, "acme:main");
    assert_eq!(merged.mining.head_sha, git(&dir, &["rev-parse", "refs/pull/11/head"]));
    assert_eq!(merged.mining.fix_files, ["lib.go"]);
    assert_eq!(merged.mining.test_files, ["lib_test.go"]);
    assert_eq!(merged.record.resolved_issues.iter().map(|i| i.number).collect::<Vec<_>>(), [100]);
    assert_eq!(merged.mining.issue_texts, IssueTexts::Missing);

    let squashed = by_number(12);
    assert_eq!(squashed.mining.merge_evidence, MergeEvidence::SquashCommit);
    assert_eq!(squashed.record.title, "Fix thing");
    assert_eq!(squashed.record.base.sha, git(&dir, &["rev-parse", "HEAD~2"]));
    assert_eq!(squashed.mining.merge_commit.as_deref(), Some(git(&dir, &["rev-parse", "HEAD~1"]).as_str()));
    assert_eq!(squashed.mining.test_files, ["lib_test.go", "testdata/a.txt"]);
    let issues: Vec<(String, u64, bool)> =
        squashed.mining.issues.iter().map(|i| (i.repo.clone(), i.number, i.cross_repo)).collect();
    assert_eq!(issues, [("acme/lib".into(), 101, false), ("other/lib".into(), 5, true)]);

    let unmerged = by_number(13);
    assert_eq!(unmerged.mining.merge_evidence, MergeEvidence::PullRefOnly);
    assert_eq!(unmerged.record.base.sha, git(&dir, &["rev-parse", "HEAD~1"]));

    assert!(mined.iter().all(|c| c.record.number < 14));
    let f = &journal.funnels()[0];
    assert_eq!(f.repo, "acme/lib");
    assert_eq!((f.seen, f.kept), (5, 3));
    assert_eq!(f.dropped.get("base_unknown"), Some(&2));

    // The patches apply to their base commits.
    let repo = swe_forge_git::SourceRepo::open(&dir).unwrap();
    for c in &mined {
        let applied =
            swe_forge_git::apply_patches(&repo, &c.record.base.sha, &[&c.record.test_patch, &c.record.fix_patch]);
        assert!(applied.unwrap().is_ok(), "PR {}", c.record.number);
    }
}

/// A repository of the git-flow kind: pull requests merge into `develop`, which reaches `main`
/// through merges of its own (`Merge branch 'develop'`). PR 21 is merged by GitHub's "Merge pull
/// request" commit, PR 22 by a merge worded otherwise; both are off `main`'s first-parent line.
/// Both are mined as merged, each against the `develop` commit it was merged into (before, both
/// were dropped `base_unknown`: their heads are in `main`, their merges not on its first parents).
#[test]
fn pull_requests_merged_into_a_branch_that_main_merges_are_found() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("acme").join("flow");
    std::fs::create_dir_all(&dir).unwrap();
    let d = dir.as_path();
    git(d, &["init", "-q", "-b", "main"]);
    write(d, "lib.go", "package lib\n\nfunc A() int { return 1 }\n");
    write(d, "lib_test.go", "package lib\n");
    git(d, &["add", "-A"]);
    git(d, &["commit", "-q", "-m", "Initial commit"]);
    git(d, &["checkout", "-q", "-b", "develop"]);
    git(d, &["checkout", "-q", "-b", "pr21"]);
    write(d, "lib.go", "package lib\n\nfunc A() int { return 2 }\n");
    write(d, "lib_test.go", "package lib\n\n// TestA checks 2.\n");
    git(d, &["commit", "-q", "-am", "Return 2\n\nFixes #200"]);
    git(d, &["update-ref", "refs/pull/21/head", "HEAD"]);
    git(d, &["checkout", "-q", "develop"]);
    write(d, "README.md", "docs\n");
    git(d, &["add", "-A"]);
    git(d, &["commit", "-q", "-m", "Docs on develop"]);
    let base21 = git(d, &["rev-parse", "HEAD"]);
    git(d, &["merge", "-q", "--no-ff", "pr21", "-m", "Merge pull request #21 from dev/pr21\n\nReturn 2"]);
    git(d, &["checkout", "-q", "-b", "pr22"]);
    write(d, "lib.go", "package lib\n\nfunc A() int { return 3 }\n");
    write(d, "lib_test.go", "package lib\n\n// TestA checks 3.\n");
    git(d, &["commit", "-q", "-am", "Return 3"]);
    git(d, &["update-ref", "refs/pull/22/head", "HEAD"]);
    git(d, &["checkout", "-q", "develop"]);
    let base22 = git(d, &["rev-parse", "HEAD"]);
    git(d, &["merge", "-q", "--no-ff", "pr22", "-m", "Merge branch 'pr22' into develop"]);
    git(d, &["checkout", "-q", "main"]);
    write(d, "CHANGES", "main moves on\n");
    git(d, &["add", "-A"]);
    git(d, &["commit", "-q", "-m", "Changes on main"]);
    git(d, &["merge", "-q", "--no-ff", "develop", "-m", "Merge branch 'develop'"]);

    let out = tmp.path().join("out.jsonl");
    let mut journal = open_journal(&out);
    let mut opts = MirrorOptions::new(&dir);
    opts.merged_only = true;
    mine_mirror(&opts, &mut journal, &Quiet).unwrap();
    let mined = read_candidates(&out);
    let numbers: Vec<u64> = mined.iter().map(|c| c.record.number).collect();
    assert_eq!(numbers, [21, 22], "{:?}", journal.funnels());
    for (c, base) in mined.iter().zip([&base21, &base22]) {
        assert_eq!(c.mining.merge_evidence, MergeEvidence::MergeCommit, "PR {}", c.record.number);
        assert_eq!(&c.record.base.sha, base, "PR {}: the develop commit it was merged into", c.record.number);
        assert_eq!(c.mining.fix_files, ["lib.go"]);
        assert_eq!(c.mining.test_files, ["lib_test.go"]);
    }
    assert_eq!(mined[0].record.resolved_issues.iter().map(|i| i.number).collect::<Vec<_>>(), [200]);
    assert_eq!(mined[0].record.title, "Return 2");
    assert_eq!(journal.funnels()[0].dropped.get("base_unknown"), None);
}

#[test]
fn merged_only_required_issues_and_the_window_filter() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("acme__lib.git");
    std::fs::create_dir_all(&dir).unwrap();
    merge_and_squash_repo(&dir);
    let out = tmp.path().join("out.jsonl");
    let mut journal = open_journal(&out);
    let mut opts = MirrorOptions::new(&dir);
    opts.merged_only = true;
    opts.require_issue = true;
    mine_mirror(&opts, &mut journal, &Quiet).unwrap();
    let numbers: Vec<u64> = read_candidates(&out).iter().map(|c| c.record.number).collect();
    assert_eq!(numbers, [11, 12]);
    let f = &journal.funnels()[0];
    assert_eq!(f.repo, "acme/lib");
    assert_eq!(f.dropped.get(Decision::NotMerged.as_str()), Some(&1));

    let out2 = tmp.path().join("window.jsonl");
    let mut journal = open_journal(&out2);
    let mut opts = MirrorOptions::new(&dir);
    opts.window = swe_forge_mine::Window::parse(Some("2024-03-02"), None).unwrap();
    mine_mirror(&opts, &mut journal, &Quiet).unwrap();
    assert!(read_candidates(&out2).is_empty());
    assert_eq!(journal.funnels()[0].seen, 0);
}

#[test]
fn a_second_run_resumes_and_writes_no_duplicate() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = make_fixture_repos(tmp.path());
    let out = tmp.path().join("mined.jsonl");
    let opts = MirrorOptions::new(repos.join("forge-fixtures").join("gostack"));
    mine_mirror(&opts, &mut open_journal(&out), &Quiet).unwrap();
    let first = std::fs::read_to_string(&out).unwrap();
    // A torn last line, as a killed writer leaves it, is cut and the PR mined again.
    let progress = swe_forge_mine::progress_path(&out);
    let journal_text = std::fs::read_to_string(&progress).unwrap();
    let lines: Vec<&str> = journal_text.lines().collect();
    std::fs::write(&progress, format!("{}\n{}", lines[..lines.len() - 1].join("\n"), &lines[lines.len() - 1][..10]))
        .unwrap();
    let mut journal = open_journal(&out);
    mine_mirror(&opts, &mut journal, &Quiet).unwrap();
    assert_eq!(std::fs::read_to_string(&out).unwrap(), first);
    assert_eq!(journal.funnels()[0].seen, 5);
}

const RING: &str = "//! A ring.\n\npub struct Ring {\n    items: Vec<u32>,\n}\n\nimpl Ring {\n    pub fn new() -> Ring {\n        Ring { items: Vec::new() }\n    }\n\n    pub fn push(&mut self, x: u32) {\n        self.items.push(x);\n    }\n\n    pub fn len(&self) -> usize {\n        self.items.len()\n    }\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn starts_empty() {\n        assert_eq!(Ring::new().len(), 0);\n    }\n}\n";

const QUEUE: &str = "//! A queue.\n\npub fn depth() -> usize {\n    0\n}\n";

/// A Rust crate whose pull request 21 fixes `Ring::push` and adds a test to the `#[cfg(test)]`
/// module of the same file, and adds a test module to another file the fix leaves alone.
fn inline_tests_repo(dir: &Path) {
    git(dir, &["init", "-q", "-b", "main"]);
    write(dir, "Cargo.toml", "[package]\nname = \"ring\"\nversion = \"0.1.0\"\n");
    write(dir, "src/ring.rs", RING);
    write(dir, "src/queue.rs", QUEUE);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "Initial commit"]);
    git(dir, &["checkout", "-q", "-b", "fix"]);
    let fixed = RING
        .replace("        self.items.push(x);\n", "        if !self.items.contains(&x) {\n            self.items.push(x);\n        }\n")
        .replace(
            "        assert_eq!(Ring::new().len(), 0);\n    }\n",
            "        assert_eq!(Ring::new().len(), 0);\n    }\n\n    #[test]\n    fn a_value_pushed_twice_is_held_once() {\n        let mut r = Ring::new();\n        r.push(1);\n        r.push(1);\n        assert_eq!(r.len(), 1);\n    }\n",
        );
    write(dir, "src/ring.rs", &fixed);
    write(
        dir,
        "src/queue.rs",
        &format!(
            "{QUEUE}\n#[cfg(test)]\nmod tests {{\n    #[test]\n    fn is_empty() {{\n        assert_eq!(super::depth(), 0);\n    }}\n}}\n"
        ),
    );
    git(dir, &["commit", "-q", "-am", "Push holds a value once\n\nFixes #20"]);
    git(dir, &["update-ref", "refs/pull/21/head", "HEAD"]);
    git(dir, &["checkout", "-q", "main"]);
    git(dir, &["merge", "-q", "--no-ff", "fix", "-m", "Merge pull request #21 from dev/fix"]);
}

#[test]
fn tests_inside_rust_source_files_go_to_the_test_patch_by_hunk() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("acme").join("ring");
    std::fs::create_dir_all(&dir).unwrap();
    inline_tests_repo(&dir);
    let out = tmp.path().join("out.jsonl");
    let mut journal = open_journal(&out);
    mine_mirror(&MirrorOptions::new(&dir), &mut journal, &Quiet).unwrap();
    let mined = read_candidates(&out);
    assert_eq!(mined.len(), 1, "without the split the pull request has no test patch");
    let c = &mined[0];
    assert_eq!(c.mining.test_files, ["src/queue.rs", "src/ring.rs"]);
    assert_eq!(c.mining.fix_files, ["src/ring.rs"]);
    assert!(c.record.test_patch.contains("+    fn a_value_pushed_twice_is_held_once() {"), "{}", c.record.test_patch);
    assert!(!c.record.test_patch.contains("contains(&x)"), "{}", c.record.test_patch);
    assert!(c.record.fix_patch.contains("contains(&x)") && !c.record.fix_patch.contains("#[test]"));
    // Each half applies alone to the base, and both in either order give the pull request's tree.
    let head = git(&dir, &["rev-parse", "refs/pull/21/head^{tree}"]);
    let (test, fix) = (c.record.test_patch.as_str(), c.record.fix_patch.as_str());
    for patches in [vec![test], vec![fix], vec![test, fix], vec![fix, test]] {
        git(&dir, &["checkout", "-q", "-f", &c.record.base.sha]);
        for (i, p) in patches.iter().enumerate() {
            let file = tmp.path().join(format!("{i}.patch"));
            std::fs::write(&file, p).unwrap();
            git(&dir, &["apply", file.to_str().unwrap()]);
        }
        if patches.len() == 2 {
            git(&dir, &["add", "-A"]);
            assert_eq!(git(&dir, &["write-tree"]), head);
        }
    }
}

/// Warnings a mine gives, kept to be read.
#[derive(Default)]
struct Warnings(std::sync::Mutex<Vec<String>>);

impl swe_forge_mine::Reporter for Warnings {
    fn listed(&self, _repo: &str, _count: usize) {}
    fn decided(&self, _repo: &str, _number: u64, _decision: Decision) {}
    fn warned(&self, repo: &str, message: &str) {
        self.0.lock().unwrap().push(format!("{repo}: {message}"));
    }
}

/// `refs/pull/0013/head` and `refs/pull/13/head` both name PR 13: the one GitHub writes is mined
/// and the collision reported (before, whichever came first was mined, silently); a ref whose
/// number is no number is skipped with a warning (before, silently).
#[test]
fn refs_that_collide_or_name_no_number_are_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("acme").join("lib");
    std::fs::create_dir_all(&dir).unwrap();
    merge_and_squash_repo(&dir);
    let other = git(&dir, &["rev-parse", "refs/pull/11/head"]);
    git(&dir, &["update-ref", "refs/pull/0013/head", &other]);
    git(&dir, &["update-ref", "refs/pull/abc/head", &other]);
    git(&dir, &["update-ref", "refs/pull/+9/head", &other]);
    let out = tmp.path().join("out.jsonl");
    let mut journal = open_journal(&out);
    let warnings = Warnings::default();
    mine_mirror(&MirrorOptions::new(&dir), &mut journal, &warnings).unwrap();
    let mined = read_candidates(&out);
    let pr13 = mined.iter().find(|c| c.record.number == 13).expect("PR 13 mined");
    assert_eq!(pr13.mining.head_sha, git(&dir, &["rev-parse", "refs/pull/13/head"]));
    let warnings = warnings.0.into_inner().unwrap();
    assert!(
        warnings.contains(
            &"acme/lib: refs/pull/0013/head and refs/pull/13/head both name pull request 13: refs/pull/13/head is \
              mined, refs/pull/0013/head skipped"
                .to_owned()
        ),
        "{warnings:?}"
    );
    for name in ["abc", "+9"] {
        let line = format!("acme/lib: refs/pull/{name}/head: not a pull request number, skipped");
        assert!(warnings.contains(&line), "{warnings:?}");
    }
    assert_eq!(warnings.len(), 3, "{warnings:?}");
}

/// A mirror holds no issue text: mined alone, its candidates have the commit's title, no body and
/// raise `no_issue_text`; with `data/fixtures/github-issues.json` (the REST shape `gh api
/// --paginate repos/O/R/issues?state=all` writes, pages back to back), each gets its pull
/// request's title and body and the texts of the issues that body closes, as the recorded
/// candidates have them.
#[test]
fn an_issues_export_gives_mirror_candidates_their_texts() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = make_fixture_repos(tmp.path());
    let recorded =
        swe_forge_core::read_jsonl(std::fs::read(root().join("data/fixtures/instances.jsonl")).unwrap().as_slice())
            .unwrap();
    let flags = |c: &swe_forge_mine::Candidate| {
        c.record.swe_forge.as_ref().and_then(|m| m.quality.as_ref()).map(|q| q.flags.clone()).unwrap_or_default()
    };
    let mut opts = MirrorOptions::new(repos.join("forge-fixtures/gostack"));
    let bare = tmp.path().join("bare.jsonl");
    mine_mirror(&opts, &mut open_journal(&bare), &Quiet).unwrap();
    let bare = read_candidates(&bare);
    assert_eq!(bare.len(), 4);
    for c in &bare {
        assert_eq!(
            (c.record.title.as_str(), c.record.body.as_deref()),
            (format!("Fix #{}", c.record.number).as_str(), None)
        );
        assert_eq!(flags(c), [swe_forge_core::QualityFlag::NoIssueText], "{}", c.record.instance_id);
    }

    opts.issue_exports = vec![root().join("data/fixtures/github-issues.json")];
    let out = tmp.path().join("texts.jsonl");
    mine_mirror(&opts, &mut open_journal(&out), &Quiet).unwrap();
    let mined = read_candidates(&out);
    assert_eq!(mined.len(), 4);
    for c in &mined {
        let want = recorded.iter().find(|r| r.instance_id == c.record.instance_id).unwrap();
        assert_eq!(c.record.title, want.title, "{}", want.instance_id);
        assert_eq!(c.record.body, want.body, "{}", want.instance_id);
        // The fixtures' records word issue 10 each their own way; the export holds gostack-1's.
        let titles = |r: &swe_forge_core::Instance| {
            r.resolved_issues.iter().map(|i| (i.number, i.title.clone())).collect::<Vec<_>>()
        };
        assert_eq!(titles(&c.record), titles(want), "{}", want.instance_id);
        if c.record.number == 1 {
            assert_eq!(c.record.resolved_issues, want.resolved_issues);
        }
        assert_eq!(c.mining.issue_texts, IssueTexts::Resolved, "{}", want.instance_id);
        assert!(flags(c).is_empty(), "{}: {:?}", want.instance_id, flags(c));
    }
}

/// Of a mirror's closing references, those the export names a pull request are left out (GitHub
/// closes no pull request), and those it lacks stay with empty texts (`issue_texts: missing`).
#[test]
fn export_references_to_pull_requests_close_nothing_and_missing_issues_stay_placeholders() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("acme").join("lib");
    std::fs::create_dir_all(&dir).unwrap();
    merge_and_squash_repo(&dir);
    let export = tmp.path().join("events.json");
    // GH Archive lines: PR 11's text names issue 100 and PR 13; issue 101 is not in the export.
    let events = [
        r#"{"type":"PullRequestEvent","repo":{"name":"acme/lib"},"payload":{"number":11,"pull_request":{"number":11,"title":"Return 2 from A","body":"Fixes #100, fixes #13","html_url":"https://github.com/acme/lib/pull/11"}}}"#,
        r#"{"type":"IssuesEvent","repo":{"name":"acme/lib"},"payload":{"issue":{"number":100,"title":"A returns 1","body":"It should return 2."}}}"#,
        r#"{"type":"PullRequestEvent","repo":{"name":"acme/lib"},"payload":{"number":13,"pull_request":{"number":13,"title":"Try 4","body":null}}}"#,
    ];
    std::fs::write(&export, events.join("\n")).unwrap();
    let mut opts = MirrorOptions::new(&dir);
    opts.issue_exports = vec![export];
    let out = tmp.path().join("out.jsonl");
    mine_mirror(&opts, &mut open_journal(&out), &Quiet).unwrap();
    let mined = read_candidates(&out);
    let by_number = |n: u64| mined.iter().find(|c| c.record.number == n).unwrap();
    let merged = by_number(11);
    assert_eq!(merged.record.body.as_deref(), Some("Fixes #100, fixes #13"));
    let issues: Vec<(u64, &str)> = merged.record.resolved_issues.iter().map(|i| (i.number, i.title.as_str())).collect();
    assert_eq!(issues, [(100, "A returns 1")]);
    assert_eq!(merged.mining.issue_texts, IssueTexts::Resolved);
    let squashed = by_number(12);
    assert_eq!(squashed.mining.issue_texts, IssueTexts::Missing, "issue 101 is not in the export");
    assert_eq!(squashed.record.resolved_issues[0].title, "");
}

/// `mine -o` onto a dataset (records without the `mining` notes) is refused naming the file and
/// what it is not; a candidates file cut mid-record names its line once, serde's position as a
/// column (issue #60: "expected struct MiningNotes", "line 2 ... at line 1 column 81398").
#[test]
fn an_output_that_is_no_candidates_file_is_refused_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("validated.jsonl");
    let dataset = std::fs::read_to_string(root().join("data/fixtures/instances.jsonl")).unwrap();
    std::fs::write(&out, &dataset).unwrap();
    let e = swe_forge_mine::Journal::open(&out, false).err().expect("a dataset is refused");
    let text = e.to_string();
    assert!(matches!(e, swe_forge_mine::MineError::NotCandidates { line: 1, .. }), "{text}");
    assert!(text.contains("validated.jsonl is not a candidates file of mine"), "{text}");
    assert!(!text.contains("MiningNotes"), "{text}");

    let mut first: serde_json::Value = serde_json::from_str(dataset.lines().next().unwrap()).unwrap();
    first["mining"] = serde_json::json!({ "source": "mirror" });
    let line = first.to_string();
    std::fs::write(&out, format!("\n{}\n", &line[..line.len() - 10])).unwrap();
    let text = swe_forge_mine::Journal::open(&out, false).err().expect("a cut record is refused").to_string();
    assert!(text.contains("validated.jsonl:2: unreadable line (") && text.contains(", at column "), "{text}");
    assert!(!text.contains("at line 1"), "{text}");
}
