//! `swe-forge export`: validated records to JSONL and Parquet.

use std::path::Path;

use anyhow::{Context, Result, bail};
use swe_forge_core::{Instance, ValidationStatus};

use crate::cli::ExportArgs;
use crate::commands::validate::read_records;

pub fn export_command(args: ExportArgs) -> Result<()> {
    if args.jsonl.is_none() && args.parquet.is_none() && args.tests_parquet.is_none() {
        bail!("nothing to export: give --jsonl, --parquet and/or --tests-parquet");
    }
    let records = read_records(&args.records)?;
    let selected: Vec<Instance> =
        records.into_iter().filter(|r| args.all || r.status() == ValidationStatus::Accepted).collect();
    export(&selected, args.jsonl.as_deref(), args.parquet.as_deref(), args.tests_parquet.as_deref())?;
    eprintln!("exported {} instances", selected.len());
    Ok(())
}

pub fn export(records: &[Instance], jsonl: Option<&Path>, parquet: Option<&Path>, tests: Option<&Path>) -> Result<()> {
    // Every exported record carries a difficulty label: the heuristic's where curation put none.
    let mut labelled = Vec::new();
    let records = if records.iter().all(|r| r.swe_forge.as_ref().is_some_and(|m| m.difficulty.is_some())) {
        records
    } else {
        labelled.extend_from_slice(records);
        swe_forge_curate::label_missing_difficulty(&mut labelled, &swe_forge_curate::Heuristic::CALIBRATED);
        &labelled
    };
    for p in [jsonl, parquet, tests].into_iter().flatten() {
        if let Some(dir) = p.parent() {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
    }
    if let Some(p) = jsonl {
        swe_forge_export::write_jsonl(p, records)?;
    }
    if let Some(p) = parquet {
        swe_forge_export::write_instances_parquet(p, records)?;
    }
    if let Some(p) = tests {
        swe_forge_export::write_tests_parquet(p, records)?;
    }
    Ok(())
}
