//! The summary of an evaluation: outcome counts overall and per language, repository and
//! difficulty, and the id lists of SWE-bench's and Multi-SWE-bench's final reports
//! (`resolved_ids`, `unresolved_ids`, `error_ids`, `empty_patch_ids`, ...), so that existing
//! leaderboard scripts read it.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use serde::Serialize;
use swe_forge_core::{Instance, MarkdownTable};

use super::{Evaluation, Outcome};

/// Outcome counts of one group, with its resolved rate (resolved / evaluated).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Tally {
    /// Predictions evaluated.
    pub evaluated: usize,
    /// Resolved ones.
    pub resolved: usize,
    /// resolved / evaluated (0 when nothing was evaluated).
    pub resolved_rate: f64,
    /// Count per outcome.
    pub outcomes: BTreeMap<Outcome, usize>,
}

impl Tally {
    fn add(&mut self, o: Outcome) {
        self.evaluated += 1;
        *self.outcomes.entry(o).or_default() += 1;
        if o == Outcome::Resolved {
            self.resolved += 1;
        }
        self.resolved_rate = self.resolved as f64 / self.evaluated as f64;
    }
}

/// The summary of one model's evaluation over a dataset.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Summary {
    /// Models whose predictions were evaluated.
    pub models: Vec<String>,
    /// Instances of the dataset predictions can be evaluated on (see [`super::evaluable`]).
    pub total_instances: usize,
    /// Predictions evaluated.
    pub submitted_instances: usize,
    /// Predictions that reached a verdict (every outcome but `empty_patch` and `error`).
    pub completed_instances: usize,
    /// Dataset instances without a completed prediction.
    pub incomplete_instances: usize,
    /// Resolved predictions.
    pub resolved_instances: usize,
    /// Completed and not resolved.
    pub unresolved_instances: usize,
    /// Predictions without a patch.
    pub empty_patch_instances: usize,
    /// Predictions that ended in an engine or infrastructure error.
    pub error_instances: usize,
    /// Ids of every submitted prediction.
    pub submitted_ids: Vec<String>,
    /// Ids of completed predictions.
    pub completed_ids: Vec<String>,
    /// Ids of dataset instances without a completed prediction.
    pub incomplete_ids: Vec<String>,
    /// Ids of resolved predictions.
    pub resolved_ids: Vec<String>,
    /// Ids of completed, unresolved predictions (unresolved, tampered, patch does not apply, unsafe
    /// patch, timeout).
    pub unresolved_ids: Vec<String>,
    /// Ids of empty predictions.
    pub empty_patch_ids: Vec<String>,
    /// Ids of errors (not a verdict on the patch).
    pub error_ids: Vec<String>,
    /// Ids per outcome, for the outcomes the lists above merge.
    pub ids_by_outcome: BTreeMap<Outcome, Vec<String>>,
    /// resolved / submitted.
    pub resolved_rate: f64,
    /// Every prediction.
    pub overall: Tally,
    /// By the instance's language.
    pub by_language: BTreeMap<String, Tally>,
    /// By `org/repo`.
    pub by_repository: BTreeMap<String, Tally>,
    /// By difficulty label (`unlabelled` when the record has none).
    pub by_difficulty: BTreeMap<String, Tally>,
    /// Listed tests whose outcome differed between reruns, per instance (not counted against
    /// the prediction).
    pub flaky: BTreeMap<String, Vec<String>>,
    /// Listed tests the run reported under another id with the same stable id (a record's
    /// line-numbered doctest), per instance: listed id -> id that ran, whose status was graded.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub matched: BTreeMap<String, BTreeMap<String, String>>,
    /// The report's format version.
    pub schema_version: u32,
}

impl Summary {
    /// The summary of `evaluations` over `dataset` (the records they ran against).
    pub fn of(dataset: &[Instance], evaluations: &[Evaluation]) -> Summary {
        let records: BTreeMap<&str, &Instance> = dataset.iter().map(|r| (r.instance_id.as_str(), r)).collect();
        let mut s = Summary { schema_version: 2, ..Summary::default() };
        s.total_instances = dataset.iter().filter(|r| super::evaluable(r)).count();
        let mut models = BTreeSet::new();
        for e in evaluations {
            models.insert(e.model.clone());
            let id = e.instance_id.clone();
            s.submitted_ids.push(id.clone());
            s.ids_by_outcome.entry(e.outcome).or_default().push(id.clone());
            match e.outcome {
                Outcome::Resolved => {
                    s.completed_ids.push(id.clone());
                    s.resolved_ids.push(id.clone());
                }
                Outcome::Unresolved
                | Outcome::Tampered
                | Outcome::PatchDoesNotApply
                | Outcome::UnsafePatch
                | Outcome::Timeout => {
                    s.completed_ids.push(id.clone());
                    s.unresolved_ids.push(id.clone());
                }
                Outcome::EmptyPatch => s.empty_patch_ids.push(id.clone()),
                Outcome::Error => s.error_ids.push(id.clone()),
            }
            s.overall.add(e.outcome);
            let record = records.get(e.instance_id.as_str());
            let lang = record.and_then(|r| r.lang.clone()).unwrap_or_else(|| "unknown".into());
            let repo = record.map_or_else(|| "unknown".into(), |r| format!("{}/{}", r.org, r.repo));
            let difficulty = record
                .and_then(|r| r.swe_forge.as_ref()?.difficulty.as_ref())
                .map_or_else(|| "unlabelled".into(), |d| d.label.as_str().to_owned());
            s.by_language.entry(lang).or_default().add(e.outcome);
            s.by_repository.entry(repo).or_default().add(e.outcome);
            s.by_difficulty.entry(difficulty).or_default().add(e.outcome);
            if let Some(v) = e.verdict.as_ref().filter(|v| !v.flaky.is_empty()) {
                s.flaky.insert(id.clone(), v.flaky.keys().cloned().collect());
            }
            if let Some(v) = e.verdict.as_ref().filter(|v| !v.matched.is_empty()) {
                s.matched.insert(id, v.matched.clone());
            }
        }
        let completed: BTreeSet<&String> = s.completed_ids.iter().collect();
        s.incomplete_ids = dataset
            .iter()
            .filter(|r| super::evaluable(r) && !completed.contains(&r.instance_id))
            .map(|r| r.instance_id.clone())
            .collect();
        s.models = models.into_iter().collect();
        s.submitted_instances = s.submitted_ids.len();
        s.completed_instances = s.completed_ids.len();
        s.incomplete_instances = s.incomplete_ids.len();
        s.resolved_instances = s.resolved_ids.len();
        s.unresolved_instances = s.unresolved_ids.len();
        s.empty_patch_instances = s.empty_patch_ids.len();
        s.error_instances = s.error_ids.len();
        s.resolved_rate = s.overall.resolved_rate;
        s
    }

    /// The summary as Markdown: the overall figures, then one table per grouping.
    pub fn markdown(&self) -> String {
        let mut md = String::from("# Evaluation\n\n");
        let _ =
            writeln!(md, "Models: {}\n", if self.models.is_empty() { "none".into() } else { self.models.join(", ") });
        let _ = writeln!(
            md,
            "**{} of {} predictions resolved ({:.1}%)**; {} instances in the dataset, {} errors (not counted against the model).\n",
            self.resolved_instances,
            self.submitted_instances,
            100.0 * self.resolved_rate,
            self.total_instances,
            self.error_instances
        );
        let header: Vec<&str> = Outcome::ALL.iter().map(|o| o.as_str()).collect();
        let mut table = |title: &str, rows: Vec<(&str, &Tally)>| {
            let _ = writeln!(md, "## {title}\n");
            let mut out =
                MarkdownTable::new([title, "evaluated", "resolved %"].into_iter().chain(header.iter().copied()))
                    .right(1..);
            for (name, t) in rows {
                let mut cells =
                    vec![name.to_owned(), t.evaluated.to_string(), format!("{:.1}", 100.0 * t.resolved_rate)];
                cells.extend(Outcome::ALL.iter().map(|o| t.outcomes.get(o).copied().unwrap_or(0).to_string()));
                out.row(cells);
            }
            md.push_str(&out.to_string());
            md.push('\n');
        };
        table("overall", vec![("all", &self.overall)]);
        table("language", self.by_language.iter().map(|(k, v)| (k.as_str(), v)).collect());
        table("repository", self.by_repository.iter().map(|(k, v)| (k.as_str(), v)).collect());
        table("difficulty", self.by_difficulty.iter().map(|(k, v)| (k.as_str(), v)).collect());
        if !self.flaky.is_empty() {
            md.push_str("## Flaky listed tests (not counted against the model)\n\n");
            for (id, tests) in &self.flaky {
                let _ = writeln!(md, "- {}: {}", id, tests.join(", "));
            }
        }
        if !self.matched.is_empty() {
            md.push_str("\n## Listed tests graded under their stable id\n\n");
            for (id, pairs) in &self.matched {
                for (listed, ran) in pairs {
                    let _ = writeln!(md, "- {id}: `{listed}` ran as `{ran}`");
                }
            }
        }
        md
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(id: &str, lang: &str) -> Instance {
        let mut inst = swe_forge_test_support::record("o", "r", 1);
        inst.instance_id = id.into();
        inst.lang = Some(lang.into());
        inst.swe_forge = Some(swe_forge_core::ForgeMeta::new(swe_forge_core::ValidationStatus::Accepted));
        let t = swe_forge_core::TestStatus::Pass;
        let f = swe_forge_core::TestStatus::Fail;
        inst.fixed_tests.insert("t".into(), swe_forge_core::Transition { run: f, test: f, fix: t });
        inst
    }

    fn eval(id: &str, outcome: Outcome) -> Evaluation {
        Evaluation {
            instance_id: id.into(),
            model: "m".into(),
            outcome,
            detail: None,
            verdict: None,
            image: None,
            runs: Vec::new(),
            logs: format!("logs/{id}"),
            dropped_files: Vec::new(),
            warnings: Vec::new(),
            wall_ms: 0,
        }
    }

    #[test]
    fn ids_go_to_the_lists_leaderboards_read() {
        let dataset = [record("o__r-1", "go"), record("o__r-2", "go"), record("o__r-3", "rust"), record("o__r-4", "c")];
        let evals = [
            eval("o__r-1", Outcome::Resolved),
            eval("o__r-2", Outcome::PatchDoesNotApply),
            eval("o__r-3", Outcome::Error),
            eval("o__r-4", Outcome::Tampered),
        ];
        let s = Summary::of(&dataset, &evals);
        assert_eq!(s.resolved_ids, ["o__r-1"]);
        assert_eq!(s.unresolved_ids, ["o__r-2", "o__r-4"], "a tampered run is a verdict against the patch");
        assert_eq!(s.error_ids, ["o__r-3"]);
        assert_eq!(s.incomplete_ids, ["o__r-3"]);
        assert_eq!((s.total_instances, s.submitted_instances, s.completed_instances), (4, 4, 3));
        assert_eq!(s.by_language["go"].resolved, 1);
        assert!((s.by_language["go"].resolved_rate - 0.5).abs() < 1e-9);
        assert_eq!(s.by_difficulty["unlabelled"].evaluated, 4);
        let md = s.markdown();
        assert!(md.contains("**1 of 4 predictions resolved (25.0%)**"), "{md}");
        assert!(md.contains("| go | 2 | 50.0 | 1 | 0 | 0 | 0 | 1 | 0 | 0 | 0 |"), "{md}");
        assert!(md.contains("| c | 1 | 0.0 | 0 | 0 | 1 | 0 | 0 | 0 | 0 | 0 |"), "{md}");
        let json = serde_json::to_value(&s).unwrap();
        assert_eq!(json["ids_by_outcome"]["patch_does_not_apply"][0], "o__r-2");
        assert_eq!(json["ids_by_outcome"]["tampered"][0], "o__r-4");
    }

    #[test]
    fn listed_tests_graded_under_their_stable_id_are_reported() {
        let dataset = [record("o__r-1", "rust"), record("o__r-2", "rust")];
        let listed = "c::doc::src/map.rs - Map (line 1488)";
        let verdict = crate::Verdict {
            resolved: true,
            p2p_passed: vec![listed.into()],
            matched: BTreeMap::from([(listed.into(), "c::doc::src/map.rs - Map".into())]),
            ..crate::Verdict::default()
        };
        let evals = [
            Evaluation { verdict: Some(verdict), ..eval("o__r-1", Outcome::Resolved) },
            eval("o__r-2", Outcome::Unresolved),
        ];
        let s = Summary::of(&dataset, &evals);
        assert_eq!(s.matched.keys().collect::<Vec<_>>(), ["o__r-1"]);
        assert_eq!(s.matched["o__r-1"][listed], "c::doc::src/map.rs - Map");
        let md = s.markdown();
        assert!(
            md.contains("- o__r-1: `c::doc::src/map.rs - Map (line 1488)` ran as `c::doc::src/map.rs - Map`"),
            "{md}"
        );
        let json = serde_json::to_value(&s).unwrap();
        assert_eq!(json["matched"]["o__r-1"][listed], "c::doc::src/map.rs - Map");
        // Nothing matched: no key.
        let s = Summary::of(&dataset, &evals[1..]);
        assert!(serde_json::to_value(&s).unwrap().get("matched").is_none());
    }

    #[test]
    fn published_records_count_and_rejected_ones_do_not() {
        let mut published = record("o__r-1", "go");
        published.swe_forge = None;
        let mut rejected = record("o__r-2", "go");
        rejected.swe_forge = Some(swe_forge_core::ForgeMeta::new(swe_forge_core::ValidationStatus::Rejected));
        let mut no_tests = record("o__r-3", "go");
        no_tests.swe_forge = None;
        no_tests.fixed_tests.clear();
        let s = Summary::of(&[published, rejected, no_tests], &[]);
        assert_eq!(s.total_instances, 1);
        assert_eq!(s.incomplete_ids, ["o__r-1"]);
    }
}
