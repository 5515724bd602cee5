//! Errors of writing an output file.

use std::io;
use std::path::PathBuf;

/// An output could not be prepared, written or put in place.
#[derive(Debug, thiserror::Error)]
#[error("{action} {}", path.display())]
pub struct OutputError {
    /// What was being done: `creating a temporary file for`, `writing`, `renaming into`, ...
    pub action: &'static str,
    /// The output's path, as given.
    pub path: PathBuf,
    /// What the OS said.
    #[source]
    pub source: io::Error,
}
