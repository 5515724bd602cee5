//! The three runs: the script of each phase and the reading of its outcome.

use swe_forge_core::Phase;

use crate::images::REPO_DIR;

/// Exit code of a phase script whose in-container `git apply` failed.
pub(crate) const APPLY_FAILED_EXIT: i64 = 197;
pub(crate) const APPLY_FAILED_MARKER: &str = "swe-forge: patch does not apply in the container:";
pub(crate) const TEST_PATCH: &str = "/swe-forge/test.patch";
pub(crate) const FIX_PATCH: &str = "/swe-forge/fix.patch";

/// The bash script of one phase: apply the patches that phase needs, then run the tests.
pub(crate) fn script(phase: Phase, test_command: &str) -> String {
    let mut s = format!("cd {REPO_DIR}\n");
    let patches: &[&str] = match phase {
        Phase::Run => &[],
        Phase::Test => &[TEST_PATCH],
        Phase::Fix => &[TEST_PATCH, FIX_PATCH],
    };
    for p in patches {
        s.push_str(&format!(
            "if [ -s {p} ]; then git apply --whitespace=nowarn {p} || {{ echo '{APPLY_FAILED_MARKER} {p}'; exit {APPLY_FAILED_EXIT}; }}; fi\n"
        ));
    }
    s.push_str(test_command);
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_apply_the_right_patches() {
        assert!(!script(Phase::Run, "t").contains("git apply"));
        assert_eq!(script(Phase::Test, "t").matches("git apply").count(), 1);
        let fix = script(Phase::Fix, "go test ./...");
        assert!(fix.find(TEST_PATCH).unwrap() < fix.find(FIX_PATCH).unwrap());
        assert!(fix.ends_with("go test ./...\n"));
    }
}
