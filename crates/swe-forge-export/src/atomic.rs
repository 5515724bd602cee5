//! Atomic file replacement: the content goes to a temporary file in the destination's
//! directory, is flushed and synced, then renamed over the destination, so a reader (or a
//! crash) only ever sees the old file or the complete new one.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use swe_forge_core::Instance;

use crate::ExportError;

/// Writes `path` atomically with whatever `body` writes to the buffered writer it is given.
///
/// When `body` fails the temporary file is removed and `path` is left untouched.
pub(crate) fn write_atomic<F>(path: &Path, body: F) -> Result<(), ExportError>
where
    F: FnOnce(&mut BufWriter<&mut File>) -> Result<(), ExportError>,
{
    let io_err = |source: io::Error| ExportError::Io { path: path.to_owned(), source };
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let prefix = match path.file_name() {
        Some(name) => format!(".{}.", name.to_string_lossy()),
        None => ".swe-forge-export.".to_owned(),
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    // tempfile creates files 0600; ask for 0666 so the final file gets the umask's usual mode.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut tmp = builder.tempfile_in(dir).map_err(io_err)?;
    {
        let mut writer = BufWriter::new(tmp.as_file_mut());
        body(&mut writer)?;
        writer.flush().map_err(io_err)?;
    }
    tmp.as_file().sync_all().map_err(io_err)?;
    tmp.persist(path).map_err(|e| io_err(e.error))?;
    // Make the rename itself durable; best effort, directories cannot be opened everywhere.
    #[cfg(unix)]
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
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
