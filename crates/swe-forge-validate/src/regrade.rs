//! Re-grading: re-derive an instance's statuses, categories and keep-rule verdict from the
//! logs and result files kept by an earlier validation, with the parsers of this build, without
//! running a single container.

use std::path::{Path, PathBuf};
use std::str::FromStr;

use swe_forge_core::{Instance, Phase, PhaseStatuses, RejectReason, TestResult, ValidationStatus, categorize};
use swe_forge_logparse::Framework;

use crate::flaky::merge;
use crate::keep_rules;

/// Why an instance could not be re-graded.
#[derive(Debug, thiserror::Error)]
pub enum RegradeError {
    /// A kept log is missing.
    #[error("{instance}: log {path} is missing")]
    MissingLog {
        /// The instance.
        instance: String,
        /// The expected file.
        path: PathBuf,
    },
    /// The record names a parser this build does not have.
    #[error("{instance}: {message}")]
    Parser {
        /// The instance.
        instance: String,
        /// What is wrong.
        message: String,
    },
}

/// Reasons decided by the keep rules; every other rejection (timeout, oom, ...) is kept as is.
const KEEP_RULE_REASONS: [RejectReason; 4] =
    [RejectReason::NoTestsInFixRun, RejectReason::NoFixedTests, RejectReason::PassToFail, RejectReason::Anomaly];

/// Re-grades `inst` from `<work_dir>/logs/<instance_id>/`. Records that never reached the test
/// runs come back unchanged.
pub fn regrade(inst: &Instance, work_dir: &Path) -> Result<Instance, RegradeError> {
    let Some(meta) = inst.swe_forge.as_ref().filter(|m| !m.runs.is_empty()) else {
        return Ok(inst.clone());
    };
    let id = &inst.instance_id;
    let framework = |name: &str| {
        Framework::from_str(name).map_err(|e| RegradeError::Parser { instance: id.clone(), message: e.to_string() })
    };
    let parser = framework(meta.parser.as_deref().unwrap_or_default())?;
    let results_parser = meta.results_parser.as_deref().map(framework).transpose()?;
    let dir = work_dir.join("logs").join(id);
    let mut runs: [Vec<PhaseStatuses>; 3] = Default::default();
    let mut new_meta = meta.clone();
    for run in new_meta.runs.iter_mut() {
        let label = if run.attempt == 0 { run.phase.to_string() } else { format!("{}-{}", run.phase, run.attempt) };
        let log_path = dir.join(format!("{label}.log"));
        let log =
            std::fs::read(&log_path).map_err(|_| RegradeError::MissingLog { instance: id.clone(), path: log_path })?;
        let files = read_tree(&dir.join(format!("{label}-results")));
        let parsed = match (results_parser, files.is_empty()) {
            (Some(rp), false) => swe_forge_logparse::parse_files(rp, &files),
            _ => swe_forge_logparse::parse(parser, &log),
        };
        run.tests = parsed.tests.len() as u64;
        let slot = Phase::ALL.iter().position(|p| *p == run.phase).unwrap_or(0);
        runs[slot].push(parsed.tests);
    }
    let merged = merge(&runs);
    let [run, test, fix] = &merged.phases;
    let c = categorize(run, test, fix);
    let mut out = inst.clone();
    out.set_results(
        &c,
        TestResult::from_statuses(run),
        TestResult::from_statuses(test),
        TestResult::from_statuses(fix),
    );
    new_meta.flaky = merged.flaky;
    new_meta.stability = Some(merged.stability);
    new_meta.rejections.retain(|r| !KEEP_RULE_REASONS.contains(&r.reason));
    new_meta.rejections.extend(keep_rules(&c, fix));
    new_meta.status =
        if new_meta.rejections.is_empty() { ValidationStatus::Accepted } else { ValidationStatus::Rejected };
    out.swe_forge = Some(new_meta);
    Ok(out)
}

/// Every regular file under `dir`, relative path -> content, sorted (none when `dir` is absent).
pub(crate) fn read_tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if let (Ok(rel), Ok(content)) = (p.strip_prefix(dir), std::fs::read(&p)) {
                out.push((rel.to_string_lossy().into_owned(), content));
            }
        }
    }
    out.sort();
    out
}
