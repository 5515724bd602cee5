//! Writing accepted records as JSONL and Parquet, shared by `export`, `run` and `publish`.

use std::path::Path;

use anyhow::{Context, Result};
use swe_forge_core::Instance;
use swe_forge_export::Producer;

use crate::records::write_records;

/// swe-forge's version and the commit it was built from, for the Parquet files' metadata.
pub fn producer() -> Producer {
    Producer {
        version: env!("CARGO_PKG_VERSION").to_owned(),
        git_commit: option_env!("SWE_FORGE_GIT_COMMIT").map(str::to_owned),
    }
}

/// Every exported record carries a difficulty label: the heuristic's where curation put none.
fn labelled(records: &[Instance]) -> std::borrow::Cow<'_, [Instance]> {
    if records.iter().all(|r| r.swe_forge.as_ref().is_some_and(|m| m.difficulty.is_some())) {
        return records.into();
    }
    let mut out = records.to_vec();
    swe_forge_curate::label_missing_difficulty(&mut out, &swe_forge_curate::Heuristic::CALIBRATED);
    out.into()
}

pub fn create_parents(paths: [Option<&Path>; 3]) -> Result<()> {
    for p in paths.into_iter().flatten().filter(|p| p.as_os_str() != "-") {
        if let Some(dir) = p.parent() {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
    }
    Ok(())
}

pub fn export(records: &[Instance], jsonl: Option<&Path>, parquet: Option<&Path>, tests: Option<&Path>) -> Result<()> {
    let records = labelled(records);
    create_parents([jsonl, parquet, tests])?;
    if let Some(p) = jsonl {
        write_records(p, &records)?;
    }
    if let Some(p) = parquet {
        swe_forge_export::write_instances_parquet(p, &records, &producer())?;
    }
    if let Some(p) = tests {
        swe_forge_export::write_tests_parquet(p, &records, &producer())?;
    }
    Ok(())
}
