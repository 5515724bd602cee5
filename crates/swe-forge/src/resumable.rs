//! The resumable run validate, run, bench, revalidate and evaluate share around the driver
//! ([`Run`]): the state store opened as the work's one writer, the part of the work it has no
//! answer for (said when an earlier run did the rest), run on a validator with progress bars,
//! each result kept (by the command's sink) before it counts as done, and one stop policy.

use std::path::Path;

use anyhow::Result;
use swe_forge_core::Instance;
use swe_forge_store::Store;
use swe_forge_validate::{Settings, Stopped, ValidateError, Validator};

use crate::engine::{tidy_engine, validator_for};
use crate::reporter::Bars;

/// One resumable run: its state store and what its work items are called.
pub struct Run {
    /// The state store, this process its one writer.
    pub store: Store,
    /// What a work item is ("instances").
    items: &'static str,
    /// What the run does to one ("validated").
    done: &'static str,
}

impl Run {
    /// Opens the state store at `path` as its one writer (a second writer is refused), for a run
    /// that leaves `items` `done` ("instances", "validated").
    pub fn open(path: &Path, items: &'static str, done: &'static str) -> Result<Run> {
        Ok(Run { store: Store::open_writer(path)?, items, done })
    }

    /// Enqueues `records` and returns those the store has no result for (new ones, changed
    /// inputs, requeued or cut short), in input order, saying how many an earlier run did.
    pub fn pending(&mut self, records: &[Instance]) -> Result<Vec<Instance>> {
        let todo: Vec<Instance> = self.store.enqueue_pending(records)?.into_iter().cloned().collect();
        Ok(self.resume(todo, records.len()))
    }

    /// The work left, `todo` of `total` items (the store answers the others), after saying how
    /// much of it an earlier run already did, when it did any.
    pub fn resume<T>(&self, todo: Vec<T>, total: usize) -> Vec<T> {
        if todo.len() < total && !crate::reporter::quiet() {
            let (items, done, store) = (self.items, self.done, self.store.path().display());
            eprintln!("resuming: {} of {total} {items} already {done} in {store}", total - todo.len());
        }
        todo
    }

    /// Runs `todo` through `drive` on a validator for this run's work (with nothing to do, only
    /// tidies what killed runs left), then lets the backend settle. `drive` gets the store, for
    /// its sink to keep each result in.
    ///
    /// The stop policy, the same for every command: a sink error (a result that could not be
    /// kept) ends the run with that error at once; the circuit breaker's stop
    /// ([`Stopped::Machine`]) is returned as `Ok(Some(_))`, so that the command writes what
    /// finished (from the store) and then reports the stop as its error; the unfinished work
    /// stays undecided for the next run.
    pub async fn run<T, F>(&mut self, settings: Settings, todo: Vec<T>, drive: F) -> Result<Option<ValidateError>>
    where
        F: AsyncFnOnce(&Validator, &Bars, &mut Store, Vec<T>) -> Result<(), Stopped<anyhow::Error>>,
    {
        let path = self.store.path().to_owned();
        if todo.is_empty() {
            tidy_engine(&path).await;
            return Ok(None);
        }
        let (validator, bars) = validator_for(&path, settings, todo.len()).await?;
        let kept = drive(&validator, &bars, &mut self.store, todo).await;
        validator.settle().await;
        // Again at the end: a container a killed run asked for just before it died may have been
        // made after this run's first sweep (the engine finishes a create its caller left).
        tidy_engine(&path).await;
        bars.finish();
        match kept {
            Ok(()) => Ok(None),
            Err(Stopped::Sink(e)) => Err(e.context(format!("recording results in {}", path.display()))),
            Err(Stopped::Machine(e)) => Ok(Some(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(todo: &[Instance]) -> Vec<u64> {
        todo.iter().map(|r| r.number).collect()
    }

    /// A run started again has left only what the store holds no result for, the store keeps one
    /// writer, and work the store answers another way is passed through as given.
    #[test]
    fn a_run_started_again_has_left_what_the_store_has_no_result_for() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("state.sqlite");
        let records: Vec<Instance> = (1..=3).map(|n| swe_forge_test_support::record("o", "r", n)).collect();
        {
            let mut run = Run::open(&path, "instances", "validated").unwrap();
            assert_eq!(ids(&run.pending(&records).unwrap()), [1, 2, 3]);
            assert!(Run::open(&path, "instances", "validated").is_err(), "a second writer is refused");
            run.store.finish(&records[1], &[]).unwrap();
        }
        let mut run = Run::open(&path, "instances", "validated").unwrap();
        assert_eq!(ids(&run.pending(&records).unwrap()), [1, 3]);
        assert_eq!(run.resume(vec!['a', 'b'], 5), ['a', 'b']);
    }
}
