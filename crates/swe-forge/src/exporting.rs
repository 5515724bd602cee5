//! Writing accepted records as JSONL and Parquet, shared by `export`, `run` and `publish`.

use std::path::Path;

use anyhow::{Context, Result};
use swe_forge_core::Instance;
use swe_forge_export::Producer;

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
