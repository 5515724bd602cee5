//! Evaluation of predictions: a model's patch run against a validated instance, on the same
//! steps and grading as validation. The instance image (found, else built), the model's patch
//! without its changes to tests and test-runner configuration (dropped by
//! `swe_forge_core::test_change_rule`, each named in the evaluation), every file of the test
//! patch put back to the test patch's version, two canary tests (`canary.rs`), the instance's
//! own test command and parsers; resolved when every FAIL_TO_PASS test passes and every
//! PASS_TO_PASS test still passes, `tampered` when the run misreports the canaries or, before
//! anything runs, when the patch's lines forge results or steer the runner
//! (`swe_forge_quality::scan_forgery`; the rules the gold patch's own lines meet are not applied).

use std::path::Path;

use serde::{Deserialize, Serialize};
use swe_forge_core::{
    ALL_TESTS, ForgeMeta, Instance, PatchShape, Phase, PhaseRun, PhaseStatuses, RejectReason, Rejection, RunLogs,
    ValidationStatus, file_diffs, restored_test_files, test_change_rule,
};
use swe_forge_docker::Next;

use crate::Validator;
use crate::validator::Step;

mod canary;
mod evidence;
mod layout;
mod summary;
use canary::{Canary, Check};
use swe_forge_git::SourceRepo;
use swe_forge_logparse::Naming;
use swe_forge_quality::{forgery_exempt, scan_forgery};

use crate::grading::grade::{Parsers, Verdict, grade_prediction, in_naming_of};
use crate::phases::{EVAL_TEST_PATCH, MODEL_PATCH, contract_eval_script, eval_script};
use crate::validator::{ImageSource, PatchCheck, RunRequest, RunTarget};
pub use summary::Summary;

/// Patches larger than this are refused unread.
pub const MAX_PATCH_BYTES: usize = 8 << 20;

/// The label of an evaluation's runs (`eval`, `eval-1`, ...).
pub const EVAL_LABEL: &str = "eval";

/// A model's patch for one instance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Prediction {
    /// The instance (`org__repo-N`).
    pub instance_id: String,
    /// The model (SWE-bench's `model_name_or_path`).
    pub model: String,
    /// The unified diff.
    pub patch: String,
}

/// How an evaluation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Every listed test passes.
    Resolved,
    /// A listed test does not pass.
    Unresolved,
    /// The run did not report the canary tests as they are (the pass canary PASS, the fail one
    /// FAIL) while it reported a FAIL_TO_PASS test passing: its results are not the tests' own.
    /// Also a patch the forgery scan flags (a result line written, a runner flag injected,
    /// `/proc/…/fd` opened), never run.
    Tampered,
    /// The prediction has no patch.
    EmptyPatch,
    /// The patch does not apply to the base commit.
    PatchDoesNotApply,
    /// The patch leaves the repository, touches `.git/`, is binary or too large: never applied.
    UnsafePatch,
    /// The test run did not end within the time limit.
    Timeout,
    /// The engine or the machine failed (after retries), or the instance cannot run here: not a
    /// verdict on the patch.
    Error,
}

impl Outcome {
    /// Every outcome, in report order.
    pub const ALL: [Outcome; 8] = [
        Outcome::Resolved,
        Outcome::Unresolved,
        Outcome::Tampered,
        Outcome::EmptyPatch,
        Outcome::PatchDoesNotApply,
        Outcome::UnsafePatch,
        Outcome::Timeout,
        Outcome::Error,
    ];

    /// The snake_case name used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Resolved => "resolved",
            Outcome::Unresolved => "unresolved",
            Outcome::Tampered => "tampered",
            Outcome::EmptyPatch => "empty_patch",
            Outcome::PatchDoesNotApply => "patch_does_not_apply",
            Outcome::UnsafePatch => "unsafe_patch",
            Outcome::Timeout => "timeout",
            Outcome::Error => "error",
        }
    }
}

/// The per-instance report of one prediction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evaluation {
    /// The instance.
    pub instance_id: String,
    /// The model.
    pub model: String,
    /// How it ended.
    pub outcome: Outcome,
    /// Why, for every outcome but resolved and unresolved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// The listed tests: which passed, which did not, which were flaky (absent when nothing ran).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    /// The image the runs started from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// Every run: exit code, durations, log digest.
    #[serde(default)]
    pub runs: Vec<PhaseRun>,
    /// The runs' logs, relative to the evaluation's output folder.
    pub logs: String,
    /// Files of the patch that were not applied (tests, test-runner configuration), and the
    /// rule that dropped each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dropped_files: Vec<DroppedFile>,
    /// Engine retries and other notes (`canary: not placed (…)` among them).
    #[serde(default)]
    pub warnings: Vec<String>,
    /// Wall time of the whole evaluation (image lookup, patch checks, every run), in ms.
    #[serde(default)]
    pub wall_ms: u64,
}

/// A file of a model's patch that evaluation did not apply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DroppedFile {
    /// The path (for a rename, the one the rule matched).
    pub path: String,
    /// Why: `test file: Go *_test.go`, `test runner configuration: jest configuration`, ...
    pub rule: String,
}

/// `patch` without the files that tests or test-runner configuration (any path a file's diff
/// names, old or new, by `swe_forge_core::test_change_rule`), and those dropped. A patch with
/// nothing to drop is returned as it is.
pub fn drop_test_changes(patch: &str) -> (String, Vec<DroppedFile>) {
    let mut kept = String::new();
    let mut dropped = Vec::new();
    for f in file_diffs(patch) {
        let rule = PatchShape::of(f.text)
            .touched
            .into_iter()
            .chain([f.path.clone()])
            .find_map(|path| test_change_rule(&path, f.text).map(|rule| DroppedFile { path, rule }));
        match rule {
            Some(d) => dropped.push(d),
            None => kept.push_str(f.text),
        }
    }
    if dropped.is_empty() { (patch.to_owned(), dropped) } else { (kept, dropped) }
}

/// Whether `inst` is an instance predictions are evaluated on: accepted by swe-forge, or a
/// published record (no `swe_forge` block: its publisher accepted it) with FAIL_TO_PASS tests.
pub fn evaluable(inst: &Instance) -> bool {
    let accepted = inst.swe_forge.is_none() || inst.status() == ValidationStatus::Accepted;
    accepted && !inst.fixed_tests.is_empty()
}

/// Why a patch is refused before anything reads it as a diff: binary content or its size.
pub fn hostile_patch_reason(patch: &str) -> Option<String> {
    if patch.len() > MAX_PATCH_BYTES {
        return Some(format!("patch of {} bytes is over the limit of {MAX_PATCH_BYTES}", patch.len()));
    }
    if patch.contains('\0') {
        return Some("patch contains NUL bytes".into());
    }
    if patch.lines().any(|l| l == "GIT binary patch" || (l.starts_with("Binary files ") && l.ends_with(" differ"))) {
        return Some("binary patch".into());
    }
    swe_forge_git::unsafe_patch_reason(patch)
}

impl Validator {
    /// Evaluates `pred` on `inst` (a validated record), keeping logs under
    /// `<out_dir>/logs/<model>/<instance_id>/`. Never fails: every problem is an outcome.
    pub async fn evaluate(&self, inst: &Instance, pred: &Prediction, out_dir: &Path) -> Evaluation {
        self.evaluate_with(inst, pred, out_dir, Mode::default()).await
    }

    /// [`Validator::evaluate`], with the image of the evaluation that comes next (`next_image`;
    /// None: no evaluation comes): a container of it is started while this one's last run runs, so
    /// that the next evaluation does not wait for the engine's start.
    pub async fn evaluate_before(
        &self,
        inst: &Instance,
        pred: &Prediction,
        out_dir: &Path,
        next_image: Option<String>,
    ) -> Evaluation {
        let next = next_image.map_or(Next::Nothing, Next::Image);
        self.evaluate_with(inst, pred, out_dir, Mode { next, ..Mode::default() }).await
    }

    /// [`Validator::evaluate`] as `mode` says.
    async fn evaluate_with(&self, inst: &Instance, pred: &Prediction, out_dir: &Path, mode: Mode) -> Evaluation {
        let started = std::time::Instant::now();
        let logs = RunLogs::under(&out_dir.join("logs").join(path_safe(&pred.model)), &inst.instance_id);
        let rel = logs.dir().strip_prefix(out_dir).unwrap_or(logs.dir()).to_string_lossy().into_owned();
        let mut meta = ForgeMeta::new(ValidationStatus::Candidate);
        let mut ev = Evaluation {
            instance_id: inst.instance_id.clone(),
            model: pred.model.clone(),
            outcome: Outcome::Error,
            detail: None,
            verdict: None,
            image: None,
            runs: Vec::new(),
            logs: rel,
            dropped_files: Vec::new(),
            warnings: Vec::new(),
            wall_ms: 0,
        };
        let ended = self.evaluate_steps(inst, pred, &logs, &mut meta, &mut ev, &mode).await;
        if let Err((outcome, detail)) = ended {
            ev.outcome = outcome;
            ev.detail = Some(detail);
        }
        ev.runs = meta.runs;
        ev.warnings = meta.warnings;
        ev.wall_ms = started.elapsed().as_millis() as u64;
        self.reporter.step(&inst.instance_id, Step::Evaluated(ev.outcome.as_str()));
        ev
    }

    async fn evaluate_steps(
        &self,
        inst: &Instance,
        pred: &Prediction,
        logs: &RunLogs,
        meta: &mut ForgeMeta,
        ev: &mut Evaluation,
        mode: &Mode,
    ) -> Result<(), (Outcome, String)> {
        admissible(inst, pred, mode)?;
        let (patch, dropped) = drop_test_changes(&pred.patch);
        ev.dropped_files = dropped;
        forgery_scan(&patch, &inst.fix_patch, &mut meta.warnings)?;
        let pred = &Prediction { patch, ..pred.clone() };
        let test_files = restored_test_files(&inst.test_patch, &inst.fix_patch);
        let (target, prefix) = self.eval_target(inst, pred, meta, &test_files).await?;
        ev.image = Some(target.image.clone());
        let canary = Canary::plan(&target.parsers, &inst.test_patch, inst.fixed_tests.keys());
        let script = prefix(canary.as_ref().map(Canary::script).unwrap_or_default().as_str());
        if let Err(why) = &canary {
            meta.warnings.push(format!("canary: not placed ({why})"));
        }
        let files = vec![
            (MODEL_PATCH.to_owned(), pred.patch.clone().into_bytes()),
            (EVAL_TEST_PATCH.to_owned(), inst.test_patch.clone().into_bytes()),
        ];
        let mut attempts = Vec::new();
        let mut msb_attempts = Vec::new();
        let by_exit_code = inst.swe_forge.as_ref().and_then(|m| m.labels.as_ref()).is_some_and(|l| l.exit_code_graded)
            || inst.fixed_tests.keys().eq([ALL_TESTS]);
        let mut notes = Vec::new();
        let mut timed_out = None;
        for attempt in 0..=self.settings.reruns {
            let request = RunRequest {
                phase: Phase::Fix,
                attempt,
                label: RunLogs::attempt_label(mode.label.as_deref().unwrap_or(EVAL_LABEL), attempt),
                script: script.clone(),
                files: files.clone(),
                // Reruns of this prediction come next on its own image; after the last, what the
                // mode says.
                next: if attempt == self.settings.reruns { mode.next.clone() } else { Next::Same },
            };
            let outcome = self.run_once(&inst.instance_id, &target, &request, logs, meta).await.map_err(outcome_of)?;
            if let Some(t) = outcome.limits.iter().find(|r| r.reason == RejectReason::Timeout) {
                timed_out.get_or_insert(t.detail.clone());
            }
            for r in outcome.limits.iter().filter(|r| r.reason != RejectReason::Timeout) {
                meta.warnings.push(format!("{}: {}", r.reason.as_str(), r.detail));
            }
            if by_exit_code && outcome.parsed.tests.is_empty() {
                // A suite validated by its exit code (no per-test result): so is the prediction.
                // A run whose runner found no test reports nothing, whatever its exit code.
                let one = PhaseStatuses::from([(ALL_TESTS.to_owned(), outcome.facts.exit_code_status())]);
                attempts.push(one.clone());
                msb_attempts.push(one);
            } else {
                attempts.push(outcome.parsed.tests.clone());
                msb_attempts.push(swe_forge_logparse::msb_rollup(&outcome.parsed));
            }
            notes.extend(outcome.notes);
        }
        let check = match &canary {
            Ok(c) => {
                let check = c.check(&notes, &attempts);
                c.strip(&mut attempts);
                c.strip(&mut msb_attempts);
                if let Check::NotPlaced(why) = &check {
                    meta.warnings.push(format!("canary: not placed ({why})"));
                }
                Some(check)
            }
            Err(_) => None,
        };
        // The names the record's lists are in: as a profile says, else whichever naming finds more
        // of the listed tests; on a tie canonical ids for swe-forge's records (they carry a
        // `swe_forge` block), Multi-SWE-bench's names for published ones.
        let attempts = match self.settings.eval_naming {
            Naming::Canonical => attempts,
            Naming::Msb => msb_attempts,
            Naming::Auto => {
                let listed: Vec<&String> = inst.fixed_tests.keys().chain(inst.p2p_tests.keys()).collect();
                in_naming_of(&listed, attempts, msb_attempts, inst.swe_forge.is_none())
            }
        };
        let r = &inst.fix_patch_result;
        let record_ran = r.passed_tests.iter().chain(&r.failed_tests).chain(&r.skipped_tests);
        let verdict = grade_prediction(attempts, inst.fixed_tests.keys(), inst.p2p_tests.keys(), record_ran);
        if let Some((listed, ran)) = verdict.matched.iter().next() {
            meta.warnings.push(format!(
                "{} listed test(s) graded by the test that ran under the same stable id ({listed} as {ran}{})",
                verdict.matched.len(),
                if verdict.matched.len() > 1 { ", …" } else { "" }
            ));
        }
        ev.outcome = final_outcome(&verdict, timed_out, check, &mut ev.detail, &mut meta.warnings);
        ev.verdict = Some(verdict);
        Ok(())
    }
}

/// Whether a prediction can be evaluated at all: it has a patch (unless empty ones run), the
/// patch stays in the repository, and the record is an accepted instance with FAIL_TO_PASS tests.
fn admissible(inst: &Instance, pred: &Prediction, mode: &Mode) -> Result<(), (Outcome, String)> {
    if pred.patch.trim().is_empty() && !mode.run_empty {
        return Err((Outcome::EmptyPatch, "the prediction has no patch".into()));
    }
    if let Some(why) = hostile_patch_reason(&pred.patch) {
        return Err((Outcome::UnsafePatch, why));
    }
    if !evaluable(inst) {
        return Err((
            Outcome::Error,
            "the record is not an accepted instance with FAIL_TO_PASS tests; evaluate validated datasets".into(),
        ));
    }
    Ok(())
}

/// `Tampered` with the findings (the first five, and how many more) when the lines `patch` adds forge test
/// results or steer the runner; the rules that the gold patch (`fix_patch`) meets are not
/// applied (its repository writes such lines for a living: a test tool), said in `warnings`.
fn forgery_scan(patch: &str, fix_patch: &str, warnings: &mut Vec<String>) -> Result<(), (Outcome, String)> {
    let exempt = forgery_exempt(fix_patch);
    if !exempt.is_empty() {
        let names: Vec<&str> = exempt.iter().map(|r| r.as_str()).collect();
        warnings.push(format!("forgery scan: {} not applied (the gold patch's own lines meet them)", names.join(", ")));
    }
    let found = scan_forgery(patch, &exempt);
    if found.is_empty() {
        return Ok(());
    }
    let mut shown: Vec<String> = found.iter().take(5).map(|f| f.to_string()).collect();
    if found.len() > shown.len() {
        shown.push(format!("{} more", found.len() - shown.len()));
    }
    Err((Outcome::Tampered, format!("forgery scan: {}", shown.join("; "))))
}

/// The outcome of a graded prediction, given whether a run timed out and what the canaries said;
/// the timeout or the canaries' finding goes to `detail` or `warnings`.
fn final_outcome(
    verdict: &Verdict,
    timed_out: Option<String>,
    check: Option<Check>,
    detail: &mut Option<String>,
    warnings: &mut Vec<String>,
) -> Outcome {
    match (timed_out, verdict.resolved, check) {
        (Some(t), false, _) => {
            *detail = Some(t);
            Outcome::Timeout
        }
        // A run that claims a FAIL_TO_PASS test passes but cannot tell a failing test from a
        // passing one (or lost the canaries) vouches for nothing.
        (None, _, Some(Check::Wrong(what))) if !verdict.f2p_passed.is_empty() => {
            *detail = Some(format!("canaries: {what}; the run's results are not the tests' own"));
            Outcome::Tampered
        }
        (_, true, _) => Outcome::Resolved,
        (None, false, Some(Check::Wrong(what))) => {
            warnings.push(format!("canaries: {what} (no FAIL_TO_PASS test passed either)"));
            Outcome::Unresolved
        }
        (None, false, _) => Outcome::Unresolved,
    }
}

impl Validator {
    /// What the evaluation runs start from, and their script. The record's image when it exists
    /// here, else pulled from the registry the record names. With the repository at hand, the
    /// recipe is resolved as in validation (the model's patch checked in memory first; a missing
    /// image is built); without it, the image's own contract runs (`/swe-forge/run-tests`,
    /// `schemas/instance-image.md`) with the parsers the record names.
    async fn eval_target(
        &self,
        inst: &Instance,
        pred: &Prediction,
        meta: &mut ForgeMeta,
        test_files: &[String],
    ) -> Result<(RunTarget, ScriptWithCanary), (Outcome, String)> {
        let recorded = inst.swe_forge.as_ref().and_then(|m| m.image.clone());
        let mut have = match &recorded {
            Some(tag) => self.engine.image_id(tag).await.ok().flatten().is_some(),
            None => false,
        };
        if let (false, Some(tag), Some(reference)) =
            (have, &recorded, inst.swe_forge.as_ref().and_then(|m| m.registry_image.as_deref()))
        {
            self.reporter.step(&inst.instance_id, Step::PullingImage);
            let expected = inst.swe_forge.as_ref().and_then(|m| m.image_id.as_deref());
            match self.engine.pull_as(reference, tag, expected).await {
                Ok(_) => have = true,
                Err(e) => meta.warnings.push(format!("pulling {reference}: {e}")),
            }
        }
        // An empty repositories folder means none was given.
        let root = &self.settings.repos_root;
        if !root.as_os_str().is_empty() && SourceRepo::locate(root, &inst.org, &inst.repo).is_ok() {
            let request = match (have, recorded) {
                (true, Some(tag)) => ImageSource::Existing(tag),
                _ => ImageSource::Build,
            };
            let mut scratch = inst.clone();
            let checks = [PatchCheck {
                name: "model_patch",
                patch: &pred.patch,
                not_applying: RejectReason::FixPatchDoesNotApply,
            }];
            let mut attempts = crate::retries::recorded_attempts(inst);
            let prepared =
                self.prepare(&mut scratch, meta, &checks, request, None, &mut attempts).await.map_err(outcome_of)?;
            let (recipe, test_files) = (prepared.recipe, test_files.to_vec());
            return Ok((prepared.target, Box::new(move |canary| eval_script(&recipe, &test_files, canary))));
        }
        let (true, Some(image)) = (have, recorded) else {
            return Err((
                Outcome::Error,
                format!(
                    "no image of {} here or in a registry the record names, and no repository to build it from",
                    inst.instance_id
                ),
            ));
        };
        let parsers = Parsers::of(inst).map_err(|e| (Outcome::Error, e.to_string()))?;
        // The contract script switches to the test user by itself.
        let target = RunTarget { image, parsers, user: None, network: false, env: Vec::new() };
        let test_files = test_files.to_vec();
        Ok((target, Box::new(move |canary| contract_eval_script(&test_files, canary))))
    }
}

/// How one evaluation runs, beyond its prediction.
#[derive(Default)]
struct Mode {
    /// An empty patch runs (a negative control) instead of ending as `empty_patch`.
    run_empty: bool,
    /// The run after this evaluation's last: a container for it is started ahead during that run.
    next: Next,
    /// The runs' label, in their log's name and in progress (default [`EVAL_LABEL`]).
    label: Option<String>,
}

/// An evaluation run's script, given the canary steps to put in it.
type ScriptWithCanary = Box<dyn Fn(&str) -> String + Send + Sync>;

/// `name` as one path component, reversibly: every byte outside `[A-Za-z0-9.-]` (`_` and `%`
/// included) becomes `%XX`, so two different names never share a folder (`org/model` is
/// `org%2Fmodel`, `org_model` is `org%5Fmodel`). A name of dots only has its dots escaped too, and
/// the empty name is `_` (which no other name gives).
fn path_safe(name: &str) -> String {
    if name.is_empty() {
        return "_".into();
    }
    let dots_only = name.bytes().all(|b| b == b'.');
    let mut out = String::with_capacity(name.len());
    for b in name.bytes() {
        if (b.is_ascii_alphanumeric() || b == b'-' || b == b'.') && !(dots_only && b == b'.') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A rejection of the shared steps, as an evaluation outcome.
fn outcome_of(r: Rejection) -> (Outcome, String) {
    let outcome = match r.reason {
        RejectReason::UnsafePatch => Outcome::UnsafePatch,
        RejectReason::FixPatchDoesNotApply => Outcome::PatchDoesNotApply,
        RejectReason::Timeout => Outcome::Timeout,
        _ => Outcome::Error,
    };
    (outcome, format!("{}: {}", r.reason.as_str(), r.detail))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_patches_are_named() {
        assert!(hostile_patch_reason(&"x".repeat(MAX_PATCH_BYTES + 1)).unwrap().contains("over the limit"));
        assert_eq!(hostile_patch_reason("diff --git a/x b/x\n\0").as_deref(), Some("patch contains NUL bytes"));
        let binary = "diff --git a/img.png b/img.png\nnew file mode 100644\nindex 0000000..1111111\nGIT binary patch\nliteral 4\nLcmZ?d00001\n";
        assert_eq!(hostile_patch_reason(binary).as_deref(), Some("binary patch"));
        let out = "diff --git a/../x b/../x\n--- a/../x\n+++ b/../x\n@@ -1 +1 @@\n-a\n+b\n";
        assert!(hostile_patch_reason(out).unwrap().contains("leaves the repository"));
        assert_eq!(hostile_patch_reason("diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"), None);
    }

    #[test]
    fn model_names_become_one_path_component() {
        assert_eq!(path_safe("org/model-7b:v1.2"), "org%2Fmodel-7b%3Av1.2");
        assert_eq!(path_safe(".."), "%2E%2E");
        assert_eq!(path_safe("."), "%2E");
        assert_eq!(path_safe(""), "_");
        assert_eq!(path_safe("gold"), "gold");
        assert_eq!(path_safe("modèle"), "mod%C3%A8le");
        // Names that differ only in `/` and `_` (or in an escape written out) get their own folders.
        let names = ["org/model", "org_model", "org%2Fmodel", "org%5Fmodel", "", "_", "%", ".", "..", "%2E"];
        let folders: std::collections::BTreeSet<String> = names.iter().map(|n| path_safe(n)).collect();
        assert_eq!(folders.len(), names.len(), "{folders:?}");
        for n in names {
            let f = path_safe(n);
            assert!(!f.is_empty() && !f.contains('/') && f != "." && f != "..", "{n:?} -> {f:?}");
        }
    }

    #[test]
    fn changes_to_tests_and_runner_configuration_are_dropped_by_rule() {
        let file =
            |path: &str| format!("diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-a\n+b\n");
        let hack = "diff --git a/zz_hack_test.go b/zz_hack_test.go\nnew file mode 100644\n--- /dev/null\n+++ b/zz_hack_test.go\n@@ -0,0 +1 @@\n+package x\n";
        let renamed = "diff --git a/a_test.go b/a.go\nsimilarity index 100%\nrename from a_test.go\nrename to a.go\n";
        let patch =
            [file("stack.go"), hack.into(), file("jest.config.js"), renamed.into(), file("src/lib.rs")].concat();
        let (kept, dropped) = drop_test_changes(&patch);
        assert_eq!(kept, [file("stack.go"), file("src/lib.rs")].concat());
        let got: Vec<(&str, &str)> = dropped.iter().map(|d| (d.path.as_str(), d.rule.as_str())).collect();
        assert_eq!(
            got,
            [
                ("zz_hack_test.go", "test file: Go *_test.go"),
                ("jest.config.js", "test runner configuration: jest configuration"),
                ("a_test.go", "test file: Go *_test.go"),
            ]
        );
        // Nothing to drop: the patch as it came, byte for byte (prose before the first file too).
        let plain = format!("From the model\n{}", file("stack.go"));
        assert_eq!(drop_test_changes(&plain), (plain.clone(), Vec::new()));
        let json = serde_json::to_value(&dropped[0]).unwrap();
        assert_eq!(json, serde_json::json!({"path": "zz_hack_test.go", "rule": "test file: Go *_test.go"}));
    }

    #[test]
    fn a_patch_that_forges_results_is_tampered_unless_the_gold_patch_does_the_same() {
        let file = |path: &str, line: &str| {
            format!("diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1 +1,2 @@\n a\n+{line}\n")
        };
        let forged = file("x.go", "\tfmt.Println(\"--- PASS: TestX (0.00s)\")");
        let gold = file("y.go", "\tx := 1");
        let mut warnings = Vec::new();
        let (outcome, detail) = forgery_scan(&forged, &gold, &mut warnings).unwrap_err();
        assert_eq!(outcome, Outcome::Tampered);
        assert_eq!(
            detail,
            "forgery scan: x.go:2: writes a test runner's result line (result-framing): fmt.Println(\"--- PASS: TestX (0.00s)\")"
        );
        assert_eq!(warnings, Vec::<String>::new());
        // A test tool's repository: its gold patch prints result lines too; that rule is off.
        let tool = file("report.go", "\tfmt.Printf(\"--- PASS: %s\\n\", name)");
        assert_eq!(forgery_scan(&forged, &tool, &mut warnings), Ok(()));
        assert_eq!(warnings, ["forgery scan: result-framing not applied (the gold patch's own lines meet them)"]);
        assert_eq!(forgery_scan(&gold, &gold, &mut Vec::new()), Ok(()));
    }

    #[test]
    fn outcomes_are_snake_case_in_json() {
        for o in Outcome::ALL {
            assert_eq!(serde_json::to_value(o).unwrap(), o.as_str());
        }
    }
}
