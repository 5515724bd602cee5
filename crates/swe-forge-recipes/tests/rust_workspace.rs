//! The rust recipe's test command, run with the host's cargo on a real workspace (no engine is
//! needed for this one): a root package with `[workspace] members` has its member crates tested
//! too, and when a member's tests do not build every other package's tests still run, member by
//! member, with a line that says so; a test binary that hangs is killed by the command's watchdog and the binaries
//! after it still run.

use std::path::Path;
use std::process::Command;

use swe_forge_recipes::Recipe;

fn write(dir: &Path, path: &str, text: &str) {
    let p = dir.join(path);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// A root package `top` with member crates `member` and `other`, each with one unit test.
fn workspace(dir: &Path) {
    write(
        dir,
        "Cargo.toml",
        "[package]\nname = \"top\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\nmembers = [\"member\", \"other\"]\n",
    );
    write(dir, "other/Cargo.toml", "[package]\nname = \"other\"\nversion = \"0.1.0\"\nedition = \"2021\"\n");
    write(dir, "other/src/lib.rs", "#[test]\nfn other_works() {}\n");
    write(dir, "src/lib.rs", "#[test]\nfn top_works() {}\n");
    write(dir, "member/Cargo.toml", "[package]\nname = \"member\"\nversion = \"0.1.0\"\nedition = \"2021\"\n");
    write(dir, "member/src/lib.rs", "#[test]\nfn member_works() {}\n");
}

fn run(dir: &Path, command: &str) -> String {
    run_with(dir, command, &[])
}

fn run_with(dir: &Path, command: &str, env: &[(&str, &str)]) -> String {
    let out = Command::new("bash")
        .envs(env.iter().copied())
        .arg("-c")
        .arg(command)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .env("CARGO_NET_OFFLINE", "true")
        .output()
        .unwrap();
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

#[test]
fn a_root_package_tests_its_workspace_members_and_each_alone_when_one_does_not_build() {
    let recipe = Recipe::named("rust").unwrap();
    let tmp = tempfile::tempdir().unwrap();
    workspace(tmp.path());
    let log = run(tmp.path(), &recipe.test_command);
    assert!(log.contains("test top_works ... ok") && log.contains("test member_works ... ok"), "{log}");
    // Plain `cargo test` at the root, as before, never ran the member's test.
    assert!(!run(tmp.path(), "cargo test").contains("member_works"));
    write(tmp.path(), "member/src/lib.rs", "#[test]\nfn member_works() { not_there(); }\n");
    let log = run(tmp.path(), &recipe.test_command);
    assert!(log.contains("swe-forge: the tests of the workspace members do not build together"), "{log}");
    assert!(log.contains("test top_works ... ok") && !log.contains("member_works ... ok"), "{log}");
    // The member whose tests build still runs them (before, only the root package's tests ran).
    assert!(log.contains("test other_works ... ok"), "{log}");
}

#[test]
fn a_test_binary_that_hangs_is_killed_and_the_next_binaries_run() {
    let recipe = Recipe::named("rust").unwrap();
    let tmp = tempfile::tempdir().unwrap();
    write(tmp.path(), "Cargo.toml", "[package]\nname = \"hang\"\nversion = \"0.1.0\"\nedition = \"2021\"\n");
    write(tmp.path(), "src/lib.rs", "#[test]\nfn quick() {}\n");
    write(
        tmp.path(),
        "tests/a_deadlock.rs",
        "#[test]\nfn deadlocks() { loop { std::thread::sleep(std::time::Duration::from_millis(50)); } }\n",
    );
    write(tmp.path(), "tests/b_later.rs", "#[test]\nfn after() {}\n");
    // Built first, so that the limit counts the test binary's run only.
    assert!(run(tmp.path(), "cargo test --no-run 2>&1; echo built").contains("built"));
    let log = run_with(tmp.path(), &recipe.test_command, &[("SWE_FORGE_TEST_BINARY_LIMIT", "2")]);
    assert!(log.contains("swe-forge: test binary a_deadlock-") && log.contains("ran for over 2 s; killed"), "{log}");
    assert!(log.contains("(signal: 9, SIGKILL: kill)"), "{log}");
    assert!(log.contains("test after ... ok") && log.contains("test quick ... ok"), "{log}");
}
