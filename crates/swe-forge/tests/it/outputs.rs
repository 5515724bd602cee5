//! Nothing lost, nothing left behind: outputs written through devices, FIFOs and symlinks,
//! never half of a run, no temporary file left by an error or a signal, no output touched by
//! a command that fails on its input, and inputs that cannot make a reader hang or grow.

use std::io::Read;
use std::os::unix::fs::{FileTypeExt, symlink};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{root, swe_forge, text};

fn fixtures() -> PathBuf {
    root().join("data/fixtures/instances.jsonl")
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

fn mkfifo(path: &Path) {
    assert!(Command::new("mkfifo").arg(path).status().unwrap().success());
}

/// Reads a FIFO to its end on another thread.
fn drain(fifo: &Path) -> std::thread::JoinHandle<String> {
    let fifo = fifo.to_owned();
    std::thread::spawn(move || {
        let mut s = String::new();
        std::fs::File::open(fifo).unwrap().read_to_string(&mut s).unwrap();
        s
    })
}

#[test]
fn export_writes_through_devices_fifos_and_symlinks_and_never_replaces_them() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let records = fixtures();
    let export = |flag: &str, out: &Path| {
        let o = swe_forge(&["export", "--all", "--records", records.to_str().unwrap(), flag, out.to_str().unwrap()]);
        assert!(o.status.success(), "{}", text(&o));
    };
    // A device of our own (root may make one): a copy of /dev/null that a test may break.
    let null = dir.join("null");
    assert!(Command::new("mknod").arg(&null).args(["c", "1", "3"]).status().unwrap().success());
    export("--parquet", &null);
    assert!(std::fs::metadata(&null).unwrap().file_type().is_char_device(), "the device was replaced");
    // A FIFO is written through.
    let fifo = dir.join("fifo");
    mkfifo(&fifo);
    let reader = drain(&fifo);
    export("--jsonl", &fifo);
    assert_eq!(reader.join().unwrap().lines().count(), 13);
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
    // A symlink to a regular file: the target gets the records, the link stays.
    std::fs::create_dir(dir.join("real")).unwrap();
    std::fs::write(dir.join("real/records.jsonl"), "old\n").unwrap();
    let link = dir.join("records.jsonl");
    symlink("real/records.jsonl", &link).unwrap();
    export("--jsonl", &link);
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the symlink was replaced");
    assert_eq!(std::fs::read_to_string(dir.join("real/records.jsonl")).unwrap().lines().count(), 13);
    // A symlink to /dev/stdout writes to the process's stdout.
    let stdout_link = dir.join("stdout.jsonl");
    symlink("/dev/stdout", &stdout_link).unwrap();
    let o = swe_forge(&[
        "export",
        "--all",
        "--records",
        records.to_str().unwrap(),
        "--jsonl",
        stdout_link.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout).lines().count(), 13, "{}", text(&o));
    assert!(std::fs::symlink_metadata(&stdout_link).unwrap().file_type().is_symlink(), "the symlink was replaced");
    assert_eq!(names(dir), ["fifo", "null", "real", "records.jsonl", "stdout.jsonl"], "temporary files left");
    assert_eq!(names(&dir.join("real")), ["records.jsonl"], "temporary files left");
}

#[test]
fn curate_never_follows_a_planted_temporary_file() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let victim = dir.join("victim");
    std::fs::write(&victim, "precious\n").unwrap();
    let out = dir.join("curated.jsonl");
    // The names the old writers used next to the output.
    symlink(&victim, dir.join("curated.jsonl.tmp")).unwrap();
    symlink(&victim, dir.join("curated.tmp")).unwrap();
    let o =
        swe_forge(&["curate", "--dataset", fixtures().to_str().unwrap(), "--out", out.to_str().unwrap(), "--no-dedup"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
    assert_eq!(std::fs::read_to_string(&out).unwrap().lines().count(), 13);
    assert_eq!(names(dir), ["curated.jsonl", "curated.jsonl.tmp", "curated.tmp", "victim"]);
}

/// Waits until `path` exists or `limit` passes.
fn wait_for(limit: Duration, mut ready: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if ready() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

#[test]
fn an_export_stopped_between_its_files_leaves_the_old_files_and_no_temporary_file() {
    for signal in ["TERM", "INT"] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let (jsonl, parquet, tests) = (dir.join("records.jsonl"), dir.join("instances.parquet"), dir.join("tests"));
        std::fs::write(&jsonl, "old jsonl\n").unwrap();
        std::fs::write(&parquet, "old parquet\n").unwrap();
        // Nobody reads the FIFO: the export blocks on its last output, after the first two.
        mkfifo(&tests);
        let child = Command::new(env!("CARGO_BIN_EXE_swe-forge"))
            .args(["export", "--all", "--records", fixtures().to_str().unwrap()])
            .args(["--jsonl", jsonl.to_str().unwrap(), "--parquet", parquet.to_str().unwrap()])
            .args(["--tests-parquet", tests.to_str().unwrap()])
            .env("SWE_FORGE_NO_PROGRESS", "1")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Both first files are written by then: as temporary files (or, before, already renamed).
        let written = || {
            names(dir).iter().filter(|n| n.ends_with(".tmp")).count() == 2
                || std::fs::read(&parquet).is_ok_and(|b| b.starts_with(b"PAR1"))
        };
        assert!(wait_for(Duration::from_secs(60), written), "{:?}", names(dir));
        std::thread::sleep(Duration::from_millis(200));
        assert!(Command::new("kill").arg(format!("-{signal}")).arg(child.id().to_string()).status().unwrap().success());
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(130), "SIG{signal}: {}", text(&o));
        assert_eq!(std::fs::read_to_string(&jsonl).unwrap(), "old jsonl\n", "SIG{signal}: outputs of two runs");
        assert_eq!(std::fs::read_to_string(&parquet).unwrap(), "old parquet\n", "SIG{signal}: outputs of two runs");
        assert_eq!(names(dir), ["instances.parquet", "records.jsonl", "tests"], "SIG{signal}: temporary files left");
    }
}

/// A Harbor export writes its task folders as the records come, into a staging folder: a signal
/// while it waits for more records removes the staging folder and leaves the earlier export.
#[test]
fn a_harbor_export_stopped_mid_stream_leaves_no_staging_folder() {
    for signal in ["INT", "TERM"] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let input = dir.join("records.fifo");
        mkfifo(&input);
        let out = dir.join("harbor");
        std::fs::create_dir(&out).unwrap();
        std::fs::write(out.join("swe-forge-harbor.json"), "{}\n").unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_swe-forge"))
            .args([
                "export",
                "--records",
                input.to_str().unwrap(),
                "--format",
                "harbor",
                "--dir",
                out.to_str().unwrap(),
            ])
            .env("SWE_FORGE_NO_PROGRESS", "1")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let record = serde_json::json!({
            "org": "o", "repo": "r", "number": 7, "state": "closed", "title": "Fix pop", "body": null,
            "base": {"label": "o:main", "ref": "main", "sha": "0123456789abcdef0123456789abcdef01234567"},
            "resolved_issues": [], "fix_patch": "diff --git a/p.go b/p.go\n", "instance_id": "o__r-7",
            "test_patch": "diff --git a/p_test.go b/p_test.go\n--- a/p_test.go\n+++ b/p_test.go\n@@ -1 +1 @@\n-a\n+b\n",
            "fixed_tests": {"p::TestB": {"run": "NONE", "test": "FAIL", "fix": "PASS"}},
            "swe_forge": {"schema_version": 1, "status": "accepted", "parser": "go-test-json",
                "image": "swe-forge/o__r:pr-7-abc", "image_id": "sha256:feed"}
        });
        // Opened without blocking (O_NONBLOCK) once the export reads it, so that an export that
        // fails first fails the test instead of hanging it.
        let start = Instant::now();
        let mut writer = loop {
            use std::os::unix::fs::OpenOptionsExt;
            if let Ok(w) = std::fs::File::options().write(true).custom_flags(0o4000).open(&input) {
                break w;
            }
            if let Some(status) = child.try_wait().unwrap() {
                let mut err = String::new();
                child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
                panic!("the export ended before reading its input ({status}): {err}");
            }
            assert!(start.elapsed() < Duration::from_secs(60), "the export never opened its input");
            std::thread::sleep(Duration::from_millis(20));
        };
        std::io::Write::write_all(&mut writer, format!("{record}\n").as_bytes()).unwrap();
        // The first task folder is staged beside the output; the export then waits for more.
        let staged =
            || names(dir).iter().any(|n| n.ends_with(".partial") && dir.join(n).join("o__r-7/task.toml").exists());
        assert!(wait_for(Duration::from_secs(60), staged), "{:?}", names(dir));
        assert!(Command::new("kill").arg(format!("-{signal}")).arg(child.id().to_string()).status().unwrap().success());
        let code = child.wait().unwrap().code();
        drop(writer);
        assert_eq!(code, Some(130), "SIG{signal}");
        assert_eq!(names(dir), ["harbor", "records.fifo"], "SIG{signal}: a staging folder was left");
        assert_eq!(names(&out), ["swe-forge-harbor.json"], "SIG{signal}: the earlier export was touched");
    }
}

#[test]
fn a_mine_that_fails_on_its_input_leaves_the_outputs_as_they_were() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let notgit = dir.join("notgit");
    std::fs::create_dir(&notgit).unwrap();
    let out = dir.join("prev.jsonl");
    let mine = |fresh: bool| {
        let mut args =
            vec!["mine", "--mirror", notgit.to_str().unwrap(), "--repo", "a/b", "--out", out.to_str().unwrap()];
        if fresh {
            args.push("--fresh");
        }
        let o = swe_forge(&args);
        assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    };
    // No previous outputs: no new empty files.
    mine(false);
    mine(true);
    assert_eq!(names(dir), ["notgit"]);
    // Previous outputs stay as they were, with --fresh too.
    std::fs::write(&out, "previous candidates\n").unwrap();
    std::fs::write(dir.join("prev.progress.jsonl"), "previous progress\n").unwrap();
    mine(true);
    mine(false);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "previous candidates\n");
    assert_eq!(std::fs::read_to_string(dir.join("prev.progress.jsonl")).unwrap(), "previous progress\n");
    assert_eq!(names(dir), ["notgit", "prev.jsonl", "prev.progress.jsonl"]);
}

/// Runs `swe-forge parse` with a time limit; kills it when it overruns.
fn parse_within(args: &[&str], limit: Duration) -> std::process::Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_swe-forge"))
        .arg("parse")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            let o = child.wait_with_output().unwrap();
            panic!("parse {args:?} still running after {limit:?}: {}", text(&o));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn parse_reads_a_hostile_results_folder_in_bounded_time_and_memory() {
    let tmp = tempfile::tempdir().unwrap();
    let results = tmp.path().join("results");
    std::fs::create_dir_all(results.join("sub")).unwrap();
    std::fs::write(
        results.join("sub/TEST-a.xml"),
        r#"<testsuite name="a"><testcase classname="p.A" name="ok"/></testsuite>"#,
    )
    .unwrap();
    symlink("/dev/zero", results.join("zero.xml")).unwrap();
    symlink("..", results.join("sub/loop")).unwrap();
    mkfifo(&results.join("fifo.xml"));
    let o = parse_within(&["-f", "junit-xml", results.to_str().unwrap()], Duration::from_secs(60));
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout).lines().count(), 1, "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    for warned in ["zero.xml", "fifo.xml", "sub/loop"] {
        assert!(err.contains(warned), "no warning about {warned}: {err}");
    }
}

#[test]
fn parse_of_an_endless_xml_stream_ends_with_a_warning() {
    let o = parse_within(&["-f", "junit-xml", "/dev/zero"], Duration::from_secs(120));
    assert!(o.status.code().is_some(), "killed by a signal: {}", text(&o));
    assert!(text(&o).contains("warning"), "{}", text(&o));
}
