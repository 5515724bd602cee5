//! The validation engine under stress on the real engine: flaky tests, a 20-instance run killed
//! ten times (the chaos test), a fork bomb, a memory hog, hostile patches and a huge log.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use swe_forge_core::{Instance, RejectReason, ValidationStatus};

use crate::pipeline::{pipeline_in, reasons};
use crate::support::{read_records, swe_forge, text};

fn only(ids: &[&str]) -> String {
    format!("[filters]\ninstances = [{}]\n", ids.iter().map(|i| format!("\"{i}\"")).collect::<Vec<_>>().join(", "))
}

fn get<'a>(all: &'a [Instance], id: &str) -> &'a Instance {
    all.iter().find(|r| r.instance_id == id).unwrap_or_else(|| panic!("{id} missing"))
}

#[test]
fn reruns_expose_a_flaky_test_and_leave_it_out_of_the_categories() {
    let tmp = tempfile::tempdir().unwrap();
    let pipeline = pipeline_in(tmp.path(), &only(&["forge-fixtures__gostack-6"]));
    let out = swe_forge(&["run", pipeline.to_str().unwrap(), "--reruns", "2"]);
    assert!(out.status.success(), "{}", text(&out));
    let all = read_records(&tmp.path().join("out/validated.jsonl"));
    let r = get(&all, "forge-fixtures__gostack-6");
    let meta = r.swe_forge.as_ref().unwrap();
    assert_eq!(r.status(), ValidationStatus::Accepted, "{meta:?}");
    assert_eq!(meta.flaky.keys().collect::<Vec<_>>(), ["gostack::TestFlakyAttempt"]);
    let rates = meta.flaky["gostack::TestFlakyAttempt"];
    assert!((rates.fix.unwrap() - 2.0 / 3.0).abs() < 1e-9, "{rates:?}");
    assert_eq!(rates.run, None, "the test does not exist at base");
    assert!(
        !r.p2p_tests.contains_key("gostack::TestFlakyAttempt")
            && !r.fixed_tests.contains_key("gostack::TestFlakyAttempt")
    );
    assert!(r.f2p_tests.contains_key("gostack::TestPopEmptyReturnsError"));
    assert!((meta.stability.unwrap() - 3.0 / 4.0).abs() < 1e-9, "{:?}", meta.stability);
    assert_eq!(meta.runs.len(), 9, "three runs of each phase");
    assert!(meta.runs.iter().all(|r| r.command_ms.is_some()));
}

/// 20 instances: fixtures of three languages (four rejected for four reasons: pass_to_fail, a test
/// patch and a fix patch that do not apply, no fixed tests), plus copies of Go fixtures under
/// other PR numbers: 10 accepted.
fn twenty(dir: &std::path::Path) -> std::path::PathBuf {
    let fixtures = read_records(&crate::support::root().join("data/fixtures/instances.jsonl"));
    let pick =
        ["gostack-1", "gostack-2", "gostack-3", "gostack-4", "gostack-5", "gostack-6", "cstr-9", "jsduration-12"];
    let mut out: Vec<Instance> = pick.iter().map(|p| get(&fixtures, &format!("forge-fixtures__{p}")).clone()).collect();
    for (i, p) in ["gostack-1", "gostack-2", "gostack-4", "gostack-6"].iter().cycle().take(12).enumerate() {
        let mut copy = get(&fixtures, &format!("forge-fixtures__{p}")).clone();
        copy.number += 100 * (i as u64 / 4 + 1);
        copy.instance_id = format!("{}__{}-{}", copy.org, copy.repo, copy.number);
        out.push(copy);
    }
    assert_eq!(out.len(), 20);
    let path = dir.join("twenty.jsonl");
    swe_forge_core::write_jsonl(std::fs::File::create(&path).unwrap(), &out).unwrap();
    path
}

/// The chaos test: a 20-instance validation killed at pseudo-random points ten times, with
/// SIGKILL and SIGINT in turn, then started again until it finishes, gives the same dataset as
/// an uninterrupted run, each instance once with one set of runs, and no container of the
/// killed runs is left (each start removes what killed runs of the same work left).
#[test]
fn a_validation_killed_ten_times_resumes_to_the_same_dataset() {
    let validate = |dir: &std::path::Path, records: &std::path::Path| -> Vec<String> {
        let p = pipeline_in(dir, "");
        [
            "validate",
            "--records",
            records.to_str().unwrap(),
            "--out",
            dir.join("out/validated.jsonl").to_str().unwrap(),
            "--pipeline",
            p.to_str().unwrap(),
            "--repos",
            dir.join("repos").to_str().unwrap(),
            "--jobs",
            "2",
        ]
        .map(str::to_owned)
        .to_vec()
    };
    // Reference: one uninterrupted run.
    let reference = tempfile::tempdir().unwrap();
    let records = twenty(reference.path());
    let args = validate(reference.path(), &records);
    let out = swe_forge(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(out.status.success(), "{}", text(&out));
    let expected = read_records(&reference.path().join("out/validated.jsonl"));
    assert_eq!(expected.iter().filter(|r| r.status() == ValidationStatus::Accepted).count(), 10);

    let tmp = tempfile::tempdir().unwrap();
    let records = twenty(tmp.path());
    let args = validate(tmp.path(), &records);
    let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64;
    let mut state = seed | 1;
    let mut history = Vec::new();
    let mut killed = Vec::new();
    for round in 0..10 {
        // xorshift: a kill point between 0.3 and 6 s after the start.
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let delay = Duration::from_millis(300 + state % 5700);
        let signal = if round % 2 == 0 { "KILL" } else { "INT" };
        let mut child = Command::new(env!("CARGO_BIN_EXE_swe-forge"))
            .args(&args)
            .env("SWE_FORGE_NO_PROGRESS", "1")
            .env("SWE_FORGE_EVIDENCE_RUNS", "0")
            .env("SWE_FORGE_HUNK_RUNS", "0")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(delay);
        killed.push(child.id());
        let _ = Command::new("kill").args([&format!("-{signal}"), &child.id().to_string()]).output();
        let started = Instant::now();
        let code = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status.code();
            }
            assert!(
                started.elapsed() < Duration::from_secs(120),
                "seed {seed}: round {round} did not stop on SIG{signal}"
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        if signal == "INT" {
            assert!(matches!(code, Some(130) | Some(0)), "seed {seed}: round {round} exited {code:?} on SIGINT");
        }
        history.push(format!("round {round}: SIG{signal} after {delay:?}, exit {code:?}"));
    }
    let out = swe_forge(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let context = format!("seed {seed}\n{}\n{}", history.join("\n"), text(&out));
    assert!(out.status.success(), "{context}");
    let ps = Command::new("docker")
        .args(["ps", "-a", "--filter", "label=dev.swe-forge.run", "--format", "{{.Label \"dev.swe-forge.run\"}}"])
        .output()
        .unwrap();
    let left = String::from_utf8_lossy(&ps.stdout).into_owned();
    let ours: Vec<&str> = left.lines().filter(|l| killed.iter().any(|pid| l.starts_with(&format!("{pid}-")))).collect();
    assert!(ours.is_empty(), "containers of killed runs left: {ours:?}\n{context}");
    let got = read_records(&tmp.path().join("out/validated.jsonl"));
    assert_eq!(got.len(), expected.len(), "nothing lost, nothing duplicated\n{context}");
    for (a, b) in expected.iter().zip(&got) {
        assert_eq!(a.instance_id, b.instance_id, "{context}");
        assert_eq!(a.status(), b.status(), "{}\n{context}", a.instance_id);
        assert_eq!(a.f2p_tests, b.f2p_tests, "{}\n{context}", a.instance_id);
        assert_eq!(a.p2p_tests, b.p2p_tests, "{}\n{context}", a.instance_id);
        assert_eq!(a.fixed_tests, b.fixed_tests, "{}\n{context}", a.instance_id);
        assert_eq!(reasons(a), reasons(b), "{}\n{context}", a.instance_id);
    }
    // The store holds each instance once, with exactly one set of runs.
    let store = swe_forge_store::Store::open(&tmp.path().join("work/state.sqlite")).unwrap();
    let validated = store.validated().unwrap();
    assert_eq!(validated.len(), 20);
    for r in &validated {
        if r.status() == ValidationStatus::Accepted {
            assert_eq!(store.run_count(&r.instance_id).unwrap(), 3, "{}\n{context}", r.instance_id);
        }
    }
}

#[test]
fn a_fork_bomb_ends_as_pids_limit_and_a_memory_hog_as_oom() {
    let tmp = tempfile::tempdir().unwrap();
    let extra = format!(
        "{}[overrides.\"forge-fixtures/gostack\"]\ntest_command = \"bomb() {{ bomb | bomb & }}; bomb; sleep 5\"\n",
        only(&["forge-fixtures__gostack-1"])
    );
    let p = pipeline_in(tmp.path(), &extra);
    let started = Instant::now();
    let out = swe_forge(&["run", p.to_str().unwrap(), "--pids-limit", "64", "--timeout", "20"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(started.elapsed() < Duration::from_secs(240));
    let all = read_records(&tmp.path().join("out/validated.jsonl"));
    assert!(reasons(&all[0]).contains(&RejectReason::PidsLimit), "{:?}", all[0].swe_forge);

    let tmp = tempfile::tempdir().unwrap();
    let extra = format!(
        "{}[overrides.\"forge-fixtures/gostack\"]\ntest_command = \"head -c 2000m /dev/zero | tail > /dev/null\"\n",
        only(&["forge-fixtures__gostack-1"])
    );
    let p = pipeline_in(tmp.path(), &extra);
    let out = swe_forge(&["run", p.to_str().unwrap(), "--memory-mb", "96"]);
    assert!(out.status.success(), "{}", text(&out));
    let all = read_records(&tmp.path().join("out/validated.jsonl"));
    assert!(reasons(&all[0]).contains(&RejectReason::Oom), "{:?}", all[0].swe_forge);
}

#[test]
fn hostile_input_is_labelled_per_instance_and_the_run_goes_on() {
    let tmp = tempfile::tempdir().unwrap();
    let fixtures = read_records(&crate::support::root().join("data/fixtures/instances.jsonl"));
    let good = get(&fixtures, "forge-fixtures__gostack-1").clone();
    let hostile = |n: u64, test_patch: &str| {
        let mut r = good.clone();
        r.number = n;
        r.instance_id = r.expected_id();
        r.test_patch = test_patch.to_owned();
        r
    };
    let dotdot = "diff --git a/../../etc/cron.d/x b/../../etc/cron.d/x\nnew file mode 100644\n--- /dev/null\n+++ b/../../etc/cron.d/x\n@@ -0,0 +1 @@\n+* * * * * root true\n";
    let git_dir = "diff --git a/.git/hooks/post-checkout b/.git/hooks/post-checkout\nnew file mode 100755\n--- /dev/null\n+++ b/.git/hooks/post-checkout\n@@ -0,0 +1 @@\n+echo pwned\n";
    let symlink = "diff --git a/secret b/secret\nnew file mode 120000\n--- /dev/null\n+++ b/secret\n@@ -0,0 +1 @@\n+/etc/shadow\n\\ No newline at end of file\n";
    let binary = format!(
        "{}diff --git a/blob.bin b/blob.bin\nnew file mode 100644\nindex 0000000000000000000000000000000000000000..66519069054f7f2f12bf09a107dc703d20854820\nGIT binary patch\nliteral 10\nRcmZQzWcr_!nU`2p2>=hR1Bd_s\n\nliteral 0\nHcmV?d00001\n\n",
        good.test_patch
    );
    // A test command that prints 100 MB of non-UTF-8 bytes (0xff) before the real tests.
    let mut noisy = good.clone();
    noisy.number = 905;
    noisy.instance_id = noisy.expected_id();
    let records = [
        hostile(901, dotdot),
        hostile(902, git_dir),
        hostile(903, symlink),
        hostile(904, &binary),
        noisy,
        good.clone(),
    ];
    let path = tmp.path().join("hostile.jsonl");
    let mut buf = Vec::new();
    swe_forge_core::write_jsonl(&mut buf, &records).unwrap();
    std::fs::write(&path, buf).unwrap();
    let repos = crate::support::make_repos(tmp.path());
    let pipeline = tmp.path().join("p.toml");
    std::fs::write(
        &pipeline,
        format!(
            "name = \"hostile\"\n[source]\nrecords = \"{}\"\nrepos = \"{}\"\n[validate]\nwork_dir = \"work\"\n[overrides.\"forge-fixtures/gostack\"]\n[[overrides.\"forge-fixtures/gostack\".variants]]\nnumbers = [905, 905]\ntest_command = \"head -c 100000000 /dev/zero | tr \\\\0 \\\\377; go test -json -count=1 -vet=off ./...\"\n[output]\nvalidated = \"out/v.jsonl\"\n",
            path.display(),
            repos.display()
        ),
    )
    .unwrap();
    let out = swe_forge(&["run", pipeline.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let all = read_records(&tmp.path().join("out/v.jsonl"));
    assert_eq!(all.len(), records.len());
    for id in ["forge-fixtures__gostack-901", "forge-fixtures__gostack-902", "forge-fixtures__gostack-903"] {
        assert_eq!(reasons(get(&all, id)), [RejectReason::UnsafePatch], "{id}");
    }
    // A binary hunk applies like any other; the instance is judged on its tests.
    let bin = get(&all, "forge-fixtures__gostack-904");
    assert_eq!(bin.status(), ValidationStatus::Accepted, "{:?}", bin.swe_forge);
    let noisy = get(&all, "forge-fixtures__gostack-905");
    assert_eq!(noisy.status(), ValidationStatus::Accepted, "{:?}", noisy.swe_forge);
    let meta = noisy.swe_forge.as_ref().unwrap();
    assert!(meta.runs.iter().all(|r| r.log_bytes > 100_000_000));
    assert!(meta.warnings.iter().any(|w| w.contains("head and tail")), "{:?}", meta.warnings);
    let kept = std::fs::metadata(tmp.path().join("work/logs/forge-fixtures__gostack-905/fix.log")).unwrap().len();
    assert!(kept < 70 << 20, "the log on disk is capped: {kept}");
    assert_eq!(get(&all, "forge-fixtures__gostack-1").status(), ValidationStatus::Accepted);
}

#[test]
fn regrade_re_derives_from_kept_logs_without_an_engine() {
    let tmp = tempfile::tempdir().unwrap();
    let p = pipeline_in(tmp.path(), &only(&["forge-fixtures__gostack-1", "forge-fixtures__jtext-3"]));
    let out = swe_forge(&["run", p.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let validated = tmp.path().join("out/validated.jsonl");
    let before = read_records(&validated);
    let regrade = |out_name: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_swe-forge"))
            .args(["regrade", "--records", validated.to_str().unwrap(), "--work-dir"])
            .arg(tmp.path().join("work"))
            .arg("--out")
            .arg(tmp.path().join(out_name))
            .env("DOCKER_HOST", "unix:///nonexistent/docker.sock")
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out));
        (read_records(&tmp.path().join(out_name)), text(&out))
    };
    // Same logs, same parsers: the same records (results files for Java, the log for Go).
    let (same, report) = regrade("same.jsonl");
    assert_eq!(same, before, "{report}");
    assert!(report.contains("0 changed"), "{report}");
    // A log edited since its run (it lost the fixed test's lines): not the run's log (its sha256 is
    // not the record's), so the instance is left as it was, and said; the others are re-graded.
    let fix_log = tmp.path().join("work/logs/forge-fixtures__gostack-1/fix.log");
    let kept: String = std::fs::read_to_string(&fix_log)
        .unwrap()
        .lines()
        .filter(|l| !l.contains("TestPopEmptyReturnsError"))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&fix_log, &kept).unwrap();
    let (edited, report) = regrade("edited.jsonl");
    assert_eq!(edited, before, "{report}");
    assert!(report.contains("0 changed") && report.contains("1 left as they were"), "{report}");
    assert!(
        report.contains("forge-fixtures__gostack-1: log") && report.contains("fix.log is not the one its run wrote"),
        "{report}"
    );
    // The same log as a record of it says it is (a record made from that log): re-graded, and the
    // instance no longer has a fixed test.
    let sha = {
        use sha2::Digest as _;
        format!("{:x}", sha2::Sha256::digest(kept.as_bytes()))
    };
    let mut records = before.clone();
    for r in &mut records {
        for run in &mut r.swe_forge.as_mut().unwrap().runs {
            if r.instance_id == "forge-fixtures__gostack-1"
                && run.phase == swe_forge_core::Phase::Fix
                && run.attempt == 0
            {
                run.log_sha256 = sha.clone();
                run.log_bytes = kept.len() as u64;
            }
        }
    }
    let lines: String = records.iter().map(|r| format!("{}\n", serde_json::to_string(r).unwrap())).collect();
    std::fs::write(&validated, lines).unwrap();
    let (changed, report) = regrade("changed.jsonl");
    assert!(report.contains("1 changed"), "{report}");
    let go = get(&changed, "forge-fixtures__gostack-1");
    assert_eq!(reasons(go), [RejectReason::NoFixedTests], "{:?}", go.swe_forge);
    assert_eq!(get(&changed, "forge-fixtures__jtext-3"), get(&before, "forge-fixtures__jtext-3"));

    // A kept log that is a FIFO nobody writes is no log: regrade says so instead of waiting on it,
    // leaves that instance as it was and re-grades the others.
    std::fs::remove_file(&fix_log).unwrap();
    assert!(Command::new("mkfifo").arg(&fix_log).status().unwrap().success());
    let mut child = Command::new(env!("CARGO_BIN_EXE_swe-forge"))
        .args(["regrade", "--records", validated.to_str().unwrap(), "--work-dir"])
        .arg(tmp.path().join("work"))
        .arg("--out")
        .arg(tmp.path().join("fifo.jsonl"))
        .env("DOCKER_HOST", "unix:///nonexistent/docker.sock")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("regrade waits on a kept log that is a FIFO");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(status.success(), "{status:?}: {stderr}");
    assert!(stderr.contains("fix.log cannot be read: not a regular file but a FIFO: left as it was"), "{stderr}");
}

#[test]
fn a_setup_step_that_brings_history_back_fails_the_future_leak_check() {
    let tmp = tempfile::tempdir().unwrap();
    let extra = format!(
        "{}[overrides.\"forge-fixtures/gostack\"]\nsetup = [\"git remote add origin https://example.invalid/gostack.git\", \"git tag v9\"]\n",
        only(&["forge-fixtures__gostack-1"])
    );
    let p = pipeline_in(tmp.path(), &extra);
    let out = swe_forge(&["run", p.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let all = read_records(&tmp.path().join("out/validated.jsonl"));
    let meta = all[0].swe_forge.as_ref().unwrap();
    assert_eq!(reasons(&all[0]), [RejectReason::ImageBuildFailed], "{meta:?}");
    assert!(meta.rejections[0].detail.contains("future-leak check failed: the repository has a remote"), "{meta:?}");
}

#[test]
fn tests_run_as_an_unprivileged_user_when_the_recipe_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let extra = format!(
        "{}[overrides.\"forge-fixtures/cstr\"]\ntest_user = \"tester\"\ntest_command = \"echo uid=$(id -u); make -k check\"\n",
        only(&["forge-fixtures__cstr-9"])
    );
    let p = pipeline_in(tmp.path(), &extra);
    let out = swe_forge(&["run", p.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let all = read_records(&tmp.path().join("out/validated.jsonl"));
    assert_eq!(all[0].status(), ValidationStatus::Accepted, "{:?}", all[0].swe_forge);
    assert!(all[0].f2p_tests.contains_key("tests/test_upper"));
    for phase in ["run", "test", "fix"] {
        let log =
            std::fs::read_to_string(tmp.path().join(format!("work/logs/forge-fixtures__cstr-9/{phase}.log"))).unwrap();
        assert!(log.contains("uid=1000"), "{phase}: {log}");
    }
}

#[test]
fn images_verify_rebuilds_from_scratch_and_compares_file_by_file() {
    let tmp = tempfile::tempdir().unwrap();
    let p = pipeline_in(tmp.path(), &only(&["forge-fixtures__gostack-1"]));
    let out = swe_forge(&["run", p.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let validated = tmp.path().join("out/validated.jsonl");
    let verify = |pipeline: &std::path::Path| {
        swe_forge(&[
            "images",
            "verify",
            "--records",
            validated.to_str().unwrap(),
            "--repos",
            tmp.path().join("repos").to_str().unwrap(),
            "--pipeline",
            pipeline.to_str().unwrap(),
        ])
    };
    let out = verify(&p);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("forge-fixtures__gostack-1: identical"), "{}", text(&out));
    // A setup step that writes the time makes the rebuild differ, and says where.
    let extra = format!(
        "{}[overrides.\"forge-fixtures/gostack\"]\nsetup = [\"date +%s%N > build-stamp.txt\"]\n",
        only(&["forge-fixtures__gostack-1"])
    );
    let tmp2 = tempfile::tempdir().unwrap();
    let p2 = pipeline_in(tmp2.path(), &extra);
    let out = swe_forge(&["run", p2.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let out = swe_forge(&[
        "images",
        "verify",
        "--records",
        tmp2.path().join("out/validated.jsonl").to_str().unwrap(),
        "--repos",
        tmp2.path().join("repos").to_str().unwrap(),
        "--pipeline",
        p2.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("changed testbed/build-stamp.txt"), "{}", text(&out));
}
