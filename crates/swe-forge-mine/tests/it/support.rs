//! Helpers: the project's fixture repositories, small git repositories made with the git CLI.

use std::path::{Path, PathBuf};
use std::process::Command;

use swe_forge_mine::{Candidate, Journal};

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// Makes the fixture repositories under `dir` with `data/fixtures/make-repos.sh`.
pub fn make_fixture_repos(dir: &Path) -> PathBuf {
    let repos = dir.join("repos");
    let out = Command::new("bash").arg(root().join("data/fixtures/make-repos.sh")).arg(&repos).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    repos
}

/// Runs git in `dir` with a fixed identity and date; returns stdout.
pub fn git(dir: &Path, args: &[&str]) -> String {
    swe_forge_test_support::git_at(dir, "2024-03-01T00:00:00Z", args)
}

pub fn write(dir: &Path, path: &str, text: &str) {
    let p = dir.join(path);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// Every candidate of a candidates file.
pub fn read_candidates(path: &Path) -> Vec<Candidate> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| Candidate::from_json_line(l).unwrap())
        .collect()
}

pub fn open_journal(path: &Path) -> Journal {
    Journal::open(path, false).unwrap()
}
