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

/// The memory limit of a container when none is given, in MiB: 8 GiB, or half the machine's
/// memory when that is less ([`default_memory_mb`]), so that one test run cannot take the machine.
pub const DEFAULT_MEMORY_MB: u64 = 8192;

/// The memory limit of a container when none is given, in MiB, from the text of `/proc/meminfo`
/// (None: not readable): [`DEFAULT_MEMORY_MB`], or half of `MemTotal` when that is less, never
/// below [`MIN_MEMORY_MB`].
pub fn default_memory_mb(meminfo: Option<&str>) -> u64 {
    let total_mb = meminfo.and_then(|text| {
        let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
        let mut words = line["MemTotal:".len()..].split_whitespace();
        let kb: u64 = words.next()?.parse().ok()?;
        (words.next() == Some("kB")).then_some(kb / 1024)
    });
    match total_mb {
        Some(mb) => (mb / 2).clamp(MIN_MEMORY_MB, DEFAULT_MEMORY_MB),
        None => DEFAULT_MEMORY_MB,
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_memory_limit_is_8_gib_or_half_the_machine() {
        let info = |kb: u64| format!("MemTotal:       {kb} kB\nMemFree:         3532284 kB\n");
        assert_eq!(default_memory_mb(Some(&info(24_683_772))), 8192, "a 24 GB machine");
        assert_eq!(default_memory_mb(Some(&info(8 << 20))), 4096, "an 8 GiB machine: half of it");
        assert_eq!(default_memory_mb(Some(&info(64 << 10))), MIN_MEMORY_MB, "never below the least limit");
        assert_eq!(default_memory_mb(None), 8192, "no /proc/meminfo");
        assert_eq!(default_memory_mb(Some("MemTotal: lots\n")), 8192, "unreadable");
    }
}
