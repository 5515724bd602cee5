//! Instances, their stages and their runs.

use rusqlite::{OptionalExtension, params};
use sha2::{Digest, Sha256};
use swe_forge_core::{Instance, PhaseRun, RejectReason};

use crate::{Store, StoreError};

/// How far an instance got. Stages only move forward, except that a candidate whose inputs
/// changed starts over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stage {
    /// Known, nothing done yet.
    Queued,
    /// The instance image exists.
    ImageBuilt,
    /// Validation finished (accepted or rejected); the record is stored.
    Validated,
    /// Written to an export.
    Exported,
}

impl Stage {
    fn as_str(self) -> &'static str {
        match self {
            Stage::Queued => "queued",
            Stage::ImageBuilt => "image_built",
            Stage::Validated => "validated",
            Stage::Exported => "exported",
        }
    }

    fn parse(s: &str) -> Stage {
        match s {
            "image_built" => Stage::ImageBuilt,
            "validated" => Stage::Validated,
            "exported" => Stage::Exported,
            _ => Stage::Queued,
        }
    }
}

/// One run as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRow {
    /// The instance.
    pub instance_id: String,
    /// 0 for the first run of a phase, 1.. for reruns.
    pub attempt: u32,
    /// What happened.
    pub run: PhaseRun,
}

impl RunRow {
    /// The runs a validated record carries (`swe_forge.runs`), as stored.
    pub fn of(inst: &swe_forge_core::Instance) -> Vec<RunRow> {
        let runs = inst.swe_forge.iter().flat_map(|m| m.runs.iter());
        runs.map(|run| RunRow { instance_id: inst.instance_id.clone(), attempt: run.attempt, run: run.clone() })
            .collect()
    }
}

/// Whether a stored record is a result the machine or the inputs' absence cut short
/// ([`RejectReason::is_retried`]: the engine failed after its retries, the clone or base commit
/// was missing), which is no verdict on the instance: it runs again.
fn cut_short(record_json: &str) -> bool {
    serde_json::from_str::<Instance>(record_json)
        .is_ok_and(|r| r.swe_forge.iter().flat_map(|m| &m.rejections).any(|x| RejectReason::is_retried(x.reason)))
}

pub(crate) fn now() -> String {
    let d = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    format!("{}.{:03}", d.as_secs(), d.subsec_millis())
}

/// sha256 of what defines a candidate: everything but swe-forge's own results.
pub fn input_digest(inst: &Instance) -> String {
    let mut c = inst.clone();
    c.swe_forge = None;
    c.set_results(&Default::default(), Default::default(), Default::default(), Default::default());
    c.lang = None;
    let json = serde_json::to_string(&c).unwrap_or_default();
    Sha256::digest(json.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

impl Store {
    /// [`Store::enqueue`], returning the candidates themselves that still need validation, in
    /// input order (what a resumable run has left to do).
    pub fn enqueue_pending<'a>(&mut self, candidates: &'a [Instance]) -> Result<Vec<&'a Instance>, StoreError> {
        let todo: std::collections::HashSet<String> = self.enqueue(candidates)?.into_iter().collect();
        Ok(candidates.iter().filter(|c| todo.contains(&c.instance_id)).collect())
    }

    /// Registers candidates; returns the ids that still need validation (new ones, changed
    /// ones, and ones a previous process left unfinished), in input order.
    pub fn enqueue(&mut self, candidates: &[Instance]) -> Result<Vec<String>, StoreError> {
        let path = self.path().to_owned();
        let tx = self.conn.transaction().map_err(StoreError::sql(&path))?;
        let mut todo = Vec::new();
        for inst in candidates {
            let digest = input_digest(inst);
            let existing: Option<(String, String, Option<String>)> = tx
                .query_row(
                    "SELECT input_sha256, stage, record FROM instances WHERE instance_id = ?1",
                    [&inst.instance_id],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
                )
                .optional()
                .map_err(StoreError::sql(&path))?;
            match existing {
                Some((d, stage, record)) if d == digest => {
                    if Stage::parse(&stage) < Stage::Validated || record.as_deref().is_some_and(cut_short) {
                        todo.push(inst.instance_id.clone());
                    }
                }
                _ => {
                    tx.execute(
                        "INSERT INTO instances (instance_id, input_sha256, stage, record, updated_at) VALUES (?1, ?2, 'queued', NULL, ?3)
                         ON CONFLICT(instance_id) DO UPDATE SET input_sha256 = ?2, stage = 'queued', record = NULL, updated_at = ?3",
                        params![inst.instance_id, digest, now()],
                    )
                    .map_err(StoreError::sql(&path))?;
                    tx.execute("DELETE FROM runs WHERE instance_id = ?1", [&inst.instance_id])
                        .map_err(StoreError::sql(&path))?;
                    todo.push(inst.instance_id.clone());
                }
            }
        }
        tx.commit().map_err(StoreError::sql(&path))?;
        Ok(todo)
    }

    /// Forgets the results of `ids`: they go back to `Queued` (their runs are kept until the
    /// new result replaces them).
    pub fn requeue(&mut self, ids: &[String]) -> Result<(), StoreError> {
        let path = self.path().to_owned();
        let tx = self.conn.transaction().map_err(StoreError::sql(&path))?;
        for id in ids {
            tx.execute(
                "UPDATE instances SET stage = 'queued', record = NULL, updated_at = ?2 WHERE instance_id = ?1",
                params![id, now()],
            )
            .map_err(StoreError::sql(&path))?;
        }
        tx.commit().map_err(StoreError::sql(&path))
    }

    /// Forgets every result: all instances go back to `Queued`.
    pub fn reset(&mut self) -> Result<(), StoreError> {
        let path = self.path().to_owned();
        self.conn
            .execute_batch("UPDATE instances SET stage = 'queued', record = NULL; DELETE FROM runs;")
            .map_err(StoreError::sql(&path))
    }

    /// Moves an instance to `stage` and logs the event with how long the step took.
    pub fn set_stage(&mut self, instance_id: &str, stage: Stage, duration_ms: Option<u64>) -> Result<(), StoreError> {
        let path = self.path().to_owned();
        let tx = self.conn.transaction().map_err(StoreError::sql(&path))?;
        tx.execute(
            "UPDATE instances SET stage = ?2, updated_at = ?3 WHERE instance_id = ?1",
            params![instance_id, stage.as_str(), now()],
        )
        .map_err(StoreError::sql(&path))?;
        tx.execute(
            "INSERT INTO events (instance_id, stage, duration_ms, at) VALUES (?1, ?2, ?3, ?4)",
            params![instance_id, stage.as_str(), duration_ms.map(|d| d as i64), now()],
        )
        .map_err(StoreError::sql(&path))?;
        tx.commit().map_err(StoreError::sql(&path))
    }

    /// Stores a finished validation: the record and its runs, in one transaction.
    pub fn finish(&mut self, inst: &Instance, runs: &[RunRow]) -> Result<(), StoreError> {
        let path = self.path().to_owned();
        let json = serde_json::to_string(inst).map_err(|e| StoreError::Corrupt {
            path: path.clone(),
            instance: inst.instance_id.clone(),
            message: e.to_string(),
        })?;
        let tx = self.conn.transaction().map_err(StoreError::sql(&path))?;
        tx.execute(
            "UPDATE instances SET stage = 'validated', record = ?2, updated_at = ?3 WHERE instance_id = ?1",
            params![inst.instance_id, json, now()],
        )
        .map_err(StoreError::sql(&path))?;
        for r in runs {
            tx.execute(
                "INSERT OR REPLACE INTO runs (instance_id, phase, attempt, exit_code, duration_ms, timed_out, log_sha256, log_bytes, tests, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                params![
                    r.instance_id,
                    r.run.phase.as_str(),
                    r.attempt,
                    r.run.exit_code,
                    r.run.duration_ms as i64,
                    r.run.timed_out,
                    r.run.log_sha256,
                    r.run.log_bytes as i64,
                    r.run.tests as i64,
                    now()
                ],
            )
            .map_err(StoreError::sql(&path))?;
        }
        tx.execute(
            "INSERT INTO events (instance_id, stage, duration_ms, at) VALUES (?1, 'validated', NULL, ?2)",
            params![inst.instance_id, now()],
        )
        .map_err(StoreError::sql(&path))?;
        tx.commit().map_err(StoreError::sql(&path))
    }

    /// The stage of an instance, if known.
    pub fn stage(&self, instance_id: &str) -> Result<Option<Stage>, StoreError> {
        let path = self.path().to_owned();
        let s: Option<String> = self
            .conn
            .query_row("SELECT stage FROM instances WHERE instance_id = ?1", [instance_id], |r| r.get(0))
            .optional()
            .map_err(StoreError::sql(&path))?;
        Ok(s.as_deref().map(Stage::parse))
    }

    /// Every validated record, by instance id.
    pub fn validated(&self) -> Result<Vec<Instance>, StoreError> {
        let path = self.path().to_owned();
        let mut stmt = self
            .conn
            .prepare("SELECT instance_id, record FROM instances WHERE record IS NOT NULL ORDER BY instance_id")
            .map_err(StoreError::sql(&path))?;
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
            .map_err(StoreError::sql(&path))?;
        let mut out = Vec::new();
        for row in rows {
            let (id, json) = row.map_err(StoreError::sql(&path))?;
            let inst = serde_json::from_str(&json).map_err(|e| StoreError::Corrupt {
                path: path.clone(),
                instance: id,
                message: e.to_string(),
            })?;
            out.push(inst);
        }
        Ok(out)
    }

    /// The ids of the validated records, sorted.
    pub fn validated_ids(&self) -> Result<Vec<String>, StoreError> {
        let path = self.path().to_owned();
        let mut stmt = self
            .conn
            .prepare("SELECT instance_id FROM instances WHERE record IS NOT NULL ORDER BY instance_id")
            .map_err(StoreError::sql(&path))?;
        let rows = stmt.query_map([], |r| r.get::<_, String>(0)).map_err(StoreError::sql(&path))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(StoreError::sql(&path))
    }

    /// The validated record of an instance, when there is one.
    pub fn result(&self, instance_id: &str) -> Result<Option<Instance>, StoreError> {
        let path = self.path().to_owned();
        let json: Option<String> = self
            .conn
            .query_row(
                "SELECT record FROM instances WHERE instance_id = ?1 AND record IS NOT NULL",
                [instance_id],
                |r| r.get(0),
            )
            .optional()
            .map_err(StoreError::sql(&path))?;
        json.map(|json| {
            serde_json::from_str(&json).map_err(|e| StoreError::Corrupt {
                path: path.clone(),
                instance: instance_id.to_owned(),
                message: e.to_string(),
            })
        })
        .transpose()
    }

    /// Number of runs stored for an instance.
    pub fn run_count(&self, instance_id: &str) -> Result<u64, StoreError> {
        let path = self.path().to_owned();
        self.conn
            .query_row("SELECT COUNT(*) FROM runs WHERE instance_id = ?1", [instance_id], |r| r.get::<_, i64>(0))
            .map(|n| n as u64)
            .map_err(StoreError::sql(&path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use swe_forge_test_support::devset;

    #[test]
    fn enqueue_finish_resume_and_change() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.sqlite");
        let all = devset();
        let mut store = Store::open(&path).unwrap();
        assert_eq!(store.enqueue(&all[..3]).unwrap().len(), 3);
        store.set_stage(&all[0].instance_id, Stage::ImageBuilt, Some(1200)).unwrap();
        store.finish(&all[0], &[]).unwrap();
        drop(store);
        // Reopened: only unfinished instances are pending; nothing is duplicated.
        let mut store = Store::open(&path).unwrap();
        let todo = store.enqueue(&all[..3]).unwrap();
        assert_eq!(todo, [all[1].instance_id.clone(), all[2].instance_id.clone()]);
        assert_eq!(store.enqueue_pending(&all[..3]).unwrap(), [&all[1], &all[2]], "the records themselves");
        assert_eq!(store.validated().unwrap(), vec![all[0].clone()]);
        assert_eq!(store.validated_ids().unwrap(), [all[0].instance_id.clone()]);
        assert_eq!(store.result(&all[0].instance_id).unwrap(), Some(all[0].clone()));
        assert_eq!(store.result(&all[1].instance_id).unwrap(), None, "pending: no result");
        assert_eq!(store.result("nobody__nothing-1").unwrap(), None);
        assert_eq!(store.stage(&all[0].instance_id).unwrap(), Some(Stage::Validated));
        // A changed candidate starts over.
        let mut changed = all[0].clone();
        changed.fix_patch.push('\n');
        assert_eq!(store.enqueue(&[changed]).unwrap(), [all[0].instance_id.clone()]);
        assert!(store.validated().unwrap().is_empty());
        assert!(store.validated_ids().unwrap().is_empty() && store.result(&all[0].instance_id).unwrap().is_none());
        assert!(crate::schema::latest() >= 2, "progress tables and reviews");
    }

    #[test]
    fn results_the_machine_cut_short_and_requeued_ones_run_again() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("state.sqlite")).unwrap();
        let all = devset();
        let ids: Vec<String> = all[..3].iter().map(|r| r.instance_id.clone()).collect();
        store.enqueue(&all[..3]).unwrap();
        let mut cut = all[0].clone();
        let mut meta = swe_forge_core::ForgeMeta::new(swe_forge_core::ValidationStatus::Rejected);
        meta.rejections.push(swe_forge_core::Rejection::new(RejectReason::Infrastructure, "engine lost"));
        cut.swe_forge = Some(meta.clone());
        store.finish(&cut, &[]).unwrap();
        let mut timeout = all[1].clone();
        meta.rejections[0] = swe_forge_core::Rejection::new(RejectReason::Timeout, "slow");
        timeout.swe_forge = Some(meta);
        store.finish(&timeout, &[]).unwrap();
        store.finish(&all[2], &[]).unwrap();
        // The engine's failure runs again; a timeout is the instance's own verdict.
        assert_eq!(store.enqueue(&all[..3]).unwrap(), [ids[0].clone()]);
        store.requeue(&ids[2..]).unwrap();
        assert_eq!(store.enqueue(&all[..3]).unwrap(), [ids[0].clone(), ids[2].clone()]);
        assert_eq!(store.validated().unwrap().len(), 2);
        // A clone missing when it ran (added since) runs again too.
        let mut missing = all[2].clone();
        let mut meta = swe_forge_core::ForgeMeta::new(swe_forge_core::ValidationStatus::Rejected);
        meta.rejections.push(swe_forge_core::Rejection::new(RejectReason::RepoUnavailable, "no clone at repos/o/r"));
        missing.swe_forge = Some(meta);
        store.finish(&missing, &[]).unwrap();
        assert_eq!(store.enqueue(&all[..3]).unwrap(), [ids[0].clone(), ids[2].clone()]);
    }
}
