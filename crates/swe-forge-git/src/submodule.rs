//! Submodules: the gitlinks of a tree with what `.gitmodules` says about them, where a local
//! copy of each can be found, and a tree export that puts every submodule's content at the
//! commit the superproject pins ([`SourceRepo::write_tree_tar_with_submodules`]).
//!
//! `git archive` and a plain checkout leave submodule folders empty; a repository whose tests
//! live partly in a bundled library then loses those tests. Like the rest of this crate this
//! never touches the network: a submodule is taken from the superproject's own
//! `<git dir>/modules/<name>` (a clone made with `--recurse-submodules`) or from the folder of
//! local clones (`<root>/<org>/<repo>`, named after its URL), and is reported missing otherwise.

use std::io::Write;
use std::path::Path;

use git2::{ObjectType, Oid, TreeWalkMode, TreeWalkResult};

use crate::{GitError, SourceRepo, TreeStats};

/// Nested submodules are followed this deep.
const MAX_DEPTH: usize = 8;

/// A gitlink of a tree and its `.gitmodules` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Submodule {
    /// Path of the gitlink inside the tree it belongs to.
    pub path: String,
    /// Name in `.gitmodules` (the path when `.gitmodules` does not list it).
    pub name: String,
    /// URL in `.gitmodules`, when listed.
    pub url: Option<String>,
    /// The commit the superproject pins.
    pub commit: String,
}

/// What a tree export with submodules wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SubmoduleExport {
    /// Files and bytes of the whole export, submodules included; `submodules` counts the
    /// gitlinks that were not expanded.
    pub stats: TreeStats,
    /// Submodules written at their pinned commit, with paths from the export's root.
    pub expanded: Vec<Submodule>,
    /// Submodules left empty: no local copy holds the pinned commit (paths from the root).
    pub missing: Vec<Submodule>,
}

impl SourceRepo {
    /// The gitlinks of tree `tree_id`, with names and URLs from the tree's `.gitmodules`.
    pub fn submodules(&self, tree_id: Oid) -> Result<Vec<Submodule>, GitError> {
        let tree = self.git().find_tree(tree_id).map_err(self.err("find tree"))?;
        let mut links = Vec::new();
        tree.walk(TreeWalkMode::PreOrder, |dir, e| {
            if e.kind() == Some(ObjectType::Commit) {
                links.push((format!("{dir}{}", String::from_utf8_lossy(e.name_bytes())), e.id().to_string()));
            }
            TreeWalkResult::Ok
        })
        .map_err(self.err("walk tree"))?;
        if links.is_empty() {
            return Ok(Vec::new());
        }
        let entries = tree
            .get_path(Path::new(".gitmodules"))
            .ok()
            .and_then(|e| self.git().find_blob(e.id()).ok())
            .map(|b| parse_gitmodules(&String::from_utf8_lossy(b.content())))
            .unwrap_or_default();
        Ok(links
            .into_iter()
            .map(|(path, commit)| {
                let entry = entries.iter().find(|(_, p, _)| p.as_deref() == Some(path.as_str()));
                Submodule {
                    name: entry.map_or_else(|| path.clone(), |(n, _, _)| n.clone()),
                    url: entry.and_then(|(_, _, u)| u.clone()),
                    path,
                    commit,
                }
            })
            .collect())
    }

    /// A local repository holding `sub`'s pinned commit: this repository's
    /// `<git dir>/modules/<name>`, else the clone its URL names under `root` (`org` resolves
    /// relative URLs such as `../lib.git`).
    pub fn find_submodule(&self, sub: &Submodule, root: &Path, org: &str) -> Option<SourceRepo> {
        let mut candidates = Vec::new();
        if let Ok(r) = SourceRepo::open(&self.git().path().join("modules").join(&sub.name)) {
            candidates.push(r);
        }
        if let Some((o, r)) = sub.url.as_deref().and_then(|u| org_repo_of_url(u, org))
            && let Ok(repo) = SourceRepo::locate(root, &o, &r)
        {
            candidates.push(repo);
        }
        candidates.into_iter().find(|r| r.commit(&sub.commit).is_ok())
    }

    /// Like [`SourceRepo::write_tree_tar`], with every submodule's tree at its pinned commit
    /// written under its path (recursively), taken from local copies found as
    /// [`SourceRepo::find_submodule`] says. Submodules without a local copy stay empty and are
    /// listed in [`SubmoduleExport::missing`].
    pub fn write_tree_tar_with_submodules<W: Write>(
        &self,
        tree_id: Oid,
        prefix: &str,
        builder: &mut tar::Builder<W>,
        root: &Path,
        org: &str,
    ) -> Result<SubmoduleExport, GitError> {
        let mut out = SubmoduleExport::default();
        self.export(tree_id, prefix, "", builder, root, org, 0, &mut out)?;
        Ok(out)
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn export<W: Write>(
        &self,
        tree_id: Oid,
        prefix: &str,
        at: &str,
        builder: &mut tar::Builder<W>,
        root: &Path,
        org: &str,
        depth: usize,
        out: &mut SubmoduleExport,
    ) -> Result<(), GitError> {
        let stats = self.write_tree_tar(tree_id, prefix, builder)?;
        out.stats.files += stats.files;
        out.stats.bytes += stats.bytes;
        for sub in self.submodules(tree_id)? {
            let full = Submodule { path: format!("{at}{}", sub.path), ..sub.clone() };
            let found = (depth < MAX_DEPTH).then(|| self.find_submodule(&sub, root, org)).flatten();
            let Some(repo) = found else {
                out.stats.submodules += 1;
                out.missing.push(full);
                continue;
            };
            let tree = repo.commit(&sub.commit)?.tree_id();
            let sub_prefix = format!("{prefix}/{}", sub.path);
            let mut h = dir_header();
            builder
                .append_data(&mut h, format!("{sub_prefix}/"), std::io::empty())
                .map_err(|source| GitError::Tar { path: self.path().to_owned(), source })?;
            let sub_org =
                sub.url.as_deref().and_then(|u| org_repo_of_url(u, org)).map_or_else(|| org.to_owned(), |(o, _)| o);
            out.expanded.push(full.clone());
            repo.export(tree, &sub_prefix, &format!("{}/", full.path), builder, root, &sub_org, depth + 1, out)?;
        }
        Ok(())
    }
}

/// `(name, path, url)` of every `[submodule "name"]` section of a `.gitmodules` file.
fn parse_gitmodules(text: &str) -> Vec<(String, Option<String>, Option<String>)> {
    let mut out: Vec<(String, Option<String>, Option<String>)> = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("[submodule") {
            let name = rest.trim().trim_end_matches(']').trim().trim_matches('"').to_owned();
            out.push((name, None, None));
        } else if let (Some((key, value)), Some(last)) = (line.split_once('='), out.last_mut()) {
            let value = value.trim().trim_matches('"').to_owned();
            match key.trim() {
                "path" => last.1 = Some(value),
                "url" => last.2 = Some(value),
                _ => {}
            }
        }
    }
    out
}

/// `org/repo` named by a submodule URL: `https://host/org/repo(.git)`, `git@host:org/repo.git`,
/// `../repo.git` (relative to the superproject's `org`), `../../org/repo`.
pub(crate) fn org_repo_of_url(url: &str, org: &str) -> Option<(String, String)> {
    let url = url.trim().trim_end_matches('/');
    let url = url.strip_suffix(".git").unwrap_or(url);
    if url.starts_with("./") || url.starts_with("../") {
        let parts: Vec<&str> = url.split('/').filter(|p| !p.is_empty() && *p != ".").collect();
        let ups = parts.iter().take_while(|p| **p == "..").count();
        let rest = &parts[ups..];
        return match (ups, rest) {
            (1, [repo]) => Some((org.to_owned(), (*repo).to_owned())),
            (2, [o, repo]) => Some(((*o).to_owned(), (*repo).to_owned())),
            _ => None,
        };
    }
    let path = match url.split_once("://") {
        Some((_, rest)) => rest.split_once('/')?.1,
        None => url.split_once(':')?.1,
    };
    let mut parts = path.rsplitn(3, '/');
    let repo = parts.next()?;
    let o = parts.next()?;
    (!repo.is_empty() && !o.is_empty()).then(|| (o.to_owned(), repo.to_owned()))
}

fn dir_header() -> tar::Header {
    let mut h = tar::Header::new_gnu();
    h.set_entry_type(tar::EntryType::Directory);
    h.set_mode(0o755);
    h.set_size(0);
    h.set_mtime(crate::repo::SOURCE_MTIME);
    h.set_uid(0);
    h.set_gid(0);
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::test_git as git;

    fn tar_files(bytes: &[u8]) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for e in tar::Archive::new(bytes).entries().unwrap() {
            let mut e = e.unwrap();
            if e.header().entry_type() == tar::EntryType::Regular {
                let path = e.path().unwrap().to_string_lossy().into_owned();
                let mut s = String::new();
                std::io::Read::read_to_string(&mut e, &mut s).unwrap();
                out.push((path, s));
            }
        }
        out.sort();
        out
    }

    #[test]
    fn submodules_are_written_at_the_pinned_commit_from_local_clones() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("repos");
        let lib = root.join("acme/lib");
        std::fs::create_dir_all(&lib).unwrap();
        git(&lib, &["init", "-q"]);
        std::fs::write(lib.join("data.txt"), "pinned\n").unwrap();
        git(&lib, &["add", "."]);
        git(&lib, &["commit", "-qm", "v1"]);
        let pinned = git(&lib, &["rev-parse", "HEAD"]);
        std::fs::write(lib.join("data.txt"), "newer\n").unwrap();
        git(&lib, &["commit", "-qam", "v2"]);

        let app = root.join("acme/app");
        std::fs::create_dir_all(&app).unwrap();
        git(&app, &["init", "-q"]);
        std::fs::write(app.join("main.txt"), "app\n").unwrap();
        std::fs::write(
            app.join(".gitmodules"),
            "[submodule \"vendor/lib\"]\n\tpath = vendor/lib\n\turl = https://github.com/acme/lib.git\n",
        )
        .unwrap();
        git(&app, &["add", "."]);
        git(&app, &["update-index", "--add", "--cacheinfo", &format!("160000,{pinned},vendor/lib")]);
        git(&app, &["commit", "-qm", "base"]);
        let base = git(&app, &["rev-parse", "HEAD"]);

        let repo = SourceRepo::open(&app).unwrap();
        let tree = repo.commit(&base).unwrap().tree_id();
        let subs = repo.submodules(tree).unwrap();
        assert_eq!(subs.len(), 1);
        assert_eq!(subs[0].url.as_deref(), Some("https://github.com/acme/lib.git"));
        assert_eq!(subs[0].commit, pinned);

        let mut builder = tar::Builder::new(Vec::new());
        let export = repo.write_tree_tar_with_submodules(tree, "repo", &mut builder, &root, "acme").unwrap();
        let bytes = builder.into_inner().unwrap();
        // Every entry, the submodule's included, has the fixed non-zero time (MRESOURCES-289).
        for e in tar::Archive::new(&bytes[..]).entries().unwrap() {
            let e = e.unwrap();
            assert_eq!(e.header().mtime().unwrap(), crate::SOURCE_MTIME, "{:?}", e.path().unwrap());
        }
        let files = tar_files(&bytes);
        assert!(files.contains(&("repo/vendor/lib/data.txt".to_owned(), "pinned\n".to_owned())), "{files:?}");
        assert!(files.contains(&("repo/main.txt".to_owned(), "app\n".to_owned())));
        assert_eq!(export.expanded.len(), 1);
        assert!(export.missing.is_empty());
        assert_eq!(export.stats.submodules, 0);

        // Without a local copy the folder stays empty and the submodule is reported missing.
        let mut builder = tar::Builder::new(Vec::new());
        let export =
            repo.write_tree_tar_with_submodules(tree, "repo", &mut builder, &tmp.path().join("none"), "acme").unwrap();
        assert_eq!(export.missing.iter().map(|s| s.path.as_str()).collect::<Vec<_>>(), ["vendor/lib"]);
        assert_eq!(export.stats.submodules, 1);
        assert!(!tar_files(&builder.into_inner().unwrap()).iter().any(|(p, _)| p.contains("vendor/lib")));
    }

    #[test]
    fn urls_name_local_clones() {
        let check = |u: &str| org_repo_of_url(u, "acme");
        let pair = |o: &str, r: &str| Some((o.to_owned(), r.to_owned()));
        assert_eq!(check("https://github.com/google/googletest.git"), pair("google", "googletest"));
        assert_eq!(check("git@github.com:nlohmann/json_test_data.git"), pair("nlohmann", "json_test_data"));
        assert_eq!(check("../lib.git"), pair("acme", "lib"));
        assert_eq!(check("../../other/lib"), pair("other", "lib"));
        assert_eq!(check("lib"), None);
        let parsed = parse_gitmodules("[submodule \"a\"]\n\tpath = x/a\n\turl = ../a.git\n[submodule \"b\"]\npath=b\n");
        assert_eq!(parsed[0], ("a".to_owned(), Some("x/a".to_owned()), Some("../a.git".to_owned())));
        assert_eq!(parsed[1].1.as_deref(), Some("b"));
    }
}
