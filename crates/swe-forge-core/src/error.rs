//! Errors of reading and writing records.

use std::io;

/// A record file could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// A line is not a valid record; names the line and the field.
    #[error("line {line}: field `{field}`: {message}")]
    Malformed {
        /// 1-based line number in the JSONL input.
        line: usize,
        /// Path of the offending field, `.` for the record itself.
        field: String,
        /// What serde said about it.
        message: String,
    },
    /// Reading or writing failed.
    #[error("i/o error on records")]
    Io(#[from] io::Error),
}
