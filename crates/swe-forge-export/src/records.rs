//! Reading records from either file a dataset ships: JSONL, or an instances Parquet table
//! written by swe-forge. The format is decided by the file's first bytes (`PAR1`), not its name.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

use swe_forge_core::Instance;

use crate::table::is_parquet;
use crate::{ExportError, read_instances_parquet};

/// Writes `records` to `path` as JSONL (one record a line), atomically.
pub fn write_jsonl(path: impl AsRef<Path>, records: &[Instance]) -> Result<(), ExportError> {
    let path = path.as_ref();
    swe_forge_fs::write_with(path, |w| {
        swe_forge_core::write_jsonl(w, records).map_err(|source| ExportError::Records { path: path.to_owned(), source })
    })
}

/// The records in `path`: an instances Parquet table when the file starts with `PAR1`, JSONL
/// otherwise. A Parquet file holding another table (a `swebench` or tests export) is refused.
///
/// A FIFO, a device or another file that cannot be read twice is read once, through
/// [`read_records_stream`].
pub fn read_records(path: impl AsRef<Path>) -> Result<Vec<Instance>, ExportError> {
    let path = path.as_ref();
    let io = |source| ExportError::Io { path: path.to_owned(), source };
    let file = File::open(path).map_err(io)?;
    if !file.metadata().map_err(io)?.is_file() {
        return read_records_stream(file, path);
    }
    drop(file);
    if is_parquet(path)? {
        return read_instances_parquet(path);
    }
    let file = File::open(path).map_err(|source| ExportError::Io { path: path.to_owned(), source })?;
    swe_forge_core::read_jsonl(BufReader::new(file))
        .map_err(|source| ExportError::ReadRecords { path: path.to_owned(), source })
}

/// Most bytes of a Parquet table read from a stream (stdin, a FIFO) into a temporary file, the
/// reader needing to seek: 4 GiB.
pub const MAX_STREAMED_PARQUET: u64 = 4 << 30;

/// The records of a stream read once (stdin, a FIFO), named `what` in errors: a Parquet table is
/// copied into a temporary file first (at most [`MAX_STREAMED_PARQUET`] bytes); JSONL is read
/// line by line, each line capped ([`swe_forge_core::MAX_LINE`]).
pub fn read_records_stream(mut stream: impl Read, what: &Path) -> Result<Vec<Instance>, ExportError> {
    let io = |source| ExportError::Io { path: what.to_owned(), source };
    let mut magic = Vec::with_capacity(4);
    (&mut stream).take(4).read_to_end(&mut magic).map_err(io)?;
    let rest = std::io::Cursor::new(magic.clone()).chain(stream);
    if magic != b"PAR1" {
        return swe_forge_core::read_jsonl(BufReader::new(rest))
            .map_err(|source| ExportError::ReadRecords { path: what.to_owned(), source });
    }
    let mut tmp = tempfile::NamedTempFile::new().map_err(io)?;
    let copied = std::io::copy(&mut rest.take(MAX_STREAMED_PARQUET + 1), &mut tmp).map_err(io)?;
    if copied > MAX_STREAMED_PARQUET {
        return Err(io(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("a Parquet table read from a stream may hold at most {} GiB", MAX_STREAMED_PARQUET >> 30),
        )));
    }
    read_instances_parquet(tmp.path())
}
