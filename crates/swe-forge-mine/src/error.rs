//! Errors of the miner. Per-PR problems (a diff that cannot be read, an unmerged PR) are not
//! errors: they end as a [`crate::Decision`] in the funnel. These stop a whole mine.

use std::path::{Path, PathBuf};

/// A problem that stops mining.
#[derive(Debug, thiserror::Error)]
pub enum MineError {
    /// Reading or writing a file failed.
    #[error("i/o on {path}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A file written by an earlier run cannot be read back.
    #[error("{path}:{line}: unreadable line ({message})")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// 1-based line number (0: the whole file).
        line: usize,
        /// What the parser said.
        message: String,
    },
    /// A GitHub export given for issue texts is not one (not JSON, or not issues, pull requests or
    /// GH Archive events).
    #[error("{path}: not a GitHub issues export or GH Archive dump ({message})")]
    Export {
        /// The file.
        path: PathBuf,
        /// What the reader said (line and column).
        message: String,
    },
    /// The output file holds records that are no candidates of `mine` (a validated dataset, an
    /// export): resuming from it would mix them in, and appending would spoil it.
    #[error(
        "{path}:{line}: a record without the `mining` notes swe-forge mine writes: {path} is not a candidates file \
         of mine (a dataset or an export?); give -o a file of its own"
    )]
    NotCandidates {
        /// The file.
        path: PathBuf,
        /// 1-based line number of the first such record.
        line: usize,
    },
    /// The local repository failed.
    #[error(transparent)]
    Git(#[from] swe_forge_git::GitError),
    /// A libgit2 operation on a mirror failed.
    #[error("git operation `{op}` failed in mirror {path}")]
    Mirror {
        /// What we were doing.
        op: &'static str,
        /// The mirror.
        path: PathBuf,
        /// What libgit2 said.
        #[source]
        source: git2::Error,
    },
    /// An option is invalid (date, repository name, branch).
    #[error("invalid {what}: {message}")]
    Invalid {
        /// Which option.
        what: &'static str,
        /// Why.
        message: String,
    },
    /// GitHub answered with an error that retries and other tokens could not get around.
    #[error("GitHub API: {method} {path}: {message}")]
    Api {
        /// HTTP method.
        method: &'static str,
        /// Path and query of the request (never a token).
        path: String,
        /// HTTP status of the final answer; none when retries ran out.
        status: Option<u16>,
        /// Status and GitHub's message.
        message: String,
    },
    /// The API could not be connected to at all (name lookup, connection refused, connect
    /// timeout) before any answer came: no network, or a proxy or firewall in the way.
    #[error("cannot reach the GitHub API at {api_url}: {message} (no network, or a proxy or firewall in the way?)")]
    Unreachable {
        /// The API root.
        api_url: String,
        /// What failed.
        message: String,
    },
    /// Every token was refused by GitHub (401): the message names them by position, never by value.
    #[error("GitHub refused every token: {0}")]
    TokensRefused(String),
    /// Building or using the HTTP client failed.
    #[error("GitHub client: {0}")]
    Client(String),
}

impl MineError {
    pub(crate) fn io(path: &Path) -> impl FnOnce(std::io::Error) -> MineError + '_ {
        move |source| MineError::Io { path: path.to_owned(), source }
    }
}
