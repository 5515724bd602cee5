//! Grading, in one place for every command: a run's output parsed with the record's parsers,
//! repeated runs merged (a test whose outcome differs between them is flaky), then either the
//! categories and keep rules of a validation ([`grade`]) or the verdict on a prediction
//! ([`grade_prediction`]). Validate, regrade, revalidate and evaluate all stand on these.

use std::collections::BTreeMap;
use std::path::Path;

use swe_forge_core::{
    ALL_TESTS, Categorized, ForgeMeta, Instance, LabelRule, Labels, PassRates, Phase, PhaseStatuses, RejectReason,
    Rejection, RunLogs, TestResult, TestStatus, Truncation, TruncationCause, categorize_with, phase_gap,
};
use swe_forge_logparse::{Framework, MsbNaming, ParsedLog, RepoNaming};

use super::flaky::merge;
use super::rules::keep_rules;
use crate::truncation::RunFacts;

/// Reasons decided by the keep rules; every other rejection (timeout, oom, ...) stands apart.
pub(crate) const KEEP_RULE_REASONS: [RejectReason; 7] = [
    RejectReason::NoTestsInFixRun,
    RejectReason::NoFixedTests,
    RejectReason::SuiteNeverRan,
    RejectReason::PassToFail,
    RejectReason::Anomaly,
    RejectReason::TruncatedRun,
    RejectReason::FixedTestsPassedAtBase,
];

/// Why the parsers of a record or recipe cannot be set up.
#[derive(Debug, thiserror::Error)]
pub enum ParsersError {
    /// The built-in Multi-SWE-bench naming rules do not load.
    #[error(transparent)]
    Naming(swe_forge_logparse::MsbNamingError),
    /// The record carries no `swe_forge` block, so it names no parser.
    #[error("the record has no swe_forge block")]
    NoForgeBlock,
    /// The record's `swe_forge` block names no log parser.
    #[error("the record names no log parser (no swe_forge.parser)")]
    NoParser,
}

/// The parsers of an instance: the log's, and the structured result files' when the recipe
/// collects them (they are preferred when a run left any), and how Multi-SWE-bench names the
/// repository's Go subtests and ctest targets (`pipelines/naming/msb.toml`), applied to every
/// parse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Parsers {
    /// Parses the run's log.
    pub log: Framework,
    /// Parses the run's result files.
    pub results: Option<Framework>,
    /// The repository's Multi-SWE-bench naming rules (Go subtests, ctest targets).
    pub naming: RepoNaming,
}

impl Parsers {
    /// The parsers `log` and `results` (Go subtests keep full names, ctest targets as printed).
    pub fn new(log: Framework, results: Option<Framework>) -> Parsers {
        Parsers { log, results, naming: RepoNaming::default() }
    }

    /// These parsers with the Multi-SWE-bench naming of repository `org/repo`, from the built-in
    /// rules.
    pub fn for_repository(self, org: &str, repo: &str) -> Result<Parsers, ParsersError> {
        let naming = MsbNaming::builtin().map_err(ParsersError::Naming)?;
        Ok(Parsers { naming: naming.repository(org, repo), ..self })
    }

    /// The parsers a validated record names, with its repository's naming.
    pub fn of(inst: &Instance) -> Result<Parsers, ParsersError> {
        let meta = inst.swe_forge.as_ref().ok_or(ParsersError::NoForgeBlock)?;
        let log = meta.parser.ok_or(ParsersError::NoParser)?;
        Parsers::new(log, meta.results_parser).for_repository(&inst.org, &inst.repo)
    }

    /// One run's statuses: from its result files when they hold a result and there is a parser
    /// for them, from its log otherwise; ctest targets as the test cases their binaries
    /// reported (`ParsedLog::read_binary_cases`) or the TAP they printed (`ParsedLog::read_target_tap`); when neither holds a test, from the log's verdict lines of a
    /// hand-written runner (`Testing x: OK`, run by the build where ctest finds nothing).
    pub fn parse(&self, log: &[u8], files: &[(String, Vec<u8>)]) -> ParsedLog {
        let from_log = || {
            let mut parsed = swe_forge_logparse::parse(self.log, log);
            parsed.name_as(self.log, self.naming);
            parsed
        };
        let ctest = matches!(self.log, Framework::Ctest) || self.results == Some(Framework::CtestJunit);
        let mut parsed = match (self.results, files.is_empty()) {
            (Some(rp), false) => {
                let mut parsed = swe_forge_logparse::parse_files(rp, files);
                parsed.name_ctest_targets(rp, self.naming.ctest);
                // Result files without a result of this parser's (an older ctest ignores
                // `--output-junit` but its gtest binaries still write their reports): the log.
                // Not when they say the tests were not built (the log would call them failed:
                // ctest ran the test launcher, which found the executable missing).
                if parsed.tests.is_empty() && !parsed.build_failed { from_log() } else { parsed }
            }
            _ => from_log(),
        };
        // ctest targets whose gtest binaries reported their cases are read as those cases; so are
        // meson's tests, whose recipe saves their commands in ctest's form.
        if ctest {
            parsed.read_binary_cases(files);
            parsed.read_target_tap(files);
            parsed.name_ctest_targets(Framework::Ctest, self.naming.ctest);
        } else if files.iter().any(|(path, _)| path == swe_forge_logparse::CTEST_TESTS_JSON) {
            parsed.read_binary_cases(files);
        }
        // A project's own test script may print another format than the recipe's parser reads
        // (a `node test/run.js` that prints mocha or TAP lines): the format the log shows.
        if parsed.tests.is_empty()
            && let Some(fw) = swe_forge_logparse::detect(log).filter(|fw| *fw != self.log)
        {
            let mut other = swe_forge_logparse::parse(fw, log);
            if !other.tests.is_empty() {
                other.name_as(fw, self.naming);
                other.warnings.push(format!(
                    "no {} result: {} test(s) read as {}, the format the log shows",
                    self.log.name(),
                    other.tests.len(),
                    fw.name()
                ));
                parsed = other;
            }
        }
        if parsed.tests.is_empty() {
            let verdicts = swe_forge_logparse::parse_verdicts(log);
            if !verdicts.tests.is_empty() {
                parsed.warnings.push(format!(
                    "no {} result: {} test(s) read from a hand-written runner's verdict lines (`Testing x: OK`)",
                    self.log.name(),
                    verdicts.tests.len()
                ));
                parsed.tests = verdicts.tests;
                parsed.msb_names = verdicts.msb_names;
            }
        }
        parsed
    }

    /// `parsed`, a kept parse of the log (made by any build, under any naming), with these
    /// parsers' naming.
    pub fn name(&self, mut parsed: ParsedLog) -> ParsedLog {
        parsed.name_as(self.log, self.naming);
        if let Some(rp) = self.results {
            parsed.name_ctest_targets(rp, self.naming.ctest);
        }
        parsed
    }

    /// Run `label` parsed again from what `logs` kept of it; None when its log is gone.
    pub fn reparse(&self, logs: &RunLogs, label: &str) -> Option<ParsedLog> {
        // A kept log is at most the run's log cap; anything longer (or not a file) is cut.
        let log = swe_forge_fs::read_file_capped(&logs.log(label), swe_forge_fs::READ_CAP).ok()?.bytes;
        Some(self.parse(&log, &read_tree(&logs.results(label))))
    }
}

/// What grading needs besides the statuses: the label rule and what the first run of each phase
/// (run, test, fix) tells of an early stop.
#[derive(Debug, Clone, Default)]
pub struct GradeInput {
    /// The label rule.
    pub rule: LabelRule,
    /// Exit code, timeout and log signs of the first run of each phase.
    pub facts: [RunFacts; 3],
    /// jest and vitest: the test files of the tree with the test patch ([`Labels::suite_files`]).
    pub suite_files: Option<u64>,
}

/// A suite of at least this many test files whose fix run reports fewer tests than a fifth of
/// them is truncated: every test file holds a test, so most of the suite did not run (seen: a
/// CLI library whose tests parse `process.argv` ended jest after one test of 1,477).
const SHORT_SUITE_MIN_FILES: u64 = 10;

/// The fix run's shortfall against the suite's test files, when it is one.
fn short_suite(c: &Categorized, input: &GradeInput) -> Option<Truncation> {
    let files = input.suite_files.filter(|f| *f >= SHORT_SUITE_MIN_FILES)?;
    let (reported, _) = phase_gap(&c.all, Phase::Fix);
    (reported * 5 < files).then(|| Truncation {
        phase: Phase::Fix,
        cause: TruncationCause::ShortSuite,
        reported,
        missing: files - reported,
        evidence: format!("{reported} tests reported for {files} test files"),
        tolerated: input.rule == LabelRule::Msb,
    })
}

/// A phase gap is a truncation when the phase misses at least a tenth of the tests, or 20.
fn significant(reported: u64, missing: u64) -> bool {
    missing > 0 && (missing * 10 >= reported + missing || missing >= 20)
}

/// The test and fix phases that did not report tests the other two phases reported, each with its
/// cause; under the strict rule a test phase is tolerated when it did not compile (the test
/// patch needs the fix) or crashed in a test that fails there and passes with the fix (a Go test
/// that panics on the unfixed code ends its package's binary: that failure is what the fix
/// repairs). Tolerated means the lists can stand on the other tests, never that the tests the
/// phase did not run count: those that passed at the base are in no list. Under
/// Multi-SWE-bench's rule every truncation is only recorded.
fn truncations(c: &Categorized, input: &GradeInput) -> Vec<Truncation> {
    let mut out = Vec::new();
    let crashed_in_a_fixed_test = c.fixed.values().any(|t| t.test == TestStatus::Fail);
    for (slot, phase) in [(1, Phase::Test), (2, Phase::Fix)] {
        let (reported, missing) = phase_gap(&c.all, phase);
        if !significant(reported, missing) {
            continue;
        }
        let (cause, evidence) = input.facts[slot].cause();
        let tolerated = input.rule == LabelRule::Msb
            || (phase == Phase::Test
                && (cause == TruncationCause::CompileFailure
                    || (cause == TruncationCause::Crash && crashed_in_a_fixed_test)));
        out.push(Truncation { phase, cause, reported, missing, evidence, tolerated });
    }
    out.extend(short_suite(c, input));
    out
}

/// Under the strict rule: no FAIL_TO_PASS, while the fix makes tests pass that passed at the base
/// and did not run with the test patch (PASS, NONE, PASS: set apart, `not_run_in_test`). The test
/// patch does not build without the fix and adds no test of its own that the fix makes pass (it
/// only rewrites tests that exist): no run shows a test failing, only the tree not building, and
/// any patch that makes it build passes them (seen: 25 Go tests whose only change renames a type).
/// This rejection stands in the keep rule's `no_fixed_tests`'s place and names the tests.
fn fixed_only_by_compiling(c: &Categorized) -> Option<Rejection> {
    if !c.fixed.is_empty() || c.not_run_in_test.is_empty() {
        return None;
    }
    let mut names: Vec<&str> = c.not_run_in_test.keys().map(String::as_str).take(5).collect();
    if c.not_run_in_test.len() > names.len() {
        names.push("…");
    }
    Some(Rejection::new(
        RejectReason::FixedTestsPassedAtBase,
        format!(
            "no FAIL_TO_PASS: the {} tests the fix makes pass all passed at the base and did not run with the test patch: {}",
            c.not_run_in_test.len(),
            names.join(", ")
        ),
    ))
}

/// A suite that never ran: no run printed a per-test result (`exit_code_graded`) and no phase's
/// test command passed (each found no test, failed or was killed). The keep rules would say
/// `no_fixed_tests` and `no_tests_in_fix_run`; this says what happened, with the exit codes and
/// what each phase's log shows of why (the runner's `No tests were found!!!`, a compiler's
/// `fatal error: cmocka.h: No such file or directory`), once when the phases agree.
fn suite_never_ran(exit_code_graded: bool, facts: &[RunFacts; 3]) -> Option<Rejection> {
    if !exit_code_graded || facts.iter().any(|f| f.exit_code_status() == TestStatus::Pass) {
        return None;
    }
    let codes: Vec<String> =
        facts.iter().map(|f| f.exit_code.map_or_else(|| "killed".to_owned(), |c| c.to_string())).collect();
    let why: Vec<Option<String>> = facts.iter().map(RunFacts::why_no_test).collect();
    let evidence = if why.iter().all(|w| w.is_some() && *w == why[0]) {
        format!(": {}", why[0].as_deref().unwrap_or_default())
    } else {
        let per_phase: Vec<String> = ["base", "test", "fix"]
            .iter()
            .zip(&why)
            .filter_map(|(phase, w)| Some(format!("{phase} run: {}", w.as_deref()?)))
            .collect();
        if per_phase.is_empty() { String::new() } else { format!(": {}", per_phase.join("; ")) }
    };
    Some(Rejection::new(
        RejectReason::SuiteNeverRan,
        format!("no phase reported a test (exit codes {} of the base, test and fix runs){evidence}", codes.join(", ")),
    ))
}

/// What the runs of a validation say: the categories, the three run results, the flaky tests
/// and the keep rules' verdict.
#[derive(Debug, Clone)]
pub struct Grade {
    /// Every test's transition and the categories.
    pub categorized: Categorized,
    /// The run, test and fix results.
    pub results: [TestResult; 3],
    /// Tests whose outcome differed between repeats of a phase, with their pass rates.
    pub flaky: BTreeMap<String, PassRates>,
    /// Share of tests with one outcome in every repeat.
    pub stability: f64,
    /// The keep rules' rejections; empty means keep.
    pub rejections: Vec<Rejection>,
    /// How the lists were labelled.
    pub labels: Labels,
    /// Network lines of the three phases' first runs (the gold and control runs come later).
    pub network: Vec<String>,
}

/// Grades the statuses of every attempt of the three phases (`runs[phase][attempt]`).
pub fn grade(runs: &[Vec<PhaseStatuses>; 3], input: &GradeInput) -> Grade {
    // No run printed a per-test result: each phase is one test, its command's exit code.
    let exit_code_graded =
        runs.iter().any(|phase| !phase.is_empty()) && runs.iter().flatten().all(PhaseStatuses::is_empty);
    let by_exit_code: [Vec<PhaseStatuses>; 3];
    let runs = if exit_code_graded {
        by_exit_code = std::array::from_fn(|i| {
            vec![PhaseStatuses::from([(ALL_TESTS.to_owned(), input.facts[i].exit_code_status())])]
        });
        &by_exit_code
    } else {
        runs
    };
    let merged = merge(runs);
    let [run, test, fix] = &merged.phases;
    let categorized = categorize_with(run, test, fix, input.rule);
    let mut rejections = keep_rules(&categorized, fix);
    if let Some(r) = suite_never_ran(exit_code_graded, &input.facts) {
        rejections.retain(|r| !matches!(r.reason, RejectReason::NoFixedTests | RejectReason::NoTestsInFixRun));
        rejections.insert(0, r);
    }
    if input.rule == LabelRule::Strict
        && let Some(r) = fixed_only_by_compiling(&categorized)
        && let Some(slot) = rejections.iter_mut().find(|r| r.reason == RejectReason::NoFixedTests)
    {
        *slot = r;
    }
    let truncated = truncations(&categorized, input);
    for t in truncated.iter().filter(|t| !t.tolerated && t.cause == TruncationCause::ShortSuite) {
        rejections.push(Rejection::new(
            RejectReason::TruncatedRun,
            format!(
                "the fix run reported {} tests for a suite of {} test files: most of the suite did not run (short_suite)",
                t.reported,
                t.reported + t.missing
            ),
        ));
    }
    for t in truncated.iter().filter(|t| !t.tolerated && t.cause != TruncationCause::ShortSuite) {
        let evidence = if t.evidence.is_empty() { String::new() } else { format!(": {}", t.evidence) };
        rejections.push(Rejection::new(
            RejectReason::TruncatedRun,
            format!(
                "the {} run reported {} tests and missed {} that the other runs reported ({}{evidence})",
                t.phase.as_str(),
                t.reported,
                t.missing,
                t.cause.as_str()
            ),
        ));
    }
    let n2p_share =
        (!categorized.fixed.is_empty()).then(|| categorized.n2p.len() as f64 / categorized.fixed.len() as f64);
    // A phase graded by its exit code whose log says no test ran: its `all tests` is NONE.
    let no_tests_ran = Phase::ALL
        .into_iter()
        .zip(&input.facts)
        .filter(|_| exit_code_graded)
        .filter_map(|(phase, f)| Some((phase, f.no_tests.clone()?)))
        .collect();
    let labels = Labels {
        rule: input.rule,
        not_run_in_test: categorized.not_run_in_test.clone(),
        truncated,
        n2p_share,
        exit_code_graded,
        no_tests_ran,
        suite_files: input.suite_files,
        unstable: BTreeMap::new(),
    };
    let mut network: Vec<String> = Vec::new();
    for line in input.facts.iter().flat_map(|f| &f.network) {
        if !network.contains(line) && network.len() < 5 {
            network.push(line.clone());
        }
    }
    Grade {
        results: [TestResult::from_statuses(run), TestResult::from_statuses(test), TestResult::from_statuses(fix)],
        categorized,
        flaky: merged.flaky,
        stability: merged.stability,
        rejections,
        labels,
        network,
    }
}

impl Grade {
    /// Puts the categories, run results and flaky tests on the record; returns the keep rules'
    /// rejections.
    pub fn record(self, inst: &mut Instance, meta: &mut ForgeMeta) -> Vec<Rejection> {
        if self.labels.exit_code_graded {
            // Each run graded by its exit code holds one test, `all tests`, unless it reported none.
            for r in meta.runs.iter_mut() {
                let slot = Phase::ALL.iter().position(|p| *p == r.phase).unwrap_or(0);
                let result = &self.results[slot];
                r.tests = u64::from(result.passed_count + result.failed_count + result.skipped_count > 0);
            }
        }
        let [run, test, fix] = self.results;
        inst.set_results(&self.categorized, run, test, fix);
        meta.flaky = self.flaky;
        meta.stability = Some(self.stability);
        meta.labels = Some(self.labels);
        if !self.network.is_empty() {
            meta.evidence.get_or_insert_with(Default::default).network = self.network;
        }
        self.rejections
    }
}

/// Of `names` (canonical id -> Multi-SWE-bench name, from the parses of a validation's runs), those
/// of the tests `inst`'s three run results hold: the record's `swe_forge.msb_names`, from which
/// its lists can be named as Multi-SWE-bench names them without the kept logs.
pub fn named_results(inst: &Instance, mut names: BTreeMap<String, String>) -> BTreeMap<String, String> {
    let held: std::collections::BTreeSet<&str> = [&inst.run_result, &inst.test_patch_result, &inst.fix_patch_result]
        .into_iter()
        .flat_map(|r| r.passed_tests.iter().chain(&r.failed_tests).chain(&r.skipped_tests))
        .map(String::as_str)
        .collect();
    names.retain(|id, _| held.contains(id.as_str()));
    names
}

/// The verdict on one prediction: every FAIL_TO_PASS and PASS_TO_PASS test must pass. A listed
/// test whose outcome differs between the attempts is flaky and counts neither way.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Verdict {
    /// Every listed test that is not flaky passed (and at least one listed test is not flaky).
    pub resolved: bool,
    /// FAIL_TO_PASS tests that passed.
    pub f2p_passed: Vec<String>,
    /// FAIL_TO_PASS tests that did not pass, with the status seen.
    pub f2p_failed: BTreeMap<String, TestStatus>,
    /// PASS_TO_PASS tests that passed.
    pub p2p_passed: Vec<String>,
    /// PASS_TO_PASS tests that did not pass, with the status seen.
    pub p2p_failed: BTreeMap<String, TestStatus>,
    /// Listed tests whose outcome differed between attempts, with their pass rate.
    pub flaky: BTreeMap<String, f64>,
    /// Listed tests the run did not report under their listed id, graded by the unlisted test
    /// that ran under the same stable id (`swe_forge_logparse::stable_ids`): listed id -> id
    /// that ran. A record written before doctest ids lost their line lists
    /// `src/map.rs - Map (line 1488)`; the run reports `src/map.rs - Map`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub matched: BTreeMap<String, String>,
}

/// The attempts of an evaluation in the naming of the record's lists: by canonical id (a record
/// as validation wrote it), or by Multi-SWE-bench name (a dataset exported with `--naming msb`),
/// whichever finds more of the `listed` tests; on a tie (a run that reported no test finds none
/// either way) Multi-SWE-bench's names when `msb_on_tie`, canonical ids otherwise.
pub(crate) fn in_naming_of(
    listed: &[&String],
    canonical: Vec<PhaseStatuses>,
    msb: Vec<PhaseStatuses>,
    msb_on_tie: bool,
) -> Vec<PhaseStatuses> {
    let stable = swe_forge_logparse::stable_ids(listed.iter().map(|n| n.as_str()));
    let found = |attempts: &[PhaseStatuses]| {
        let ran = |name: &str| attempts.iter().any(|a| a.contains_key(name));
        listed.iter().filter(|name| ran(name) || stable.get(name.as_str()).is_some_and(|s| ran(s))).count()
    };
    match found(&msb).cmp(&found(&canonical)) {
        std::cmp::Ordering::Greater => msb,
        std::cmp::Ordering::Less => canonical,
        std::cmp::Ordering::Equal if msb_on_tie => msb,
        std::cmp::Ordering::Equal => canonical,
    }
}

/// Of the `listed` tests absent from a run (`reported`: whether the run reported an id), those
/// an unlisted test that ran stands for: the one under the listed id's stable id
/// (`swe_forge_logparse::stable_ids` over the listed ids and `record_ran`, the record's own fix
/// run, whose ids number an item's line-numbered doctests as the run numbers its own). Listed id
/// -> the id that ran.
fn stable_matches(
    listed: &[&String],
    record_ran: &[&String],
    reported: impl Fn(&str) -> bool,
) -> BTreeMap<String, String> {
    let listed_set: std::collections::BTreeSet<&str> = listed.iter().map(|n| n.as_str()).collect();
    let stable =
        swe_forge_logparse::stable_ids(listed_set.iter().copied().chain(record_ran.iter().map(|n| n.as_str())));
    let mut matched = BTreeMap::new();
    let mut taken = std::collections::BTreeSet::new();
    for name in listed.iter().filter(|n| !reported(n)) {
        let Some(alias) = stable.get(name.as_str()) else { continue };
        if !listed_set.contains(alias.as_str()) && reported(alias) && taken.insert(alias.clone()) {
            matched.insert((*name).clone(), alias.clone());
        }
    }
    matched
}

/// Grades the attempts of an evaluation run against the record's lists. A listed test the run
/// does not report under its id takes the status of the unlisted test that ran under the same
/// stable id ([`Verdict::matched`]); `record_ran` (the ids of the record's fix run, may be empty)
/// numbers a listed line-numbered doctest among its item's others.
pub fn grade_prediction<'a>(
    attempts: Vec<PhaseStatuses>,
    f2p: impl IntoIterator<Item = &'a String>,
    p2p: impl IntoIterator<Item = &'a String>,
    record_ran: impl IntoIterator<Item = &'a String>,
) -> Verdict {
    // An evaluation run is the fix phase with the model's patch in place of the fix patch.
    let merged = merge(&[Vec::new(), Vec::new(), attempts]);
    let (f2p, p2p): (Vec<&String>, Vec<&String>) = (f2p.into_iter().collect(), p2p.into_iter().collect());
    let listed: Vec<&String> = f2p.iter().chain(&p2p).copied().collect();
    let record_ran: Vec<&String> = record_ran.into_iter().collect();
    let reported = |id: &str| merged.phases[2].contains_key(id) || merged.flaky.contains_key(id);
    let mut v = Verdict { matched: stable_matches(&listed, &record_ran, reported), ..Verdict::default() };
    for (list, passed, failed) in
        [(f2p, &mut v.f2p_passed, &mut v.f2p_failed), (p2p, &mut v.p2p_passed, &mut v.p2p_failed)]
    {
        for name in list {
            let ran = v.matched.get(name).unwrap_or(name);
            if let Some(rates) = merged.flaky.get(ran) {
                v.flaky.insert(name.clone(), rates.fix.unwrap_or(0.0));
                continue;
            }
            match merged.phases[2].get(ran).copied().unwrap_or(TestStatus::None) {
                TestStatus::Pass => passed.push(name.clone()),
                other => {
                    failed.insert(name.clone(), other);
                }
            }
        }
    }
    v.resolved =
        v.f2p_failed.is_empty() && v.p2p_failed.is_empty() && !(v.f2p_passed.is_empty() && v.p2p_passed.is_empty());
    v
}

/// The regular files under `dir`, relative path -> content, sorted (none when `dir` is absent):
/// symlinks out of it, loops, FIFOs and devices left out, each file cut to its head and tail
/// beyond `swe_forge_fs::READ_CAP` (`swe_forge_fs::read_tree`).
fn read_tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    match swe_forge_fs::read_tree(dir, swe_forge_fs::READ_CAP) {
        Ok(tree) => {
            for s in &tree.skipped {
                tracing::warn!(dir = %dir.display(), "{s}");
            }
            tree.files
        }
        Err(e) => {
            tracing::warn!(dir = %dir.display(), error = %e, "cannot read result files");
            Vec::new()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use TestStatus::*;

    fn p(items: &[(&str, TestStatus)]) -> PhaseStatuses {
        items.iter().map(|(n, s)| (n.to_string(), *s)).collect()
    }

    fn facts(exit_codes: [Option<i64>; 3]) -> [RunFacts; 3] {
        exit_codes.map(|exit_code| RunFacts { exit_code, ..RunFacts::default() })
    }

    /// A suite whose runs print no per-test result is one test, `all tests`, graded by the test
    /// command's exit code and marked so; one per-test result anywhere keeps per-test grading.
    #[test]
    fn runs_without_per_test_results_are_graded_by_their_exit_codes() {
        let input = |codes: [Option<i64>; 3]| GradeInput {
            rule: LabelRule::Strict,
            facts: facts(codes),
            suite_files: Option::None,
        };
        let silent: [Vec<PhaseStatuses>; 3] = [vec![p(&[])], vec![p(&[]), p(&[])], vec![p(&[])]];
        let g = grade(&silent, &input([Some(0), Some(2), Some(0)]));
        assert!(g.rejections.is_empty(), "{:?}", g.rejections);
        assert!(g.labels.exit_code_graded);
        assert_eq!(g.categorized.f2p.keys().collect::<Vec<_>>(), [ALL_TESTS]);
        // The fix does not make the command succeed: no fixed test.
        let g = grade(&silent, &input([Some(0), Some(2), Some(2)]));
        assert!(g.rejections.iter().any(|r| r.reason == RejectReason::NoFixedTests), "{:?}", g.rejections);
        // A test run killed by its timeout reported nothing: under the strict rule not FAIL_TO_PASS.
        let g = grade(&silent, &input([Some(0), Option::None, Some(0)]));
        assert!(g.categorized.f2p.is_empty(), "{:?}", g.categorized);
        // A run whose runner found no test (ctest exits 0) reports nothing, whatever its exit code.
        let mut facts = input([Some(0), Some(0), Some(0)]).facts;
        for f in &mut facts {
            f.no_tests = Some("No tests were found!!!".into());
        }
        let g = grade(&silent, &GradeInput { facts, ..input([Option::None; 3]) });
        assert!(g.categorized.all.values().all(|t| t.run == None && t.fix == None), "{:?}", g.categorized);
        assert_eq!(g.rejections.len(), 1, "{:?}", g.rejections);
        assert_eq!(g.rejections[0].reason, RejectReason::SuiteNeverRan);
        assert_eq!(
            g.rejections[0].detail,
            "no phase reported a test (exit codes 0, 0, 0 of the base, test and fix runs): No tests were found!!!"
        );
        assert_eq!(g.labels.no_tests_ran.get(&Phase::Fix).map(String::as_str), Some("No tests were found!!!"));
        // One per-test result: graded per test, as before.
        let some: [Vec<PhaseStatuses>; 3] = [vec![p(&[])], vec![p(&[("t", Fail)])], vec![p(&[("t", Pass)])]];
        let g = grade(&some, &input([Some(0), Some(2), Some(0)]));
        assert!(!g.labels.exit_code_graded);
        assert_eq!(g.categorized.f2p.keys().collect::<Vec<_>>(), ["t"]);
    }

    /// A suite that never ran in any phase is rejected `suite_never_ran` with what the logs show,
    /// not `no_fixed_tests`; one phase whose command passed, or one per-test result, keeps the
    /// keep rules' reasons.
    #[test]
    fn a_suite_that_never_ran_says_so_with_the_log_line_that_shows_why() {
        let silent: [Vec<PhaseStatuses>; 3] = [vec![p(&[])], vec![p(&[])], vec![p(&[])]];
        let cmocka = b"gcc -c tests/test_list.c
tests/test_list.c:3:10: fatal error: cmocka.h: No such file or directory
    3 | #include <cmocka.h>
compilation terminated.
make: *** [Makefile:12: tests/test_list.o] Error 1
";
        let run = |log: &[u8], code| RunFacts::of(log, Some(code), false, "make check");
        let input = |facts| GradeInput { facts, ..GradeInput::default() };
        let g = grade(&silent, &input([run(cmocka, 2), run(cmocka, 2), run(cmocka, 2)]));
        let reasons: Vec<RejectReason> = g.rejections.iter().map(|r| r.reason).collect();
        assert_eq!(reasons, [RejectReason::SuiteNeverRan], "{:?}", g.rejections);
        assert_eq!(
            g.rejections[0].detail,
            "no phase reported a test (exit codes 2, 2, 2 of the base, test and fix runs): \
             tests/test_list.c:3:10: fatal error: cmocka.h: No such file or directory"
        );
        // ctest found nothing at the base; the test patch's code did not build, the fix's neither.
        let ctest = RunFacts::of(
            b"Test project /testbed/build
No tests were found!!!
",
            Some(0),
            false,
            "ctest",
        );
        let cmake = b"CMake Error at tests/CMakeLists.txt:4 (add_executable):
  Cannot find source file: t.c
";
        let g = grade(&silent, &input([ctest, run(cmake, 1), run(b"", 1)]));
        assert_eq!(g.rejections.iter().map(|r| r.reason).collect::<Vec<_>>(), [RejectReason::SuiteNeverRan]);
        assert_eq!(
            g.rejections[0].detail,
            "no phase reported a test (exit codes 0, 1, 1 of the base, test and fix runs): base run: No tests were \
             found!!!; test run: CMake Error at tests/CMakeLists.txt:4 (add_executable):"
        );
        // The command passed at the base: the suite ran, nothing was fixed.
        let g = grade(&silent, &input([run(b"", 0), run(cmocka, 2), run(cmocka, 2)]));
        assert_eq!(g.rejections.iter().map(|r| r.reason).collect::<Vec<_>>(), [RejectReason::NoFixedTests]);
        // One per-test result anywhere: the keep rules' reasons.
        let one: [Vec<PhaseStatuses>; 3] = [vec![p(&[("t", Fail)])], vec![p(&[])], vec![p(&[])]];
        let g = grade(&one, &input([run(cmocka, 2), run(cmocka, 2), run(cmocka, 2)]));
        let reasons: Vec<RejectReason> = g.rejections.iter().map(|r| r.reason).collect();
        assert_eq!(reasons, [RejectReason::NoTestsInFixRun, RejectReason::NoFixedTests], "{:?}", g.rejections);
    }

    #[test]
    fn a_run_whose_parser_finds_nothing_is_read_from_its_runners_verdict_lines() {
        let p = Parsers::new(Framework::Ctest, Option::None);
        // jsoncpp before 2019: its runners run as build steps, ctest finds no test.
        let built = b"[1/2] cd /testbed/build && ./jsoncpp_test\nTesting ValueTest/null: OK\nTesting ValueTest/ints: FAILED\nTest project /testbed/build\nNo tests were found!!!\n";
        let parsed = p.parse(built, &[]);
        assert_eq!(parsed.tests.len(), 2, "{parsed:?}");
        assert_eq!(parsed.tests["ValueTest/ints"], Fail);
        assert!(parsed.warnings.iter().any(|w| w.contains("verdict lines")), "{:?}", parsed.warnings);
        // ctest's own results win: the verdict lines are not read beside them.
        let both = b"Testing ValueTest/null: OK\n    Start 1: unit\n1/1 Test #1: unit .............   Passed    0.01 sec\n\n100% tests passed, 0 tests failed out of 1\n";
        let parsed = p.parse(both, &[]);
        assert_eq!(parsed.tests.keys().collect::<Vec<_>>(), ["unit"], "{parsed:?}");
    }

    #[test]
    fn ctest_targets_are_read_as_the_gtest_cases_their_binaries_reported() {
        let p = Parsers::new(Framework::Ctest, Some(Framework::CtestJunit));
        let log = b"    Start 1: unit\n1/1 Test #1: unit .............***Failed    0.01 sec\n";
        let json = br#"{"tests":[{"name":"unit","command":["/testbed/build/unit_tests"]}]}"#;
        let report = b"<testsuites name=\"AllTests\"><testsuite name=\"Ops\">\
            <testcase name=\"Adds\" status=\"run\" result=\"completed\" classname=\"Ops\"/>\
            <testcase name=\"Muls\" status=\"run\" result=\"completed\" classname=\"Ops\"><failure message=\"x\"/></testcase>\
            </testsuite></testsuites>";
        let junit = b"<testsuite><testcase name=\"unit\" classname=\"unit\" status=\"fail\"><failure message=\"\"/></testcase></testsuite>";
        let gtest = ("gtest/unit_tests.xml".to_owned(), report.to_vec());
        let targets = ("ctest-tests.json".to_owned(), json.to_vec());
        let want = [("Ops.Adds", Pass), ("Ops.Muls", Fail)];
        let got = |parsed: &ParsedLog| parsed.tests.iter().map(|(k, v)| (k.clone(), *v)).collect::<Vec<_>>();
        let want: Vec<(String, TestStatus)> = want.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        // From ctest's JUnit report, and from its log when that report is missing (a ctest
        // older than 3.21 ignores `--output-junit`; the gtest reports are there all the same).
        let with_junit = p.parse(log, &[("ctest.xml".to_owned(), junit.to_vec()), gtest.clone(), targets.clone()]);
        assert_eq!(got(&with_junit), want, "{with_junit:?}");
        let from_log = p.parse(log, &[gtest, targets]);
        assert_eq!(got(&from_log), want, "{from_log:?}");
        assert!(from_log.warnings.iter().any(|w| swe_forge_logparse::is_grain_note(w)), "{:?}", from_log.warnings);
    }

    #[test]
    fn a_run_whose_parser_finds_nothing_is_read_in_the_format_its_log_shows() {
        // A project's own `npm test` script (the js-npm recipe reads TAP) that runs mocha.
        let p = Parsers::new(Framework::Tap, Option::None);
        let log = "> node test/run.js\n\n  Command\n    ✔ parses options\n    1) rejects unknown\n\n  1 passing (5ms)\n  1 failing\n";
        let parsed = p.parse(log.as_bytes(), &[]);
        assert_eq!(parsed.tests.get("Command > rejects unknown"), Some(&Fail), "{parsed:?}");
        assert_eq!(parsed.tests.get("Command > parses options"), Some(&Pass));
        assert!(parsed.warnings.iter().any(|w| w.contains("read as mocha")), "{:?}", parsed.warnings);
        // TAP itself is read as TAP.
        let parsed = p.parse(b"TAP version 13\nok 1 - a\nnot ok 2 - b\n1..2\n", &[]);
        assert_eq!(parsed.tests.len(), 2, "{parsed:?}");
        assert!(parsed.warnings.iter().all(|w| !w.contains("read as")), "{:?}", parsed.warnings);
    }

    #[test]
    fn a_prediction_resolves_when_every_listed_test_passes() {
        let f2p = vec!["f".to_owned()];
        let p2p = vec!["a".to_owned(), "b".to_owned()];
        let v =
            grade_prediction(vec![p(&[("f", Pass), ("a", Pass), ("b", Pass), ("x", Fail)])], &f2p, &p2p, Option::None);
        assert!(v.resolved, "{v:?}");
        assert_eq!(v.f2p_passed, ["f"]);
        let v = grade_prediction(vec![p(&[("f", Fail), ("a", Pass)])], &f2p, &p2p, Option::None);
        assert!(!v.resolved);
        assert_eq!(v.f2p_failed, BTreeMap::from([("f".to_owned(), Fail)]));
        assert_eq!(v.p2p_failed, BTreeMap::from([("b".to_owned(), None)]), "a test that did not run failed");
        // A listed test that differs between attempts is flaky, not against the prediction.
        let v = grade_prediction(
            vec![p(&[("f", Pass), ("a", Pass), ("b", Fail)]), p(&[("f", Pass), ("a", Pass), ("b", Pass)])],
            &f2p,
            &p2p,
            Option::None,
        );
        assert!(v.resolved, "{v:?}");
        assert_eq!(v.flaky, BTreeMap::from([("b".to_owned(), 0.5)]));
        // Nothing listed passed or failed: not resolved.
        assert!(!grade_prediction(vec![p(&[])], &Vec::new(), &Vec::new(), Option::None).resolved);
    }

    /// A record written before doctest ids lost their line lists libtest's names; the model's
    /// run (one comment line added above the doctests) names them by file and item. Each listed
    /// doctest takes the status of the one that ran under its stable id, and the verdict says so.
    #[test]
    fn a_listed_doctest_is_graded_by_the_test_with_its_stable_id() {
        let names = |xs: &[&str]| xs.iter().map(|x| (*x).to_owned()).collect::<Vec<_>>();
        let map = "c::doc::src/map.rs - map::Map<K,V,S>";
        // Map has two doctests (lines 1488 and 1500); the fix made the second pass.
        let f2p = names(&[&format!("{map} (line 1500)")]);
        let p2p = names(&[&format!("{map} (line 1488)"), "c::tests::a"]);
        let record_ran = names(&[&format!("{map} (line 1488)"), &format!("{map} (line 1500)"), "c::tests::a"]);
        let run = |second: TestStatus| {
            vec![p(&[(map, Pass), (&format!("{map} (doctest 2)"), second), ("c::tests::a", Pass)])]
        };
        let v = grade_prediction(run(Pass), &f2p, &p2p, &record_ran);
        assert!(v.resolved, "{v:?}");
        assert_eq!(v.f2p_passed, f2p, "the record's ids stay in the verdict");
        assert_eq!(
            v.matched,
            BTreeMap::from([
                (format!("{map} (line 1488)"), map.to_owned()),
                (format!("{map} (line 1500)"), format!("{map} (doctest 2)")),
            ])
        );
        // The status that counts is the matched test's.
        let v = grade_prediction(run(Fail), &f2p, &p2p, &record_ran);
        assert!(!v.resolved);
        assert_eq!(v.f2p_failed, BTreeMap::from([(f2p[0].clone(), Fail)]));
        // Without the record's fix run, the lists alone number the item's doctests.
        assert!(grade_prediction(run(Pass), &f2p, &p2p, Option::None).matched.len() == 2);
        // A record already in stable ids: nothing to match.
        let (f2p, p2p) = (names(&[&format!("{map} (doctest 2)")]), names(&[map, "c::tests::a"]));
        let v = grade_prediction(run(Pass), &f2p, &p2p, Option::None);
        assert!(v.resolved && v.matched.is_empty(), "{v:?}");
        // A listed test that ran under its own id is never matched elsewhere, a listed id is
        // never the stand-in of another, and a test without a stable form has none.
        let listed = names(&[&format!("{map} (line 7)"), map, "c::tests::gone"]);
        let v = grade_prediction(vec![p(&[(map, Pass)])], &listed[..1], &listed[1..], Option::None);
        assert!(v.matched.is_empty(), "{v:?}");
        assert_eq!(v.f2p_failed.keys().collect::<Vec<_>>(), [&listed[0]]);
        assert_eq!(v.p2p_failed.keys().collect::<Vec<_>>(), ["c::tests::gone"]);
        // A matched test that was flaky is flaky under the listed id.
        let attempts = vec![p(&[(map, Pass)]), p(&[(map, Fail)])];
        let listed = names(&[&format!("{map} (line 7)")]);
        let v = grade_prediction(attempts, &listed, &Vec::new(), Option::None);
        assert_eq!(v.flaky.keys().collect::<Vec<_>>(), [&listed[0]]);
        assert_eq!(v.matched[&listed[0]], map);
    }

    #[test]
    fn a_prediction_is_graded_in_the_naming_of_the_record_s_lists() {
        // One run of a Go repository with full subtest names: canonical ids and Multi-SWE-bench names.
        let canonical = || vec![p(&[("p::TestA", Pass), ("p::TestA/case", Pass), ("p::TestF", Pass)])];
        let msb = || vec![p(&[("TestA", Pass), ("TestA/case", Pass), ("TestF", Pass)])];
        let names = |xs: &[&str]| xs.iter().map(|x| (*x).to_owned()).collect::<Vec<_>>();
        // A record as validation wrote it.
        let ids = names(&["p::TestF", "p::TestA"]);
        let listed: Vec<&String> = ids.iter().collect();
        assert_eq!(in_naming_of(&listed, canonical(), msb(), false), canonical());
        // A dataset exported with `--naming msb`: graded on Multi-SWE-bench names, so resolved.
        let msb_names = names(&["TestF", "TestA", "TestA/case"]);
        let listed: Vec<&String> = msb_names.iter().collect();
        let attempts = in_naming_of(&listed, canonical(), msb(), false);
        assert_eq!(attempts, msb());
        assert!(grade_prediction(attempts, &msb_names[..1], &msb_names[1..], Option::None).resolved);
        assert!(
            !grade_prediction(canonical(), &msb_names[..1], &msb_names[1..], Option::None).resolved,
            "the other naming finds none"
        );
        // A record's line-numbered doctest is found in the canonical run under its stable id.
        let rust = names(&["c::doc::src/lib.rs - f (line 3)"]);
        let listed: Vec<&String> = rust.iter().collect();
        let run = vec![p(&[("c::doc::src/lib.rs - f", Pass)])];
        assert_eq!(in_naming_of(&listed, run.clone(), vec![p(&[])], true), run);
        // A run that reported nothing: canonical, and unresolved either way.
        assert_eq!(in_naming_of(&listed, vec![p(&[])], vec![p(&[])], false), vec![p(&[])]);
    }

    #[test]
    fn validation_grades_categories_and_keep_rules() {
        let runs =
            [vec![p(&[("a", Pass)])], vec![p(&[("a", Pass), ("f", Fail)])], vec![p(&[("a", Pass), ("f", Pass)])]];
        let g = grade(&runs, &GradeInput::default());
        assert!(g.rejections.is_empty());
        assert_eq!(g.categorized.f2p.keys().collect::<Vec<_>>(), ["f"]);
        assert_eq!(g.results[2].passed_count, 2);
        let runs = [vec![p(&[("a", Pass)])], vec![p(&[("a", Pass)])], vec![p(&[("a", Pass)])]];
        assert_eq!(grade(&runs, &GradeInput::default()).rejections[0].reason, RejectReason::NoFixedTests);
    }

    /// Ten tests pass on the base; the test run stops after the first (it fails); with the fix
    /// all ten pass.
    fn stopped_early() -> [Vec<PhaseStatuses>; 3] {
        let names: Vec<String> = (0..10).map(|i| format!("suite > test{i}")).collect();
        let all = |s: TestStatus| names.iter().map(|n| (n.clone(), s)).collect::<PhaseStatuses>();
        [vec![all(Pass)], vec![p(&[("suite > test0", Fail)])], vec![all(Pass)]]
    }

    #[test]
    fn a_jest_run_of_one_test_for_a_suite_of_many_files_is_a_short_suite() {
        // Every phase reports the same one test: no phase gap, but 40 test files in the tree.
        let one = || vec![p(&[("test/a.test.js > parses", Fail)])];
        let fixed = || vec![p(&[("test/a.test.js > parses", Pass)])];
        let runs = [one(), one(), fixed()];
        let input = GradeInput { suite_files: Some(40), ..GradeInput::default() };
        let g = grade(&runs, &input);
        let t = g.labels.truncated.iter().find(|t| t.cause == TruncationCause::ShortSuite).expect("labelled");
        assert_eq!((t.phase, t.reported, t.missing, t.tolerated), (Phase::Fix, 1, 39, false));
        assert_eq!(g.labels.suite_files, Some(40));
        assert_eq!(g.rejections.iter().map(|r| r.reason).collect::<Vec<_>>(), [RejectReason::TruncatedRun]);
        assert!(g.rejections[0].detail.contains("1 tests for a suite of 40 test files"), "{}", g.rejections[0].detail);
        // Under msb it is recorded only; a suite of few files, or a run reporting a fifth of
        // them, is no short suite.
        let msb = grade(&runs, &GradeInput { rule: LabelRule::Msb, ..input.clone() });
        assert!(msb.rejections.is_empty() && msb.labels.truncated[0].tolerated);
        for files in [Option::None, Some(9), Some(5)] {
            let g = grade(&runs, &GradeInput { suite_files: files, ..GradeInput::default() });
            assert!(g.labels.truncated.is_empty() && g.rejections.is_empty(), "{files:?}: {:?}", g.rejections);
        }
        let names: Vec<String> = (0..8).map(|i| format!("t{i}")).collect();
        let eight = |s| vec![names.iter().map(|n| (n.clone(), s)).collect::<PhaseStatuses>()];
        let mut many = [eight(Pass), eight(Pass), eight(Pass)];
        many[0][0].insert("t8".into(), Fail);
        many[1][0].insert("t8".into(), Fail);
        many[2][0].insert("t8".into(), Pass);
        let g = grade(&many, &GradeInput { suite_files: Some(40), ..GradeInput::default() });
        assert!(g.labels.truncated.is_empty(), "9 tests for 40 files is more than a fifth");
    }

    #[test]
    fn a_test_run_that_stopped_early_is_rejected_not_labelled() {
        let bail = RunFacts::of(b"  1 failing", Some(1), false, "mocha --bail");
        let input = GradeInput { facts: [RunFacts::default(), bail, RunFacts::default()], ..GradeInput::default() };
        let g = grade(&stopped_early(), &input);
        // Only the test that failed is FAIL_TO_PASS; the nine it never reached are set apart.
        assert_eq!(g.categorized.fixed.keys().collect::<Vec<_>>(), ["suite > test0"]);
        assert_eq!(g.labels.not_run_in_test.len(), 9);
        let t = &g.labels.truncated[0];
        assert_eq!(
            (t.phase, t.cause, t.reported, t.missing, t.tolerated),
            (Phase::Test, TruncationCause::FailFast, 1, 9, false)
        );
        assert_eq!(g.rejections.iter().map(|r| r.reason).collect::<Vec<_>>(), [RejectReason::TruncatedRun]);
        assert!(g.rejections[0].detail.contains("missed 9"), "{}", g.rejections[0].detail);
        // Under Multi-SWE-bench's rule the nine are n2p, and the truncation is only recorded.
        let msb = grade(&stopped_early(), &GradeInput { rule: LabelRule::Msb, ..input.clone() });
        assert_eq!(msb.categorized.fixed.len(), 10);
        assert!(msb.rejections.is_empty() && msb.labels.truncated[0].tolerated);
        assert_eq!(msb.labels.n2p_share, Some(0.9));
    }

    /// A test patch that renames a type in each test it changes (seen in a Go exporter), so the
    /// package does not compile without the fix; each test is PASS, NONE, PASS and no other test is
    /// fixed. Under the strict rule the rewritten tests are set apart like the others, and the
    /// instance is rejected `fixed_tests_passed_at_base` (not `no_fixed_tests`), unless one test
    /// failed or was absent at the base.
    #[test]
    fn a_fail_to_pass_of_tests_that_passed_at_the_base_is_rejected() {
        let compile = RunFacts::of(
            b"check/dial_test.go:37:14: undefined: settings.Security\nFAIL\texample.com/dialer/check [build failed]\n",
            Some(2),
            false,
            "go test -v ./...",
        );
        let input = GradeInput { facts: [RunFacts::default(), compile, RunFacts::default()], ..GradeInput::default() };
        let ids = ["check::TestDial", "check::TestDialTimeout", "check::TestListen"];
        let all = |s: TestStatus| ids.iter().map(|n| (n.to_string(), s)).collect::<PhaseStatuses>();
        let runs = [vec![all(Pass)], vec![p(&[])], vec![all(Pass)]];
        let g = grade(&runs, &input);
        assert!(g.categorized.fixed.is_empty(), "{:?}", g.categorized);
        assert_eq!(g.labels.not_run_in_test.len(), 3);
        assert_eq!(
            g.rejections.iter().map(|r| r.reason).collect::<Vec<_>>(),
            [RejectReason::FixedTestsPassedAtBase],
            "{:?}",
            g.rejections
        );
        assert!(g.rejections[0].detail.contains("the 3 tests"), "{}", g.rejections[0].detail);
        assert!(g.labels.truncated[0].tolerated, "{:?}", g.labels.truncated);
        // A new test (absent at the base) that the fix makes pass: kept, the only FAIL_TO_PASS.
        let mut with_new = runs.clone();
        with_new[2][0].insert("check::TestDialRenegotiation".into(), Pass);
        let g = grade(&with_new, &input);
        assert!(g.rejections.is_empty(), "{:?}", g.rejections);
        assert_eq!(g.categorized.fixed.keys().collect::<Vec<_>>(), ["check::TestDialRenegotiation"]);
        // A test that failed at the base: kept.
        let mut failed = runs.clone();
        failed[0][0].insert("check::TestDial".into(), Fail);
        assert!(grade(&failed, &input).rejections.is_empty());
        // Nothing that passed at the base went unrun: the keep rule's own rejection.
        let same = [vec![all(Pass)], vec![all(Pass)], vec![all(Pass)]];
        let g = grade(&same, &input);
        assert_eq!(g.rejections.iter().map(|r| r.reason).collect::<Vec<_>>(), [RejectReason::NoFixedTests]);
        // Multi-SWE-bench's rule keeps it, as Multi-SWE-bench does.
        assert!(grade(&runs, &GradeInput { rule: LabelRule::Msb, ..input.clone() }).rejections.is_empty());
    }

    /// A Go test the test patch adds panics on the unfixed code: the package's binary dies and the
    /// tests after it report nothing. The panic is the failure the fix repairs: kept, labelled.
    #[test]
    fn a_test_run_that_crashed_in_a_test_the_fix_repairs_is_labelled_not_rejected() {
        let panic = RunFacts {
            sign: Some((TruncationCause::Crash, "panic: runtime error: invalid memory address".into())),
            exit_code: Some(1),
            ..RunFacts::default()
        };
        let input = GradeInput { facts: [RunFacts::default(), panic, RunFacts::default()], ..GradeInput::default() };
        let g = grade(&stopped_early(), &input);
        assert!(g.rejections.is_empty(), "{:?}", g.rejections);
        assert_eq!(g.categorized.fixed.keys().collect::<Vec<_>>(), ["suite > test0"]);
        let t = &g.labels.truncated[0];
        assert_eq!((t.phase, t.cause, t.missing, t.tolerated), (Phase::Test, TruncationCause::Crash, 9, true));
        // A crash where no fixed test failed (the tests that did not run are all there is) is not.
        let mut runs = stopped_early();
        runs[1] = vec![p(&[("suite > test0", Pass)])];
        runs[2][0].insert("suite > new".into(), Pass);
        let g = grade(&runs, &input);
        assert_eq!(g.rejections.iter().map(|r| r.reason).collect::<Vec<_>>(), [RejectReason::TruncatedRun]);
    }

    /// The test patch adds `new one` and rewrites `test3` (its title is on a changed line); the
    /// test module does not compile without the fix. Only the new test is FAIL_TO_PASS: the
    /// rewritten one passed at the base, in its old version, and did not run with the test patch.
    #[test]
    fn a_test_patch_that_does_not_compile_keeps_only_the_tests_it_adds() {
        let mut runs = stopped_early();
        runs[1] = vec![p(&[])];
        runs[2][0].insert("suite > new one".into(), Pass);
        let compile = RunFacts::of(b"[ERROR] COMPILATION ERROR :", Some(1), false, "mvn -fae test");
        let input = GradeInput { facts: [RunFacts::default(), compile, RunFacts::default()], ..GradeInput::default() };
        let g = grade(&runs, &input);
        assert!(g.rejections.is_empty(), "{:?}", g.rejections);
        assert_eq!(g.categorized.fixed.keys().collect::<Vec<_>>(), ["suite > new one"]);
        assert_eq!(g.labels.not_run_in_test.len(), 10);
        assert!(g.labels.not_run_in_test.contains_key("suite > test3"));
        assert!(g.labels.truncated[0].tolerated);
        assert_eq!(g.labels.truncated[0].cause, TruncationCause::CompileFailure);
        assert_eq!(g.labels.n2p_share, Some(1.0));
    }

    /// ctest's `Not Run` (the test patch left `old_tests` unbuilt) is absent, not FAIL: a target
    /// that passed at the base and did not run with the test patch is set apart, never
    /// FAIL_TO_PASS, and the fix run's `Not Run` counts as a test the fix run missed.
    #[test]
    fn a_ctest_target_not_run_with_the_test_patch_is_set_apart() {
        let parsers = Parsers::new(Framework::Ctest, Option::None);
        let line = |n: usize, name: &str, result: &str| {
            format!("    Start {n}: {name}\n{n}/3 Test #{n}: {name} ..........{result}   0.01 sec\n")
        };
        let log = |old: &str, new: &str| {
            let mut s = line(1, "old", old) + &line(2, "other", "   Passed");
            if !new.is_empty() {
                s += &line(3, "new", new);
            }
            s.into_bytes()
        };
        let statuses = |log: Vec<u8>| -> PhaseStatuses { parsers.parse(&log, &[]).tests.into_iter().collect() };
        let base = statuses(log("   Passed", ""));
        let test = statuses(log("***Not Run", "***Not Run"));
        assert_eq!(test, p(&[("other", Pass)]));
        let fix = statuses(log("   Passed", "   Passed"));
        let compile = RunFacts::of(b"ninja: build stopped: subcommand failed.", Some(8), false, "ctest");
        let input = GradeInput { facts: [RunFacts::default(), compile, RunFacts::default()], ..GradeInput::default() };
        let g = grade(&[vec![base.clone()], vec![test.clone()], vec![fix]], &input);
        assert_eq!(g.categorized.fixed.keys().collect::<Vec<_>>(), ["new"], "{:?}", g.rejections);
        assert_eq!(g.labels.not_run_in_test.keys().collect::<Vec<_>>(), ["old"]);
        assert_eq!(g.categorized.p2p.keys().collect::<Vec<_>>(), ["other"]);
        // A fix run in which `old`, which ran in the other two, did not run misses it: a
        // truncated fix run.
        let test = statuses(log("   Passed", "***Failed"));
        let fix = statuses(log("***Not Run", "   Passed"));
        let g = grade(&[vec![base], vec![test], vec![fix]], &GradeInput::default());
        assert!(!g.categorized.fixed.contains_key("old") && !g.categorized.p2p.contains_key("old"), "{g:?}");
        assert!(g.labels.truncated.iter().any(|t| t.phase == Phase::Fix && t.missing == 1), "{:?}", g.labels);
    }
}
