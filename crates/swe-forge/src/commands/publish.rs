//! `swe-forge publish`: a dataset folder as the Hugging Face Hub reads it: one instances Parquet
//! table per split under `data/` (as `export --parquet` writes it), and `README.md`: YAML front
//! matter naming the splits' files, then the dataset card of `report`, its plots in `plots/`.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use swe_forge_card::{HubCard, ReportOptions};
use swe_forge_core::{Instance, ValidationStatus};
use swe_forge_curate::{Heuristic, is_kept};

use crate::records::read_records;

#[derive(Debug, clap::Args)]
#[command(after_help = "Example:\n  swe-forge publish --dataset curated.jsonl --out hub/ --license apache-2.0")]
pub struct PublishArgs {
    /// The dataset: validated (or curated) records, JSONL or an instances Parquet table. Only
    /// records validation accepted, not dropped by a review and not duplicates are published.
    #[arg(long, visible_alias = "records")]
    pub dataset: PathBuf,
    /// The folder to write: README.md, plots/ and data/<split>-00000-of-00001.parquet.
    #[arg(long, short)]
    pub out: PathBuf,
    /// A folder of split files, one split per file named by its stem, e.g. `<splits>/lang` as
    /// `curate --splits <splits>` writes it. Default: one split, `test`, of the whole dataset.
    #[arg(long)]
    pub splits: Option<PathBuf>,
    /// The license id in the front matter (`apache-2.0`, `mit`, `cc-by-4.0`, ...).
    #[arg(long, default_value = "other")]
    pub license: String,
    /// The card's title and the dataset's pretty name. Default: the dataset's file name.
    #[arg(long)]
    pub title: Option<String>,
}

pub fn publish_command(args: PublishArgs) -> Result<()> {
    if !swe_forge_card::valid_license(&args.license) {
        bail!("--license {:?} is not a license id (letters, digits and . + - _)", args.license);
    }
    let records = read_records(&args.dataset)?;
    let kept = publishable(&records, &args.dataset)?;
    let splits: Vec<(String, Vec<Instance>)> = match &args.splits {
        None => vec![("test".to_owned(), kept)],
        Some(dir) => split_files(dir)?,
    };
    let title = args.title.clone().unwrap_or_else(|| {
        args.dataset.file_stem().map_or_else(|| "Dataset".into(), |s| s.to_string_lossy().into_owned())
    });

    let data = args.out.join("data");
    clear_parquet(&data)?;
    for (name, members) in &splits {
        let path = args.out.join(swe_forge_card::split_path(name));
        crate::exporting::export(members, None, Some(&path), None)?;
        println!("{:>6}  {}", members.len(), path.display());
    }
    let card = swe_forge_card::write_report(
        &records,
        &ReportOptions { out_dir: args.out.clone(), title: title.clone(), heuristic: Heuristic::CALIBRATED },
    )?;
    let hub = HubCard {
        pretty_name: title,
        license: args.license.clone(),
        splits: splits.iter().map(|(name, members)| (name.clone(), members.len())).collect(),
    };
    let body = std::fs::read_to_string(&card).with_context(|| format!("reading {}", card.display()))?;
    let files: Vec<String> =
        hub.splits.iter().map(|(name, n)| format!("`{}` ({n})", swe_forge_card::split_path(name))).collect();
    let text = format!(
        "{}{body}\n## Files\n\nOne row per instance, in swe-forge's instances table (the record's fields as \
         columns, `swe_forge` as JSON; columns in swe-forge's `schemas/parquet.md`): {}.\n",
        swe_forge_card::front_matter(&hub),
        files.join(", ")
    );
    crate::records::write_output(&card, text.as_bytes())?;
    println!("{}", card.display());
    Ok(())
}

/// The records a publication ships: accepted, not dropped by a review, not duplicates. Refuses a
/// dataset that has none, saying why.
fn publishable(records: &[Instance], path: &Path) -> Result<Vec<Instance>> {
    let kept: Vec<Instance> = records.iter().filter(|r| is_kept(r)).cloned().collect();
    if !kept.is_empty() {
        return Ok(kept);
    }
    let count = |s: ValidationStatus| records.iter().filter(|r| r.status() == s).count();
    let (accepted, rejected) = (count(ValidationStatus::Accepted), count(ValidationStatus::Rejected));
    let pending = records.len() - accepted - rejected;
    if records.is_empty() {
        bail!("{} holds no records: nothing to publish", path.display());
    }
    if accepted == 0 {
        bail!(
            "{} has no accepted records ({} records: {rejected} rejected, {pending} not validated): only records \
             validation accepted are published; run `swe-forge validate` on them first",
            path.display(),
            records.len()
        );
    }
    bail!(
        "{} has {accepted} accepted records, but reviews dropped or duplicate marks removed every one: nothing to publish",
        path.display()
    )
}

/// One split per `*.jsonl` or `*.parquet` file of `dir`, named by its stem (made a name the Hub
/// accepts), sorted by name; each keeps only publishable records, and empty ones are left out.
fn split_files(dir: &Path) -> Result<Vec<(String, Vec<Instance>)>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("reading the splits folder {}", dir.display()))?
        .filter_map(|e| Some(e.ok()?.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "jsonl" || e == "parquet"))
        .collect();
    files.sort();
    if files.is_empty() {
        bail!(
            "{} holds no split files (*.jsonl, *.parquet); give one kind of split, e.g. {}",
            dir.display(),
            dir.join("lang").display()
        );
    }
    let mut splits: Vec<(String, Vec<Instance>)> = Vec::new();
    for file in files {
        let name = swe_forge_card::split_name(&file.file_stem().unwrap_or_default().to_string_lossy());
        if splits.iter().any(|(n, _)| *n == name) {
            bail!("two split files of {} give the split name {name:?}", dir.display());
        }
        let members: Vec<Instance> = read_records(&file)?.into_iter().filter(is_kept).collect();
        if members.is_empty() {
            eprintln!("{}: no accepted records, left out", file.display());
            continue;
        }
        splits.push((name, members));
    }
    if splits.is_empty() {
        bail!("no split file of {} holds an accepted record: nothing to publish", dir.display());
    }
    Ok(splits)
}

/// Removes the Parquet files an earlier publication left in `data/`, so no stale split remains.
fn clear_parquet(data: &Path) -> Result<()> {
    let Ok(entries) = std::fs::read_dir(data) else { return Ok(()) };
    for path in entries.flatten().map(|e| e.path()) {
        if path.extension().is_some_and(|e| e == "parquet") {
            std::fs::remove_file(&path).with_context(|| format!("removing {}", path.display()))?;
        }
    }
    Ok(())
}
