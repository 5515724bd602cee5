//! The embedded state store: one SQLite file per dataset build holding every instance's
//! progress through the stages (mined, image built, each run, validated, exported) with log
//! digests and timings, the reviews people make, and the evaluations of predictions. Writes are transactions in WAL mode with
//! full sync, so a process killed at any point leaves the store at the last finished step:
//! a restart redoes at most the step that was under way, and keys make duplicates impossible.
//!
//! This crate owns the schema (`schema.rs`, migrations applied in order on open); it does not
//! know how stages are carried out.

mod error;
mod evaluations;
mod progress;
mod reviews;
mod schema;

pub use error::StoreError;
pub use progress::{RunRow, Stage, input_digest};
pub use reviews::{DecisionRow, ReviewRow};

use std::path::{Path, PathBuf};

/// An open store.
pub struct Store {
    pub(crate) conn: rusqlite::Connection,
    path: PathBuf,
    /// The writer's lock (`<store>.lock`, an exclusive `flock`) when opened with
    /// [`Store::open_writer`]; the kernel releases it with the process.
    _writer: Option<std::fs::File>,
}

impl Store {
    /// Opens (creating if needed) the store at `path` and brings its schema up to date.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        Store::open_with(path, None)
    }

    /// Opens the store as its one writer: a second process that asks while this one holds it
    /// gets [`StoreError::InUse`] at once, never a share of the work. Commands that run stages
    /// (validate, run, revalidate, evaluate) open their store this way; reviews and reads use
    /// [`Store::open`] (SQLite's own locking keeps their transactions apart).
    pub fn open_writer(path: &Path) -> Result<Store, StoreError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| StoreError::Io { path: dir.to_owned(), source })?;
        }
        let mut lock_path = path.as_os_str().to_owned();
        lock_path.push(".lock");
        let lock_path = PathBuf::from(lock_path);
        let io = |source| StoreError::Io { path: lock_path.clone(), source };
        let file = std::fs::File::options().create(true).truncate(false).write(true).open(&lock_path).map_err(io)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => return Err(StoreError::InUse { path: path.to_owned() }),
            Err(std::fs::TryLockError::Error(e)) => return Err(io(e)),
        }
        Store::open_with(path, Some(file))
    }

    fn open_with(path: &Path, writer: Option<std::fs::File>) -> Result<Store, StoreError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| StoreError::Io { path: dir.to_owned(), source })?;
        }
        let conn = rusqlite::Connection::open(path).map_err(StoreError::sql(path))?;
        conn.execute_batch(
            "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA busy_timeout=10000; PRAGMA foreign_keys=ON;",
        )
        .map_err(StoreError::sql(path))?;
        let mut store = Store { conn, path: path.to_owned(), _writer: writer };
        schema::migrate(&mut store)?;
        Ok(store)
    }

    /// Where the store lives.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_store_has_one_writer_at_a_time() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("work/state.sqlite");
        let writer = Store::open_writer(&path).unwrap();
        let second = Store::open_writer(&path);
        assert!(matches!(second, Err(StoreError::InUse { .. })), "a second writer was let in");
        // Readers (review, curate --reviews) are not held off.
        Store::open(&path).unwrap();
        drop(writer);
        Store::open_writer(&path).unwrap();
    }
}
