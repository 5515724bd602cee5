//! Errors of the state store, naming the store file.

use std::path::PathBuf;

/// A store operation failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// SQLite failed.
    #[error("state store {path}: {source}")]
    Sql {
        /// The store file.
        path: PathBuf,
        /// What SQLite said.
        #[source]
        source: rusqlite::Error,
    },
    /// A stored record does not parse.
    #[error("state store {path}: record of {instance} is corrupt: {message}")]
    Corrupt {
        /// The store file.
        path: PathBuf,
        /// The instance.
        instance: String,
        /// What serde said.
        message: String,
    },
    /// Another process has the store open as its writer.
    #[error(
        "state store {path} is in use by another swe-forge process (validate, run, revalidate or evaluate of the same folder): wait for it to end, or give this run another folder"
    )]
    InUse {
        /// The store file.
        path: PathBuf,
    },
    /// The file system failed.
    #[error("state store folder {path}")]
    Io {
        /// The folder.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
}

impl StoreError {
    pub(crate) fn sql(path: &std::path::Path) -> impl FnOnce(rusqlite::Error) -> StoreError + '_ {
        move |source| StoreError::Sql { path: path.to_owned(), source }
    }
}
