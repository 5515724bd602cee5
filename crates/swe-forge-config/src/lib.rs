//! The files a person writes to steer swe-forge: pipeline files (`pipelines/*.toml`: records,
//! repositories, filters, recipe overrides, limits, outputs, what to mine) and profiles
//! (`pipelines/profiles/*.toml`: recipe overrides plus the naming test lists are read in).
//!
//! - [`Pipeline::load`] and [`Profile::load`] read a file and check it: unknown keys and parser
//!   names that do not exist are [`ConfigError`]s naming the file and the key, when the file
//!   loads, not a rejection of every instance it reaches.
//! - [`RecipeOverride`] is the contract between these files and `swe-forge-validate`, which
//!   applies overrides to recipes and checks the recipe and toolchain names they give.
//! - [`pipeline_schema`] and [`profile_schema`] are the JSON Schemas of both files, committed as
//!   `schemas/pipeline.schema.json` and `schemas/profile.schema.json`.
//!
//! **Invariant:** plain serde data and checks on it; never runs a container, reads a repository
//! or touches the network.

mod error;
mod overrides;
mod pipeline;
mod profile;
mod schema;

pub use error::ConfigError;
pub use overrides::{ExtraSource, RecipeOverride};
pub use pipeline::{
    BackendKind, BaseSection, Filters, MineRepo, MineSection, Output, Pipeline, Source, ValidateSection,
};
pub use profile::Profile;
pub use schema::{pipeline_schema, profile_schema};
