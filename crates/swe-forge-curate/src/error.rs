//! Errors of curation, naming the file or instance involved.

use std::path::PathBuf;

/// A curation step failed.
#[derive(Debug, thiserror::Error)]
pub enum CurateError {
    /// Reading or writing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// An output file could not be prepared or put in place.
    #[error(transparent)]
    Output(#[from] swe_forge_fs::OutputError),
    /// A labels file has a line that is not `instance_id<TAB or comma>label` or a JSON object.
    #[error("{path}:{line}: {message}")]
    Labels {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        message: String,
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
    /// An option has a value that cannot be used.
    #[error("{0}")]
    Usage(String),
    /// A record could not be written.
    #[error("writing records to {path}: {source}")]
    Records {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: swe_forge_core::RecordError,
    },
}

impl CurateError {
    pub(crate) fn io(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> CurateError + '_ {
        move |source| CurateError::Io { path: path.to_owned(), source }
    }
}
