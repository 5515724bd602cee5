//! Pipeline files (TOML under `pipelines/`): which records and repositories to read, which
//! instances to keep, per-repository recipe overrides, validation limits and outputs.
//! Relative paths are relative to the pipeline file's folder.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Deserialize;
use swe_forge_core::Instance;

use crate::overrides::override_key;
use crate::{ConfigError, RecipeOverride};

/// A parsed pipeline file.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "swe-forge pipeline file")]
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
    pub base: BaseSection,
    /// Validation limits.
    #[serde(default)]
    pub validate: ValidateSection,
    /// Per-repository recipe overrides, keyed by `org/repo`, `lang:<language>` or `recipe:<name>`.
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

/// `[source]`: where candidates come from.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Source {
    /// Candidate records, JSONL.
    pub records: PathBuf,
    /// Local clones, `<repos>/<org>/<repo>`.
    pub repos: PathBuf,
    /// A script that creates `repos` when it does not exist (fixtures).
    pub make_repos: Option<PathBuf>,
}

/// `[filters]`: which candidates to validate.
#[derive(Debug, Default, Deserialize, JsonSchema)]
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

/// `[base]`: the Debian rootfs every image starts from; a key left out takes the built-in value
/// (`swe_forge_docker::BaseSpec::default()`: trixie from deb.debian.org).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BaseSection {
    /// Debian suite, e.g. `trixie`.
    pub suite: Option<String>,
    /// Debian mirror to bootstrap from.
    pub mirror: Option<String>,
}

impl BaseSection {
    /// The suite goes into the base image's tag and a `LABEL` line, the mirror onto
    /// debootstrap's command line: a suite is a plain name, a mirror a URL without a space or a
    /// control character.
    fn check(&self, origin: &str) -> Result<(), ConfigError> {
        let invalid = |key: &str, message: String| ConfigError::Invalid {
            origin: origin.to_owned(),
            key: format!("base.{key}"),
            message,
        };
        if let Some(s) = &self.suite
            && (s.is_empty()
                || s.starts_with('-')
                || !s.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c)))
        {
            return Err(invalid("suite", format!("{s:?} is not a Debian suite name")));
        }
        if let Some(m) = &self.mirror
            && (!(m.starts_with("http://") || m.starts_with("https://") || m.starts_with("file:/"))
                || m.chars().any(|c| c.is_whitespace() || c.is_control()))
        {
            return Err(invalid("mirror", format!("{m:?} is not an http(s) or file URL without spaces")));
        }
        Ok(())
    }
}

/// `[validate]`: validation limits; a key left out keeps the command's default.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ValidateSection {
    /// Instances validated at once.
    pub jobs: Option<usize>,
    /// Time limit of each run, in seconds.
    pub phase_timeout_secs: Option<u64>,
    /// Time limit of the setup of an image, in seconds.
    pub setup_timeout_secs: Option<u64>,
    /// Memory limit of every container, in MiB.
    pub memory_mb: Option<u64>,
    /// Extra CA certificates (PEM) trusted during setup.
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
    /// Hosts this machine reaches: a setup failure naming one of them is an `image_build_failed`,
    /// not a `needs_network` (which names a host the setup or a test run could not reach).
    pub reachable_hosts: Option<Vec<String>>,
    /// Instances in a row failing for infrastructure reasons after which validation stops (0: never).
    pub infra_breaker: Option<u32>,
    /// Where test runs happen: `local` (this machine's engine, the default) or `swarm` (a job
    /// per run on a Docker Swarm; needs `swarm_manager` and `registry`).
    pub backend: Option<BackendKind>,
    /// The swarm manager's API (`unix:///path` or `tcp://HOST:PORT`; default: the engine
    /// swe-forge talks to).
    pub swarm_manager: Option<String>,
    /// The registry the swarm's nodes pull images from, `HOST:PORT`.
    pub registry: Option<String>,
    /// Toolchain versions tried per instance (the first choice included) when its setup fails in
    /// a way that names the toolchain (default 5, as many as a C build stopped by `-Werror` goes
    /// through: today's compiler, bullseye's GCC 10, GCC 9, clang 9, the `-Wno-error` wrapper;
    /// 1: no search).
    pub toolchain_attempts: Option<u32>,
    /// Runs of the gold patch through evaluation for every accepted instance, then two negative
    /// controls, the empty patch as many times as the gold one (tests whose status differs between
    /// the runs raise the `flaky` quality flag) and the test patch alone (default 3; 0: no
    /// evidence).
    pub evidence_runs: Option<u32>,
    /// Hunks of an accepted instance's fix patch left out one at a time, each a run through
    /// evaluation: a hunk without which every FAIL_TO_PASS test still passes is untested
    /// (`swe_forge.quality.hunks`, the `untested_hunks` flag). At most this many runs, for fix
    /// patches of two hunks or more (default 4; 0: none).
    pub hunk_runs: Option<u32>,
    /// Layout variants of an accepted instance's gold patch graded through evaluation (a blank
    /// line before the first change of each code file; hunks placed a few lines off): a listed
    /// test that passes with the gold patch and not under a variant depends on the fix's layout
    /// and leaves the lists (`swe_forge.labels.unstable`); an instance left without
    /// FAIL_TO_PASS is rejected `unstable_tests` (default 2, both; 0: none).
    pub layout_variants: Option<u32>,
}

impl ValidateSection {
    /// Limits that make no sense are refused: no job at a time, a time limit of 0 (every run
    /// would end as `timeout`), less memory than [`crate::MIN_MEMORY_MB`], no process, no CPU, no toolchain tried.
    fn check(&self, origin: &str) -> Result<(), ConfigError> {
        let zero = [
            ("jobs", self.jobs.map(|v| v as u64)),
            ("phase_timeout_secs", self.phase_timeout_secs),
            ("setup_timeout_secs", self.setup_timeout_secs),
            ("memory_mb", self.memory_mb),
            ("pids_limit", self.pids_limit.map(|v| v.max(0) as u64)),
            ("toolchain_attempts", self.toolchain_attempts.map(u64::from)),
        ];
        for (key, value) in zero {
            if value == Some(0) {
                return Err(ConfigError::Invalid {
                    origin: origin.to_owned(),
                    key: format!("validate.{key}"),
                    message: "must be at least 1".into(),
                });
            }
        }
        if let Some(m) = self.memory_mb
            && m < crate::MIN_MEMORY_MB
        {
            return Err(ConfigError::Invalid {
                origin: origin.to_owned(),
                key: "validate.memory_mb".into(),
                message: format!("must be at least {} (MiB): less and no test run gets far", crate::MIN_MEMORY_MB),
            });
        }
        if let Some(c) = self.cpus
            && !(c.is_finite() && c > 0.0)
        {
            return Err(ConfigError::Invalid {
                origin: origin.to_owned(),
                key: "validate.cpus".into(),
                message: format!("{c} is not a number of CPUs above 0"),
            });
        }
        Ok(())
    }
}

/// Where test runs happen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum BackendKind {
    /// This machine's Docker engine.
    Local,
    /// A Docker Swarm, one job per run.
    Swarm,
}

/// `[output]`: the files a run writes.
#[derive(Debug, Deserialize, JsonSchema)]
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
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MineSection {
    /// First merge day mined (`YYYY-MM-DD`).
    pub since: Option<String>,
    /// Last merge day mined (`YYYY-MM-DD`).
    pub until: Option<String>,
    /// Drop PRs that close no issue (default: true on GitHub, false for mirrors).
    pub require_issue: Option<bool>,
    /// Mirrors: drop PR refs that no merge or squash commit proves merged.
    pub merged_only: Option<bool>,
    /// Drop PRs that change more files than this.
    pub max_files: Option<usize>,
    /// Drop PRs whose fix changes more lines than this.
    pub max_fix_lines: Option<usize>,
    /// On-disk HTTP cache of GitHub answers.
    pub cache_dir: Option<PathBuf>,
    /// Funnel report (JSON, and Markdown next to it).
    pub funnel: Option<PathBuf>,
    /// The repositories to mine.
    #[serde(default)]
    pub repos: Vec<MineRepo>,
}

/// One repository to mine: from GitHub, or from a local `mirror`; window and limits override `[mine]`'s.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MineRepo {
    /// `owner/name`.
    pub name: String,
    /// A local clone holding `refs/pull/*` (instead of GitHub).
    pub mirror: Option<PathBuf>,
    /// The branch PRs were merged into.
    pub branch: Option<String>,
    /// First merge day mined (`YYYY-MM-DD`).
    pub since: Option<String>,
    /// Last merge day mined (`YYYY-MM-DD`).
    pub until: Option<String>,
    /// Drop PRs that change more files than this.
    pub max_files: Option<usize>,
    /// Drop PRs whose fix changes more lines than this.
    pub max_fix_lines: Option<usize>,
}

impl Pipeline {
    /// Reads and checks the pipeline file at `path`.
    pub fn load(path: &Path) -> Result<Pipeline, ConfigError> {
        let text = crate::read_config(path).map_err(|source| ConfigError::Read {
            what: "pipeline",
            path: path.to_owned(),
            source,
        })?;
        let mut p = Pipeline::from_toml(&text, &format!("pipeline {}", path.display()))?;
        p.dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        Ok(p)
    }

    /// Parses and checks a pipeline's text; `origin` names it in errors. Relative paths resolve
    /// against the current folder.
    pub fn from_toml(text: &str, origin: &str) -> Result<Pipeline, ConfigError> {
        let p: Pipeline =
            toml::from_str(text).map_err(|source| ConfigError::Parse { origin: origin.to_owned(), source })?;
        for (key, o) in &p.overrides {
            o.check(origin, &override_key(key))?;
        }
        p.validate.check(origin)?;
        p.base.check(origin)?;
        Ok(p)
    }

    /// Resolves a path of the file against its folder, without the `dir/..` steps that joining
    /// makes (`pipelines/../data/out` is `data/out`), so printed paths read as written.
    pub fn path(&self, p: &Path) -> PathBuf {
        if p.is_absolute() { p.to_owned() } else { tidy(&self.dir.join(p)) }
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

/// `path` with `.` steps and `name/..` pairs left out, where `name` is a real folder (not a
/// symbolic link, whose `..` is its target's parent) or does not exist; leading `..` stay.
fn tidy(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    let mut normal = 0usize;
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir
                if normal > 0 && !std::fs::symlink_metadata(&out).is_ok_and(|m| m.file_type().is_symlink()) =>
            {
                out.pop();
                normal -= 1;
            }
            Component::Normal(_) => {
                out.push(c);
                normal += 1;
            }
            other => {
                out.push(other);
                if matches!(other, Component::ParentDir) {
                    normal = 0;
                }
            }
        }
    }
    if out.as_os_str().is_empty() { PathBuf::from(".") } else { out }
}

#[cfg(test)]
mod tests {
    #[test]
    fn paths_resolved_against_the_files_folder_lose_their_dir_dot_dot_steps() {
        let tmp = tempfile::tempdir().unwrap();
        let real = tmp.path().join("pipelines");
        std::fs::create_dir(&real).unwrap();
        assert_eq!(super::tidy(std::path::Path::new("pipelines/../data/./out")), std::path::Path::new("data/out"));
        assert_eq!(super::tidy(std::path::Path::new("../a/../../b")), std::path::Path::new("../../b"));
        assert_eq!(super::tidy(std::path::Path::new("a/..")), std::path::Path::new("."));
        assert_eq!(super::tidy(&real.join("../data")), tmp.path().join("data"));
        // A link's `..` is its target's parent: kept.
        let other = tmp.path().join("elsewhere/deep");
        std::fs::create_dir_all(&other).unwrap();
        std::os::unix::fs::symlink(&other, tmp.path().join("link")).unwrap();
        assert_eq!(super::tidy(&tmp.path().join("link/../x")), tmp.path().join("link/../x"));
    }

    use super::*;

    const MINIMAL: &str = "name='x'\n[source]\nrecords='a'\nrepos='b'\n[output]\nvalidated='c'\n";

    #[test]
    fn the_swarm_backend_is_named_in_validate() {
        let text = format!("{MINIMAL}[validate]\nbackend='swarm'\nswarm_manager='tcp://m:2375'\nregistry='r:5000'\n");
        let p = Pipeline::from_toml(&text, "p").unwrap();
        assert_eq!(p.validate.backend, Some(BackendKind::Swarm));
        assert_eq!(p.validate.swarm_manager.as_deref(), Some("tcp://m:2375"));
        assert_eq!(p.validate.registry.as_deref(), Some("r:5000"));
        assert!(Pipeline::from_toml(&format!("{MINIMAL}[validate]\nbackend='k8s'\n"), "p").is_err());
    }

    #[test]
    fn unknown_keys_are_refused_naming_the_file_and_key() {
        let err = Pipeline::from_toml(&format!("{MINIMAL}[validate]\njobz=2\n"), "pipeline p.toml").unwrap_err();
        assert!(matches!(err, ConfigError::Parse { .. }));
        assert_eq!(err.to_string(), "pipeline p.toml is invalid");
        let ConfigError::Parse { source, .. } = err else { unreachable!() };
        assert!(source.to_string().contains("jobz"), "{source}");
    }

    #[test]
    fn an_unknown_parser_is_an_error_at_load() {
        let text = format!("{MINIMAL}[overrides.\"o/r\"]\nparser = \"go-tset\"\n");
        let err = Pipeline::from_toml(&text, "pipeline p.toml").unwrap_err();
        let ConfigError::Parse { source, .. } = err else { panic!("{err:?}") };
        let why = source.to_string();
        assert!(why.contains("unknown log parser `go-tset`") && why.contains("parser = \"go-tset\""), "{why}");
    }

    #[test]
    fn what_goes_into_a_dockerfile_cannot_add_instructions() {
        for (body, says) in [
            ("env = { \"X=1\\nRUN touch /pwn\\nENV Y\" = \"1\" }", "`overrides.\"o/r\".env`"),
            ("env = { X = \"1\\nRUN touch /pwn\" }", "`overrides.\"o/r\".env.X`"),
            ("run_env = { \"A B\" = \"1\" }", "`overrides.\"o/r\".run_env`"),
            ("extra_packages = [\"git && touch /pwn\"]", "`overrides.\"o/r\".extra_packages`"),
            ("apt_suites = [\"sid\\nRUN x\"]", "`overrides.\"o/r\".apt_suites`"),
            ("[[overrides.\"o/r\".variants]]\nenv = { \"=\" = \"\" }", "`overrides.\"o/r\".variants[0].env`"),
            (
                "extra_sources = [{ repo = \"o/d\", rev = \"v1\", path = \"/opt/x\\nRUN mkdir /pwned #\" }]",
                "`overrides.\"o/r\".extra_sources[0].path`",
            ),
            ("extra_sources = [{ repo = \"o/d\", rev = \"v1\", path = \"/opt/a b\" }]", "extra_sources[0].path`"),
            ("extra_sources = [{ repo = \"o/d\\nx\", rev = \"v1\", path = \"/opt/x\" }]", "extra_sources[0].repo`"),
            ("extra_sources = [{ repo = \"o/d\", rev = \"v1;id\", path = \"/opt/x\" }]", "extra_sources[0].rev`"),
            ("test_user = \"tester\\nRUN touch /pwn\"", "`overrides.\"o/r\".test_user`"),
            ("test_user = \"t; rm -rf /\"", "`overrides.\"o/r\".test_user`"),
            ("toolchain = \"node-20\\nRUN touch /pwn\"", "`overrides.\"o/r\".toolchain`"),
            ("recipe = \"js-jest x\"", "`overrides.\"o/r\".recipe`"),
            ("env_commit = \"abc$(id)\"", "`overrides.\"o/r\".env_commit`"),
            ("[[overrides.\"o/r\".variants]]\ntest_user = \"a\\nb\"", "`overrides.\"o/r\".variants[0].test_user`"),
        ] {
            let text = format!("{MINIMAL}[overrides.\"o/r\"]\n{body}\n");
            let err = Pipeline::from_toml(&text, "pipeline p.toml").map(|_| ()).unwrap_err().to_string();
            assert!(err.contains(says), "{body}: {err}");
        }
        for (base, says) in
            [("suite = \"trixie\\nLABEL x=1\"", "`base.suite`"), ("mirror = \"http://m x\"", "`base.mirror`")]
        {
            let err =
                Pipeline::from_toml(&format!("{MINIMAL}[base]\n{base}\n"), "p").map(|_| ()).unwrap_err().to_string();
            assert!(err.contains(says), "{base}: {err}");
        }
        Pipeline::from_toml(
            &format!("{MINIMAL}[base]\nsuite = \"bookworm\"\nmirror = \"http://deb.debian.org/debian\"\n"),
            "p",
        )
        .unwrap();
        let fine = "test_user = \"swe_forge-1\"\ntoolchain = \"go-1.22\"\nlanguage = \"c++\"\nenv_commit = \"v1.2^{commit}\"\n\
                    extra_sources = [{ repo = \"nlohmann/json_test_data\", rev = \"v3.1.0\", path = \"/swe-forge/extra/json_test-data\" }]";
        Pipeline::from_toml(&format!("{MINIMAL}[overrides.\"o/r\"]\n{fine}\n"), "p").unwrap();
        let fine = "env = { JAVA_TOOL_OPTIONS = \"-Xmx2g -Dfile.encoding=UTF-8\", _X1 = \"\" }\nextra_packages = [\"libssl-dev\", \"g++-12/bookworm\", \"x=1.2+b1\"]";
        Pipeline::from_toml(&format!("{MINIMAL}[overrides.\"o/r\"]\n{fine}\n"), "p").unwrap();
    }

    #[test]
    fn nonsense_limits_are_refused() {
        for (line, key) in [
            ("jobs = 0", "validate.jobs"),
            ("phase_timeout_secs = 0", "validate.phase_timeout_secs"),
            ("setup_timeout_secs = 0", "validate.setup_timeout_secs"),
            ("memory_mb = 0", "validate.memory_mb"),
            ("memory_mb = 63", "validate.memory_mb"),
            ("pids_limit = -1", "validate.pids_limit"),
            ("cpus = 0.0", "validate.cpus"),
            ("toolchain_attempts = 0", "validate.toolchain_attempts"),
        ] {
            let err = Pipeline::from_toml(&format!("{MINIMAL}[validate]\n{line}\n"), "p").map(|_| ()).unwrap_err();
            assert!(err.to_string().contains(&format!("`{key}`")), "{line}: {err}");
        }
        Pipeline::from_toml(&format!("{MINIMAL}[validate]\njobs = 1\nphase_timeout_secs = 1\ncpus = 0.5\n"), "p")
            .unwrap();
    }

    #[test]
    fn a_missing_file_is_named() {
        let err = Pipeline::load(Path::new("no/such/pipeline.toml")).unwrap_err().to_string();
        assert_eq!(err, "reading pipeline no/such/pipeline.toml");
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
