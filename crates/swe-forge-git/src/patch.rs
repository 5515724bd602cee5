//! Applying unified diffs to a commit's tree in memory, in order.

use git2::{Diff, Oid};

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
/// patch did not apply; `Err(_)` is a repository problem.
pub fn apply_patches(repo: &SourceRepo, base: &str, patches: &[&str]) -> Result<Result<Oid, ApplyFailure>, GitError> {
    let git = repo.git();
    let mut tree = repo.commit(base)?.tree().map_err(repo.err("read tree"))?;
    for (index, patch) in patches.iter().enumerate() {
        if patch.trim().is_empty() {
            continue;
        }
        let diff = match Diff::from_buffer(patch.as_bytes()) {
            Ok(d) => d,
            Err(e) => return Ok(Err(ApplyFailure { index, message: format!("not a valid diff: {}", e.message()) })),
        };
        let mut index_after = match git.apply_to_tree(&tree, &diff, None) {
            Ok(i) => i,
            Err(e) => return Ok(Err(ApplyFailure { index, message: e.message().to_owned() })),
        };
        let oid = index_after.write_tree_to(git).map_err(repo.err("write tree"))?;
        tree = git.find_tree(oid).map_err(repo.err("find tree"))?;
    }
    Ok(Ok(tree.id()))
}
