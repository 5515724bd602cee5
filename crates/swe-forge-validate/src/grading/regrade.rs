//! Re-grading: re-derive an instance's statuses, categories and keep-rule verdict from the
//! logs and result files kept by an earlier validation, with the parsers of this build, without
//! running a single container.

use std::path::{Path, PathBuf};

use swe_forge_core::{Instance, LabelRule, Phase, PhaseStatuses, RejectReason, Rejection, RunLogs, ValidationStatus};

use super::grade::{GradeInput, KEEP_RULE_REASONS, Parsers, grade};
use crate::truncation::RunFacts;

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
    /// The record names no parser, or its repository's naming rules do not load.
    #[error("{instance}: the parsers the record names")]
    Parser {
        /// The instance.
        instance: String,
        /// What is wrong.
        #[source]
        source: crate::ParsersError,
    },
}

/// Re-grades `inst` from `<work_dir>/logs/<instance_id>/`. Records that never reached the test
/// runs come back unchanged.
pub fn regrade(inst: &Instance, work_dir: &Path) -> Result<Instance, RegradeError> {
    let Some(meta) = inst.swe_forge.as_ref().filter(|m| !m.runs.is_empty()) else {
        return Ok(inst.clone());
    };
    let id = &inst.instance_id;
    let parsers = Parsers::of(inst).map_err(|source| RegradeError::Parser { instance: id.clone(), source })?;
    let logs = RunLogs::new(work_dir, id);
    let mut runs: [Vec<PhaseStatuses>; 3] = Default::default();
    let mut new_meta = meta.clone();
    // The rule the record was labelled under (records made before rules were recorded: today's
    // default) and what each phase's first kept log tells of an early stop.
    let mut input = GradeInput {
        rule: meta.labels.as_ref().map_or(LabelRule::Strict, |l| l.rule),
        suite_files: meta.labels.as_ref().and_then(|l| l.suite_files),
        ..GradeInput::default()
    };
    let command = meta.test_command.clone().unwrap_or_default();
    let mut msb_names = std::collections::BTreeMap::new();
    for run in new_meta.runs.iter_mut() {
        let label = RunLogs::label(run.phase, run.attempt);
        let parsed = parsers
            .reparse(&logs, &label)
            .ok_or_else(|| RegradeError::MissingLog { instance: id.clone(), path: logs.log(&label) })?;
        run.tests = parsed.tests.len() as u64;
        let slot = Phase::ALL.iter().position(|p| *p == run.phase).unwrap_or(0);
        if run.attempt == 0 {
            let log = swe_forge_fs::read_file_capped(&logs.log(&label), swe_forge_fs::READ_CAP)
                .map(|r| r.bytes)
                .unwrap_or_default();
            input.facts[slot] = RunFacts::of(&log, run.exit_code, run.timed_out, &command);
        }
        msb_names.extend(parsed.msb_names);
        runs[slot].push(parsed.tests);
    }
    let mut out = inst.clone();
    let verdict = grade(&runs, &input).record(&mut out, &mut new_meta);
    new_meta.msb_names = Some(super::grade::named_results(&out, msb_names));
    new_meta.rejections.retain(|r| !KEEP_RULE_REASONS.contains(&r.reason));
    new_meta.rejections.extend(verdict);
    // A record with runs got `needs_network` from a run that could not reach a host (a setup that
    // needs one runs none), which counts only beside a broken keep rule; the hosts validation
    // counted as reachable are not known here, so none is added, only the CI's clones named.
    let explained = |r: &Rejection| crate::network::KEEP_RULES_THE_NETWORK_EXPLAINS.contains(&r.reason);
    if !new_meta.rejections.iter().any(explained) {
        new_meta.rejections.retain(|r| r.reason != RejectReason::NeedsNetwork);
    } else if !new_meta.rejections.iter().any(|r| r.reason == RejectReason::NeedsNetwork)
        && let Some(hint) =
            new_meta.provenance.as_ref().and_then(|p| crate::network::ci_clone_hint(&p.requested_versions, &[]))
    {
        new_meta.rejections.iter_mut().filter(|r| explained(r)).for_each(|r| r.detail.push_str(&hint));
    }
    new_meta.status =
        if new_meta.rejections.is_empty() { ValidationStatus::Accepted } else { ValidationStatus::Rejected };
    out.swe_forge = Some(new_meta);
    Ok(out)
}
