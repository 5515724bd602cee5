//! Output files of an export, written with the one output writer (`swe_forge_fs::Output`): a
//! regular file is replaced atomically (a temporary file renamed over it), devices, FIFOs and
//! symlinks' targets are written through, and inside a `swe_forge_fs::Batch` the renames of one
//! run wait for each other.

use std::io::{BufWriter, Write};
use std::path::Path;

use swe_forge_core::Instance;
use swe_forge_fs::Output;

use crate::ExportError;

/// Writes `path` with whatever `body` writes to the buffered writer it is given, then commits it.
///
/// When `body` fails the temporary file is removed and `path` is left untouched.
pub(crate) fn write_atomic<F>(path: &Path, body: F) -> Result<(), ExportError>
where
    F: FnOnce(&mut BufWriter<&mut Output>) -> Result<(), ExportError>,
{
    let io_err = |source| ExportError::Io { path: path.to_owned(), source };
    let out_err = |e: swe_forge_fs::OutputError| ExportError::Io { path: path.to_owned(), source: e.source };
    let mut out = Output::create(path).map_err(out_err)?;
    {
        let mut writer = BufWriter::new(&mut out);
        body(&mut writer)?;
        writer.flush().map_err(io_err)?;
    }
    out.commit().map_err(out_err)
}

/// Writes `records` to `path` as JSONL (one record a line), atomically.
pub fn write_jsonl(path: impl AsRef<Path>, records: &[Instance]) -> Result<(), ExportError> {
    let path = path.as_ref();
    write_atomic(path, |w| {
        swe_forge_core::write_jsonl(w, records).map_err(|source| ExportError::Records { path: path.to_owned(), source })
    })
}

/// Writes `bytes` to `path`, atomically.
pub fn write_file(path: impl AsRef<Path>, bytes: &[u8]) -> Result<(), ExportError> {
    let path = path.as_ref();
    write_atomic(path, |w| w.write_all(bytes).map_err(|source| ExportError::Io { path: path.to_owned(), source }))
}
