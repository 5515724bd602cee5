//! `swe-forge curate`: difficulty labels (human first), review decisions from the store and
//! duplicate marks onto every record; optional splits; or, with --calibrate, the heuristic's
//! agreement with human labels.

use std::collections::BTreeSet;
use std::collections::btree_map::Keys;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use swe_forge_core::{Instance, QualityFlag};
use swe_forge_curate::{
    CurateIndex, CurateOptions, DedupOptions, Heuristic, HumanLabel, SplitOptions, SplitWriter, kept_records,
    quality_flags,
};
use swe_forge_review::review_from_row;

use crate::cli::KeepArgs;
use crate::decisions::{StoreArgs, applied_line};
use crate::records::{open_records, read_records};

#[derive(Debug, clap::Args)]
pub struct CurateArgs {
    /// The records to curate (JSONL).
    #[arg(long, visible_alias = "records")]
    pub dataset: PathBuf,
    /// Where the curated records go (JSONL; `-` is stdout, which then carries only them); every
    /// record, with its marks, unless --kept-only.
    #[arg(long, short, required_unless_present = "calibrate")]
    pub out: Option<PathBuf>,
    /// The reviews and decisions made with `swe-forge review`: a decision wins over the keep
    /// rule, `drop` and `needs_work` leave the kept set (--kept-only, splits, publish) and stay
    /// marked in the full output (`swe_forge.decision`).
    #[command(flatten)]
    pub store: StoreArgs,
    /// Human difficulty labels (JSON lines with instance_id and label, or `id<TAB>label` lines);
    /// they override the heuristic.
    #[arg(long)]
    pub labels: Option<PathBuf>,
    #[command(flatten)]
    pub keep: KeepArgs,
    /// Smallest similarity (0-1) of two fix patches that makes them duplicates.
    #[arg(long, default_value_t = 0.8, value_parser = crate::cli::unit_share)]
    pub dedup_threshold: f64,
    /// Do not look for duplicates.
    #[arg(long)]
    pub no_dedup: bool,
    /// Write only the records that stay in the dataset: accepted, not dropped by a decision or a
    /// review, not held back as needing work, not duplicates.
    #[arg(long)]
    pub kept_only: bool,
    /// Keep only instances whose evidence is complete (`swe_forge.evidence`: the gold patch
    /// resolved every time through evaluation, both negative controls held, every layout variant
    /// of the gold patch graded held).
    #[arg(long)]
    pub require_evidence: bool,
    /// Keep only instances that raise no quality flag (`swe_forge.quality.flags`: no_issue_text,
    /// solution_leak, unnamed_identifiers, unspecific, untested_hunks, flaky); curate computes the
    /// text signals, validation the run signals.
    #[arg(long)]
    pub require_quality: bool,
    #[command(flatten)]
    pub flags: crate::cli::FlagArgs,
    /// Write splits of the kept records into this folder (date/, repo/, lang/).
    #[arg(long)]
    pub splits: Option<PathBuf>,
    /// Day (YYYY-MM-DD) dividing the date split: merged before it, and from it on.
    #[arg(long, requires = "splits")]
    pub cutoff: Option<String>,
    /// Which by-value splits to write (repo, lang); the date split comes with --cutoff.
    #[arg(long, value_delimiter = ',', default_values = ["repo", "lang"], requires = "splits")]
    pub split_by: Vec<SplitBy>,
    /// Instead of curating, compare the heuristic with these human labels and print the
    /// agreement (Markdown) on stdout.
    #[arg(long, conflicts_with_all = ["out", "labels", "splits"])]
    pub calibrate: Option<PathBuf>,
    /// With --calibrate: also search the thresholds that agree best and print them.
    #[arg(long, requires = "calibrate")]
    pub fit: bool,
    /// Print the summary as one JSON object on stdout (counts, the output, the split files)
    /// instead of a sentence. With `-o -` the records go to stdout and the summary, JSON or not,
    /// to stderr.
    #[arg(long, conflicts_with = "calibrate")]
    pub json: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SplitBy {
    /// One file per repository.
    Repo,
    /// One file per language.
    Lang,
}

pub fn curate_command(args: CurateArgs) -> Result<()> {
    if let Some(out) = &args.out {
        crate::exit::output_to(out);
    }
    if let Some(labels) = &args.calibrate {
        return calibrate(&args.dataset, labels, args.fit);
    }
    if rereadable(&args.dataset) {
        return curate_stream(args);
    }
    let mut records = read_records(&args.dataset)?;
    let (options, store) = options(&args, |ids, path| {
        let known: BTreeSet<&str> = records.iter().map(|r| r.instance_id.as_str()).collect();
        warn_unknown_labels(path, ids, |id| known.contains(id));
    })?;
    let summary = swe_forge_curate::curate(&mut records, &options);
    report_store(&summary, store.as_deref());
    let mut kept: Vec<&Instance> = kept_records(&records);
    let before = kept.len();
    if args.require_evidence {
        kept.retain(|r| r.swe_forge.as_ref().and_then(|m| m.evidence.as_ref()).is_some_and(|e| e.complete()));
    }
    let without_evidence = before - kept.len();
    let before = kept.len();
    kept.retain(|r| !flag_dropped(&args, r));
    let flagged = before - kept.len();
    let out = args.out.as_deref().context("--out is required")?;
    let written: Vec<&Instance> = if args.kept_only { kept.clone() } else { records.iter().collect() };
    // The records and the splits are renamed into place together, at the end.
    let batch = swe_forge_fs::Batch::begin();
    swe_forge_curate::write_records(out, &written)?;
    let split_files = match &args.splits {
        Some(dir) => swe_forge_curate::write_splits(&kept, &split_options(&args, dir))?.files,
        None => Vec::new(),
    };
    batch.commit()?;
    let counts = Counts {
        without_evidence: args.require_evidence.then_some(without_evidence),
        flagged: flag_rule(&args).then_some(flagged),
        kept: kept.len(),
        written: written.len(),
    };
    print_summary(&summary, &counts, out, &split_files, args.json);
    Ok(())
}

/// Whether --require-quality or --drop-flag leave `r` out.
fn flag_dropped(args: &CurateArgs, r: &Instance) -> bool {
    (args.require_quality && !quality_flags(r).is_empty()) || args.flags.drops(r)
}

/// Whether any rule drops instances by their quality flags.
fn flag_rule(args: &CurateArgs) -> bool {
    args.require_quality || !args.flags.drop_flags.is_empty()
}

/// The splits `--splits DIR` asks for.
fn split_options(args: &CurateArgs, dir: &Path) -> SplitOptions {
    SplitOptions {
        out_dir: dir.to_owned(),
        cutoff: args.cutoff.clone(),
        by_repo: args.split_by.contains(&SplitBy::Repo),
        by_lang: args.split_by.contains(&SplitBy::Lang),
    }
}

/// What curate kept and wrote, beside the library's summary.
struct Counts {
    /// Kept records without complete evidence (`--require-evidence` only).
    without_evidence: Option<usize>,
    /// Kept records (with complete evidence, if required) that raise a quality flag
    /// (`--require-quality`), or one of `--drop-flag` (only with either).
    flagged: Option<usize>,
    kept: usize,
    written: usize,
}

/// The line saying what curate did and a line per split file; with `json`, one JSON object.
fn print_summary(
    summary: &swe_forge_curate::CurateSummary,
    counts: &Counts,
    out: &Path,
    split_files: &[(std::path::PathBuf, usize)],
    json: bool,
) {
    if json {
        let splits: Vec<serde_json::Value> = split_files
            .iter()
            .map(|(path, n)| serde_json::json!({ "path": path.display().to_string(), "records": n }))
            .collect();
        let value = serde_json::json!({
            "records": summary.records,
            "human_labels": summary.human_labels,
            "reviewed": summary.reviewed,
            "dropped_by_review": summary.dropped_by_review,
            "decided": summary.decided,
            "dropped_by_decision": summary.dropped_by_decision,
            "needs_work": summary.needs_work,
            "duplicates": summary.duplicates,
            "duplicates_dropped": summary.duplicates_dropped,
            "without_evidence": counts.without_evidence,
            "flagged_dropped": counts.flagged,
            "flags": flags_json(summary),
            "kept": counts.kept,
            "written": counts.written,
            "out": out.display().to_string(),
            "splits": splits,
        });
        outln!("{value}");
        return;
    }
    outln!(
        "{} records: {} labelled by people, {} reviewed ({} dropped by the keep rule), {} decided ({} dropped, {} need work), {} duplicates ({} of them dropped from the kept set, as the card counts){}{}; {} kept; {} written to {}",
        summary.records,
        summary.human_labels,
        summary.reviewed,
        summary.dropped_by_review,
        summary.decided,
        summary.dropped_by_decision,
        summary.needs_work,
        summary.duplicates,
        summary.duplicates_dropped,
        counts.without_evidence.map(|n| format!(", {n} without complete evidence")).unwrap_or_default(),
        counts.flagged.map(|n| format!(", {n} with a quality flag")).unwrap_or_default(),
        counts.kept,
        counts.written,
        out.display()
    );
    outln!("{}: {}", flags_heading(summary.kept, counts), flags_line(summary));
    for (path, n) in split_files {
        outln!("{n:>6}  {}", path.display());
    }
}

/// What the flag counts are of: the records the review, the decisions and duplicates keep
/// (`kept_before`), which are the kept ones unless --require-evidence, --require-quality or
/// --drop-flag leave some out; then the line says so, with the number kept after them, so that
/// it never gives another "kept" count than the sentence before it.
fn flags_heading(kept_before: usize, counts: &Counts) -> String {
    let mut rules = Vec::new();
    if counts.without_evidence.is_some() {
        rules.push("--require-evidence");
    }
    if counts.flagged.is_some() {
        rules.push("the quality-flag rules (--require-quality, --drop-flag)");
    }
    if rules.is_empty() {
        return format!("quality flags of the {kept_before} kept records");
    }
    format!(
        "quality flags of the {kept_before} records kept before {}, {} kept after them",
        rules.join(" and "),
        counts.kept
    )
}

/// Each quality flag with how many kept records raise it, in the card's order.
fn flags_json(summary: &swe_forge_curate::CurateSummary) -> serde_json::Value {
    QualityFlag::ALL
        .iter()
        .map(|f| (f.as_str().to_owned(), serde_json::json!(summary.flagged.get(f).copied().unwrap_or(0))))
        .collect::<serde_json::Map<_, _>>()
        .into()
}

/// `solution_leak 0, unnamed_identifiers 2, ...` of the kept set before --require-quality.
fn flags_line(summary: &swe_forge_curate::CurateSummary) -> String {
    QualityFlag::ALL
        .iter()
        .map(|f| format!("{} {}", f.as_str(), summary.flagged.get(f).copied().unwrap_or(0)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whether `path` is a regular file, which can be read twice: `-` (stdin), a FIFO or a device is
/// read once, into memory.
fn rereadable(path: &Path) -> bool {
    path.as_os_str() != "-" && std::fs::metadata(path).is_ok_and(|m| m.is_file())
}

/// [`curate_command`] of a regular file without calibration, in two passes that each hold one
/// record at a time: the first gathers what needs the whole dataset (instance ids, whether any
/// record is validated, the fix patches' fingerprints for duplicates), the second reads the
/// records again, curates each and writes it out as it comes (and each kept one to its splits,
/// which keep where its line is). Same output, byte for byte, as curating the records in memory.
fn curate_stream(args: CurateArgs) -> Result<()> {
    let mut index = CurateIndex::default();
    for r in open_records(&args.dataset)? {
        index.add(&r?);
    }
    let (options, store) = options(&args, |ids, path| warn_unknown_labels(path, ids, |id| index.contains(id)))?;
    let out = args.out.as_deref().context("--out is required")?;
    let seen = index.len();
    let mut marks = index.marks(&options);
    let mut summary = marks.summary();
    let (mut kept, mut without_evidence, mut flagged, mut written) = (0usize, 0usize, 0usize, 0usize);
    let batch = swe_forge_fs::Batch::begin();
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let mut writer =
        swe_forge_export::JsonlWriter::create(out).with_context(|| format!("writing {}", out.display()))?;
    let mut splits = args.splits.as_deref().map(|dir| SplitWriter::new(split_options(&args, dir))).transpose()?;
    for r in open_records(&args.dataset)? {
        let mut r = r?;
        if summary.records == seen {
            bail!(
                "{} changed while curate read it: it holds more records than on the first pass",
                args.dataset.display()
            );
        }
        let mut keep = marks.apply(&mut r, &options, &mut summary);
        if keep
            && args.require_evidence
            && !r.swe_forge.as_ref().and_then(|m| m.evidence.as_ref()).is_some_and(|e| e.complete())
        {
            without_evidence += 1;
            keep = false;
        }
        if keep && flag_dropped(&args, &r) {
            flagged += 1;
            keep = false;
        }
        kept += usize::from(keep);
        if let Some(splits) = splits.as_mut().filter(|_| keep) {
            splits.add(&r)?;
        }
        if keep || !args.kept_only {
            writer.write(&r).with_context(|| format!("writing {}", out.display()))?;
            written += 1;
        }
    }
    if summary.records != seen {
        bail!("{} changed while curate read it: it holds fewer records than on the first pass", args.dataset.display());
    }
    writer.finish().with_context(|| format!("writing {}", out.display()))?;
    let split_files = splits.map(SplitWriter::finish).transpose()?.map(|s| s.files).unwrap_or_default();
    batch.commit()?;
    report_store(&summary, store.as_deref());
    let counts = Counts {
        without_evidence: args.require_evidence.then_some(without_evidence),
        flagged: flag_rule(&args).then_some(flagged),
        kept,
        written,
    };
    print_summary(&summary, &counts, out, &split_files, args.json);
    Ok(())
}

/// Labels whose instance id is in no record (`known` says which are) are left out: says so,
/// naming them.
fn warn_unknown_labels<'a>(path: &Path, ids: impl Iterator<Item = &'a String>, known: impl Fn(&str) -> bool) {
    let unknown: Vec<&str> = ids.map(String::as_str).filter(|id| !known(id)).collect();
    if unknown.is_empty() {
        return;
    }
    let shown = unknown.iter().take(10).copied().collect::<Vec<_>>().join(", ");
    let more = if unknown.len() > 10 { format!(" and {} more", unknown.len() - 10) } else { String::new() };
    eprintln!(
        "warning: {} label(s) of {} name no instance of the dataset and are ignored: {}{more}",
        unknown.len(),
        path.display(),
        crate::terminal::clean(&shown)
    );
}

/// The heuristic's agreement with people's labels: only the labelled records of the dataset are
/// kept, read one at a time.
fn calibrate(dataset: &Path, labels_path: &Path, fit: bool) -> Result<()> {
    let labels = swe_forge_curate::read_labels(labels_path)?;
    let mut records = Vec::new();
    for r in open_records(dataset)? {
        let r = r?;
        if labels.contains_key(&r.instance_id) {
            records.push(r);
        }
    }
    let records = &records;
    let known: BTreeSet<&str> = records.iter().map(|r| r.instance_id.as_str()).collect();
    warn_unknown_labels(labels_path, labels.keys(), |id| known.contains(id));
    let current = Heuristic::CALIBRATED;
    outln!("{}", swe_forge_curate::calibrate(records, &labels, &current).to_markdown(&current));
    if fit {
        let fitted = swe_forge_curate::fit_thresholds(records, &labels, &current);
        outln!(
            "Best thresholds for these weights: easy below {}, hard from {}.\n",
            fitted.easy_below,
            fitted.hard_from
        );
        outln!("{}", swe_forge_curate::calibrate(records, &labels, &fitted).to_markdown(&fitted));
    }
    Ok(())
}

/// What curate applies: the keep rule, dedup, the labels file (its unknown ids reported by
/// `warn`) and the reviews and decisions of the store (whose path comes second).
fn options(
    args: &CurateArgs,
    warn: impl FnOnce(Keys<'_, String, HumanLabel>, &Path),
) -> Result<(CurateOptions, Option<PathBuf>)> {
    let mut store_path = None;
    let mut options = CurateOptions {
        keep_rule: args.keep.rule(),
        dedup: (!args.no_dedup).then_some(DedupOptions { threshold: args.dedup_threshold }),
        heuristic: Heuristic::CALIBRATED,
        ..Default::default()
    };
    if let Some(path) = &args.labels {
        options.labels = swe_forge_curate::read_labels(path)?;
        warn(options.labels.keys(), path);
    }
    if let Some(store) = args.store.open(&args.dataset, "curate")? {
        let rule = options.keep_rule;
        options.reviews = store.reviews.iter().map(|(id, row)| (id.clone(), review_from_row(row, &rule))).collect();
        options.decisions = store.decisions;
        store_path = Some(store.path);
    }
    Ok((options, store_path))
}

/// Says on stderr how many decisions and reviews of `store` curate applied.
fn report_store(summary: &swe_forge_curate::CurateSummary, store: Option<&Path>) {
    if let Some(store) = store {
        let line = applied_line(summary.decided, summary.dropped_by_decision, summary.needs_work, store);
        eprintln!("curate: {line}; {} reviews applied", summary.reviewed);
    }
}
