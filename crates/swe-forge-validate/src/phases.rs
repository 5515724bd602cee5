//! The three runs: the script of each phase.

use swe_forge_core::Phase;

use crate::Recipe;
use crate::images::REPO_DIR;

/// Exit code of a phase script whose in-container `git apply` failed.
pub(crate) const APPLY_FAILED_EXIT: i64 = 197;
pub(crate) const APPLY_FAILED_MARKER: &str = "swe-forge: patch does not apply in the container:";
pub(crate) const TEST_PATCH: &str = "/swe-forge/test.patch";
pub(crate) const FIX_PATCH: &str = "/swe-forge/fix.patch";
/// A prediction's patch, in an evaluation run.
pub(crate) const MODEL_PATCH: &str = "/swe-forge/model.patch";
/// Structured results are gathered here and copied out after the run.
pub(crate) const RESULTS_DIR: &str = "/swe-forge/results";
/// The test command's exit code is printed on a line of its own, after everything else.
pub(crate) const EXIT_MARKER: &str = "swe-forge: test command exited with ";
/// Then the time the test command took, measured inside the container.
pub(crate) const TOOK_MARKER: &str = "swe-forge: test command took ";

/// The test command's own duration, read back from the end of a phase log.
pub(crate) fn command_ms(log: &[u8]) -> Option<u64> {
    let tail = &log[log.len().saturating_sub(4096)..];
    let text = String::from_utf8_lossy(tail);
    let line = text.lines().rev().find_map(|l| l.strip_prefix(TOOK_MARKER))?;
    line.trim_end_matches(" ms").trim().parse().ok()
}

/// The bash script of one phase: apply the patches that phase needs, run the pre-test steps
/// and the test command, copy structured results, and exit with the test command's code.
pub(crate) fn script(phase: Phase, recipe: &Recipe) -> String {
    let mut s = format!("cd {REPO_DIR}\nmkdir -p {RESULTS_DIR}\n");
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
    for step in &recipe.pre_test {
        s.push_str(step);
        s.push('\n');
    }
    s.push_str(&format!(
        "swe_forge_start=$(date +%s%N)\n( {}\n)\nstatus=$?\nswe_forge_end=$(date +%s%N)\n",
        recipe.test_command
    ));
    for pattern in &recipe.results {
        s.push_str(&format!(
            "find . -path '{}' -type f -exec cp --parents {{}} {RESULTS_DIR}/ \\; 2>/dev/null\n",
            pattern.replace('\'', "'\\''")
        ));
    }
    s.push_str(&format!(
        "echo \"{EXIT_MARKER}$status\"\necho \"{TOOK_MARKER}$(( (swe_forge_end - swe_forge_start) / 1000000 )) ms\"\nexit $status\n"
    ));
    s
}

/// The script of an evaluation run: the model's patch applied, every file the test patch names
/// put back to its base version (a model must not pass by editing the tests), then the test
/// phase (the test patch, the pre-test steps and the test command).
pub(crate) fn eval_script(recipe: &Recipe, test_files: &[String]) -> String {
    let mut s = format!(
        "cd {REPO_DIR}\nif [ -s {MODEL_PATCH} ]; then git apply --whitespace=nowarn {MODEL_PATCH} || {{ echo '{APPLY_FAILED_MARKER} {MODEL_PATCH}'; exit {APPLY_FAILED_EXIT}; }}; fi\n"
    );
    s.push_str(
        "swe_forge_restore() { if git cat-file -e \"HEAD:$1\" 2>/dev/null; then git checkout -q HEAD -- \"$1\"; else rm -rf -- \"$1\"; fi; }\n",
    );
    for f in test_files {
        s.push_str(&format!("swe_forge_restore '{}'\n", f.replace('\'', "'\\''")));
    }
    s.push_str(&script(Phase::Test, recipe));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_apply_the_right_patches_and_collect_results() {
        let mut r = Recipe::named("go").unwrap();
        assert!(!script(Phase::Run, &r).contains("git apply"));
        assert_eq!(script(Phase::Test, &r).matches("git apply").count(), 1);
        let fix = script(Phase::Fix, &r);
        assert!(fix.find(TEST_PATCH).unwrap() < fix.find(FIX_PATCH).unwrap());
        assert!(!fix.contains("find ."));
        r.results = vec!["*/target/surefire-reports/TEST-*.xml".into()];
        let java = script(Phase::Run, &r);
        assert!(java.contains("find . -path '*/target/surefire-reports/TEST-*.xml'"));
        assert!(java.ends_with("exit $status\n"));
        assert_eq!(
            command_ms(b"output\nswe-forge: test command exited with 0\nswe-forge: test command took 1234 ms\n"),
            Some(1234)
        );
        assert_eq!(command_ms(b"killed before the end"), None);
        let eval = eval_script(&r, &["t/it's_test.go".to_owned()]);
        let model = eval.find(MODEL_PATCH).unwrap();
        let restore = eval.find("swe_forge_restore 't/it'\\''s_test.go'").unwrap();
        assert!(model < restore && restore < eval.find(TEST_PATCH).unwrap(), "{eval}");
        assert!(!eval.contains(FIX_PATCH));
    }
}
