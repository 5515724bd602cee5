//! Errors of the review server, naming the file or address involved.

use std::path::PathBuf;

/// The review server could not start or stopped serving.
#[derive(Debug, thiserror::Error)]
pub enum ReviewError {
    /// Reading the dataset failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// A dataset line is not a record.
    #[error("{path}:{line}: {message}")]
    Dataset {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// The state store failed.
    #[error(transparent)]
    Store(#[from] swe_forge_store::StoreError),
    /// The server could not listen, or stopped accepting connections.
    #[error("review server on {addr}: {source}")]
    Listen {
        /// The address asked for.
        addr: String,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
}

impl ReviewError {
    pub(crate) fn io(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> ReviewError + '_ {
        move |source| ReviewError::Io { path: path.to_owned(), source }
    }
}
