//! The executor against the real engine: limits, log capture, and the CA bundle that must
//! never end up in an image.

use std::collections::HashMap;
use std::time::Duration;

use swe_forge_docker::{Backend, BaseSpec, CaBundle, Engine, Next, RunSpec};

async fn engine_and_base() -> (Engine, String) {
    let engine = Engine::connect().await.expect("a Docker engine answers (bash scripts/setup-docker.sh)");
    let base = engine.ensure_base(&BaseSpec::default(), &|m| eprintln!("{m}")).await.unwrap();
    (engine, base)
}

#[tokio::test(flavor = "multi_thread")]
async fn engine_speaks_a_negotiated_api_version() {
    let engine = Engine::connect().await.unwrap();
    let v: Vec<u32> = engine.api_version().split('.').map(|p| p.parse().unwrap()).collect();
    assert!(v[0] == 1 && v[1] >= 41, "{}", engine.api_version());
}

#[tokio::test(flavor = "multi_thread")]
async fn stdout_and_stderr_are_merged_in_order_and_files_are_copied_in() {
    let (engine, base) = engine_and_base().await;
    let mut spec = RunSpec::new(
        &base,
        "for i in $(seq 1 200); do echo \"out $i\"; echo \"err $i\" >&2; done; cat /swe-forge/input.txt; mkdir -p /swe-forge/results/sub; echo '<xml/>' > /swe-forge/results/sub/r.xml; exit 3",
    );
    spec.files = vec![("/swe-forge/input.txt".into(), b"payload\n".to_vec())];
    spec.collect = Some("/swe-forge/results".into());
    let out = engine.run(&spec).await.unwrap();
    assert_eq!(out.files, [("sub/r.xml".to_owned(), b"<xml/>\n".to_vec())]);
    assert_eq!(out.exit_code, Some(3));
    let text = String::from_utf8(out.log).unwrap();
    let expected: String = (1..=200).map(|i| format!("out {i}\nerr {i}\n")).collect::<String>() + "payload\n";
    assert_eq!(text, expected);
    assert_eq!(out.log_bytes as usize, expected.len());
}

#[tokio::test(flavor = "multi_thread")]
async fn test_runs_have_no_network_and_respect_the_timeout() {
    let (engine, base) = engine_and_base().await;
    // Without network: localhost resolves, nothing outside does (after one try of one second),
    // and no outside address answers.
    let probe = "getent ahosts localhost >/dev/null && echo local-ok; getent hosts deb.debian.org || echo no-dns; \
                 timeout 5 bash -c 'echo > /dev/tcp/151.101.2.132/80' 2>/dev/null || echo no-route; \
                 grep '^options' /etc/resolv.conf | grep -q 'timeout:1' && grep '^options' /etc/resolv.conf | grep -q 'attempts:1' && echo fails-fast";
    let out = engine.run(&RunSpec::new(&base, probe)).await.unwrap();
    assert_eq!(String::from_utf8_lossy(&out.log), "local-ok\nno-dns\nno-route\nfails-fast\n");
    // With network the same address answers (Debian's mirror is reachable from this machine).
    let mut online = RunSpec::new(&base, "getent hosts deb.debian.org >/dev/null && echo dns-ok");
    online.network = true;
    assert_eq!(String::from_utf8_lossy(&engine.run(&online).await.unwrap().log), "dns-ok\n");
    let mut spec = RunSpec::new(&base, "echo before; sleep 300; echo after");
    spec.timeout = Duration::from_secs(2);
    let started = std::time::Instant::now();
    let out = engine.run(&spec).await.unwrap();
    assert!(out.timed_out);
    assert_eq!(out.exit_code, None);
    assert!(started.elapsed() < Duration::from_secs(60));
    assert_eq!(String::from_utf8_lossy(&out.log), "before\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn cpu_limit_is_applied() {
    let (engine, base) = engine_and_base().await;
    let mut spec =
        RunSpec::new(&base, "cat /sys/fs/cgroup/cpu.max 2>/dev/null || cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us");
    spec.cpus = Some(0.5);
    let out = engine.run(&spec).await.unwrap();
    let text = String::from_utf8_lossy(&out.log);
    assert!(text.starts_with("50000"), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn memory_limit_kills_a_hog() {
    let (engine, base) = engine_and_base().await;
    let mut spec = RunSpec::new(&base, "head -c 300m /dev/zero | tail > /dev/null; echo survived");
    spec.memory_bytes = Some(64 << 20);
    let out = engine.run(&spec).await.unwrap();
    assert!(out.oom_killed || !String::from_utf8_lossy(&out.log).contains("survived"), "{out:?}");
}

/// A test run's end comes from the container itself (exit code, the cgroup's OOM kills, the
/// results) and its small files in its command: the same outcome as the engine's own answers.
#[tokio::test(flavor = "multi_thread")]
async fn the_end_a_run_tells_itself_is_what_the_engine_would_say() {
    let (engine, base) = engine_and_base().await;
    // A process killed by the memory limit while the script goes on and exits 0: only the
    // cgroup's counter tells.
    let mut hog = RunSpec::new(&base, "head -c 300m /dev/zero | tail > /dev/null; echo survived");
    hog.memory_bytes = Some(64 << 20);
    let out = engine.run(&hog).await.unwrap();
    assert!(out.oom_killed, "{out:?}");
    assert_eq!(out.exit_code, Some(0));
    assert!(
        String::from_utf8_lossy(&out.log).ends_with("Killed                  | tail > /dev/null\nsurvived\n"),
        "{out:?}"
    );
    // Files in the command (root) and uploaded (another user) are the same files.
    let script = "stat -c '%n %a %u %g %Y %s' /swe-forge/input.txt; stat -c '%n %a %u %g' /swe-forge; \
                  mkdir -p /tmp/r/sub && cp /swe-forge/input.txt /tmp/r/sub/copy; echo $SHLVL $0; exit 5";
    let mut spec = RunSpec::new(&base, script);
    spec.files = vec![("/swe-forge/input.txt".into(), b"payload\n".to_vec())];
    spec.collect = Some("/tmp/r".into());
    let as_root = engine.run(&spec).await.unwrap();
    spec.user = Some("nobody".into());
    let as_nobody = engine.run(&spec).await.unwrap();
    for out in [&as_root, &as_nobody] {
        assert_eq!(
            String::from_utf8_lossy(&out.log),
            "/swe-forge/input.txt 644 0 0 0 8\n/swe-forge 755 0 0\n1 /bin/bash\n",
            "{out:?}"
        );
        assert_eq!(out.exit_code, Some(5));
        assert_eq!(out.files, [("sub/copy".to_owned(), b"payload\n".to_vec())]);
        assert!(!out.oom_killed);
    }
    // No results folder: no files, as the engine's 404 gave.
    let out = engine.run(&RunSpec { collect: Some("/nowhere".into()), ..RunSpec::new(&base, "true") }).await.unwrap();
    assert_eq!((out.exit_code, out.files.len()), (Some(0), 0));
    // Killed before it could tell (as by an engine restart or `docker kill`): the engine's answer.
    let out = engine.run(&RunSpec::new(&base, "echo before; kill -KILL $PPID; sleep 5")).await.unwrap();
    assert_eq!((out.exit_code, out.timed_out), (Some(137), false));
    assert!(String::from_utf8_lossy(&out.log).starts_with("before\n"), "{out:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn ca_bundle_is_visible_during_setup_and_absent_from_the_committed_image() {
    let (engine, base) = engine_and_base().await;
    let dir = tempfile::tempdir().unwrap();
    let ca = dir.path().join("extra-ca.pem");
    std::fs::write(&ca, "-----BEGIN CERTIFICATE-----\nc3dlLWZvcmdlIHRlc3Q=\n-----END CERTIFICATE-----\n").unwrap();
    let mut spec = RunSpec::new(
        &base,
        "set -e; test -s \"$SSL_CERT_FILE\"; grep -q c3dl \"$SSL_CERT_FILE\"; echo warmed > /warm.txt",
    );
    spec.network = true;
    spec.ca_bundle = Some(CaBundle(ca));
    let tag = format!("swe-forge/test-ca:{}", std::process::id());
    let labels = HashMap::from([("dev.swe-forge.role".to_owned(), "test".to_owned())]);
    let (out, id) = engine.run_and_commit(&spec, &tag, &labels).await.unwrap();
    assert_eq!(out.exit_code, Some(0), "{}", String::from_utf8_lossy(&out.log));
    assert!(id.is_some());
    let check = RunSpec::new(
        &tag,
        "cat /warm.txt; if [ -e /run/swe-forge/ca-bundle.crt ]; then echo LEAKED-FILE; fi; env | grep -c SSL_CERT_FILE || true; grep -rl c3dl /etc /run /root 2>/dev/null | head -1",
    );
    let out = engine.run(&check).await.unwrap();
    let text = String::from_utf8_lossy(&out.log);
    assert_eq!(text, "warmed\n0\n", "the CA bundle leaked into the image: {text} {out:?}");
    // The committed configuration is the parent's: no entrypoint, command or variable of the run.
    assert_eq!(engine.image_config(&tag).await.unwrap(), engine.image_config(&base).await.unwrap());
    engine.remove_image(&tag).await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failing_build_reports_the_engine_message_and_output() {
    let (engine, base) = engine_and_base().await;
    let ctx = swe_forge_docker::BuildContext::new()
        .finish(&format!("FROM {base}\nRUN echo about-to-fail && false\n"))
        .unwrap();
    let err = engine.build("swe-forge/test-fail:1", ctx, &HashMap::new(), &mut |_| {}).await.unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("building image swe-forge/test-fail:1 failed"), "{msg}");
    assert!(msg.contains("about-to-fail"), "{msg}");
}

#[tokio::test(flavor = "multi_thread")]
async fn shipping_errors_are_typed() {
    use swe_forge_docker::DockerError;
    let (engine, base) = engine_and_base().await;
    let missing = engine.tag("swe-forge-test/no-such-image:x", "swe-forge-test/other:y").await;
    assert!(matches!(missing, Err(DockerError::ImageMissing { .. })), "{missing:?}");
    let saved = engine.save(&["swe-forge-test/no-such-image:x"], std::path::Path::new("unused.tar")).await;
    assert!(matches!(saved, Err(DockerError::ImageMissing { .. })), "{saved:?}");
    // Nothing listens on that port: the push fails at the registry, and the name given for it
    // can be removed again.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let remote = format!("127.0.0.1:{port}/swe-forge-test/base:typed-errors");
    engine.tag(&base, &remote).await.unwrap();
    let pushed = engine.push(&remote).await;
    engine.untag(&remote).await.unwrap();
    assert!(matches!(pushed, Err(DockerError::Registry { op: "push", .. })), "{pushed:?}");
    assert!(engine.image_id(&remote).await.unwrap().is_none());
    assert!(engine.image_id(&base).await.unwrap().is_some(), "untagging keeps the image");
    let pulled = engine.pull(&remote).await;
    assert!(matches!(pulled, Err(DockerError::Registry { op: "pull", .. })), "{pulled:?}");
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.tar");
    std::fs::write(&junk, b"not an image archive").unwrap();
    let loaded = engine.load(&junk).await;
    assert!(matches!(loaded, Err(DockerError::Archive { .. })), "{loaded:?}");
}

/// What a script sees of its container, printed; the end is a heredoc with no newline after its
/// delimiter, which a command cut short of its last bytes would break.
const PROBE: &str = "env | grep -v '^HOSTNAME=' | sort; id; pwd; echo \"$0 $SHLVL $#\"; ulimit -a; \
    cat /sys/fs/cgroup/memory.max /sys/fs/cgroup/pids.max /sys/fs/cgroup/cpu.max 2>/dev/null; \
    cat /sys/fs/cgroup/memory/memory.limit_in_bytes /sys/fs/cgroup/pids/pids.max /sys/fs/cgroup/cpu/cpu.cfs_quota_us 2>/dev/null; \
    readlink /proc/self/fd/0; ls -A /proc/self/fd | wc -l; \
    stat -c '%n %a %u %g %s' /swe-forge/small.txt /swe-forge/big.bin; sha256sum /swe-forge/big.bin; \
    mkdir -p /tmp/r && cp /swe-forge/small.txt /tmp/r/copy; echo 'ünïcödé'; \
    (exit 7); code=$?; cat <<'X'\nlast line\nX";

fn probe_spec(base: &str) -> RunSpec {
    let mut spec = RunSpec::new(base, format!("{PROBE}\nexit $code"));
    spec.files = vec![
        ("/swe-forge/small.txt".into(), b"small\n".to_vec()),
        // Beyond what travels in the command: uploaded.
        ("/swe-forge/big.bin".into(), (0..200_000u32).map(|i| (i % 251) as u8).collect()),
    ];
    spec.env = vec![
        "PLAIN=value".into(),
        "QUOTED=it's \"quoted\" $HOME `x` \\ and\na second line".into(),
        "LANG=C.UTF-8".into(),
        "EMPTY=".into(),
    ];
    spec.memory_bytes = Some(512 << 20);
    spec.pids_limit = Some(300);
    spec.cpus = Some(0.77);
    spec.collect = Some("/tmp/r".into());
    spec
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_in_a_container_started_ahead_sees_what_a_fresh_container_shows() {
    let (engine, base) = engine_and_base().await;
    let backend = Backend::Local(engine.clone());
    for user in [None, Some("nobody")] {
        let spec = RunSpec { user: user.map(str::to_owned), ..probe_spec(&base) };
        engine.set_prestart(false);
        let fresh = backend.run(&spec).await.unwrap();
        assert_eq!(fresh.exit_code, Some(7), "{}", String::from_utf8_lossy(&fresh.log));
        let log = String::from_utf8_lossy(&fresh.log).into_owned();
        assert!(
            log.contains("QUOTED=it's \"quoted\" $HOME `x` \\ and\n") && log.contains("\na second line\n"),
            "{log}"
        );
        assert!(log.contains("ünïcödé\nlast line"), "{log}");
        assert_eq!(fresh.files, [("copy".to_owned(), b"small\n".to_vec())]);
        engine.set_prestart(true);
        // The first run starts its own container (and one ahead for the next), the second uses
        // the one started ahead.
        let first = backend.run(&spec).await.unwrap();
        let second = backend.run(&spec).await.unwrap();
        assert!(first.stages.create > Duration::ZERO);
        assert_eq!(second.stages.create, Duration::ZERO, "the second run did not use a container started ahead");
        for out in [&first, &second] {
            assert_eq!(String::from_utf8_lossy(&out.log), log);
            assert_eq!((out.exit_code, out.timed_out, out.oom_killed), (Some(7), false, false));
            assert_eq!(out.files, fresh.files);
        }
    }
    // The timeout holds in a container started ahead as in a fresh one.
    let mut slow = RunSpec::new(&base, "echo before; sleep 300; echo after");
    slow.timeout = Duration::from_secs(2);
    let _ = backend.run(&slow).await.unwrap();
    let out = backend.run(&slow).await.unwrap();
    assert_eq!(out.stages.create, Duration::ZERO);
    assert!(out.timed_out);
    assert_eq!((out.exit_code, String::from_utf8_lossy(&out.log).into_owned()), (None, "before\n".to_owned()));
    backend.settle().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_container_started_ahead_that_is_gone_gives_way_to_a_fresh_one() {
    let (engine, base) = engine_and_base().await;
    let backend = Backend::Local(engine.clone());
    // A kind of run no other test makes (its CPU limit), so that only its waiting container is killed.
    let mut spec = RunSpec::new(&base, "echo ran; exit 4");
    spec.cpus = Some(0.61);
    let out = backend.run(&spec).await.unwrap();
    assert_eq!((out.exit_code, String::from_utf8_lossy(&out.log).into_owned()), (Some(4), "ran\n".to_owned()));
    // Kill the container waiting for the next run of this kind (as an engine restart would): one of
    // this process's run.
    let run_label = format!("label={}={}", swe_forge_docker::LABEL_RUN, swe_forge_docker::run_id());
    let mut killed = 0;
    for _ in 0..100 {
        let ps = std::process::Command::new("docker")
            .args(["ps", "-q", "--no-trunc", "--filter", &run_label, "--filter", "status=running"])
            .output()
            .unwrap();
        for id in String::from_utf8_lossy(&ps.stdout).split_whitespace() {
            let cpus = std::process::Command::new("docker")
                .args(["inspect", "--format", "{{.HostConfig.NanoCpus}} {{.Config.OpenStdin}}", id])
                .output()
                .unwrap();
            // The waiting one: its stdin open (the finished run's container may not have exited yet).
            if String::from_utf8_lossy(&cpus.stdout).trim() == "610000000 true" {
                let k = std::process::Command::new("docker").args(["kill", id]).output().unwrap();
                assert!(k.status.success(), "{k:?}");
                killed += 1;
            }
        }
        if killed > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(killed, 1, "no container was waiting for the next run");
    let out = backend.run(&spec).await.unwrap();
    assert_eq!((out.exit_code, String::from_utf8_lossy(&out.log).into_owned()), (Some(4), "ran\n".to_owned()));
    assert!(out.stages.create > Duration::ZERO, "the run went to the killed container: {:?}", out.stages);
    backend.settle().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_image_committed_from_the_base_by_hand_is_not_taken_for_the_base() {
    let (engine, base) = engine_and_base().await;
    // `docker commit` keeps the base's labels; the newest image with them used to be "the base".
    let docker = |args: &[&str]| {
        let out = std::process::Command::new("docker").args(args).output().expect("the docker CLI runs");
        assert!(out.status.success(), "docker {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    };
    let tag = format!("swe-forge-test/committed-from-base:{}", std::process::id());
    let container = docker(&["create", &base, "true"]);
    docker(&["commit", &container, &tag]);
    docker(&["rm", &container]);
    let again = engine.ensure_base(&BaseSpec::default(), &|m| eprintln!("{m}")).await;
    engine.remove_image(&tag).await.unwrap();
    assert_eq!(again.unwrap(), base);
}

/// `docker` on the command line, its stdout.
fn docker_cli(args: &[&str]) -> String {
    let o = std::process::Command::new("docker").args(args).output().unwrap();
    String::from_utf8_lossy(&o.stdout).trim().to_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_engine_keeps_no_copy_of_a_runs_output() {
    let (engine, base) = engine_and_base().await;
    // 50 MB of output, then the run waits (its output all written) until the test has looked at
    // the engine's copy of it.
    let token = format!("bounded-{}", std::process::id());
    let script = format!(
        "yes xxxxxxxxx | head -c 50000000; echo {token} > /tmp/printed; \
         while [ ! -f /tmp/go ]; do sleep 0.1; done; echo the-end"
    );
    let mut spec = RunSpec::new(&base, script);
    spec.max_log_bytes = 1 << 20;
    spec.timeout = Duration::from_secs(300);
    let run = tokio::spawn({
        let engine = engine.clone();
        async move { engine.run(&spec).await }
    });
    let filter = format!("label=dev.swe-forge.run={}", swe_forge_docker::run_id());
    let started = std::time::Instant::now();
    let id = loop {
        assert!(started.elapsed() < Duration::from_secs(240), "the run never printed its output");
        let found = docker_cli(&["ps", "-q", "--filter", &filter])
            .lines()
            .find(|id| docker_cli(&["exec", id, "cat", "/tmp/printed"]) == token)
            .map(str::to_owned);
        if let Some(id) = found {
            break id;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let driver = docker_cli(&["inspect", "-f", "{{.HostConfig.LogConfig.Type}}", &id]);
    let path = docker_cli(&["inspect", "-f", "{{.LogPath}}", &id]);
    let kept = if path.is_empty() { 0 } else { std::fs::metadata(&path).map(|m| m.len()).unwrap_or(u64::MAX) };
    docker_cli(&["exec", &id, "touch", "/tmp/go"]);
    let out = run.await.unwrap().unwrap();
    assert!(kept < 1 << 20, "the engine kept {kept} bytes of the output at {path}");
    assert_eq!(driver, "none");
    // The run itself still reads all of it: head and tail kept, the whole counted.
    assert_eq!(out.exit_code, Some(0));
    assert_eq!(out.log_bytes, 50_000_000 + "the-end\n".len() as u64);
    assert!(out.log_truncated);
    assert!(out.log.len() < (1 << 20) + 4096 && out.log.len() > 1 << 19, "{}", out.log.len());
    assert!(String::from_utf8_lossy(&out.log).ends_with("x\nthe-end\n"));
}

/// A run that names the image of the run expected next (`next`: an evaluation's next prediction)
/// starts the container for that one, not for another run of its own image; a run that says none
/// comes starts none.
#[tokio::test(flavor = "multi_thread")]
async fn a_run_starts_ahead_the_container_of_the_image_it_names_and_none_after_the_last() {
    let (engine, base) = engine_and_base().await;
    // A second name of the base: another image, as far as runs go.
    let other = format!("swe-forge-test/ahead:{}", std::process::id());
    docker_cli(&["tag", &base, &other]);
    let backend = Backend::Local(engine.clone());
    // A kind of run no other test makes (its CPU limit).
    let spec = |image: &str, script: &str| RunSpec { cpus: Some(0.63), ..RunSpec::new(image, script) };
    let first = backend.run(&RunSpec { next: Next::Image(other.clone()), ..spec(&base, "echo first") }).await.unwrap();
    assert!(first.stages.create > Duration::ZERO);
    let next = backend.run(&spec(&other, "echo next")).await.unwrap();
    assert_eq!(String::from_utf8_lossy(&next.log), "next\n");
    assert_eq!(next.stages.create, Duration::ZERO, "the named image's run did not use the container started ahead");
    // The first run's own image got no container ahead.
    let again = backend.run(&spec(&base, "echo again")).await.unwrap();
    assert_eq!(String::from_utf8_lossy(&again.log), "again\n");
    assert!(again.stages.create > Duration::ZERO, "a container of the first run's image was started ahead too");
    // A run that says no run comes after it uses the container started ahead for it and starts none.
    let last = backend.run(&RunSpec { next: Next::Nothing, ..spec(&base, "echo last") }).await.unwrap();
    assert_eq!(String::from_utf8_lossy(&last.log), "last\n");
    assert_eq!(last.stages.create, Duration::ZERO, "the run after `again` did not use the container started ahead");
    let after = backend.run(&spec(&base, "echo after")).await.unwrap();
    assert!(after.stages.create > Duration::ZERO, "a container was started ahead after the last run");
    backend.settle().await;
    docker_cli(&["rmi", &other]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_container_started_ahead_goes_when_its_image_is_done_with() {
    let (engine, base) = engine_and_base().await;
    let backend = Backend::Local(engine.clone());
    // A kind of run no other test makes (its CPU limit), to find its waiting container.
    let mut spec = RunSpec::new(&base, "echo ran");
    spec.cpus = Some(0.53);
    backend.run(&spec).await.unwrap();
    let waiting = || {
        let run_label = format!("label={}={}", swe_forge_docker::LABEL_RUN, swe_forge_docker::run_id());
        let ps = std::process::Command::new("docker")
            .args(["ps", "-aq", "--no-trunc", "--filter", &run_label])
            .output()
            .unwrap();
        String::from_utf8_lossy(&ps.stdout)
            .split_whitespace()
            .filter(|id| {
                let o = std::process::Command::new("docker")
                    .args(["inspect", "--format", "{{.HostConfig.NanoCpus}} {{.Config.OpenStdin}}", id])
                    .output()
                    .unwrap();
                String::from_utf8_lossy(&o.stdout).trim() == "530000000 true"
            })
            .count()
    };
    // The start ahead runs in the background: wait for it to show.
    let mut seen = 0;
    for _ in 0..100 {
        seen = waiting();
        if seen > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(seen, 1, "one container waits for the next run of its kind");
    // Another image's end leaves it alone; its own image's end removes it.
    backend.done_with("swe-forge/no-such-image:x");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(waiting(), 1);
    backend.done_with(&base);
    let mut left = 1;
    for _ in 0..100 {
        left = waiting();
        if left == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(left, 0, "the waiting container of a finished image is removed before the command ends");
    backend.settle().await;
}
