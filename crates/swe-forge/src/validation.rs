//! The validation `validate`, `run` and `bench` share (on `crate::resumable`): resume from the state store,
//! validate the rest, keep each result as soon as it is known, write the validated records.

use std::collections::HashMap;
use std::path::Path;

use anyhow::{Context, Result};
use swe_forge_core::{Instance, ValidationFunnel, ValidationStatus};
use swe_forge_store::RunRow;
use swe_forge_validate::{Done, Settings};

use crate::resumable::Run;

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
    let mut run = Run::open(&settings.work_dir.join("state.sqlite"), "instances", "validated")?;
    if fresh {
        run.store.reset()?;
    }
    let todo = run.pending(&records)?;
    // Toolchain versions that earlier runs' searches found are where later instances start.
    let learned = if todo.is_empty() { Vec::new() } else { run.store.validated()? };
    let stopped = run
        .run(settings, todo, async |validator, _, store, todo| {
            validator.learn_from(&learned);
            let mut keep = |done: Done<Instance>| -> Result<()> {
                let inst = &done.result;
                Ok(store.finish(inst, &RunRow::of(inst))?)
            };
            validator.validate_each(todo, &mut keep).await
        })
        .await?;
    let mut done: HashMap<String, Instance> =
        run.store.validated()?.into_iter().map(|r| (r.instance_id.clone(), r)).collect();
    let results: Vec<Instance> = records.iter().filter_map(|r| done.remove(&r.instance_id)).collect();
    swe_forge_export::write_jsonl(out, &results)?;
    if let Some(e) = stopped {
        eprintln!("{} instance(s) finished before the stop, written to {}", results.len(), out.display());
        return Err(e.into());
    }
    Ok(results)
}

/// The summary of `results` on stdout: a table and the funnel of the run (built, ran per test
/// or as one target, accepted, rejections by reason: `ValidationFunnel`), or with `json` one JSON
/// object (`records`, `accepted`, `funnel`, and per instance its id, status, FAIL_TO_PASS and
/// PASS_TO_PASS counts, reasons).
pub fn print_summary(results: &[Instance], json: bool) {
    if json {
        outln!("{}", summary_json(results));
        return;
    }
    let mut table = SummaryTable::start();
    for r in results {
        table.row(r);
    }
    table.end();
    for line in ValidationFunnel::of(results).lines() {
        outln!("{line}");
    }
}

fn summary_json(results: &[Instance]) -> serde_json::Value {
    let instances: Vec<serde_json::Value> = results
        .iter()
        .map(|r| {
            let reasons: Vec<&str> =
                r.swe_forge.iter().flat_map(|m| m.rejections.iter().map(|x| x.reason.as_str())).collect();
            serde_json::json!({
                "instance_id": r.instance_id,
                "status": r.status().as_str(),
                "fail_to_pass": r.fixed_tests.len(),
                "pass_to_pass": r.p2p_tests.len(),
                "reasons": reasons,
            })
        })
        .collect();
    let accepted = results.iter().filter(|r| r.status() == ValidationStatus::Accepted).count();
    let funnel = ValidationFunnel::of(results);
    serde_json::json!({ "records": results.len(), "accepted": accepted, "funnel": funnel, "instances": instances })
}

/// The summary table of validated records, printed a row at a time as they come: instance,
/// status, FAIL_TO_PASS and PASS_TO_PASS counts, rejection reasons; then how many were accepted.
pub struct SummaryTable {
    records: usize,
    accepted: usize,
}

impl SummaryTable {
    /// Prints the header.
    pub fn start() -> SummaryTable {
        outln!("{:<36} {:<9} {:>5} {:>5}  reasons", "instance", "status", "f2p", "p2p");
        SummaryTable { records: 0, accepted: 0 }
    }

    /// Prints the row of `r`.
    pub fn row(&mut self, r: &Instance) {
        self.records += 1;
        self.accepted += usize::from(r.status() == ValidationStatus::Accepted);
        let reasons: Vec<String> =
            r.swe_forge.iter().flat_map(|m| m.rejections.iter().map(|x| x.reason.as_str().to_owned())).collect();
        outln!(
            "{:<36} {:<9} {:>5} {:>5}  {}",
            r.instance_id,
            r.status().as_str(),
            r.fixed_tests.len(),
            r.p2p_tests.len(),
            reasons.join(",")
        );
    }

    /// Prints how many were accepted.
    pub fn end(self) {
        outln!("{} of {} instances accepted", self.accepted, self.records);
    }
}
