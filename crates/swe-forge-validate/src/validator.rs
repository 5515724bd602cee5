//! The validator: settings, progress reporting, and the per-instance flow
//! repository -> patch checks -> images -> three runs -> categories -> keep rules.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use swe_forge_core::{
    BuildAttempt, ForgeMeta, Instance, LabelRule, Phase, PhaseRun, PhaseStatuses, Provenance, RejectReason, Rejection,
    RunLogs, ToolchainAttempt, ToolchainChoice, ValidationStatus, Warning,
};
use swe_forge_docker::{Backend, BaseSpec, CaBundle, DockerError, Engine, Next, RunSpec, SwarmSpec};
use swe_forge_git::{SourceRepo, apply_patches, unsafe_patch_reason};
use swe_forge_logparse::{Naming, ParsedLog};
use swe_forge_recipes::{
    BIGGER_STACK, Detection, Direction, Recipe, RecipeError, Releases, Tool, Toolchain, ToolchainSign, Version,
    bigger_stack_env, classify_failure, detect, effective_toolchain, next_candidate, raised_stack, sha256_hex,
    tested_versions,
};
use tokio::sync::OnceCell;

use crate::cioptions::CiTry;
use crate::error::NoRecipe;
use crate::grading::grade::{GradeInput, Parsers, grade};
use crate::images::{BuildMode, ImageFailure, ImageRequest, InstanceImage};
use crate::phases::{
    APPLY_FAILED_EXIT, APPLY_FAILED_MARKER, EXIT_MARKER, FIX_PATCH, RESULTS_DIR, TEST_PATCH, command_ms, script,
};
use crate::retries::test_user_attempt;
use crate::truncation::{RunFacts, has};
use crate::{RecipeOverride, ValidateError};

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
    /// Memory limit of every container (None: no limit).
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
    /// Hosts this machine reaches (`[validate] reachable_hosts`): a setup failure naming one is
    /// not taken for a missing network.
    pub reachable_hosts: Vec<String>,
    /// Instances in a row ending in an infrastructure failure (after their retries) after which
    /// [`Validator::validate_all`] stops with [`ValidateError::MachineBroken`]; 0 never stops.
    pub infra_breaker: u32,
    /// The commit each instance's repository environment is built at (instance id -> commit,
    /// from [`swe_forge_recipes::plan_env_commits`] over all the records of a run); an instance not listed
    /// gets one planned from its own record (its override, else its base).
    pub env_commits: BTreeMap<String, String>,
    /// The names evaluation reads a record's lists in. [`Naming::Auto`] (the default): per
    /// record, whichever naming finds more of the listed tests, on a tie canonical ids for
    /// records swe-forge made (they carry a `swe_forge` block), Multi-SWE-bench's names for
    /// published records without one.
    pub eval_naming: Naming,
    /// Run the tests as jobs on this swarm instead of on the local engine (images are still
    /// built here, then pushed to the swarm's registry); the caller connects it
    /// ([`Validator::with_backend`]).
    pub swarm: Option<SwarmSpec>,
    /// Toolchain versions tried per instance when a setup fails in a way that names the
    /// toolchain (the first choice included); 1 never searches.
    pub toolchain_attempts: u32,
    /// Runs of the gold patch through evaluation's own path for every accepted instance (with
    /// the two negative controls after them); 0 gathers no evidence.
    pub evidence_runs: u32,
    /// Runs of an accepted instance's fix patch with one of its hunks left out, at most this many
    /// (fix patches of two hunks or more; `swe_forge.quality.hunks`); 0 runs none.
    pub hunk_runs: u32,
    /// Layout variants of an accepted instance's gold patch graded through evaluation, before
    /// the evidence runs (at most [`swe_forge_core::LayoutVariant::ALL`]'s two: a blank line
    /// before the first change of each code file, hunks placed a few lines off); tests that
    /// pass with the gold patch and not under a variant leave the lists; 0 grades none.
    pub layout_variants: u32,
    /// How tests become categories; under the strict rule (the default) fail-fast is also
    /// switched off in the test command, the project's scripts and its runner configuration.
    pub label_rule: LabelRule,
}

/// The memory limit of a container when none is given, in MiB: this machine's share
/// ([`swe_forge_config::default_memory_mb`] of `/proc/meminfo`).
pub fn default_memory_mb() -> u64 {
    swe_forge_config::default_memory_mb(std::fs::read_to_string("/proc/meminfo").ok().as_deref())
}

impl Settings {
    /// Settings with default limits for repositories under `repos_root`; the memory limit of
    /// every container is [`default_memory_mb`].
    pub fn new(repos_root: PathBuf, work_dir: PathBuf) -> Settings {
        Settings {
            repos_root,
            work_dir,
            base: BaseSpec::default(),
            overrides: BTreeMap::new(),
            jobs: 1,
            phase_timeout: Duration::from_secs(30 * 60),
            setup_timeout: Duration::from_secs(60 * 60),
            memory_bytes: Some((default_memory_mb() as i64) << 20),
            ca_bundle: None,
            reruns: 0,
            pids_limit: Some(4096),
            cpus: None,
            infra_retries: 4,
            reachable_hosts: Vec::new(),
            infra_breaker: 3,
            env_commits: BTreeMap::new(),
            eval_naming: Naming::Auto,
            swarm: None,
            toolchain_attempts: swe_forge_recipes::DEFAULT_TOOLCHAIN_ATTEMPTS,
            label_rule: LabelRule::Strict,
            evidence_runs: 3,
            hunk_runs: 4,
            layout_variants: 2,
        }
    }
}

/// The steps an instance goes through, as progress shows them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// The patches are checked against the base tree.
    CheckingPatches,
    /// The instance image is built (or found).
    BuildingImage,
    /// The instance image is pulled from the registry its record names.
    PullingImage,
    /// A test run (its log label: `run`, `test-1`, `eval`, `hunk-2`, ...).
    Running(String),
    /// An evaluation ended (its outcome's name).
    Evaluated(&'static str),
}

impl std::fmt::Display for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Step::CheckingPatches => f.write_str("checking patches"),
            Step::BuildingImage => f.write_str("building image"),
            Step::PullingImage => f.write_str("pulling image"),
            // The base phase's label is `run` (`run-1` for a rerun): "base run", not "run run".
            Step::Running(label) => match label.strip_prefix("run").filter(|r| r.is_empty() || r.starts_with('-')) {
                Some(rest) => write!(f, "base{rest} run"),
                None => write!(f, "{label} run"),
            },
            Step::Evaluated(outcome) => f.write_str(outcome),
        }
    }
}

/// Progress of a validation; the binary draws it.
pub trait Reporter: Send + Sync {
    /// A one-off message (an image being built).
    fn note(&self, _message: &str) {}
    /// An instance moved to a new step.
    fn step(&self, _instance: &str, _step: Step) {}
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
    backend: Backend,
    pub(crate) settings: Settings,
    pub(crate) reporter: Arc<dyn Reporter>,
    base: OnceCell<String>,
    cells: Mutex<HashMap<String, Arc<OnceCell<String>>>>,
    pub(crate) env_cells: Mutex<HashMap<String, crate::images::EnvCell>>,
    /// The toolchain versions each family can have (`recipes/releases.toml`).
    releases: Releases,
    /// Toolchains found by a search, by repository and family: later instances start there.
    worked: Mutex<HashMap<(String, Tool), String>>,
}

impl Validator {
    /// A validator; fails when an override names an unknown recipe or toolchain.
    pub fn new(engine: Engine, settings: Settings, reporter: Arc<dyn Reporter>) -> Result<Validator, ValidateError> {
        for (repo, o) in &settings.overrides {
            swe_forge_recipes::check_override(o).map_err(|e| match e {
                RecipeError::Recipe { problem, .. } => RecipeError::Recipe { name: repo.clone(), problem },
                other => other,
            })?;
        }
        Ok(Validator {
            backend: Backend::Local(engine.clone()),
            engine,
            settings,
            reporter,
            base: OnceCell::new(),
            cells: Mutex::new(HashMap::new()),
            env_cells: Mutex::new(HashMap::new()),
            releases: Releases::builtin(),
            worked: Mutex::new(HashMap::new()),
        })
    }

    /// Takes what the searches of earlier runs found from their records (a resumed run, a state
    /// store's validated records): a repository whose instance needed another toolchain version
    /// than the first choice starts its later instances there. The toolchain of a record's image
    /// only; an override's choice is not a finding.
    pub fn learn_from(&self, records: &[Instance]) {
        let mut worked = self.worked.lock().unwrap_or_else(|e| e.into_inner());
        for r in records {
            let found = r.swe_forge.as_ref().filter(|m| m.image.is_some()).and_then(|m| m.provenance.as_ref());
            let Some(c) = found.and_then(|p| p.toolchain_choice.as_ref()) else { continue };
            let tool = self.releases.0.keys().copied().find(|t| t.name() == c.family);
            if let Some(tool) = tool.filter(|_| !c.attempts.is_empty() && !c.overridden) {
                worked.insert((format!("{}/{}", r.org, r.repo), tool), c.toolchain.clone());
            }
        }
    }

    /// Test runs go to `backend` from now on (images are still built by the local engine).
    pub fn with_backend(mut self, backend: Backend) -> Validator {
        self.backend = backend;
        self
    }

    /// Waits for the backend's cleanups still under way (call once the work is done).
    pub async fn settle(&self) {
        self.backend.settle().await;
    }

    /// The base image of the pipeline's suite, or of `suite` (a toolchain's own).
    pub(crate) async fn base_image(&self, suite: Option<&str>) -> Result<String, DockerError> {
        let spec = match suite {
            Some(s) if *s != self.settings.base.suite => BaseSpec { suite: s.to_owned(), ..self.settings.base.clone() },
            _ => self.settings.base.clone(),
        };
        let cell =
            if spec == self.settings.base { None } else { Some(self.once_cell(&format!("base {}", spec.suite))) };
        let make = || async {
            let reporter = self.reporter.clone();
            self.engine.ensure_base(&spec, &move |m| reporter.note(m)).await
        };
        match cell {
            None => self.base.get_or_try_init(make).await.cloned(),
            Some(c) => c.get_or_try_init(make).await.cloned(),
        }
    }

    /// The commit the repository environment of `inst` is built at (see [`Settings::env_commits`]).
    pub(crate) fn env_commit(&self, inst: &Instance) -> String {
        if let Some(c) = self.settings.env_commits.get(&inst.instance_id) {
            return c.clone();
        }
        swe_forge_recipes::plan_env_commits(
            std::slice::from_ref(inst),
            &self.settings.repos_root,
            &self.settings.overrides,
        )
        .remove(&inst.instance_id)
        .unwrap_or_else(|| inst.base.sha.clone())
    }

    pub(crate) fn once_cell(&self, key: &str) -> Arc<OnceCell<String>> {
        self.cells.lock().unwrap_or_else(|e| e.into_inner()).entry(key.to_owned()).or_default().clone()
    }

    /// Validates one instance. Never fails: every problem ends as a rejection on the record.
    pub async fn validate(&self, mut inst: Instance) -> Instance {
        let mut meta = ForgeMeta::new(ValidationStatus::Rejected);
        meta.merged_at = inst.swe_forge.as_ref().and_then(|m| m.merged_at.clone());
        meta.created_at = inst.swe_forge.as_ref().and_then(|m| m.created_at.clone());
        // A patch that changes nothing is decided before anything is read or run.
        let steps = match empty_patch(&inst.test_patch, &inst.fix_patch) {
            Some(empty) => Err(empty),
            None => self.validate_steps(&mut inst, &mut meta).await,
        };
        let rejections = match steps {
            Ok(r) => r,
            Err(r) => vec![r],
        };
        // No more run of this image is coming: the container started ahead for one goes now.
        if let Some(image) = &meta.image {
            self.backend.done_with(image);
        }
        meta.status = if rejections.is_empty() { ValidationStatus::Accepted } else { ValidationStatus::Rejected };
        meta.rejections = rejections;
        inst.swe_forge = Some(meta);
        inst
    }

    /// The steps of a validation, top to bottom; `Err` is the rejection that stopped it, `Ok`
    /// the rejections of the finished runs (limits hit, keep rules).
    async fn validate_steps(&self, inst: &mut Instance, meta: &mut ForgeMeta) -> Result<Vec<Rejection>, Rejection> {
        let (test_patch, fix_patch) = (inst.test_patch.clone(), inst.fix_patch.clone());
        let checks = [
            PatchCheck { name: "test_patch", patch: &test_patch, not_applying: RejectReason::TestPatchDoesNotApply },
            PatchCheck { name: "fix_patch", patch: &fix_patch, not_applying: RejectReason::FixPatchDoesNotApply },
        ];
        let fresh = meta.clone();
        let mut preset = None;
        let mut attempts = crate::retries::recorded_attempts(inst);
        'toolchain: loop {
            let prepared = self.prepare(inst, meta, &checks, ImageSource::Build, preset.take(), &mut attempts).await?;
            let logs = RunLogs::new(&self.settings.work_dir, &inst.instance_id);
            if let Some(built) = &prepared.built {
                if let Some(log) = &built.setup_log {
                    crate::grading::parsed::write_log(&logs, "setup", log);
                }
                meta.provenance = Some(self.provenance(&prepared, built).await);
            }
            meta.warnings.extend(wrapper_warning(&prepared));
            self.reporter.image_ready(&inst.instance_id);

            let mut runs: [Vec<PhaseStatuses>; 3] = Default::default();
            let mut input = GradeInput {
                rule: self.settings.label_rule,
                suite_files: prepared.suite_files,
                ..GradeInput::default()
            };
            let mut rejections: Vec<Rejection> = Vec::new();
            let mut msb_names = std::collections::BTreeMap::new();
            let mut missing: [Option<swe_forge_recipes::Missing>; 3] = Default::default();
            let patches = vec![
                (TEST_PATCH.to_owned(), test_patch.clone().into_bytes()),
                (FIX_PATCH.to_owned(), fix_patch.clone().into_bytes()),
            ];
            for (pi, phase) in Phase::ALL.into_iter().enumerate() {
                for attempt in 0..=self.settings.reruns {
                    // The fix phase's last run is the instance's last when no evidence or hunk
                    // run follows: no container is started ahead for a run that does not come.
                    let last = pi + 1 == Phase::ALL.len() && attempt == self.settings.reruns;
                    let more = self.settings.evidence_runs > 0
                        || self.settings.layout_variants > 0
                        || self.hunk_plan(&fix_patch) > 0;
                    let request = RunRequest {
                        phase,
                        attempt,
                        label: RunLogs::label(phase, attempt),
                        script: script(phase, &prepared.recipe),
                        files: patches.clone(),
                        next: if last && !more { Next::Nothing } else { Next::Same },
                    };
                    let outcome = self.run_once(&inst.instance_id, &prepared.target, &request, &logs, meta).await?;
                    // A base run that names the toolchain, or that refused to run as root: the
                    // image and the runs start over (the next toolchain, or a test user).
                    if let Some(next) = self.restart_after(inst, &prepared, &outcome, &mut attempts) {
                        *meta = fresh.clone();
                        preset = next;
                        self.backend.done_with(&prepared.target.image);
                        continue 'toolchain;
                    }
                    for r in outcome.limits {
                        if !rejections.iter().any(|x| x.reason == r.reason) {
                            rejections.push(r);
                        }
                    }
                    if attempt == 0 {
                        input.facts[pi] = outcome.facts;
                        missing[pi] = outcome.missing;
                    }
                    msb_names.extend(outcome.parsed.msb_names);
                    runs[pi].push(outcome.parsed.tests);
                }
            }
            // Runs that reported no test in any phase: the image and the runs start over with
            // a system package every phase lacks, or with the tree's next build system.
            match self.retry_after_runs(inst, &prepared, (&runs, &missing, &input), &mut attempts).await {
                Ok(true) => {
                    (*meta, preset) = (fresh.clone(), prepared.choice.clone());
                    self.backend.done_with(&prepared.target.image);
                    continue 'toolchain;
                }
                Ok(false) => {}
                Err(r) => rejections.push(r),
            }
            rejections.extend(grade(&runs, &input).record(inst, meta));
            let requested = meta.provenance.as_ref().map(|p| &p.requested_versions);
            crate::network::add_evidence(&mut rejections, &logs, requested, &self.settings.reachable_hosts);
            meta.msb_names = Some(crate::grading::grade::named_results(inst, msb_names));
            self.after_grade(inst, meta, &mut rejections).await;
            return Ok(rejections);
        }
    }

    /// Whether a run's outcome starts the instance over, and with which toolchain choice: the
    /// next toolchain when a base run that ran no test names the toolchain's version, the same
    /// choice with an unprivileged test user (an attempt added to `attempts`) when a base run
    /// refused to run as root.
    fn restart_after(
        &self,
        inst: &Instance,
        prepared: &Prepared,
        outcome: &RunOutcome,
        attempts: &mut Vec<BuildAttempt>,
    ) -> Option<Option<(Tool, ToolchainChoice)>> {
        if let Some(sign) = &outcome.toolchain_sign {
            let mut choice = prepared.choice.clone();
            let tested = tested_of(prepared.choice.as_ref(), &prepared.detection);
            if let Some(next) = self.next_toolchain(&mut choice, Some(sign.clone()), &tested) {
                self.reporter.note(&format!(
                    "{}: the base run failed on toolchain {} ({}); trying {next}",
                    inst.instance_id, prepared.recipe.toolchain, sign.line
                ));
                return Some(choice);
            }
        }
        let a = outcome.root_refusal.as_deref().and_then(|line| test_user_attempt(line, attempts))?;
        self.reporter.note(&format!(
            "{}: the base run refused to run as root ({}); running as {}",
            inst.instance_id, a.line, a.action
        ));
        attempts.push(a);
        Some(prepared.choice.clone())
    }

    /// After the grade of an instance that kept it: the quality signals of its text, then the
    /// layout variants, evidence and hunk runs the settings ask for.
    async fn after_grade(&self, inst: &mut Instance, meta: &mut ForgeMeta, rejections: &mut Vec<Rejection>) {
        if rejections.is_empty() {
            // What the record's text says of its quality; the runs' signals follow.
            let q = meta.quality.get_or_insert_with(Default::default);
            swe_forge_quality::apply(q, swe_forge_quality::read(inst));
        }
        let s = &self.settings;
        if rejections.is_empty() && (s.evidence_runs > 0 || s.hunk_runs > 0 || s.layout_variants > 0) {
            rejections.extend(self.gather_evidence(inst, meta).await);
        }
    }

    /// Everything before the runs: the repository and base commit, the patches (safe, and
    /// applying in order to the base tree in memory), the recipe and its parsers, the image.
    /// Sets the record's language and the recipe's test command and parsers on `meta`.
    pub(crate) async fn prepare(
        &self,
        inst: &mut Instance,
        meta: &mut ForgeMeta,
        checks: &[PatchCheck<'_>],
        image: ImageSource,
        preset: Option<(Tool, ToolchainChoice)>,
        attempts: &mut Vec<BuildAttempt>,
    ) -> Result<Prepared, Rejection> {
        let id = inst.instance_id.clone();
        let reject = |reason, detail: String| Rejection::new(reason, detail);
        self.reporter.step(&id, Step::CheckingPatches);
        let repo = SourceRepo::locate(&self.settings.repos_root, &inst.org, &inst.repo)
            .and_then(|r| r.commit(&inst.base.sha).map(|_| ()).map(|()| r))
            .map_err(|e| reject(RejectReason::RepoUnavailable, e.to_string()))?;
        check_patches(&repo, &inst.base.sha, checks)?;

        let Resolved { mut recipe, mut toolchain, detection, mut choice, mut command_notes, mut ci } = self
            .resolve_recipe_with(&repo, inst, attempts, None)
            .map_err(|e| reject(RejectReason::UnsupportedEnvironment, e.to_string()))?;
        // A toolchain the search took after a base run that failed because of the chosen one.
        if let Some((tool, c)) = preset {
            let t =
                Toolchain::named(&c.toolchain).map_err(|e| reject(RejectReason::ImageBuildFailed, e.to_string()))?;
            recipe.toolchain.clone_from(&c.toolchain);
            choice = Some((tool, c));
            toolchain = with_search_env(t, &mut recipe, choice.as_ref());
        }
        inst.lang = Some(recipe.language.clone());
        meta.test_command = Some(recipe.test_command.clone());
        meta.parser = Some(recipe.parser);
        meta.results_parser = recipe.results_parser;
        let parsers = Parsers::new(recipe.parser, recipe.results_parser)
            .for_repository(&inst.org, &inst.repo)
            .map_err(|e| reject(RejectReason::UnsupportedEnvironment, e.to_string()))?;

        let extras = crate::resolve_extra_sources(&self.settings.repos_root, &recipe.extra_sources)
            .map_err(|e| reject(RejectReason::RepoUnavailable, e.to_string()))?;
        meta.warnings.extend(extras.iter().filter_map(|x| x.warning()));

        let base_tree = repo.commit(&inst.base.sha).map(|c| c.tree_id().to_string()).unwrap_or_default();
        let suite_files = is_js_runner(recipe.parser).then(|| js_suite_files(&repo, &inst.base.sha, &inst.test_patch));
        let (tag, built) = match image {
            ImageSource::Existing(tag) => (tag, None),
            ImageSource::Build => {
                self.reporter.step(&id, Step::BuildingImage);
                let root = &self.settings.repos_root;
                meta.warnings.extend(crate::submodules::missing_warnings(&repo, &inst.base.sha, root, &inst.org));
                let notes = &mut command_notes;
                let tested = tested_of(choice.as_ref(), &detection);
                let building = Building {
                    recipe: &mut recipe,
                    toolchain: &mut toolchain,
                    choice: &mut choice,
                    attempts,
                    notes,
                    ci: &mut ci,
                    tested,
                };
                let image = match self.build_image(&repo, inst, &extras, building, &mut meta.warnings).await {
                    Ok(image) => image,
                    Err(r) => {
                        // What was chosen and tried goes on the record, with the line that says why.
                        let tried = crate::cioptions::Tried {
                            recipe: &recipe,
                            detection: &detection,
                            choice: choice.as_ref(),
                            command_notes: &command_notes,
                            ci: &ci,
                            base_tree: &base_tree,
                            extras: &extras,
                        };
                        let mut provenance = crate::cioptions::failed_provenance(&tried, &r.detail);
                        provenance.build_attempts = attempts.clone();
                        meta.provenance = Some(provenance);
                        return Err(r);
                    }
                };
                meta.image = Some(image.tag.clone());
                meta.image_id = self.engine.image_id(&image.tag).await.ok().flatten();
                meta.warnings.extend(image.warnings.iter().cloned());
                (image.tag.clone(), Some(image))
            }
        };
        let target = RunTarget::of(&recipe, parsers, tag);
        Ok(Prepared {
            recipe,
            toolchain,
            detection,
            target,
            built,
            extras,
            base_tree,
            choice,
            command_notes,
            ci,
            suite_files,
            attempts: attempts.clone(),
        })
    }

    /// The instance image of `inst`, made or reused. A build that fails with signs of the CI's
    /// options moves `building` on to the next set with fewer (`cioptions.rs`), one that fails
    /// because of the toolchain on to the next one the search gives; engine failures (a restart
    /// mid-build) are retried with backoff, as runs are. A toolchain found by a search is kept for
    /// the repository's later instances.
    async fn build_image(
        &self,
        repo: &SourceRepo,
        inst: &Instance,
        extras: &[crate::ResolvedExtraSource],
        building: Building<'_>,
        warnings: &mut Vec<String>,
    ) -> Result<InstanceImage, Rejection> {
        let mut building = building;
        let id = &inst.instance_id;
        let env_commit = self.env_commit(inst);
        if let Some(r) = crate::submodules::absent_content(repo, &[&env_commit, &inst.base.sha]) {
            return Err(r);
        }
        let mut delay = Duration::from_secs(2);
        let mut tries = 0;
        let image = loop {
            let req = ImageRequest {
                repo,
                inst,
                recipe: building.recipe,
                toolchain: building.toolchain,
                env_commit: &env_commit,
                extras,
                mode: BuildMode::Reuse,
            };
            match self.instance_image(&req).await {
                Ok(x) => break x,
                Err(ImageFailure::Build(detail)) => {
                    // A setup that fails in a submodule no local copy holds needs its host.
                    let root = &self.settings.repos_root;
                    let named = [&env_commit, &inst.base.sha]
                        .iter()
                        .find_map(|sha| crate::submodules::named_in_failure(repo, sha, root, &inst.org, &detail));
                    if let Some((path, url)) = named {
                        return Err(Rejection::new(
                            RejectReason::NeedsNetwork,
                            format!(
                                "the setup needs the submodule {path} ({url}), which no local copy holds; its folder is empty\n\n{}",
                                with_attempts(detail, building.choice.as_ref())
                            ),
                        ));
                    }
                    // A system package that provides what the setup lacked, else fewer CI options
                    // or another toolchain; a lack no package fills is the cause when nothing helps.
                    let unfilled = match self
                        .retry_after_setup(&detail, building.recipe, building.toolchain, building.attempts)
                        .await
                    {
                        Ok(Some(a)) => {
                            self.reporter
                                .note(&format!("{id}: the setup failed; trying again with {} {}", a.kind, a.action));
                            crate::retries::apply_attempts(building.recipe, std::slice::from_ref(&a));
                            let t = Toolchain::named(&building.recipe.toolchain)
                                .map_err(|e| Rejection::new(RejectReason::ImageBuildFailed, e.to_string()))?;
                            *building.toolchain = with_search_env(t, building.recipe, building.choice.as_ref());
                            building.attempts.push(a);
                            continue;
                        }
                        Ok(None) => None,
                        Err(r) => Some(r),
                    };
                    self.after_failed_build(repo, inst, detail, &mut building).map_err(|r| match unfilled {
                        Some(u) if r.reason != RejectReason::NeedsNetwork => u,
                        _ => r,
                    })?
                }
                Err(ImageFailure::Infra(e)) if tries < self.settings.infra_retries => {
                    self.pause_before_retry(id, &error_chain(&e), &mut tries, &mut delay, warnings).await;
                }
                Err(ImageFailure::Infra(e)) => {
                    return Err(Rejection::new(RejectReason::Infrastructure, error_chain(&e)));
                }
            }
        };
        if let Some((tool, c)) = building.choice.as_ref()
            && !c.attempts.is_empty()
        {
            let key = (format!("{}/{}", inst.org, inst.repo), *tool);
            self.worked.lock().unwrap_or_else(|e| e.into_inner()).insert(key, c.toolchain.clone());
        }
        Ok(image)
    }

    /// Where an instance's image came from: recipe, toolchain and its versions, lockfiles, trees.
    async fn provenance(&self, p: &Prepared, image: &InstanceImage) -> Provenance {
        let (resolved_lockfiles, setup_notes) = self.image_facts(&image.tag).await;
        Provenance {
            recipe: p.recipe.name.clone(),
            recipe_sha256: sha256_hex(&[&serde_json::to_string(&p.recipe).unwrap_or_default()]),
            base_image: self.base_image(p.toolchain.base_suite.as_deref()).await.unwrap_or_default(),
            toolchain_image: image.toolchain_tag.clone(),
            toolchain_dockerfile_sha256: sha256_hex(&[&image.toolchain_dockerfile]),
            toolchain_versions: self.toolchain_versions(&image.toolchain_tag, &p.toolchain).await,
            requested_versions: p.detection.requested_versions.clone(),
            lockfiles: p.detection.lockfiles.clone(),
            resolved_lockfiles,
            base_tree: p.base_tree.clone(),
            source_image_id: image.source_image_id.clone(),
            env_commit: image.env.commit.clone(),
            env_image: image.env.tag.clone(),
            env_image_id: image.env.id.clone(),
            env_build_ms: image.env.build_ms,
            image_build_ms: image.build_ms,
            fingerprint: image.fingerprint.clone(),
            env_fingerprint: image.env_fingerprint.clone(),
            extra_sources: p.extras.iter().map(|x| x.provenance()).collect(),
            toolchain_choice: p.choice.as_ref().map(|(_, c)| c.clone()),
            test_command_notes: p.command_notes.clone(),
            setup_notes,
            build_attempts: p.attempts.clone(),
            ci_options: p.ci.provenance(),
            setup_error: String::new(),
        }
    }

    /// One run in a fresh container of the prepared image: its log and result files kept under
    /// `logs`, its statuses parsed, its `PhaseRun` and warnings put on `meta`. `Err` when the
    /// engine failed after its retries or a patch did not apply in the container.
    pub(crate) async fn run_once(
        &self,
        id: &str,
        target: &RunTarget,
        request: &RunRequest,
        logs: &RunLogs,
        meta: &mut ForgeMeta,
    ) -> Result<RunOutcome, Rejection> {
        let label = &request.label;
        self.reporter.step(id, Step::Running(label.clone()));
        let mut spec = RunSpec::new(&target.image, request.script.clone());
        spec.files.clone_from(&request.files);
        spec.timeout = self.settings.phase_timeout;
        spec.memory_bytes = self.settings.memory_bytes;
        spec.pids_limit = self.settings.pids_limit;
        spec.cpus = self.settings.cpus;
        spec.user.clone_from(&target.user);
        spec.network = target.network;
        spec.env.clone_from(&target.env);
        spec.env.push(format!("SWE_FORGE_ATTEMPT={}", request.attempt));
        spec.collect = Some(RESULTS_DIR.to_owned());
        spec.next.clone_from(&request.next);
        let out = self
            .run_with_retries(id, &spec, &mut meta.warnings)
            .await
            .map_err(|e| Rejection::new(RejectReason::Infrastructure, format!("{label} run: {}", error_chain(&e))))?;
        crate::grading::parsed::write_log(logs, label, &out.log);
        for (name, content) in &out.files {
            crate::grading::parsed::write_result_file(&logs.results(label), name, content);
        }
        if out.exit_code == Some(APPLY_FAILED_EXIT)
            && let Some(patch) = failed_patch(&out.log)
        {
            let reason = if patch == TEST_PATCH || patch == crate::phases::EVAL_TEST_PATCH {
                RejectReason::TestPatchDoesNotApply
            } else {
                RejectReason::FixPatchDoesNotApply
            };
            return Err(Rejection::new(reason, format!("git apply of {patch} failed in the {label} run")));
        }
        let parsed = target.parsers.parse(&out.log, &out.files);
        let toolchain_sign = (request.phase == Phase::Run
            && request.attempt == 0
            && out.exit_code != Some(0)
            && !out.timed_out
            && parsed.tests.is_empty())
        .then(|| classify_failure(&String::from_utf8_lossy(&out.log)))
        .flatten();
        crate::grading::parsed::keep(logs, label, &parsed);
        meta.warnings.extend(run_warnings(label, &parsed, &out, request.attempt == 0));
        // A failed (or killed) run whose log says a fixture's certificate or token expired, in a
        // line of a test that did not pass (a test of expiry makes expired certificates on purpose).
        if out.exit_code != Some(0)
            && !Warning::TimeBomb.on(&meta.warnings)
            && let Some(sign) = swe_forge_logparse::time_bomb_evidence(&out.log, &parsed.tests)
        {
            meta.warnings.push(Warning::TimeBomb.with(format!("{label} run: {sign}")));
        }
        meta.runs.push(PhaseRun {
            phase: request.phase,
            exit_code: out.exit_code,
            duration_ms: out.duration.as_millis() as u64,
            timed_out: out.timed_out,
            log_sha256: out.log_sha256.clone(),
            log_bytes: out.log_bytes,
            tests: parsed.tests.len() as u64,
            attempt: request.attempt,
            command_ms: command_ms(&out.log),
        });
        let mut limits = Vec::new();
        if out.timed_out {
            limits.push(Rejection::new(
                RejectReason::Timeout,
                format!("{label} run killed after {} s", self.settings.phase_timeout.as_secs()),
            ));
        }
        if out.oom_killed {
            limits.push(Rejection::new(RejectReason::Oom, format!("{label} run killed by the memory limit")));
        }
        if hit_pids_limit(&out.log) {
            limits.push(Rejection::new(
                RejectReason::PidsLimit,
                format!("{label} run could not fork: limit of {:?} processes", self.settings.pids_limit),
            ));
        }
        if out.log_truncated {
            meta.warnings.push(format!("{label} run: log of {} bytes kept as head and tail", out.log_bytes));
        }
        let facts =
            RunFacts::of(&out.log, out.exit_code, out.timed_out, meta.test_command.as_deref().unwrap_or_default());
        let notes = swe_forge_notes(&out.log);
        let missing = (request.attempt == 0 && parsed.tests.is_empty())
            .then(|| swe_forge_recipes::missing_dependency(&String::from_utf8_lossy(&out.log)))
            .flatten();
        let root_refusal = (request.phase == Phase::Run && request.attempt == 0 && target.user.is_none())
            .then(|| root_refusal(&out))
            .flatten();
        Ok(RunOutcome { parsed, limits, toolchain_sign, facts, notes, missing, root_refusal })
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
            let why = match self.backend.run(spec).await {
                // A script that ends neither by itself nor by our timeout or the memory limit was
                // killed from outside (an engine restart, `docker kill`): not a test result.
                Ok(out)
                    if out.timed_out
                        || out.oom_killed
                        || has(&out.log, EXIT_MARKER)
                        || has(&out.log, APPLY_FAILED_MARKER) =>
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
        warnings.push(Warning::InfraRetry.with(why));
        self.reporter.note(&format!("{id}: {why}; retry {tries} in {} s", delay.as_secs()));
        tokio::time::sleep(*delay).await;
        *delay *= 2;
    }

    /// Recipe (override > detection), its toolchain (the version chosen for the instance, unless
    /// an override names one), with overrides applied, made as the record's provenance says its
    /// image was (`build_attempts`).
    pub(crate) fn resolve_recipe(&self, repo: &SourceRepo, inst: &Instance) -> Result<Resolved, NoRecipe> {
        self.resolve_recipe_with(repo, inst, &crate::retries::recorded_attempts(inst), None)
    }

    /// [`Validator::resolve_recipe`] after `attempts` (the build system they moved to, the
    /// fallbacks they took, the system packages they installed), with the CI's option set `ci_at`
    /// ([`CiTry::new`]; None: the record's, else the first).
    pub(crate) fn resolve_recipe_with(
        &self,
        repo: &SourceRepo,
        inst: &Instance,
        attempts: &[BuildAttempt],
        ci_at: Option<usize>,
    ) -> Result<Resolved, NoRecipe> {
        let key = format!("{}/{}", inst.org, inst.repo);
        let over = self.settings.overrides.get(&key).cloned().unwrap_or_default();
        let detection = detect(repo, &inst.base.sha);
        let moved = crate::retries::chosen_build_system(attempts).map(str::to_owned);
        // A root without any build file: the project of the folder the patches change.
        let folder = (over.forced_recipe(inst).is_none()
            && moved.is_none()
            && detection.recipe.is_none()
            && detection.unsupported.is_none())
        .then(|| swe_forge_recipes::project_dir(repo, &inst.base.sha, &patch_paths(inst)))
        .flatten();
        let detection = match &folder {
            Some(dir) => swe_forge_recipes::detect_at(repo, &inst.base.sha, dir),
            None => detection,
        };
        let name = match (over.forced_recipe(inst).or(moved), &detection.recipe, &detection.unsupported) {
            (Some(n), _, _) => n,
            (None, _, Some(why)) => return Err(NoRecipe::Unsupported(why.clone())),
            (None, Some(n), None) => n.clone(),
            (None, None, None) => return Err(NoRecipe::NoBuildFiles),
        };
        let mut recipe = Recipe::named(&name)?;
        if let (None, Some(l)) = (over.forced_recipe(inst), &detection.language) {
            recipe.language.clone_from(l);
        }
        // The version is chosen whether the recipe was detected or named by an override: an
        // override that names a recipe says nothing of its version (one that names a toolchain
        // replaces the choice below, and the record says so).
        let mut choice = self.choose_toolchain(repo, inst, &recipe, &detection);
        if let Some((_, c)) = &choice {
            recipe.toolchain.clone_from(&c.toolchain);
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
        if recipe.ci_apt_packages {
            recipe.ci_packages = swe_forge_recipes::all_packages(&detection.ci_packages);
        }
        crate::retries::apply_attempts(&mut recipe, attempts);
        if let Some((_, c)) = &mut choice {
            c.overridden = recipe.toolchain != c.toolchain;
        }
        let ci = CiTry::new(&detection, &recipe, inst, ci_at);
        let mut command_notes = ci.current().map(|set| recipe.add_ci_flags(set)).unwrap_or_default();
        if recipe.ci_apt_packages {
            command_notes.extend(recipe.use_stand_ins(&self.stand_ins(repo, inst)));
        }
        // The package manager (a recipe named by an override, over a tree detection took for
        // another language, reads it from the tree here).
        let pm = detection.package_manager.clone().unwrap_or_else(|| {
            let read = |f: &str| repo.file_at(&inst.base.sha, f).map(|b| String::from_utf8_lossy(&b).into_owned());
            swe_forge_recipes::package_manager(&read)
        });
        command_notes.extend(recipe.use_package_manager(&pm));
        command_notes.extend(test_target(repo, inst, &detection, &mut recipe));
        command_notes.extend(self.test_command(repo, inst, &mut recipe));
        if let Some(dir) = &folder {
            command_notes.push(recipe.in_folder(dir, crate::images::REPO_DIR));
        }
        let toolchain = Toolchain::named(&recipe.toolchain)?;
        let toolchain = with_search_env(toolchain, &mut recipe, choice.as_ref().filter(|(_, c)| !c.overridden));
        Ok(Resolved { toolchain, recipe, detection, choice, command_notes, ci })
    }

    /// The Debian packages standing in for what the base commit's build would fetch from a host
    /// out of reach: its CMake files' `FetchContent_Declare`s and its submodules without a local
    /// copy, matched against `recipes/stand-ins.toml`.
    fn stand_ins(&self, repo: &SourceRepo, inst: &Instance) -> swe_forge_recipes::StandIns {
        let sha = &inst.base.sha;
        let cmake: Vec<String> = repo
            .paths_at(sha)
            .unwrap_or_default()
            .into_iter()
            .filter(|p| p.rsplit('/').next().is_some_and(|n| n == "CMakeLists.txt" || n.ends_with(".cmake")))
            .take(500)
            .filter_map(|p| repo.file_at(sha, &p).map(|b| String::from_utf8_lossy(&b).into_owned()))
            .collect();
        let missing = crate::submodules::missing_with_urls(repo, sha, &self.settings.repos_root, &inst.org);
        let added = swe_forge_recipes::patch_submodules(&[&inst.fix_patch, &inst.test_patch]);
        swe_forge_recipes::stand_ins_for(&cmake, &missing, &added)
    }

    /// The test command as it will run, and what changed it: the script the project's CI runs
    /// instead of its `test` script, and under the strict rule fail-fast switched off (in the
    /// command here; in a JavaScript project's scripts and configuration by a pre-test step).
    fn test_command(&self, repo: &SourceRepo, inst: &Instance, recipe: &mut Recipe) -> Vec<String> {
        let mut notes = Vec::new();
        // A command the repository's own override names is taken as it is.
        let named = self
            .settings
            .overrides
            .get(&format!("{}/{}", inst.org, inst.repo))
            .is_some_and(|o| o.test_command.is_some() || o.variants.iter().any(|v| v.test_command.is_some()));
        let ci =
            if named { None } else { swe_forge_recipes::ci_test_command(repo, &inst.base.sha, &recipe.test_command) };
        if let Some((command, source)) = ci {
            notes.push(format!("`{command}` from {source}, instead of `{}`", recipe.test_command));
            recipe.test_command = command;
        }
        let own = if named { None } else { repo.file_at(&inst.base.sha, "package.json") };
        if let Some((command, source)) =
            own.as_deref().and_then(|p| swe_forge_recipes::mocha_options(p, &recipe.test_command))
        {
            notes.push(format!("`{command}`: {source}, instead of `{}`", recipe.test_command));
            recipe.test_command = command;
        }
        // The recipe's runner command skips what the project's test script runs before its runner
        // (a build its tests load): those scripts run before each test run.
        let runner_recipe = recipe.name != "js-npm" && recipe.name.starts_with("js-");
        let package = own.filter(|_| runner_recipe).and_then(|p| serde_json::from_slice(&p).ok());
        let steps = package.as_ref().map(swe_forge_recipes::pre_runner_steps).unwrap_or_default();
        if let Some(step) = swe_forge_recipes::pre_runner_step(&steps) {
            recipe.pre_test.push(step);
            let said: Vec<String> = steps.iter().map(ToString::to_string).collect();
            notes
                .push(format!("{} before each test run: the test script runs them before its runner", said.join(", ")));
        }
        if self.settings.label_rule == LabelRule::Strict {
            let (command, changes) = swe_forge_recipes::no_fail_fast(&recipe.test_command);
            recipe.test_command = command;
            notes.extend(changes.into_iter().map(|c| format!("fail-fast off: {c}")));
            if matches!(recipe.language.as_str(), "javascript" | "typescript") {
                recipe.pre_test.insert(0, swe_forge_recipes::no_fail_fast_js_step());
                notes.push("fail-fast off: the project's scripts and runner configuration, in the container (`swe-forge: fail-fast off:` lines of each run's log)".into());
            }
        }
        notes
    }

    /// The toolchain version of `inst` for its recipe's family (none for families with one
    /// version): the record's own earlier choice, else the one a search found for an earlier
    /// instance of the repository, else [`swe_forge_recipes::choose`] over what the base commit asks for and
    /// its date.
    fn choose_toolchain(
        &self,
        repo: &SourceRepo,
        inst: &Instance,
        recipe: &Recipe,
        detection: &Detection,
    ) -> Option<(Tool, ToolchainChoice)> {
        let (tool, _) = self.releases.family_of(&recipe.toolchain)?;
        // A record whose image was not made carries its choice too, the failed one: not taken.
        let earlier = inst
            .swe_forge
            .as_ref()
            .filter(|m| m.image.is_some())
            .and_then(|m| m.provenance.as_ref())
            .and_then(|p| p.toolchain_choice.as_ref());
        if let Some(c) =
            earlier.filter(|c| !c.overridden && c.family == tool.name() && Toolchain::named(&c.toolchain).is_ok())
        {
            return Some((tool, c.clone()));
        }
        let repo_key = (format!("{}/{}", inst.org, inst.repo), tool);
        let found = self.worked.lock().unwrap_or_else(|e| e.into_inner()).get(&repo_key).cloned();
        if let Some(name) = found
            && let Some(r) = self.releases.0.get(&tool).and_then(|l| l.iter().find(|r| r.toolchain_name(tool) == name))
        {
            return Some((
                tool,
                ToolchainChoice {
                    family: tool.name().to_owned(),
                    version: r.version.clone(),
                    toolchain: name,
                    reason: format!("found by the search of an earlier instance of {}/{}", inst.org, inst.repo),
                    ..ToolchainChoice::default()
                },
            ));
        }
        let day = swe_forge_core::Day::of_second(repo.commit(&inst.base.sha).ok()?.time().seconds());
        let c = swe_forge_recipes::choose(&self.releases, tool, &detection.requests, day, &recipe.toolchain)?;
        Some((
            tool,
            ToolchainChoice {
                family: tool.name().to_owned(),
                version: c.release.version.clone(),
                toolchain: c.release.toolchain_name(tool),
                reason: c.reason,
                ..ToolchainChoice::default()
            },
        ))
    }

    /// After a setup that failed with `detail`: the next toolchain to try, when the failure names
    /// the chosen family, no override named the toolchain and attempts are left. The failed one
    /// goes onto the choice's attempts.
    /// After an image build failed with `detail`: the rejection when the setup could not reach a
    /// host (another toolchain cannot either) or no other toolchain is left to try; else the
    /// next toolchain of the search, put into `recipe` and `toolchain` for the next build.
    fn after_failed_build(
        &self,
        repo: &SourceRepo,
        inst: &Instance,
        detail: String,
        building: &mut Building<'_>,
    ) -> Result<(), Rejection> {
        let id = &inst.instance_id;
        // Another toolchain cannot fetch a snapshot or reach a host this one could not.
        if let Some((coordinate, line)) = crate::network::unfetchable_snapshot(&detail) {
            let detail = with_attempts(detail, building.choice.as_ref());
            return Err(Rejection::new(
                RejectReason::NeedsNetwork,
                format!("the setup could not fetch the Maven snapshot {coordinate}: {line}\n\n{detail}"),
            ));
        }
        if let Some((host, line)) = crate::network::unreachable_host(&detail, &self.settings.reachable_hosts) {
            let detail = with_attempts(detail, building.choice.as_ref());
            return Err(Rejection::new(
                RejectReason::NeedsNetwork,
                format!("the setup could not reach {host}: {line}\n\n{detail}"),
            ));
        }
        // The CI's options failed: the same toolchain with fewer of them.
        if let Some(line) = building.ci.next_after(&detail) {
            let fresh = self
                .resolve_recipe_with(repo, inst, building.attempts, Some(building.ci.at))
                .map_err(|e| Rejection::new(RejectReason::ImageBuildFailed, e.to_string()))?;
            let label = building.ci.current().map(|s| s.label.clone()).unwrap_or_default();
            self.reporter.note(&format!("{id}: the setup failed with the CI's options ({line}); trying {label}"));
            let toolchain = std::mem::take(&mut building.recipe.toolchain);
            *building.recipe = fresh.recipe;
            building.recipe.toolchain = toolchain;
            *building.notes = fresh.command_notes;
            return Ok(());
        }
        let Building { recipe, toolchain, choice, tested, .. } = building;
        match self.next_toolchain(choice, classify_failure(&detail), tested) {
            // The setup failed because of the toolchain's version: the next one, same recipe.
            Some(next) => {
                self.reporter.note(&format!("{id}: the setup failed on toolchain {}; trying {next}", recipe.toolchain));
                let t = Toolchain::named(&next)
                    .map_err(|e| Rejection::new(RejectReason::ImageBuildFailed, e.to_string()))?;
                recipe.toolchain = next;
                **toolchain = with_search_env(t, recipe, choice.as_ref());
                Ok(())
            }
            None => Err(Rejection::new(RejectReason::ImageBuildFailed, with_attempts(detail, choice.as_ref()))),
        }
    }

    /// The next toolchain after a failure with `sign`, onto the choice's attempts: the same one
    /// with the compiler's bigger thread stack after its first stack overflow, else the next
    /// version of the search (`tested`: the versions the CI's matrix names, preferred).
    fn next_toolchain(
        &self,
        choice: &mut Option<(Tool, ToolchainChoice)>,
        sign: Option<ToolchainSign>,
        tested: &[Version],
    ) -> Option<String> {
        let (tool, c) = choice.as_mut()?;
        let sign = sign.filter(|s| s.tool == *tool && !c.overridden)?;
        let raised = raised_stack(c.attempts.iter().map(|a| a.error.as_str()));
        c.attempts.push(ToolchainAttempt { toolchain: c.toolchain.clone(), error: sign.line });
        if c.attempts.len() >= self.settings.toolchain_attempts.max(1) as usize {
            return None;
        }
        if sign.direction == Direction::Stack && !raised && !bigger_stack_env(*tool, &BTreeMap::new()).is_empty() {
            let vars: Vec<String> = bigger_stack_env(*tool, &BTreeMap::new()).into_iter().map(|(k, _)| k).collect();
            c.reason.push_str(&format!(
                "; the compiler's thread stack raised after its stack overflow ({BIGGER_STACK} in {})",
                vars.join(" and ")
            ));
            return Some(c.toolchain.clone());
        }
        let tried: Vec<String> = c.attempts.iter().map(|a| a.toolchain.clone()).collect();
        let next = next_candidate(&self.releases, *tool, &tried, sign.direction, tested)?;
        c.toolchain = next.toolchain_name(*tool);
        c.version.clone_from(&next.version);
        Some(c.toolchain.clone())
    }
}

/// A test or fix patch that changes no file (empty, blank, or text without a file's diff) makes
/// no test go from failing to passing: the instance is rejected `no_fixed_tests`, saying which
/// patch, before the repository is read or any container runs (before, three runs came first).
pub(crate) fn empty_patch(test_patch: &str, fix_patch: &str) -> Option<Rejection> {
    let (name, what) = [("test_patch", test_patch), ("fix_patch", fix_patch)]
        .into_iter()
        .find(|(_, patch)| swe_forge_core::file_diffs(patch).is_empty())?;
    let what = if what.trim().is_empty() { "is empty" } else { "holds no file's diff" };
    Some(Rejection::new(
        RejectReason::NoFixedTests,
        format!("{name} {what}: it changes nothing, so no test can go from failing to passing; nothing was run"),
    ))
}

/// The checks before anything is built: every patch under evaluation's size limit (so that no
/// accepted instance has a gold patch evaluation refuses) and safe, and all of them applying,
/// in order, to the base commit.
fn check_patches(repo: &SourceRepo, base_sha: &str, checks: &[PatchCheck<'_>]) -> Result<(), Rejection> {
    let reject = |reason, detail: String| Rejection::new(reason, detail);
    for c in checks {
        if c.patch.len() > crate::MAX_PATCH_BYTES {
            return Err(reject(
                RejectReason::UnsafePatch,
                format!(
                    "{}: patch of {} bytes is over the limit of {} ({} MiB) every patch has",
                    c.name,
                    c.patch.len(),
                    crate::MAX_PATCH_BYTES,
                    crate::MAX_PATCH_BYTES >> 20
                ),
            ));
        }
        if let Some(why) = unsafe_patch_reason(c.patch) {
            return Err(reject(RejectReason::UnsafePatch, format!("{}: {why}", c.name)));
        }
    }
    let patches: Vec<&str> = checks.iter().map(|c| c.patch).collect();
    match apply_patches(repo, base_sha, &patches) {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(f)) => Err(reject(checks[f.index].not_applying, f.message)),
        Err(e) => Err(reject(RejectReason::RepoUnavailable, e.to_string())),
    }
}

/// A rejection's detail with the toolchain versions a search tried.
fn with_attempts(detail: String, choice: Option<&(Tool, ToolchainChoice)>) -> String {
    match choice {
        Some((_, c)) if !c.attempts.is_empty() => {
            let tried: Vec<String> = c.attempts.iter().map(|a| format!("{} ({})", a.toolchain, a.error)).collect();
            format!("{detail}\ntoolchain versions tried, each failing because of the toolchain: {}", tried.join("; "))
        }
        _ => detail,
    }
}

/// What a failed build may change: the recipe, its toolchain and the toolchain choice, the CI's
/// options and the notes that name them; and the versions the CI tested, which the search prefers.
struct Building<'a> {
    recipe: &'a mut Recipe,
    toolchain: &'a mut Toolchain,
    choice: &'a mut Option<(Tool, ToolchainChoice)>,
    /// What failed builds made validation change so far (`retries.rs`).
    attempts: &'a mut Vec<BuildAttempt>,
    notes: &'a mut Vec<String>,
    ci: &'a mut CiTry,
    tested: Vec<Version>,
}

/// The build file's test target in the recipe's commands that ask for it (`@TEST_TARGET@`), from
/// the detection or, for a recipe an override named, build.xml; what was put, for the notes.
fn test_target(repo: &SourceRepo, inst: &Instance, detection: &Detection, recipe: &mut Recipe) -> Option<String> {
    let wants = |c: &String| c.contains(swe_forge_recipes::TEST_TARGET);
    if !(wants(&recipe.test_command) || recipe.setup.iter().chain(&recipe.layer_setup).any(wants)) {
        return None;
    }
    let (target, why) = detection
        .test_target
        .clone()
        .or_else(|| {
            let build = repo.file_at(&inst.base.sha, "build.xml")?;
            swe_forge_recipes::ant_test_target(&String::from_utf8_lossy(&build)).map(|(t, w)| (t, w.to_owned()))
        })
        .unwrap_or_else(|| ("test".into(), "none found: `test`".into()));
    recipe.use_test_target(&target).then(|| format!("build.xml target `{target}` ({why})"))
}

/// The warning on a record whose image was built by compilers that drop the project's `-Werror`.
fn wrapper_warning(prepared: &Prepared) -> Option<String> {
    let why = wrapper_reason(prepared.choice.as_ref().map(|(_, c)| c));
    let name = &prepared.toolchain.name;
    prepared.toolchain.warnings_not_errors.then(|| Warning::WarningsNotErrors.with(format!("built by {name}: {why}")))
}

/// The versions of the chosen family the CI's matrices name, which the search prefers.
fn tested_of(choice: Option<&(Tool, ToolchainChoice)>, detection: &Detection) -> Vec<Version> {
    choice.map(|(tool, _)| tested_versions(&detection.requests, *tool)).unwrap_or_default()
}

/// `t` for `recipe`, with the variables of the choice's search: the compiler's bigger thread
/// stack once an attempt overflowed it (in `recipe.env`, which goes into the image).
fn with_search_env(t: Toolchain, recipe: &mut Recipe, choice: Option<&(Tool, ToolchainChoice)>) -> Toolchain {
    if let Some((tool, c)) = choice
        && raised_stack(c.attempts.iter().map(|a| a.error.as_str()))
    {
        recipe.env.extend(bigger_stack_env(*tool, &t.env));
    }
    effective_toolchain(t, recipe)
}

/// The recipe of an instance and what decided its toolchain.
pub(crate) struct Resolved {
    pub recipe: Recipe,
    pub toolchain: Toolchain,
    pub detection: Detection,
    /// The toolchain version chosen, for families with several.
    pub choice: Option<(Tool, ToolchainChoice)>,
    /// Where the test command came from and what changed it.
    pub command_notes: Vec<String>,
    /// The CI's build options in use and those tried.
    pub ci: CiTry,
}

/// A patch to check before anything runs, and the rejection when it does not apply.
pub(crate) struct PatchCheck<'a> {
    pub name: &'static str,
    pub patch: &'a str,
    pub not_applying: RejectReason,
}

/// Where an instance's image comes from.
pub(crate) enum ImageSource {
    /// Built, or found under the tag its inputs give.
    Build,
    /// This image, which exists.
    Existing(String),
}

/// What an instance needs before its runs.
pub(crate) struct Prepared {
    pub recipe: Recipe,
    pub toolchain: Toolchain,
    pub detection: Detection,
    /// What the runs start from.
    pub target: RunTarget,
    /// How the image was made, when this step built (or found) it.
    pub built: Option<InstanceImage>,
    pub extras: Vec<crate::ResolvedExtraSource>,
    pub base_tree: String,
    pub choice: Option<(Tool, ToolchainChoice)>,
    pub command_notes: Vec<String>,
    pub ci: CiTry,
    /// jest and vitest: the test files of the tree with the test patch.
    pub suite_files: Option<u64>,
    /// What failed first builds or runs made validation change (`retries.rs`).
    pub attempts: Vec<BuildAttempt>,
}

/// Whether `parser` reads a jest or vitest run (whose suites are counted in test files).
fn is_js_runner(parser: swe_forge_core::Framework) -> bool {
    use swe_forge_core::Framework as F;
    matches!(parser, F::Jest | F::JestJson | F::Vitest | F::VitestJson)
}

/// The jest/vitest test files of the base tree with the test patch applied (files it adds
/// counted, files it deletes not).
fn js_suite_files(repo: &SourceRepo, base: &str, test_patch: &str) -> u64 {
    let mut files: std::collections::BTreeSet<String> = repo.paths_at(base).unwrap_or_default().into_iter().collect();
    for f in swe_forge_core::file_diffs(test_patch) {
        if f.text.lines().any(|l| l.starts_with("deleted file mode")) {
            files.remove(&f.path);
        } else {
            files.insert(f.path);
        }
    }
    files.iter().filter(|p| swe_forge_core::is_js_suite_file(p)).count() as u64
}

/// What every run of an instance starts from: the image, who runs the script, with which
/// variables and network, and how its output is parsed.
pub(crate) struct RunTarget {
    pub image: String,
    pub parsers: Parsers,
    pub user: Option<String>,
    pub network: bool,
    pub env: Vec<String>,
}

impl RunTarget {
    /// The runs a recipe makes in `image`.
    pub(crate) fn of(recipe: &Recipe, parsers: Parsers, image: String) -> RunTarget {
        RunTarget {
            image,
            parsers,
            user: recipe.test_user.clone(),
            network: recipe.network_in_runs,
            env: recipe.run_env.iter().map(|(k, v)| format!("{k}={v}")).collect(),
        }
    }
}

/// One run to make in an instance image.
pub(crate) struct RunRequest {
    pub phase: Phase,
    pub attempt: u32,
    pub label: String,
    pub script: String,
    pub files: Vec<(String, Vec<u8>)>,
    /// The run expected after this one ([`RunSpec::next`]).
    pub next: Next,
}

/// What one run gave: its statuses (by canonical id, and by Multi-SWE-bench name in the
/// repository's naming), and the limits it hit.
pub(crate) struct RunOutcome {
    pub parsed: ParsedLog,
    pub limits: Vec<Rejection>,
    /// A base run (the first) that ran no test and whose log names the toolchain's version.
    pub toolchain_sign: Option<swe_forge_recipes::ToolchainSign>,
    /// What the run tells of an early stop.
    pub facts: RunFacts,
    /// Lines the script itself printed before the test command (`swe-forge: canary …`), from the
    /// head of the log.
    pub notes: Vec<String>,
    /// A first run that reported no test: the system dependency its log shows missing.
    pub missing: Option<swe_forge_recipes::Missing>,
    /// A base run (the first) whose output (its log or a result file) says the suite refuses to
    /// run as root: that line.
    pub root_refusal: Option<String>,
}

/// The line of a run's output (its log, then its result files) that says the suite refuses to run
/// as root.
fn root_refusal(out: &swe_forge_docker::RunOutput) -> Option<String> {
    std::iter::once(&out.log[..])
        .chain(out.files.iter().map(|(_, bytes)| &bytes[..]))
        .find_map(|b| swe_forge_recipes::root_refusal(&String::from_utf8_lossy(b)))
}

/// The `swe-forge: canary …` lines of the first 64 KiB of a run's log.
fn swe_forge_notes(log: &[u8]) -> Vec<String> {
    let head = String::from_utf8_lossy(&log[..log.len().min(64 * 1024)]);
    head.lines().filter(|l| l.starts_with("swe-forge: canary ")).map(str::to_owned).collect()
}

/// The patch whose in-container `git apply` failed, read from the marker line.
fn failed_patch(log: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(&log[log.len().saturating_sub(64 * 1024)..]);
    text.lines().rev().find_map(|l| l.strip_prefix(APPLY_FAILED_MARKER)).map(|p| p.trim().to_owned())
}

/// bash and most runtimes say this when `fork`/`clone` fails against the pids limit.
fn hit_pids_limit(log: &[u8]) -> bool {
    has(log, "fork: retry: Resource temporarily unavailable")
        || has(log, "fork: Resource temporarily unavailable")
        || has(log, "Cannot fork")
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

/// Whether an instance was rejected before any container or image was asked for (its repository,
/// its patches, no recipe): it says nothing about the machine, for the circuit breaker.
pub(crate) fn decided_before_the_engine(inst: &Instance) -> bool {
    inst.swe_forge.as_ref().is_some_and(|m| {
        m.rejections.iter().any(|r| {
            matches!(
                r.reason,
                RejectReason::RepoUnavailable
                    | RejectReason::UnsafePatch
                    | RejectReason::TestPatchDoesNotApply
                    | RejectReason::FixPatchDoesNotApply
                    | RejectReason::UnsupportedEnvironment
            )
        })
    })
}

/// The detail of an instance's infrastructure rejection, if it ended in one.
pub(crate) fn infrastructure_failure(inst: &Instance) -> Option<&str> {
    inst.swe_forge
        .as_ref()?
        .rejections
        .iter()
        .find(|r| r.reason == RejectReason::Infrastructure)
        .map(|r| r.detail.as_str())
}

/// Why an instance was built behind the `-Wno-error` wrapper: the warning that stopped the last
/// compiler before it, the reason an earlier instance's search gave (the choice reused), or an
/// override that named the wrapper's toolchain.
fn wrapper_reason(choice: Option<&ToolchainChoice>) -> &str {
    match choice {
        Some(c) if !c.overridden => c.attempts.last().map_or(c.reason.as_str(), |a| a.error.as_str()),
        _ => "named by an override",
    }
}

/// What a run's parse adds to the record's warnings: the grain the run was read at when it is not
/// the log's (ctest targets as the GoogleTest cases their binaries reported), for the first run
/// of a phase, and results that disagree with the exit code.
fn run_warnings(label: &str, parsed: &ParsedLog, out: &swe_forge_docker::RunOutput, first: bool) -> Vec<String> {
    let grain = parsed.warnings.iter().filter(|w| first && swe_forge_logparse::is_grain_note(w));
    let exit = (!out.timed_out).then(|| swe_forge_logparse::exit_code_consistent(parsed, out.exit_code)).flatten();
    grain.cloned().chain(exit).map(|w| format!("{label} run: {w}")).collect()
}

/// The paths the instance's patches change, the test patch's first.
fn patch_paths(inst: &Instance) -> Vec<String> {
    [&inst.test_patch, &inst.fix_patch]
        .into_iter()
        .flat_map(|p| swe_forge_core::file_diffs(p).into_iter().map(|f| f.path))
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn steps_read_as_phrases() {
        let step = |l: &str| super::Step::Running(l.into()).to_string();
        assert_eq!(
            (step("run"), step("run-2"), step("test"), step("fix-1")),
            ("base run".to_owned(), "base-2 run".to_owned(), "test run".to_owned(), "fix-1 run".to_owned())
        );
        assert_eq!(step("runner"), "runner run");
        // The fix patch with its second hunk left out.
        assert_eq!(step("hunk-2"), "hunk-2 run");
    }

    use super::*;

    /// The decision `validate` takes first, before the repository or an engine: a patch
    /// that changes nothing rejects the instance `no_fixed_tests`, naming the patch.
    #[test]
    fn an_empty_fix_or_test_patch_is_rejected_before_anything_runs() {
        let patch = "diff --git a/x.go b/x.go\n--- a/x.go\n+++ b/x.go\n@@ -1 +1 @@\n-a\n+b\n";
        assert!(empty_patch(patch, patch).is_none());
        for (test, fix, says) in [
            (patch, "", "fix_patch is empty"),
            ("", patch, "test_patch is empty"),
            (patch, " \n\n", "fix_patch is empty"),
            ("just words\n", patch, "test_patch holds no file's diff"),
        ] {
            let r = empty_patch(test, fix).unwrap_or_else(|| panic!("{test:?} {fix:?} passed"));
            assert_eq!(r.reason, RejectReason::NoFixedTests);
            assert!(r.detail.starts_with(says), "{}", r.detail);
        }
    }

    #[test]
    fn the_wrappers_warning_says_why_the_wrapper_was_used() {
        let searched = ToolchainChoice {
            reason: "the C library of the base image".into(),
            attempts: vec![ToolchainAttempt {
                toolchain: "cfamily-bullseye-clang9".into(),
                error: "x [-Werror,-Wextra-semi-stmt]".into(),
            }],
            ..ToolchainChoice::default()
        };
        assert_eq!(wrapper_reason(Some(&searched)), "x [-Werror,-Wextra-semi-stmt]");
        // ccache 335 reused the choice ccache 330's search made: no attempts of its own.
        let reused = ToolchainChoice {
            reason: "found by the search of an earlier instance of o/r".into(),
            ..ToolchainChoice::default()
        };
        assert_eq!(wrapper_reason(Some(&reused)), "found by the search of an earlier instance of o/r");
        let named = ToolchainChoice { overridden: true, ..reused };
        assert_eq!(wrapper_reason(Some(&named)), "named by an override");
        assert_eq!(wrapper_reason(None), "named by an override");
    }
}
