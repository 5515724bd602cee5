//! Evaluations of predictions: one stored result per instance and model, with the digest of
//! what it answered, written in one transaction as each finishes.

use rusqlite::{OptionalExtension, params};

use crate::progress::now;
use crate::{Store, StoreError};

impl Store {
    /// The stored result of `model` on `instance_id` when its input digest is `digest`.
    pub fn evaluation(&self, instance_id: &str, model: &str, digest: &str) -> Result<Option<String>, StoreError> {
        self.conn
            .query_row(
                "SELECT result FROM evaluations WHERE instance_id = ?1 AND model = ?2 AND input_sha256 = ?3",
                params![instance_id, model, digest],
                |r| r.get(0),
            )
            .optional()
            .map_err(StoreError::sql(self.path()))
    }

    /// Stores (or replaces) the result of `model` on `instance_id`.
    pub fn save_evaluation(
        &mut self,
        instance_id: &str,
        model: &str,
        digest: &str,
        result: &str,
    ) -> Result<(), StoreError> {
        self.conn
            .execute(
                "INSERT INTO evaluations (instance_id, model, input_sha256, result, updated_at) VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT(instance_id, model) DO UPDATE SET input_sha256 = ?3, result = ?4, updated_at = ?5",
                params![instance_id, model, digest, result, now()],
            )
            .map(|_| ())
            .map_err(StoreError::sql(self.path()))
    }

    /// Forgets every evaluation.
    pub fn reset_evaluations(&mut self) -> Result<(), StoreError> {
        self.conn.execute("DELETE FROM evaluations", []).map(|_| ()).map_err(StoreError::sql(self.path()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_evaluation_is_found_only_for_its_digest() {
        let tmp = tempfile::tempdir().unwrap();
        let mut store = Store::open(&tmp.path().join("s.sqlite")).unwrap();
        store.save_evaluation("o__r-1", "m", "d1", "{\"a\":1}").unwrap();
        assert_eq!(store.evaluation("o__r-1", "m", "d1").unwrap().as_deref(), Some("{\"a\":1}"));
        assert_eq!(store.evaluation("o__r-1", "m", "d2").unwrap(), None);
        store.save_evaluation("o__r-1", "m", "d2", "{}").unwrap();
        assert_eq!(store.evaluation("o__r-1", "m", "d1").unwrap(), None);
        drop(store);
        let mut store = Store::open(&tmp.path().join("s.sqlite")).unwrap();
        assert_eq!(store.evaluation("o__r-1", "m", "d2").unwrap().as_deref(), Some("{}"));
        store.reset_evaluations().unwrap();
        assert_eq!(store.evaluation("o__r-1", "m", "d2").unwrap(), None);
    }
}
