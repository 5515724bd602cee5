//! The run label on the real engine: a run whose future is dropped leaves its container, which
//! `remove_run_containers` then removes; images committed from setup runs name their run in a
//! label of their own, so that containers others make from them are no run's;
//! a dropped `docker build` is cancelled by the engine, its step's container removed.
//! A binary of its own: every test of one binary shares the process's run id, and removing this
//! run's containers would remove those of the other tests of `engine.rs`.

use std::collections::HashMap;
use std::process::Command;
use std::time::{Duration, Instant};

use swe_forge_docker::{BaseSpec, Engine, LABEL_BUILT_BY, LABEL_JOB, LABEL_RUN, LABEL_RUN_HOST, RunSpec, run_id};

fn docker(args: &[&str]) -> String {
    let o = Command::new("docker").args(args).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn this_runs_containers(all: bool) -> Vec<String> {
    let filter = format!("label={LABEL_RUN}={}", run_id());
    let mut args = vec!["ps", "-q", "--filter", &filter];
    if all {
        args.push("-a");
    }
    docker(&args).lines().map(str::to_owned).collect()
}

/// Removes this run's containers when the test ends, passed or failed.
struct Guard;

impl Drop for Guard {
    fn drop(&mut self) {
        for id in this_runs_containers(true) {
            let _ = Command::new("docker").args(["rm", "-f", &id]).output();
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dropped_run_leaves_its_container_until_the_run_containers_are_removed() {
    let _guard = Guard;
    let engine = Engine::connect().await.unwrap();
    let base = engine.ensure_base(&BaseSpec::default(), &|m| eprintln!("{m}")).await.unwrap();
    let (e, spec) = (engine.clone(), RunSpec::new(&base, "sleep 600"));
    let task = tokio::spawn(async move { e.run(&spec).await });
    let deadline = Instant::now() + Duration::from_secs(60);
    while this_runs_containers(false).is_empty() {
        assert!(Instant::now() < deadline, "the container did not start");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    task.abort();
    let _ = task.await;
    assert_eq!(this_runs_containers(false).len(), 1, "dropping the future leaves the container running");
    let removed = engine.remove_run_containers().await.unwrap();
    assert_eq!(removed.len(), 1, "{removed:?}");
    assert_eq!(removed[0].state, "running");
    assert_eq!(removed[0].run, run_id());
    assert_eq!(this_runs_containers(true), Vec::<String>::new());

    // An image committed from a setup run names the run that built it, and the run's container
    // is gone.
    let tag = format!("swe-forge/test-run-label:{}", std::process::id());
    let labels = HashMap::from([("dev.swe-forge.role".to_owned(), "test".to_owned())]);
    let (out, id) = engine.run_and_commit(&RunSpec::new(&base, "echo made > /made.txt"), &tag, &labels).await.unwrap();
    assert_eq!(out.exit_code, Some(0));
    assert!(id.is_some());
    let label = |name: &str| {
        docker(&["image", "inspect", "--format", &format!("{{{{index .Config.Labels \"{name}\"}}}}"), &tag])
            .trim()
            .to_owned()
    };
    assert_eq!(label(LABEL_BUILT_BY), run_id());
    assert_eq!(this_runs_containers(true), Vec::<String>::new());
    // A container another client makes from the image (as SWE-bench's harness does) inherits the
    // image's labels: it is no run's, and neither this run's removal nor the sweep for runs that
    // are gone touches it.
    for name in [LABEL_RUN, LABEL_RUN_HOST, LABEL_JOB] {
        assert_eq!(label(name), "", "{name} on the image");
    }
    let foreign = docker(&["create", &tag, "true"]).trim().to_owned();
    assert_eq!(this_runs_containers(true), Vec::<String>::new(), "the foreign container passes for this run's");
    assert_eq!(engine.remove_run_containers().await.unwrap(), []);
    let swept = engine.remove_orphan_containers(false).await.unwrap();
    assert!(swept.iter().all(|c| !foreign.starts_with(&c.id)), "{swept:?}");
    docker(&["rm", "-f", &foreign]);
    engine.remove_image(&tag).await.unwrap();

    // Images committed before the run labels were blanked carry a gone run's: a container made
    // from one has the image's role, and the sweep leaves it; one with a container's role goes.
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap();
    let gone = format!("999999999-1-{}", &boot[..8]);
    let made = |role: &str| {
        let labels = [
            format!("{LABEL_RUN}={gone}"),
            format!("{LABEL_RUN_HOST}={}", swe_forge_docker::host_name()),
            format!("dev.swe-forge.role={role}"),
        ];
        let mut args = vec!["create"];
        for l in &labels {
            args.extend(["--label", l.as_str()]);
        }
        args.extend([base.as_str(), "true"]);
        docker(&args).trim().chars().take(12).collect::<String>()
    };
    let (inherited, ours) = (made("instance"), made("run"));
    let swept: Vec<String> = engine.remove_orphan_containers(false).await.unwrap().into_iter().map(|c| c.id).collect();
    assert!(swept.contains(&ours) && !swept.contains(&inherited), "{swept:?}: ours {ours}, inherited {inherited}");
    docker(&["rm", "-f", &inherited]);
}

/// Containers whose command holds `marker`.
fn containers_running(marker: &str) -> Vec<String> {
    docker(&["ps", "-a", "--no-trunc", "--format", "{{.ID}} {{.Command}}"])
        .lines()
        .filter(|l| l.contains(marker))
        .map(|l| l.split(' ').next().unwrap_or_default().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dropped_build_is_cancelled_by_the_engine_and_its_container_removed() {
    // Build containers are the engine's (no label of ours): the engine cancels the build and
    // removes its container when the client goes away, which dropping the build future does.
    let engine = Engine::connect().await.unwrap();
    let base = engine.ensure_base(&BaseSpec::default(), &|m| eprintln!("{m}")).await.unwrap();
    let marker = format!("swe-forge-dropped-build-{}", std::process::id());
    let mut context = swe_forge_docker::BuildContext::new();
    context.add_file("unused", b"", 0o644).unwrap();
    let context = context.finish(&format!("FROM {base}\nRUN echo {marker}; sleep 300\n")).unwrap();
    let (e, tag) = (engine.clone(), format!("swe-forge/test-dropped-build:{}", std::process::id()));
    let task = tokio::spawn(async move { e.build_uncached(&tag, context, &HashMap::new(), &mut |_| {}).await });
    let deadline = Instant::now() + Duration::from_secs(60);
    while containers_running(&marker).is_empty() {
        assert!(Instant::now() < deadline, "the build step did not start");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    task.abort();
    let _ = task.await;
    let dropped = Instant::now();
    while !containers_running(&marker).is_empty() {
        if dropped.elapsed() > Duration::from_secs(30) {
            for id in containers_running(&marker) {
                let _ = Command::new("docker").args(["rm", "-f", &id]).output();
            }
            panic!("the engine kept the build container");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    eprintln!("build container gone {} ms after the drop", dropped.elapsed().as_millis());
}
