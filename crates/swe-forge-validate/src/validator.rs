//! The validator: settings, progress reporting, and the per-instance flow
//! repository -> patch checks -> images -> three runs -> categories -> keep rules.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt;
use swe_forge_core::{
    ForgeMeta, Instance, Phase, PhaseRun, PhaseStatuses, Provenance, RejectReason, Rejection, TestResult,
    ValidationStatus, categorize,
};
use swe_forge_docker::{BaseSpec, CaBundle, DockerError, Engine, RunSpec};
use swe_forge_git::{SourceRepo, apply_patches, unsafe_patch_reason};
use swe_forge_logparse::Framework;
use tokio::sync::OnceCell;

use crate::detect::{Detection, detect};
use crate::flaky::merge;
use crate::images::{ImageFailure, effective_toolchain, sha256_hex};
use crate::phases::{
    APPLY_FAILED_EXIT, APPLY_FAILED_MARKER, EXIT_MARKER, FIX_PATCH, RESULTS_DIR, TEST_PATCH, command_ms, script,
};
use crate::{Recipe, RecipeOverride, Toolchain, ValidateError, keep_rules};

/// Everything a validation needs to know, resolved by the caller.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Where local clones live: `<root>/<org>/<repo>` (see `SourceRepo::locate`).
    pub repos_root: PathBuf,
    /// Where run logs are written: `<work_dir>/logs/<instance_id>/<phase>.log`.
    pub work_dir: PathBuf,
    /// The base rootfs.
    pub base: BaseSpec,
    /// Per-repository recipe overrides, keyed by `org/repo`.
    pub overrides: BTreeMap<String, RecipeOverride>,
    /// Instances validated at once.
    pub jobs: usize,
    /// Timeout of each test run.
    pub phase_timeout: Duration,
    /// Timeout of the setup step of an instance image.
    pub setup_timeout: Duration,
    /// Memory limit of every container.
    pub memory_bytes: Option<i64>,
    /// Extra CA certificates for setup steps that reach the network.
    pub ca_bundle: Option<CaBundle>,
    /// Extra runs of every phase, to expose flaky tests.
    pub reruns: u32,
    /// Limit on the number of processes of every container.
    pub pids_limit: Option<i64>,
    /// CPU limit of every container, in CPUs.
    pub cpus: Option<f64>,
    /// Retries of a run after an engine error (never after a test failure).
    pub infra_retries: u32,
    /// The commit each instance's repository environment is built at (instance id -> commit,
    /// from [`crate::plan_env_commits`] over all the records of a run); an instance not listed
    /// gets one planned from its own record (its override, else its base).
    pub env_commits: BTreeMap<String, String>,
}

impl Settings {
    /// Settings with default limits for repositories under `repos_root`.
    pub fn new(repos_root: PathBuf, work_dir: PathBuf) -> Settings {
        Settings {
            repos_root,
            work_dir,
            base: BaseSpec::default(),
            overrides: BTreeMap::new(),
            jobs: 1,
            phase_timeout: Duration::from_secs(30 * 60),
            setup_timeout: Duration::from_secs(60 * 60),
            memory_bytes: None,
            ca_bundle: None,
            reruns: 0,
            pids_limit: Some(4096),
            cpus: None,
            infra_retries: 4,
            env_commits: BTreeMap::new(),
        }
    }
}

/// Progress of a validation; the binary draws it.
pub trait Reporter: Send + Sync {
    /// A one-off message (an image being built).
    fn note(&self, _message: &str) {}
    /// An instance moved to a new step.
    fn step(&self, _instance: &str, _step: &str) {}
    /// An instance's image exists (built now or found).
    fn image_ready(&self, _instance: &str) {}
    /// An instance is done.
    fn finished(&self, _instance: &Instance) {}
}

/// A reporter that reports nothing.
pub struct Silent;
impl Reporter for Silent {}

/// Validates instances against one engine, sharing images between them.
pub struct Validator {
    pub(crate) engine: Engine,
    pub(crate) settings: Settings,
    pub(crate) reporter: Arc<dyn Reporter>,
    base: OnceCell<String>,
    cells: Mutex<HashMap<String, Arc<OnceCell<String>>>>,
    pub(crate) env_cells: Mutex<HashMap<String, crate::images::EnvCell>>,
}

impl Validator {
    /// A validator; fails when an override names an unknown language or parser.
    pub fn new(engine: Engine, settings: Settings, reporter: Arc<dyn Reporter>) -> Result<Validator, ValidateError> {
        for (repo, o) in &settings.overrides {
            if let Some(p) = &o.parser {
                Framework::from_str(p)
                    .map_err(|e| ValidateError::Recipe { name: repo.clone(), message: e.to_string() })?;
            }
            if let Some(r) = &o.recipe {
                Recipe::named(r)?;
            }
            if let Some(t) = &o.toolchain {
                Toolchain::named(t)?;
            }
        }
        Ok(Validator {
            engine,
            settings,
            reporter,
            base: OnceCell::new(),
            cells: Mutex::new(HashMap::new()),
            env_cells: Mutex::new(HashMap::new()),
        })
    }

    pub(crate) async fn base_image(&self) -> Result<String, DockerError> {
        self.base
            .get_or_try_init(|| async {
                let reporter = self.reporter.clone();
                self.engine.ensure_base(&self.settings.base, &move |m| reporter.note(m)).await
            })
            .await
            .cloned()
    }

    /// The commit the repository environment of `inst` is built at (see [`Settings::env_commits`]).
    pub(crate) fn env_commit(&self, inst: &Instance) -> String {
        if let Some(c) = self.settings.env_commits.get(&inst.instance_id) {
            return c.clone();
        }
        crate::plan_env_commits(std::slice::from_ref(inst), &self.settings.repos_root, &self.settings.overrides)
            .remove(&inst.instance_id)
            .unwrap_or_else(|| inst.base.sha.clone())
    }

    pub(crate) fn once_cell(&self, key: &str) -> Arc<OnceCell<String>> {
        self.cells.lock().unwrap_or_else(|e| e.into_inner()).entry(key.to_owned()).or_default().clone()
    }

    /// Validates every instance, `settings.jobs` at a time; results come back in input order
    /// and `on_done` sees each one as soon as it is finished.
    pub async fn validate_all(&self, instances: Vec<Instance>, mut on_done: impl FnMut(&Instance)) -> Vec<Instance> {
        let mut results: Vec<Option<Instance>> = vec![None; instances.len()];
        let mut stream = futures_util::stream::iter(instances.into_iter().enumerate())
            .map(|(i, inst)| async move { (i, self.validate(inst).await) })
            .buffer_unordered(self.settings.jobs.max(1));
        while let Some((i, inst)) = stream.next().await {
            on_done(&inst);
            self.reporter.finished(&inst);
            results[i] = Some(inst);
        }
        results.into_iter().flatten().collect()
    }

    /// Validates one instance. Never fails: every problem ends as a rejection on the record.
    pub async fn validate(&self, mut inst: Instance) -> Instance {
        let mut meta = ForgeMeta::new(ValidationStatus::Rejected);
        meta.merged_at = inst.swe_forge.as_ref().and_then(|m| m.merged_at.clone());
        let rejections = self.validate_inner(&mut inst, &mut meta).await;
        meta.status = if rejections.is_empty() { ValidationStatus::Accepted } else { ValidationStatus::Rejected };
        meta.rejections = rejections;
        inst.swe_forge = Some(meta);
        inst
    }

    async fn validate_inner(&self, inst: &mut Instance, meta: &mut ForgeMeta) -> Vec<Rejection> {
        let id = inst.instance_id.clone();
        let reject = |reason, detail: String| vec![Rejection::new(reason, detail)];
        self.reporter.step(&id, "checking patches");
        let repo = match SourceRepo::locate(&self.settings.repos_root, &inst.org, &inst.repo)
            .and_then(|r| r.commit(&inst.base.sha).map(|_| ()).map(|()| r))
        {
            Ok(r) => r,
            Err(e) => return reject(RejectReason::RepoUnavailable, e.to_string()),
        };
        for (patch, name) in [(&inst.test_patch, "test_patch"), (&inst.fix_patch, "fix_patch")] {
            if let Some(why) = unsafe_patch_reason(patch) {
                return reject(RejectReason::UnsafePatch, format!("{name}: {why}"));
            }
        }
        match apply_patches(&repo, &inst.base.sha, &[&inst.test_patch, &inst.fix_patch]) {
            Ok(Ok(_)) => {}
            Ok(Err(f)) => {
                let reason =
                    if f.index == 0 { RejectReason::TestPatchDoesNotApply } else { RejectReason::FixPatchDoesNotApply };
                return reject(reason, f.message);
            }
            Err(e) => return reject(RejectReason::RepoUnavailable, e.to_string()),
        }

        let (recipe, toolchain, detection) = match self.resolve_recipe(&repo, inst) {
            Ok(x) => x,
            Err(detail) => return reject(RejectReason::UnsupportedEnvironment, detail),
        };
        inst.lang = Some(recipe.language.clone());
        meta.test_command = Some(recipe.test_command.clone());
        meta.parser = Some(recipe.parser.clone());
        meta.results_parser = recipe.results_parser.clone();
        let parser = match Framework::from_str(&recipe.parser) {
            Ok(f) => f,
            Err(e) => return reject(RejectReason::UnsupportedEnvironment, e.to_string()),
        };
        let results_parser = match recipe.results_parser.as_deref().map(Framework::from_str).transpose() {
            Ok(f) => f,
            Err(e) => return reject(RejectReason::UnsupportedEnvironment, e.to_string()),
        };

        let extras = match crate::resolve_extra_sources(&self.settings.repos_root, &recipe.extra_sources) {
            Ok(x) => x,
            Err(e) => return reject(RejectReason::RepoUnavailable, e.to_string()),
        };
        meta.warnings.extend(extras.iter().filter_map(|x| x.warning()));

        self.reporter.step(&id, "building image");
        let logs = self.settings.work_dir.join("logs").join(&id);
        meta.warnings.extend(crate::submodules::missing_warnings(
            &repo,
            &inst.base.sha,
            &self.settings.repos_root,
            &inst.org,
        ));
        let env_commit = self.env_commit(inst);
        // Engine failures (a restart mid-build) are retried with backoff, as runs are.
        let mut delay = Duration::from_secs(2);
        let mut tries = 0;
        let image = loop {
            match self.instance_image(&repo, inst, &recipe, &toolchain, &env_commit, &extras, false).await {
                Ok(x) => break x,
                Err(ImageFailure::Build(detail)) => return reject(RejectReason::ImageBuildFailed, detail),
                Err(ImageFailure::Infra(e)) if tries < self.settings.infra_retries => {
                    self.pause_before_retry(&id, &error_chain(&e), &mut tries, &mut delay, &mut meta.warnings).await;
                }
                Err(ImageFailure::Infra(e)) => return reject(RejectReason::Infrastructure, error_chain(&e)),
            }
        };
        let base_tree = repo.commit(&inst.base.sha).map(|c| c.tree_id().to_string()).unwrap_or_default();
        drop(repo);
        meta.image = Some(image.tag.clone());
        meta.image_id = self.engine.image_id(&image.tag).await.ok().flatten();
        meta.provenance = Some(Provenance {
            recipe: recipe.name.clone(),
            recipe_sha256: sha256_hex(&[&serde_json::to_string(&recipe).unwrap_or_default()]),
            base_image: self.base_image().await.unwrap_or_default(),
            toolchain_image: image.toolchain_tag.clone(),
            toolchain_dockerfile_sha256: sha256_hex(&[&image.toolchain_dockerfile]),
            toolchain_versions: self.toolchain_versions(&image.toolchain_tag, &toolchain).await,
            requested_versions: detection.requested_versions.clone(),
            lockfiles: detection.lockfiles.clone(),
            resolved_lockfiles: self.resolved_lockfiles(&image.tag).await,
            base_tree,
            source_image_id: image.source_image_id.clone(),
            env_commit: image.env.commit.clone(),
            env_image: image.env.tag.clone(),
            env_image_id: image.env.id.clone(),
            extra_sources: extras.iter().map(|x| x.provenance()).collect(),
        });
        meta.warnings.extend(image.warnings.iter().cloned());
        if let Some(log) = &image.setup_log {
            write_log(&logs, "setup", log);
        }
        self.reporter.image_ready(&id);

        let attempts = 1 + self.settings.reruns;
        let mut runs: [Vec<PhaseStatuses>; 3] = Default::default();
        let mut rejections: Vec<Rejection> = Vec::new();
        let mut add = |reason: RejectReason, detail: String| {
            if !rejections.iter().any(|r| r.reason == reason) {
                rejections.push(Rejection::new(reason, detail));
            }
        };
        for (pi, phase) in Phase::ALL.into_iter().enumerate() {
            for attempt in 0..attempts {
                let label = if attempt == 0 { phase.to_string() } else { format!("{phase}-{attempt}") };
                self.reporter.step(&id, &format!("{label} run"));
                let mut spec = RunSpec::new(&image.tag, script(phase, &recipe));
                spec.files = vec![
                    (TEST_PATCH.to_owned(), inst.test_patch.clone().into_bytes()),
                    (FIX_PATCH.to_owned(), inst.fix_patch.clone().into_bytes()),
                ];
                spec.timeout = self.settings.phase_timeout;
                spec.memory_bytes = self.settings.memory_bytes;
                spec.pids_limit = self.settings.pids_limit;
                spec.cpus = self.settings.cpus;
                spec.user.clone_from(&recipe.test_user);
                spec.network = recipe.network_in_runs;
                spec.env = recipe.run_env.iter().map(|(k, v)| format!("{k}={v}")).collect();
                spec.env.push(format!("SWE_FORGE_ATTEMPT={attempt}"));
                spec.collect = Some(RESULTS_DIR.to_owned());
                let out = match self.run_with_retries(&id, &spec, &mut meta.warnings).await {
                    Ok(o) => o,
                    Err(e) => return reject(RejectReason::Infrastructure, format!("{label} run: {}", error_chain(&e))),
                };
                write_log(&logs, &label, &out.log);
                for (name, content) in &out.files {
                    write_result_file(&logs.join(format!("{label}-results")), name, content);
                }
                if out.exit_code == Some(APPLY_FAILED_EXIT) && contains(&out.log, APPLY_FAILED_MARKER) {
                    let reason = if contains(&out.log, FIX_PATCH) && phase == Phase::Fix {
                        RejectReason::FixPatchDoesNotApply
                    } else {
                        RejectReason::TestPatchDoesNotApply
                    };
                    return reject(reason, format!("git apply failed in the {phase} run"));
                }
                let parsed = match (results_parser, out.files.is_empty()) {
                    (Some(rp), false) => swe_forge_logparse::parse_files(rp, &out.files),
                    _ => swe_forge_logparse::parse(parser, &out.log),
                };
                crate::parsed::keep(&logs, &label, &parsed);
                if !out.timed_out
                    && let Some(w) = swe_forge_logparse::exit_code_consistent(&parsed, out.exit_code)
                {
                    meta.warnings.push(format!("{label} run: {w}"));
                }
                meta.runs.push(PhaseRun {
                    phase,
                    exit_code: out.exit_code,
                    duration_ms: out.duration.as_millis() as u64,
                    timed_out: out.timed_out,
                    log_sha256: out.log_sha256.clone(),
                    log_bytes: out.log_bytes,
                    tests: parsed.tests.len() as u64,
                    attempt,
                    command_ms: command_ms(&out.log),
                });
                if out.timed_out {
                    add(
                        RejectReason::Timeout,
                        format!("{label} run killed after {} s", self.settings.phase_timeout.as_secs()),
                    );
                }
                if out.oom_killed {
                    add(RejectReason::Oom, format!("{label} run killed by the memory limit"));
                }
                if hit_pids_limit(&out.log) {
                    add(
                        RejectReason::PidsLimit,
                        format!("{label} run could not fork: limit of {:?} processes", self.settings.pids_limit),
                    );
                }
                if out.log_truncated {
                    meta.warnings.push(format!("{label} run: log of {} bytes kept as head and tail", out.log_bytes));
                }
                runs[pi].push(parsed.tests);
            }
        }
        let merged = merge(&runs);
        meta.flaky = merged.flaky;
        meta.stability = Some(merged.stability);
        let [run, test, fix] = &merged.phases;
        let c = categorize(run, test, fix);
        inst.set_results(
            &c,
            TestResult::from_statuses(run),
            TestResult::from_statuses(test),
            TestResult::from_statuses(fix),
        );
        rejections.extend(keep_rules(&c, fix));
        rejections
    }

    /// Runs `spec`, retrying engine failures (not test failures) with backoff: 2, 4, 8, 16 s.
    async fn run_with_retries(
        &self,
        id: &str,
        spec: &RunSpec,
        warnings: &mut Vec<String>,
    ) -> Result<swe_forge_docker::RunOutput, DockerError> {
        let mut delay = Duration::from_secs(2);
        let mut tries = 0;
        loop {
            let why = match self.engine.run(spec).await {
                // A script that ends neither by itself nor by our timeout or the memory limit was
                // killed from outside (an engine restart, `docker kill`): not a test result.
                Ok(out)
                    if out.timed_out
                        || out.oom_killed
                        || contains(&out.log, EXIT_MARKER)
                        || contains(&out.log, APPLY_FAILED_MARKER) =>
                {
                    return Ok(out);
                }
                Ok(out) if tries >= self.settings.infra_retries => return Ok(out),
                Ok(out) => format!("the run was killed from outside (exit {:?}) before it ended", out.exit_code),
                Err(e) if tries < self.settings.infra_retries => error_chain(&e),
                Err(e) => return Err(e),
            };
            self.pause_before_retry(id, &why, &mut tries, &mut delay, warnings).await;
        }
    }

    /// Notes an engine failure on the record and on screen, then waits `delay` and doubles it.
    async fn pause_before_retry(
        &self,
        id: &str,
        why: &str,
        tries: &mut u32,
        delay: &mut Duration,
        warnings: &mut Vec<String>,
    ) {
        *tries += 1;
        warnings.push(format!("retried after an infrastructure failure: {why}"));
        self.reporter.note(&format!("{id}: {why}; retry {tries} in {} s", delay.as_secs()));
        tokio::time::sleep(*delay).await;
        *delay *= 2;
    }

    /// Recipe (override > detection), with overrides applied, and its toolchain.
    pub(crate) fn resolve_recipe(
        &self,
        repo: &SourceRepo,
        inst: &Instance,
    ) -> Result<(Recipe, Toolchain, Detection), String> {
        let key = format!("{}/{}", inst.org, inst.repo);
        let over = self.settings.overrides.get(&key).cloned().unwrap_or_default();
        let detection = detect(repo, &inst.base.sha);
        let name = match (over.forced_recipe(inst), &detection.recipe, &detection.unsupported) {
            (Some(n), _, _) => n,
            (None, _, Some(why)) => return Err(why.clone()),
            (None, Some(n), None) => n.clone(),
            (None, None, None) => {
                return Err("no known build files at the base commit (go.mod, Cargo.toml, pom.xml, package.json, CMakeLists.txt, configure.ac, meson.build); name a recipe in an override".into());
            }
        };
        let mut recipe = Recipe::named(&name).map_err(|e| e.to_string())?;
        if over.forced_recipe(inst).is_none() {
            if let Some(l) = &detection.language {
                recipe.language.clone_from(l);
            }
            if let Some(t) = &detection.toolchain {
                recipe.toolchain.clone_from(t);
            }
        }
        // Overrides by language and by recipe (keys `lang:<language>`, `recipe:<name>`, as profiles
        // write them) come before the repository's own.
        let lang = over.language.clone().unwrap_or_else(|| recipe.language.clone());
        for key in [format!("lang:{lang}"), format!("recipe:{}", recipe.name)] {
            if let Some(o) = self.settings.overrides.get(&key) {
                recipe.apply(o, inst);
            }
        }
        recipe.apply(&over, inst);
        let toolchain = Toolchain::named(&recipe.toolchain).map_err(|e| e.to_string())?;
        Ok((recipe.clone(), effective_toolchain(toolchain, &recipe), detection))
    }
}

/// bash and most runtimes say this when `fork`/`clone` fails against the pids limit.
fn hit_pids_limit(log: &[u8]) -> bool {
    contains(log, "fork: retry: Resource temporarily unavailable")
        || contains(log, "fork: Resource temporarily unavailable")
        || contains(log, "Cannot fork")
}

fn contains(hay: &[u8], needle: &str) -> bool {
    hay.windows(needle.len()).any(|w| w == needle.as_bytes())
}

fn write_log(dir: &std::path::Path, name: &str, log: &[u8]) {
    let result = std::fs::create_dir_all(dir).and_then(|()| std::fs::write(dir.join(format!("{name}.log")), log));
    if let Err(e) = result {
        tracing::warn!(dir = %dir.display(), error = %e, "could not write a run log");
    }
}

/// Keeps a structured result file under its relative path (for re-grading).
fn write_result_file(dir: &std::path::Path, rel: &str, content: &[u8]) {
    let path = dir.join(rel);
    let result = path.parent().map_or(Ok(()), std::fs::create_dir_all).and_then(|()| std::fs::write(&path, content));
    if let Err(e) = result {
        tracing::warn!(path = %path.display(), error = %e, "could not keep a result file");
    }
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cur = c.source();
    }
    s
}
