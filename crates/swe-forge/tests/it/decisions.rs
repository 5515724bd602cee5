//! Review decisions travel with the data: a decision saved in the state store next to a dataset
//! (where `swe-forge review` keeps it) is applied by curate, report, publish and export without
//! `--store`; `--store` names another store, `--no-store` ignores it, a store that cannot be read
//! is refused naming both.

use std::path::Path;

use swe_forge_store::{DecisionRow, Store};

use crate::curate::fixture;
use crate::support::{read_records, swe_forge, text};

/// Saves a decision on `id` in the store at `path`, as the review page does.
fn decide(path: &Path, id: &str, verdict: &str) {
    let mut store = Store::open(path).unwrap();
    store
        .save_decision(&DecisionRow {
            instance_id: id.to_owned(),
            reviewer: "ana".into(),
            verdict: verdict.into(),
            reason: "the test does not check the issue".into(),
            created_at: String::new(),
        })
        .unwrap();
}

/// The instance ids of a published folder, sorted.
fn published(hub: &Path) -> Vec<String> {
    let mut ids: Vec<String> = crate::support::published_rows(hub).into_iter().map(|r| r.instance_id).collect();
    ids.sort();
    ids
}

fn ids(path: &Path) -> Vec<String> {
    read_records(path).into_iter().map(|r| r.instance_id).collect()
}

#[test]
fn decisions_in_the_store_next_to_the_dataset_keep_dropped_instances_out_of_every_output() {
    let tmp = tempfile::tempdir().unwrap();
    let dataset = tmp.path().join("validated.jsonl");
    let records = fixture(&dataset);
    let (dropped, held, kept) = (&records[1].instance_id, &records[2].instance_id, &records[3].instance_id);
    // Where `swe-forge review --dataset validated.jsonl` keeps its decisions.
    let store = tmp.path().join("validated.work/state.sqlite");
    decide(&store, dropped, "drop");
    decide(&store, held, "needs_work");
    let applied = format!("2 review decisions applied (1 drop, 1 needs_work) from {}", store.display());
    let d = dataset.to_str().unwrap();

    let out = tmp.path().join("kept.jsonl");
    let o = swe_forge(&["curate", "--dataset", d, "-o", out.to_str().unwrap(), "--kept-only"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains(&format!("curate: {applied}")), "{}", text(&o));
    let curated = ids(&out);
    assert!(curated.contains(kept) && !curated.contains(dropped) && !curated.contains(held), "{curated:?}");

    let hub = tmp.path().join("hub");
    let o = swe_forge(&["publish", "--dataset", d, "--out", hub.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains(&format!("publish: {applied}")), "{}", text(&o));
    let rows = published(&hub);
    assert!(rows.contains(kept) && !rows.contains(dropped) && !rows.contains(held), "{rows:?}");

    let exported = tmp.path().join("export.jsonl");
    let o = swe_forge(&["export", "--records", d, "--jsonl", exported.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains(&format!("export: {applied}")) && text(&o).contains("2 dropped or held back"));
    let rows = ids(&exported);
    assert!(rows.contains(kept) && !rows.contains(dropped) && !rows.contains(held), "{rows:?}");
    // --all exports them, marked.
    let o = swe_forge(&["export", "--records", d, "--jsonl", exported.to_str().unwrap(), "--all"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(ids(&exported).contains(dropped));

    let card = tmp.path().join("card");
    let o = swe_forge(&["report", "--dataset", d, "-o", card.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains(&format!("report: {applied}")), "{}", text(&o));

    // --no-store ignores the store; --store names another one (here, with no decision).
    let o = swe_forge(&["publish", "--dataset", d, "--out", hub.to_str().unwrap(), "--no-store"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(published(&hub).contains(dropped));
    let other = tmp.path().join("other.sqlite");
    Store::open(&other).unwrap();
    let o = swe_forge(&["publish", "--dataset", d, "--out", hub.to_str().unwrap(), "--store", other.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("0 review decisions applied"), "{}", text(&o));
    assert!(published(&hub).contains(dropped));
}

#[test]
fn a_store_next_to_the_dataset_that_cannot_be_read_is_refused_naming_the_flags() {
    let tmp = tempfile::tempdir().unwrap();
    let dataset = tmp.path().join("validated.jsonl");
    fixture(&dataset);
    let store = tmp.path().join("validated.work/state.sqlite");
    std::fs::create_dir_all(store.parent().unwrap()).unwrap();
    std::fs::write(&store, "not a database, but 40 bytes of something else\n".repeat(4)).unwrap();
    let d = dataset.to_str().unwrap();
    let hub = tmp.path().join("hub");
    let out = tmp.path().join("kept.jsonl");
    let card = tmp.path().join("card");
    let exported = tmp.path().join("export.jsonl");
    for args in [
        &["publish", "--dataset", d, "--out", hub.to_str().unwrap()][..],
        &["curate", "--dataset", d, "-o", out.to_str().unwrap()],
        &["report", "--dataset", d, "-o", card.to_str().unwrap()],
        &["export", "--records", d, "--jsonl", exported.to_str().unwrap()],
    ] {
        let o = swe_forge(args);
        assert!(!o.status.success(), "{args:?}: {}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains(&store.display().to_string()) && err.contains("--store") && err.contains("--no-store"),
            "{args:?}: {err}"
        );
        assert!(!hub.exists() && !out.exists() && !card.join("README.md").exists() && !exported.exists());
    }
    // --no-store goes on without it.
    let o = swe_forge(&["publish", "--dataset", d, "--out", hub.to_str().unwrap(), "--no-store"]);
    assert!(o.status.success(), "{}", text(&o));
}
