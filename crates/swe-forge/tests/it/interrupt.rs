//! Stopping a validation on the real engine: SIGINT and SIGTERM while a test run hangs end the
//! process with 130 within seconds, remove every container of the run and leave a state store
//! that a second run resumes from; containers of a run killed with SIGKILL are removed by
//! `swe-forge images cleanup`. Every test removes its runs' containers even when it fails.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use swe_forge_core::{RejectReason, ValidationStatus};

use crate::pipeline::{pipeline_in, reasons};
use crate::support::{read_records, root, swe_forge, text};

const LABEL_RUN: &str = "dev.swe-forge.run";

/// A validation of one Go fixture whose test command hangs, started in `dir`.
struct Hanging {
    records: PathBuf,
    repos: PathBuf,
    pipeline: PathBuf,
    out: PathBuf,
}

impl Hanging {
    fn new(dir: &Path) -> Hanging {
        let extra = "[overrides.\"forge-fixtures/gostack\"]\ntest_command = \"echo started; touch /tmp/swe-forge-started; sleep 600\"\n";
        let pipeline = pipeline_in(dir, extra);
        let fixtures = read_records(&root().join("data/fixtures/instances.jsonl"));
        let records = dir.join("records.jsonl");
        let one: Vec<_> = fixtures.iter().filter(|r| r.instance_id == "forge-fixtures__gostack-1").collect();
        swe_forge_core::write_jsonl(std::fs::File::create(&records).unwrap(), one).unwrap();
        Hanging { records, repos: dir.join("repos"), pipeline, out: dir.join("out/validated.jsonl") }
    }

    fn args<'a>(&'a self, timeout: &'a str) -> Vec<&'a str> {
        vec![
            "validate",
            "--records",
            self.records.to_str().unwrap(),
            "--repos",
            self.repos.to_str().unwrap(),
            "--out",
            self.out.to_str().unwrap(),
            "--pipeline",
            self.pipeline.to_str().unwrap(),
            "--timeout",
            timeout,
        ]
    }

    fn spawn(&self, log: &Path) -> Run {
        let child = Command::new(env!("CARGO_BIN_EXE_swe-forge"))
            .args(self.args("600"))
            .env("SWE_FORGE_NO_PROGRESS", "1")
            .env("SWE_FORGE_EVIDENCE_RUNS", "0")
            .env("SWE_FORGE_HUNK_RUNS", "0")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(log).unwrap())
            .spawn()
            .unwrap();
        Run { child, log: log.to_owned() }
    }
}

/// A child `swe-forge`; dropping it kills the process and removes every container of its run.
struct Run {
    child: Child,
    log: PathBuf,
}

impl Run {
    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The run id of the child once its hanging test run is under way (after the image builds,
    /// which may take minutes on a cold engine; their setup runs are containers of the run too).
    fn wait_for_hanging_test(&mut self) -> String {
        let prefix = format!("{}-", self.pid());
        let deadline = Instant::now() + Duration::from_secs(900);
        while Instant::now() < deadline {
            assert!(self.child.try_wait().unwrap().is_none(), "swe-forge ended early: {}", self.log_text());
            for (id, run) in containers(LABEL_RUN, false).into_iter().filter(|(_, run)| run.starts_with(&prefix)) {
                // The engine keeps no log of a run (its output is read by attach): the test
                // command leaves a file to say it started.
                let started =
                    Command::new("docker").args(["exec", &id, "test", "-f", "/tmp/swe-forge-started"]).output();
                if started.is_ok_and(|o| o.status.success()) {
                    return run;
                }
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        panic!("the test run did not start: {}", self.log_text())
    }

    fn signal(&self, name: &str) -> Instant {
        let o = Command::new("kill").args([&format!("-{name}"), &self.pid().to_string()]).output().unwrap();
        assert!(o.status.success(), "{}", text(&o));
        Instant::now()
    }

    /// Waits for the exit, at most `limit`; the exit code and how long it took.
    fn wait(&mut self, since: Instant, limit: Duration) -> (Option<i32>, Duration) {
        while since.elapsed() < limit {
            if let Some(status) = self.child.try_wait().unwrap() {
                return (status.code(), since.elapsed());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("swe-forge did not exit within {limit:?}: {}", self.log_text())
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Run {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let prefix = format!("{}-", self.pid());
        for (id, _) in containers(LABEL_RUN, true).into_iter().filter(|(_, run)| run.starts_with(&prefix)) {
            let _ = Command::new("docker").args(["rm", "-f", &id]).output();
        }
    }
}

/// `(container id, run label)` of the containers matching label filter `filter`; exited ones too
/// with `all`.
fn containers(filter: &str, all: bool) -> Vec<(String, String)> {
    let label = format!("label={filter}");
    let format = format!("{{{{.ID}}}} {{{{.Label \"{LABEL_RUN}\"}}}}");
    let mut args = vec!["ps", "--no-trunc", "--filter", &label, "--format", &format];
    if all {
        args.push("-a");
    }
    let o = Command::new("docker").args(&args).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| l.split_once(' ').map(|(id, run)| (id.to_owned(), run.to_owned())))
        .collect()
}

/// Stops a validation with `signal` while its test command hangs, and checks what is left.
fn stop_and_resume(signal: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let hanging = Hanging::new(tmp.path());
    let mut run = hanging.spawn(&tmp.path().join("stderr.log"));
    let id = run.wait_for_hanging_test();
    let sent = run.signal(signal);
    let (code, took) = run.wait(sent, Duration::from_secs(30));
    let log = run.log_text();
    eprintln!("{log}SIG{signal} to exit: {} ms", took.as_millis());
    assert_eq!(code, Some(130), "{log}");
    // The hanging run's container, and the one started ahead for the next run when it was up.
    let removed = log.lines().find_map(|l| {
        let (n, rest) = l.strip_prefix("removed ")?.split_once(' ')?;
        rest.starts_with(&format!("container(s) of run {id} in ")).then(|| n.parse::<u32>().ok())?
    });
    assert!(matches!(removed, Some(1 | 2)), "{log}");
    assert_eq!(containers(&format!("{LABEL_RUN}={id}"), true), [], "containers of the run are left: {log}");

    // The state store opens and holds the instance as not finished.
    let store = swe_forge_store::Store::open(&tmp.path().join("work/state.sqlite")).unwrap();
    assert_eq!(store.validated().unwrap().len(), 0);
    drop(store);

    // Started again (phases now cut off after 3 s), validate resumes and finishes.
    let again = swe_forge(&hanging.args("3"));
    assert!(again.status.success(), "{}", text(&again));
    let all = read_records(&hanging.out);
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].status(), ValidationStatus::Rejected);
    assert!(reasons(&all[0]).contains(&RejectReason::Timeout), "{:?}", all[0].swe_forge);
}

#[test]
fn sigint_during_a_test_run_removes_the_runs_containers_and_exits_130() {
    stop_and_resume("INT");
}

#[test]
fn sigterm_during_a_test_run_removes_the_runs_containers_and_exits_130() {
    stop_and_resume("TERM");
}

#[test]
fn a_second_sigint_during_the_cleanup_exits_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let hanging = Hanging::new(tmp.path());
    let mut run = hanging.spawn(&tmp.path().join("stderr.log"));
    run.wait_for_hanging_test();
    let sent = run.signal("INT");
    // The cleanup takes a few hundred milliseconds at least (it waits for late creates).
    std::thread::sleep(Duration::from_millis(100));
    run.signal("INT");
    let (code, took) = run.wait(sent, Duration::from_secs(10));
    let log = run.log_text();
    eprintln!("{log}two SIGINTs to exit: {} ms", took.as_millis());
    assert_eq!(code, Some(130), "{log}");
    assert!(log.contains("second signal: exiting without finishing the cleanup"), "{log}");
    // Whatever the cleanup did not reach, `Run`'s drop removes.
}

#[test]
fn images_cleanup_removes_the_containers_of_a_killed_run_and_no_others() {
    let tmp = tempfile::tempdir().unwrap();
    let hanging = Hanging::new(tmp.path());
    let mut killed = hanging.spawn(&tmp.path().join("killed.log"));
    let killed_id = killed.wait_for_hanging_test();
    killed.signal("KILL");
    let _ = killed.child.wait();
    // The hanging run's container (and the one started ahead for the next run) stay.
    let left = containers(&format!("{LABEL_RUN}={killed_id}"), true);
    assert!(matches!(left.len(), 1 | 2), "SIGKILL leaves the containers: {left:?}");

    // A live run of another work folder: its container must survive the cleanup.
    let other = tmp.path().join("live");
    std::fs::create_dir_all(&other).unwrap();
    let live_hanging = Hanging::new(&other);
    let mut live = live_hanging.spawn(&other.join("live.log"));
    let live_id = live.wait_for_hanging_test();
    // Let the container started ahead of the live run's next run come up.
    std::thread::sleep(Duration::from_secs(3));
    let live_before = containers(&format!("{LABEL_RUN}={live_id}"), false);
    assert!(!live_before.is_empty());

    let out = swe_forge(&["images", "cleanup", "--dry-run"]);
    assert!(out.status.success(), "{}", text(&out));
    for (leftover, _) in &left {
        let short = &leftover[..12];
        assert!(text(&out).contains(&format!("would remove container {short} of run {killed_id}")), "{}", text(&out));
    }
    let out = swe_forge(&["images", "cleanup"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains(&format!("of run {killed_id}")), "{}", text(&out));
    assert_eq!(containers(&format!("{LABEL_RUN}={killed_id}"), true), [], "{}", text(&out));
    // The live run's containers stay (one started ahead may have joined them meanwhile).
    let live_after = containers(&format!("{LABEL_RUN}={live_id}"), false);
    assert!(live_before.iter().all(|c| live_after.contains(c)), "before {live_before:?}, after {live_after:?}");
}

#[test]
fn a_second_validation_of_the_same_work_folder_is_refused_while_the_first_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let hanging = Hanging::new(tmp.path());
    let mut first = hanging.spawn(&tmp.path().join("first.log"));
    let id = first.wait_for_hanging_test();
    let running = containers(&format!("{LABEL_RUN}={id}"), false);

    // Without the store's writer lock this one validates the same instance alongside (phases cut
    // after 3 s, so it would finish and succeed), writing the same logs and store rows.
    let second = swe_forge(&hanging.args("3"));
    assert_eq!(second.status.code(), Some(1), "{}", text(&second));
    assert!(text(&second).contains("is in use by another swe-forge process"), "{}", text(&second));
    assert!(!hanging.out.exists(), "the refused run wrote its output");

    // The first is unharmed: still running its test, and it stops as usual.
    assert!(first.child.try_wait().unwrap().is_none(), "{}", first.log_text());
    // Its containers are still up. The one started ahead for its next run may have come up
    // since `running` was listed, so the list may have grown, never shrunk.
    let after = containers(&format!("{LABEL_RUN}={id}"), false);
    assert!(running.iter().all(|c| after.contains(c)), "before {running:?}, after {after:?}");
    let sent = first.signal("INT");
    let (code, _) = first.wait(sent, Duration::from_secs(30));
    assert_eq!(code, Some(130), "{}", first.log_text());
}

#[test]
fn a_command_waiting_on_an_input_fifo_stops_on_sigint_and_sigterm() {
    let dataset = root().join("data/fixtures/instances.jsonl");
    stops_while_waiting_on_a_fifo(&[
        ("INT", vec!["validate", "--records", "FIFO", "--repos", "x", "--out", "o.jsonl"]),
        ("TERM", vec!["validate", "--records", "FIFO", "--repos", "x", "--out", "o.jsonl"]),
        ("INT", vec!["evaluate", "--dataset", dataset.to_str().unwrap(), "--predictions", "FIFO", "--out", "eval"]),
    ]);
}

/// `--pipeline FIFO` (and `run FIFO`) is read off the runtime's thread too (issue #60).
#[test]
fn a_command_waiting_on_a_pipeline_fifo_stops_on_sigint_and_sigterm() {
    let (fixtures, devset) = (root().join("data/fixtures/instances.jsonl"), root().join("data/devset/instances.jsonl"));
    let (f, d) = (fixtures.to_str().unwrap(), devset.to_str().unwrap());
    stops_while_waiting_on_a_fifo(&[
        ("INT", vec!["validate", "--records", f, "--repos", "x", "--pipeline", "FIFO", "--out", "o.jsonl"]),
        ("TERM", vec!["evaluate", "--dataset", d, "--predictions", "gold", "--pipeline", "FIFO", "--out", "eval"]),
        ("INT", vec!["mine", "--pipeline", "FIFO"]),
        ("TERM", vec!["run", "FIFO"]),
    ]);
}

/// Runs each command, `FIFO` in its arguments a FIFO nobody writes, sends it the signal once it
/// has opened the FIFO, and expects exit 130 within 30 s.
fn stops_while_waiting_on_a_fifo(cases: &[(&str, Vec<&str>)]) {
    let tmp = tempfile::tempdir().unwrap();
    let fifo = tmp.path().join("input.fifo");
    for (signal, args) in cases {
        let o = Command::new("mkfifo").arg(&fifo).output().unwrap();
        assert!(o.status.success(), "{}", text(&o));
        let args: Vec<&str> = args.iter().map(|&a| if a == "FIFO" { fifo.to_str().unwrap() } else { a }).collect();
        let log = tmp.path().join("stderr.log");
        let child = Command::new(env!("CARGO_BIN_EXE_swe-forge"))
            .args(&args)
            .current_dir(tmp.path())
            .env("SWE_FORGE_NO_PROGRESS", "1")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        let mut run = Run { child, log };
        // Opening the FIFO for writing succeeds once the command has opened it to read; nothing
        // is written, so its read waits. A command that ends first fails the test.
        let started = Instant::now();
        let writer = loop {
            use std::os::unix::fs::OpenOptionsExt;
            match std::fs::File::options().write(true).custom_flags(libc::O_NONBLOCK).open(&fifo) {
                Ok(w) => break w,
                Err(e) if e.raw_os_error() == Some(libc::ENXIO) => {
                    let ended = run.child.try_wait().unwrap();
                    assert!(ended.is_none(), "{args:?} ended ({ended:?}) before reading: {}", run.log_text());
                    assert!(started.elapsed() < Duration::from_secs(30), "{args:?} never opened the FIFO");
                    std::thread::sleep(Duration::from_millis(50));
                }
                Err(e) => panic!("opening {}: {e}", fifo.display()),
            }
        };
        let sent = run.signal(signal);
        let (code, _) = run.wait(sent, Duration::from_secs(30));
        assert_eq!(code, Some(130), "{args:?} SIG{signal}: {}", run.log_text());
        drop(writer);
        std::fs::remove_file(&fifo).unwrap();
    }
}
