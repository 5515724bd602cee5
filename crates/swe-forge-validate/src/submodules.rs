//! Submodules of an instance's base commit: the source layer writes each at its pinned commit
//! from a local copy (`swe_forge_git`'s `write_tree_tar_with_submodules`); one that has no
//! local copy leaves its folder empty, and the record says so in a warning (tests that live in
//! it cannot run, and re-validation classifies the missing tests as `missing_submodule`).

use std::path::Path;

use swe_forge_core::Warning;
use swe_forge_git::SourceRepo;

/// One warning per submodule of commit `sha` (nested ones included) that no local copy holds
/// at its pinned commit.
pub(crate) fn missing_warnings(repo: &SourceRepo, sha: &str, root: &Path, org: &str) -> Vec<String> {
    let mut out = Vec::new();
    walk(repo, sha, "", root, org, 0, &mut out);
    out.into_iter()
        .map(|m| match m {
            Found::Missing { path, commit, url } => format!(
                "{}: {path} at {commit} ({}); its folder is empty in the image",
                Warning::MissingSubmodule.prefix(),
                url.as_deref().unwrap_or("no URL in .gitmodules")
            ),
            Found::Unreadable(w) => w,
        })
        .collect()
}

/// The first submodule of commit `sha` without a local copy whose path a failed setup's `log`
/// names (`-I/testbed/tests/extlib/json/include`, `tests/extlib/doctest/doctest.h: No such
/// file`): `(path, url)`. Such a setup needs the network (the submodule's host), not another
/// toolchain.
pub(crate) fn named_in_failure(
    repo: &SourceRepo,
    sha: &str,
    root: &Path,
    org: &str,
    log: &str,
) -> Option<(String, String)> {
    let mut out = Vec::new();
    walk(repo, sha, "", root, org, 0, &mut out);
    out.into_iter().find_map(|m| match m {
        Found::Missing { path, url, .. } if log.contains(&format!("{path}/")) => {
            Some((path, url.unwrap_or_else(|| "no URL in .gitmodules".into())))
        }
        _ => None,
    })
}

/// The submodules of commit `sha` that no local copy holds and whose URL `.gitmodules` gives:
/// `(path, url)`, for the stand-ins of their upstream ([`swe_forge_recipes::stand_ins_for`]).
pub(crate) fn missing_with_urls(repo: &SourceRepo, sha: &str, root: &Path, org: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    walk(repo, sha, "", root, org, 0, &mut out);
    out.into_iter()
        .filter_map(|m| match m {
            Found::Missing { path, url: Some(url), .. } => Some((path, url)),
            _ => None,
        })
        .collect()
}

/// A rejection when the repository lacks the content of files of one of `commits` (a partial
/// clone, a mirror fetched without its largest files): the trees cannot be written, and trying
/// again, or another toolchain, changes nothing. `needs_network`: the content is on the
/// repository's host.
pub(crate) fn absent_content(repo: &SourceRepo, commits: &[&str]) -> Option<swe_forge_core::Rejection> {
    for sha in commits {
        let tree = repo.commit(sha).ok()?.tree_id();
        let absent = repo.absent_blobs(tree).ok()?;
        if let Some(first) = absent.first() {
            let more = if absent.len() > 1 { format!(" and {} more", absent.len() - 1) } else { String::new() };
            return Some(swe_forge_core::Rejection::new(
                swe_forge_core::RejectReason::NeedsNetwork,
                format!(
                    "the repository lacks the content of {} file(s) at {sha} ({first}{more}): a partial clone, or a \
                     mirror fetched without its largest files; give a complete clone (`git fetch --refetch`)",
                    absent.len()
                ),
            ));
        }
    }
    None
}

enum Found {
    Missing { path: String, commit: String, url: Option<String> },
    Unreadable(String),
}

fn walk(repo: &SourceRepo, sha: &str, at: &str, root: &Path, org: &str, depth: usize, out: &mut Vec<Found>) {
    let Ok(tree) = repo.commit(sha).map(|c| c.tree_id()) else { return };
    let subs = match repo.submodules(tree) {
        Ok(s) => s,
        Err(e) => {
            return out.push(Found::Unreadable(
                Warning::MissingSubmodule.with(format!("could not read the submodules of {at:?}: {e}")),
            ));
        }
    };
    for s in subs {
        match repo.find_submodule(&s, root, org) {
            Some(sub) if depth < 8 => walk(&sub, &s.commit, &format!("{at}{}/", s.path), root, org, depth + 1, out),
            _ => out.push(Found::Missing {
                path: format!("{at}{}", s.path),
                commit: s.commit.clone(),
                url: s.url.clone(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A blob deleted from the object store (as a mirror fetched without its largest files): the
    /// instance needs the network, naming the file, instead of an i/o error retried as the
    /// machine's fault.
    #[test]
    fn a_file_whose_content_the_repository_lacks_needs_the_network() {
        let dir = tempfile::tempdir().unwrap();
        let git = |args: &[&str]| swe_forge_test_support::git(dir.path(), args);
        git(&["init", "-q"]);
        std::fs::create_dir_all(dir.path().join("data")).unwrap();
        std::fs::write(dir.path().join("data/big.bin"), "large content\n").unwrap();
        std::fs::write(dir.path().join("a.c"), "int a;\n").unwrap();
        git(&["add", "-A"]);
        git(&["commit", "-qm", "base"]);
        let sha = git(&["rev-parse", "HEAD"]);
        let repo = SourceRepo::open(dir.path()).unwrap();
        assert!(absent_content(&repo, &[&sha]).is_none());
        let blob = git(&["rev-parse", "HEAD:data/big.bin"]);
        std::fs::remove_file(dir.path().join(".git/objects").join(&blob[..2]).join(&blob[2..])).unwrap();
        let repo = SourceRepo::open(dir.path()).unwrap();
        let r = absent_content(&repo, &[&sha]).expect("a lacking file is found");
        assert_eq!(r.reason, swe_forge_core::RejectReason::NeedsNetwork);
        assert!(
            r.detail.contains("lacks the content of 1 file(s)") && r.detail.contains("data/big.bin"),
            "{}",
            r.detail
        );
    }
}
