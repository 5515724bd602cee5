//! Reading records from either file a dataset ships: JSONL, or an instances Parquet table
//! written by swe-forge. The format is decided by the file's first bytes (`PAR1`), not its name.

use std::fs::File;
use std::io::BufReader;
use std::path::Path;

use swe_forge_core::Instance;

use crate::table::is_parquet;
use crate::{ExportError, read_instances_parquet};

/// The records in `path`: an instances Parquet table when the file starts with `PAR1`, JSONL
/// otherwise. A Parquet file holding another table (a `swebench` or tests export) is refused.
pub fn read_records(path: impl AsRef<Path>) -> Result<Vec<Instance>, ExportError> {
    let path = path.as_ref();
    if is_parquet(path)? {
        return read_instances_parquet(path);
    }
    let file = File::open(path).map_err(|source| ExportError::Io { path: path.to_owned(), source })?;
    swe_forge_core::read_jsonl(BufReader::new(file))
        .map_err(|source| ExportError::ReadRecords { path: path.to_owned(), source })
}
