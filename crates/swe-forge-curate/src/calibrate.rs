//! Agreement between the heuristic and human difficulty labels: confusion matrices (overall and
//! per language), exact agreement, quadratic-weighted Cohen's kappa, and the search for the two
//! thresholds that agree best with the humans for fixed weights.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use swe_forge_core::{DifficultyLabel, Instance, MarkdownTable};

use crate::difficulty::{Heuristic, features};
use crate::labels::HumanLabel;

const LABELS: [DifficultyLabel; 3] = [DifficultyLabel::Easy, DifficultyLabel::Medium, DifficultyLabel::Hard];

fn idx(l: DifficultyLabel) -> usize {
    match l {
        DifficultyLabel::Easy => 0,
        DifficultyLabel::Medium => 1,
        DifficultyLabel::Hard => 2,
    }
}

/// A 3x3 confusion matrix: `counts[human][predicted]`, easy/medium/hard in that order.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Confusion {
    /// Row: the human label; column: the other label.
    pub counts: [[u64; 3]; 3],
}

impl Confusion {
    /// Counts one pair.
    pub fn add(&mut self, human: DifficultyLabel, predicted: DifficultyLabel) {
        self.counts[idx(human)][idx(predicted)] += 1;
    }

    /// Number of pairs.
    pub fn total(&self) -> u64 {
        self.counts.iter().flatten().sum()
    }

    /// Share of pairs that agree exactly.
    pub fn agreement(&self) -> f64 {
        let diag: u64 = (0..3).map(|i| self.counts[i][i]).sum();
        ratio(diag, self.total())
    }

    /// Share of pairs two classes apart (easy against hard).
    pub fn far_off(&self) -> f64 {
        ratio(self.counts[0][2] + self.counts[2][0], self.total())
    }

    /// Cohen's kappa with quadratic weights (1: perfect, 0: chance).
    pub fn kappa(&self) -> f64 {
        let n = self.total() as f64;
        if n == 0.0 {
            return 0.0;
        }
        let rows: Vec<f64> = (0..3).map(|i| self.counts[i].iter().sum::<u64>() as f64).collect();
        let cols: Vec<f64> = (0..3).map(|j| (0..3).map(|i| self.counts[i][j]).sum::<u64>() as f64).collect();
        let (mut observed, mut expected) = (0.0, 0.0);
        for (i, (row, &row_total)) in self.counts.iter().zip(&rows).enumerate() {
            for (j, (&count, &col_total)) in row.iter().zip(&cols).enumerate() {
                let w = ((i as f64 - j as f64) / 2.0).powi(2);
                observed += w * count as f64 / n;
                expected += w * row_total * col_total / (n * n);
            }
        }
        if expected == 0.0 { 1.0 } else { 1.0 - observed / expected }
    }

    /// The matrix as a Markdown table, with `what` naming the columns.
    pub fn to_markdown(&self, what: &str) -> String {
        let mut table =
            MarkdownTable::new([format!("human \\ {what}").as_str(), "easy", "medium", "hard", "total"]).right(1..);
        for (i, l) in LABELS.iter().enumerate() {
            let row = self.counts[i];
            let total = row.iter().sum::<u64>();
            table.row([
                l.as_str().to_owned(),
                row[0].to_string(),
                row[1].to_string(),
                row[2].to_string(),
                total.to_string(),
            ]);
        }
        table.to_string()
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 { 0.0 } else { a as f64 / b as f64 }
}

/// The result of comparing the heuristic with human labels.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Calibration {
    /// Human label (rows) against the heuristic (columns).
    pub overall: Confusion,
    /// The same per language (the labels file's `lang`, else the record's, else `unknown`).
    pub per_language: BTreeMap<String, Confusion>,
    /// First against second human, where a labels file has two answers for an instance: the
    /// agreement people reach among themselves.
    pub between_humans: Confusion,
    /// Labelled instances that have no record in the dataset.
    pub labels_without_record: usize,
    /// Labelled instances whose label is empty (no answer).
    pub unanswered: usize,
    /// Records left out because their fix patch is empty.
    pub empty_fix_patch: usize,
}

impl Calibration {
    /// A Markdown report: overall and per-language agreement, and the overall matrix.
    pub fn to_markdown(&self, h: &Heuristic) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "Heuristic: lines {}, files {}, hunks {}, dirs {}, fixed_tests {}, issue {}; easy below {}, hard from {}.\n",
            h.lines, h.files, h.hunks, h.dirs, h.fixed_tests, h.issue, h.easy_below, h.hard_from
        );
        let _ = writeln!(
            s,
            "Rows compared: {}; labels without a record: {}; unanswered: {}; empty fix patch: {}.\n",
            self.overall.total(),
            self.labels_without_record,
            self.unanswered,
            self.empty_fix_patch
        );
        let mut table =
            MarkdownTable::new(["language", "rows", "exact agreement", "easy vs hard", "quadratic kappa"]).right(1..);
        let mut line = |name: &str, c: &Confusion| {
            table.row([
                name.to_owned(),
                c.total().to_string(),
                format!("{:.1}%", 100.0 * c.agreement()),
                format!("{:.1}%", 100.0 * c.far_off()),
                format!("{:.2}", c.kappa()),
            ]);
        };
        for (lang, c) in &self.per_language {
            line(lang, c);
        }
        line("**all**", &self.overall);
        if self.between_humans.total() > 0 {
            line("*two humans*", &self.between_humans);
        }
        s.push_str(&table.to_string());
        s.push('\n');
        s.push_str(&self.overall.to_markdown("heuristic"));
        s
    }
}

/// Compares the heuristic's labels with human labels over the records that have one.
pub fn calibrate(records: &[Instance], labels: &BTreeMap<String, HumanLabel>, h: &Heuristic) -> Calibration {
    let mut cal = Calibration::default();
    let ids: std::collections::HashSet<&str> = records.iter().map(|r| r.instance_id.as_str()).collect();
    for (inst, human) in labelled(records, labels, &mut cal) {
        let f = features(inst);
        let predicted = h.label(h.score(&f));
        cal.overall.add(human.0, predicted);
        cal.per_language.entry(human.1).or_default().add(human.0, predicted);
    }
    for (id, l) in labels {
        if let (Some(a), Some(b)) = (l.label, l.second) {
            cal.between_humans.add(a, b);
        }
        if l.label.is_some() && !ids.contains(id.as_str()) {
            cal.labels_without_record += 1;
        }
    }
    cal
}

/// The records with a human label, with that label and their language.
fn labelled<'a>(
    records: &'a [Instance],
    labels: &BTreeMap<String, HumanLabel>,
    cal: &mut Calibration,
) -> Vec<(&'a Instance, (DifficultyLabel, String))> {
    let mut out = Vec::new();
    for inst in records {
        let Some(human) = labels.get(&inst.instance_id) else { continue };
        let Some(label) = human.label else {
            cal.unanswered += 1;
            continue;
        };
        if inst.fix_patch.trim().is_empty() {
            cal.empty_fix_patch += 1;
            continue;
        }
        let lang = human.lang.clone().or_else(|| inst.lang.clone()).unwrap_or_else(|| "unknown".into());
        out.push((inst, (label, lang)));
    }
    out
}

/// Keeps the weights of `h` and picks the two thresholds that maximise exact agreement with the
/// human labels (ties: the higher quadratic kappa, then the lower thresholds). Thresholds are
/// rounded to a tenth so the result reads well in code.
pub fn fit_thresholds(records: &[Instance], labels: &BTreeMap<String, HumanLabel>, h: &Heuristic) -> Heuristic {
    let mut scratch = Calibration::default();
    let pairs: Vec<(f64, usize)> = labelled(records, labels, &mut scratch)
        .into_iter()
        .map(|(i, (l, _))| (h.score(&features(i)), idx(l)))
        .collect();
    let Some(max) = pairs.iter().map(|p| p.0).reduce(f64::max) else { return *h };
    let steps = (max * 10.0).ceil() as i64 + 2;
    let mut best: Option<(u64, f64, Heuristic)> = None;
    for a in 0..=steps {
        for b in a..=steps {
            let cand = Heuristic { easy_below: a as f64 / 10.0, hard_from: b as f64 / 10.0, ..*h };
            let mut c = Confusion::default();
            for &(score, human) in &pairs {
                c.add(LABELS[human], cand.label(score));
            }
            let diag: u64 = (0..3).map(|i| c.counts[i][i]).sum();
            let better = match &best {
                None => true,
                Some((d, k, _)) => diag > *d || (diag == *d && c.kappa() > *k + 1e-12),
            };
            if better {
                best = Some((diag, c.kappa(), cand));
            }
        }
    }
    best.map_or(*h, |b| b.2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agreement_and_kappa() {
        let mut c = Confusion::default();
        for l in LABELS {
            for _ in 0..10 {
                c.add(l, l);
            }
        }
        assert_eq!((c.agreement(), c.kappa()), (1.0, 1.0));
        c.add(DifficultyLabel::Easy, DifficultyLabel::Hard);
        assert!((c.far_off() - 1.0 / 31.0).abs() < 1e-9);
        assert!(c.kappa() < 1.0 && c.kappa() > 0.8);
        // Independent labels: kappa near zero.
        let mut chance = Confusion::default();
        for h in LABELS {
            for p in LABELS {
                chance.add(h, p);
            }
        }
        assert!(chance.kappa().abs() < 1e-9);
        assert!(c.to_markdown("heuristic").contains("| easy | 10 | 0 | 1 | 11 |"));
    }

    fn record(id: &str, changed_lines: usize) -> Instance {
        let body: String = (0..changed_lines).map(|i| format!("+line {i}\n")).collect();
        let fix = format!("diff --git a/a.c b/a.c\n--- a/a.c\n+++ b/a.c\n@@ -1 +1,{changed_lines} @@\n{body}");
        let mut r = swe_forge_test_support::record("o", "r", 1);
        (r.instance_id, r.fix_patch, r.lang) = (id.into(), fix, Some("c".into()));
        r
    }

    #[test]
    fn fitted_thresholds_separate_separable_labels() {
        let sizes =
            [(1, "easy"), (2, "easy"), (3, "easy"), (20, "medium"), (30, "medium"), (400, "hard"), (900, "hard")];
        let records: Vec<Instance> =
            sizes.iter().enumerate().map(|(i, (n, _))| record(&format!("o__r-{i}"), *n)).collect();
        let text: String = sizes.iter().enumerate().map(|(i, (_, l))| format!("o__r-{i}\t{l}\n")).collect::<String>()
            + "o__r-99\thard\n";
        let labels = crate::labels::parse_labels(&text).unwrap();
        let h = Heuristic {
            lines: 1.0,
            files: 0.0,
            hunks: 0.0,
            dirs: 0.0,
            fixed_tests: 0.0,
            issue: 0.0,
            ..Heuristic::CALIBRATED
        };
        let fitted = fit_thresholds(&records, &labels, &h);
        let cal = calibrate(&records, &labels, &fitted);
        assert_eq!(cal.overall.agreement(), 1.0, "{fitted:?}");
        assert_eq!((cal.overall.total(), cal.labels_without_record), (7, 1));
        assert_eq!(cal.per_language["c"].total(), 7);
        assert!(cal.to_markdown(&fitted).contains("| **all** | 7 | 100.0% |"));
    }
}
