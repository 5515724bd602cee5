//! Extra sources: trees of other repositories a recipe puts into the image ([`ExtraSource`]),
//! taken from the local mirrors folder like the instance's repository and its submodules. Each
//! is resolved to a commit before any image is built; one that is missing is a
//! [`ValidateError::ExtraSource`] naming the repository, revision and where it was looked for,
//! and the instance is rejected as `repo_unavailable` with that message. Files of its tree whose
//! content the mirror lacks (a snapshot that leaves out its largest blobs) are left out of the
//! image, and the record says so in a warning of kind `Warning::MissingExtraSource`
//! (re-validation classifies the tests that then differ as `missing_extra_source`).

use std::path::Path;

use swe_forge_core::Warning;

use swe_forge_core::ExtraSourceProvenance;
use swe_forge_git::{GitError, SourceRepo};

use crate::images::REPO_DIR;
use crate::{ExtraSource, ValidateError};

/// An extra source found in the mirrors: the repository and the commit its revision names.
pub struct ResolvedExtraSource {
    /// What the recipe asked for.
    pub source: ExtraSource,
    /// The commit `source.rev` resolved to.
    pub sha: String,
    /// The local repository holding it.
    pub repo: SourceRepo,
    /// Files of its tree whose content the repository lacks (left out of the image).
    pub missing: Vec<String>,
}

impl std::fmt::Debug for ResolvedExtraSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResolvedExtraSource")
            .field("source", &self.source)
            .field("sha", &self.sha)
            .field("repo", &self.repo.path())
            .field("missing", &self.missing)
            .finish()
    }
}

impl ResolvedExtraSource {
    /// What the record's provenance says of it.
    pub fn provenance(&self) -> ExtraSourceProvenance {
        ExtraSourceProvenance {
            repo: self.source.repo.clone(),
            rev: self.source.rev.clone(),
            sha: self.sha.clone(),
            path: self.source.path.clone(),
        }
    }

    /// The line of the source layer's key: a different commit or path is a different layer.
    pub(crate) fn key(&self) -> String {
        let mut key = format!("extra {} {} {}", self.source.repo, self.sha, self.source.path);
        for m in &self.missing {
            key.push_str(&format!("\nabsent {m}"));
        }
        key
    }

    /// The record's warning when files of the tree are not in the mirror.
    pub fn warning(&self) -> Option<String> {
        let n = self.missing.len();
        (n > 0).then(|| {
            let shown: Vec<&str> = self.missing.iter().take(10).map(String::as_str).collect();
            format!(
                "{}: {n} files of {} at {} ({}) are not in {} and are absent from {}: {}{}",
                Warning::MissingExtraSource.prefix(),
                self.source.repo,
                self.source.rev,
                self.sha,
                self.repo.path().display(),
                self.source.path,
                shown.join(", "),
                if n > shown.len() { ", ..." } else { "" }
            )
        })
    }
}

/// Finds every extra source under `root` (`<root>/<org>/<name>`, as for the instance's
/// repository) and resolves its revision (tag, branch or sha) to a commit.
pub fn resolve_extra_sources(root: &Path, sources: &[ExtraSource]) -> Result<Vec<ResolvedExtraSource>, ValidateError> {
    sources.iter().map(|s| resolve(root, s)).collect()
}

fn resolve(root: &Path, s: &ExtraSource) -> Result<ResolvedExtraSource, ValidateError> {
    let fail = |looked_in: String, reason: String| ValidateError::ExtraSource {
        repo: s.repo.clone(),
        rev: s.rev.clone(),
        looked_in,
        reason,
    };
    if let Some(why) = bad_path(&s.path) {
        return Err(fail("the recipe".to_owned(), format!("path {:?} {why}", s.path)));
    }
    let Some((org, name)) = s.repo.split_once('/').filter(|(o, n)| !o.is_empty() && !n.is_empty() && !n.contains('/'))
    else {
        return Err(fail("the recipe".to_owned(), "`repo` must be `org/name`".to_owned()));
    };
    let repo = SourceRepo::locate(root, org, name).map_err(|e| match e {
        GitError::NotFound { tried, .. } => fail(tried, "no such repository in the mirrors".to_owned()),
        other => fail(root.join(org).join(name).display().to_string(), other.to_string()),
    })?;
    let looked_in = repo.path().display().to_string();
    let (sha, tree) = repo
        .git()
        .revparse_single(&s.rev)
        .and_then(|o| o.peel_to_commit())
        .map(|c| (c.id().to_string(), c.tree_id()))
        .map_err(|e| fail(looked_in.clone(), format!("the revision is not there ({})", e.message())))?;
    let missing = repo.absent_blobs(tree).map_err(|e| fail(looked_in, e.to_string()))?;
    Ok(ResolvedExtraSource { source: s.clone(), sha, repo, missing })
}

/// Why `path` cannot hold an extra source: it must be absolute, plain (no `.`, `..` or empty
/// components) and outside the repository, so the repository's git tree stays the base tree.
fn bad_path(path: &str) -> Option<&'static str> {
    let Some(rest) = path.strip_prefix('/') else {
        return Some("must be an absolute path without empty, `.` or `..` components");
    };
    if rest.is_empty() || rest.split('/').any(|c| c.is_empty() || c == "." || c == "..") {
        return Some("must be an absolute path without empty, `.` or `..` components");
    }
    if !rest.chars().all(|c| c.is_ascii_alphanumeric() || "._-/+@".contains(c)) {
        // It is spliced into the Dockerfile's `COPY` line: a line feed would start an instruction.
        return Some("must hold only letters, digits and `._-/+@` (no space, no line feed)");
    }
    let repo = REPO_DIR.trim_start_matches('/');
    if rest == repo || rest.starts_with(&format!("{repo}/")) || repo.starts_with(&format!("{rest}/")) {
        return Some("must be outside the repository's folder");
    }
    None
}

#[cfg(test)]
mod tests {

    use super::*;

    use swe_forge_test_support::git;

    fn src(repo: &str, rev: &str, path: &str) -> ExtraSource {
        ExtraSource { repo: repo.to_owned(), rev: rev.to_owned(), path: path.to_owned() }
    }

    #[test]
    fn tags_branches_and_shas_resolve_and_a_missing_source_says_where_it_was_looked_for() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("acme/data");
        std::fs::create_dir_all(&dir).unwrap();
        git(&dir, &["init", "-q"]);
        std::fs::write(dir.join("a.txt"), "1\n").unwrap();
        git(&dir, &["add", "."]);
        git(&dir, &["commit", "-qm", "one"]);
        let one = git(&dir, &["rev-parse", "HEAD"]);
        git(&dir, &["tag", "-a", "v1", "-m", "v1"]);
        std::fs::write(dir.join("a.txt"), "2\n").unwrap();
        git(&dir, &["commit", "-qam", "two"]);
        let two = git(&dir, &["rev-parse", "HEAD"]);

        let root = tmp.path();
        let got = resolve_extra_sources(
            root,
            &[
                src("acme/data", "v1", "/swe-forge/extra/a"),
                src("acme/data", "main", "/x"),
                src("acme/data", &one, "/y"),
            ],
        )
        .unwrap();
        assert_eq!(got.iter().map(|r| r.sha.as_str()).collect::<Vec<_>>(), [&one, &two, &one]);
        assert_eq!(got[0].provenance().sha, one);
        assert_eq!(got[0].provenance().rev, "v1");

        let e = resolve_extra_sources(root, &[src("acme/nodata", "v1", "/x")]).unwrap_err();
        assert!(matches!(e, ValidateError::ExtraSource { .. }));
        let msg = e.to_string();
        assert!(msg.starts_with("extra source acme/nodata at v1: no such repository"), "{msg}");
        assert!(msg.contains(&root.join("acme/nodata").display().to_string()), "{msg}");

        let msg = resolve_extra_sources(root, &[src("acme/data", "v9", "/x")]).unwrap_err().to_string();
        assert!(msg.contains("acme/data at v9: the revision is not there"), "{msg}");
        assert!(msg.contains(&dir.display().to_string()), "{msg}");
    }

    #[test]
    fn files_the_mirror_lacks_are_listed_and_warned_about() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("acme/data");
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        git(&dir, &["init", "-q"]);
        std::fs::write(dir.join("a.txt"), "kept\n").unwrap();
        std::fs::write(dir.join("sub/big.json"), "left out of the snapshot\n").unwrap();
        git(&dir, &["add", "."]);
        git(&dir, &["commit", "-qm", "one"]);
        let blob = git(&dir, &["rev-parse", "HEAD:sub/big.json"]);
        std::fs::remove_file(dir.join(".git/objects").join(&blob[..2]).join(&blob[2..])).unwrap();

        let got = resolve_extra_sources(tmp.path(), &[src("acme/data", "main", "/x")]).unwrap();
        assert_eq!(got[0].missing, ["sub/big.json"]);
        let w = got[0].warning().unwrap();
        assert!(w.starts_with(&Warning::MissingExtraSource.with("1 files of acme/data at main")), "{w}");
        assert!(w.ends_with("absent from /x: sub/big.json"), "{w}");
        assert!(got[0].key().contains("absent sub/big.json"), "a completed mirror makes another layer");

        let tree = got[0].repo.commit(&got[0].sha).unwrap().tree_id();
        let mut builder = tar::Builder::new(Vec::new());
        let (stats, absent) = got[0].repo.write_tree_tar_present(tree, "extra/0", &mut builder).unwrap();
        assert_eq!((stats.files, absent), (1, vec!["sub/big.json".to_owned()]));
        let mut strict = tar::Builder::new(Vec::new());
        let e = got[0].repo.write_tree_tar(tree, "extra/0", &mut strict).unwrap_err().to_string();
        assert!(e.contains("read blob"), "the reason of an aborted export is kept: {e}");
    }

    #[test]
    fn paths_must_be_absolute_plain_and_outside_the_repository() {
        for ok in ["/swe-forge/extra/json_test_data", "/opt/data", "/testbed2"] {
            assert_eq!(bad_path(ok), None, "{ok}");
        }
        for bad in [
            "relative",
            "/",
            "/testbed",
            "/testbed/x",
            "/a/../testbed",
            "/a//b",
            "/a/./b",
            "/opt/x\nRUN mkdir /pwned #",
            "/a b",
        ] {
            assert!(bad_path(bad).is_some(), "{bad}");
        }
        let tmp = tempfile::tempdir().unwrap();
        let msg = resolve_extra_sources(tmp.path(), &[src("a/b", "v1", "/testbed/data")]).unwrap_err().to_string();
        assert!(msg.contains("outside the repository"), "{msg}");
    }
}
