//! The first screen of an instance: each quality signal with its evidence, the evidence block
//! (the gold patch k of k, the negative controls), the warnings a reviewer must weigh (time bomb,
//! truncated run, graded by exit code) and the links to the upstream pull request and issues.
//! Everything here is data; the page writes it as text, never as HTML.

use serde_json::{Value, json};
use swe_forge_core::{Evidence, Instance, Quality, QualityFlag, Warning};

/// The overview of `inst`, as the page shows it above the tests.
pub(crate) fn overview(inst: &Instance) -> Value {
    let meta = inst.swe_forge.as_ref();
    json!({
        "links": links(inst),
        "signals": meta.and_then(|m| m.quality.as_ref()).map(signals),
        "flags": meta.and_then(|m| m.quality.as_ref()).map_or_else(Vec::new, |q| q.flags.iter().map(|f| f.as_str()).collect()),
        "evidence": meta.and_then(|m| Some(evidence(m.evidence.as_ref()?, unstable(m)))),
        "warnings": warnings(inst),
    })
}

/// The upstream pull request and the issues it resolves.
fn links(inst: &Instance) -> Value {
    let base = format!("https://github.com/{}/{}", inst.org, inst.repo);
    json!({
        "pr": { "text": format!("{}/{}#{}", inst.org, inst.repo, inst.number), "url": format!("{base}/pull/{}", inst.number) },
        "issues": inst.resolved_issues.iter().map(|i| json!({
            "text": format!("#{} {}", i.number, i.title),
            "url": format!("{base}/issues/{}", i.number),
        })).collect::<Vec<_>>(),
    })
}

/// One row per signal, in [`QualityFlag::ALL`] order: raised or not, a summary and its evidence.
fn signals(q: &Quality) -> Vec<Value> {
    QualityFlag::ALL
        .into_iter()
        .map(|flag| {
            let (summary, details) = signal(q, flag);
            json!({
                "flag": flag.as_str(),
                "meaning": flag.meaning(),
                "state": if q.has(flag) { "raised" } else if summary.is_some() { "clear" } else { "not computed" },
                "summary": summary.unwrap_or_default(),
                "details": details,
            })
        })
        .collect()
}

/// A signal's summary (None when it was not computed) and its evidence lines.
fn signal(q: &Quality, flag: QualityFlag) -> (Option<String>, Vec<String>) {
    match flag {
        // Computed with the other text signals: leakage present means this one ran too.
        QualityFlag::NoIssueText => match (&q.leakage, q.has(flag)) {
            (None, false) => (None, Vec::new()),
            (_, true) => {
                (Some("no issue text and no pull request body: a solver has only the title".into()), Vec::new())
            }
            (_, false) => (Some("the issue or the pull request says what is wrong".into()), Vec::new()),
        },
        QualityFlag::SolutionLeak => match &q.leakage {
            Some(l) => (
                Some(format!(
                    "{} of {} added lines of the fix are in the issue text (score {:.2}, flagged from {:.2})",
                    l.matched_lines.len(),
                    l.added_lines,
                    l.score,
                    l.threshold
                )),
                l.matched_lines.clone(),
            ),
            None => (None, Vec::new()),
        },
        QualityFlag::UnnamedIdentifiers => match (&q.leakage, q.unnamed_identifiers.is_empty()) {
            // The text signals are computed together: leakage present means this one ran too.
            (None, true) => (None, Vec::new()),
            (_, true) => {
                (Some("every identifier the tests need from the fix is named in the issue".into()), Vec::new())
            }
            (_, false) => (
                Some(format!(
                    "{} identifier(s) the fix introduces and the tests use are never named in the issue",
                    q.unnamed_identifiers.len()
                )),
                q.unnamed_identifiers.iter().map(|u| format!("{} ({}, {})", u.name, u.kind, u.file)).collect(),
            ),
        },
        QualityFlag::Unspecific => match &q.specificity {
            Some(s) => {
                let mut details: Vec<String> = Vec::new();
                details.extend(s.files.iter().map(|f| format!("file {f}")));
                details.extend(s.symbols.iter().map(|x| format!("symbol {x}")));
                details.extend(s.messages.iter().map(|m| format!("message \"{m}\"")));
                if s.reproduction {
                    details.push("a reproduction (code block, command or stack trace)".into());
                }
                let summary = if s.specific() {
                    "the issue names what the fix touches".to_owned()
                } else {
                    "the issue names no file, symbol or message the fix touches and shows no reproduction".to_owned()
                };
                (Some(summary), details)
            }
            None => (None, Vec::new()),
        },
        QualityFlag::UntestedHunks => match &q.hunks {
            Some(h) => (
                Some(format!(
                    "{} of {} hunks left out one at a time ({} in the fix) kept every FAIL_TO_PASS test passing; the runs took {:.0} s",
                    h.untested.len(),
                    h.tried,
                    h.hunks,
                    h.seconds
                )),
                h.untested.clone(),
            ),
            None => (None, Vec::new()),
        },
        QualityFlag::Flaky => match &q.flakiness {
            Some(f) => {
                let mut details: Vec<String> = f.gold_disagreements.iter().map(|t| format!("gold: {t}")).collect();
                details.extend(f.empty_disagreements.iter().map(|t| format!("empty patch: {t}")));
                let summary = if details.is_empty() {
                    format!("the gold and the empty patch each ran {} times and agreed with themselves", f.runs)
                } else {
                    format!("{} test(s) changed status over {} runs", details.len(), f.runs)
                };
                (Some(summary), details)
            }
            None => (None, Vec::new()),
        },
    }
}

/// The tests layout variants took out of the lists, each with the variant and what it saw.
fn unstable(meta: &swe_forge_core::ForgeMeta) -> Vec<String> {
    let labels = meta.labels.as_ref().map(|l| &l.unstable);
    labels.into_iter().flatten().map(|(id, why)| format!("{id} ({why})")).collect()
}

/// The evidence block: the gold patch through evaluation, its layout variants, the negative
/// controls; `unstable` are the tests the variants took out of the lists (with what they saw).
fn evidence(e: &Evidence, unstable: Vec<String>) -> Value {
    let (held, graded) = e.layout_held();
    json!({
        "layout": e.layout.iter().map(|l| json!({
            "variant": l.variant,
            "held": l.held,
            "unstable": l.unstable,
            "detail": l.detail,
        })).collect::<Vec<_>>(),
        "layout_held": format!("{held}/{graded}"),
        "unstable": unstable,
        "gold": format!("{}/{}", e.gold_resolved, e.gold_runs),
        "gold_runs": e.gold_runs,
        "gold_resolved": e.gold_resolved,
        "complete": e.complete(),
        "controls": e.controls.iter().map(|c| json!({
            "name": c.name,
            "held": !c.resolved && c.f2p_passed.is_empty(),
            "resolved": c.resolved,
            "f2p_passed": c.f2p_passed,
        })).collect::<Vec<_>>(),
        "network": e.network,
    })
}

/// The warnings a reviewer must weigh, each with its kind (`time_bomb`, `truncated`,
/// `exit_code_graded`, `no_tests_ran` or `warning`), time bombs and run-shape warnings first.
fn warnings(inst: &Instance) -> Vec<Value> {
    let Some(meta) = inst.swe_forge.as_ref() else { return Vec::new() };
    let mut out = Vec::new();
    for w in meta.warnings.iter().filter(|w| Warning::TimeBomb.on(std::slice::from_ref(w))) {
        let text = w.strip_prefix(Warning::TimeBomb.prefix()).map_or(w.as_str(), |t| t.trim_start_matches(": "));
        out.push(json!({ "kind": "time_bomb", "text": text }));
    }
    if let Some(labels) = &meta.labels {
        for t in &labels.truncated {
            let mut text = format!(
                "the {} run reported {} tests, {} fewer than the others ({}{})",
                t.phase.as_str(),
                t.reported,
                t.missing,
                t.cause.as_str(),
                if t.tolerated { ", tolerated" } else { "" }
            );
            if !t.evidence.is_empty() {
                text += &format!(": {}", t.evidence);
            }
            out.push(json!({ "kind": "truncated", "text": text }));
        }
        if labels.exit_code_graded {
            out.push(json!({
                "kind": "exit_code_graded",
                "text": "no run printed a per-test result: each phase is one test, graded by the test command's exit code",
            }));
        }
        for (phase, line) in &labels.no_tests_ran {
            out.push(
                json!({ "kind": "no_tests_ran", "text": format!("the {} run found no test: {line}", phase.as_str()) }),
            );
        }
    }
    for w in meta.warnings.iter().filter(|w| !Warning::TimeBomb.on(std::slice::from_ref(w))) {
        out.push(json!({ "kind": "warning", "text": w }));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use swe_forge_core::{
        Control, ForgeMeta, HunkAblation, Labels, LayoutRun, Leakage, Phase, Specificity, Truncation, TruncationCause,
        UnnamedIdentifier, ValidationStatus,
    };

    fn flagged() -> Instance {
        let mut inst = swe_forge_test_support::record("octo", "duration", 13);
        inst.resolved_issues.push(swe_forge_core::ResolvedIssue {
            number: 12,
            title: "parse <b>1h30m</b>".into(),
            body: None,
        });
        let mut meta = ForgeMeta::new(ValidationStatus::Accepted);
        let mut q = Quality {
            leakage: Some(Leakage {
                score: 0.75,
                threshold: 0.5,
                added_lines: 4,
                matched_lines: vec!["return <script>x</script>;".into()],
            }),
            unnamed_identifiers: vec![UnnamedIdentifier {
                name: "parseUnit".into(),
                kind: "function".into(),
                file: "src/parse.ts".into(),
            }],
            specificity: Some(Specificity { files: vec!["src/parse.ts".into()], ..Default::default() }),
            hunks: Some(HunkAblation {
                hunks: 3,
                not_code: 0,
                tried: 3,
                untested: vec!["src/parse.ts @@ -10,3 +10,4 @@".into()],
                untested_share: 1.0 / 3.0,
                seconds: 42.0,
            }),
            ..Default::default()
        };
        q.raise(QualityFlag::SolutionLeak);
        q.raise(QualityFlag::UntestedHunks);
        q.raise(QualityFlag::UnnamedIdentifiers);
        meta.quality = Some(q);
        meta.evidence = Some(Evidence {
            gold_runs: 3,
            gold_resolved: 3,
            controls: vec![
                Control { name: "empty_patch".into(), f2p_passed: vec![], resolved: false },
                Control { name: "test_patch_alone".into(), f2p_passed: vec!["t::a".into()], resolved: false },
            ],
            network: vec![],
            layout: vec![
                LayoutRun {
                    variant: "blank_line".into(),
                    held: true,
                    unstable: vec!["t::doc (line 3)".into()],
                    detail: None,
                },
                LayoutRun {
                    variant: "offset_hunks".into(),
                    held: false,
                    unstable: vec![],
                    detail: Some("patch_does_not_apply".into()),
                },
            ],
        });
        meta.warnings =
            vec!["fix run: log of 9 bytes kept as head and tail".into(), Warning::TimeBomb.with("fix run: expired")];
        meta.labels = Some(Labels {
            truncated: vec![Truncation {
                phase: Phase::Fix,
                cause: TruncationCause::ShortSuite,
                reported: 1,
                missing: 300,
                evidence: String::new(),
                tolerated: false,
            }],
            exit_code_graded: true,
            unstable: [("t::doc (line 3)".to_owned(), "blank_line: NONE".to_owned())].into(),
            ..Default::default()
        });
        inst.swe_forge = Some(meta);
        inst
    }

    #[test]
    fn the_overview_holds_each_signal_with_its_evidence_the_controls_warnings_and_links() {
        let o = overview(&flagged());
        assert_eq!(o["flags"], json!(["solution_leak", "unnamed_identifiers", "untested_hunks"]));
        let sig = |flag: &str| o["signals"].as_array().unwrap().iter().find(|s| s["flag"] == flag).unwrap().clone();
        assert_eq!(sig("solution_leak")["state"], "raised");
        assert_eq!(sig("solution_leak")["details"], json!(["return <script>x</script>;"]));
        assert!(sig("solution_leak")["summary"].as_str().unwrap().contains("score 0.75, flagged from 0.50"));
        assert_eq!(sig("unnamed_identifiers")["details"], json!(["parseUnit (function, src/parse.ts)"]));
        assert_eq!(
            (sig("unspecific")["state"].as_str(), sig("unspecific")["details"].clone()),
            (Some("clear"), json!(["file src/parse.ts"]))
        );
        assert!(sig("untested_hunks")["summary"].as_str().unwrap().starts_with("1 of 3 hunks"));
        assert_eq!(sig("flaky")["state"], "not computed");
        assert_eq!(o["evidence"]["gold"], "3/3");
        assert_eq!(o["evidence"]["complete"], false, "a control let a FAIL_TO_PASS test pass");
        assert_eq!(o["evidence"]["controls"][1]["held"], false);
        assert_eq!(o["evidence"]["layout_held"], "1/2");
        assert_eq!(o["evidence"]["layout"][0]["unstable"], json!(["t::doc (line 3)"]));
        assert_eq!(o["evidence"]["layout"][1]["detail"], "patch_does_not_apply");
        assert_eq!(o["evidence"]["unstable"], json!(["t::doc (line 3) (blank_line: NONE)"]));
        let kinds: Vec<&str> = o["warnings"].as_array().unwrap().iter().map(|w| w["kind"].as_str().unwrap()).collect();
        assert_eq!(kinds, ["time_bomb", "truncated", "exit_code_graded", "warning"]);
        assert_eq!(o["warnings"][0]["text"], "fix run: expired");
        assert!(o["warnings"][1]["text"].as_str().unwrap().contains("the fix run reported 1 tests, 300 fewer"));
        assert_eq!(o["links"]["pr"]["url"], "https://github.com/octo/duration/pull/13");
        assert_eq!(o["links"]["issues"][0]["url"], "https://github.com/octo/duration/issues/12");
        assert_eq!(o["links"]["issues"][0]["text"], "#12 parse <b>1h30m</b>");
    }

    #[test]
    fn a_record_without_quality_or_evidence_says_so_rather_than_clear() {
        let mut inst = swe_forge_test_support::record("octo", "duration", 2);
        inst.swe_forge = Some(ForgeMeta::new(ValidationStatus::Accepted));
        let o = overview(&inst);
        assert!(o["signals"].is_null() && o["evidence"].is_null(), "{o}");
        assert_eq!(o["warnings"], json!([]));
        let mut q = Quality { specificity: Some(Specificity::default()), ..Default::default() };
        q.raise(QualityFlag::Unspecific);
        inst.swe_forge.as_mut().unwrap().quality = Some(q);
        let o = overview(&inst);
        let states: Vec<&str> = o["signals"].as_array().unwrap().iter().map(|s| s["state"].as_str().unwrap()).collect();
        assert_eq!(states, ["not computed", "not computed", "not computed", "raised", "not computed", "not computed"]);
        // A candidate `mine` found without text raises `no_issue_text` before any other signal.
        let mut q = Quality::default();
        q.raise(QualityFlag::NoIssueText);
        inst.swe_forge.as_mut().unwrap().quality = Some(q);
        let o = overview(&inst);
        assert_eq!(o["signals"][0]["flag"], "no_issue_text");
        assert_eq!(o["signals"][0]["state"], "raised");
    }
}
