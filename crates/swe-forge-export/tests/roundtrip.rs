//! Round trips of the 22 devset records through the JSONL and Parquet exports, plus a check
//! that plain polars reads the Parquet files with the documented column names and types.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::Path;

use polars::prelude::*;
use swe_forge_core::{ForgeMeta, Instance, RejectReason, Rejection, ValidationStatus, read_jsonl};
use swe_forge_export::{
    Category, INSTANCE_COLUMNS, TEST_COLUMNS, read_instances_parquet, read_tests_parquet, write_instances_parquet,
    write_jsonl, write_tests_parquet,
};

const DEVSET: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/devset/instances.jsonl");

fn devset_text() -> String {
    std::fs::read_to_string(DEVSET).unwrap_or_else(|e| panic!("devset {DEVSET} not readable: {e}"))
}

fn devset() -> Vec<Instance> {
    let records = read_jsonl(devset_text().as_bytes()).unwrap();
    assert_eq!(records.len(), 22);
    records
}

/// The devset plus variants that fill every optional field (the devset leaves them absent).
fn devset_with_variants() -> Vec<Instance> {
    let mut all = devset();
    let mut accepted = all[0].clone();
    accepted.instance_id = "variant__accepted-1".into();
    accepted.lang = Some("rust".into());
    accepted.hints = Some("a hint\nwith two lines".into());
    accepted.tag = Some("v1".into());
    accepted.number_interval = Some("1-100".into());
    let mut meta = ForgeMeta::new(ValidationStatus::Accepted);
    meta.test_command = Some("cargo test".into());
    meta.parser = Some("cargo".into());
    accepted.swe_forge = Some(meta);
    let mut rejected = all[1].clone();
    rejected.instance_id = "variant__rejected-2".into();
    rejected.body = None;
    rejected.resolved_issues.clear();
    let mut meta = ForgeMeta::new(ValidationStatus::Rejected);
    meta.rejections = vec![
        Rejection::new(RejectReason::NoFixedTests, "nothing went to PASS"),
        Rejection::new(RejectReason::PassToFail, "a::b"),
    ];
    rejected.swe_forge = Some(meta);
    all.push(accepted);
    all.push(rejected);
    all
}

fn leftovers(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect()
}

#[test]
fn instances_parquet_round_trips_exactly() {
    let records = devset_with_variants();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("instances.parquet");
    write_instances_parquet(&path, &records).unwrap();
    let back = read_instances_parquet(&path).unwrap();
    assert_eq!(back.len(), records.len());
    for (a, b) in records.iter().zip(&back) {
        assert_eq!(a, b, "{}", a.instance_id);
    }
    // Overwriting replaces the file and leaves no temporary file behind.
    write_instances_parquet(&path, &records[..3]).unwrap();
    assert_eq!(read_instances_parquet(&path).unwrap(), records[..3]);
    assert!(leftovers(dir.path()).is_empty(), "{:?}", leftovers(dir.path()));
}

#[test]
fn empty_tables_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let inst = dir.path().join("i.parquet");
    let tests = dir.path().join("t.parquet");
    write_instances_parquet(&inst, &[]).unwrap();
    write_tests_parquet(&tests, &[]).unwrap();
    assert!(read_instances_parquet(&inst).unwrap().is_empty());
    assert!(read_tests_parquet(&tests).unwrap().is_empty());
    let df = ParquetReader::new(File::open(&inst).unwrap()).finish().unwrap();
    assert_eq!(df.column("FAIL_TO_PASS").unwrap().dtype(), &DataType::List(Box::new(DataType::String)));
}

#[test]
fn jsonl_round_trips_and_matches_the_source_lines() {
    let records = devset();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.jsonl");
    write_jsonl(&path, &records).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().count(), records.len());
    assert_eq!(read_jsonl(text.as_bytes()).unwrap(), records);
    // Every source field survives with its value (compared as JSON values).
    for (src, out) in devset_text().lines().zip(text.lines()) {
        let src: serde_json::Value = serde_json::from_str(src).unwrap();
        let out: serde_json::Value = serde_json::from_str(out).unwrap();
        assert_eq!(src, out);
    }
    assert!(leftovers(dir.path()).is_empty());
    // The file gets the mode a plain create would give it (tempfile's own default is 0600).
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let plain = dir.path().join("plain");
        File::create(&plain).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&path), mode(&plain));
    }
}

#[test]
fn writing_into_a_missing_directory_fails_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("missing").join("x.parquet");
    let err = write_instances_parquet(&path, &devset()).unwrap_err();
    assert!(matches!(err, swe_forge_export::ExportError::Io { .. }), "{err:?}");
    assert!(!path.exists());
}

/// (instance_id, test) -> (category, run, test, fix), straight from the source JSON.
fn expected_test_rows() -> BTreeMap<(String, String), (String, String, String, String)> {
    let mut expected = BTreeMap::new();
    let mut fixed = Vec::new();
    for line in devset_text().lines().filter(|l| !l.trim().is_empty()) {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let id = v["instance_id"].as_str().unwrap().to_owned();
        for cat in ["p2p", "f2p", "s2p", "n2p", "fixed"] {
            let Some(map) = v[format!("{cat}_tests")].as_object() else { continue };
            for (test, t) in map {
                let s = |k: &str| t[k].as_str().unwrap().to_owned();
                let row = (cat.to_owned(), s("run"), s("test"), s("fix"));
                if cat == "fixed" {
                    fixed.push(((id.clone(), test.clone()), row));
                } else {
                    let old = expected.insert((id.clone(), test.clone()), row);
                    assert!(old.is_none(), "{id} {test} is in two category maps");
                }
            }
        }
    }
    // In the devset every fixed test is also in f2p, s2p or n2p, with the same statuses.
    for (key, (_, run, test, fix)) in fixed {
        let (cat, r, t, f) = &expected[&key];
        assert!(["f2p", "s2p", "n2p"].contains(&cat.as_str()), "{key:?}");
        assert_eq!((r, t, f), (&run, &test, &fix), "{key:?}");
    }
    expected
}

#[test]
fn tests_parquet_has_one_row_per_test() {
    let records = devset();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tests.parquet");
    write_tests_parquet(&path, &records).unwrap();
    let rows = read_tests_parquet(&path).unwrap();
    let expected = expected_test_rows();
    assert_eq!(rows.len(), expected.len());
    let mut seen = BTreeMap::new();
    for r in &rows {
        let got = (
            r.category.as_str().to_owned(),
            r.transition.run.as_str().to_owned(),
            r.transition.test.as_str().to_owned(),
            r.transition.fix.as_str().to_owned(),
        );
        let key = (r.instance_id.clone(), r.test.clone());
        assert_eq!(expected.get(&key), Some(&got), "{key:?}");
        assert!(seen.insert(key.clone(), ()).is_none(), "duplicate row {key:?}");
    }
    // Per-instance counts match the README's table (f2p, s2p, n2p, p2p).
    let count = |id: &str, cat: Category| rows.iter().filter(|r| r.instance_id == id && r.category == cat).count();
    assert_eq!(
        Category::ALL.map(|c| count("tokio-rs__tracing-1619", c)),
        [345, 1, 0, 9] // p2p, f2p, s2p, n2p
    );
    assert_eq!(Category::ALL.map(|c| count("alibaba__fastjson2-82", c)), [588, 1, 0, 369]);
    assert!(leftovers(dir.path()).is_empty());
}

#[test]
fn polars_reads_both_files_with_the_documented_schema() {
    let records = devset_with_variants();
    let dir = tempfile::tempdir().unwrap();
    let inst_path = dir.path().join("instances.parquet");
    let tests_path = dir.path().join("tests.parquet");
    write_instances_parquet(&inst_path, &records).unwrap();
    write_tests_parquet(&tests_path, &records).unwrap();

    let df = ParquetReader::new(File::open(&inst_path).unwrap()).finish().unwrap();
    assert_eq!(df.height(), records.len());
    let names: Vec<&str> = df.get_column_names().into_iter().map(|n| n.as_str()).collect();
    assert_eq!(names, INSTANCE_COLUMNS);
    let list = DataType::List(Box::new(DataType::String));
    for name in INSTANCE_COLUMNS {
        let want = match name {
            "number" => DataType::UInt64,
            "rejection_reasons" | "FAIL_TO_PASS" | "PASS_TO_PASS" => list.clone(),
            _ => DataType::String,
        };
        assert_eq!(df.column(name).unwrap().dtype(), &want, "{name}");
    }
    // List and derived columns hold what the records say.
    let f2p = df.column("FAIL_TO_PASS").unwrap().list().unwrap();
    let p2p = df.column("PASS_TO_PASS").unwrap().list().unwrap();
    let reasons = df.column("rejection_reasons").unwrap().list().unwrap();
    let status = df.column("status").unwrap().str().unwrap();
    let lang = df.column("lang").unwrap().str().unwrap();
    let strings = |s: Option<Series>| -> Vec<String> {
        s.unwrap().str().unwrap().iter().map(|v| v.unwrap().to_owned()).collect()
    };
    for (row, r) in records.iter().enumerate() {
        assert_eq!(strings(f2p.get_as_series(row)), r.fixed_tests.keys().cloned().collect::<Vec<_>>());
        assert_eq!(strings(p2p.get_as_series(row)), r.p2p_tests.keys().cloned().collect::<Vec<_>>());
        assert_eq!(lang.get(row), r.lang.as_deref());
        let want_status = match &r.swe_forge {
            None => "candidate",
            Some(m) if m.status == ValidationStatus::Accepted => "accepted",
            Some(_) => "rejected",
        };
        assert_eq!(status.get(row), Some(want_status));
        let want_reasons: Vec<String> = match r.instance_id.as_str() {
            "variant__rejected-2" => vec!["no_fixed_tests".into(), "pass_to_fail".into()],
            _ => vec![],
        };
        assert_eq!(strings(reasons.get_as_series(row)), want_reasons);
    }

    let df = ParquetReader::new(File::open(&tests_path).unwrap()).finish().unwrap();
    let names: Vec<&str> = df.get_column_names().into_iter().map(|n| n.as_str()).collect();
    assert_eq!(names, TEST_COLUMNS);
    for name in TEST_COLUMNS {
        assert_eq!(df.column(name).unwrap().dtype(), &DataType::String, "{name}");
        assert_eq!(df.column(name).unwrap().null_count(), 0, "{name}");
    }
    let expected: usize = records
        .iter()
        .map(|r| {
            let mut all: Vec<&String> = [&r.p2p_tests, &r.f2p_tests, &r.s2p_tests, &r.n2p_tests, &r.fixed_tests]
                .iter()
                .flat_map(|m| m.keys())
                .collect();
            all.sort();
            all.dedup();
            all.len()
        })
        .sum();
    assert_eq!(df.height(), expected);
}
