//! Errors of writing the card, naming the file involved.

use std::path::PathBuf;

/// The card could not be written.
#[derive(Debug, thiserror::Error)]
pub enum CardError {
    /// Creating a folder or writing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// An output file could not be prepared or put in place.
    #[error(transparent)]
    Output(#[from] swe_forge_fs::OutputError),
}

impl CardError {
    pub(crate) fn io(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> CardError + '_ {
        move |source| CardError::Io { path: path.to_owned(), source }
    }
}
