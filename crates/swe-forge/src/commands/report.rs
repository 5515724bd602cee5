//! `swe-forge report`: the dataset card (README.md and SVG plots) of a dataset.

use std::path::PathBuf;

use anyhow::Result;
use swe_forge_card::ReportOptions;
use swe_forge_curate::Heuristic;

use crate::records::{folder_out, read_records};

#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// The dataset (JSONL records; curated ones carry difficulty, reviews and duplicate marks).
    #[arg(long, visible_alias = "records")]
    pub dataset: PathBuf,
    /// Folder for README.md and plots/.
    #[arg(long, short)]
    pub out: PathBuf,
    /// The card's title. Default: the dataset's file name.
    #[arg(long)]
    pub title: Option<String>,
}

pub fn report_command(args: ReportArgs) -> Result<()> {
    folder_out("--out", &args.out)?;
    let records = read_records(&args.dataset)?;
    let title = args.title.clone().unwrap_or_else(|| {
        args.dataset.file_stem().map_or_else(|| "Dataset".into(), |s| s.to_string_lossy().into_owned())
    });
    let card = swe_forge_card::write_report(
        &records,
        &ReportOptions { out_dir: args.out.clone(), title, heuristic: Heuristic::CALIBRATED },
    )?;
    outln!("{}", card.display());
    Ok(())
}
