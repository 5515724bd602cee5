//! Reading records from either file a dataset ships: JSONL, or an instances Parquet table
//! written by swe-forge. The format is decided by the file's first bytes (`PAR1`), not its name.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use swe_forge_core::Instance;

use crate::ExportError;
use crate::instances::{InstanceRows, open_instances_parquet};
use crate::table::is_parquet;

/// Writes `records` to `path` as JSONL (one record a line), atomically.
pub fn write_jsonl(path: impl AsRef<Path>, records: &[Instance]) -> Result<(), ExportError> {
    let mut w = JsonlWriter::create(path.as_ref())?;
    for r in records {
        w.write(r)?;
    }
    w.finish()
}

/// Records written as JSONL one at a time, through the one output writer (`-` is stdout); the
/// file is the one [`write_jsonl`] writes, put in place by [`JsonlWriter::finish`] (dropped
/// before, it leaves the previous file).
pub struct JsonlWriter {
    path: PathBuf,
    out: BufWriter<swe_forge_fs::Output>,
}

impl JsonlWriter {
    /// Prepares the output `path`.
    pub fn create(path: &Path) -> Result<JsonlWriter, ExportError> {
        Ok(JsonlWriter { path: path.to_owned(), out: BufWriter::new(swe_forge_fs::Output::create(path)?) })
    }

    /// Writes one record and its line feed.
    pub fn write(&mut self, record: &Instance) -> Result<(), ExportError> {
        let err = |source: std::io::Error| ExportError::Records { path: self.path.clone(), source: source.into() };
        serde_json::to_writer(&mut self.out, record).map_err(|e| err(e.into()))?;
        self.out.write_all(b"\n").map_err(err)
    }

    /// Flushes the records and puts the file in place.
    pub fn finish(mut self) -> Result<(), ExportError> {
        let path = self.path;
        self.out.flush().map_err(|source| ExportError::Records { path: path.clone(), source: source.into() })?;
        let out = self.out.into_inner().map_err(|e| ExportError::Io { path: path.clone(), source: e.into_error() })?;
        Ok(out.commit()?)
    }
}

/// The records in `path`: an instances Parquet table when the file starts with `PAR1`, JSONL
/// otherwise. A Parquet file holding another table (a `swebench` or tests export) is refused.
///
/// A FIFO, a device or another file that cannot be read twice is read once, through
/// [`read_records_stream`].
pub fn read_records(path: impl AsRef<Path>) -> Result<Vec<Instance>, ExportError> {
    open_records(path)?.collect()
}

/// The records in `path` one at a time, read as [`read_records`] reads them: JSONL is read line
/// by line (each line capped, [`swe_forge_core::MAX_LINE`]; only the ids seen are kept, to refuse
/// a repeated one), so memory does not grow with the file; an instances Parquet table is read
/// a row group at a time. The iterator ends after its first error.
pub fn open_records(path: impl AsRef<Path>) -> Result<RecordStream<'static>, ExportError> {
    let path = path.as_ref();
    let io = |source| ExportError::Io { path: path.to_owned(), source };
    let file = File::open(path).map_err(io)?;
    if !file.metadata().map_err(io)?.is_file() {
        return open_records_stream(file, path);
    }
    drop(file);
    if is_parquet(path)? {
        return Ok(RecordStream::parquet(path, open_instances_parquet(path)?));
    }
    let file = File::open(path).map_err(|source| ExportError::Io { path: path.to_owned(), source })?;
    Ok(RecordStream::jsonl(path, Box::new(BufReader::new(file))))
}

/// Most bytes of a Parquet table read from a stream (stdin, a FIFO) into a temporary file, the
/// reader needing to seek: 4 GiB.
pub const MAX_STREAMED_PARQUET: u64 = 4 << 30;

/// The records of a stream read once (stdin, a FIFO), named `what` in errors: a Parquet table is
/// copied into a temporary file first (at most [`MAX_STREAMED_PARQUET`] bytes); JSONL is read
/// line by line, each line capped ([`swe_forge_core::MAX_LINE`]).
pub fn read_records_stream(stream: impl Read, what: &Path) -> Result<Vec<Instance>, ExportError> {
    open_records_stream(stream, what)?.collect()
}

/// [`read_records_stream`] one record at a time (see [`open_records`]).
pub fn open_records_stream<'a>(mut stream: impl Read + 'a, what: &Path) -> Result<RecordStream<'a>, ExportError> {
    let io = |source| ExportError::Io { path: what.to_owned(), source };
    let mut magic = Vec::with_capacity(4);
    (&mut stream).take(4).read_to_end(&mut magic).map_err(io)?;
    let rest = std::io::Cursor::new(magic.clone()).chain(stream);
    if magic != b"PAR1" {
        return Ok(RecordStream::jsonl(what, Box::new(BufReader::new(rest))));
    }
    let mut tmp = tempfile::NamedTempFile::new().map_err(io)?;
    let copied = std::io::copy(&mut rest.take(MAX_STREAMED_PARQUET + 1), &mut tmp).map_err(io)?;
    if copied > MAX_STREAMED_PARQUET {
        return Err(io(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("a Parquet table read from a stream may hold at most {} GiB", MAX_STREAMED_PARQUET >> 30),
        )));
    }
    // Read from the open file: the temporary file's name may go before the reading ends.
    Ok(RecordStream::parquet(what, open_instances_parquet(tmp.path())?))
}

/// Records read one at a time ([`open_records`], [`open_records_stream`]).
pub struct RecordStream<'a> {
    path: PathBuf,
    source: Source<'a>,
}

enum Source<'a> {
    Jsonl(swe_forge_core::JsonlRecords<Box<dyn BufRead + 'a>>),
    Parquet(InstanceRows),
}

impl<'a> RecordStream<'a> {
    fn jsonl(path: &Path, reader: Box<dyn BufRead + 'a>) -> RecordStream<'a> {
        RecordStream { path: path.to_owned(), source: Source::Jsonl(swe_forge_core::jsonl_records(reader)) }
    }

    fn parquet(path: &Path, rows: InstanceRows) -> RecordStream<'a> {
        RecordStream { path: path.to_owned(), source: Source::Parquet(rows) }
    }
}

impl Iterator for RecordStream<'_> {
    type Item = Result<Instance, ExportError>;

    fn next(&mut self) -> Option<Result<Instance, ExportError>> {
        match &mut self.source {
            Source::Jsonl(lines) => {
                Some(lines.next()?.map_err(|source| ExportError::ReadRecords { path: self.path.clone(), source }))
            }
            Source::Parquet(rows) => rows.next(),
        }
    }
}
