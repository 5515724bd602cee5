//! Re-grading: re-derive an instance's statuses, categories and keep-rule verdict from the
//! logs and result files kept by an earlier validation, with the parsers of this build, without
//! running a single container.

use std::path::{Path, PathBuf};

use swe_forge_core::{
    Instance, LabelRule, Phase, PhaseRun, PhaseStatuses, RejectReason, Rejection, RunLogs, ValidationStatus,
};

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
    /// A kept log is there but cannot be read: not a regular file (a FIFO, a device, a socket, a
    /// folder), or unreadable.
    #[error("{instance}: log {path} cannot be read: {why}")]
    UnreadableLog {
        /// The instance.
        instance: String,
        /// The kept log.
        path: PathBuf,
        /// What the file is, or the error reading it.
        why: String,
    },
    /// A kept log is not the log the run wrote: its size or sha256 is not the record's
    /// (`log_bytes`, `log_sha256`). Grading it would give the record another verdict than its
    /// runs gave, without a word.
    #[error("{instance}: log {path} is not the one its run wrote ({why})")]
    EditedLog {
        /// The instance.
        instance: String,
        /// The kept log.
        path: PathBuf,
        /// How it differs.
        why: String,
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
        let path = logs.log(&label);
        let kept = swe_forge_fs::read_file_capped(&path, swe_forge_fs::READ_CAP).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                RegradeError::MissingLog { instance: id.clone(), path: path.clone() }
            } else {
                RegradeError::UnreadableLog { instance: id.clone(), path: path.clone(), why: unreadable(&path, &e) }
            }
        })?;
        check_kept_log(&kept.bytes, kept.truncated, run).map_err(|why| RegradeError::EditedLog {
            instance: id.clone(),
            path: path.clone(),
            why,
        })?;
        let parsed = parsers
            .reparse(&logs, &label)
            .ok_or_else(|| RegradeError::MissingLog { instance: id.clone(), path: logs.log(&label) })?;
        run.tests = parsed.tests.len() as u64;
        let slot = Phase::ALL.iter().position(|p| *p == run.phase).unwrap_or(0);
        if run.attempt == 0 {
            input.facts[slot] = RunFacts::of(&kept.bytes, run.exit_code, run.timed_out, &command);
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

/// Why the kept log at `path` could not be read (`e`): what it is when it is no regular file.
fn unreadable(path: &Path, e: &std::io::Error) -> String {
    use std::os::unix::fs::FileTypeExt;
    let Ok(t) = std::fs::metadata(path).map(|m| m.file_type()) else { return e.to_string() };
    let what = if t.is_fifo() {
        "a FIFO"
    } else if t.is_dir() {
        "a folder"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_char_device() || t.is_block_device() {
        "a device"
    } else {
        return e.to_string();
    };
    format!("not a regular file but {what}")
}

/// Whether `kept` (read whole unless `cut`) is the log `run` wrote, as the record tells it: the
/// whole log, `log_bytes` long with sha256 `log_sha256`; or, beyond the log cap, its head and
/// tail around the line that says how many bytes were dropped, which add up to `log_bytes` (the
/// dropped middle cannot be hashed: a log kept so is checked by its size alone). A record without
/// a hash (none was written before runs were recorded) is not checked. Why not, when it is not.
pub(crate) fn check_kept_log(kept: &[u8], cut: bool, run: &PhaseRun) -> Result<(), String> {
    if run.log_sha256.is_empty() {
        return Ok(());
    }
    if cut {
        return Err("longer than any kept log".into());
    }
    if kept.len() as u64 == run.log_bytes {
        use sha2::Digest as _;
        let sha: String = sha2::Sha256::digest(kept).iter().map(|b| format!("{b:02x}")).collect();
        return if sha.eq_ignore_ascii_case(&run.log_sha256) {
            Ok(())
        } else {
            Err(format!("sha256 {sha}, the run's {}", run.log_sha256))
        };
    }
    const START: &[u8] = b"\n[swe-forge: ";
    const END: &[u8] = b" bytes of log dropped here]\n";
    // The line may be printed by the tests too: any one that adds up will do.
    let adds_up = memchr::memmem::find_iter(kept, START).any(|at| {
        let digits = &kept[at + START.len()..];
        let n = digits.iter().take_while(|b| b.is_ascii_digit()).count();
        let marker = (START.len() + n + END.len()) as u64;
        let dropped = std::str::from_utf8(&digits[..n]).ok().and_then(|d| d.parse::<u64>().ok());
        n > 0
            && digits[n..].starts_with(END)
            && dropped.is_some_and(|d| kept.len() as u64 - marker + d == run.log_bytes)
    });
    if adds_up { Ok(()) } else { Err(format!("{} bytes, the run's log {} bytes", kept.len(), run.log_bytes)) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_of(log: &[u8]) -> PhaseRun {
        use sha2::Digest as _;
        PhaseRun {
            phase: Phase::Fix,
            exit_code: Some(0),
            duration_ms: 1,
            timed_out: false,
            log_sha256: sha2::Sha256::digest(log).iter().map(|b| format!("{b:02x}")).collect(),
            log_bytes: log.len() as u64,
            tests: 1,
            attempt: 0,
            command_ms: None,
        }
    }

    #[test]
    fn a_kept_log_must_be_the_runs_log() {
        let log = b"--- PASS: TestA (0.00s)\n--- PASS: TestB (0.00s)\nok\n";
        let run = run_of(log);
        assert_eq!(check_kept_log(log, false, &run), Ok(()));
        let edited = b"--- FAIL: TestA (0.00s)\n--- PASS: TestB (0.00s)\nok\n";
        let why = check_kept_log(edited, false, &run).unwrap_err();
        assert!(why.contains("sha256") && why.contains(&run.log_sha256), "{why}");
        assert!(check_kept_log(b"--- PASS: TestB (0.00s)\nok\n", false, &run).unwrap_err().contains("bytes"));
        assert!(check_kept_log(log, true, &run).is_err(), "a log cut when read is not the kept one");
        let unhashed = PhaseRun { log_sha256: String::new(), ..run };
        assert_eq!(check_kept_log(b"anything", false, &unhashed), Ok(()), "nothing to check against");
    }

    #[test]
    fn a_log_kept_as_head_and_tail_adds_up_to_the_runs_size() {
        // 100 bytes of log, 40 kept: head, the line the engine's log sink writes, tail.
        let kept = [&[b'x'; 20][..], b"\n[swe-forge: 60 bytes of log dropped here]\n", &[b'y'; 20]].concat();
        let run = PhaseRun { log_bytes: 100, ..run_of(b"whole log") };
        assert_eq!(check_kept_log(&kept, false, &run), Ok(()));
        // A test that printed such a line itself, in the head: the engine's line still adds up.
        let head = [&b"\n[swe-forge: 9 bytes of log dropped here]\n"[..], &[b'x'; 19]].concat();
        let line = b"\n[swe-forge: 60 bytes of log dropped here]\n";
        let printed = [&head[..], line, &[b'y'; 20]].concat();
        let whole = PhaseRun { log_bytes: (printed.len() - line.len() + 60) as u64, ..run.clone() };
        assert_eq!(check_kept_log(&printed, false, &whole), Ok(()));
        let mut longer = kept.clone();
        longer.extend_from_slice(b"PASS\n");
        assert!(check_kept_log(&longer, false, &run).is_err());
        let other = PhaseRun { log_bytes: 101, ..run };
        assert!(check_kept_log(&kept, false, &other).is_err());
    }
}
