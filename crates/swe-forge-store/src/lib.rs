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
pub use reviews::ReviewRow;

use std::path::{Path, PathBuf};

/// An open store.
pub struct Store {
    pub(crate) conn: rusqlite::Connection,
    path: PathBuf,
}

impl Store {
    /// Opens (creating if needed) the store at `path` and brings its schema up to date.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| StoreError::Io { path: dir.to_owned(), source })?;
        }
        let conn = rusqlite::Connection::open(path).map_err(StoreError::sql(path))?;
        conn.execute_batch(
            "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA busy_timeout=10000; PRAGMA foreign_keys=ON;",
        )
        .map_err(StoreError::sql(path))?;
        let mut store = Store { conn, path: path.to_owned() };
        schema::migrate(&mut store)?;
        Ok(store)
    }

    /// Where the store lives.
    pub fn path(&self) -> &Path {
        &self.path
    }
}
