//! Errors of reading and writing agreement reports. Comparing never fails: every problem of an
//! instance ends as a classified cause in its row.

use std::path::PathBuf;

/// An agreement report could not be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AgreeError {
    /// Reading or writing a file failed.
    #[error("{what} {path}")]
    Io {
        /// What was being done (`writing report`, `reading parsed log`).
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A JSON document (report, parsed log) is malformed.
    #[error("malformed JSON in {path}")]
    Json {
        /// The file.
        path: PathBuf,
        /// What serde said.
        #[source]
        source: serde_json::Error,
    },
}
