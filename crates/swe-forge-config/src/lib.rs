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

/// Most bytes of a pipeline or profile file: 16 MiB (a real one is a few KiB), so that
/// `--pipeline /dev/zero` ends in an error instead of filling the memory.
pub const MAX_CONFIG_BYTES: u64 = 16 << 20;

/// The least memory limit of a container, in MiB: below it no test run gets far (`--memory-mb 1`
/// ended every instance as `infrastructure`), so a smaller one is refused where it is given.
pub const MIN_MEMORY_MB: u64 = 64;

/// The text of a pipeline or profile file, at most [`MAX_CONFIG_BYTES`] of it.
pub(crate) fn read_config(path: &std::path::Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(path)?.take(MAX_CONFIG_BYTES + 1).read_to_string(&mut text)?;
    if text.len() as u64 > MAX_CONFIG_BYTES {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("longer than {} MiB, the most a configuration file may hold", MAX_CONFIG_BYTES >> 20),
        ));
    }
    Ok(text)
}
