//! `swe-forge export`: validated records to JSONL and Parquet, as records or in SWE-bench's
//! shape, or to Harbor task folders, with canonical or Multi-SWE-bench test names.

use std::path::Path;

use anyhow::{Result, bail};
use swe_forge_core::{Instance, ValidationStatus};

use crate::cli::{ExportArgs, ExportFormat};
use crate::decisions::dropped_by_decision;
use crate::exit::Usage;
use crate::exporting::{KeptRuns, Names, RecordSinks, create_parents, msb_named, producer};
use crate::records::open_records;
use swe_forge_fs::same_file;

pub fn export_command(mut args: ExportArgs) -> Result<()> {
    resolve_out(&mut args)?;
    check_outputs(&args)?;
    let mut decisions = args.store.open(&args.records, "export")?;
    for out in [&args.jsonl, &args.parquet, &args.tests_parquet].into_iter().flatten() {
        crate::exit::output_to(out);
    }
    let kept = KeptRuns::of(args.naming, args.work_dir.as_deref(), &args.records);
    let (jsonl, parquet, tests) = (args.jsonl.as_deref(), args.parquet.as_deref(), args.tests_parquet.as_deref());
    // Every file is written to a temporary file first; all are renamed together at the end, so
    // an error or a signal leaves all the previous files (`docs/reliability.md`). Records are read
    // and written one at a time: memory does not grow with the dataset.
    let batch = swe_forge_fs::Batch::begin();
    let mut sinks = match args.format {
        ExportFormat::Records => Sinks::Records(RecordSinks::create(jsonl, parquet, tests)?),
        ExportFormat::Swebench => Sinks::Swebench(SwebenchSinks::create(jsonl, parquet, tests)?),
        ExportFormat::Harbor => Sinks::Harbor(swe_forge_export::HarborWriter::create(
            args.dir.as_deref().expect("checked above"),
            &producer(),
        )?),
    };
    let (mut rejected, mut candidates, mut decided) = (0usize, 0usize, 0usize);
    let (mut total, mut exported) = (0usize, 0usize);
    for record in open_records(&args.records)? {
        let mut record = record?;
        total += 1;
        crate::decisions::apply(&mut decisions, &mut record);
        if !(args.all || record.status() == ValidationStatus::Accepted) {
            match record.status() {
                ValidationStatus::Rejected => rejected += 1,
                ValidationStatus::Candidate => candidates += 1,
                ValidationStatus::Accepted => {}
            }
            continue;
        }
        if !args.all && dropped_by_decision(&record) {
            decided += 1;
            continue;
        }
        let (record, names) = match &kept {
            Some(kept) => msb_named(record, kept)?,
            None => (record, None),
        };
        sinks.write(record, names)?;
        exported += 1;
    }
    crate::decisions::report(&decisions, "export");
    if exported < total {
        eprintln!(
            "skipping {} of {total} records: {rejected} rejected, {candidates} never validated, {decided} dropped or \
             held back by a review decision (--all exports them too)",
            total - exported,
        );
    }
    match sinks {
        Sinks::Records(s) => s.finish()?,
        Sinks::Swebench(s) => s.finish()?,
        Sinks::Harbor(w) => w.finish()?,
    }
    batch.commit()?;
    if args.json {
        let path = |p: Option<&std::path::Path>| p.map(|p| p.display().to_string());
        let value = serde_json::json!({
            "records": total,
            "exported": exported,
            "rejected": rejected,
            "candidates": candidates,
            "dropped_by_decision": decided,
            "jsonl": path(jsonl),
            "parquet": path(parquet),
            "tests_parquet": path(tests),
            "dir": path(args.dir.as_deref()),
        });
        outln!("{value}");
    } else {
        eprintln!("exported {exported} instances");
    }
    Ok(())
}

/// `-o PATH` as the flag it stands for: `--dir` with `--format harbor`, `--parquet` for a
/// `.parquet` file, else `--jsonl`; given with that flag too, a usage error.
fn resolve_out(args: &mut ExportArgs) -> Result<()> {
    let Some(out) = args.out.take() else { return Ok(()) };
    let parquet = out.extension().is_some_and(|e| e.eq_ignore_ascii_case("parquet"));
    let (flag, slot) = match args.format {
        ExportFormat::Harbor => ("--dir", &mut args.dir),
        _ if parquet => ("--parquet", &mut args.parquet),
        _ => ("--jsonl", &mut args.jsonl),
    };
    if slot.is_some() {
        return Err(Usage(format!("-o {} is {flag} here, which is given too: give one of them", out.display())).into());
    }
    *slot = Some(out);
    Ok(())
}

/// Refuses flags that do not go together and outputs that are the input or each other.
fn check_outputs(args: &ExportArgs) -> Result<()> {
    let files = args.jsonl.is_some() || args.parquet.is_some() || args.tests_parquet.is_some();
    // Flags that do not go together are usage errors (exit 2), as clap's own.
    let usage = |m: &str| -> Result<()> { Err(Usage(m.to_owned()).into()) };
    match (args.format, &args.dir) {
        (ExportFormat::Harbor, None) => usage("--format harbor writes task folders: give --dir DIR (or -o DIR)")?,
        (ExportFormat::Harbor, Some(_)) if files => usage(
            "--format harbor writes only task folders (--dir): --jsonl, --parquet and --tests-parquet do not go with it",
        )?,
        (ExportFormat::Harbor, Some(dir)) if same_file(dir, &args.records) => {
            bail!("--dir {} is the input (--records)", dir.display())
        }
        (ExportFormat::Records | ExportFormat::Swebench, Some(_)) => usage("--dir is for --format harbor")?,
        (ExportFormat::Records | ExportFormat::Swebench, None) if !files => {
            usage("nothing to export: give -o, --jsonl, --parquet and/or --tests-parquet")?
        }
        _ => {}
    }
    let outputs = [("--jsonl", &args.jsonl), ("--parquet", &args.parquet), ("--tests-parquet", &args.tests_parquet)];
    let outputs: Vec<(&str, &Path)> = outputs.iter().filter_map(|(f, p)| p.as_deref().map(|p| (*f, p))).collect();
    for (i, (flag, path)) in outputs.iter().enumerate() {
        // `-` as input is stdin, as output stdout: never the same file.
        if path.as_os_str() != "-" && same_file(path, &args.records) {
            bail!("{flag} {} is the input (--records): refusing to overwrite the records being read", path.display());
        }
        if let Some((other, _)) = outputs[..i].iter().find(|(_, q)| same_file(path, q)) {
            bail!("{other} and {flag} name the same file {}: give each output its own path", path.display());
        }
    }
    Ok(())
}

/// Where an export's records go as they are read.
enum Sinks {
    Records(RecordSinks),
    Swebench(SwebenchSinks),
    /// Harbor task folders, put in place at the end.
    Harbor(swe_forge_export::HarborWriter),
}

impl Sinks {
    fn write(&mut self, record: Instance, names: Option<Names>) -> Result<()> {
        match self {
            Sinks::Records(s) => s.write(&record),
            Sinks::Swebench(s) => s.write(&record, names.as_ref()),
            Sinks::Harbor(w) => Ok(w.write(&record, names.as_ref())?),
        }
    }
}

/// The files of an export in SWE-bench's shape, written as the records come.
struct SwebenchSinks {
    jsonl: Option<swe_forge_export::SweBenchJsonlWriter>,
    parquet: Option<swe_forge_export::SweBenchParquetWriter>,
    tests: Option<swe_forge_export::TestsWriter>,
}

impl SwebenchSinks {
    fn create(jsonl: Option<&Path>, parquet: Option<&Path>, tests: Option<&Path>) -> Result<SwebenchSinks> {
        create_parents([jsonl, parquet, tests])?;
        let producer = producer();
        Ok(SwebenchSinks {
            jsonl: jsonl.map(swe_forge_export::SweBenchJsonlWriter::create).transpose()?,
            parquet: parquet.map(|p| swe_forge_export::SweBenchParquetWriter::create(p, &producer)).transpose()?,
            tests: tests.map(|p| swe_forge_export::TestsWriter::create(p, &producer)).transpose()?,
        })
    }

    fn write(&mut self, record: &Instance, names: Option<&Names>) -> Result<()> {
        if let Some(w) = &mut self.jsonl {
            w.write(record, names)?;
        }
        if let Some(w) = &mut self.parquet {
            w.write(record, names)?;
        }
        if let Some(w) = &mut self.tests {
            w.write(record)?;
        }
        Ok(())
    }

    fn finish(self) -> Result<()> {
        if let Some(w) = self.jsonl {
            w.finish()?;
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
