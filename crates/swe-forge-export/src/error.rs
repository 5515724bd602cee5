//! Errors of exporting records to JSONL and Parquet and of reading the Parquet files back.

use std::io;
use std::path::PathBuf;

use arrow_schema::ArrowError;
use parquet::errors::ParquetError;
use swe_forge_core::RecordError;

/// An export file could not be written or read back.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExportError {
    /// Creating, writing, syncing or renaming a file failed.
    #[error("i/o error on {}", path.display())]
    Io {
        /// The file being written or read.
        path: PathBuf,
        /// What the OS said.
        #[source]
        source: io::Error,
    },
    /// Serializing the JSONL records failed.
    #[error("could not write records to {}", path.display())]
    Records {
        /// The JSONL file being written.
        path: PathBuf,
        /// The record writer's error.
        #[source]
        source: RecordError,
    },
    /// Reading the JSONL records failed.
    #[error("could not read records from {}", path.display())]
    ReadRecords {
        /// The JSONL file being read.
        path: PathBuf,
        /// The record reader's error.
        #[source]
        source: RecordError,
    },
    /// The Parquet writer or reader failed.
    #[error("parquet failed on {}", path.display())]
    Parquet {
        /// The Parquet file being written or read.
        path: PathBuf,
        /// The parquet crate's error.
        #[source]
        source: ParquetError,
    },
    /// An Arrow table could not be built or decoded.
    #[error("arrow failed on {}", path.display())]
    Arrow {
        /// The Parquet file being written or read.
        path: PathBuf,
        /// arrow's error.
        #[source]
        source: ArrowError,
    },
    /// The file holds another swe-forge table than the one asked for (e.g. a `swebench` export
    /// given where records are read).
    #[error("{} holds the `{found}` table, not `{expected}`", path.display())]
    Table {
        /// The Parquet file being read.
        path: PathBuf,
        /// The table the reader reads.
        expected: String,
        /// The table the file's metadata names.
        found: String,
    },
    /// A column is missing or has an unexpected type.
    #[error("{}: column `{column}`: {message}", path.display())]
    Column {
        /// The Parquet file being read.
        path: PathBuf,
        /// Name of the column.
        column: String,
        /// What is wrong with it.
        message: String,
    },
    /// A cell holds a value that cannot be turned back into a record field.
    #[error("{}: row {row}, column `{column}`: {message}", path.display())]
    Value {
        /// The Parquet file being read.
        path: PathBuf,
        /// 0-based row index.
        row: usize,
        /// Name of the column.
        column: String,
        /// What is wrong with the value.
        message: String,
    },
    /// A JSON cell could not be serialized or parsed.
    #[error("{}: row {row}, column `{column}`: invalid JSON", path.display())]
    Json {
        /// The Parquet file being written or read.
        path: PathBuf,
        /// 0-based row index.
        row: usize,
        /// Name of the column.
        column: String,
        /// serde_json's error.
        #[source]
        source: serde_json::Error,
    },
    /// An instance cannot be written in the asked format.
    #[error("{id}: {message}")]
    Instance {
        /// The instance's id.
        id: String,
        /// Why.
        message: String,
    },
    /// The destination of an export cannot take it.
    #[error("{}: {message}", path.display())]
    Destination {
        /// The destination given.
        path: PathBuf,
        /// Why.
        message: String,
    },
}

/// An output file that could not be prepared, written or put in place is an i/o error on it.
impl From<swe_forge_fs::OutputError> for ExportError {
    fn from(e: swe_forge_fs::OutputError) -> ExportError {
        ExportError::Io { path: e.path, source: e.source }
    }
}

/// Why a record cannot be a Harbor task.
#[derive(Debug, thiserror::Error)]
pub enum NotATask {
    /// The record has no `swe_forge` block.
    #[error("not validated by swe-forge (no `swe_forge` block)")]
    NotValidated,
    /// The record names no instance image.
    #[error("has no instance image (`swe_forge.image`)")]
    NoImage,
    /// Nothing pins the image: no registry digest and no content id.
    #[error("has neither `swe_forge.registry_image` nor `swe_forge.image_id` to pin its image")]
    Unpinned,
    /// The id cannot be a folder name on every system.
    #[error("its id is not a portable folder name ([A-Za-z0-9._-], starting with a letter or digit)")]
    IdNotPortable,
    /// A test id would break the one-id-a-line test lists.
    #[error("test id {0:?} has a line break")]
    LineBreak(String),
    /// task.toml could not be written.
    #[error("task.toml: {0}")]
    TaskToml(#[from] toml::ser::Error),
}
