//! The circuit breaker of validation: when every instance fails the same way because the machine
//! is broken (here: every setup step fails to resolve a public registry, which `faults.rs` counts
//! as this machine's network, not the repository), validation stops after a few instances in a
//! row, says what is broken, exits non-zero and leaves the instances undecided for the next run.

use std::time::{Duration, Instant};

use crate::support::{make_repos, read_records, root, text};

/// A pipeline over the gostack fixtures whose setup fails like a machine without DNS, one job, no
/// retries (so the test does not wait for backoffs). Fixtures 3 and 5 are rejected for their
/// patches before reaching the engine: they neither count nor break the row.
fn broken_pipeline(dir: &std::path::Path) -> std::path::PathBuf {
    let repos = make_repos(dir);
    let fixtures = read_records(&root().join("data/fixtures/instances.jsonl"));
    let records = dir.join("records.jsonl");
    let gostack: Vec<_> = fixtures.iter().filter(|r| r.repo == "gostack").collect();
    assert_eq!(gostack.len(), 6);
    swe_forge_core::write_jsonl(std::fs::File::create(&records).unwrap(), gostack).unwrap();
    let toml = format!(
        r#"name = "breaker"
[source]
records = "{records}"
repos = "{repos}"
[validate]
jobs = 1
infra_retries = 0
work_dir = "work"
ca_bundle = "system"
[output]
validated = "out/validated.jsonl"
[overrides."forge-fixtures/gostack"]
setup = ["echo 'go: downloading golang.org/x/text'; echo 'dial tcp: lookup proxy.golang.org on 127.0.0.53:53: no such host'; exit 1"]
"#,
        records = records.display(),
        repos = repos.display(),
    );
    let path = dir.join("pipeline.toml");
    std::fs::write(&path, toml).unwrap();
    path
}

#[test]
fn validation_stops_when_the_machine_is_broken_and_a_rerun_resumes() {
    let tmp = tempfile::tempdir().unwrap();
    let pipeline = broken_pipeline(tmp.path());
    let run = || {
        let started = Instant::now();
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_swe-forge"))
            .args(["run", pipeline.to_str().unwrap()])
            .env("SWE_FORGE_NO_PROGRESS", "1")
            .env("SWE_FORGE_EVIDENCE_RUNS", "0")
            .env("SWE_FORGE_HUNK_RUNS", "0")
            .output()
            .unwrap();
        (o, started.elapsed())
    };
    let (o, took) = run();
    let out = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("stopped: 3 instances in a row failed because of this machine"), "{out}");
    assert!(out.contains("(forge-fixtures__gostack-1, forge-fixtures__gostack-2, forge-fixtures__gostack-4)"), "{out}");
    assert!(out.contains("proxy.golang.org"), "{out}");
    assert!(out.contains("a re-run resumes them"), "{out}");
    assert!(took < Duration::from_secs(600), "{took:?}");
    // Kept: gostack-3, rejected for its patch. Undecided: the three that failed for the machine
    // and the two never started.
    let store = swe_forge_store::Store::open(&tmp.path().join("work/state.sqlite")).unwrap();
    let mut done: Vec<String> = store.validated().unwrap().into_iter().map(|r| r.instance_id).collect();
    done.sort();
    assert_eq!(done, ["forge-fixtures__gostack-3"]);
    drop(store);
    assert_eq!(read_records(&tmp.path().join("out/validated.jsonl")).len(), 1);

    // The re-run resumes the five undecided ones (the machine still broken: it stops again).
    let (o, _) = run();
    let again = text(&o);
    assert_eq!(o.status.code(), Some(1), "{again}");
    assert!(again.contains("resuming: 1 of 6 instances already validated"), "{again}");
    assert!(
        again.contains("(forge-fixtures__gostack-1, forge-fixtures__gostack-2, forge-fixtures__gostack-4)"),
        "{again}"
    );
}
