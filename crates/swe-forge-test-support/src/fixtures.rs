//! Fixture helpers: the workspace's files, the devset, git with a fixed identity, records.

use std::path::{Path, PathBuf};
use std::process::Command;

use swe_forge_core::Instance;

/// The devset: the published records every crate tests against.
pub const DEVSET: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/devset/instances.jsonl");

/// The workspace's root folder.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The devset's text.
pub fn devset_text() -> String {
    std::fs::read_to_string(DEVSET).unwrap_or_else(|e| panic!("devset {DEVSET} not readable: {e}"))
}

/// The devset's records.
pub fn devset() -> Vec<Instance> {
    swe_forge_core::read_jsonl(devset_text().as_bytes()).unwrap()
}

/// Runs the git command line in `dir` with a fixed identity (no system or global configuration,
/// branch `main`, local submodule URLs allowed) and returns its trimmed stdout; a failing command
/// fails the test.
pub fn git(dir: &Path, args: &[&str]) -> String {
    run_git(dir, None, args)
}

/// [`git`] with author and committer date `date` (RFC 3339).
pub fn git_at(dir: &Path, date: &str, args: &[&str]) -> String {
    run_git(dir, Some(date), args)
}

fn run_git(dir: &Path, date: Option<&str>, args: &[&str]) -> String {
    let mut cmd = Command::new("git");
    cmd.args(["-c", "init.defaultBranch=main", "-c", "protocol.file.allow=always"])
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null");
    if let Some(date) = date {
        cmd.env("GIT_AUTHOR_DATE", date).env("GIT_COMMITTER_DATE", date);
    }
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// A closed PR's record with empty patches, no test lists and no `swe_forge` block; base commit
/// all zeros, `instance_id` the expected one.
pub fn record(org: &str, repo: &str, number: u64) -> Instance {
    let mut i: Instance = serde_json::from_value(serde_json::json!({
        "org": org, "repo": repo, "number": number, "state": "closed", "title": "t", "body": null,
        "base": {"label": format!("{org}:main"), "ref": "main", "sha": "0000000000000000000000000000000000000000"},
        "resolved_issues": [], "fix_patch": "", "test_patch": ""
    }))
    .unwrap();
    i.instance_id = i.expected_id();
    i
}
