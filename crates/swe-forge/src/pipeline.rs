//! Pipeline files (TOML under `pipelines/`): which records and repositories to read, which
//! instances to keep, per-repository recipe overrides, validation limits and outputs.
//! Relative paths are relative to the pipeline file's folder.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::Deserialize;
use swe_forge_core::Instance;
use swe_forge_docker::BaseSpec;
use swe_forge_validate::RecipeOverride;

/// A parsed pipeline file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pipeline {
    /// Name shown in reports.
    pub name: String,
    /// Free text.
    #[serde(default)]
    pub description: String,
    /// Where candidates come from.
    pub source: Source,
    /// Which candidates to validate.
    #[serde(default)]
    pub filters: Filters,
    /// Base image.
    #[serde(default)]
    pub base: BaseSpec,
    /// Validation limits.
    #[serde(default)]
    pub validate: ValidateSection,
    /// Per-repository recipe overrides, keyed by `org/repo`.
    #[serde(default)]
    pub overrides: BTreeMap<String, RecipeOverride>,
    /// Output files.
    pub output: Output,
    /// What `swe-forge mine --pipeline` mines into `source.records`.
    #[serde(default)]
    pub mine: Option<MineSection>,
    #[serde(skip)]
    dir: PathBuf,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Source {
    /// Candidate records, JSONL.
    pub records: PathBuf,
    /// Local clones, `<repos>/<org>/<repo>`.
    pub repos: PathBuf,
    /// A script that creates `repos` when it does not exist (fixtures).
    pub make_repos: Option<PathBuf>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Filters {
    /// Only these instance ids (all when empty).
    #[serde(default)]
    pub instances: Vec<String>,
    /// Only these repositories, `org/repo` (all when empty).
    #[serde(default)]
    pub repos: Vec<String>,
    /// Drop candidates whose fix patch changes more lines than this.
    pub max_fix_lines: Option<usize>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ValidateSection {
    pub jobs: Option<usize>,
    pub phase_timeout_secs: Option<u64>,
    pub setup_timeout_secs: Option<u64>,
    pub memory_mb: Option<u64>,
    pub ca_bundle: Option<PathBuf>,
    /// Logs and the state store.
    pub work_dir: Option<PathBuf>,
    /// Extra runs of every phase (flaky tests).
    pub reruns: Option<u32>,
    /// Process limit of every container.
    pub pids_limit: Option<i64>,
    /// CPUs of every container.
    pub cpus: Option<f64>,
    /// Retries of an image build or run after an infrastructure failure (engine, registry).
    pub infra_retries: Option<u32>,
    /// Instances in a row failing for infrastructure reasons after which validation stops (0: never).
    pub infra_breaker: Option<u32>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Output {
    /// Every validated record, accepted or not.
    pub validated: PathBuf,
    /// Accepted instances, JSONL.
    pub jsonl: Option<PathBuf>,
    /// Accepted instances, Parquet.
    pub parquet: Option<PathBuf>,
    /// One row per (accepted instance, test), Parquet.
    pub tests_parquet: Option<PathBuf>,
}

/// `[mine]`: the window and filters of every repository, and `[[mine.repos]]`, one per repository.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MineSection {
    pub since: Option<String>,
    pub until: Option<String>,
    /// Drop PRs that close no issue (default: true on GitHub, false for mirrors).
    pub require_issue: Option<bool>,
    /// Mirrors: drop PR refs that no merge or squash commit proves merged.
    pub merged_only: Option<bool>,
    pub max_files: Option<usize>,
    pub max_fix_lines: Option<usize>,
    /// On-disk HTTP cache of GitHub answers.
    pub cache_dir: Option<PathBuf>,
    /// Funnel report (JSON, and Markdown next to it).
    pub funnel: Option<PathBuf>,
    #[serde(default)]
    pub repos: Vec<MineRepo>,
}

/// One repository to mine: from GitHub, or from a local `mirror`; window and limits override `[mine]`'s.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MineRepo {
    /// `owner/name`.
    pub name: String,
    pub mirror: Option<PathBuf>,
    pub branch: Option<String>,
    pub since: Option<String>,
    pub until: Option<String>,
    pub max_files: Option<usize>,
    pub max_fix_lines: Option<usize>,
}

impl Pipeline {
    pub fn load(path: &Path) -> Result<Pipeline> {
        let text = std::fs::read_to_string(path).with_context(|| format!("reading pipeline {}", path.display()))?;
        let mut p: Pipeline =
            toml::from_str(&text).with_context(|| format!("pipeline {} is invalid", path.display()))?;
        p.dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        Ok(p)
    }

    /// Resolves a path of the file against its folder.
    pub fn path(&self, p: &Path) -> PathBuf {
        if p.is_absolute() { p.to_owned() } else { self.dir.join(p) }
    }

    /// Whether a candidate passes the filters.
    pub fn keeps(&self, inst: &Instance) -> bool {
        let f = &self.filters;
        (f.instances.is_empty() || f.instances.contains(&inst.instance_id))
            && (f.repos.is_empty() || f.repos.contains(&format!("{}/{}", inst.org, inst.repo)))
            && f.max_fix_lines.is_none_or(|max| changed_lines(&inst.fix_patch) <= max)
    }
}

/// Added plus removed lines of a patch (core's one rule: lines inside hunks).
fn changed_lines(patch: &str) -> usize {
    swe_forge_core::PatchShape::of(patch).changed_lines() as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundled_pipelines_parse() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../pipelines");
        let mut n = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "toml") {
                Pipeline::load(&path).unwrap();
                n += 1;
            }
        }
        assert!(n >= 1);
    }

    #[test]
    fn unknown_keys_are_refused() {
        let err = toml::from_str::<Pipeline>(
            "name='x'\n[source]\nrecords='a'\nrepos='b'\n[output]\nvalidated='c'\n[validate]\njobz=2\n",
        )
        .unwrap_err();
        assert!(err.to_string().contains("jobz"), "{err}");
    }

    #[test]
    fn changed_lines_ignores_headers() {
        assert_eq!(changed_lines("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n c\n"), 2);
        // Inside a hunk, a removed line `-- x` and an added `++ y` are changes like any other, as
        // the difficulty's line count reads them.
        let diff = "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n--- x\n+++ y\n c\n";
        assert_eq!(changed_lines(diff), 2);
    }
}
