//! Opening a local repository and exporting a commit's tree.

use std::io::Write;
use std::path::{Path, PathBuf};

use git2::{ObjectType, Oid, Repository, TreeWalkMode, TreeWalkResult};

use crate::GitError;

/// A local repository that holds the commits of one GitHub repository.
pub struct SourceRepo {
    repo: Repository,
    path: PathBuf,
}

/// What a tree export contained.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct TreeStats {
    /// Regular files and symlinks written.
    pub files: u64,
    /// Bytes of file content written.
    pub bytes: u64,
    /// Submodule entries (gitlinks) that were not expanded.
    pub submodules: u64,
}

impl SourceRepo {
    /// Opens the repository at `path` (bare or with a work tree).
    pub fn open(path: &Path) -> Result<SourceRepo, GitError> {
        let repo =
            Repository::open(path).map_err(|source| GitError::Git { op: "open", path: path.to_owned(), source })?;
        Ok(SourceRepo { repo, path: path.to_owned() })
    }

    /// Finds `org/repo` under `root`: `root/org/repo`, `root/org/repo.git` or `root/org__repo`.
    pub fn locate(root: &Path, org: &str, repo: &str) -> Result<SourceRepo, GitError> {
        let candidates = [
            root.join(org).join(repo),
            root.join(org).join(format!("{repo}.git")),
            root.join(format!("{org}__{repo}")),
            root.join(format!("{org}__{repo}.git")),
        ];
        for c in &candidates {
            if c.exists() {
                return SourceRepo::open(c);
            }
        }
        Err(GitError::NotFound {
            org: org.to_owned(),
            repo: repo.to_owned(),
            root: root.to_owned(),
            tried: candidates.iter().map(|c| c.display().to_string()).collect::<Vec<_>>().join(", "),
        })
    }

    /// Path of the repository.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The underlying libgit2 handle.
    pub fn git(&self) -> &Repository {
        &self.repo
    }

    /// Resolves a commit sha, failing clearly when the repository does not have it.
    pub fn commit(&self, sha: &str) -> Result<git2::Commit<'_>, GitError> {
        let missing = |source| GitError::MissingCommit { sha: sha.to_owned(), path: self.path.clone(), source };
        let oid = Oid::from_str(sha).map_err(missing)?;
        self.repo.find_commit(oid).map_err(missing)
    }

    /// Whether commit `base` contains commit `ancestor` (is it, or descends from it); false when
    /// either is missing.
    pub fn contains(&self, base: &str, ancestor: &str) -> bool {
        match (self.commit(base), self.commit(ancestor)) {
            (Ok(b), Ok(a)) => b.id() == a.id() || self.repo.graph_descendant_of(b.id(), a.id()).unwrap_or(false),
            _ => false,
        }
    }

    /// The content of `path` (relative to the root) at commit `sha`, when it is a file there.
    pub fn file_at(&self, sha: &str, path: &str) -> Option<Vec<u8>> {
        let tree = self.commit(sha).ok()?.tree().ok()?;
        let entry = tree.get_path(std::path::Path::new(path)).ok()?;
        let blob = self.repo.find_blob(entry.id()).ok()?;
        Some(blob.content().to_vec())
    }

    /// Blob id of `path` at commit `sha`, when it is a file there.
    pub fn blob_id_at(&self, sha: &str, path: &str) -> Option<String> {
        let tree = self.commit(sha).ok()?.tree().ok()?;
        let entry = tree.get_path(std::path::Path::new(path)).ok()?;
        (entry.kind() == Some(ObjectType::Blob)).then(|| entry.id().to_string())
    }

    /// Every file path of the tree of commit `sha`.
    pub fn paths_at(&self, sha: &str) -> Result<Vec<String>, GitError> {
        let tree = self.commit(sha)?.tree().map_err(self.err("read tree"))?;
        let mut out = Vec::new();
        tree.walk(TreeWalkMode::PreOrder, |dir, e| {
            if e.kind() == Some(ObjectType::Blob) {
                out.push(format!("{dir}{}", String::from_utf8_lossy(e.name_bytes())));
            }
            TreeWalkResult::Ok
        })
        .map_err(self.err("walk tree"))?;
        Ok(out)
    }

    pub(crate) fn err(&self, op: &'static str) -> impl FnOnce(git2::Error) -> GitError + '_ {
        move |source| GitError::Git { op, path: self.path.clone(), source }
    }

    /// Writes the tree `tree_id` into `builder` under `prefix/`, with fixed timestamps and
    /// owners so that the same tree always yields the same bytes. Gitlinks are counted, not expanded.
    pub fn write_tree_tar<W: Write>(
        &self,
        tree_id: Oid,
        prefix: &str,
        builder: &mut tar::Builder<W>,
    ) -> Result<TreeStats, GitError> {
        self.tree_tar(tree_id, prefix, builder, false).map(|(stats, _)| stats)
    }

    /// Like [`SourceRepo::write_tree_tar`], leaving out the files whose content the repository
    /// does not have (a partial clone or snapshot that omits its largest blobs); returns their
    /// paths (relative to the tree) beside the stats.
    pub fn write_tree_tar_present<W: Write>(
        &self,
        tree_id: Oid,
        prefix: &str,
        builder: &mut tar::Builder<W>,
    ) -> Result<(TreeStats, Vec<String>), GitError> {
        self.tree_tar(tree_id, prefix, builder, true)
    }

    /// Paths (relative to the tree) of the files of tree `tree_id` whose content the repository
    /// does not have.
    pub fn absent_blobs(&self, tree_id: Oid) -> Result<Vec<String>, GitError> {
        let tree = self.repo.find_tree(tree_id).map_err(self.err("find tree"))?;
        let odb = self.repo.odb().map_err(self.err("open object database"))?;
        let mut out = Vec::new();
        tree.walk(TreeWalkMode::PreOrder, |dir, entry| {
            if entry.kind() == Some(ObjectType::Blob) && !odb.exists(entry.id()) {
                out.push(format!("{dir}{}", String::from_utf8_lossy(entry.name_bytes())));
            }
            TreeWalkResult::Ok
        })
        .map_err(self.err("walk tree"))?;
        Ok(out)
    }

    fn tree_tar<W: Write>(
        &self,
        tree_id: Oid,
        prefix: &str,
        builder: &mut tar::Builder<W>,
        skip_absent: bool,
    ) -> Result<(TreeStats, Vec<String>), GitError> {
        let tree = self.repo.find_tree(tree_id).map_err(self.err("find tree"))?;
        let mut stats = TreeStats::default();
        let mut absent = Vec::new();
        let mut io_err: Option<std::io::Error> = None;
        let mut git_err: Option<git2::Error> = None;
        let walked = tree.walk(TreeWalkMode::PreOrder, |dir, entry| {
            let name = String::from_utf8_lossy(entry.name_bytes()).into_owned();
            let path = format!("{prefix}/{dir}{name}");
            let result = match entry.kind() {
                Some(ObjectType::Tree) => {
                    let mut h = header(tar::EntryType::Directory, 0o755, 0);
                    builder.append_data(&mut h, format!("{path}/"), std::io::empty())
                }
                Some(ObjectType::Blob) => {
                    let blob = match self.repo.find_blob(entry.id()) {
                        Ok(b) => b,
                        Err(e) if skip_absent && e.code() == git2::ErrorCode::NotFound => {
                            absent.push(format!("{dir}{name}"));
                            return TreeWalkResult::Ok;
                        }
                        Err(e) => {
                            git_err = Some(e);
                            return TreeWalkResult::Abort;
                        }
                    };
                    stats.files += 1;
                    stats.bytes += blob.size() as u64;
                    if entry.filemode() == 0o120000 {
                        let target = String::from_utf8_lossy(blob.content()).into_owned();
                        let mut h = header(tar::EntryType::Symlink, 0o777, 0);
                        builder.append_link(&mut h, &path, target)
                    } else {
                        let mode = if entry.filemode() & 0o111 != 0 { 0o755 } else { 0o644 };
                        let mut h = header(tar::EntryType::Regular, mode, blob.size() as u64);
                        builder.append_data(&mut h, &path, blob.content())
                    }
                }
                Some(ObjectType::Commit) => {
                    stats.submodules += 1;
                    Ok(())
                }
                _ => Ok(()),
            };
            match result {
                Ok(()) => TreeWalkResult::Ok,
                Err(e) => {
                    io_err = Some(e);
                    TreeWalkResult::Abort
                }
            }
        });
        // An aborted walk is an error of its own; the reason it was aborted comes first.
        if let Some(source) = git_err {
            return Err(GitError::Git { op: "read blob", path: self.path.clone(), source });
        }
        if let Some(source) = io_err {
            return Err(GitError::Tar { path: self.path.clone(), source });
        }
        walked.map_err(self.err("walk tree"))?;
        Ok((stats, absent))
    }
}

/// Modification time of every file written from a git tree: 2000-01-01T00:00:00Z, the date of the
/// single commit inside instance images. Fixed so that a tree always gives the same bytes, and not
/// zero: some build tools treat a zero mtime as "no such file" (maven-resources-plugin 3.3.0 fails
/// with NoSuchFileException copying such a resource, MRESOURCES-289).
pub const SOURCE_MTIME: u64 = 946_684_800;

pub(crate) fn header(kind: tar::EntryType, mode: u32, size: u64) -> tar::Header {
    let mut h = tar::Header::new_gnu();
    h.set_entry_type(kind);
    h.set_mode(mode);
    h.set_size(size);
    h.set_mtime(SOURCE_MTIME);
    h.set_uid(0);
    h.set_gid(0);
    h
}
