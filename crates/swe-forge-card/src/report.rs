//! The dataset card: `README.md` with counts per language, repository and difficulty, the funnel
//! of what was dropped and why, distributions of patch size and test counts, and SVG plots under
//! `plots/`. The card describes the records it is given; nothing is read from elsewhere.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use swe_forge_core::{
    Day, DifficultyLabel, Instance, LabelSource, MarkdownTable, QualityFlag, Timestamp, ValidationStatus,
};

use swe_forge_curate::{Heuristic, heuristic_label, is_kept_in, language};

use crate::CardError;
use crate::svg;

/// Where the card goes and what it is called.
#[derive(Debug, Clone)]
pub struct ReportOptions {
    /// Folder for `README.md` and `plots/`.
    pub out_dir: PathBuf,
    /// The card's title.
    pub title: String,
    /// The heuristic used for records that carry no difficulty label.
    pub heuristic: Heuristic,
}

const LABELS: [DifficultyLabel; 3] = [DifficultyLabel::Easy, DifficultyLabel::Medium, DifficultyLabel::Hard];

/// What the card keeps of a record it counts: names and numbers, never the record itself, so that
/// the card of a dataset of any size is gathered in memory that grows only by these rows.
struct Row {
    org: String,
    repo: String,
    lang: String,
    merged: Option<Day>,
    label: DifficultyLabel,
    human: bool,
    fix_lines: u64,
    fix_files: u64,
    test_lines: u64,
    fixed: u64,
    p2p: u64,
    /// The evidence marks of a record with a `swe_forge` block.
    evidence: Option<EvidenceMarks>,
    /// The quality flags raised, when the record carries quality signals.
    quality: Option<Vec<QualityFlag>>,
}

/// What the evidence section counts of one kept record.
struct EvidenceMarks {
    /// Gathered (gold runs or controls) at all.
    gathered: bool,
    complete: bool,
    gold_missed: bool,
    control_failed: bool,
    network: bool,
    truncated: bool,
    n2p_share: Option<f64>,
    /// Layout variants graded, and whether every one held.
    layout_graded: bool,
    layout_missed: bool,
    /// Tests the layout variants took out of the lists.
    unstable: usize,
}

impl EvidenceMarks {
    fn of(m: &swe_forge_core::ForgeMeta) -> EvidenceMarks {
        let ev = m.evidence.as_ref().filter(|e| e.gold_runs > 0 || !e.controls.is_empty());
        EvidenceMarks {
            gathered: ev.is_some(),
            complete: ev.is_some_and(|e| e.complete()),
            gold_missed: ev.is_some_and(|e| e.gold_resolved < e.gold_runs),
            control_failed: ev.is_some_and(|e| e.controls.iter().any(|c| c.resolved || !c.f2p_passed.is_empty())),
            network: m.evidence.as_ref().is_some_and(|e| !e.network.is_empty()),
            truncated: m.labels.as_ref().is_some_and(|l| !l.truncated.is_empty()),
            n2p_share: m.labels.as_ref().and_then(|l| l.n2p_share),
            layout_graded: ev.is_some_and(|e| !e.layout.is_empty()),
            layout_missed: ev.is_some_and(|e| e.layout.iter().any(|l| !l.held)),
            unstable: m.labels.as_ref().map_or(0, |l| l.unstable.len()),
        }
    }
}

/// The funnel's counts over a pool of records (the accepted ones, or all of them).
#[derive(Default)]
struct Pool {
    records: usize,
    reviewed: usize,
    dropped: usize,
    duplicates: usize,
    /// Records with a duplicate mark, kept by people or not (`curate`'s `duplicates`).
    marked: usize,
}

impl Pool {
    /// Counts `r`: a person drops it as `curate` does (the decision, else the review's verdict),
    /// and a duplicate counts where people kept it (the records its mark drops, `curate`'s
    /// `duplicates_dropped`).
    fn add(&mut self, r: &Instance) {
        let meta = r.swe_forge.as_ref();
        let kept_by_people = meta.is_none_or(swe_forge_curate::kept_by_people);
        self.records += 1;
        self.reviewed += usize::from(meta.is_some_and(|m| m.review.is_some() || m.decision.is_some()));
        self.dropped += usize::from(!kept_by_people);
        let duplicate = meta.is_some_and(|m| m.duplicate_of.is_some());
        self.duplicates += usize::from(duplicate && kept_by_people);
        self.marked += usize::from(duplicate);
    }
}

/// A dataset card gathered one record at a time ([`Card::add`]) and written at the end
/// ([`Card::write`]): what it keeps grows with the dataset only by a few numbers and names per
/// counted record, so `report` and `publish` read their input as a stream.
pub struct Card {
    options: ReportOptions,
    records: usize,
    /// Whether some record has a validation status; which records count depends on it.
    validated: bool,
    accepted: usize,
    rejected: usize,
    /// Rows of the records kept when the dataset is validated, and when it is not, with which.
    rows: Vec<(Row, bool, bool)>,
    /// The funnel's pools: the accepted records, and every record.
    accepted_pool: Pool,
    all_pool: Pool,
    reasons: BTreeMap<String, u64>,
}

impl Card {
    /// An empty card with these options.
    pub fn new(options: ReportOptions) -> Card {
        Card {
            options,
            records: 0,
            validated: false,
            accepted: 0,
            rejected: 0,
            rows: Vec::new(),
            accepted_pool: Pool::default(),
            all_pool: Pool::default(),
            reasons: BTreeMap::new(),
        }
    }

    /// Counts `inst`.
    pub fn add(&mut self, inst: &Instance) {
        self.records += 1;
        match inst.status() {
            ValidationStatus::Candidate => {}
            ValidationStatus::Accepted => {
                self.validated = true;
                self.accepted += 1;
                self.accepted_pool.add(inst);
            }
            ValidationStatus::Rejected => {
                self.validated = true;
                self.rejected += 1;
            }
        }
        self.all_pool.add(inst);
        for rej in inst.swe_forge.iter().flat_map(|m| &m.rejections) {
            *self.reasons.entry(rej.reason.as_str().to_owned()).or_default() += 1;
        }
        let (if_validated, if_not) = (is_kept_in(inst, true), is_kept_in(inst, false));
        if if_validated || if_not {
            self.rows.push((row(inst, &self.options.heuristic), if_validated, if_not));
        }
    }

    /// Writes `README.md` and `plots/*.svg`; returns the card's path.
    pub fn write(self) -> Result<PathBuf, CardError> {
        let options = &self.options;
        let plots = options.out_dir.join("plots");
        std::fs::create_dir_all(&plots).map_err(CardError::io(&plots))?;
        let validated = self.validated;
        let rows: Vec<&Row> =
            self.rows.iter().filter(|(_, v, n)| if validated { *v } else { *n }).map(|(r, _, _)| r).collect();

        let mut md = String::new();
        let _ = writeln!(md, "# {}\n", options.title);
        let repos = group(&rows, |r| format!("{}/{}", r.org, r.repo));
        let langs = group(&rows, |r| r.lang.clone());
        let _ = writeln!(
            md,
            "{} from {} in {}, in the [Multi-SWE-bench](https://github.com/multi-swe-bench/multi-swe-bench) \
             record format (swe-forge's own fields are under `swe_forge`). {}\n",
            plural(rows.len(), "instance"),
            plural(repos.len(), "repository"),
            plural(langs.len(), "language"),
            if validated {
                format!(
                    "Counted: records accepted by validation, not dropped by a review and not duplicates ({} records in the file).",
                    self.records
                )
            } else {
                format!(
                    "The file carries no validation statuses: every record not dropped by a review or marked as a duplicate is counted ({} records).",
                    self.records
                )
            }
        );

        languages(&mut md, &plots, &langs)?;
        repositories(&mut md, &repos);
        difficulty(&mut md, &plots, &rows)?;
        self.funnel(&mut md, rows.len());
        rejection_reasons(&mut md, &plots, &self.reasons)?;
        evidence(&mut md, &rows);
        quality(&mut md, &rows);
        patch_sizes(&mut md, &plots, &rows)?;
        md.push_str(FIELDS);
        let card = options.out_dir.join("README.md");
        swe_forge_fs::write_file(&card, &md)?;
        Ok(card)
    }

    fn funnel(&self, md: &mut String, kept: usize) {
        let pool = if self.validated { &self.accepted_pool } else { &self.all_pool };
        md.push_str("## Funnel\n\n");
        let mut table = MarkdownTable::new(["stage", "records", "dropped"]).right(1..);
        table.row(["records in the file".to_owned(), self.records.to_string(), String::new()]);
        if self.validated {
            let pending = self.records - self.accepted - self.rejected;
            table.row([
                "accepted by validation".to_owned(),
                self.accepted.to_string(),
                format!("{} rejected, {pending} not validated", self.rejected),
            ]);
        }
        table.row([
            format!("kept by review ({} reviewed)", pool.reviewed),
            (pool.records - pool.dropped).to_string(),
            pool.dropped.to_string(),
        ]);
        // The same two numbers as `curate`'s summary: the records the marks drop here, and every
        // mark in the file when some fall on records dropped before this stage.
        let dropped = if self.all_pool.marked > pool.duplicates {
            format!("{} ({} marked in the file)", pool.duplicates, self.all_pool.marked)
        } else {
            pool.duplicates.to_string()
        };
        table.row(["not a duplicate".to_owned(), kept.to_string(), dropped]);
        md.push_str(&table.to_string());
    }
}

/// The evidence of the kept instances: how many carry complete evidence (the gold patch resolved
/// every time through evaluation, both negative controls held), what failed for the others, the
/// share of FAIL_TO_PASS that is n2p, phases that were truncated, signs of the network.
fn evidence(md: &mut String, rows: &[&Row]) {
    let marks: Vec<&EvidenceMarks> = rows.iter().filter_map(|r| r.evidence.as_ref()).collect();
    let count = |f: fn(&EvidenceMarks) -> bool| marks.iter().filter(|m| f(m)).count();
    let shares: Vec<f64> = marks.iter().filter_map(|m| m.n2p_share).collect();
    let mean = if shares.is_empty() { 0.0 } else { shares.iter().sum::<f64>() / shares.len() as f64 };
    md.push_str("\n## Evidence\n\n");
    let mut table = MarkdownTable::new(["evidence of the kept instances", "instances"]).right(1..);
    for (what, n) in [
        (
            "complete: the gold patch resolved every time through evaluation, both negative controls held, every layout variant held",
            count(|m| m.complete),
        ),
        ("the gold patch did not always resolve through evaluation", count(|m| m.gold_missed)),
        ("layout variants of the gold patch graded (blank line, hunks off by 3)", count(|m| m.layout_graded)),
        ("a layout variant gave no verdict", count(|m| m.layout_missed)),
        ("tests left out as unstable under a layout variant", count(|m| m.unstable > 0)),
        ("a negative control passed a FAIL_TO_PASS test or resolved", count(|m| m.control_failed)),
        ("no evidence gathered", count(|m| !m.gathered)),
        (
            "a phase ran fewer tests than the others (tolerated: the test patch does not compile alone)",
            count(|m| m.truncated),
        ),
        ("logs show tests reaching for the network", count(|m| m.network)),
    ] {
        table.row([what.to_owned(), n.to_string()]);
    }
    md.push_str(&table.to_string());
    let _ = writeln!(
        md,
        "\nFAIL_TO_PASS that is n2p (NONE with the test patch, then PASS), mean share: {:.0} %.",
        mean * 100.0
    );
}

/// The quality signals of the kept instances (`swe_forge.quality`): each flag's count and share,
/// how many raise none, how many carry no signals.
fn quality(md: &mut String, rows: &[&Row]) {
    let assessed: Vec<&Vec<QualityFlag>> = rows.iter().filter_map(|r| r.quality.as_ref()).collect();
    md.push_str("\n## Quality signals\n\n");
    let share = |n: usize| {
        if assessed.is_empty() { "-".to_owned() } else { format!("{:.0} %", n as f64 * 100.0 / assessed.len() as f64) }
    };
    let mut table = MarkdownTable::new(["flag", "what it means", "instances", "share"]).right(2..);
    for flag in QualityFlag::ALL {
        let n = assessed.iter().filter(|f| f.contains(&flag)).count();
        table.row([format!("`{}`", flag.as_str()), flag.meaning().to_owned(), n.to_string(), share(n)]);
    }
    let clean = assessed.iter().filter(|f| f.is_empty()).count();
    table.row(["none".to_owned(), "no flag raised".to_owned(), clean.to_string(), share(clean)]);
    md.push_str(&table.to_string());
    let _ = writeln!(
        md,
        "\nShares are of the {} kept instances that carry quality signals; {} carry none (`swe-forge curate` computes \
         the text signals, validation the run signals: untested hunks and flakiness). `curate --require-quality` keeps \
         only instances without a flag.",
        assessed.len(),
        rows.len() - assessed.len()
    );
}

/// Writes `README.md` and `plots/*.svg` of `records`; returns the card's path. [`Card`] gathers
/// the same card from a stream.
pub fn write_report(records: &[Instance], options: &ReportOptions) -> Result<PathBuf, CardError> {
    let mut card = Card::new(options.clone());
    for r in records {
        card.add(r);
    }
    card.write()
}

/// The last section: what a record holds.
const FIELDS: &str = "\n## Fields\n\nEach line is one instance: `org`, `repo`, `number`, `base`, `resolved_issues` (the issue text), \
     `fix_patch` (the reference solution), `test_patch`, the test lists (`f2p_tests`, `p2p_tests`, ...) and the \
     three runs' results, as in Multi-SWE-bench. Under `swe_forge`: validation status and rejections, run \
     digests, image and provenance, `difficulty` (label, source, heuristic score and features), `review` (a \
     person's answers and the keep verdict), `duplicate_of` and `quality` (the flags raised and the evidence of \
     each signal). `schemas/instance.schema.json` in swe-forge \
     describes every field.\n";

/// The row of a counted record: its label (the record's, else the heuristic's) and the measures
/// the card shows.
fn row(inst: &Instance, heuristic: &Heuristic) -> Row {
    let (f, _, guessed) = heuristic_label(inst, heuristic);
    let meta = inst.swe_forge.as_ref();
    let d = meta.and_then(|m| m.difficulty.as_ref());
    Row {
        org: inst.org.clone(),
        repo: inst.repo.clone(),
        lang: language(inst),
        merged: meta.and_then(|m| m.merged_at.as_ref()).map(Timestamp::date),
        label: d.map_or(guessed, |d| d.label),
        human: d.is_some_and(|d| d.source == LabelSource::Human),
        fix_lines: f.fix_lines_added + f.fix_lines_removed,
        fix_files: f.fix_files,
        test_lines: f.test_lines,
        fixed: f.fixed_tests,
        p2p: inst.p2p_tests.len() as u64,
        evidence: meta.map(EvidenceMarks::of),
        quality: meta.and_then(|m| m.quality.as_ref()).map(|q| q.flags.clone()),
    }
}

/// Rows grouped by a key (language, repository).
type Groups<'a> = BTreeMap<String, Vec<&'a Row>>;

/// The languages table and its plot of instances per language and difficulty.
fn languages(md: &mut String, plots: &Path, langs: &Groups<'_>) -> Result<(), CardError> {
    md.push_str("## Languages\n\n");
    let mut table = MarkdownTable::new(["language", "repositories", "instances", "easy", "medium", "hard"]).right(1..);
    for (lang, members) in langs {
        let n_repos = group(members, |r| (r.org.clone(), r.repo.clone())).len();
        let c = counts(members);
        table.row([
            cell(lang),
            n_repos.to_string(),
            members.len().to_string(),
            c[0].to_string(),
            c[1].to_string(),
            c[2].to_string(),
        ]);
    }
    md.push_str(&table.to_string());
    md.push_str("\n![instances per language and difficulty](plots/languages.svg)\n\n");
    let categories: Vec<String> = langs.keys().cloned().collect();
    let series: Vec<(String, Vec<u64>)> = LABELS
        .iter()
        .enumerate()
        .map(|(k, l)| (l.as_str().to_owned(), langs.values().map(|m| counts(m)[k]).collect()))
        .collect();
    swe_forge_fs::write_file(
        plots.join("languages.svg"),
        svg::stacked_columns("Instances per language and difficulty", "language", "instances", &categories, &series),
    )?;
    Ok(())
}

/// The repositories table: instances per difficulty and the span of their merge dates.
fn repositories(md: &mut String, repos: &Groups<'_>) {
    md.push_str("## Repositories\n\n");
    let mut table =
        MarkdownTable::new(["repository", "language", "instances", "easy", "medium", "hard", "merged"]).right(2..6);
    for (repo, members) in repos {
        let c = counts(members);
        let lang = &members[0].lang;
        let mut dates: Vec<Day> = members.iter().filter_map(|r| r.merged).collect();
        dates.sort_unstable();
        let merged = match (dates.first(), dates.last()) {
            (Some(a), Some(b)) => format!("{a} to {b}"),
            _ => "unknown".into(),
        };
        table.row([
            cell(repo),
            cell(lang),
            members.len().to_string(),
            c[0].to_string(),
            c[1].to_string(),
            c[2].to_string(),
            cell(&merged),
        ]);
    }
    md.push_str(&table.to_string());
}

/// The difficulty table (people's labels and the heuristic's) and its plot.
fn difficulty(md: &mut String, plots: &Path, rows: &[&Row]) -> Result<(), CardError> {
    let c = counts(rows);
    let human: Vec<&Row> = rows.iter().copied().filter(|r| r.human).collect();
    let h = counts(&human);
    md.push_str("\n## Difficulty\n\n");
    let mut table = MarkdownTable::new(["label", "instances", "labelled by people", "by the heuristic"]).right(1..);
    for (k, l) in LABELS.iter().enumerate() {
        table.row([l.as_str().to_owned(), c[k].to_string(), h[k].to_string(), (c[k] - h[k]).to_string()]);
    }
    md.push_str(&table.to_string());
    md.push_str(
        "\nEasy: under 15 minutes for an experienced engineer; medium: 15 minutes to an hour; hard: more. \
         People's labels (a labels file or a review's time-to-fix answer) come first; the others come from \
         swe-forge's heuristic over the fix patch (files, hunks, changed lines, directories), calibrated \
         against Multi-SWE-bench's annotations. Each record keeps the features under `swe_forge.difficulty`.\n\n",
    );
    md.push_str("![difficulty](plots/difficulty.svg)\n\n");
    let labels: Vec<String> = LABELS.iter().map(|l| l.as_str().to_owned()).collect();
    let series =
        vec![("people".to_owned(), h.to_vec()), ("heuristic".to_owned(), (0..3).map(|k| c[k] - h[k]).collect())];
    swe_forge_fs::write_file(
        plots.join("difficulty.svg"),
        svg::stacked_columns("Difficulty", "label", "instances", &labels, &series),
    )?;
    Ok(())
}

/// The rejection reasons of every record and their plot; nothing when none was rejected.
fn rejection_reasons(md: &mut String, plots: &Path, reasons: &BTreeMap<String, u64>) -> Result<(), CardError> {
    if !reasons.is_empty() {
        let mut sorted: Vec<(String, u64)> = reasons.iter().map(|(k, v)| (k.clone(), *v)).collect();
        sorted.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        md.push_str("\n### Rejection reasons\n\n");
        let mut table = MarkdownTable::new(["reason", "records"]).right(1..);
        for (k, v) in &sorted {
            table.row([format!("`{k}`"), v.to_string()]);
        }
        md.push_str(&table.to_string());
        md.push_str("\n![rejection reasons](plots/rejections.svg)\n");
        swe_forge_fs::write_file(
            plots.join("rejections.svg"),
            svg::horizontal_bars("Rejection reasons", "records", &sorted),
        )?;
    }
    Ok(())
}

/// The patch size and test count quantiles and the plots of their distributions.
fn patch_sizes(md: &mut String, plots: &Path, rows: &[&Row]) -> Result<(), CardError> {
    md.push_str("\n## Patch size and tests\n\n");
    let mut table = MarkdownTable::new(["measure", "min", "p10", "median", "p90", "max", "mean"]).right(1..);
    type Measure = fn(&Row) -> u64;
    let measures: [(&str, Measure); 5] = [
        ("fix patch: changed lines", |r| r.fix_lines),
        ("fix patch: files", |r| r.fix_files),
        ("test patch: changed lines", |r| r.test_lines),
        ("FAIL_TO_PASS tests", |r| r.fixed),
        ("PASS_TO_PASS tests", |r| r.p2p),
    ];
    for (name, f) in measures {
        let mut xs: Vec<u64> = rows.iter().map(|r| f(r)).collect();
        xs.sort_unstable();
        table.row(std::iter::once(name.to_owned()).chain(quantiles(&xs)));
    }
    md.push_str(&table.to_string());
    md.push_str("\n![fix patch size](plots/fix-lines.svg)\n![FAIL_TO_PASS tests](plots/fixed-tests.svg)\n");
    let (names, n) = buckets(rows.iter().map(|r| r.fix_lines).collect());
    swe_forge_fs::write_file(
        plots.join("fix-lines.svg"),
        svg::stacked_columns(
            "Fix patch size",
            "changed lines (added + removed)",
            "instances",
            &names,
            &[("instances".into(), n)],
        ),
    )?;
    let (names, n) = buckets(rows.iter().map(|r| r.fixed).collect());
    swe_forge_fs::write_file(
        plots.join("fixed-tests.svg"),
        svg::stacked_columns(
            "FAIL_TO_PASS tests per instance",
            "FAIL_TO_PASS tests",
            "instances",
            &names,
            &[("instances".into(), n)],
        ),
    )?;
    Ok(())
}

/// A histogram over power-of-two buckets (`0`, `1`, `2-3`, ..., `1024+`): bucket names and counts.
fn buckets(xs: Vec<u64>) -> (Vec<String>, Vec<u64>) {
    let edges = [0u64, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024];
    let mut names = Vec::new();
    let mut n = vec![0u64; edges.len()];
    for (i, &e) in edges.iter().enumerate() {
        names.push(match edges.get(i + 1) {
            _ if e == 0 => "0".to_owned(),
            Some(&next) if next == e + 1 => e.to_string(),
            Some(&next) => format!("{e}-{}", next - 1),
            None => format!("{e}+"),
        });
    }
    for x in xs {
        let i = edges.iter().rposition(|&e| x >= e).unwrap_or(0);
        n[i] += 1;
    }
    (names, n)
}

fn group<'a, K: Ord>(rows: &[&'a Row], key: impl Fn(&Row) -> K) -> BTreeMap<K, Vec<&'a Row>> {
    let mut out: BTreeMap<K, Vec<&'a Row>> = BTreeMap::new();
    for r in rows {
        out.entry(key(r)).or_default().push(*r);
    }
    out
}

fn counts(rows: &[&Row]) -> [u64; 3] {
    let mut c = [0u64; 3];
    for r in rows {
        c[LABELS.iter().position(|l| *l == r.label).unwrap_or(1)] += 1;
    }
    c
}

/// Min, p10, median, p90, max and mean of sorted values, as table cells (`-` each when empty).
fn quantiles(sorted: &[u64]) -> [String; 6] {
    let (Some(&min), Some(&max)) = (sorted.first(), sorted.last()) else {
        return std::array::from_fn(|_| "-".to_owned());
    };
    let at = |q: f64| sorted[((q * (sorted.len() - 1) as f64).round() as usize).min(sorted.len() - 1)];
    let mean = sorted.iter().sum::<u64>() as f64 / sorted.len() as f64;
    [
        min.to_string(),
        at(0.1).to_string(),
        at(0.5).to_string(),
        at(0.9).to_string(),
        max.to_string(),
        format!("{mean:.1}"),
    ]
}

fn plural(n: usize, noun: &str) -> String {
    match (n, noun.strip_suffix('y')) {
        (1, _) => format!("1 {noun}"),
        (_, Some(stem)) => format!("{n} {stem}ies"),
        _ => format!("{n} {noun}s"),
    }
}

/// Markdown table cell text from a record (org, repository, language): HTML escaped, so a
/// record's text is shown and never rendered (Markdown renders raw HTML); [`MarkdownTable`]
/// escapes the pipes and makes line breaks spaces.
fn cell(s: &str) -> String {
    crate::svg::escape(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_are_six_cells_and_dashes_without_values() {
        assert_eq!(quantiles(&[]), ["-", "-", "-", "-", "-", "-"]);
        let xs: Vec<u64> = (1..=11).collect();
        assert_eq!(quantiles(&xs), ["1", "2", "6", "10", "11", "6.0"]);
    }

    #[test]
    fn card_of_the_devset() {
        let records = swe_forge_test_support::devset();
        let dir = tempfile::tempdir().unwrap();
        let options =
            ReportOptions { out_dir: dir.path().to_owned(), title: "Devset".into(), heuristic: Heuristic::CALIBRATED };
        let card = std::fs::read_to_string(write_report(&records, &options).unwrap()).unwrap();
        assert!(card.starts_with("# Devset\n\n22 instances from 13 repositories in 7 languages, in"), "{card}");
        assert!(card.contains("| serde-rs/serde | rust | 1 |"), "{card}");
        assert!(card.contains("| yhirose/cpp-httplib | cpp | 1 |"), "{card}");
        assert!(card.contains("| records in the file | 22 |  |"), "{card}");
        // The devset's records carry no quality signals until curate computes them.
        assert!(card.contains("| `solution_leak` | the issue text holds the fix | 0 | - |"), "{card}");
        assert!(
            card.contains("Shares are of the 0 kept instances that carry quality signals; 22 carry none"),
            "{card}"
        );
        let mut curated = records.clone();
        for r in &mut curated {
            r.swe_forge = Some(swe_forge_core::ForgeMeta::new(swe_forge_core::ValidationStatus::Accepted));
            swe_forge_quality::assess(r);
        }
        let card = std::fs::read_to_string(write_report(&curated, &options).unwrap()).unwrap();
        assert!(
            card.contains("| `unnamed_identifiers` | the tests need names the issue never gives | 2 | 9 % |"),
            "{card}"
        );
        assert!(card.contains("| `unspecific` | the issue names nothing the fix touches | 1 | 5 % |"), "{card}");
        assert!(card.contains("| none | no flag raised | 19 | 86 % |"), "{card}");
        for plot in ["languages", "difficulty", "fix-lines", "fixed-tests"] {
            let svg = std::fs::read_to_string(dir.path().join(format!("plots/{plot}.svg"))).unwrap();
            assert!(svg.starts_with("<svg") && svg.ends_with("</svg>\n"), "{plot}");
            assert!(card.contains(&format!("(plots/{plot}.svg)")), "{plot}");
        }
    }

    #[test]
    fn html_from_records_is_escaped_in_the_card() {
        let mut records = swe_forge_test_support::devset();
        records[0].org = "<img src=x onerror=alert(1)>".into();
        records[0].lang = Some("<script>alert(1)</script>|x\ny".into());
        let dir = tempfile::tempdir().unwrap();
        let options =
            ReportOptions { out_dir: dir.path().to_owned(), title: "Devset".into(), heuristic: Heuristic::CALIBRATED };
        let card = std::fs::read_to_string(write_report(&records, &options).unwrap()).unwrap();
        assert!(!card.contains("<img") && !card.contains("<script"), "{card}");
        assert!(card.contains("&lt;img src=x onerror=alert(1)&gt;/"), "{card}");
        assert!(card.contains("| &lt;script&gt;alert(1)&lt;/script&gt;\\|x y |"), "{card}");
    }
}
