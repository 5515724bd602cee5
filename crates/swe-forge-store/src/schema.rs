//! The schema, as an ordered list of migrations; `user_version` records how many ran.
//! Add a migration at the end; never edit one that has shipped.

use crate::{Store, StoreError};

/// Each entry is applied once, in order, in its own transaction.
pub(crate) const MIGRATIONS: &[&str] = &[
    // 1: instances and their stages, runs.
    "CREATE TABLE instances (
        instance_id TEXT PRIMARY KEY,
        input_sha256 TEXT NOT NULL,
        stage TEXT NOT NULL,
        record TEXT,
        updated_at TEXT NOT NULL
    );
    CREATE TABLE runs (
        instance_id TEXT NOT NULL,
        phase TEXT NOT NULL,
        attempt INTEGER NOT NULL,
        exit_code INTEGER,
        duration_ms INTEGER NOT NULL,
        timed_out INTEGER NOT NULL,
        log_sha256 TEXT NOT NULL,
        log_bytes INTEGER NOT NULL,
        tests INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (instance_id, phase, attempt)
    );
    CREATE TABLE events (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        instance_id TEXT NOT NULL,
        stage TEXT NOT NULL,
        duration_ms INTEGER,
        at TEXT NOT NULL
    );",
    // 2: reviews made on the review page, appended; the latest per instance is in force.
    "CREATE TABLE reviews (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        instance_id TEXT NOT NULL,
        reviewer TEXT NOT NULL,
        severe_problem INTEGER NOT NULL,
        issue_clarity INTEGER NOT NULL,
        test_adequacy INTEGER NOT NULL,
        time_to_fix TEXT,
        notes TEXT NOT NULL,
        created_at TEXT NOT NULL
    );
    CREATE INDEX reviews_by_instance ON reviews (instance_id, id);",
    // 3: evaluations of predictions, one per instance and model; the input digest says whether
    // a stored result still answers the same question (dataset record, patch, settings).
    "CREATE TABLE evaluations (
        instance_id TEXT NOT NULL,
        model TEXT NOT NULL,
        input_sha256 TEXT NOT NULL,
        result TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (instance_id, model)
    );",
    // 4: explicit decisions (keep, drop, needs_work, with a reason) made on the review page, apart
    // from the questionnaire; appended like reviews, the latest per instance is in force. A store
    // of version 3 keeps every review: this only adds a table.
    "CREATE TABLE decisions (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        instance_id TEXT NOT NULL,
        reviewer TEXT NOT NULL,
        verdict TEXT NOT NULL CHECK (verdict IN ('keep', 'drop', 'needs_work')),
        reason TEXT NOT NULL,
        created_at TEXT NOT NULL
    );
    CREATE INDEX decisions_by_instance ON decisions (instance_id, id);",
];

pub(crate) fn migrate(store: &mut Store) -> Result<(), StoreError> {
    let path = store.path().to_owned();
    let version: usize =
        store.conn.query_row("PRAGMA user_version", [], |r| r.get(0)).map_err(StoreError::sql(&path))?;
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(version) {
        let tx = store.conn.transaction().map_err(StoreError::sql(&path))?;
        tx.execute_batch(sql).map_err(StoreError::sql(&path))?;
        tx.execute_batch(&format!("PRAGMA user_version = {}", i + 1)).map_err(StoreError::sql(&path))?;
        tx.commit().map_err(StoreError::sql(&path))?;
    }
    Ok(())
}

/// Number of migrations this build knows.
#[cfg(test)]
pub(crate) fn latest() -> usize {
    MIGRATIONS.len()
}
