//! What a user sees for bad input: an unreachable engine, a malformed record, a bad pipeline.

use crate::support::{root, swe_forge, text};
use std::process::Command;

#[test]
fn unreachable_engine_gives_one_clear_error() {
    let tmp = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_swe-forge"))
        .args(["validate", "--records"])
        .arg(root().join("data/fixtures/instances.jsonl"))
        .args(["--repos", "nowhere", "--out"])
        .arg(tmp.path().join("v.jsonl"))
        .env("DOCKER_HOST", format!("unix://{}/no-such.sock", tmp.path().display()))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no Docker engine answers at unix://"), "{stderr}");
    assert!(stderr.contains("scripts/setup-docker.sh"), "{stderr}");
}

#[test]
fn malformed_record_names_line_and_field() {
    let tmp = tempfile::tempdir().unwrap();
    let good = std::fs::read_to_string(root().join("data/fixtures/instances.jsonl")).unwrap();
    let first = good.lines().next().unwrap();
    let bad = first.replacen("\"number\": 1", "\"number\": \"one\"", 1);
    assert_ne!(bad, first);
    let path = tmp.path().join("bad.jsonl");
    std::fs::write(&path, format!("{first}\n{bad}\n")).unwrap();
    let out = swe_forge(&[
        "validate",
        "--records",
        path.to_str().unwrap(),
        "--repos",
        "x",
        "--out",
        tmp.path().join("o.jsonl").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out).contains("line 2: field `number`"), "{}", text(&out));
}

#[test]
fn pipeline_with_a_typo_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("p.toml");
    std::fs::write(
        &path,
        "name='x'\n[source]\nrecords='a'\nrepos='b'\n[output]\nvalidated='v'\n[validate]\ntimout=3\n",
    )
    .unwrap();
    let out = swe_forge(&["run", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out).contains("unknown field `timout`"), "{}", text(&out));
}

#[test]
fn every_command_has_help() {
    for cmd in [
        &["--help"][..],
        &["validate", "--help"],
        &["export", "--help"],
        &["run", "--help"],
        &["demo", "--help"],
        &["images", "--help"],
    ] {
        let out = swe_forge(cmd);
        assert!(out.status.success(), "{cmd:?}: {}", text(&out));
        assert!(text(&out).contains("Usage:"), "{cmd:?}");
    }
}
