//! `swe-forge export`: validated records to JSONL and Parquet, as records or in SWE-bench's
//! shape, or to Harbor task folders, with canonical or Multi-SWE-bench test names.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use swe_forge_agree::{PhaseLogs, View, rederive};
use swe_forge_core::{Instance, ValidationStatus};
use swe_forge_logparse::Naming;

use crate::cli::{ExportArgs, ExportFormat};
use crate::decisions::dropped_by_decision;
use crate::exit::Usage;
use crate::exporting::{RecordSinks, create_parents, producer};
use crate::records::{open_records, read_logs};
use swe_forge_fs::same_file;

pub fn export_command(mut args: ExportArgs) -> Result<()> {
    resolve_out(&mut args)?;
    check_outputs(&args)?;
    let mut decisions = args.store.open(&args.records, "export")?;
    for out in [&args.jsonl, &args.parquet, &args.tests_parquet].into_iter().flatten() {
        crate::exit::output_to(out);
    }
    let kept = match (args.naming, &args.work_dir) {
        // `--work-dir` asks for the kept runs, parsed again with this build's parsers; without it
        // each record's own names serve, and the default work folder only for older records.
        (Naming::Msb, Some(dir)) => Some(KeptRuns::Only(dir.clone())),
        (Naming::Msb, None) => Some(KeptRuns::Fallback(args.records.with_extension("work"))),
        // `--naming` offers `canonical` and `msb` only.
        (Naming::Canonical | Naming::Auto, _) => None,
    };
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
    eprintln!("exported {exported} instances");
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

/// Where `--naming msb` finds a record's three runs.
enum KeptRuns {
    /// The runs kept under this work folder (`--work-dir`), for every record.
    Only(PathBuf),
    /// Each record's own run results and `swe_forge.msb_names`; the runs kept under this work
    /// folder for a record that has no names (made before records kept them).
    Fallback(PathBuf),
}

/// `records` with Multi-SWE-bench test names: each swe-forge record's three runs (its run
/// results with its `msb_names`, or the kept parses under a work folder) rolled up to
/// Multi-SWE-bench names and categorised again, exactly as `revalidate --profile msb` compares
/// them. Records without a `swe_forge` block did not come from swe-forge's runs (published
/// Multi-SWE-bench records already use its names) and stay as they are. With each record, the
/// Multi-SWE-bench name of each canonical id its runs printed (what a SWE-bench row's eval script
/// renames the run's results with), for swe-forge records.
fn msb_named(r: Instance, kept: &KeptRuns) -> Result<(Instance, Option<Names>)> {
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
type Names = BTreeMap<String, String>;

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
