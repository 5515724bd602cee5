//! `swe-forge report`: the dataset card (README.md and SVG plots) of a dataset.

use std::path::PathBuf;

use anyhow::Result;
use swe_forge_card::ReportOptions;
use swe_forge_curate::Heuristic;

use crate::decisions::StoreArgs;
use crate::records::{folder_out, open_records};
use crate::written::Written;

#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// The dataset (JSONL records; curated ones carry difficulty, reviews and duplicate marks).
    #[arg(long, visible_alias = "records")]
    pub dataset: PathBuf,
    #[command(flatten)]
    pub store: StoreArgs,
    /// Folder for README.md and plots/.
    #[arg(long, short)]
    pub out: PathBuf,
    /// The card's title. Default: the dataset's file name.
    #[arg(long)]
    pub title: Option<String>,
    /// Replace a README.md in --out that swe-forge did not write, or that was edited since
    /// (refused without it; the files written are listed in --out/.swe-forge-written).
    #[arg(long)]
    pub force: bool,
    /// Print the summary as one JSON object on stdout (the card's path, the records read and how
    /// many are kept) instead of the card's path.
    #[arg(long)]
    pub json: bool,
}

pub fn report_command(args: ReportArgs) -> Result<()> {
    let mut decisions = args.store.open(&args.dataset, "report")?;
    folder_out("--out", &args.out)?;
    let mut written = Written::read(&args.out)?;
    written.check_replace(&["README.md"], args.force)?;
    let title = args.title.clone().unwrap_or_else(|| {
        args.dataset.file_stem().map_or_else(|| "Dataset".into(), |s| s.to_string_lossy().into_owned())
    });
    // One record at a time: the card keeps a few numbers of each, never the records.
    let mut card =
        swe_forge_card::Card::new(ReportOptions { out_dir: args.out.clone(), title, heuristic: Heuristic::CALIBRATED });
    let (mut records, mut kept) = (0usize, 0usize);
    for record in open_records(&args.dataset)? {
        let mut record = record?;
        crate::decisions::apply(&mut decisions, &mut record);
        card.add(&record);
        records += 1;
        kept += usize::from(swe_forge_curate::is_kept(&record));
    }
    crate::decisions::report(&decisions, "report");
    let card = card.write()?;
    written.record("README.md")?;
    written.save()?;
    if args.json {
        let value = serde_json::json!({
            "out": args.out.display().to_string(),
            "card": card.display().to_string(),
            "records": records,
            "kept": kept,
        });
        outln!("{value}");
    } else {
        outln!("{}", card.display());
    }
    Ok(())
}
