//! Reviews people make on the review page: every saved answer set is appended (never updated),
//! with the reviewer's name and the time, so the history of an instance's reviews stays auditable;
//! the latest one is the decision in force. Explicit decisions (keep, drop, needs work, with a
//! reason) are kept the same way, in a table of their own: a person may decide without answering
//! the questionnaire, and answer it without deciding.

use std::collections::BTreeMap;

use rusqlite::params;

use crate::{Store, StoreError};

/// One saved review. Scores are kept as given; the keep rule is applied by whoever reads them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReviewRow {
    /// The instance.
    pub instance_id: String,
    /// Who answered.
    pub reviewer: String,
    /// A severe problem makes the instance unusable.
    pub severe_problem: bool,
    /// Issue clarity, 0 to 3.
    pub issue_clarity: u8,
    /// Test adequacy, 0 to 3.
    pub test_adequacy: u8,
    /// Time-to-fix answer (`<15m`, `15m-1h`, `1h-4h`, `>4h`), when given.
    pub time_to_fix: Option<String>,
    /// Free notes.
    pub notes: String,
    /// When it was saved (RFC 3339, UTC, milliseconds); set by the store.
    pub created_at: String,
}

/// One saved decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecisionRow {
    /// The instance.
    pub instance_id: String,
    /// Who decided.
    pub reviewer: String,
    /// `keep`, `drop` or `needs_work`.
    pub verdict: String,
    /// Why.
    pub reason: String,
    /// When it was saved (RFC 3339, UTC, milliseconds); set by the store.
    pub created_at: String,
}

impl Store {
    /// Appends a decision; `created_at` is ignored and set to now. Returns the row as stored. A
    /// verdict other than `keep`, `drop` or `needs_work` is refused by the table.
    pub fn save_decision(&mut self, decision: &DecisionRow) -> Result<DecisionRow, StoreError> {
        let path = self.path().to_owned();
        let mut row = decision.clone();
        row.created_at = swe_forge_core::rfc3339_utc_millis_now();
        self.conn
            .execute(
                "INSERT INTO decisions (instance_id, reviewer, verdict, reason, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![row.instance_id, row.reviewer, row.verdict, row.reason, row.created_at],
            )
            .map_err(StoreError::sql(&path))?;
        Ok(row)
    }

    /// The latest decision of every decided instance, by instance id.
    pub fn latest_decisions(&self) -> Result<BTreeMap<String, DecisionRow>, StoreError> {
        let rows = self.query_decisions(
            "SELECT instance_id, reviewer, verdict, reason, created_at
             FROM decisions d WHERE id = (SELECT MAX(id) FROM decisions WHERE instance_id = d.instance_id)",
            [],
        )?;
        Ok(rows.into_iter().map(|r| (r.instance_id.clone(), r)).collect())
    }

    /// Every decision on one instance, oldest first.
    pub fn decision_history(&self, instance_id: &str) -> Result<Vec<DecisionRow>, StoreError> {
        self.query_decisions(
            "SELECT instance_id, reviewer, verdict, reason, created_at FROM decisions WHERE instance_id = ?1 ORDER BY id",
            [instance_id],
        )
    }

    fn query_decisions(&self, sql: &str, args: impl rusqlite::Params) -> Result<Vec<DecisionRow>, StoreError> {
        let path = self.path().to_owned();
        let mut stmt = self.conn.prepare(sql).map_err(StoreError::sql(&path))?;
        let rows = stmt
            .query_map(args, |r| {
                Ok(DecisionRow {
                    instance_id: r.get(0)?,
                    reviewer: r.get(1)?,
                    verdict: r.get(2)?,
                    reason: r.get(3)?,
                    created_at: r.get(4)?,
                })
            })
            .map_err(StoreError::sql(&path))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(StoreError::sql(&path))
    }

    /// Appends a review; `created_at` is ignored and set to now. Returns the row as stored.
    pub fn save_review(&mut self, review: &ReviewRow) -> Result<ReviewRow, StoreError> {
        let path = self.path().to_owned();
        let mut row = review.clone();
        row.created_at = swe_forge_core::rfc3339_utc_millis_now();
        self.conn
            .execute(
                "INSERT INTO reviews (instance_id, reviewer, severe_problem, issue_clarity, test_adequacy, time_to_fix, notes, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![
                    row.instance_id,
                    row.reviewer,
                    row.severe_problem,
                    row.issue_clarity,
                    row.test_adequacy,
                    row.time_to_fix,
                    row.notes,
                    row.created_at
                ],
            )
            .map_err(StoreError::sql(&path))?;
        Ok(row)
    }

    /// The latest review of every reviewed instance, by instance id.
    pub fn latest_reviews(&self) -> Result<BTreeMap<String, ReviewRow>, StoreError> {
        let rows = self.query_reviews(
            "SELECT instance_id, reviewer, severe_problem, issue_clarity, test_adequacy, time_to_fix, notes, created_at
             FROM reviews r WHERE id = (SELECT MAX(id) FROM reviews WHERE instance_id = r.instance_id)",
            [],
        )?;
        Ok(rows.into_iter().map(|r| (r.instance_id.clone(), r)).collect())
    }

    /// Every review of one instance, oldest first.
    pub fn review_history(&self, instance_id: &str) -> Result<Vec<ReviewRow>, StoreError> {
        self.query_reviews(
            "SELECT instance_id, reviewer, severe_problem, issue_clarity, test_adequacy, time_to_fix, notes, created_at
             FROM reviews WHERE instance_id = ?1 ORDER BY id",
            [instance_id],
        )
    }

    fn query_reviews(&self, sql: &str, args: impl rusqlite::Params) -> Result<Vec<ReviewRow>, StoreError> {
        let path = self.path().to_owned();
        let mut stmt = self.conn.prepare(sql).map_err(StoreError::sql(&path))?;
        let rows = stmt
            .query_map(args, |r| {
                Ok(ReviewRow {
                    instance_id: r.get(0)?,
                    reviewer: r.get(1)?,
                    severe_problem: r.get(2)?,
                    issue_clarity: r.get(3)?,
                    test_adequacy: r.get(4)?,
                    time_to_fix: r.get(5)?,
                    notes: r.get(6)?,
                    created_at: r.get(7)?,
                })
            })
            .map_err(StoreError::sql(&path))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(StoreError::sql(&path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn review(id: &str, who: &str, clarity: u8) -> ReviewRow {
        ReviewRow {
            instance_id: id.into(),
            reviewer: who.into(),
            severe_problem: false,
            issue_clarity: clarity,
            test_adequacy: 3,
            time_to_fix: Some("<15m".into()),
            notes: "ok".into(),
            created_at: String::new(),
        }
    }

    #[test]
    fn reviews_append_and_the_latest_wins_across_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.sqlite");
        let mut store = Store::open(&path).unwrap();
        let first = store.save_review(&review("a__b-1", "alice", 1)).unwrap();
        assert!(first.created_at.ends_with('Z') && first.created_at.len() == 24, "{}", first.created_at);
        store.save_review(&review("a__b-2", "alice", 3)).unwrap();
        store.save_review(&review("a__b-1", "bob", 2)).unwrap();
        drop(store);
        let store = Store::open(&path).unwrap();
        let latest = store.latest_reviews().unwrap();
        assert_eq!(latest.len(), 2);
        assert_eq!((latest["a__b-1"].reviewer.as_str(), latest["a__b-1"].issue_clarity), ("bob", 2));
        let history = store.review_history("a__b-1").unwrap();
        assert_eq!(history.iter().map(|r| r.reviewer.as_str()).collect::<Vec<_>>(), ["alice", "bob"]);
        assert_eq!(history[0], first);
    }

    fn decision(id: &str, verdict: &str, reason: &str) -> DecisionRow {
        DecisionRow {
            instance_id: id.into(),
            reviewer: "alice".into(),
            verdict: verdict.into(),
            reason: reason.into(),
            created_at: String::new(),
        }
    }

    #[test]
    fn decisions_append_apart_from_reviews_and_the_latest_wins() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.sqlite");
        let mut store = Store::open(&path).unwrap();
        store.save_review(&review("a__b-1", "alice", 3)).unwrap();
        store.save_decision(&decision("a__b-1", "keep", "")).unwrap();
        store.save_decision(&decision("a__b-2", "needs_work", "the test patch tests nothing")).unwrap();
        store.save_decision(&decision("a__b-1", "drop", "the issue is a duplicate")).unwrap();
        let err = store.save_decision(&decision("a__b-1", "maybe", "")).unwrap_err().to_string();
        assert!(err.contains("CHECK"), "{err}");
        drop(store);
        let store = Store::open(&path).unwrap();
        let latest = store.latest_decisions().unwrap();
        assert_eq!(latest.len(), 2);
        assert_eq!(
            (latest["a__b-1"].verdict.as_str(), latest["a__b-1"].reason.as_str()),
            ("drop", "the issue is a duplicate")
        );
        assert_eq!(latest["a__b-2"].verdict, "needs_work");
        let history = store.decision_history("a__b-1").unwrap();
        assert_eq!(history.iter().map(|r| r.verdict.as_str()).collect::<Vec<_>>(), ["keep", "drop"]);
        assert_eq!(store.latest_reviews().unwrap()["a__b-1"].issue_clarity, 3, "the review stays");
    }

    /// A store made before decisions existed (schema version 3) opens with its reviews intact
    /// and takes decisions.
    #[test]
    fn a_store_of_version_3_keeps_its_reviews_and_takes_decisions() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.sqlite");
        {
            let conn = rusqlite::Connection::open(&path).unwrap();
            for (i, sql) in crate::schema::MIGRATIONS.iter().take(3).enumerate() {
                conn.execute_batch(sql).unwrap();
                conn.execute_batch(&format!("PRAGMA user_version = {}", i + 1)).unwrap();
            }
            conn.execute(
                "INSERT INTO reviews (instance_id, reviewer, severe_problem, issue_clarity, test_adequacy, time_to_fix, notes, created_at)
                 VALUES ('a__b-1', 'bob', 0, 2, 3, '<15m', 'old', '2025-01-01T00:00:00.000Z')",
                [],
            )
            .unwrap();
        }
        let mut store = Store::open(&path).unwrap();
        let old = &store.latest_reviews().unwrap()["a__b-1"];
        assert_eq!((old.reviewer.as_str(), old.notes.as_str(), old.test_adequacy), ("bob", "old", 3));
        assert!(store.latest_decisions().unwrap().is_empty());
        store.save_decision(&decision("a__b-1", "keep", "")).unwrap();
        assert_eq!(store.latest_decisions().unwrap()["a__b-1"].verdict, "keep");
        assert_eq!(store.review_history("a__b-1").unwrap().len(), 1);
    }
}
