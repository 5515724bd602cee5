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
    /// A name that becomes a path component (instance_id, org, repo) could leave its folder.
    #[error("line {line}: field `{field}`: {value:?} {why}")]
    UnsafeName {
        /// 1-based line number in the JSONL input.
        line: usize,
        /// `instance_id`, `org` or `repo`.
        field: &'static str,
        /// The value.
        value: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// A record's `instance_id` is not the one its org, repo and number give.
    #[error("line {line}: field `instance_id`: {instance_id:?} {why}")]
    WrongId {
        /// 1-based line number in the JSONL input.
        line: usize,
        /// The id the record carries.
        instance_id: String,
        /// What it should be.
        why: String,
    },
    /// Two records share an instance id.
    #[error("line {line}: instance {instance_id} already appeared on line {first}")]
    Duplicate {
        /// 1-based line number of the second record.
        line: usize,
        /// 1-based line number of the first.
        first: usize,
        /// The id.
        instance_id: String,
    },
    /// Reading or writing failed.
    #[error("i/o error on records")]
    Io(#[from] io::Error),
}

/// What serde says about one line of a JSONL file, its position given as the column alone: the
/// caller names the file's line, which serde (reading the line by itself) would call line 1.
pub fn json_line_error(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let position = format!(" at line {} column {}", e.line(), e.column());
    match text.strip_suffix(&position) {
        Some(bare) if e.line() > 0 => format!("{bare}, at column {}", e.column()),
        _ => text,
    }
}

/// A text that should name a day or a point in time does not.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DateError {
    /// Not a real `YYYY-MM-DD` day.
    #[error("`{0}` is not a YYYY-MM-DD day")]
    NotADay(String),
    /// Not a day followed by nothing or by `T`/space and a time.
    #[error("`{0}` is not an RFC 3339 date")]
    NotATimestamp(String),
}
