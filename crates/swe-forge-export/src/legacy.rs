//! Instances tables written by swe-forge before its Parquet went through arrow-rs (table layout
//! 1, written by polars): `string_view` or `large_string` text, `large_list` lists, `base` as
//! three columns (`base_label`, `base_ref`, `base_sha`), and JSON strings for `resolved_issues`,
//! the five test maps, the three run results and `swe_forge`. Such a file carries no
//! `swe_forge.table` metadata (or `swe_forge.table_version` = 1) and is told from layout 2 by its
//! schema: a `base_sha` column and no `base`. It is read with every type made plain (the pages
//! decode the same as `string` and `list`), the JSON cells parsed back into the record's fields.
//! Only reading: nothing writes this layout any more.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int64Type, UInt64Type};
use arrow_array::{Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::arrow_reader::{ArrowReaderOptions, ParquetRecordBatchReaderBuilder};
use serde::de::DeserializeOwned;
use swe_forge_core::{Base, Instance};

use crate::ExportError;
use crate::table::TABLE_VERSION_KEY;

/// The text columns of layout 1 that every row has.
const TEXT: [&str; 10] =
    ["instance_id", "org", "repo", "state", "title", "base_label", "base_ref", "base_sha", "fix_patch", "test_patch"];
/// The text columns of layout 1 that may be null.
const NULLABLE_TEXT: [&str; 5] = ["body", "lang", "hints", "tag", "number_interval"];
/// The JSON-string columns of layout 1 that every row has.
const JSON: [&str; 9] = [
    "resolved_issues",
    "f2p_tests",
    "p2p_tests",
    "s2p_tests",
    "n2p_tests",
    "fixed_tests",
    "run_result",
    "test_patch_result",
    "fix_patch_result",
];

/// Whether a file with `schema` and key-value metadata `meta` holds the instances table in
/// layout 1.
pub(crate) fn is_legacy(schema: &Schema, meta: &BTreeMap<String, String>) -> bool {
    let version = meta.get(TABLE_VERSION_KEY).map(String::as_str);
    version == Some("1")
        || (version.is_none() && schema.field_with_name("base_sha").is_ok() && schema.field_with_name("base").is_err())
}

/// `dt` with view and large types replaced by their plain counterparts.
fn plain(dt: &DataType) -> DataType {
    match dt {
        DataType::Utf8View | DataType::LargeUtf8 => DataType::Utf8,
        DataType::List(f) | DataType::LargeList(f) | DataType::ListView(f) | DataType::LargeListView(f) => {
            DataType::List(Arc::new(f.as_ref().clone().with_data_type(plain(f.data_type()))))
        }
        DataType::Struct(fields) => DataType::Struct(
            fields.iter().map(|f| Arc::new(f.as_ref().clone().with_data_type(plain(f.data_type())))).collect(),
        ),
        other => other.clone(),
    }
}

/// Reads the records of a layout-1 instances table whose file schema is `schema`.
pub(crate) fn read_legacy(path: &Path, schema: &Schema) -> Result<Vec<Instance>, ExportError> {
    let parquet_err = |source| ExportError::Parquet { path: path.to_owned(), source };
    let column_err = |column: &str, message: String| ExportError::Column {
        path: path.to_owned(),
        column: column.to_owned(),
        message: format!("{message} (an instances table of swe-forge's first Parquet layout, written with polars)"),
    };
    let fields: Vec<Field> =
        schema.fields().iter().map(|f| f.as_ref().clone().with_data_type(plain(f.data_type()))).collect();
    let plain_schema = Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()));
    for name in TEXT.iter().chain(&NULLABLE_TEXT).chain(&JSON).chain(&["swe_forge"]) {
        match plain_schema.field_with_name(name).map(Field::data_type) {
            Ok(DataType::Utf8) => {}
            Ok(other) => return Err(column_err(name, format!("expected a text column, found {other}"))),
            Err(_) => return Err(column_err(name, "missing".to_owned())),
        }
    }
    match plain_schema.field_with_name("number").map(Field::data_type) {
        Ok(DataType::UInt64 | DataType::Int64) => {}
        Ok(other) => return Err(column_err("number", format!("expected an integer column, found {other}"))),
        Err(_) => return Err(column_err("number", "missing".to_owned())),
    }
    let file = File::open(path).map_err(|source| ExportError::Io { path: path.to_owned(), source })?;
    let options = ArrowReaderOptions::new().with_schema(plain_schema);
    let batches = ParquetRecordBatchReaderBuilder::try_new_with_options(file, options)
        .map_err(parquet_err)?
        .build()
        .map_err(parquet_err)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|source| ExportError::Arrow { path: path.to_owned(), source })?;
    let mut out = Vec::new();
    for batch in &batches {
        read_batch(path, batch, out.len(), &mut out)?;
    }
    Ok(out)
}

fn read_batch(path: &Path, batch: &RecordBatch, first_row: usize, out: &mut Vec<Instance>) -> Result<(), ExportError> {
    let strings = |name: &str| -> &StringArray { batch.column_by_name(name).expect("checked").as_string::<i32>() };
    let value_err = |row: usize, column: &str, message: &str| ExportError::Value {
        path: path.to_owned(),
        row,
        column: column.to_owned(),
        message: message.to_owned(),
    };
    let numbers = batch.column_by_name("number").expect("checked");
    for i in 0..batch.num_rows() {
        let row = first_row + i;
        let text = |name: &str| -> Result<String, ExportError> {
            let a = strings(name);
            if a.is_null(i) {
                return Err(value_err(row, name, "null in a column every record fills"));
            }
            Ok(a.value(i).to_owned())
        };
        let nullable = |name: &str| {
            let a = strings(name);
            a.is_valid(i).then(|| a.value(i).to_owned())
        };
        fn json<T: DeserializeOwned>(path: &Path, row: usize, name: &str, s: &str) -> Result<T, ExportError> {
            serde_json::from_str(s).map_err(|source| ExportError::Json {
                path: path.to_owned(),
                row,
                column: name.to_owned(),
                source,
            })
        }
        if numbers.is_null(i) {
            return Err(value_err(row, "number", "null in a column every record fills"));
        }
        let number = match numbers.data_type() {
            DataType::Int64 => u64::try_from(numbers.as_primitive::<Int64Type>().value(i))
                .map_err(|_| value_err(row, "number", "negative pull request number"))?,
            _ => numbers.as_primitive::<UInt64Type>().value(i),
        };
        out.push(Instance {
            org: text("org")?,
            repo: text("repo")?,
            number,
            state: text("state")?,
            title: text("title")?,
            body: nullable("body"),
            base: Base { label: text("base_label")?, ref_: text("base_ref")?, sha: text("base_sha")? },
            resolved_issues: json(path, row, "resolved_issues", &text("resolved_issues")?)?,
            fix_patch: text("fix_patch")?,
            test_patch: text("test_patch")?,
            fixed_tests: json(path, row, "fixed_tests", &text("fixed_tests")?)?,
            p2p_tests: json(path, row, "p2p_tests", &text("p2p_tests")?)?,
            f2p_tests: json(path, row, "f2p_tests", &text("f2p_tests")?)?,
            s2p_tests: json(path, row, "s2p_tests", &text("s2p_tests")?)?,
            n2p_tests: json(path, row, "n2p_tests", &text("n2p_tests")?)?,
            run_result: json(path, row, "run_result", &text("run_result")?)?,
            test_patch_result: json(path, row, "test_patch_result", &text("test_patch_result")?)?,
            fix_patch_result: json(path, row, "fix_patch_result", &text("fix_patch_result")?)?,
            instance_id: text("instance_id")?,
            hints: nullable("hints"),
            tag: nullable("tag"),
            number_interval: nullable("number_interval"),
            lang: nullable("lang"),
            swe_forge: nullable("swe_forge").map(|s| json(path, row, "swe_forge", &s)).transpose()?,
        });
    }
    Ok(())
}
