//! The Docker engine is restarted while a test run is under way; the validation survives: the
//! killed run is retried as an infrastructure failure and the instance ends as it would have.
//!
//! This is its own test binary on purpose: restarting the engine kills every container, so it
//! must not share a process with other Docker tests (cargo runs test binaries one at a time).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn root() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

fn engine_answers() -> bool {
    Command::new("docker").arg("info").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok_and(|s| s.success())
}

fn restart_engine() {
    let _ = Command::new("pkill").args(["-x", "dockerd"]).status();
    let deadline = Instant::now() + Duration::from_secs(60);
    let running =
        || Command::new("pgrep").args(["-x", "dockerd"]).stdout(Stdio::null()).status().is_ok_and(|s| s.success());
    while running() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(200));
    }
    // The same script CI and users start the engine with.
    let out = Command::new("bash").arg(root().join("scripts/setup-docker.sh")).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn validation_survives_an_engine_restart() {
    assert!(engine_answers(), "a Docker engine must answer (bash scripts/setup-docker.sh)");
    let tmp = tempfile::tempdir().unwrap();
    let repos = tmp.path().join("repos");
    let made = Command::new("bash").arg(root().join("data/fixtures/make-repos.sh")).arg(&repos).output().unwrap();
    assert!(made.status.success());
    let pipeline = tmp.path().join("p.toml");
    std::fs::write(
        &pipeline,
        format!(
            "name = \"restart\"\n[source]\nrecords = \"{}\"\nrepos = \"{}\"\n[filters]\ninstances = [\"forge-fixtures__gostack-1\"]\n\
             [validate]\nwork_dir = \"work\"\n[overrides.\"forge-fixtures/gostack\"]\ntest_command = \"sleep 8; go test -json -count=1 -vet=off ./...\"\n\
             [output]\nvalidated = \"out/v.jsonl\"\n",
            root().join("data/fixtures/instances.jsonl").display(),
            repos.display()
        ),
    )
    .unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_swe-forge"))
        .args(["run", pipeline.to_str().unwrap()])
        .env("SWE_FORGE_NO_PROGRESS", "1")
        // No evidence runs: five more runs of the eight-second test command, after the restart.
        .env("SWE_FORGE_EVIDENCE_RUNS", "0")
        .env("SWE_FORGE_HUNK_RUNS", "0")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let child_pid = child.id();
    // Wait until the first test run's container is up (one of the instance image: the toolchain's
    // version probe runs in a container of that role too, on the toolchain image), then restart the
    // engine under it.
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        let ps = Command::new("docker")
            .args(["ps", "--filter", "label=dev.swe-forge.role=run", "--format", "{{.Image}}"])
            .output()
            .unwrap();
        if String::from_utf8_lossy(&ps.stdout)
            .lines()
            .any(|image| image.starts_with("swe-forge/forge-fixtures__gostack:pr-"))
        {
            break;
        }
        assert!(Instant::now() < deadline, "no test run started");
        std::thread::sleep(Duration::from_millis(200));
    }
    std::thread::sleep(Duration::from_secs(2));
    restart_engine();
    // The engine answers again: other Docker tests may start (`scripts/test.sh` waits for this).
    if let Some(path) = std::env::var_os("SWE_FORGE_TEST_RESTARTED") {
        std::fs::write(path, b"").unwrap();
    }
    let out = child.wait_with_output().unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{text}");
    let records =
        swe_forge_core::read_jsonl(std::fs::read(tmp.path().join("out/v.jsonl")).unwrap().as_slice()).unwrap();
    let meta = records[0].swe_forge.as_ref().unwrap();
    assert_eq!(records[0].status(), swe_forge_core::ValidationStatus::Accepted, "{meta:?}\n{text}");
    assert!(records[0].f2p_tests.contains_key("gostack::TestPopEmptyReturnsError"));
    assert!(swe_forge_core::Warning::InfraRetry.on(&meta.warnings), "{meta:?}");
    // The container that outlived the restart is removed too: nothing of the run stays behind.
    let ps = Command::new("docker")
        .args(["ps", "-a", "--filter", "label=dev.swe-forge.run", "--format", "{{.Label \"dev.swe-forge.run\"}}"])
        .output()
        .unwrap();
    let ours = format!("{}-", child_pid);
    let left: Vec<String> =
        String::from_utf8_lossy(&ps.stdout).lines().filter(|l| l.starts_with(&ours)).map(str::to_owned).collect();
    assert!(left.is_empty(), "containers of the run left behind: {left:?}");
}
