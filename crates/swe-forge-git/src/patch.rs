//! Applying unified diffs to a commit's tree in memory, in order.
//!
//! libgit2 applies a hunk only at the line its header names. `git apply` (what Multi-SWE-bench and
//! most harnesses run) also accepts a hunk whose context matches a few lines away; published patches
//! rely on that (cpp-httplib's PR 1765 fix is one line off its base commit). So when libgit2
//! refuses a patch, each hunk is moved to the nearest place where all its old lines match exactly
//! (no fuzz: every context line must match, as with `git apply`) and the patch is tried once more.

use git2::{Diff, Oid, Tree};
use swe_forge_core::{DiffLine, diff_lines};

use crate::{GitError, SourceRepo};

/// Why a patch did not apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApplyFailure {
    /// Index of the failing patch in the list given to [`apply_patches`].
    pub index: usize,
    /// What libgit2 said.
    pub message: String,
}

/// Applies `patches` one after the other on top of commit `base` without touching any work
/// tree, and returns the resulting tree id. An empty patch is a no-op. `Ok(Err(_))` says which
/// patch did not apply; `Err(_)` is a repository problem. Hunks whose lines moved are applied
/// where their context matches exactly, as `git apply` does.
pub fn apply_patches(repo: &SourceRepo, base: &str, patches: &[&str]) -> Result<Result<Oid, ApplyFailure>, GitError> {
    let git = repo.git();
    let mut tree = repo.commit(base)?.tree().map_err(repo.err("read tree"))?;
    for (index, patch) in patches.iter().enumerate() {
        if patch.trim().is_empty() {
            continue;
        }
        let mut index_after = match apply_one(repo, &tree, patch) {
            Ok(i) => i,
            Err(e) => {
                let message = e.to_string();
                let relocated = relocate_hunks(patch, &|path| read_blob(repo, &tree, path));
                match relocated.filter(|r| r != patch).map(|r| apply_one(repo, &tree, &r)) {
                    Some(Ok(i)) => i,
                    _ => return Ok(Err(ApplyFailure { index, message })),
                }
            }
        };
        let oid = index_after.write_tree_to(git).map_err(repo.err("write tree"))?;
        tree = git.find_tree(oid).map_err(repo.err("find tree"))?;
    }
    Ok(Ok(tree.id()))
}

/// Why libgit2 did not apply one patch; its message goes into [`ApplyFailure`].
#[derive(Debug, thiserror::Error)]
enum ApplyError {
    /// The text is not a diff libgit2 reads.
    #[error("not a valid diff: {}", .0.message())]
    NotADiff(git2::Error),
    /// The diff does not apply to the tree.
    #[error("{}", .0.message())]
    Refused(git2::Error),
}

fn apply_one(repo: &SourceRepo, tree: &Tree<'_>, patch: &str) -> Result<git2::Index, ApplyError> {
    let diff = Diff::from_buffer(patch.as_bytes()).map_err(ApplyError::NotADiff)?;
    repo.git().apply_to_tree(tree, &diff, None).map_err(ApplyError::Refused)
}

/// A file's path and its content after the patches (None: they delete it).
pub type PatchedFile = (String, Option<Vec<u8>>);

/// The files `patches` change (the paths their `diff --git` headers name) that `wanted` keeps,
/// each with its content once every patch is applied on commit `base` (None: the patches
/// delete it), in path order. Empty when a patch does not apply.
pub fn patched_files(
    repo: &SourceRepo,
    base: &str,
    patches: &[&str],
    wanted: &dyn Fn(&str) -> bool,
) -> Result<Vec<PatchedFile>, GitError> {
    let mut paths: Vec<&str> = patches
        .iter()
        .flat_map(|p| p.lines())
        .filter_map(|l| l.strip_prefix("diff --git a/"))
        .filter_map(|rest| rest.split_once(" b/").map(|(_, new)| new))
        .filter(|p| wanted(p))
        .collect();
    paths.sort_unstable();
    paths.dedup();
    if paths.is_empty() {
        return Ok(Vec::new());
    }
    let Ok(oid) = apply_patches(repo, base, patches)? else { return Ok(Vec::new()) };
    let tree = repo.git().find_tree(oid).map_err(repo.err("find tree"))?;
    Ok(paths.into_iter().map(|p| (p.to_owned(), read_blob(repo, &tree, p))).collect())
}

fn read_blob(repo: &SourceRepo, tree: &Tree<'_>, path: &str) -> Option<Vec<u8>> {
    let entry = tree.get_path(std::path::Path::new(path)).ok()?;
    repo.git().find_blob(entry.id()).ok().map(|b| b.content().to_vec())
}

/// The patch with every hunk's header moved to the nearest place in the old file where all of
/// the hunk's old lines match, or `None` when some hunk matches nowhere (or a file is missing).
/// Files are read through `old_file` (path relative to the repository root). Lines are read by
/// core's diff reader, so a hunk is as long as its header says, as for libgit2 and `git apply`.
fn relocate_hunks(patch: &str, old_file: &dyn Fn(&str) -> Option<Vec<u8>>) -> Option<String> {
    let lines: Vec<(usize, DiffLine<'_>)> = diff_lines(patch).collect();
    // Line `k` as written, with its line ending.
    let raw = |k: usize| &patch[lines[k].0..lines.get(k + 1).map_or(patch.len(), |l| l.0)];
    let mut out = String::with_capacity(patch.len());
    let mut file: Option<Vec<String>> = None; // lines of the current old file
    let mut delta: i64 = 0; // lines added minus removed by earlier hunks of the current file
    let mut i = 0;
    while i < lines.len() {
        match (lines[i].1, &file) {
            (DiffLine::FileStart(line) | DiffLine::Header(line), _) => {
                if line.starts_with("diff --git ") {
                    file = None;
                    delta = 0;
                } else if let Some(path) = line.strip_prefix("--- ") {
                    file = match path.strip_prefix("a/") {
                        Some(p) => {
                            let bytes = old_file(p.split('\t').next().unwrap_or(p))?;
                            Some(String::from_utf8_lossy(&bytes).split('\n').map(str::to_owned).collect())
                        }
                        None => None, // a new file: nothing to move
                    };
                }
            }
            (DiffLine::HunkStart(_), Some(old)) => {
                let (stated, rest) = parse_header(raw(i))?;
                // The hunk's body: old lines (context and removals, as written, `\r` kept) and
                // the size of both sides.
                let mut j = i + 1;
                let mut pre: Vec<&str> = Vec::new();
                let (mut removed, mut added) = (0i64, 0i64);
                while let Some((_, kind)) = lines.get(j) {
                    let body = raw(j).strip_suffix('\n').unwrap_or(raw(j));
                    match kind {
                        DiffLine::Context(_) => pre.push(body.get(1..).unwrap_or("")),
                        DiffLine::Removed(_) => {
                            pre.push(&body[1..]);
                            removed += 1;
                        }
                        DiffLine::Added(_) => added += 1,
                        DiffLine::NoNewline => {}
                        _ => break,
                    }
                    j += 1;
                }
                let context = pre.len() as i64 - removed;
                let at = nearest_match(old, &pre, stated.saturating_sub(1))?;
                let old_start = at + 1;
                let new_start = (old_start as i64 + delta).max(if pre.is_empty() { 0 } else { 1 });
                out.push_str(&format!("@@ -{old_start},{} +{new_start},{} @@{rest}", pre.len(), context + added));
                for k in i + 1..j {
                    out.push_str(raw(k));
                }
                delta += added - removed;
                i = j;
                continue;
            }
            _ => {}
        }
        out.push_str(raw(i));
        i += 1;
    }
    Some(out)
}

/// Start line and the text after the second `@@` (kept as is) of a hunk header.
fn parse_header(line: &str) -> Option<(usize, &str)> {
    let body = line.strip_prefix("@@ -")?;
    let end = body.find(" @@")?;
    let ranges = &body[..end];
    let old = ranges.split(' ').next()?;
    let start = old.split(',').next()?.parse().ok()?;
    Some((start, &body[end + 3..]))
}

/// The index nearest to `from` (0-based) where `pre` matches `file` line by line.
fn nearest_match(file: &[String], pre: &[&str], from: usize) -> Option<usize> {
    if pre.is_empty() {
        return Some(from.min(file.len()));
    }
    let fits = |at: usize| at + pre.len() <= file.len() && pre.iter().zip(&file[at..]).all(|(p, f)| p == f);
    let limit = file.len();
    for d in 0..=limit {
        if from + d < limit && fits(from + d) {
            return Some(from + d);
        }
        if d > 0 && d <= from && fits(from - d) {
            return Some(from - d);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::{apply_one, apply_patches, relocate_hunks};
    use crate::SourceRepo;

    #[test]
    fn a_patch_one_line_off_its_base_applies_as_with_git_apply() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let git = |args: &[&str]| crate::test_git(dir, args);
        git(&["init", "-q"]);
        let body: String = (1..=40).map(|n| format!("line {n}\n")).collect();
        std::fs::write(dir.join("f.txt"), format!("inserted\n{body}")).unwrap();
        git(&["add", "."]);
        git(&["commit", "-qm", "base"]);
        let base = git(&["rev-parse", "HEAD"]);
        // Written against the file without its first line: every line is one further down.
        let patch = "diff --git a/f.txt b/f.txt\n--- a/f.txt\n+++ b/f.txt\n@@ -20,3 +20,4 @@\n line 20\n line 21\n+new\n line 22\n";
        let repo = SourceRepo::open(dir).unwrap();
        let tree = repo.commit(&base).unwrap().tree().unwrap();
        assert!(apply_one(&repo, &tree, patch).is_err(), "libgit2 alone refuses it (else this test shows nothing)");
        let out = apply_patches(&repo, &base, &[patch]).unwrap().unwrap();
        let tree = repo.git().find_tree(out).unwrap();
        let blob = repo.git().find_blob(tree.get_path(std::path::Path::new("f.txt")).unwrap().id()).unwrap();
        let text = String::from_utf8_lossy(blob.content()).into_owned();
        assert!(text.contains("line 21\nnew\nline 22\n"), "{text}");
        // A hunk whose lines are nowhere still fails, with libgit2's message.
        let bad = patch.replace(" line 21\n", " line 99x\n");
        let failure = apply_patches(&repo, &base, &["", &bad]).unwrap().unwrap_err();
        assert_eq!(failure.index, 1);
    }

    const OLD: &str = "a\nb\nc\nd\ne\nf\ng\n";

    #[test]
    fn a_hunk_that_moved_is_put_where_its_lines_match() {
        // Stated at line 2, the context is really at line 4 (two lines were inserted above).
        let patch = "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -2,3 +2,4 @@ ctx\n d\n e\n+x\n f\n";
        let got = relocate_hunks(patch, &|p| (p == "f").then(|| OLD.as_bytes().to_vec())).unwrap();
        assert_eq!(got, "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -4,3 +4,4 @@ ctx\n d\n e\n+x\n f\n");
    }

    #[test]
    fn later_hunks_are_shifted_by_what_earlier_hunks_added() {
        let patch = "--- a/f\n+++ b/f\n@@ -1,1 +1,2 @@\n a\n+x\n@@ -5,1 +6,1 @@\n-f\n+F\n";
        let got = relocate_hunks(patch, &|_| Some(OLD.as_bytes().to_vec())).unwrap();
        assert_eq!(got, "--- a/f\n+++ b/f\n@@ -1,1 +1,2 @@\n a\n+x\n@@ -6,1 +7,1 @@\n-f\n+F\n");
    }

    #[test]
    fn a_hunk_whose_lines_match_nowhere_is_not_moved() {
        let patch = "--- a/f\n+++ b/f\n@@ -2,2 +2,2 @@\n b\n-zz\n+c\n";
        assert_eq!(relocate_hunks(patch, &|_| Some(OLD.as_bytes().to_vec())), None);
        assert_eq!(relocate_hunks(patch, &|_| None), None, "a missing file cannot be matched");
    }

    #[test]
    fn a_removed_line_that_reads_like_a_file_header_stays_in_its_hunk() {
        let old = "top\na\n-- b\nc\n";
        let patch = "--- a/f\n+++ b/f\n@@ -1,3 +1,2 @@\n a\n--- b\n c\n";
        let got = relocate_hunks(patch, &|_| Some(old.as_bytes().to_vec())).unwrap();
        assert_eq!(got, "--- a/f\n+++ b/f\n@@ -2,3 +2,2 @@\n a\n--- b\n c\n");
    }

    #[test]
    fn new_files_are_left_alone() {
        let patch = "diff --git a/n b/n\nnew file mode 100644\n--- /dev/null\n+++ b/n\n@@ -0,0 +1,1 @@\n+hi\n";
        assert_eq!(relocate_hunks(patch, &|_| None).as_deref(), Some(patch));
    }
}
