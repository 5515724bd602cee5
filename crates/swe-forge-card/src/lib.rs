//! The dataset card of a curated dataset (`swe-forge report`, `swe-forge publish`): a README.md
//! with counts, the funnel, per-language and per-repository tables and distributions
//! (`report.rs`), its plots as hand-written SVG (`svg.rs`), the YAML front matter the Hugging
//! Face Hub reads (`hub.rs`), and the card's usage and citation sections (`usage.rs`). Text from
//! records goes into the card escaped.

mod error;
mod hub;
mod report;
mod svg;
mod usage;

pub use error::CardError;
pub use hub::{
    DEFAULT_CONFIG, HUB_TAGS, HubCard, HubConfig, HubSplit, front_matter, hub_languages, hub_license, hub_licenses,
    size_category, split_file, split_name, valid_language, valid_license,
};
pub use report::{Card, ReportOptions, write_report};
pub use usage::{citation_section, hub_slug, usage_section};
