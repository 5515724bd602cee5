//! Helpers: paths of the repository, running the binary, fixture repositories in a tempdir.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

pub fn swe_forge(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_swe-forge"))
        .args(args)
        .env("SWE_FORGE_NO_PROGRESS", "1")
        .output()
        .expect("the binary runs")
}

pub fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

/// Makes the fixture repositories in `dir` with the project's own script.
pub fn make_repos(dir: &Path) -> PathBuf {
    let repos = dir.join("repos");
    let out = Command::new("bash").arg(root().join("data/fixtures/make-repos.sh")).arg(&repos).output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    repos
}

pub fn read_records(path: &Path) -> Vec<swe_forge_core::Instance> {
    swe_forge_core::read_jsonl(std::fs::read(path).unwrap().as_slice()).unwrap()
}
