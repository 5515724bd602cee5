//! The resumable run validate, run, bench, revalidate and evaluate share around the driver: the
//! part of the work the state store has no answer for runs on a validator with progress bars,
//! each result kept (by the command's sink) before it counts as done, and one stop policy.

use std::path::Path;

use anyhow::Result;
use swe_forge_validate::{Settings, Stopped, ValidateError, Validator};

use crate::engine::{tidy_engine, validator_for};
use crate::reporter::Bars;

/// Says how much of the work an earlier run already did (`total - todo` of `total` `items`,
/// already `done` in the store at `store`), when it did any.
pub fn say_resuming(todo: usize, total: usize, items: &str, done: &str, store: &Path) {
    if todo < total {
        eprintln!("resuming: {} of {total} {items} already {done} in {}", total - todo, store.display());
    }
}

/// Runs `todo` work items through `drive` on a validator for the work whose state store is
/// `store` (with nothing to do, only tidies what killed runs left), then lets the backend settle.
///
/// The stop policy, the same for every command: a sink error (a result that could not be kept)
/// ends the run with that error at once; the circuit breaker's stop ([`Stopped::Machine`]) is
/// returned as `Ok(Some(_))`, so that the command writes what finished (from the store) and then
/// reports the stop as its error; the unfinished work stays undecided for the next run.
pub async fn run_work<F>(store: &Path, settings: Settings, todo: usize, drive: F) -> Result<Option<ValidateError>>
where
    F: AsyncFnOnce(&Validator, &Bars) -> Result<(), Stopped<anyhow::Error>>,
{
    if todo == 0 {
        tidy_engine(store).await;
        return Ok(None);
    }
    let (validator, bars) = validator_for(store, settings, todo).await?;
    let kept = drive(&validator, &bars).await;
    validator.settle().await;
    bars.finish();
    match kept {
        Ok(()) => Ok(None),
        Err(Stopped::Sink(e)) => Err(e.context(format!("recording results in {}", store.display()))),
        Err(Stopped::Machine(e)) => Ok(Some(e)),
    }
}
