//! The swarm backend (`--backend swarm`) on a real swarm the test makes (`swarm_lab`: a drained
//! manager and two workers, each a `dockerd` in a network namespace of its own, and a registry):
//! the gostack part of the demo (its six instances: accepted ones, a pass-to-fail, patches that do
//! not apply, no fixed tests) validated through the swarm gives the local backend's dataset; a
//! worker killed in the middle of a run changes nothing but an infrastructure retry on the
//! record; a run over its timeout or its memory ends with the labels it gets locally. The main
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
        for what in ["service", "config"] {
            let o = lab.manager().docker(&[what, "ls", "-q"]);
            assert!(String::from_utf8_lossy(&o.stdout).trim().is_empty(), "{what}s left on the swarm");
        }

        // A worker dies in the middle of a run (the test command starts with a pause so that
        // the run is surely under way): the run is retried on the other worker, the dataset is
        // the same, the record says why it was retried.
        let dir = tmp.path().join("killed");
        let extra = format!(
            "{}[overrides.\"forge-fixtures/gostack\"]\ntest_command = \"sleep 3; go test -json -count=1 ./...\"\n",
            only(&GOSTACK)
        );
        let p = pipeline_in(&dir, &extra);
        let mut child = Command::new(env!("CARGO_BIN_EXE_swe-forge"))
            .arg("run")
            .arg(&p)
            .args(&args)
            .env("SWE_FORGE_NO_PROGRESS", "1")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let started = Instant::now();
        let victim = loop {
            assert!(started.elapsed() < Duration::from_secs(600), "no run ever started on a worker");
            assert!(child.try_wait().unwrap().is_none(), "the run ended before any worker ran a test");
            if let Some(i) = (1..lab.nodes.len())
                .find(|&i| !String::from_utf8_lossy(&lab.nodes[i].docker(&["ps", "-q"]).stdout).trim().is_empty())
            {
                break i;
            }
            std::thread::sleep(Duration::from_millis(100));
        };
        std::thread::sleep(Duration::from_millis(500));
        lab.kill_node(victim);
        let out = child.wait_with_output().unwrap();
        let log = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "{log}");
        let survived = read_records(&dir.join("out/validated.jsonl"));
        same_dataset(&local, &survived, "a worker killed mid-run");
        let retried: Vec<String> = warnings(&survived)
            .into_iter()
            .filter(|w| w.starts_with(&swe_forge_core::Warning::InfraRetry.with("")))
            .collect();
        assert!(!retried.is_empty(), "no run was retried after the worker died\n{log}");
        eprintln!("retried after the kill of {}: {retried:#?}", lab.nodes[victim].name);

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
