//! Probes of issue #60 that need no engine: command lines that are wrong exit 2 (clap's
//! convention) with a message naming the flag, and an output that is the command's input is
//! refused before anything runs. Each command runs with `DOCKER_HOST` at a socket that does not
//! exist, so that a probe that got past its refusal cannot reach an engine.

use std::process::{Command, Output};

use crate::support::{root, text};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_swe-forge"))
        .args(args)
        .env("SWE_FORGE_NO_PROGRESS", "1")
        .env("DOCKER_HOST", "unix:///nonexistent/swe-forge-probe.sock")
        .output()
        .expect("the binary runs")
}

/// `validate -o` naming the input, also spelt another way or through a symlink, is refused
/// before the records are read or an engine is asked (export refuses the same; before, the
/// records were replaced by the validated ones).
#[test]
fn validate_refuses_an_output_that_is_its_input() {
    let tmp = tempfile::tempdir().unwrap();
    let records = tmp.path().join("records.jsonl");
    std::fs::copy(root().join("data/fixtures/instances.jsonl"), &records).unwrap();
    let before = std::fs::read(&records).unwrap();
    let link = tmp.path().join("link.jsonl");
    std::os::unix::fs::symlink(&records, &link).unwrap();
    let dotted = tmp.path().join(".").join("records.jsonl");
    for out in [&records, &link, &dotted] {
        let o = run(&["validate", "--records", records.to_str().unwrap(), "--repos", "x", "-o", out.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(1), "{}", text(&o));
        assert!(text(&o).contains("is the input (--records)"), "{}", text(&o));
        assert!(!text(&o).contains("Docker"), "refused before the engine: {}", text(&o));
    }
    assert_eq!(std::fs::read(&records).unwrap(), before);
}

/// Usage errors exit 2 naming the flag, before any file is read: a share that is no number, a day
/// that does not exist, a window that ends before it starts, a memory limit no container can run
/// in. Before, the first three exited 1 and `--memory-mb 1` ran every instance into
/// `infrastructure`.
#[test]
fn usage_errors_exit_2_naming_the_flag() {
    let tmp = tempfile::tempdir().unwrap();
    let (x, out) = (tmp.path().join("missing.jsonl"), tmp.path().join("o.jsonl"));
    let (x, out) = (x.to_str().unwrap(), out.to_str().unwrap());
    for (args, says) in [
        (&["curate", "--dataset", x, "--out", out, "--dedup-threshold", "NaN"][..], "--dedup-threshold"),
        (&["curate", "--dataset", x, "--out", out, "--dedup-threshold", "1.5"], "--dedup-threshold"),
        (&["mine", "--mirror", x, "-o", out, "--since", "2024-02-30"], "--since"),
        (&["mine", "--mirror", x, "-o", out, "--until", "2024-01-01T25:61:61Z"], "--until"),
        (&["mine", "--mirror", x, "-o", out, "--since", "2024-03-01", "--until", "2024-02-01"], "is after --until"),
        (&["validate", "--records", x, "--repos", x, "-o", out, "--memory-mb", "1"], "--memory-mb"),
        (&["validate", "--records", x, "--repos", x, "-o", out, "--memory-mb", "63"], "--memory-mb"),
    ] {
        let o = run(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(text(&o).contains(says), "{args:?}: {}", text(&o));
    }
    assert!(!std::path::Path::new(out).exists());
}

/// `regrade` failing on its first record prints nothing on stdout: its table's header comes with
/// the first row (issue #60: the header, then the error).
#[test]
fn regrade_failing_before_any_record_prints_no_header() {
    let tmp = tempfile::tempdir().unwrap();
    let records = tmp.path().join("r.jsonl");
    std::fs::write(&records, "{\"org\": 1}\n").unwrap();
    let (r, out) = (records.to_str().unwrap(), tmp.path().join("o.jsonl"));
    let o = run(&["regrade", "--records", r, "--work-dir", "w", "-o", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(o.stdout.is_empty(), "stdout: {}", String::from_utf8_lossy(&o.stdout));
    assert!(String::from_utf8_lossy(&o.stderr).contains("line 1: field `org`"), "{}", text(&o));
}
