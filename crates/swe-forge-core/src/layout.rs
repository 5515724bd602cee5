//! Where the kept output of a run lives: `<work_dir>/logs/<instance_id>/<label>.log`, its result
//! files under `<label>-results/` and its parse as `<label>.parsed.json`. A run's label is its
//! phase, with `-<attempt>` after the first attempt (`fix`, `fix-1`), or a name of its own (`setup`,
//! an evaluation's `eval`). Paths only: this type never touches the file system.

use std::path::{Path, PathBuf};

use crate::Phase;

/// File name suffix of a kept parse, after the run's label.
pub const PARSED_SUFFIX: &str = ".parsed.json";

/// The kept logs of one instance under a work folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunLogs {
    dir: PathBuf,
}

impl RunLogs {
    /// The logs of `instance_id` under `work_dir`.
    pub fn new(work_dir: &Path, instance_id: &str) -> RunLogs {
        RunLogs { dir: work_dir.join("logs").join(instance_id) }
    }

    /// The logs of `instance_id` in a folder of their own (`dir/<instance_id>`), as an evaluation
    /// keeps them.
    pub fn under(dir: &Path, instance_id: &str) -> RunLogs {
        RunLogs { dir: dir.join(instance_id) }
    }

    /// The label of attempt `attempt` of `phase`: `fix`, then `fix-1`, `fix-2`, ...
    pub fn label(phase: Phase, attempt: u32) -> String {
        Self::attempt_label(phase.as_str(), attempt)
    }

    /// The label of attempt `attempt` of a run named `name`.
    pub fn attempt_label(name: &str, attempt: u32) -> String {
        if attempt == 0 { name.to_owned() } else { format!("{name}-{attempt}") }
    }

    /// The instance's folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The merged stdout and stderr of run `label`.
    pub fn log(&self, label: &str) -> PathBuf {
        self.dir.join(format!("{label}.log"))
    }

    /// The structured result files run `label` left.
    pub fn results(&self, label: &str) -> PathBuf {
        self.dir.join(format!("{label}-results"))
    }

    /// The parse of run `label`.
    pub fn parsed(&self, label: &str) -> PathBuf {
        self.dir.join(format!("{label}{PARSED_SUFFIX}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_layout_of_one_instance_s_logs() {
        let logs = RunLogs::new(Path::new("w"), "o__r-1");
        assert_eq!(RunLogs::label(Phase::Fix, 0), "fix");
        assert_eq!(RunLogs::label(Phase::Test, 2), "test-2");
        assert_eq!(logs.log("fix-1"), Path::new("w/logs/o__r-1/fix-1.log"));
        assert_eq!(logs.results("run"), Path::new("w/logs/o__r-1/run-results"));
        assert_eq!(logs.parsed("test"), Path::new("w/logs/o__r-1/test.parsed.json"));
        assert_eq!(RunLogs::under(Path::new("e"), "x").log("eval"), Path::new("e/x/eval.log"));
    }
}
