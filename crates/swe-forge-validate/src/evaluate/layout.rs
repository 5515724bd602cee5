//! Layout evidence: an accepted instance's gold patch laid out otherwise
//! ([`swe_forge_core::LayoutVariant`]: a blank line before the first change of each code file,
//! hunks placed by their context a few lines off), each graded as a prediction through
//! evaluation's own path. A listed test that passed with the gold patch through that same path and
//! is missing or fails under a variant depends on where the fix puts its lines, so a correct fix laid out otherwise
//! would fail it: it leaves FAIL_TO_PASS and PASS_TO_PASS (`swe_forge.labels.unstable`), and an
//! instance left without FAIL_TO_PASS is rejected `unstable_tests`. What each variant did is
//! `swe_forge.evidence.layout`.

use std::collections::{BTreeMap, BTreeSet};

use swe_forge_core::{ForgeMeta, Instance, LayoutRun, LayoutVariant, RejectReason, Rejection, TestStatus};
use swe_forge_docker::Next;

use super::evidence::{Listed, accepted, listed};
use super::{Evaluation, Mode, Outcome, Prediction};
use crate::Validator;

/// What one variant's evaluation says: the listed tests that did not pass under it (with the
/// status seen), or why it gave no verdict.
fn unstable_in(ev: &Evaluation) -> Result<BTreeMap<String, TestStatus>, String> {
    match (ev.outcome, &ev.verdict) {
        (Outcome::Resolved | Outcome::Unresolved, Some(v)) => {
            Ok(v.f2p_failed.iter().chain(&v.p2p_failed).map(|(t, s)| (t.clone(), *s)).collect())
        }
        (outcome, _) => {
            Err(format!("{} {}", outcome.as_str(), ev.detail.clone().unwrap_or_default()).trim().to_owned())
        }
    }
}

/// `unstable` (test id -> the variant and the status it saw there) taken out of the record's
/// lists; the rejection when no FAIL_TO_PASS test is left.
pub(crate) fn leave_out(inst: &mut Instance, unstable: &BTreeMap<String, String>) -> Option<Rejection> {
    if unstable.is_empty() {
        return None;
    }
    let had = inst.fixed_tests.len();
    for map in
        [&mut inst.fixed_tests, &mut inst.f2p_tests, &mut inst.s2p_tests, &mut inst.n2p_tests, &mut inst.p2p_tests]
    {
        map.retain(|id, _| !unstable.contains_key(id));
    }
    if !inst.fixed_tests.is_empty() {
        return None;
    }
    let mut names: Vec<String> = unstable.iter().take(5).map(|(id, why)| format!("{id} ({why})")).collect();
    if unstable.len() > names.len() {
        names.push("…".into());
    }
    Some(Rejection::new(
        RejectReason::UnstableTests,
        format!(
            "all {had} FAIL_TO_PASS tests depend on the gold patch's layout (missing or failing under a layout variant): {}",
            names.join(", ")
        ),
    ))
}

/// The listed tests that passed in every gold run (`gold`: what each said of them).
fn passed_in_every(gold: &[Listed]) -> BTreeSet<String> {
    let Some((first, rest)) = gold.split_first() else { return BTreeSet::new() };
    let passed = |l: &Listed, t: &String| l.get(t) == Some(&Some(TestStatus::Pass));
    first.keys().filter(|t| passed(first, t) && rest.iter().all(|l| passed(l, t))).cloned().collect()
}

impl Validator {
    /// The first `layout_variants` layout variants of an accepted instance's fix patch, each
    /// graded as a prediction and compared with the gold patch through the same path (`gold`:
    /// the evidence's gold runs; one more gold run here when there are none). A listed test that
    /// passed in every gold run and not under a variant is unstable: it leaves `inst`'s lists
    /// (and is named in `meta.labels.unstable`); the rejection when none of FAIL_TO_PASS is
    /// left. A test the gold patch itself does not pass through evaluation says nothing of the
    /// layout (the evidence says why). `last` says no run follows these (the image may go).
    pub(crate) async fn layout_runs(
        &self,
        inst: &mut Instance,
        meta: &mut ForgeMeta,
        gold: &[Listed],
        last: bool,
    ) -> Option<Rejection> {
        let code = |path: &str| swe_forge_quality::is_shipped_code(path);
        let variants: Vec<(LayoutVariant, String)> = LayoutVariant::ALL
            .into_iter()
            .take(self.settings.layout_variants as usize)
            .filter_map(|v| Some((v, v.apply(&inst.fix_patch, &code)?)))
            .collect();
        if variants.is_empty() {
            return None;
        }
        let accepted = accepted(inst, meta);
        let out = self.settings.work_dir.join("evidence");
        let run = |label: String, patch: String, next: Next| {
            let pred = Prediction { instance_id: inst.instance_id.clone(), model: label.clone(), patch };
            let mode = Mode { run_empty: false, next, label: Some(label) };
            let accepted = &accepted;
            let out = &out;
            async move { self.evaluate_with(accepted, &pred, out, mode).await }
        };
        let own_gold: Vec<Listed>;
        let gold = if gold.is_empty() {
            own_gold =
                listed(&run("layout-gold".into(), inst.fix_patch.clone(), Next::Same).await).into_iter().collect();
            &own_gold[..]
        } else {
            gold
        };
        let passed = passed_in_every(gold);
        let mut runs = Vec::new();
        let mut unstable: BTreeMap<String, String> = BTreeMap::new();
        for (i, (variant, patch)) in variants.iter().enumerate() {
            let next = if last && i + 1 == variants.len() { Next::Nothing } else { Next::Same };
            let ev = run(format!("layout-{}", variant.as_str()), patch.clone(), next).await;
            let name = variant.as_str().to_owned();
            match unstable_in(&ev) {
                Ok(failed) => {
                    let failed: Vec<(String, TestStatus)> =
                        failed.into_iter().filter(|(t, _)| passed.contains(t)).collect();
                    for (id, status) in &failed {
                        unstable.entry(id.clone()).or_insert_with(|| format!("{name}: {}", status.as_str()));
                    }
                    let unstable = failed.into_iter().map(|(t, _)| t).collect();
                    runs.push(LayoutRun { variant: name, held: true, unstable, detail: None });
                }
                Err(why) => {
                    meta.warnings.push(format!("layout: the {name} variant gave no verdict: {why}"));
                    runs.push(LayoutRun { variant: name, held: false, unstable: Vec::new(), detail: Some(why) });
                }
            }
        }
        let rejection = leave_out(inst, &unstable);
        if let Some(labels) = meta.labels.as_mut() {
            labels.unstable.extend(unstable);
        }
        meta.evidence.get_or_insert_with(Default::default).layout = runs;
        rejection
    }
}

#[cfg(test)]
mod tests {
    use super::super::evidence::tests::ev;
    use super::*;
    use crate::grading::grade::Verdict;
    use swe_forge_core::Transition;

    #[test]
    fn a_listed_test_that_did_not_pass_under_a_variant_is_unstable() {
        let v = Verdict {
            f2p_passed: vec!["a".into()],
            f2p_failed: [("doc (line 12)".to_owned(), TestStatus::None)].into(),
            p2p_failed: [("p".to_owned(), TestStatus::Fail)].into(),
            ..Verdict::default()
        };
        let got = unstable_in(&ev(Outcome::Unresolved, Some(v))).unwrap();
        assert_eq!(
            got.into_iter().collect::<Vec<_>>(),
            [("doc (line 12)".into(), TestStatus::None), ("p".into(), TestStatus::Fail)]
        );
        assert!(unstable_in(&ev(Outcome::Resolved, Some(Verdict::default()))).unwrap().is_empty());
        // No verdict: a variant that does not apply or does not end says nothing of the tests.
        assert_eq!(unstable_in(&ev(Outcome::PatchDoesNotApply, None)).unwrap_err(), "patch_does_not_apply");
        assert!(unstable_in(&ev(Outcome::Error, None)).is_err());
    }

    #[test]
    fn only_tests_every_gold_run_passed_can_be_unstable() {
        let l = |items: &[(&str, Option<TestStatus>)]| -> Listed {
            items.iter().map(|(t, s)| ((*t).to_owned(), *s)).collect()
        };
        let pass = Some(TestStatus::Pass);
        let gold = [
            l(&[("a", pass), ("b", pass), ("c", Some(TestStatus::None)), ("f", None)]),
            l(&[("a", pass), ("b", Some(TestStatus::Fail)), ("c", Some(TestStatus::None)), ("f", pass)]),
        ];
        assert_eq!(passed_in_every(&gold).into_iter().collect::<Vec<_>>(), ["a"]);
        assert!(passed_in_every(&[]).is_empty());
    }

    #[test]
    fn unstable_tests_leave_every_list_and_an_instance_without_fail_to_pass_is_rejected() {
        let t = Transition { run: TestStatus::Fail, test: TestStatus::Fail, fix: TestStatus::Pass };
        let p = Transition { run: TestStatus::Pass, test: TestStatus::Pass, fix: TestStatus::Pass };
        let mut inst = swe_forge_test_support::record("o", "r", 1);
        inst.fixed_tests = [("a".to_owned(), t), ("d".to_owned(), t)].into();
        inst.f2p_tests = inst.fixed_tests.clone();
        inst.p2p_tests = [("p".to_owned(), p), ("q".to_owned(), p)].into();
        let unstable: BTreeMap<String, String> =
            [("d".to_owned(), "blank_line: NONE".to_owned()), ("p".to_owned(), "blank_line: FAIL".to_owned())].into();
        assert_eq!(leave_out(&mut inst, &unstable), None);
        assert_eq!(inst.fixed_tests.keys().collect::<Vec<_>>(), ["a"]);
        assert_eq!(inst.f2p_tests.keys().collect::<Vec<_>>(), ["a"]);
        assert_eq!(inst.p2p_tests.keys().collect::<Vec<_>>(), ["q"]);
        let all: BTreeMap<String, String> = [("a".to_owned(), "offset_hunks: FAIL".to_owned())].into();
        let r = leave_out(&mut inst, &all).unwrap();
        assert_eq!(r.reason, RejectReason::UnstableTests);
        assert!(r.detail.contains("a (offset_hunks: FAIL)"), "{}", r.detail);
        assert_eq!(leave_out(&mut inst, &BTreeMap::new()), None);
    }
}
