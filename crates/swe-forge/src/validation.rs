//! The validation loop `validate`, `run` and `bench` share: resume from the state store,
//! validate the rest, keep each result as soon as it is known, write the validated records.

use std::collections::HashMap;
use std::path::Path;

use anyhow::{Context, Result};
use swe_forge_core::{Instance, ValidationStatus};
use swe_forge_store::{RunRow, Store};
use swe_forge_validate::{Done, Settings, Stopped};

use crate::engine::{tidy_engine, validator_for};

/// Validates `records` and writes every result to `out` (JSONL). Progress lives in the state
/// store `<work_dir>/state.sqlite`: a run that was killed resumes where it stopped (instances
/// already validated are not run again, unless `fresh` or their inputs changed). Returns all
/// results in input order.
pub async fn validate_records(
    records: Vec<Instance>,
    settings: Settings,
    out: &Path,
    fresh: bool,
) -> Result<Vec<Instance>> {
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let store_path = settings.work_dir.join("state.sqlite");
    let mut store = Store::open_writer(&store_path)?;
    if fresh {
        store.reset()?;
    }
    let todo_ids = store.enqueue(&records)?;
    let todo: Vec<Instance> = records.iter().filter(|r| todo_ids.contains(&r.instance_id)).cloned().collect();
    if todo.len() < records.len() {
        eprintln!(
            "resuming: {} of {} instances already validated in {}",
            records.len() - todo.len(),
            records.len(),
            store_path.display()
        );
    }
    let mut stopped = None;
    if todo.is_empty() {
        tidy_engine(&store_path).await;
    } else {
        let (validator, bars) = validator_for(&store_path, settings, todo.len()).await?;
        // Toolchain versions that earlier runs' searches found are where later instances start.
        validator.learn_from(&store.validated()?);
        // Each result is in the store before it counts as done; a store error stops the run.
        let mut keep = |done: Done<Instance>| {
            let inst = &done.result;
            store.finish(inst, &RunRow::of(inst))
        };
        let kept = validator.validate_each(todo, &mut keep).await;
        validator.settle().await;
        bars.finish();
        match kept {
            Ok(()) => {}
            Err(Stopped::Sink(e)) => return Err(e).context("recording progress in the state store"),
            // The circuit breaker's stop: what was finished is written, then the error is reported.
            Err(Stopped::Machine(e)) => stopped = Some(e),
        }
    }
    let mut done: HashMap<String, Instance> =
        store.validated()?.into_iter().map(|r| (r.instance_id.clone(), r)).collect();
    let results: Vec<Instance> = records.iter().filter_map(|r| done.remove(&r.instance_id)).collect();
    swe_forge_export::write_jsonl(out, &results)?;
    if let Some(e) = stopped {
        eprintln!("{} instance(s) finished before the stop, written to {}", results.len(), out.display());
        return Err(e.into());
    }
    Ok(results)
}

pub fn print_summary(results: &[Instance]) {
    let accepted = results.iter().filter(|r| r.status() == ValidationStatus::Accepted).count();
    outln!("{:<36} {:<9} {:>5} {:>5}  reasons", "instance", "status", "f2p", "p2p");
    for r in results {
        let reasons: Vec<String> =
            r.swe_forge.iter().flat_map(|m| m.rejections.iter().map(|x| x.reason.as_str().to_owned())).collect();
        let status = r.status().as_str();
        outln!(
            "{:<36} {:<9} {:>5} {:>5}  {}",
            r.instance_id,
            status,
            r.fixed_tests.len(),
            r.p2p_tests.len(),
            reasons.join(",")
        );
    }
    outln!("{accepted} of {} instances accepted", results.len());
}
