//! Round trips of the 22 devset records through the JSONL and Parquet exports, plus checks
//! that the Parquet files hold only plain Arrow types (no `string_view`, `large_string`,
//! `large_list`), the documented columns and swe-forge's key-value metadata. Python readers
//! (pandas, polars, duckdb, `datasets`) are exercised by `scripts/python-readers.sh`.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::Path;

use arrow_array::cast::AsArray;
use arrow_array::{Array, RecordBatch};
use arrow_schema::DataType;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use swe_forge_core::{ForgeMeta, Framework, Instance, RejectReason, Rejection, ValidationStatus, read_jsonl};
use swe_forge_export::{
    Category, ExportError, INSTANCE_COLUMNS, Producer, SWEBENCH_COLUMNS, TEST_COLUMNS, read_instances_parquet,
    read_records, read_tests_parquet, write_instances_parquet, write_jsonl, write_swebench_parquet,
    write_tests_parquet,
};

fn producer() -> Producer {
    Producer { version: "9.9.9".into(), git_commit: Some("0123abcd".into()) }
}

use swe_forge_test_support::devset_text;

fn devset() -> Vec<Instance> {
    let records = swe_forge_test_support::devset();
    assert_eq!(records.len(), 22);
    records
}

/// The devset plus variants that fill every optional field (the devset leaves them absent).
fn devset_with_variants() -> Vec<Instance> {
    let mut all = devset();
    let mut accepted = all[0].clone();
    (accepted.org, accepted.repo, accepted.number) = ("variant".into(), "accepted".into(), 1);
    accepted.instance_id = "variant__accepted-1".into();
    accepted.lang = Some("rust".into());
    accepted.hints = Some("a hint\nwith two lines".into());
    accepted.tag = Some("v1".into());
    accepted.number_interval = Some("1-100".into());
    let mut meta = ForgeMeta::new(ValidationStatus::Accepted);
    meta.test_command = Some("cargo test".into());
    meta.parser = Some(Framework::CargoLibtest);
    meta.results_parser = Some(Framework::NextestJunit);
    accepted.swe_forge = Some(meta);
    let mut rejected = all[1].clone();
    (rejected.org, rejected.repo, rejected.number) = ("variant".into(), "rejected".into(), 2);
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
    write_instances_parquet(&path, &records, &producer()).unwrap();
    let back = read_instances_parquet(&path).unwrap();
    assert_eq!(back.len(), records.len());
    for (a, b) in records.iter().zip(&back) {
        assert_eq!(a, b, "{}", a.instance_id);
    }
    // Overwriting replaces the file and leaves no temporary file behind.
    write_instances_parquet(&path, &records[..3], &producer()).unwrap();
    assert_eq!(read_instances_parquet(&path).unwrap(), records[..3]);
    assert!(leftovers(dir.path()).is_empty(), "{:?}", leftovers(dir.path()));
}

#[test]
fn empty_tables_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let inst = dir.path().join("i.parquet");
    let tests = dir.path().join("t.parquet");
    write_instances_parquet(&inst, &[], &producer()).unwrap();
    write_tests_parquet(&tests, &[], &producer()).unwrap();
    assert!(read_instances_parquet(&inst).unwrap().is_empty());
    assert!(read_tests_parquet(&tests).unwrap().is_empty());
    let (batch, _) = read_plain(&inst);
    assert_eq!(batch.num_rows(), 0);
    assert!(matches!(batch.schema().field_with_name("FAIL_TO_PASS").unwrap().data_type(), DataType::List(_)));
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
    let err = write_instances_parquet(&path, &devset(), &producer()).unwrap_err();
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
    write_tests_parquet(&path, &records, &producer()).unwrap();
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

/// The whole file as one batch (via arrow-rs, as any reader would see it) and its key-value metadata.
fn read_plain(path: &Path) -> (RecordBatch, BTreeMap<String, String>) {
    let builder = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap()).unwrap();
    let meta = builder
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .into_iter()
        .flatten()
        .map(|kv| (kv.key.clone(), kv.value.clone().unwrap_or_default()))
        .collect();
    let schema = builder.schema().clone();
    let batches: Vec<RecordBatch> = builder.with_batch_size(1 << 20).build().unwrap().map(Result::unwrap).collect();
    (one_batch(&schema, &batches), meta)
}

fn one_batch(schema: &arrow_schema::SchemaRef, batches: &[RecordBatch]) -> RecordBatch {
    match batches {
        [] => RecordBatch::new_empty(schema.clone()),
        [one] => one.clone(),
        _ => panic!("one batch expected for these small files, got {}", batches.len()),
    }
}

/// Fails on any type some reader refuses: views (pyarrow 21+ to pandas), large lists and
/// strings (`datasets` 2.19), anything else unusual.
fn assert_plain(path: &str, dt: &DataType) {
    match dt {
        DataType::Utf8 | DataType::UInt64 | DataType::Boolean => {}
        DataType::List(f) => assert_plain(path, f.data_type()),
        DataType::Struct(fields) => {
            fields.iter().for_each(|f| assert_plain(&format!("{path}.{}", f.name()), f.data_type()))
        }
        other => panic!("{path}: type {other} is not plain"),
    }
}

#[test]
fn parquet_files_hold_plain_types_the_documented_columns_and_metadata() {
    let records = devset_with_variants();
    let dir = tempfile::tempdir().unwrap();
    let inst_path = dir.path().join("instances.parquet");
    let tests_path = dir.path().join("tests.parquet");
    let swebench_path = dir.path().join("swebench.parquet");
    write_instances_parquet(&inst_path, &records, &producer()).unwrap();
    write_tests_parquet(&tests_path, &records, &producer()).unwrap();
    write_swebench_parquet(&swebench_path, &records, &producer()).unwrap();

    for (path, table, columns) in [
        (&inst_path, "instances", &INSTANCE_COLUMNS[..]),
        (&tests_path, "tests", &TEST_COLUMNS[..]),
        (&swebench_path, "swebench", &SWEBENCH_COLUMNS[..]),
    ] {
        let (batch, meta) = read_plain(path);
        let schema = batch.schema();
        let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
        assert_eq!(names, columns, "{table}");
        for f in schema.fields() {
            assert_plain(&format!("{table}.{}", f.name()), f.data_type());
        }
        assert_eq!(meta.get("swe_forge.table").map(String::as_str), Some(table));
        assert_eq!(meta.get("swe_forge.table_version").map(String::as_str), Some("3"));
        assert_eq!(meta.get("swe_forge.schema_version").map(String::as_str), Some("1"));
        assert_eq!(meta.get("swe_forge.version").map(String::as_str), Some("9.9.9"));
        assert_eq!(meta.get("swe_forge.git_commit").map(String::as_str), Some("0123abcd"));
    }

    // List and derived columns hold what the records say.
    let (batch, _) = read_plain(&inst_path);
    assert_eq!(batch.num_rows(), records.len());
    let col = |name: &str| batch.column_by_name(name).unwrap().clone();
    let strings = |name: &str, row: usize| -> Vec<String> {
        let l = col(name);
        let v = l.as_list::<i32>().value(row);
        v.as_string::<i32>().iter().map(|s| s.unwrap().to_owned()).collect()
    };
    let status = col("status");
    let lang = col("lang");
    let f2p_maps = col("f2p_tests");
    for (row, r) in records.iter().enumerate() {
        assert_eq!(strings("FAIL_TO_PASS", row), r.fixed_tests.keys().cloned().collect::<Vec<_>>());
        assert_eq!(strings("PASS_TO_PASS", row), r.p2p_tests.keys().cloned().collect::<Vec<_>>());
        let lang = lang.as_string::<i32>();
        assert_eq!(lang.is_valid(row).then(|| lang.value(row)), r.lang.as_deref());
        let want_status = match &r.swe_forge {
            None => "candidate",
            Some(m) if m.status == ValidationStatus::Accepted => "accepted",
            Some(_) => "rejected",
        };
        assert_eq!(status.as_string::<i32>().value(row), want_status);
        let want_reasons: Vec<String> = match r.instance_id.as_str() {
            "variant__rejected-2" => vec!["no_fixed_tests".into(), "pass_to_fail".into()],
            _ => vec![],
        };
        assert_eq!(strings("rejection_reasons", row), want_reasons);
        // A test map is a list of {name, run, test, fix} in name order.
        let entries = f2p_maps.as_list::<i32>().value(row);
        let names = entries.as_struct().column_by_name("name").unwrap().as_string::<i32>().clone();
        let names: Vec<&str> = names.iter().map(Option::unwrap).collect();
        assert_eq!(names, r.f2p_tests.keys().map(String::as_str).collect::<Vec<_>>());
    }

    let (batch, _) = read_plain(&tests_path);
    for name in TEST_COLUMNS {
        assert_eq!(batch.column_by_name(name).unwrap().null_count(), 0, "{name}");
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
    assert_eq!(batch.num_rows(), expected);
}

#[test]
fn records_are_read_from_jsonl_or_parquet_by_their_magic_bytes() {
    let records = devset_with_variants();
    let dir = tempfile::tempdir().unwrap();
    // The names lie on purpose: the content decides.
    let parquet = dir.path().join("records.jsonl");
    let jsonl = dir.path().join("records.parquet");
    write_instances_parquet(&parquet, &records, &producer()).unwrap();
    write_jsonl(&jsonl, &records).unwrap();
    assert_eq!(read_records(&parquet).unwrap(), records);
    assert_eq!(read_records(&jsonl).unwrap(), records);
    // A SWE-bench or tests export is not a records file.
    let swebench = dir.path().join("swebench.parquet");
    write_swebench_parquet(&swebench, &records, &producer()).unwrap();
    let err = read_records(&swebench).unwrap_err();
    assert!(matches!(&err, ExportError::Table { found, .. } if found == "swebench"), "{err:?}");
    let tests = dir.path().join("tests.parquet");
    write_tests_parquet(&tests, &records, &producer()).unwrap();
    assert!(matches!(read_records(&tests).unwrap_err(), ExportError::Table { .. }));
    // An empty file is (empty) JSONL.
    let empty = dir.path().join("empty");
    File::create(&empty).unwrap();
    assert!(read_records(&empty).unwrap().is_empty());
}

/// Writes `records` as swe-forge wrote instances tables before arrow-rs (layout 1, with polars):
/// 30 columns, text as `string_view`, lists as `large_list<string_view>`, `base` as three
/// columns, the structured fields as JSON strings, no swe-forge key-value metadata. `leave_out`
/// names a column not to write.
fn write_legacy(path: &Path, records: &[Instance], leave_out: Option<&str>) {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, LargeListArray, StringViewArray, UInt64Array};
    use arrow_buffer::OffsetBuffer;
    use arrow_schema::{Field, Schema};
    use parquet::arrow::ArrowWriter;

    let text = |f: &dyn Fn(&Instance) -> Option<String>| -> ArrayRef {
        Arc::new(records.iter().map(f).collect::<StringViewArray>())
    };
    let json = |f: &dyn Fn(&Instance) -> String| text(&|i| Some(f(i)));
    let list = |f: &dyn Fn(&Instance) -> Vec<String>| -> ArrayRef {
        let rows: Vec<Vec<String>> = records.iter().map(f).collect();
        let values: StringViewArray = rows.iter().flatten().map(Some).collect();
        let item = Arc::new(Field::new("item", DataType::Utf8View, true));
        let offsets = OffsetBuffer::<i64>::from_lengths(rows.iter().map(Vec::len));
        Arc::new(LargeListArray::new(item, offsets, Arc::new(values), None))
    };
    let s = |v: &str| Some(v.to_owned());
    fn j<T: serde::Serialize>(v: &T) -> String {
        serde_json::to_string(v).unwrap()
    }
    let columns: Vec<(&str, ArrayRef)> = vec![
        ("instance_id", text(&|i| s(&i.instance_id))),
        ("org", text(&|i| s(&i.org))),
        ("repo", text(&|i| s(&i.repo))),
        ("number", Arc::new(records.iter().map(|i| i.number).collect::<UInt64Array>())),
        ("state", text(&|i| s(&i.state))),
        ("title", text(&|i| s(&i.title))),
        ("body", text(&|i| i.body.clone())),
        ("base_label", text(&|i| s(&i.base.label))),
        ("base_ref", text(&|i| s(&i.base.ref_))),
        ("base_sha", text(&|i| s(&i.base.sha))),
        ("resolved_issues", json(&|i| j(&i.resolved_issues))),
        ("fix_patch", text(&|i| s(&i.fix_patch))),
        ("test_patch", text(&|i| s(&i.test_patch))),
        ("lang", text(&|i| i.lang.clone())),
        ("hints", text(&|i| i.hints.clone())),
        ("tag", text(&|i| i.tag.clone())),
        ("number_interval", text(&|i| i.number_interval.clone())),
        ("status", text(&|i| s(&format!("{:?}", i.status()).to_lowercase()))),
        (
            "rejection_reasons",
            list(&|i| i.swe_forge.iter().flat_map(|m| &m.rejections).map(|r| r.reason.as_str().to_owned()).collect()),
        ),
        ("FAIL_TO_PASS", list(&|i| i.fixed_tests.keys().cloned().collect())),
        ("PASS_TO_PASS", list(&|i| i.p2p_tests.keys().cloned().collect())),
        ("f2p_tests", json(&|i| j(&i.f2p_tests))),
        ("p2p_tests", json(&|i| j(&i.p2p_tests))),
        ("s2p_tests", json(&|i| j(&i.s2p_tests))),
        ("n2p_tests", json(&|i| j(&i.n2p_tests))),
        ("fixed_tests", json(&|i| j(&i.fixed_tests))),
        ("run_result", json(&|i| j(&i.run_result))),
        ("test_patch_result", json(&|i| j(&i.test_patch_result))),
        ("fix_patch_result", json(&|i| j(&i.fix_patch_result))),
        ("swe_forge", text(&|i| i.swe_forge.as_ref().map(j))),
    ];
    let columns: Vec<(&str, ArrayRef)> = columns.into_iter().filter(|(n, _)| Some(*n) != leave_out).collect();
    let schema = Arc::new(Schema::new(
        columns.iter().map(|(n, a)| Field::new(*n, a.data_type().clone(), a.null_count() > 0)).collect::<Vec<_>>(),
    ));
    let batch = RecordBatch::try_new(schema.clone(), columns.into_iter().map(|(_, a)| a).collect()).unwrap();
    let mut writer = ArrowWriter::try_new(File::create(path).unwrap(), schema, None).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
}

#[test]
fn instances_tables_of_the_first_layout_are_read_too() {
    let records = devset_with_variants();
    let dir = tempfile::tempdir().unwrap();
    let legacy = dir.path().join("legacy.parquet");
    write_legacy(&legacy, &records, None);
    // The fixture has the old layout's types: views and large lists, read as such without help.
    let (batch, meta) = read_plain(&legacy);
    assert_eq!(batch.schema().field_with_name("title").unwrap().data_type(), &DataType::Utf8View);
    assert!(matches!(batch.schema().field_with_name("FAIL_TO_PASS").unwrap().data_type(), DataType::LargeList(_)));
    assert!(!meta.contains_key("swe_forge.table"));

    assert_eq!(read_records(&legacy).unwrap(), records);
    assert_eq!(read_instances_parquet(&legacy).unwrap(), records);

    // A file of that layout that lacks a column is refused, naming the column and the layout.
    let broken = dir.path().join("broken.parquet");
    write_legacy(&broken, &records, Some("fixed_tests"));
    let err = read_records(&broken).unwrap_err().to_string();
    assert!(
        err.contains("column `fixed_tests`: missing (an instances table of swe-forge's first Parquet layout"),
        "{err}"
    );
}

/// A tests table of layout 2, whose base-run status column is `run` (now `base_status`), reads as
/// the same rows; one with neither name is refused naming the current one.
#[test]
fn tests_tables_of_layout_2_call_the_base_status_run() {
    use std::sync::Arc;

    use arrow_array::ArrayRef;
    use arrow_schema::{Field, Schema};
    use parquet::arrow::ArrowWriter;

    let records = devset_with_variants();
    let dir = tempfile::tempdir().unwrap();
    let current = dir.path().join("t.parquet");
    write_tests_parquet(&current, &records, &producer()).unwrap();
    let (batch, _) = read_plain(&current);
    assert_eq!(batch.schema().field(2).name(), "base_status");
    let want = read_tests_parquet(&current).unwrap();
    let base = batch.column_by_name("base_status").unwrap().as_string::<i32>();
    assert!(want.iter().enumerate().all(|(i, r)| base.value(i) == r.transition.run.as_str()));
    let write_renamed = |path: &Path, to: &str| {
        let fields: Vec<Field> = batch
            .schema()
            .fields()
            .iter()
            .map(|f| if f.name() == "base_status" { f.as_ref().clone().with_name(to) } else { f.as_ref().clone() })
            .collect();
        let schema = Arc::new(Schema::new(fields));
        let columns: Vec<ArrayRef> = batch.columns().to_vec();
        let mut w = ArrowWriter::try_new(File::create(path).unwrap(), schema.clone(), None).unwrap();
        w.write(&RecordBatch::try_new(schema, columns).unwrap()).unwrap();
        w.close().unwrap();
    };
    let old = dir.path().join("old.parquet");
    write_renamed(&old, "run");
    assert_eq!(read_tests_parquet(&old).unwrap(), want);
    let neither = dir.path().join("neither.parquet");
    write_renamed(&neither, "status");
    let err = read_tests_parquet(&neither).unwrap_err().to_string();
    assert!(err.contains("column `base_status`: missing"), "{err}");
}

/// Many records: the tables are written in several bounded row groups, read back whole and in
/// order; the streaming reader gives the JSONL's records one at a time, refusing a repeated id
/// with the line it first appeared on.
#[test]
fn large_tables_are_written_in_bounded_row_groups() {
    let base = devset();
    let records: Vec<Instance> = (0..4500)
        .map(|i| {
            let mut r = base[i % base.len()].clone();
            (r.org, r.repo, r.number) = ("big".into(), "set".into(), i as u64);
            r.instance_id = format!("big__set-{i}");
            r
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let inst = dir.path().join("i.parquet");
    let tests = dir.path().join("t.parquet");
    write_instances_parquet(&inst, &records, &producer()).unwrap();
    write_tests_parquet(&tests, &records, &producer()).unwrap();
    let groups = |p: &Path| {
        let b = ParquetRecordBatchReaderBuilder::try_new(File::open(p).unwrap()).unwrap();
        b.metadata().row_groups().iter().map(|g| g.num_rows()).collect::<Vec<_>>()
    };
    let instance_groups = groups(&inst);
    assert!(instance_groups.len() >= 3, "{instance_groups:?}");
    assert!(instance_groups.iter().all(|&n| n <= 2048), "{instance_groups:?}");
    assert_eq!(instance_groups.iter().sum::<i64>(), 4500);
    // read_instances_parquet is open_records' stream, collected.
    assert_eq!(read_instances_parquet(&inst).unwrap(), records);
    // Read a row group at a time: with the last row group's pages broken, the records of the
    // groups before it still come, then one error ends the stream.
    let broken = dir.path().join("broken.parquet");
    let mut bytes = std::fs::read(&inst).unwrap();
    let last = {
        let b = ParquetRecordBatchReaderBuilder::try_new(File::open(&inst).unwrap()).unwrap();
        let g = b.metadata().row_group(b.metadata().num_row_groups() - 1);
        let (start, len) = g.column(0).byte_range();
        (start as usize, len as usize)
    };
    for b in &mut bytes[last.0..last.0 + last.1] {
        *b = 0xA5;
    }
    std::fs::write(&broken, bytes).unwrap();
    let before_last: usize = instance_groups[..instance_groups.len() - 1].iter().sum::<i64>() as usize;
    let read: Vec<Result<Instance, ExportError>> = swe_forge_export::open_records(&broken).unwrap().collect();
    let (good, bad) = read.split_at(read.len() - 1);
    // Record batches (1,024 rows) may span two row groups: the one that reaches into the
    // broken group fails whole.
    assert!(good.len() >= before_last.saturating_sub(1024) && good.len() <= before_last, "{}", good.len());
    assert!(good.iter().zip(&records).all(|(r, want)| r.as_ref().unwrap() == want));
    assert!(bad[0].is_err(), "the broken row group is an error");
    let rows = read_tests_parquet(&tests).unwrap();
    assert_eq!(rows, swe_forge_export::test_rows(&records));
    assert!(groups(&tests).iter().all(|&n| n <= 65_536));

    // JSONL has no row groups: a stream of 500 records (30 MB) shows that it is read as one, and
    // that a duplicate far down it names both lines (the whole set took 38 s of a debug build).
    let records = &records[..500];
    let jsonl = dir.path().join("r.jsonl");
    write_jsonl(&jsonl, records).unwrap();
    let streamed: Vec<Instance> = swe_forge_export::open_records(&jsonl).unwrap().map(Result::unwrap).collect();
    assert_eq!(streamed, records);
    let mut text = std::fs::read_to_string(&jsonl).unwrap();
    text.push('\n');
    text.push_str(text.lines().nth(1).unwrap().to_owned().as_str());
    text.push('\n');
    std::fs::write(&jsonl, text).unwrap();
    let mut stream = swe_forge_export::open_records(&jsonl).unwrap();
    assert_eq!(stream.by_ref().take(500).filter(Result::is_ok).count(), 500);
    let err = stream.next().unwrap().unwrap_err();
    assert!(format!("{:?}", err).contains("line: 502, first: 2"), "{err:?}");
    assert!(stream.next().is_none());
}
