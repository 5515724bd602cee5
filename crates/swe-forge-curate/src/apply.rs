//! `curate`: puts difficulty labels, review answers, explicit decisions and duplicate marks on
//! records. A human label wins over the heuristic: a labels file first, then a review's
//! time-to-fix answer. An explicit decision wins over the questionnaire's keep rule: `keep` keeps
//! an accepted instance whatever the answers, `drop` and `needs_work` leave the kept set (both
//! stay in the full output, marked); no decision leaves it to the keep rule, as before.

use std::collections::{BTreeMap, HashMap};

use swe_forge_core::{
    Decision, Difficulty, ForgeMeta, Instance, LabelSource, QualityFlag, Review, ValidationStatus, Verdict,
};

use crate::dedup::{DedupOptions, DuplicateFinder};
use crate::difficulty::{Heuristic, heuristic_label};
use crate::keep::KeepRule;
use crate::labels::HumanLabel;

/// What `curate` applies.
#[derive(Debug, Clone, Default)]
pub struct CurateOptions {
    /// Human difficulty labels by instance id (they override the heuristic).
    pub labels: BTreeMap<String, HumanLabel>,
    /// The latest review of each reviewed instance (its `keep` is set again by `keep_rule`).
    pub reviews: BTreeMap<String, Review>,
    /// The latest explicit decision on each decided instance.
    pub decisions: BTreeMap<String, Decision>,
    /// Which reviews keep an instance.
    pub keep_rule: KeepRule,
    /// Near-duplicate detection; None leaves duplicates unmarked.
    pub dedup: Option<DedupOptions>,
    /// The difficulty heuristic.
    pub heuristic: Heuristic,
}

/// What `curate` did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CurateSummary {
    /// Records seen.
    pub records: usize,
    /// Labels taken from a person (labels file or review) rather than the heuristic.
    pub human_labels: usize,
    /// Records carrying a review.
    pub reviewed: usize,
    /// Reviewed records the keep rule drops.
    pub dropped_by_review: usize,
    /// Records carrying an explicit decision.
    pub decided: usize,
    /// Records a decision drops.
    pub dropped_by_decision: usize,
    /// Records a decision holds back as needing work.
    pub needs_work: usize,
    /// Records marked as duplicates of another.
    pub duplicates: usize,
    /// Of those, the records the mark takes out of the kept set (accepted, or the file has no
    /// statuses, and kept by people): the number the dataset card's funnel gives.
    pub duplicates_dropped: usize,
    /// Accepted (or the file has no statuses, as published records have none), not dropped by a
    /// person, not a duplicate: the records [`is_kept_in`] keeps.
    pub kept: usize,
    /// Of the kept records, how many carry each quality flag (`swe_forge.quality.flags`).
    pub flagged: BTreeMap<QualityFlag, usize>,
}

/// Whether a curated record belongs in the published dataset: accepted by validation, kept by a
/// person (an explicit decision, else the questionnaire's keep rule, else nobody looked), not a
/// duplicate.
pub fn is_kept(r: &Instance) -> bool {
    let Some(m) = &r.swe_forge else { return false };
    m.status == ValidationStatus::Accepted && kept_by_people(m) && m.duplicate_of.is_none()
}

/// Whether the record would stay in the dataset if it were not a duplicate ([`is_kept_in`] without
/// the duplicate mark): the records a duplicate mark drops, as `curate` and the card count them.
pub fn kept_but_for_duplicates(r: &Instance, validated: bool) -> bool {
    match &r.swe_forge {
        None => !validated,
        Some(m) => (!validated || m.status == ValidationStatus::Accepted) && kept_by_people(m),
    }
}

/// A person's word on the record: the decision when there is one, else the review's verdict,
/// else true.
pub fn kept_by_people(m: &ForgeMeta) -> bool {
    match &m.decision {
        Some(d) => d.verdict == Verdict::Keep,
        None => m.review.as_ref().is_none_or(|rv| rv.keep),
    }
}

/// The records that stay in the dataset. When any record has a validation status, `is_kept`; a
/// file without any (a published dataset) keeps every record not dropped by a review and not a
/// duplicate.
pub fn kept_records(records: &[Instance]) -> Vec<&Instance> {
    let validated = records.iter().any(|r| r.status() != ValidationStatus::Candidate);
    records.iter().filter(|r| is_kept_in(r, validated)).collect()
}

/// Whether [`kept_records`] keeps `r` from a dataset where some record has a validation status
/// (`validated`) or none has.
pub fn is_kept_in(r: &Instance, validated: bool) -> bool {
    if validated {
        is_kept(r)
    } else {
        r.swe_forge.as_ref().is_none_or(|m| kept_by_people(m) && m.duplicate_of.is_none())
    }
}

/// Puts the heuristic's difficulty on records that carry none (labels already there, human or
/// not, are left alone); returns how many were labelled. Export uses it so that every exported
/// record has a label, curated or not.
pub fn label_missing_difficulty(records: &mut [Instance], heuristic: &Heuristic) -> usize {
    let mut n = 0;
    for r in records.iter_mut().filter(|r| r.swe_forge.as_ref().is_none_or(|m| m.difficulty.is_none())) {
        let (features, score, label) = heuristic_label(r, heuristic);
        let meta = r.swe_forge.get_or_insert_with(|| ForgeMeta::new(ValidationStatus::Candidate));
        meta.difficulty = Some(Difficulty {
            label,
            source: LabelSource::Heuristic,
            heuristic: label,
            score: (score * 1000.0).round() / 1000.0,
            features,
        });
        n += 1;
    }
    n
}

/// Applies labels, reviews and duplicate marks to every record, in place. Marks from an earlier
/// run are replaced.
pub fn curate(records: &mut [Instance], options: &CurateOptions) -> CurateSummary {
    let mut index = CurateIndex::default();
    for r in records.iter() {
        index.add(r);
    }
    let mut marks = index.marks(options);
    let mut summary = marks.summary();
    for r in records.iter_mut() {
        marks.apply(r, options, &mut summary);
    }
    summary
}

/// What curating needs to know of the whole dataset before it marks one record, gathered one
/// record at a time ([`CurateIndex::add`]) and bounded per record: its instance id, whether it
/// has a validation status, and what near-duplicate detection keeps ([`DuplicateFinder`]).
/// [`CurateIndex::marks`] then curates the same records, in the same order, one at a time.
#[derive(Debug, Default)]
pub struct CurateIndex {
    /// The position of the last record of each instance id.
    last_of: HashMap<String, usize>,
    records: usize,
    validated: bool,
    duplicates: DuplicateFinder,
}

impl CurateIndex {
    /// Takes note of the next record (as it is before curation).
    pub fn add(&mut self, r: &Instance) {
        self.last_of.insert(r.instance_id.clone(), self.records);
        self.records += 1;
        self.validated |= r.status() != ValidationStatus::Candidate;
        self.duplicates.add(r);
    }

    /// Records added so far.
    pub fn len(&self) -> usize {
        self.records
    }

    /// Whether no record was added.
    pub fn is_empty(&self) -> bool {
        self.records == 0
    }

    /// Whether a record of this instance id was added.
    pub fn contains(&self, id: &str) -> bool {
        self.last_of.contains_key(id)
    }

    /// The marks to put on the records, in the order they were added.
    pub fn marks(self, options: &CurateOptions) -> CurateMarks {
        let mut duplicates = HashMap::new();
        let mut marked = 0;
        if let Some(dedup) = options.dedup {
            for group in self.duplicates.groups(dedup) {
                for (id, similarity) in group.duplicates {
                    // A duplicate id marks the last record of that id, once per mention.
                    if let Some(&i) = self.last_of.get(&id) {
                        duplicates.insert(i, swe_forge_core::Duplicate { of: group.kept.clone(), similarity });
                        marked += 1;
                    }
                }
            }
        }
        CurateMarks { duplicates, marked, validated: self.validated, next: 0 }
    }
}

/// The duplicate marks of a dataset, put on its records one at a time and in order by
/// [`CurateMarks::apply`].
#[derive(Debug)]
pub struct CurateMarks {
    /// The duplicate mark of each record that has one, by position.
    duplicates: HashMap<usize, swe_forge_core::Duplicate>,
    /// Duplicate marks made.
    marked: usize,
    validated: bool,
    /// The position of the next record.
    next: usize,
}

impl CurateMarks {
    /// The summary to count the records into: the duplicates marked, nothing else yet.
    pub fn summary(&self) -> CurateSummary {
        CurateSummary { duplicates: self.marked, ..Default::default() }
    }

    /// Curates the next record in place (labels, review, decision, duplicate mark) and counts it
    /// into `summary` (start from [`CurateMarks::summary`]); returns whether it stays in the dataset ([`is_kept_in`]).
    pub fn apply(&mut self, r: &mut Instance, options: &CurateOptions, summary: &mut CurateSummary) -> bool {
        let i = self.next;
        self.next += 1;
        summary.records += 1;
        curate_one(r, options, summary);
        if let Some(d) = self.duplicates.get(&i)
            && let Some(meta) = r.swe_forge.as_mut()
        {
            meta.duplicate_of = Some(d.clone());
            summary.duplicates_dropped += usize::from(kept_but_for_duplicates(r, self.validated));
        }
        let kept = is_kept_in(r, self.validated);
        if kept {
            summary.kept += 1;
            for flag in quality_flags(r) {
                *summary.flagged.entry(*flag).or_default() += 1;
            }
        }
        kept
    }
}

/// The quality flags of a record (`swe_forge.quality.flags`); none when it has no quality block.
pub fn quality_flags(r: &Instance) -> &[QualityFlag] {
    r.swe_forge.as_ref().and_then(|m| m.quality.as_ref()).map_or(&[], |q| q.flags.as_slice())
}

/// Labels, review and decision of one record, and its text quality signals (a record validation
/// did not reject); its duplicate mark cleared.
fn curate_one(r: &mut Instance, options: &CurateOptions, summary: &mut CurateSummary) {
    // Published records (Multi-SWE-bench's) come without a block: they get one, and their text
    // signals, like the records validation made.
    r.swe_forge.get_or_insert_with(|| ForgeMeta::new(ValidationStatus::Candidate));
    if r.status() != ValidationStatus::Rejected {
        swe_forge_quality::assess(r);
    }
    let (features, score, guessed) = heuristic_label(r, &options.heuristic);
    let review = options.reviews.get(&r.instance_id).map(|rv| options.keep_rule.judge(rv.clone()));
    let human = options
        .labels
        .get(&r.instance_id)
        .and_then(|l| l.label)
        .or_else(|| review.as_ref().and_then(|rv| rv.time_to_fix).map(|t| t.difficulty()));
    let meta = r.swe_forge.get_or_insert_with(|| ForgeMeta::new(ValidationStatus::Candidate));
    meta.difficulty = Some(Difficulty {
        label: human.unwrap_or(guessed),
        source: if human.is_some() { LabelSource::Human } else { LabelSource::Heuristic },
        heuristic: guessed,
        score: (score * 1000.0).round() / 1000.0,
        features,
    });
    summary.human_labels += usize::from(human.is_some());
    summary.reviewed += usize::from(review.is_some());
    summary.dropped_by_review += usize::from(review.as_ref().is_some_and(|rv| !rv.keep));
    let decision = options.decisions.get(&r.instance_id).cloned();
    summary.decided += usize::from(decision.is_some());
    let verdict = decision.as_ref().map(|d| d.verdict);
    summary.dropped_by_decision += usize::from(verdict == Some(Verdict::Drop));
    summary.needs_work += usize::from(verdict == Some(Verdict::NeedsWork));
    meta.review = review;
    meta.decision = decision;
    meta.duplicate_of = None;
}

#[cfg(test)]
mod tests {
    use super::*;
    use swe_forge_core::{DifficultyLabel, TimeToFix};

    use swe_forge_test_support::devset;

    /// A review whose `keep` says yes whatever the answers: `curate` must judge it again.
    fn review(clarity: u8, time: Option<TimeToFix>) -> Review {
        Review {
            reviewer: "alice".into(),
            reviewed_at: "2026-01-01T00:00:00.000Z".into(),
            severe_problem: false,
            issue_clarity: clarity,
            test_adequacy: 3,
            time_to_fix: time,
            notes: String::new(),
            keep: true,
        }
    }

    #[test]
    fn published_records_without_a_block_get_their_text_signals() {
        let mut records = devset();
        assert!(records.iter().all(|r| r.swe_forge.is_none()));
        let summary = curate(&mut records, &CurateOptions::default());
        assert_eq!(summary.kept, 22);
        assert_eq!(
            summary.flagged,
            BTreeMap::from([(QualityFlag::UnnamedIdentifiers, 2), (QualityFlag::Unspecific, 1)])
        );
        let q = records[0].swe_forge.as_ref().unwrap().quality.as_ref().unwrap();
        assert!(q.leakage.is_some() && q.specificity.is_some(), "{q:?}");
    }

    #[test]
    fn human_labels_win_and_reviews_decide_what_is_kept() {
        let mut records = devset();
        for r in &mut records {
            r.swe_forge = Some(ForgeMeta::new(ValidationStatus::Accepted));
        }
        // A backport: the same fix under another number.
        let mut copy = records[0].clone();
        copy.number += 1000;
        copy.instance_id = copy.expected_id();
        records.push(copy.clone());
        let mut options = CurateOptions { dedup: Some(DedupOptions::default()), ..Default::default() };
        let label = |l| HumanLabel { label: Some(l), lang: None, second: None };
        options.labels.insert(records[1].instance_id.clone(), label(DifficultyLabel::Hard));
        options.reviews.insert(records[2].instance_id.clone(), review(3, Some(TimeToFix::Over4Hours)));
        options.reviews.insert(records[3].instance_id.clone(), review(1, None));
        let summary = curate(&mut records, &options);
        assert_eq!(
            summary,
            CurateSummary {
                records: 23,
                human_labels: 2,
                reviewed: 2,
                dropped_by_review: 1,
                duplicates: 1,
                duplicates_dropped: 1,
                kept: 21,
                // Of the kept devset records, two have tests that need functions their issue never
                // names (zstd-3530, github-readme-stats-3442) and one issue is an image alone
                // (fastjson2-82); docs/benchmarks/quality-signals.md reads them.
                flagged: BTreeMap::from([(QualityFlag::UnnamedIdentifiers, 2), (QualityFlag::Unspecific, 1)]),
                ..Default::default()
            }
        );
        let flags = |id: &str| quality_flags(records.iter().find(|r| r.instance_id == id).unwrap()).to_vec();
        assert_eq!(flags("facebook__zstd-3530"), [QualityFlag::UnnamedIdentifiers]);
        assert_eq!(flags("alibaba__fastjson2-82"), [QualityFlag::Unspecific]);
        let d = |i: usize| records[i].swe_forge.as_ref().unwrap().difficulty.clone().unwrap();
        assert_eq!((d(1).label, d(1).source), (DifficultyLabel::Hard, LabelSource::Human));
        assert_eq!((d(2).label, d(2).source), (DifficultyLabel::Hard, LabelSource::Human));
        assert_eq!(d(0).source, LabelSource::Heuristic);
        assert_eq!(d(0).label, d(0).heuristic);
        let last = records.last().unwrap().swe_forge.as_ref().unwrap();
        assert_eq!(last.duplicate_of.as_ref().unwrap().of, records[0].instance_id);
        assert!(!is_kept(&records[3]) && is_kept(&records[2]));
        // Labels already there are kept; records without one get the heuristic's.
        let mut plain = devset();
        plain.truncate(2);
        plain[1] = records[1].clone();
        assert_eq!(label_missing_difficulty(&mut plain, &Heuristic::CALIBRATED), 1);
        assert_eq!(plain[0].swe_forge.as_ref().unwrap().difficulty.as_ref().unwrap().source, LabelSource::Heuristic);
        assert_eq!(plain[1], records[1]);
        // Explicit decisions win over the keep rule: keep takes back the one the rule dropped,
        // drop and needs work leave the kept set but stay in the records, marked.
        let decide = |verdict: Verdict| Decision {
            verdict,
            reason: format!("{} it", verdict.as_str()),
            reviewer: "bob".into(),
            decided_at: "2026-01-02T00:00:00.000Z".into(),
        };
        let mut decided = options.clone();
        for (i, verdict) in [(3, Verdict::Keep), (4, Verdict::Drop), (5, Verdict::NeedsWork), (2, Verdict::Drop)] {
            decided.decisions.insert(records[i].instance_id.clone(), decide(verdict));
        }
        let mut again = records.clone();
        let summary = curate(&mut again, &decided);
        assert_eq!(
            (summary.decided, summary.dropped_by_decision, summary.needs_work, summary.dropped_by_review, summary.kept),
            (4, 2, 1, 1, 19)
        );
        assert!(is_kept(&again[3]) && !is_kept(&again[4]) && !is_kept(&again[5]) && !is_kept(&again[2]));
        let d = again[5].swe_forge.as_ref().unwrap().decision.clone().unwrap();
        assert_eq!((d.verdict, d.reason.as_str(), d.reviewer.as_str()), (Verdict::NeedsWork, "needs_work it", "bob"));
        assert_eq!(kept_records(&again).len(), 19);
        // A rejected instance stays out whatever a person decided.
        again[3].swe_forge.as_mut().unwrap().status = ValidationStatus::Rejected;
        assert!(!is_kept(&again[3]));
        // Curating again gives the same records.
        let again = records.clone();
        curate(&mut records, &options);
        assert_eq!(records, again);
    }
}
