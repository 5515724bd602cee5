//! The parsed statuses of every run, kept next to its log as `<label>.parsed.json`: canonical
//! ids, statuses and the Multi-SWE-bench name of each test. Later stages (re-validation against
//! published lists) compare in other harnesses' naming from these files without parsing the
//! logs again. Writing is best effort: a failure is logged and never fails the instance.

use std::path::Path;

use swe_forge_logparse::ParsedLog;

/// File name suffix of a kept parse, after the run's label (`run`, `test`, `fix`, `fix-1`, ...).
pub const PARSED_SUFFIX: &str = ".parsed.json";

/// Writes `parsed` as `<dir>/<label>.parsed.json`.
pub(crate) fn keep(dir: &Path, label: &str, parsed: &ParsedLog) {
    let path = dir.join(format!("{label}{PARSED_SUFFIX}"));
    let result = std::fs::create_dir_all(dir).and_then(|()| {
        let json = serde_json::to_vec(parsed).map_err(std::io::Error::other)?;
        std::fs::write(&path, json)
    });
    if let Err(e) = result {
        tracing::warn!(path = %path.display(), error = %e, "could not keep a parsed run");
    }
}

/// The kept parse of run `label` of `instance_id` under `work_dir` (the validator's work
/// folder), when there is one.
pub fn read_parsed(work_dir: &Path, instance_id: &str, label: &str) -> Option<ParsedLog> {
    let path = work_dir.join("logs").join(instance_id).join(format!("{label}{PARSED_SUFFIX}"));
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_parse_reads_back() {
        let tmp = tempfile::tempdir().unwrap();
        let mut parsed = ParsedLog::default();
        parsed.tests.insert("p::TestA".into(), swe_forge_core::TestStatus::Pass);
        parsed.msb_names.insert("p::TestA".into(), "TestA".into());
        keep(&tmp.path().join("logs/o__r-1"), "fix", &parsed);
        assert_eq!(read_parsed(tmp.path(), "o__r-1", "fix"), Some(parsed));
        assert_eq!(read_parsed(tmp.path(), "o__r-1", "run"), None);
    }
}
