//! The swarm backend (`--backend swarm`) on a real swarm the test makes (`swarm_lab`: a drained
//! manager and two workers, each a `dockerd` in a network namespace of its own, and a registry):
//! the gostack part of the demo (its six instances: accepted ones, a pass-to-fail, patches that do
//! not apply, no fixed tests) validated through the swarm gives the local backend's dataset, and
//! its gold patches evaluated through the swarm resolve every accepted instance; a
//! worker drained, or killed, in the middle of a run changes nothing but an infrastructure retry
//! on the record; a run over its timeout or its memory ends with the labels it gets locally. The main
//! engine is checked to be untouched afterwards.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use swe_forge_core::{Instance, RejectReason};

use crate::pipeline::{pipeline_in, reasons};
use crate::support::{read_records, swe_forge, text};
use crate::swarm_lab::{Lab, MainEngine};

const GOSTACK: [&str; 6] = [
    "forge-fixtures__gostack-1",
    "forge-fixtures__gostack-2",
    "forge-fixtures__gostack-3",
    "forge-fixtures__gostack-4",
    "forge-fixtures__gostack-5",
    "forge-fixtures__gostack-6",
];

fn only(ids: &[&str]) -> String {
    format!("[filters]\ninstances = [{}]\n", ids.iter().map(|i| format!("\"{i}\"")).collect::<Vec<_>>().join(", "))
}

pub(crate) fn swarm_args(lab: &Lab) -> Vec<String> {
    vec![
        "--backend".into(),
        "swarm".into(),
        "--swarm-manager".into(),
        lab.manager().host(),
        "--registry".into(),
        lab.registry.addr.clone(),
    ]
}

/// `swe-forge run` of a pipeline over the fixtures with `extra` in `dir`, plus `args`.
pub(crate) fn validated(dir: &Path, extra: &str, args: &[String]) -> Vec<Instance> {
    let p = pipeline_in(dir, extra);
    let mut all = vec!["run".to_owned(), p.to_str().unwrap().to_owned()];
    all.extend(args.iter().cloned());
    let o = swe_forge(&all.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(o.status.success(), "{}", text(&o));
    read_records(&dir.join("out/validated.jsonl"))
}

/// Status, lists and rejection reasons, instance by instance.
fn same_dataset(a: &[Instance], b: &[Instance], what: &str) {
    assert_eq!(a.len(), b.len(), "{what}");
    for (x, y) in a.iter().zip(b) {
        assert_eq!(x.instance_id, y.instance_id, "{what}");
        assert_eq!(x.status(), y.status(), "{what}: {}: {:?}", x.instance_id, y.swe_forge);
        assert_eq!(x.f2p_tests, y.f2p_tests, "{what}: {}", x.instance_id);
        assert_eq!(x.p2p_tests, y.p2p_tests, "{what}: {}", x.instance_id);
        assert_eq!(x.fixed_tests, y.fixed_tests, "{what}: {}", x.instance_id);
        assert_eq!(reasons(x), reasons(y), "{what}: {}", x.instance_id);
    }
}

fn warnings(all: &[Instance]) -> Vec<String> {
    all.iter().flat_map(|r| r.swe_forge.as_ref().map(|m| m.warnings.clone()).unwrap_or_default()).collect()
}

fn base_image() -> String {
    let o = Command::new("docker")
        .args(["images", "swe-forge/base", "--format", "{{.Repository}}:{{.Tag}}"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout).lines().next().expect("a base image").to_owned()
}

/// Validates the gostack subset (its test command after a 3 s pause) through the swarm and, as
/// soon as a worker runs a test, does `event` to it; returns the records, the worker's name and
/// the infrastructure retries on the records (at least one).
fn lost_in_the_middle(
    lab: &mut Lab,
    dir: &Path,
    args: &[String],
    event: impl FnOnce(&mut Lab, usize),
) -> (Vec<Instance>, String, Vec<String>) {
    let extra = format!(
        "{}[overrides.\"forge-fixtures/gostack\"]\ntest_command = \"sleep 3; go test -json -count=1 -vet=off ./...\"\n",
        only(&GOSTACK)
    );
    let p = pipeline_in(dir, &extra);
    let mut child = Command::new(env!("CARGO_BIN_EXE_swe-forge"))
        .arg("run")
        .arg(&p)
        .args(args)
        .env("SWE_FORGE_NO_PROGRESS", "1")
        .env("SWE_FORGE_EVIDENCE_RUNS", "0")
        .env("SWE_FORGE_HUNK_RUNS", "0")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let victim = loop {
        assert!(started.elapsed() < Duration::from_secs(600), "no run ever started on a worker");
        assert!(child.try_wait().unwrap().is_none(), "the run ended before any worker ran a test");
        if let Some(i) = (1..lab.nodes.len()).find(|&i| {
            !lab.nodes[i].killed
                && !String::from_utf8_lossy(&lab.nodes[i].docker(&["ps", "-q"]).stdout).trim().is_empty()
        }) {
            break i;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    std::thread::sleep(Duration::from_millis(500));
    event(lab, victim);
    let out = child.wait_with_output().unwrap();
    let log = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{log}");
    let records = read_records(&dir.join("out/validated.jsonl"));
    let retried: Vec<String> = warnings(&records)
        .into_iter()
        .filter(|w| w.starts_with(&swe_forge_core::Warning::InfraRetry.with("")))
        .collect();
    assert!(!retried.is_empty(), "no run was retried after the event on {}\n{log}", lab.nodes[victim].name);
    (records, lab.nodes[victim].name.clone(), retried)
}

#[test]
fn swarm_backend_gives_the_local_dataset_survives_a_dead_node_and_keeps_the_limits() {
    let before = MainEngine::now();
    let tmp = tempfile::tempdir().unwrap();
    let local = validated(&tmp.path().join("local"), &only(&GOSTACK), &[]);
    assert_eq!(local.len(), 6);
    {
        let mut lab = Lab::start(2);
        let args = swarm_args(&lab);

        // The same dataset through the swarm; the workers hold only images from the registry,
        // the manager none; no job is left behind.
        let swarm = validated(&tmp.path().join("swarm"), &only(&GOSTACK), &args);
        same_dataset(&local, &swarm, "swarm backend");
        assert!(lab.images_of(lab.manager()).is_empty(), "the drained manager pulled images");
        let pulled: Vec<String> = lab.workers().iter().flat_map(|w| lab.images_of(w)).collect();
        assert!(!pulled.is_empty(), "no worker ran anything");
        assert!(pulled.iter().all(|i| i.starts_with(&lab.registry.addr)), "{pulled:?}");
        // Evaluation through the swarm: the gold patches resolve every accepted instance.
        let swarm_dir = tmp.path().join("swarm");
        let accepted: Vec<&str> = swarm
            .iter()
            .filter(|r| r.status() == swe_forge_core::ValidationStatus::Accepted)
            .map(|r| r.instance_id.as_str())
            .collect();
        let mut eval = vec![
            "evaluate".to_owned(),
            "--dataset".to_owned(),
            swarm_dir.join("out/validated.jsonl").to_str().unwrap().to_owned(),
            "--predictions".to_owned(),
            "gold".to_owned(),
            "--repos".to_owned(),
            swarm_dir.join("repos").to_str().unwrap().to_owned(),
            "--out".to_owned(),
            swarm_dir.join("eval").to_str().unwrap().to_owned(),
        ];
        eval.extend(args.iter().cloned());
        let o = swe_forge(&eval.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(o.status.success(), "{}", text(&o));
        let summary: serde_json::Value =
            serde_json::from_slice(&std::fs::read(swarm_dir.join("eval/summary.json")).unwrap()).unwrap();
        assert_eq!(summary["resolved_ids"], serde_json::json!(accepted), "{summary}");
        for what in ["service", "config"] {
            let o = lab.manager().docker(&[what, "ls", "-q"]);
            assert!(String::from_utf8_lossy(&o.stdout).trim().is_empty(), "{what}s left on the swarm");
        }

        // A worker is drained, then (active again) another dies, each in the middle of a run
        // (the test command starts with a pause so that the run is surely under way): the run is
        // retried on the other worker, the dataset is the same, the record says why it was retried.
        let drained = lost_in_the_middle(&mut lab, &tmp.path().join("drained"), &args, |lab, i| {
            let id = lab.node_id(i);
            let o = lab.manager().docker(&["node", "update", "--availability", "drain", &id]);
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        });
        same_dataset(&local, &drained.0, "a worker drained mid-run");
        eprintln!("retried after draining {}: {:#?}", drained.1, drained.2);
        for i in 1..lab.nodes.len() {
            let id = lab.node_id(i);
            let o = lab.manager().docker(&["node", "update", "--availability", "active", &id]);
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        }
        let killed = lost_in_the_middle(&mut lab, &tmp.path().join("killed"), &args, |lab, i| lab.kill_node(i));
        same_dataset(&local, &killed.0, "a worker killed mid-run");
        eprintln!("retried after the kill of {}: {:#?}", killed.1, killed.2);

        // Limits: a run over its timeout, a run over its memory: the labels of a local run.
        for (name, command, flags, reason) in [
            ("timeout", "sleep 60", ["--timeout", "5"], RejectReason::Timeout),
            ("oom", "head -c 2000m /dev/zero | tail > /dev/null", ["--memory-mb", "96"], RejectReason::Oom),
        ] {
            let extra = format!(
                "{}[overrides.\"forge-fixtures/gostack\"]\ntest_command = \"{command}\"\n",
                only(&["forge-fixtures__gostack-1"])
            );
            let flags: Vec<String> = flags.iter().map(|s| (*s).to_owned()).collect();
            let here = validated(&tmp.path().join(format!("{name}-local")), &extra, &flags);
            let mut on_swarm = flags.clone();
            on_swarm.extend(args.iter().cloned());
            let there = validated(&tmp.path().join(format!("{name}-swarm")), &extra, &on_swarm);
            assert!(reasons(&here[0]).contains(&reason), "{name} locally: {:?}", here[0].swe_forge);
            same_dataset(&here, &there, name);
        }
    }
    before.assert_untouched(&base_image());
}

/// Median and 90th percentile, in ms.
fn stats(mut ms: Vec<u128>) -> (u128, u128) {
    ms.sort_unstable();
    let at = |q: f64| ms[((ms.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.9))
}

/// Container starts on `node` since `since` (Unix seconds): the runs it took.
fn starts_on(node: &crate::swarm_lab::Node, since: u64) -> usize {
    let until = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() + 1;
    let o = node.docker(&[
        "events",
        "--since",
        &since.to_string(),
        "--until",
        &until.to_string(),
        "--filter",
        "type=container",
        "--filter",
        "event=start",
        "--format",
        "{{.ID}}",
    ]);
    String::from_utf8_lossy(&o.stdout).lines().count()
}

fn unix_now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs()
}

/// The measurements of `docs/benchmarks/swarm.md`, printed as Markdown:
/// `cargo test -p swe-forge --test it swarm_bench -- --ignored --nocapture`
/// (`SWE_FORGE_BENCH_WORKERS`, default 2, workers; `SWE_FORGE_BENCH_RUNS`, default 20, runs per
/// backend for the fixed cost). Timing only, nothing asserted beyond the runs succeeding.
#[test]
#[ignore = "a benchmark: run it by name with --ignored"]
fn swarm_bench() {
    use swe_forge_docker::{Backend, Engine, RunSpec, Swarm, SwarmSpec};
    let workers: usize = std::env::var("SWE_FORGE_BENCH_WORKERS").ok().and_then(|v| v.parse().ok()).unwrap_or(2);
    let runs: usize = std::env::var("SWE_FORGE_BENCH_RUNS").ok().and_then(|v| v.parse().ok()).unwrap_or(20);
    let tmp = tempfile::tempdir().unwrap();
    // The gostack images exist (built by the local run) before the lab starts.
    let t = Instant::now();
    let local = validated(&tmp.path().join("local"), &only(&GOSTACK), &["--jobs".into(), "4".into()]);
    let local_wall = t.elapsed();
    let base = base_image();
    let t = Instant::now();
    let lab = Lab::start(workers);
    let lab_start = t.elapsed();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut report = String::new();
    let mut line = |s: String| {
        eprintln!("{s}");
        report.push_str(&s);
        report.push('\n');
    };
    line(format!("lab: 1 drained manager + {workers} workers, started in {} ms", lab_start.as_millis()));
    let (local_ms, swarm_ms, first_ms, burst) = rt.block_on(async {
        let engine = Engine::connect().await.unwrap();
        let spec = SwarmSpec { manager: lab.manager().host(), registry: lab.registry.addr.clone() };
        let swarm = Swarm::connect(&spec, engine.clone()).await.unwrap();
        let backends = [Backend::Local(engine.clone()), Backend::Swarm(std::sync::Arc::new(swarm))];
        let mut trivial =
            RunSpec::new(&base, "mkdir -p /swe-forge/results && echo ok > /swe-forge/results/r.txt && echo done");
        trivial.collect = Some("/swe-forge/results".to_owned());
        trivial.memory_bytes = Some(512 << 20);
        trivial.pids_limit = Some(4096);
        // First swarm run: push of the base image, pull on a worker.
        let t = Instant::now();
        let out = backends[1].run(&trivial).await.unwrap();
        assert_eq!(out.log, b"done\n");
        let first = t.elapsed().as_millis();
        let mut per = Vec::new();
        for b in &backends {
            let mut ms = Vec::new();
            for _ in 0..runs {
                let t = Instant::now();
                let out = b.run(&trivial).await.unwrap();
                assert_eq!(out.files.len(), 1, "{}", b.name());
                ms.push(t.elapsed().as_millis());
            }
            per.push(ms);
        }
        // Many at once: how the swarm spreads them and what the manager sustains.
        let mut sleepy = RunSpec::new(&base, "sleep 2; echo done");
        sleepy.memory_bytes = Some(256 << 20);
        let n = 4 * workers;
        let t = Instant::now();
        let outs = futures_util::future::join_all((0..n).map(|_| backends[1].run(&sleepy))).await;
        let wall = t.elapsed().as_millis();
        let mut nodes: std::collections::BTreeMap<String, usize> = std::collections::BTreeMap::new();
        for o in outs {
            *nodes.entry(o.unwrap().node.unwrap_or_default()).or_default() += 1;
        }
        for b in &backends {
            b.settle().await;
        }
        (per.remove(0), per.remove(0), first, (n, wall, nodes))
    });
    let (l50, l90) = stats(local_ms);
    let (s50, s90) = stats(swarm_ms);
    line(format!(
        "| backend | runs | median ms | p90 ms |\n|---|---|---|---|\n| local | {runs} | {l50} | {l90} |\n| swarm | {runs} | {s50} | {s90} |"
    ));
    line(format!("first swarm run (base image pushed, pulled by a worker): {first_ms} ms"));
    let (n, wall, nodes) = burst;
    line(format!("{n} runs of `sleep 2` at once through the swarm: {wall} ms wall; per node: {nodes:?}"));

    // The gostack part of the demo through the swarm, 4 jobs: wall time and where the runs went.
    let since = unix_now();
    let t = Instant::now();
    let mut args = swarm_args(&lab);
    args.extend(["--jobs".to_owned(), "4".to_owned()]);
    let swarm = validated(&tmp.path().join("swarm"), &only(&GOSTACK), &args);
    let swarm_wall = t.elapsed();
    same_dataset(&local, &swarm, "bench");
    let spread: Vec<String> = lab.workers().iter().map(|w| format!("{}: {}", w.name, starts_on(w, since))).collect();
    let command_ms: Vec<u64> =
        swarm.iter().flat_map(|r| r.swe_forge.as_ref().unwrap().runs.iter().filter_map(|p| p.command_ms)).collect();
    let runs_total: usize = swarm.iter().map(|r| r.swe_forge.as_ref().unwrap().runs.len()).sum();
    line(format!(
        "gostack (6 instances, {runs_total} runs, images built): local --jobs 4 {} ms, swarm --jobs 4 {} ms (first time: images pushed, pulled by the workers); runs per worker: {}; mean test command {} ms",
        local_wall.as_millis(),
        swarm_wall.as_millis(),
        spread.join(", "),
        command_ms.iter().sum::<u64>() / command_ms.len().max(1) as u64
    ));
    let second_since = unix_now();
    let t = Instant::now();
    let mut again = args.clone();
    again.push("--fresh".to_owned());
    let p_dir = tmp.path().join("swarm2");
    let p = pipeline_in(&p_dir, &only(&GOSTACK));
    let mut all = vec!["run".to_owned(), p.to_str().unwrap().to_owned()];
    all.extend(again);
    let o = swe_forge(&all.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(o.status.success(), "{}", text(&o));
    let spread: Vec<String> =
        lab.workers().iter().map(|w| format!("{}: {}", w.name, starts_on(w, second_since))).collect();
    line(format!(
        "gostack again (--fresh, images on the workers): swarm --jobs 4 {} ms; runs per worker: {}",
        t.elapsed().as_millis(),
        spread.join(", ")
    ));
    std::fs::write(crate::support::root().join("target/swarm-bench.md"), report).unwrap();
}
