//! What changed from one tree to another, written as a tar stream of the new content plus the
//! lists a container needs to turn a copy of the first tree into the second: the instance layer
//! on top of a repository environment (the repository at an older commit) carries only these.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::Path;

use git2::{Delta, DiffOptions, FileMode, ObjectType, Oid};

use crate::repo::header;
use crate::{GitError, SourceRepo, Submodule, SubmoduleExport};

/// The change from an old tree to a new one (paths relative to the repository root).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TreeChange {
    /// Every path that differs (added, removed, changed, or changed kind), sorted: remove these
    /// from a copy of the old tree (a submodule path stands for its whole folder), then write the
    /// tar stream. A path that only the new tree has is in the list too, so that whatever a build
    /// left there goes first.
    pub paths: Vec<String>,
    /// The paths the tar stream writes (files, symlinks, and the folders of submodules whose
    /// pinned commit changed, written whole at the new commit): what to stage in git.
    pub written: Vec<String>,
    /// Folders the old tree has and the new one does not, deepest first: remove them when empty.
    pub gone_dirs: Vec<String>,
    /// Submodules whose new pinned commit has no local copy (their folder stays empty).
    pub missing: Vec<Submodule>,
    /// Files and bytes written, submodules included.
    pub files: u64,
    /// Bytes of file content written.
    pub bytes: u64,
}

impl SourceRepo {
    /// [`SourceRepo::write_tree_change_tar`] into a tar stream in memory.
    pub fn tree_change_tar(
        &self,
        old: Oid,
        new: Oid,
        prefix: &str,
        root: &Path,
        org: &str,
    ) -> Result<(Vec<u8>, TreeChange), GitError> {
        let mut builder = tar::Builder::new(Vec::new());
        builder.mode(tar::HeaderMode::Deterministic);
        let change = self.write_tree_change_tar(old, new, prefix, &mut builder, root, org)?;
        let bytes = builder.into_inner().map_err(|source| GitError::Tar { path: self.path().to_owned(), source })?;
        Ok((bytes, change))
    }

    /// Writes into `builder`, under `prefix/`, every file of tree `new` that differs from tree
    /// `old` (same fixed metadata as [`SourceRepo::write_tree_tar`]; a submodule whose pinned
    /// commit changed is written whole, as [`SourceRepo::write_tree_tar_with_submodules`] does) and
    /// returns what changed.
    pub fn write_tree_change_tar<W: Write>(
        &self,
        old: Oid,
        new: Oid,
        prefix: &str,
        builder: &mut tar::Builder<W>,
        root: &Path,
        org: &str,
    ) -> Result<TreeChange, GitError> {
        let git = self.git();
        let old_tree = git.find_tree(old).map_err(self.err("find tree"))?;
        let new_tree = git.find_tree(new).map_err(self.err("find tree"))?;
        let mut opts = DiffOptions::new();
        opts.include_typechange(true);
        let diff =
            git.diff_tree_to_tree(Some(&old_tree), Some(&new_tree), Some(&mut opts)).map_err(self.err("diff"))?;
        let mut out = TreeChange::default();
        let mut paths = BTreeSet::new();
        let mut gone = BTreeSet::new();
        let mut submodules: Option<Vec<Submodule>> = None;
        let lossy = |p: Option<&[u8]>| p.map(|b| String::from_utf8_lossy(b).into_owned());
        for delta in diff.deltas() {
            let (old_path, new_path) = (lossy(delta.old_file().path_bytes()), lossy(delta.new_file().path_bytes()));
            for p in old_path.iter().chain(new_path.iter()) {
                paths.insert(p.clone());
            }
            if let Some(p) = &old_path {
                let mut dir = p.as_str();
                while let Some((parent, _)) = dir.rsplit_once('/') {
                    let in_new = new_tree.get_path(Path::new(parent)).ok().and_then(|e| e.kind());
                    if in_new != Some(ObjectType::Tree) {
                        gone.insert(parent.to_owned());
                    }
                    dir = parent;
                }
            }
            if delta.status() == Delta::Deleted {
                continue;
            }
            let (Some(path), file) = (new_path, delta.new_file()) else { continue };
            let full = format!("{prefix}/{path}");
            let result = match file.mode() {
                FileMode::Commit => {
                    let subs = match &submodules {
                        Some(s) => s,
                        None => submodules.insert(self.submodules(new)?),
                    };
                    let sub = subs.iter().find(|s| s.path == path).cloned().unwrap_or_else(|| Submodule {
                        path: path.clone(),
                        name: path.clone(),
                        url: None,
                        commit: file.id().to_string(),
                    });
                    let mut export = SubmoduleExport::default();
                    let Some(repo) = self.find_submodule(&sub, root, org) else {
                        out.missing.push(sub);
                        continue;
                    };
                    let tree = repo.commit(&sub.commit)?.tree_id();
                    let mut h = header(tar::EntryType::Directory, 0o755, 0);
                    builder
                        .append_data(&mut h, format!("{full}/"), std::io::empty())
                        .map_err(|source| GitError::Tar { path: self.path().to_owned(), source })?;
                    let sub_org = sub
                        .url
                        .as_deref()
                        .and_then(|u| crate::submodule::org_repo_of_url(u, org))
                        .map_or_else(|| org.to_owned(), |(o, _)| o);
                    repo.export(tree, &full, &format!("{path}/"), builder, root, &sub_org, 1, &mut export)?;
                    out.files += export.stats.files;
                    out.bytes += export.stats.bytes;
                    out.missing.extend(export.missing);
                    Ok(())
                }
                FileMode::Blob | FileMode::BlobExecutable | FileMode::Link => {
                    let blob = git.find_blob(file.id()).map_err(self.err("read blob"))?;
                    out.files += 1;
                    out.bytes += blob.size() as u64;
                    if file.mode() == FileMode::Link {
                        let target = String::from_utf8_lossy(blob.content()).into_owned();
                        let mut h = header(tar::EntryType::Symlink, 0o777, 0);
                        builder.append_link(&mut h, &full, target)
                    } else {
                        let mode = if file.mode() == FileMode::BlobExecutable { 0o755 } else { 0o644 };
                        let mut h = header(tar::EntryType::Regular, mode, blob.size() as u64);
                        builder.append_data(&mut h, &full, blob.content())
                    }
                }
                _ => continue,
            };
            result.map_err(|source| GitError::Tar { path: self.path().to_owned(), source })?;
            out.written.push(path);
        }
        out.paths = paths.into_iter().collect();
        out.written.sort();
        let mut gone: Vec<String> = gone.into_iter().collect();
        gone.sort_by(|a, b| b.matches('/').count().cmp(&a.matches('/').count()).then_with(|| a.cmp(b)));
        out.gone_dirs = gone;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::test_git as git;

    #[test]
    fn only_what_changed_is_written_and_the_rest_is_listed() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        git(dir, &["init", "-q"]);
        let write = |p: &str, c: &str| {
            let p = dir.join(p);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, c).unwrap();
        };
        write("a/b.txt", "b\n");
        write("a/deep/x.txt", "x\n");
        write("same.txt", "same\n");
        write("c.txt", "old\n");
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-qm", "old"]);
        let old = git(dir, &["rev-parse", "HEAD^{tree}"]);
        std::fs::remove_dir_all(dir.join("a")).unwrap();
        write("a", "now a file\n");
        write("c.txt", "new\n");
        write("d/e.txt", "e\n");
        std::os::unix::fs::symlink("c.txt", dir.join("link")).unwrap();
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-qm", "new"]);
        let new = git(dir, &["rev-parse", "HEAD^{tree}"]);

        let repo = SourceRepo::open(dir).unwrap();
        let mut builder = tar::Builder::new(Vec::new());
        let (old, new) = (Oid::from_str(&old).unwrap(), Oid::from_str(&new).unwrap());
        let change = repo.write_tree_change_tar(old, new, "repo", &mut builder, dir, "o").unwrap();
        assert_eq!(change.paths, ["a", "a/b.txt", "a/deep/x.txt", "c.txt", "d/e.txt", "link"]);
        assert_eq!(change.written, ["a", "c.txt", "d/e.txt", "link"]);
        assert_eq!(change.gone_dirs, ["a/deep", "a"]);
        assert_eq!((change.files, change.bytes), (4, 11 + 4 + 2 + 5));
        let bytes = builder.into_inner().unwrap();
        let mut names = Vec::new();
        for e in tar::Archive::new(&bytes[..]).entries().unwrap() {
            let e = e.unwrap();
            assert_eq!(e.header().mtime().unwrap(), crate::SOURCE_MTIME);
            names.push(e.path().unwrap().display().to_string());
        }
        names.sort();
        assert_eq!(names, ["repo/a", "repo/c.txt", "repo/d/e.txt", "repo/link"]);
        // No change, nothing written.
        let mut builder = tar::Builder::new(Vec::new());
        let none = repo.write_tree_change_tar(new, new, "repo", &mut builder, dir, "o").unwrap();
        assert_eq!(none, TreeChange::default());
    }
}
