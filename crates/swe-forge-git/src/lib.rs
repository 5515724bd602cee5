//! Local git repositories through git2: find a repository for a record, read the tree at a
//! commit into a tar stream (the build context of an instance image), and check that patches
//! apply, in order, on top of a commit.
//!
//! Never touches the network: repositories are local clones or mirrors. Never writes to the
//! source repository either: patches are applied to in-memory trees.

mod change;
mod error;
mod patch;
mod repo;
mod safety;
mod submodule;

pub use change::TreeChange;
pub use error::GitError;
pub use patch::{ApplyFailure, PatchedFile, apply_patches, patched_files};
pub use repo::{SOURCE_MTIME, SourceRepo, TreeStats};
pub use safety::unsafe_patch_reason;
pub use submodule::{Submodule, SubmoduleExport};

/// Runs the git command line in `dir` for the tests (a fixed identity, `main`, local submodule
/// URLs allowed) and returns its trimmed stdout; a failing command fails the test.
#[cfg(test)]
pub(crate) use swe_forge_test_support::git as test_git;
