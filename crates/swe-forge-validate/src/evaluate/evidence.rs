//! What an accepted instance is checked with after its three phases, every run through
//! evaluation's own path (logs under `<work_dir>/evidence/`): the gold patch `evidence_runs`
//! times, the empty patch as many times and the test patch alone (`swe_forge.evidence`); tests
//! whose status differs between the gold runs or between the empty-patch runs
//! (`swe_forge.quality.flakiness`, the `flaky` flag); and the fix patch with one hunk left out
//! at a time, at most `hunk_runs` runs (`swe_forge.quality.hunks`, the `untested_hunks` flag).

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use swe_forge_core::{
    Control, Evidence, Flakiness, ForgeMeta, HunkAblation, Instance, QUALITY_VERSION, Quality, QualityFlag, Rejection,
    TestStatus, ValidationStatus, patch_hunks, without_hunk,
};
use swe_forge_docker::Next;

use super::{Evaluation, Mode, Outcome, Prediction};
use crate::Validator;

/// The listed tests of one evaluation and what each did: its status, or None when it was flaky
/// between the evaluation's own reruns. None when the evaluation gave no verdict.
pub(crate) type Listed = BTreeMap<String, Option<TestStatus>>;

pub(crate) fn listed(ev: &Evaluation) -> Option<Listed> {
    // An engine failure says nothing of the tests.
    let v = ev.verdict.as_ref().filter(|_| ev.outcome != Outcome::Error)?;
    let passed = v.f2p_passed.iter().chain(&v.p2p_passed).map(|t| (t.clone(), Some(TestStatus::Pass)));
    let failed = v.f2p_failed.iter().chain(&v.p2p_failed).map(|(t, s)| (t.clone(), Some(*s)));
    Some(passed.chain(failed).chain(v.flaky.keys().map(|t| (t.clone(), None))).collect())
}

/// The tests whose status is not the same in every run (absent from a run counts as a status).
/// With `reported_only`, a run where a test reported nothing (NONE: the binary crashed in a
/// sibling test, the run was cut) does not count: the empty patch's runs fail anyway, and which
/// parallel tests a panic cuts short is timing, not the tests' flakiness.
fn disagreements(runs: &[Listed], reported_only: bool) -> Vec<String> {
    let status = |r: &Listed, n: &String| match r.get(n) {
        Some(Some(TestStatus::None)) | None if reported_only => None,
        other => Some(other.cloned()),
    };
    let names: BTreeSet<&String> = runs.iter().flat_map(|r| r.keys()).collect();
    names
        .into_iter()
        .filter(|n| {
            let seen: Vec<_> = runs.iter().filter_map(|r| status(r, n)).collect();
            seen.iter().any(|s| *s != seen[0])
        })
        .cloned()
        .collect()
}

/// A run of the fix patch without one hunk: whether every FAIL_TO_PASS test still passed (the
/// hunk is untested), None when the run gave no answer (engine failure, misreported canaries).
fn untested(ev: &Evaluation, f2p: usize) -> Option<bool> {
    match ev.outcome {
        // A partial fix that does not apply, or whose run does not end in time, needs the hunk.
        // One that does not build fails its FAIL_TO_PASS tests, and so counts as tested too.
        Outcome::PatchDoesNotApply | Outcome::Timeout => Some(false),
        Outcome::Resolved | Outcome::Unresolved => ev.verdict.as_ref().map(|v| f2p > 0 && v.f2p_passed.len() == f2p),
        _ => None,
    }
}

/// A control's evaluation onto `controls`: several runs of one control are one entry, holding
/// only if every run held. Err with why when it did not run.
fn add_control(controls: &mut Vec<Control>, name: &str, ev: Evaluation) -> Result<(), String> {
    let (f2p_passed, resolved) = match (ev.outcome, ev.verdict) {
        (Outcome::Resolved | Outcome::Unresolved | Outcome::Tampered, Some(v)) => {
            (v.f2p_passed, ev.outcome == Outcome::Resolved)
        }
        // A prediction that cannot be applied gains nothing: the control holds.
        (Outcome::PatchDoesNotApply, _) => (Vec::new(), false),
        (outcome, _) => return Err(format!("{} {}", outcome.as_str(), ev.detail.unwrap_or_default())),
    };
    match controls.iter_mut().find(|c| c.name == name) {
        Some(c) => {
            c.f2p_passed.extend(f2p_passed);
            c.f2p_passed.sort();
            c.f2p_passed.dedup();
            c.resolved |= resolved;
        }
        None => controls.push(Control { name: name.to_owned(), f2p_passed, resolved }),
    }
    Ok(())
}

/// The record's quality block, made when it has none.
fn quality(meta: &mut ForgeMeta) -> &mut Quality {
    meta.quality.get_or_insert_with(|| Quality { version: QUALITY_VERSION, ..Quality::default() })
}

fn set_flag(q: &mut Quality, flag: QualityFlag, raised: bool) {
    if raised { q.raise(flag) } else { q.lower(flag) }
}

/// `inst` as evaluation takes it: with `meta` as its block, accepted.
pub(crate) fn accepted(inst: &Instance, meta: &ForgeMeta) -> Instance {
    let mut accepted = inst.clone();
    let mut m = meta.clone();
    m.status = ValidationStatus::Accepted;
    accepted.swe_forge = Some(m);
    accepted
}

fn prediction(inst: &Instance, model: String, patch: &str) -> Prediction {
    Prediction { instance_id: inst.instance_id.clone(), model, patch: patch.to_owned() }
}

impl Validator {
    /// The runs of an instance validation just accepted (`inst` with its lists, `meta` its block
    /// so far): the gold runs (`evidence_runs` > 0), the layout variants (`layout_variants` > 0),
    /// which compare with the gold runs and may take tests out of `inst`'s lists, the negative
    /// controls, then the hunk runs (`hunk_runs` > 0). The rejection when the layout variants
    /// leave no FAIL_TO_PASS test (nothing runs after them then).
    pub(crate) async fn gather_evidence(&self, inst: &mut Instance, meta: &mut ForgeMeta) -> Option<Rejection> {
        let hunk_runs = self.hunk_plan(&inst.fix_patch);
        let k = self.settings.evidence_runs;
        let gold = if k > 0 { self.gold_runs(&accepted(inst, meta), meta).await } else { Vec::new() };
        if self.settings.layout_variants > 0 {
            let last = k == 0 && hunk_runs == 0;
            if let Some(r) = self.layout_runs(inst, meta, &gold, last).await {
                return Some(r);
            }
        }
        let accepted = accepted(inst, meta);
        if k > 0 {
            self.controls(&accepted, meta, hunk_runs > 0, &gold).await;
        }
        if hunk_runs > 0 {
            self.hunk_runs(&accepted, meta, hunk_runs).await;
        }
        None
    }

    /// How many hunk runs `fix_patch` gets: one per hunk of shipped code
    /// ([`swe_forge_quality::code_hunks`]) up to `hunk_runs`; none with fewer than two (leaving
    /// out the only one is the empty-patch control).
    pub(crate) fn hunk_plan(&self, fix_patch: &str) -> usize {
        let hunks = swe_forge_quality::code_hunks(fix_patch).len();
        if hunks < 2 { 0 } else { hunks.min(self.settings.hunk_runs as usize) }
    }

    /// The gold patch `evidence_runs` times through evaluation (each must resolve), onto
    /// `meta.evidence`; what each run said of the listed tests.
    pub(crate) async fn gold_runs(&self, accepted: &Instance, meta: &mut ForgeMeta) -> Vec<Listed> {
        let out = self.settings.work_dir.join("evidence");
        let mut evidence = meta.evidence.take().unwrap_or_default();
        let mut gold = Vec::new();
        for i in 1..=self.settings.evidence_runs {
            let pred = prediction(accepted, format!("gold-{i}"), &accepted.fix_patch);
            let ev = self.evaluate_with(accepted, &pred, &out, Mode::default()).await;
            gold.extend(listed(&ev));
            gold_run(&mut evidence, meta, i, ev);
        }
        meta.evidence = Some(evidence);
        gold
    }

    /// The negative controls after the gold runs (`gold`): the empty patch `evidence_runs` times
    /// and the test patch as the prediction once (neither may resolve or pass a FAIL_TO_PASS
    /// test). A control that could not run (engine, timeout) is left out: the evidence is then
    /// incomplete. With two runs or more, the listed tests whose status differs between the gold
    /// runs, or between the empty-patch runs, are the flakiness.
    async fn controls(&self, accepted: &Instance, meta: &mut ForgeMeta, more: bool, gold: &[Listed]) {
        let out = self.settings.work_dir.join("evidence");
        let k = self.settings.evidence_runs;
        let mut evidence = meta.evidence.take().unwrap_or_default();
        let mut empty = Vec::new();
        let controls = (1..=k).map(|i| ("empty_patch", i, "")).chain([("test_patch_alone", 1, &*accepted.test_patch)]);
        for (name, i, patch) in controls {
            let model = if i == 1 { name.to_owned() } else { format!("{name}-{i}") };
            // The instance's last run is the last control's, unless hunk runs follow.
            let last = name == "test_patch_alone" && !more;
            let mode = Mode { run_empty: true, next: if last { Next::Nothing } else { Next::Same }, label: None };
            let ev = self.evaluate_with(accepted, &prediction(accepted, model, patch), &out, mode).await;
            if name == "empty_patch" {
                empty.extend(listed(&ev));
            }
            if let Err(why) = add_control(&mut evidence.controls, name, ev) {
                meta.warnings.push(format!("evidence: the {name} control did not run: {why}"));
            }
        }
        meta.evidence = Some(evidence);
        if k >= 2 {
            let f = Flakiness {
                runs: k,
                gold_disagreements: disagreements(gold, false),
                empty_disagreements: disagreements(&empty, true),
            };
            let q = quality(meta);
            set_flag(q, QualityFlag::Flaky, !(f.gold_disagreements.is_empty() && f.empty_disagreements.is_empty()));
            q.flakiness = Some(f);
        }
    }

    /// The fix patch with one hunk of code left out, for its first `runs` such hunks: a hunk without which
    /// every FAIL_TO_PASS test still passes is untested. Skipped when the gold patch never
    /// resolved through evaluation (every hunk would read tested).
    async fn hunk_runs(&self, accepted: &Instance, meta: &mut ForgeMeta, runs: usize) {
        if meta.evidence.as_ref().is_some_and(|e| e.gold_runs > 0 && e.gold_resolved == 0) {
            meta.warnings.push("hunk runs: skipped, the gold patch never resolved through evaluation".into());
            return;
        }
        let out = self.settings.work_dir.join("evidence");
        let started = Instant::now();
        let hunks = patch_hunks(&accepted.fix_patch);
        let code = swe_forge_quality::code_hunks(&accepted.fix_patch);
        let mut ablation = HunkAblation {
            hunks: hunks.len() as u32,
            not_code: (hunks.len() - code.len()) as u32,
            ..HunkAblation::default()
        };
        for (run, &i) in code.iter().enumerate().take(runs) {
            let (Some(hunk), Some(patch)) = (hunks.get(i), without_hunk(&accepted.fix_patch, i)) else { continue };
            let label = format!("hunk-{}", i + 1);
            let next = if run + 1 == runs { Next::Nothing } else { Next::Same };
            let mode = Mode { run_empty: true, next, label: Some(label.clone()) };
            let ev = self.evaluate_with(accepted, &prediction(accepted, label, &patch), &out, mode).await;
            match untested(&ev, accepted.fixed_tests.len()) {
                Some(untested) => {
                    ablation.tried += 1;
                    if untested {
                        ablation.untested.push(hunk.name());
                    }
                }
                None => meta.warnings.push(format!(
                    "hunk runs: the run without {} gave no answer: {} {}",
                    hunk.name(),
                    ev.outcome.as_str(),
                    ev.detail.unwrap_or_default()
                )),
            }
        }
        if ablation.tried > 0 {
            ablation.untested_share = ablation.untested.len() as f64 / f64::from(ablation.tried);
        }
        ablation.seconds = (started.elapsed().as_secs_f64() * 10.0).round() / 10.0;
        let q = quality(meta);
        set_flag(q, QualityFlag::UntestedHunks, !ablation.untested.is_empty());
        q.hunks = Some(ablation);
    }
}

/// One gold run onto the evidence; a run that did not resolve is a warning saying why.
fn gold_run(evidence: &mut Evidence, meta: &mut ForgeMeta, k: u32, ev: Evaluation) {
    evidence.gold_runs += 1;
    if ev.outcome == Outcome::Resolved {
        evidence.gold_resolved += 1;
        return;
    }
    meta.warnings.push(format!(
        "evidence: gold run {k} through evaluation: {} {}",
        ev.outcome.as_str(),
        ev.detail
            .or_else(|| ev.verdict.map(|v| format!(
                "FAIL_TO_PASS not passing: {:?}; PASS_TO_PASS not passing: {:?}",
                v.f2p_failed, v.p2p_failed
            )))
            .unwrap_or_default()
    ));
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::grading::grade::Verdict;

    /// An evaluation that ended as `outcome` with `verdict` (the layout runs' tests use it too).
    pub(crate) fn ev(outcome: Outcome, verdict: Option<Verdict>) -> Evaluation {
        Evaluation {
            instance_id: "o__r-1".into(),
            model: "m".into(),
            outcome,
            detail: None,
            verdict,
            image: None,
            runs: Vec::new(),
            logs: String::new(),
            dropped_files: Vec::new(),
            warnings: Vec::new(),
            wall_ms: 0,
        }
    }

    fn verdict(f2p_passed: &[&str], f2p_failed: &[&str]) -> Verdict {
        Verdict {
            f2p_passed: f2p_passed.iter().map(|t| t.to_string()).collect(),
            f2p_failed: f2p_failed.iter().map(|t| (t.to_string(), TestStatus::Fail)).collect(),
            p2p_passed: vec!["p".into()],
            ..Verdict::default()
        }
    }

    #[test]
    fn tests_whose_status_differs_between_runs_disagree() {
        let runs: Vec<Listed> = [verdict(&["a", "b"], &[]), verdict(&["a"], &["b"]), verdict(&["a", "b"], &[])]
            .into_iter()
            .filter_map(|v| listed(&ev(Outcome::Unresolved, Some(v))))
            .collect();
        assert_eq!(disagreements(&runs, false), ["b"]);
        assert!(disagreements(&runs[..1], false).is_empty() && disagreements(&[], false).is_empty());
        // A test a crash cut short (NONE) disagrees among gold runs, not among empty-patch runs;
        // PASS against FAIL disagrees in both (mapstructure-68: a panic in one parallel test).
        let mut cut = verdict(&["a"], &[]);
        cut.f2p_failed.insert("b".into(), TestStatus::None);
        let cut = listed(&ev(Outcome::Unresolved, Some(cut))).unwrap();
        let both = [runs[0].clone(), cut.clone()];
        assert_eq!((disagreements(&both, false), disagreements(&both, true)), (vec!["b".to_owned()], vec![]));
        assert_eq!(disagreements(&[runs[1].clone(), cut, runs[0].clone()], true), ["b"]);
        // Flaky within one evaluation's reruns is a status of its own; an engine failure is no run.
        let mut flaky = verdict(&["a"], &[]);
        flaky.flaky.insert("b".into(), 0.5);
        let with_flaky = [runs[0].clone(), listed(&ev(Outcome::Unresolved, Some(flaky))).unwrap()];
        assert_eq!(disagreements(&with_flaky, true), ["b"]);
        assert_eq!(listed(&ev(Outcome::Error, Some(verdict(&[], &["a"])))), None);
    }

    #[test]
    fn a_hunk_is_untested_when_every_fail_to_pass_test_passes_without_it() {
        assert_eq!(untested(&ev(Outcome::Resolved, Some(verdict(&["a", "b"], &[]))), 2), Some(true));
        assert_eq!(untested(&ev(Outcome::Unresolved, Some(verdict(&["a"], &["b"]))), 2), Some(false));
        // A partial fix that does not apply or does not end needs the hunk; an engine failure tells nothing.
        assert_eq!(untested(&ev(Outcome::PatchDoesNotApply, None), 2), Some(false));
        assert_eq!(untested(&ev(Outcome::Timeout, None), 2), Some(false));
        assert_eq!(untested(&ev(Outcome::Error, None), 2), None);
        assert_eq!(untested(&ev(Outcome::Tampered, Some(verdict(&["a", "b"], &[]))), 2), None);
    }

    #[test]
    fn runs_of_one_control_are_one_entry_that_holds_only_if_each_run_held() {
        let mut controls = Vec::new();
        add_control(&mut controls, "empty_patch", ev(Outcome::Unresolved, Some(verdict(&[], &["a"])))).unwrap();
        add_control(&mut controls, "empty_patch", ev(Outcome::Unresolved, Some(verdict(&["a"], &[])))).unwrap();
        add_control(&mut controls, "test_patch_alone", ev(Outcome::PatchDoesNotApply, None)).unwrap();
        assert!(add_control(&mut controls, "empty_patch", ev(Outcome::Error, None)).unwrap_err().starts_with("error"));
        assert_eq!(
            controls,
            [
                Control { name: "empty_patch".into(), f2p_passed: vec!["a".into()], resolved: false },
                Control { name: "test_patch_alone".into(), f2p_passed: Vec::new(), resolved: false },
            ]
        );
    }
}
