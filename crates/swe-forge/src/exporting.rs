//! Writing accepted records as JSONL and Parquet, shared by `export`, `run` and `publish`, with
//! canonical or Multi-SWE-bench test names (`--naming`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use swe_forge_agree::{PhaseLogs, View, rederive};
use swe_forge_core::Instance;
use swe_forge_export::Producer;
use swe_forge_logparse::Naming;

use crate::records::read_logs;

/// swe-forge's version and the commit it was built from, for the Parquet files' metadata.
pub fn producer() -> Producer {
    Producer {
        version: env!("CARGO_PKG_VERSION").to_owned(),
        git_commit: option_env!("SWE_FORGE_GIT_COMMIT").map(str::to_owned),
    }
}

/// Every exported record carries a difficulty label: the heuristic's where curation put none.
pub fn labelled(record: &Instance) -> std::borrow::Cow<'_, Instance> {
    if record.swe_forge.as_ref().is_some_and(|m| m.difficulty.is_some()) {
        return std::borrow::Cow::Borrowed(record);
    }
    let mut out = record.clone();
    swe_forge_curate::label_missing_difficulty(
        std::slice::from_mut(&mut out),
        &swe_forge_curate::Heuristic::CALIBRATED,
    );
    std::borrow::Cow::Owned(out)
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
    let mut sinks = RecordSinks::create(jsonl, parquet, tests)?;
    for r in records {
        sinks.write(r)?;
    }
    sinks.finish()
}

/// What a JSONL output's errors are said to be about: stdout for `-`, else the file.
pub fn jsonl_context(path: &Path) -> String {
    if path.as_os_str() == "-" { "writing records to stdout".to_owned() } else { format!("writing {}", path.display()) }
}

/// The files of an export of records (JSONL, the instances table, the tests table), written as
/// the records come, each record labelled as [`export`] labels it; nothing is in place before
/// [`RecordSinks::finish`].
pub struct RecordSinks {
    jsonl: Option<(swe_forge_export::JsonlWriter, String)>,
    parquet: Option<swe_forge_export::InstancesWriter>,
    tests: Option<swe_forge_export::TestsWriter>,
}

impl RecordSinks {
    pub fn create(jsonl: Option<&Path>, parquet: Option<&Path>, tests: Option<&Path>) -> Result<RecordSinks> {
        create_parents([jsonl, parquet, tests])?;
        let jsonl = match jsonl {
            Some(p) => {
                Some((swe_forge_export::JsonlWriter::create(p).with_context(|| jsonl_context(p))?, jsonl_context(p)))
            }
            None => None,
        };
        let producer = producer();
        Ok(RecordSinks {
            jsonl,
            parquet: parquet.map(|p| swe_forge_export::InstancesWriter::create(p, &producer)).transpose()?,
            tests: tests.map(|p| swe_forge_export::TestsWriter::create(p, &producer)).transpose()?,
        })
    }

    pub fn write(&mut self, record: &Instance) -> Result<()> {
        let record = labelled(record);
        if let Some((w, context)) = &mut self.jsonl {
            w.write(&record).with_context(|| context.clone())?;
        }
        if let Some(w) = &mut self.parquet {
            w.write(&record)?;
        }
        if let Some(w) = &mut self.tests {
            w.write(&record)?;
        }
        Ok(())
    }

    pub fn finish(self) -> Result<()> {
        if let Some((w, context)) = self.jsonl {
            w.finish().with_context(|| context)?;
        }
        if let Some(w) = self.parquet {
            w.finish()?;
        }
        if let Some(w) = self.tests {
            w.finish()?;
        }
        Ok(())
    }
}

/// Where `--naming msb` finds a record's three runs.
pub(crate) enum KeptRuns {
    /// The runs kept under this work folder (`--work-dir`), for every record.
    Only(PathBuf),
    /// Each record's own run results and `swe_forge.msb_names`; the runs kept under this work
    /// folder for a record that has no names (made before records kept them).
    Fallback(PathBuf),
}

impl KeptRuns {
    /// Where `--naming` (with `--work-dir`) finds the runs of the records at `records`: None with
    /// canonical names (each record's lists as they are).
    pub(crate) fn of(naming: Naming, work_dir: Option<&Path>, records: &Path) -> Option<KeptRuns> {
        match (naming, work_dir) {
            // `--work-dir` asks for the kept runs, parsed again with this build's parsers;
            // without it each record's own names serve, and the default work folder only for
            // older records.
            (Naming::Msb, Some(dir)) => Some(KeptRuns::Only(dir.to_owned())),
            (Naming::Msb, None) => Some(KeptRuns::Fallback(records.with_extension("work"))),
            // `--naming` offers `canonical` and `msb` only.
            (Naming::Canonical | Naming::Auto, _) => None,
        }
    }
}

/// `records` with Multi-SWE-bench test names: each swe-forge record's three runs (its run
/// results with its `msb_names`, or the kept parses under a work folder) rolled up to
/// Multi-SWE-bench names and categorised again, exactly as `revalidate --profile msb` compares
/// them. Records without a `swe_forge` block did not come from swe-forge's runs (published
/// Multi-SWE-bench records already use its names) and stay as they are. With each record, the
/// Multi-SWE-bench name of each canonical id its runs printed (what a SWE-bench row's eval script
/// renames the run's results with), for swe-forge records.
pub(crate) fn msb_named(r: Instance, kept: &KeptRuns) -> Result<(Instance, Option<Names>)> {
    let Some(meta) = &r.swe_forge else { return Ok((r, None)) };
    let (logs, work_dir) = match kept {
        KeptRuns::Only(dir) => (read_logs(dir, &r), dir),
        KeptRuns::Fallback(dir) => (PhaseLogs::of_record(&r).or_else(|| read_logs(dir, &r)), dir),
    };
    let Some(logs) = logs else {
        bail!(
            "{}: --naming msb needs the record's `swe_forge.msb_names` (records validated before they were \
             kept have none: run `swe-forge regrade` on them) or its runs' logs or parsed results (run, \
             test, fix) under {} (--work-dir)",
            r.instance_id,
            work_dir.join("logs").join(&r.instance_id).display()
        );
    };
    let flaky: BTreeSet<String> = meta.flaky.keys().cloned().collect();
    let names: BTreeMap<String, String> = [&logs.run, &logs.test, &logs.fix]
        .iter()
        .flat_map(|l| l.msb_names.iter().map(|(id, name)| (id.clone(), name.clone())))
        .filter(|(id, _)| !flaky.contains(id))
        .collect();
    Ok((rederive(&r, &View::ours(&logs, Naming::Msb, &flaky)), Some(names)))
}

/// Canonical id -> the name an export's test lists give it.
pub(crate) type Names = BTreeMap<String, String>;
