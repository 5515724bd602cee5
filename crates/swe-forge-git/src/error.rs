//! Errors of the git layer.

use std::path::PathBuf;

/// Something went wrong reading a local repository.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// No repository under any of the expected paths.
    #[error("no git repository for {org}/{repo} under {root} (looked for {tried})")]
    NotFound {
        /// Owner.
        org: String,
        /// Name.
        repo: String,
        /// Where we looked.
        root: PathBuf,
        /// The candidate paths, comma separated.
        tried: String,
    },
    /// A commit is missing from the repository.
    #[error("commit {sha} not found in {path}")]
    MissingCommit {
        /// The requested commit.
        sha: String,
        /// The repository.
        path: PathBuf,
        /// What libgit2 said.
        #[source]
        source: git2::Error,
    },
    /// Any other libgit2 failure.
    #[error("git operation `{op}` failed in {path}")]
    Git {
        /// What we were doing.
        op: &'static str,
        /// The repository.
        path: PathBuf,
        /// What libgit2 said.
        #[source]
        source: git2::Error,
    },
    /// Writing the tar stream failed.
    #[error("writing a tar stream of {path}")]
    Tar {
        /// The repository.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}
