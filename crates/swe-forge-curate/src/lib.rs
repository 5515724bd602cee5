//! Curation of a validated dataset: difficulty labels from a transparent heuristic (calibrated
//! against Multi-SWE-bench's human labels, see docs/difficulty-calibration.md), the keep rule of
//! reviews (the review page is `swe-forge-review`), near-duplicate grouping of fix patches and
//! splits (the dataset card is `swe-forge-card`).
//!
//! Everything here is pure data in, data out, except the file writer of `splits`.
//! Reviews and decisions come in as the record's types (`swe_forge_core::Review`, `Decision`):
//! the state store (`swe-forge-store`) keeps them and `swe-forge-review` turns its rows into
//! them. This crate never prints and never talks to Docker, git or the network.

mod apply;
mod calibrate;
mod dedup;
mod difficulty;
mod error;
mod keep;
mod labels;
mod lang;
mod splits;

pub use apply::{
    CurateIndex, CurateMarks, CurateOptions, CurateSummary, curate, is_kept, is_kept_in, kept_but_for_duplicates,
    kept_by_people, kept_records, label_missing_difficulty, quality_flags,
};
pub use calibrate::{Calibration, Confusion, calibrate, fit_thresholds};
pub use dedup::{DedupOptions, DuplicateFinder, DuplicateGroup, find_duplicates};
pub use difficulty::{Heuristic, features, heuristic_label};
pub use error::CurateError;
pub use keep::KeepRule;
pub use labels::{HumanLabel, parse_label, read_labels};
pub use lang::language;
pub use splits::{SplitOptions, SplitSummary, SplitWriter, valid_cutoff, write_records, write_splits};
