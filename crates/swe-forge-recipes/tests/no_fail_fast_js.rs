//! The strict rule's pre-test step for JavaScript (`no-fail-fast.js`), run with the host's node on
//! a project's package.json: runner flags that stop at the first failure are removed, and grunt,
//! which stops at the first task that fails or warns (a linter before the tests), gets `--force`.

use std::process::Command;

fn scripts_after(package: &str) -> serde_json::Value {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("package.json"), package).unwrap();
    let out = Command::new("bash")
        .arg("-c")
        .arg(swe_forge_recipes::no_fail_fast_js_step())
        .current_dir(tmp.path())
        .output()
        .expect("bash runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let after: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(tmp.path().join("package.json")).unwrap()).unwrap();
    after["scripts"].clone()
}

#[test]
fn grunt_goes_on_past_a_failed_task_and_runner_flags_stop_nothing() {
    let scripts = scripts_after(
        r#"{"scripts": {"test": "grunt test", "lint": "grunt jshint --force", "unit": "mocha --bail test", "build": "node build.js"}}"#,
    );
    assert_eq!(scripts["test"], "grunt test --force");
    assert_eq!(scripts["lint"], "grunt jshint --force", "already forced");
    assert_eq!(scripts["unit"], "mocha test");
    assert_eq!(scripts["build"], "node build.js");
}
