//! Files in and out of the commands: records as JSONL or Parquet (stdin and stdout for `-`), any
//! other output through the one output writer, and the kept run logs of a record.

use std::path::Path;

use anyhow::{Context, Result};
use swe_forge_agree::PhaseLogs;
use swe_forge_core::{Instance, Phase};
use swe_forge_validate::kept_parse;

/// Records from a JSONL file or an instances Parquet table swe-forge wrote (told apart by the
/// file's first bytes); `-` reads either from stdin.
pub fn read_records(path: &Path) -> Result<Vec<Instance>> {
    if path.as_os_str() == "-" {
        return swe_forge_export::read_records_stream(std::io::stdin().lock(), Path::new("stdin"))
            .context("reading records from stdin");
    }
    swe_forge_export::read_records(path).with_context(|| format!("reading records {}", path.display()))
}

/// [`read_records`] one record at a time: a JSONL input is read line by line, so memory does not
/// grow with it (an instances Parquet table is read a row group at a time). Errors carry the context
/// [`read_records`] gives them.
pub fn open_records(path: &Path) -> Result<impl Iterator<Item = Result<Instance>>> {
    let context = if path.as_os_str() == "-" {
        "reading records from stdin".to_owned()
    } else {
        format!("reading records {}", path.display())
    };
    let stream = if path.as_os_str() == "-" {
        swe_forge_export::open_records_stream(std::io::stdin().lock(), Path::new("stdin"))
    } else {
        swe_forge_export::open_records(path)
    }
    .with_context(|| context.clone())?;
    Ok(stream.map(move |r| r.with_context(|| context.clone())))
}

/// Runs `read` (reading an input file) on a blocking thread, so that an async command waiting on
/// a FIFO nobody writes still answers SIGINT and SIGTERM (`crate::interrupt` drops the work
/// between two polls, which a read on the runtime's thread would never reach).
pub async fn off_thread<T: Send + 'static>(read: impl FnOnce() -> Result<T> + Send + 'static) -> Result<T> {
    tokio::task::spawn_blocking(read).await.context("reading an input")?
}

/// A pipeline file read by [`off_thread`]: `--pipeline FIFO` waits for its writer and still
/// answers SIGINT and SIGTERM.
pub async fn load_pipeline(path: &Path) -> Result<swe_forge_config::Pipeline> {
    let path = path.to_owned();
    off_thread(move || Ok(swe_forge_config::Pipeline::load(&path)?)).await
}

/// Refuses `-` as a folder output: a folder of files cannot go to stdout.
pub fn folder_out(flag: &str, path: &Path) -> Result<()> {
    if path.as_os_str() == "-" {
        anyhow::bail!(
            "{flag} - : this command writes a folder of files, which cannot go to stdout; give a folder path"
        );
    }
    Ok(())
}

/// The first attempt of each run: its kept log parsed again with this build's parsers, else the
/// parse kept when it ran, Go subtests named as the repository's Multi-SWE-bench handler names
/// them (`pipelines/naming/msb.toml`); None unless all three exist.
pub(crate) fn read_logs(work_dir: &Path, ours: &Instance) -> Option<PhaseLogs> {
    let get = |p: Phase| kept_parse(ours, work_dir, p.as_str());
    Some(PhaseLogs { run: get(Phase::Run)?, test: get(Phase::Test)?, fix: get(Phase::Fix)? })
}
