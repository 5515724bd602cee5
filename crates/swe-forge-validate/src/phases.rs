//! The three runs: the script of each phase; and the contract every instance image carries so
//! that any harness can run it (`/swe-forge/run-tests`, `/swe-forge/instance.json`; see
//! `schemas/instance-image.md`), whose script is the fix phase's own, text for text.

use swe_forge_core::Phase;

use crate::images::REPO_DIR;
use swe_forge_recipes::Recipe;

/// Exit code of a phase script whose in-container `git apply` failed.
pub(crate) const APPLY_FAILED_EXIT: i64 = 197;
pub(crate) const APPLY_FAILED_MARKER: &str = "swe-forge: patch does not apply in the container:";
pub(crate) const TEST_PATCH: &str = "/swe-forge/test.patch";
pub(crate) const FIX_PATCH: &str = "/swe-forge/fix.patch";
/// A prediction's patch, in an evaluation run.
pub(crate) const MODEL_PATCH: &str = "/swe-forge/model.patch";
/// The test patch in an evaluation run: applied by the evaluation's own prefix (so that the
/// canaries go in after it), never by `/swe-forge/run-tests`.
pub(crate) const EVAL_TEST_PATCH: &str = "/swe-forge/eval-test.patch";
/// Structured results are gathered here and copied out after the run.
pub(crate) const RESULTS_DIR: &str = "/swe-forge/results";
/// The test command's exit code is printed on a line of its own, after everything else.
pub(crate) const EXIT_MARKER: &str = "swe-forge: test command exited with ";
/// Then the time the test command took, measured inside the container.
pub(crate) const TOOK_MARKER: &str = "swe-forge: test command took ";

/// The script any harness runs: `docker run IMAGE /swe-forge/run-tests`.
pub(crate) const RUN_TESTS: &str = "/swe-forge/run-tests";
/// What a harness needs to know of the instance, as JSON.
pub(crate) const INSTANCE_JSON: &str = "/swe-forge/instance.json";
/// Version of the contract (`instance.json`'s `contract_version`); raised when it changes.
pub(crate) const CONTRACT_VERSION: u32 = 1;

/// The test command's own duration, read back from the end of a phase log.
pub(crate) fn command_ms(log: &[u8]) -> Option<u64> {
    let tail = &log[log.len().saturating_sub(4096)..];
    let text = String::from_utf8_lossy(tail);
    let line = text.lines().rev().find_map(|l| l.strip_prefix(TOOK_MARKER))?;
    line.trim_end_matches(" ms").trim().parse().ok()
}

/// The bash script of one phase: apply the patches that phase needs (each when present and not
/// empty), run the pre-test steps and the test command, copy structured results, and exit with
/// the test command's code.
pub(crate) fn script(phase: Phase, recipe: &Recipe) -> String {
    let patches: &[&str] = match phase {
        Phase::Run => &[],
        Phase::Test => &[TEST_PATCH],
        Phase::Fix => &[TEST_PATCH, FIX_PATCH],
    };
    let mut s = format!("cd {REPO_DIR}\nmkdir -p {RESULTS_DIR}\n");
    for p in patches {
        s.push_str(&apply(p));
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

/// The script of an evaluation run: the model's patch applied, every file of `test_files` (the
/// test patch's files but source files with tests inside: `swe_forge_core::restored_test_files`)
/// put back to its base version (a model must not pass by editing the tests), the test patch
/// applied, the `canary` steps (evaluation only: `evaluate::canary`), then the run phase (the
/// pre-test steps and the test command).
pub(crate) fn eval_script(recipe: &Recipe, test_files: &[String], canary: &str) -> String {
    let mut s = eval_prefix(test_files, canary);
    s.push_str(&script(Phase::Run, recipe));
    s
}

/// The script of an evaluation run by an instance image's own contract: as [`eval_script`],
/// then `/swe-forge/run-tests` (which finds no patch of its own to apply, as the test patch is
/// not at [`TEST_PATCH`]).
pub(crate) fn contract_eval_script(test_files: &[String], canary: &str) -> String {
    let mut s = eval_prefix(test_files, canary);
    s.push_str(&format!("exec {RUN_TESTS}\n"));
    s
}

/// The model's patch applied, every path the test patch names put back to the base, the test
/// patch applied, then `canary`.
fn eval_prefix(test_files: &[String], canary: &str) -> String {
    let mut s = format!("cd {REPO_DIR}\n{}", apply(MODEL_PATCH));
    s.push_str(
        "swe_forge_restore() { if git cat-file -e \"HEAD:$1\" 2>/dev/null; then git checkout -q HEAD -- \"$1\"; else rm -rf -- \"$1\"; fi; }\n",
    );
    for f in test_files {
        s.push_str(&format!("swe_forge_restore '{}'\n", f.replace('\'', "'\\''")));
    }
    s.push_str(&apply(EVAL_TEST_PATCH));
    s.push_str(canary);
    s
}

/// `git apply` of the patch at `path` when it is there and not empty; the marker and exit code
/// the validator reads when it does not apply.
fn apply(path: &str) -> String {
    format!(
        "if [ -s {path} ]; then git apply --whitespace=nowarn {path} || {{ echo '{APPLY_FAILED_MARKER} {path}'; exit {APPLY_FAILED_EXIT}; }}; fi\n"
    )
}

/// `/swe-forge/run-tests` of an instance image: what the validator sets from outside the script
/// (the test user, by re-executing through `runuser` when started as root; the runs' variables;
/// stdout and stderr merged), then the fix phase's script. Without patches at [`TEST_PATCH`] and
/// [`FIX_PATCH`] it is the run phase, with the test patch only the test phase.
pub(crate) fn run_tests_script(recipe: &Recipe) -> String {
    let mut s = String::from("#!/bin/bash\n# swe-forge instance contract: schemas/instance-image.md\n");
    if let Some(user) = recipe.test_user.as_deref().map(swe_forge_recipes::shell_quote) {
        s.push_str(&format!(
            "if [ \"$(id -u)\" = 0 ] && id -u {user} >/dev/null 2>&1; then exec runuser -u {user} -- /bin/bash \"$0\" \"$@\"; fi\n"
        ));
    }
    s.push_str("exec 2>&1\nexport SWE_FORGE_ATTEMPT=${SWE_FORGE_ATTEMPT:-0}\n");
    for (k, v) in &recipe.run_env {
        s.push_str(&format!("export {k}='{}'\n", v.replace('\'', "'\\''")));
    }
    s.push_str(&script(Phase::Fix, recipe));
    s
}

/// `/swe-forge/instance.json` of an instance image.
pub(crate) fn instance_json(inst: &swe_forge_core::Instance, recipe: &Recipe) -> String {
    let doc = serde_json::json!({
        "contract_version": CONTRACT_VERSION,
        "instance_id": inst.instance_id,
        "org": inst.org,
        "repo": inst.repo,
        "number": inst.number,
        "base_sha": inst.base.sha,
        "workdir": REPO_DIR,
        "run_tests": RUN_TESTS,
        "test_patch": TEST_PATCH,
        "fix_patch": FIX_PATCH,
        "results_dir": RESULTS_DIR,
        "results": recipe.results,
        "test_command": recipe.test_command,
        "pre_test": recipe.pre_test,
        "parser": recipe.parser,
        "results_parser": recipe.results_parser,
        "exit_marker": EXIT_MARKER,
        "took_marker": TOOK_MARKER,
        "apply_failed_exit": APPLY_FAILED_EXIT,
        "apply_failed_marker": APPLY_FAILED_MARKER,
        "user": recipe.test_user,
        "env": recipe.run_env,
        "network": recipe.network_in_runs,
    });
    let mut text = serde_json::to_string_pretty(&doc).unwrap_or_default();
    text.push('\n');
    text
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
        let eval = eval_script(&r, &["t/it's_test.go".to_owned()], "echo canary-steps\n");
        let model = eval.find(MODEL_PATCH).unwrap();
        let restore = eval.find("swe_forge_restore 't/it'\\''s_test.go'").unwrap();
        let test_patch = eval.find(EVAL_TEST_PATCH).unwrap();
        let canary = eval.find("echo canary-steps").unwrap();
        assert!(model < restore && restore < test_patch && test_patch < canary, "{eval}");
        assert!(canary < eval.find(&r.test_command).unwrap(), "{eval}");
        assert!(!eval.contains(FIX_PATCH) && !eval.contains(TEST_PATCH), "{eval}");
        let contract = contract_eval_script(&["t/x_test.go".to_owned()], "echo canary-steps\n");
        assert!(contract.find("echo canary-steps").unwrap() < contract.find(RUN_TESTS).unwrap(), "{contract}");
        assert!(!contract.contains(TEST_PATCH), "{contract}");
    }

    #[test]
    fn run_tests_is_the_fix_phase_script_with_what_the_validator_sets_from_outside() {
        let mut r = Recipe::named("go").unwrap();
        let plain = run_tests_script(&r);
        assert!(plain.starts_with("#!/bin/bash\n"));
        assert!(plain.ends_with(&script(Phase::Fix, &r)), "{plain}");
        assert!(plain.contains("export GOPROXY='off'\n"), "{plain}");
        assert!(!plain.contains("runuser"));
        r.test_user = Some("tester".into());
        r.run_env.insert("Q".into(), "it's".into());
        let as_user = run_tests_script(&r);
        assert!(as_user.contains("exec runuser -u tester -- /bin/bash \"$0\""), "{as_user}");
        assert!(as_user.contains("export Q='it'\\''s'\n"), "{as_user}");
        let bash = std::process::Command::new("bash").args(["-n", "-c", &as_user]).status().unwrap();
        assert!(bash.success());
    }

    /// ssl_exporter 35: a repository that vendors its modules builds from `vendor/` in the runs
    /// (the fix adds a module there, which `-mod=mod` looks up in vain without the network); others
    /// keep `-mod=mod`.
    #[test]
    fn a_vendored_go_repository_runs_with_mod_vendor() {
        let r = Recipe::named("go").unwrap();
        let goflags = |vendored: bool| {
            let dir = tempfile::tempdir().unwrap();
            if vendored {
                std::fs::create_dir(dir.path().join("vendor")).unwrap();
                std::fs::write(dir.path().join("vendor/modules.txt"), "# golang.org/x/text v0.3.3\n").unwrap();
            }
            let mut s = String::new();
            for (k, v) in &r.run_env {
                s.push_str(&format!("export {k}='{v}'\n"));
            }
            s.push_str(&r.pre_test.join("\n"));
            s.push_str("\necho \"$GOFLAGS\"\n");
            let out = std::process::Command::new("bash").arg("-c").arg(&s).current_dir(dir.path()).output().unwrap();
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            String::from_utf8(out.stdout).unwrap().trim().to_owned()
        };
        assert_eq!(goflags(true), "-buildvcs=false -mod=vendor");
        assert_eq!(goflags(false), "-buildvcs=false -mod=mod");
        assert!(script(Phase::Fix, &r).contains("vendor/modules.txt"));
    }

    #[test]
    fn instance_json_names_the_contract_paths_and_the_test_command() {
        let r = Recipe::named("go").unwrap();
        let inst: swe_forge_core::Instance = serde_json::from_value(serde_json::json!({
            "org": "o", "repo": "r", "number": 7, "instance_id": "o__r-7", "state": "closed", "title": "t",
            "resolved_issues": [],
            "base": {"label": "", "ref": "main", "sha": "abc"}, "fix_patch": "", "test_patch": ""
        }))
        .unwrap();
        let doc: serde_json::Value = serde_json::from_str(&instance_json(&inst, &r)).unwrap();
        assert_eq!(doc["instance_id"], "o__r-7");
        assert_eq!(doc["run_tests"], RUN_TESTS);
        assert_eq!(doc["fix_patch"], FIX_PATCH);
        assert_eq!(doc["test_command"], r.test_command);
        assert_eq!(doc["parser"], "go-test-json");
        assert_eq!(doc["exit_marker"], EXIT_MARKER);
    }
}
