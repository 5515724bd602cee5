//! The rust recipe's test command, run with the host's cargo on a real workspace (no engine is
//! needed for this one): a root package with `[workspace] members` has its member crates tested
//! too, and when a member's tests do not build the root package's tests still run, with a line
//! that says so.

use std::path::Path;
use std::process::Command;

use swe_forge_recipes::Recipe;

fn write(dir: &Path, path: &str, text: &str) {
    let p = dir.join(path);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// A root package `top` with one member crate `member`, each with one unit test.
fn workspace(dir: &Path) {
    write(
        dir,
        "Cargo.toml",
        "[package]\nname = \"top\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\nmembers = [\"member\"]\n",
    );
    write(dir, "src/lib.rs", "#[test]\nfn top_works() {}\n");
    write(dir, "member/Cargo.toml", "[package]\nname = \"member\"\nversion = \"0.1.0\"\nedition = \"2021\"\n");
    write(dir, "member/src/lib.rs", "#[test]\nfn member_works() {}\n");
}

fn run(dir: &Path, command: &str) -> String {
    let out = Command::new("bash")
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
fn a_root_package_tests_its_workspace_members_and_the_root_alone_when_they_do_not_build() {
    let recipe = Recipe::named("rust").unwrap();
    let tmp = tempfile::tempdir().unwrap();
    workspace(tmp.path());
    let log = run(tmp.path(), &recipe.test_command);
    assert!(log.contains("test top_works ... ok") && log.contains("test member_works ... ok"), "{log}");
    // Plain `cargo test` at the root, as before, never ran the member's test.
    assert!(!run(tmp.path(), "cargo test").contains("member_works"));
    write(tmp.path(), "member/src/lib.rs", "#[test]\nfn member_works() { not_there(); }\n");
    let log = run(tmp.path(), &recipe.test_command);
    assert!(log.contains("swe-forge: the tests of the workspace members do not build"), "{log}");
    assert!(log.contains("test top_works ... ok") && !log.contains("member_works ... ok"), "{log}");
}
