//! The instances table: one Parquet row per instance, in plain Arrow types. Scalar fields are
//! `string`/`uint64` columns, `base` and the run results are structs, `resolved_issues` and
//! the five test maps are lists of structs, `FAIL_TO_PASS`/`PASS_TO_PASS`/`rejection_reasons`
//! are `list<string>` conveniences, and `swe_forge` (open-ended: provenance maps, flaky rates,
//! difficulty features) is a JSON string, so that [`read_instances_parquet`] rebuilds the exact
//! records. Since table layout 3 the fields of `swe_forge` a dataset is filtered by are flat
//! columns too ([`FLAT_COLUMNS`]: difficulty, evidence, image, warnings, quality flags, dates),
//! so that `WHERE difficulty = 'hard' AND evidence_complete` needs no JSON function; like the
//! other derived columns they are written from the record and not read back (the `swe_forge`
//! column stays the source). `schemas/parquet.md` documents the mapping.

use std::path::Path;
use std::sync::{Arc, LazyLock};

use arrow_array::cast::AsArray;
use arrow_array::{ArrayRef, BooleanArray, ListArray, RecordBatch, StringArray, StructArray};
use arrow_schema::{DataType, Field, Fields};
use swe_forge_core::{Base, Evidence, ForgeMeta, Instance, ResolvedIssue, TestMap, TestResult, Transition};

use crate::ExportError;
use crate::legacy::{is_legacy, read_legacy};
use crate::table::{
    BATCH_BYTES, BATCH_ROWS, ParquetSink, Producer, TABLE_VERSION_KEY, Table, child_list, child_strings,
    child_unsigned, list, list_strings, nullable_text_field, nullable_texts, opt_str, peek, range, struct_list_field,
    structs, text_field, text_list, text_list_field, texts, unsigned, unsigned_field,
};
use crate::tests_table::parse_status;

/// The `swe_forge.table` metadata value of the instances table.
pub const INSTANCES_TABLE: &str = "instances";

/// Column names of the instances table, in file order.
pub const INSTANCE_COLUMNS: [&str; 37] = [
    "instance_id",
    "org",
    "repo",
    "number",
    "state",
    "title",
    "body",
    "base",
    "resolved_issues",
    "fix_patch",
    "test_patch",
    "lang",
    "hints",
    "tag",
    "number_interval",
    "status",
    "rejection_reasons",
    "difficulty",
    "evidence_complete",
    "image",
    "image_id",
    "image_digest",
    "warnings",
    "quality_flags",
    "created_at",
    "merged_at",
    "FAIL_TO_PASS",
    "PASS_TO_PASS",
    "f2p_tests",
    "p2p_tests",
    "s2p_tests",
    "n2p_tests",
    "fixed_tests",
    "run_result",
    "test_patch_result",
    "fix_patch_result",
    "swe_forge",
];

/// The columns of layout 3 drawn from the `swe_forge` block (derived, not read back): absent
/// from tables of layout 2, which are read without them.
pub const FLAT_COLUMNS: [&str; 9] = [
    "difficulty",
    "evidence_complete",
    "image",
    "image_id",
    "image_digest",
    "warnings",
    "quality_flags",
    "created_at",
    "merged_at",
];

/// The five test-map columns, each `list<struct<name, run, test, fix>>`.
const MAP_COLUMNS: [&str; 5] = ["f2p_tests", "p2p_tests", "s2p_tests", "n2p_tests", "fixed_tests"];
/// The three run-result columns, each `struct<passed_count, …, skipped_tests>`.
const RESULT_COLUMNS: [&str; 3] = ["run_result", "test_patch_result", "fix_patch_result"];

fn base_fields() -> Fields {
    Fields::from(vec![text_field("label"), text_field("ref"), text_field("sha")])
}

fn issue_fields() -> Fields {
    Fields::from(vec![unsigned_field("number"), text_field("title"), nullable_text_field("body")])
}

fn entry_fields() -> Fields {
    Fields::from(vec![text_field("name"), text_field("run"), text_field("test"), text_field("fix")])
}

fn result_fields() -> Fields {
    Fields::from(vec![
        unsigned_field("passed_count"),
        unsigned_field("failed_count"),
        unsigned_field("skipped_count"),
        text_list_field("passed_tests"),
        text_list_field("failed_tests"),
        text_list_field("skipped_tests"),
    ])
}

/// Every column's field, in file order (same names as [`INSTANCE_COLUMNS`]).
static SCHEMA: LazyLock<Vec<Field>> = LazyLock::new(|| {
    INSTANCE_COLUMNS
        .iter()
        .map(|&name| match name {
            "number" => unsigned_field(name),
            "body" | "lang" | "hints" | "tag" | "number_interval" | "swe_forge" | "difficulty" | "image"
            | "image_id" | "image_digest" | "created_at" | "merged_at" => nullable_text_field(name),
            "evidence_complete" => Field::new(name, DataType::Boolean, false),
            "base" => Field::new_struct(name, base_fields(), false),
            "resolved_issues" => struct_list_field(name, issue_fields()),
            "rejection_reasons" | "FAIL_TO_PASS" | "PASS_TO_PASS" | "warnings" | "quality_flags" => {
                text_list_field(name)
            }
            n if MAP_COLUMNS.contains(&n) => struct_list_field(name, entry_fields()),
            n if RESULT_COLUMNS.contains(&n) => Field::new_struct(name, result_fields(), false),
            _ => text_field(name),
        })
        .collect()
});

fn field(name: &str) -> &'static Field {
    SCHEMA.iter().find(|f| f.name() == name).expect("a column of SCHEMA")
}

/// Writes `instances` to `path` as the instances table (one row per instance), atomically.
/// The file's key-value metadata names the table, its layout version, the record schema
/// version and `producer`. Columns and types: `schemas/parquet.md`.
pub fn write_instances_parquet(
    path: impl AsRef<Path>,
    instances: &[Instance],
    producer: &Producer,
) -> Result<(), ExportError> {
    let mut w = InstancesWriter::create(path.as_ref(), producer)?;
    for inst in instances {
        w.write(inst)?;
    }
    w.finish()
}

/// The instances table written one record at a time, in row groups of bounded size, so that
/// memory does not grow with the number of records; the file is the one
/// [`write_instances_parquet`] writes, put in place by [`InstancesWriter::finish`] (dropped
/// before, it leaves the previous file).
pub struct InstancesWriter {
    sink: ParquetSink,
    rows: Vec<Instance>,
    bytes: usize,
    written: usize,
}

impl InstancesWriter {
    /// Prepares the instances table at `path` (see [`write_instances_parquet`]).
    pub fn create(path: &Path, producer: &Producer) -> Result<InstancesWriter, ExportError> {
        Ok(InstancesWriter {
            sink: ParquetSink::create(path, INSTANCES_TABLE, producer)?,
            rows: Vec::new(),
            bytes: 0,
            written: 0,
        })
    }

    /// Adds one row.
    pub fn write(&mut self, inst: &Instance) -> Result<(), ExportError> {
        self.bytes += approx_size(inst);
        self.rows.push(inst.clone());
        if self.rows.len() >= BATCH_ROWS || self.bytes >= BATCH_BYTES {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), ExportError> {
        let columns = instance_columns(self.sink.path(), &self.rows, self.written)?;
        self.sink.write(columns)?;
        self.written += self.rows.len();
        self.rows.clear();
        self.bytes = 0;
        Ok(())
    }

    /// Writes the rows left and the footer, and puts the file in place.
    pub fn finish(mut self) -> Result<(), ExportError> {
        if !self.rows.is_empty() || self.sink.is_empty() {
            self.flush()?;
        }
        self.sink.finish()
    }
}

/// About how many bytes a record's row holds: its texts and test names.
pub(crate) fn approx_size(inst: &Instance) -> usize {
    let maps = [&inst.f2p_tests, &inst.p2p_tests, &inst.s2p_tests, &inst.n2p_tests, &inst.fixed_tests];
    let results = [&inst.run_result, &inst.test_patch_result, &inst.fix_patch_result];
    let names: usize = maps.iter().flat_map(|m| m.keys()).map(|k| k.len() + 16).sum::<usize>()
        + results
            .iter()
            .flat_map(|r| r.passed_tests.iter().chain(&r.failed_tests).chain(&r.skipped_tests))
            .map(|k| k.len() + 8)
            .sum::<usize>();
    inst.fix_patch.len()
        + inst.test_patch.len()
        + inst.title.len()
        + inst.body.as_ref().map_or(0, String::len)
        + inst.hints.as_ref().map_or(0, String::len)
        + inst.resolved_issues.iter().map(|i| i.title.len() + i.body.as_ref().map_or(0, String::len)).sum::<usize>()
        + names
        + 512
}

fn instance_columns(path: &Path, xs: &[Instance], first_row: usize) -> Result<Vec<(Field, ArrayRef)>, ExportError> {
    let mut out = Vec::with_capacity(INSTANCE_COLUMNS.len());
    let flat: Vec<FlatFields> = xs.iter().map(FlatFields::of).collect();
    for name in INSTANCE_COLUMNS {
        let f = field(name);
        let array = match name {
            "instance_id" => texts(xs.iter().map(|i| i.instance_id.as_str())),
            "org" => texts(xs.iter().map(|i| i.org.as_str())),
            "repo" => texts(xs.iter().map(|i| i.repo.as_str())),
            "number" => unsigned(xs.iter().map(|i| i.number)),
            "state" => texts(xs.iter().map(|i| i.state.as_str())),
            "title" => texts(xs.iter().map(|i| i.title.as_str())),
            "body" => nullable_texts(xs.iter().map(|i| i.body.as_deref())),
            "base" => structs(
                &base_fields(),
                vec![
                    texts(xs.iter().map(|i| i.base.label.as_str())),
                    texts(xs.iter().map(|i| i.base.ref_.as_str())),
                    texts(xs.iter().map(|i| i.base.sha.as_str())),
                ],
            ),
            "resolved_issues" => issues_column(f, xs),
            "fix_patch" => texts(xs.iter().map(|i| i.fix_patch.as_str())),
            "test_patch" => texts(xs.iter().map(|i| i.test_patch.as_str())),
            "lang" => nullable_texts(xs.iter().map(|i| i.lang.as_deref())),
            "hints" => nullable_texts(xs.iter().map(|i| i.hints.as_deref())),
            "tag" => nullable_texts(xs.iter().map(|i| i.tag.as_deref())),
            "number_interval" => nullable_texts(xs.iter().map(|i| i.number_interval.as_deref())),
            "status" => texts(xs.iter().map(|i| i.status().as_str())),
            "rejection_reasons" => text_list(
                f,
                xs.iter().map(|i| i.swe_forge.iter().flat_map(|m| &m.rejections).map(|r| r.reason.as_str())),
            ),
            "difficulty" => nullable_texts(flat.iter().map(|x| x.difficulty.as_deref())),
            "evidence_complete" => Arc::new(flat.iter().map(|x| Some(x.evidence_complete)).collect::<BooleanArray>()),
            "image" => nullable_texts(flat.iter().map(|x| x.image.as_deref())),
            "image_id" => nullable_texts(flat.iter().map(|x| x.image_id.as_deref())),
            "image_digest" => nullable_texts(flat.iter().map(|x| x.image_digest.as_deref())),
            "warnings" => text_list(f, flat.iter().map(|x| x.warnings.iter().map(String::as_str))),
            "quality_flags" => text_list(f, flat.iter().map(|x| x.quality_flags.iter().map(String::as_str))),
            "created_at" => nullable_texts(flat.iter().map(|x| x.created_at.as_deref())),
            "merged_at" => nullable_texts(flat.iter().map(|x| x.merged_at.as_deref())),
            "FAIL_TO_PASS" => text_list(f, xs.iter().map(|i| i.fixed_tests.keys().map(String::as_str))),
            "PASS_TO_PASS" => text_list(f, xs.iter().map(|i| i.p2p_tests.keys().map(String::as_str))),
            "f2p_tests" => map_column(f, xs.iter().map(|i| &i.f2p_tests)),
            "p2p_tests" => map_column(f, xs.iter().map(|i| &i.p2p_tests)),
            "s2p_tests" => map_column(f, xs.iter().map(|i| &i.s2p_tests)),
            "n2p_tests" => map_column(f, xs.iter().map(|i| &i.n2p_tests)),
            "fixed_tests" => map_column(f, xs.iter().map(|i| &i.fixed_tests)),
            "run_result" => result_column(xs.iter().map(|i| &i.run_result)),
            "test_patch_result" => result_column(xs.iter().map(|i| &i.test_patch_result)),
            "fix_patch_result" => result_column(xs.iter().map(|i| &i.fix_patch_result)),
            "swe_forge" => swe_forge_column(path, xs, first_row)?,
            other => unreachable!("column {other} has no builder"),
        };
        out.push((f.clone(), array));
    }
    Ok(out)
}

/// The flat columns of one row of the instances table ([`FLAT_COLUMNS`]): the fields of the
/// record's `swe_forge` block a dataset is filtered by, each empty (null, false, no element)
/// when the record has no block or the block lacks it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FlatFields {
    /// `swe_forge.difficulty.label`: `easy`, `medium` or `hard`.
    pub difficulty: Option<String>,
    /// Whether `swe_forge.evidence` holds ([`Evidence::complete`]: the gold patch resolved every
    /// time it ran and both negative controls ran, resolved nothing and passed no FAIL_TO_PASS
    /// test); false without an evidence block.
    pub evidence_complete: bool,
    /// `swe_forge.image`, the instance image's tag.
    pub image: Option<String>,
    /// `swe_forge.image_id`, the instance image's content id (`sha256:...`).
    pub image_id: Option<String>,
    /// The registry digest (`sha256:<64 hex>`) of the pushed instance image: what follows the
    /// `@` of `swe_forge.registry_image`; none when the image was not pushed.
    pub image_digest: Option<String>,
    /// `swe_forge.warnings`: what validation noticed without rejecting the instance.
    pub warnings: Vec<String>,
    /// `swe_forge.quality.flags`: the quality signals raised (`solution_leak`, ...); empty when
    /// none was raised or the record carries no quality signals.
    pub quality_flags: Vec<String>,
    /// `swe_forge.created_at`, when the pull request was opened, as the record has it.
    pub created_at: Option<String>,
    /// `swe_forge.merged_at`, when the pull request was merged, as the record has it.
    pub merged_at: Option<String>,
}

impl FlatFields {
    /// The flat fields of `inst`.
    pub fn of(inst: &Instance) -> FlatFields {
        let Some(m) = inst.swe_forge.as_ref() else { return FlatFields::default() };
        FlatFields {
            difficulty: m.difficulty.as_ref().map(|d| d.label.as_str().to_owned()),
            evidence_complete: m.evidence.as_ref().is_some_and(Evidence::complete),
            image: m.image.clone(),
            image_id: m.image_id.clone(),
            image_digest: m.registry_image.as_deref().and_then(|r| r.rsplit_once('@')).map(|(_, d)| d.to_owned()),
            warnings: m.warnings.clone(),
            quality_flags: m
                .quality
                .as_ref()
                .map(|q| q.flags.iter().map(|f| f.as_str().to_owned()).collect())
                .unwrap_or_default(),
            created_at: m.created_at.as_ref().map(|t| t.as_str().to_owned()),
            merged_at: m.merged_at.as_ref().map(|t| t.as_str().to_owned()),
        }
    }
}

/// The `instance_id` and flat columns of every row of an instances table of layout 3, as the
/// file holds them (what a reader filtering on them sees). A table of an earlier layout has no
/// flat columns and is refused with the first one named.
pub fn read_flat_columns(path: impl AsRef<Path>) -> Result<Vec<(String, FlatFields)>, ExportError> {
    let path = path.as_ref();
    let want: Vec<Field> = SCHEMA
        .iter()
        .filter(|f| f.name() == "instance_id" || FLAT_COLUMNS.contains(&f.name().as_str()))
        .cloned()
        .collect();
    let t = Table::read(path, INSTANCES_TABLE, &want)?;
    let mut out = Vec::new();
    for batch in t.batches() {
        let c = Cols { batch };
        let o = |name: &str, i: usize| opt_str(c.strings(name), i).map(str::to_owned);
        let complete = batch.column_by_name("evidence_complete").expect("checked by Table::read").as_boolean();
        for i in 0..batch.num_rows() {
            let flat = FlatFields {
                difficulty: o("difficulty", i),
                evidence_complete: complete.value(i),
                image: o("image", i),
                image_id: o("image_id", i),
                image_digest: o("image_digest", i),
                warnings: list_strings(c.list("warnings"), i),
                quality_flags: list_strings(c.list("quality_flags"), i),
                created_at: o("created_at", i),
                merged_at: o("merged_at", i),
            };
            out.push((c.strings("instance_id").value(i).to_owned(), flat));
        }
    }
    Ok(out)
}

fn issues_column(f: &Field, xs: &[Instance]) -> ArrayRef {
    let issues: Vec<&ResolvedIssue> = xs.iter().flat_map(|i| &i.resolved_issues).collect();
    let values = structs(
        &issue_fields(),
        vec![
            unsigned(issues.iter().map(|r| r.number)),
            texts(issues.iter().map(|r| r.title.as_str())),
            nullable_texts(issues.iter().map(|r| r.body.as_deref())),
        ],
    );
    list(f, xs.iter().map(|i| i.resolved_issues.len()).collect(), values)
}

fn map_column<'a>(f: &Field, maps: impl Iterator<Item = &'a TestMap>) -> ArrayRef {
    let maps: Vec<&TestMap> = maps.collect();
    let entries = || maps.iter().flat_map(|m| m.iter());
    let values = structs(
        &entry_fields(),
        vec![
            texts(entries().map(|(name, _)| name.as_str())),
            texts(entries().map(|(_, t)| t.run.as_str())),
            texts(entries().map(|(_, t)| t.test.as_str())),
            texts(entries().map(|(_, t)| t.fix.as_str())),
        ],
    );
    list(f, maps.iter().map(|m| m.len()).collect(), values)
}

fn result_column<'a>(results: impl Iterator<Item = &'a TestResult>) -> ArrayRef {
    let rs: Vec<&TestResult> = results.collect();
    let fields = result_fields();
    let strings = |i: usize, pick: fn(&TestResult) -> &Vec<String>| {
        text_list(&fields[i], rs.iter().map(|r| pick(r).iter().map(String::as_str)))
    };
    structs(
        &fields,
        vec![
            unsigned(rs.iter().map(|r| r.passed_count)),
            unsigned(rs.iter().map(|r| r.failed_count)),
            unsigned(rs.iter().map(|r| r.skipped_count)),
            strings(3, |r| &r.passed_tests),
            strings(4, |r| &r.failed_tests),
            strings(5, |r| &r.skipped_tests),
        ],
    )
}

/// The `swe_forge` column: the block as JSON, null when the record has none.
fn swe_forge_column(path: &Path, xs: &[Instance], first_row: usize) -> Result<ArrayRef, ExportError> {
    let values = xs
        .iter()
        .enumerate()
        .map(|(row, i)| {
            i.swe_forge.as_ref().map(serde_json::to_string).transpose().map_err(|source| ExportError::Json {
                path: path.to_owned(),
                row: first_row + row,
                column: "swe_forge".to_owned(),
                source,
            })
        })
        .collect::<Result<Vec<Option<String>>, _>>()?;
    Ok(nullable_texts(values.iter().map(Option::as_deref)))
}

/// Reads an instances table written by [`write_instances_parquet`] back into records.
///
/// Records are rebuilt from every column except the derived ones (`status`,
/// `rejection_reasons`, `FAIL_TO_PASS`, `PASS_TO_PASS` and the flat columns of `swe_forge`,
/// [`FLAT_COLUMNS`]), which are only checked for presence and type. A file whose metadata names
/// another table (a `swebench` export) is refused. Tables of layout 2 (no flat columns) and of the
/// first layout (swe-forge before arrow-rs: view and large types, JSON strings) are read too.
pub fn read_instances_parquet(path: impl AsRef<Path>) -> Result<Vec<Instance>, ExportError> {
    open_instances_parquet(path.as_ref())?.collect()
}

/// The records of an instances Parquet table one at a time, read a row group at a time (a table
/// of swe-forge's first layout is read whole); the iterator ends after its first error.
pub(crate) fn open_instances_parquet(path: &Path) -> Result<InstanceRows, ExportError> {
    let (schema, meta) = peek(path)?;
    if is_legacy(&schema, &meta) {
        let records = read_legacy(path, &schema)?;
        return Ok(InstanceRows { batches: None, first_row: 0, rows: records.into_iter(), failed: false });
    }
    // Layout 2 (swe-forge before the flat columns) has every column but those.
    let want: Vec<Field> = if meta.get(TABLE_VERSION_KEY).is_some_and(|v| v == "2") {
        SCHEMA.iter().filter(|f| !FLAT_COLUMNS.contains(&f.name().as_str())).cloned().collect()
    } else {
        SCHEMA.clone()
    };
    let (table, reader) = Table::open(path, INSTANCES_TABLE, &want)?;
    Ok(InstanceRows { batches: Some((table, reader)), first_row: 0, rows: Vec::new().into_iter(), failed: false })
}

/// Records of an instances table ([`open_instances_parquet`]): the rows of one record batch at a
/// time.
pub(crate) struct InstanceRows {
    batches: Option<(Table, parquet::arrow::arrow_reader::ParquetRecordBatchReader)>,
    first_row: usize,
    rows: std::vec::IntoIter<Instance>,
    failed: bool,
}

impl Iterator for InstanceRows {
    type Item = Result<Instance, ExportError>;

    fn next(&mut self) -> Option<Result<Instance, ExportError>> {
        loop {
            if self.failed {
                return None;
            }
            if let Some(r) = self.rows.next() {
                return Some(Ok(r));
            }
            let (table, reader) = self.batches.as_mut()?;
            let batch = match reader.next()? {
                Ok(b) => b,
                Err(source) => {
                    self.failed = true;
                    return Some(Err(ExportError::Arrow { path: table.path().to_owned(), source }));
                }
            };
            let mut out = Vec::with_capacity(batch.num_rows());
            if let Err(e) = table.check(&batch).and_then(|()| read_batch(table, &batch, self.first_row, &mut out)) {
                self.failed = true;
                return Some(Err(e));
            }
            self.first_row += batch.num_rows();
            self.rows = out.into_iter();
        }
    }
}

/// Columns of one batch, downcast to the types [`Table::read`] checked.
struct Cols<'b> {
    batch: &'b RecordBatch,
}

impl<'b> Cols<'b> {
    fn strings(&self, name: &str) -> &'b StringArray {
        self.batch.column_by_name(name).expect("checked by Table::read").as_string::<i32>()
    }
    fn list(&self, name: &str) -> &'b ListArray {
        self.batch.column_by_name(name).expect("checked by Table::read").as_list::<i32>()
    }
    fn structs(&self, name: &str) -> &'b StructArray {
        self.batch.column_by_name(name).expect("checked by Table::read").as_struct()
    }
}

fn read_batch(t: &Table, batch: &RecordBatch, first_row: usize, out: &mut Vec<Instance>) -> Result<(), ExportError> {
    let c = Cols { batch };
    let s = |name: &str, i: usize| c.strings(name).value(i).to_owned();
    let o = |name: &str, i: usize| opt_str(c.strings(name), i).map(str::to_owned);
    let number = batch.column_by_name("number").expect("checked").as_primitive::<arrow_array::types::UInt64Type>();
    let base = c.structs("base");
    let issues = c.list("resolved_issues");
    let issue_values = issues.values().as_struct();
    let maps = MAP_COLUMNS.map(|name| c.list(name));
    let results = RESULT_COLUMNS.map(|name| c.structs(name));
    let swe_forge = c.strings("swe_forge");
    for i in 0..batch.num_rows() {
        let row = first_row + i;
        let mut test_maps = Vec::with_capacity(5);
        for (name, l) in MAP_COLUMNS.into_iter().zip(maps) {
            test_maps.push(read_map(t, l, i, row, name)?);
        }
        let [f2p_tests, p2p_tests, s2p_tests, n2p_tests, fixed_tests]: [TestMap; 5] =
            test_maps.try_into().expect("five maps");
        let [run_result, test_patch_result, fix_patch_result] = results.map(|r| read_result(r, i));
        let swe_forge = opt_str(swe_forge, i).map(serde_json::from_str::<ForgeMeta>).transpose().map_err(|source| {
            ExportError::Json { path: t.path().to_owned(), row, column: "swe_forge".to_owned(), source }
        })?;
        out.push(Instance {
            org: s("org", i),
            repo: s("repo", i),
            number: number.value(i),
            state: s("state", i),
            title: s("title", i),
            body: o("body", i),
            base: Base {
                label: child_strings(base, "label").value(i).to_owned(),
                ref_: child_strings(base, "ref").value(i).to_owned(),
                sha: child_strings(base, "sha").value(i).to_owned(),
            },
            resolved_issues: range(issues, i)
                .map(|j| ResolvedIssue {
                    number: child_unsigned(issue_values, "number").value(j),
                    title: child_strings(issue_values, "title").value(j).to_owned(),
                    body: opt_str(child_strings(issue_values, "body"), j).map(str::to_owned),
                })
                .collect(),
            fix_patch: s("fix_patch", i),
            test_patch: s("test_patch", i),
            fixed_tests,
            p2p_tests,
            f2p_tests,
            s2p_tests,
            n2p_tests,
            run_result,
            test_patch_result,
            fix_patch_result,
            instance_id: s("instance_id", i),
            hints: o("hints", i),
            tag: o("tag", i),
            number_interval: o("number_interval", i),
            lang: o("lang", i),
            swe_forge,
        });
        let r = out.last_mut().expect("just pushed");
        if r.instance_id.is_empty() {
            r.instance_id = r.expected_id();
        }
        if let Some(why) = r.id_problem() {
            return Err(t.value_err(row, "instance_id", format!("{:?} {why}", r.instance_id)));
        }
    }
    Ok(())
}

fn read_map(t: &Table, l: &ListArray, i: usize, row: usize, column: &str) -> Result<TestMap, ExportError> {
    let entries = l.values().as_struct();
    let [name, run, test, fix] = ["name", "run", "test", "fix"].map(|n| child_strings(entries, n));
    let status = |a: &StringArray, j: usize| {
        let v = a.value(j);
        parse_status(v).ok_or_else(|| t.value_err(row, column, format!("unknown test status `{v}`")))
    };
    range(l, i)
        .map(|j| {
            let tr = Transition { run: status(run, j)?, test: status(test, j)?, fix: status(fix, j)? };
            Ok((name.value(j).to_owned(), tr))
        })
        .collect()
}

fn read_result(s: &StructArray, i: usize) -> TestResult {
    TestResult {
        passed_count: child_unsigned(s, "passed_count").value(i),
        failed_count: child_unsigned(s, "failed_count").value(i),
        skipped_count: child_unsigned(s, "skipped_count").value(i),
        passed_tests: list_strings(child_list(s, "passed_tests"), i),
        failed_tests: list_strings(child_list(s, "failed_tests"), i),
        skipped_tests: list_strings(child_list(s, "skipped_tests"), i),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::fs::File;

    use arrow_array::Array;
    use parquet::arrow::ArrowWriter;
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    use parquet::file::metadata::KeyValue;
    use parquet::file::properties::WriterProperties;
    use swe_forge_core::{
        Control, Difficulty, DifficultyFeatures, DifficultyLabel, LabelSource, Timestamp, ValidationStatus,
    };

    use super::*;

    const DIGEST: &str = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    /// A record of `o/r` numbered as its id `o__r-<number>` says.
    fn bare(id: &str) -> Instance {
        let number: u64 = id.rsplit_once('-').and_then(|(_, n)| n.parse().ok()).unwrap_or(1);
        serde_json::from_value(serde_json::json!({
            "org": "o", "repo": "r", "number": number, "state": "closed", "title": "t", "body": null,
            "base": {"label": "o:main", "ref": "main", "sha": "abc"}, "resolved_issues": [],
            "fix_patch": "F", "test_patch": "T", "instance_id": id
        }))
        .unwrap()
    }

    /// An accepted record with every flat field filled, one accepted with evidence that does not
    /// hold, and a candidate without a `swe_forge` block.
    fn records() -> Vec<Instance> {
        let mut full = bare("o__r-1");
        let mut meta = ForgeMeta::new(ValidationStatus::Accepted);
        meta.difficulty = Some(Difficulty {
            label: DifficultyLabel::Hard,
            source: LabelSource::Human,
            heuristic: DifficultyLabel::Medium,
            score: 2.5,
            features: DifficultyFeatures::default(),
        });
        let control = |name: &str| Control { name: name.into(), f2p_passed: vec![], resolved: false };
        meta.evidence = Some(Evidence {
            gold_runs: 3,
            gold_resolved: 3,
            controls: vec![control("empty_patch"), control("test_patch_alone")],
            ..Evidence::default()
        });
        meta.image = Some("swe-forge/o__r:pr-1".into());
        meta.image_id = Some("sha256:feed".into());
        meta.registry_image = Some(format!("127.0.0.1:5000/swe-forge/o__r@{DIGEST}"));
        meta.warnings = vec!["exit code 1 but every test passed".into(), "second".into()];
        meta.created_at = Some(Timestamp::parse("2024-01-02T03:04:05Z").unwrap());
        meta.merged_at = Some(Timestamp::parse("2024-01-09T10:11:12Z").unwrap());
        let mut quality = swe_forge_core::Quality::default();
        quality.raise(swe_forge_core::QualityFlag::UntestedHunks);
        quality.raise(swe_forge_core::QualityFlag::SolutionLeak);
        meta.quality = Some(quality);
        full.swe_forge = Some(meta);
        let mut partial = bare("o__r-2");
        let mut meta = ForgeMeta::new(ValidationStatus::Accepted);
        meta.evidence = Some(Evidence { gold_runs: 3, gold_resolved: 2, ..Evidence::default() });
        partial.swe_forge = Some(meta);
        vec![full, partial, bare("o__r-3")]
    }

    fn read_batch_of(path: &Path) -> (RecordBatch, BTreeMap<String, String>) {
        let builder = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap()).unwrap();
        let (_, meta) = peek(path).unwrap();
        let mut batches: Vec<RecordBatch> = builder.build().unwrap().map(Result::unwrap).collect();
        assert_eq!(batches.len(), 1);
        (batches.remove(0), meta)
    }

    #[test]
    fn flat_columns_hold_the_swe_forge_fields() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("i.parquet");
        let records = records();
        write_instances_parquet(&path, &records, &Producer::default()).unwrap();
        let (batch, meta) = read_batch_of(&path);
        assert_eq!(meta.get(TABLE_VERSION_KEY).map(String::as_str), Some("3"));
        let text = |name: &str| -> Vec<Option<String>> {
            let a = batch.column_by_name(name).unwrap().as_string::<i32>();
            (0..a.len()).map(|i| opt_str(a, i).map(str::to_owned)).collect()
        };
        let lists = |name: &str| -> Vec<Vec<String>> {
            let l = batch.column_by_name(name).unwrap().as_list::<i32>();
            (0..l.len()).map(|i| list_strings(l, i)).collect()
        };
        let some = |s: &str| Some(s.to_owned());
        assert_eq!(text("difficulty"), [some("hard"), None, None]);
        let complete = batch.column_by_name("evidence_complete").unwrap().as_boolean();
        assert_eq!(complete.null_count(), 0);
        assert_eq!((0..3).map(|i| complete.value(i)).collect::<Vec<_>>(), [true, false, false]);
        assert_eq!(text("image"), [some("swe-forge/o__r:pr-1"), None, None]);
        assert_eq!(text("image_id"), [some("sha256:feed"), None, None]);
        assert_eq!(text("image_digest"), [some(DIGEST), None, None]);
        assert_eq!(
            lists("warnings"),
            [vec!["exit code 1 but every test passed".to_owned(), "second".to_owned()], vec![], vec![]]
        );
        let flags = vec!["solution_leak".to_owned(), "untested_hunks".to_owned()];
        assert_eq!(lists("quality_flags"), [flags, vec![], vec![]]);
        assert_eq!(text("created_at"), [some("2024-01-02T03:04:05Z"), None, None]);
        assert_eq!(text("merged_at"), [some("2024-01-09T10:11:12Z"), None, None]);
        // The JSON column is still there and the records come back whole.
        assert!(text("swe_forge")[0].as_deref().unwrap().contains("\"label\":\"hard\""));
        assert_eq!(read_instances_parquet(&path).unwrap(), records);
        let flat = read_flat_columns(&path).unwrap();
        assert_eq!(flat, records.iter().map(|r| (r.instance_id.clone(), FlatFields::of(r))).collect::<Vec<_>>());
        assert_eq!(flat[0].1.difficulty.as_deref(), Some("hard"));
    }

    /// A table of layout 2 (before the flat columns): the file the writer made then, with those
    /// columns left out and `swe_forge.table_version` = 2.
    /// A row whose `instance_id` is not its org, repo and number's is refused when the table is
    /// read, naming the row (as a JSONL line is); before, it was read as it came.
    #[test]
    fn a_row_whose_id_names_another_pull_request_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("i.parquet");
        let mut records = records();
        records[1].instance_id = "o__r-9".into();
        write_instances_parquet(&path, &records, &Producer::default()).unwrap();
        let err = read_instances_parquet(&path).unwrap_err().to_string();
        assert!(err.contains("row 1, column `instance_id`: \"o__r-9\" is not \"o__r-2\""), "{err}");
    }

    #[test]
    fn tables_of_layout_2_without_flat_columns_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v2.parquet");
        let records = records();
        let (fields, arrays): (Vec<Field>, Vec<ArrayRef>) = instance_columns(&path, &records, 0)
            .unwrap()
            .into_iter()
            .filter(|(f, _)| !FLAT_COLUMNS.contains(&f.name().as_str()))
            .unzip();
        assert_eq!(fields.len(), 28, "layout 2 had 28 columns");
        let schema = Arc::new(arrow_schema::Schema::new(fields));
        let kv = |k: &str, v: &str| KeyValue::new(k.to_owned(), v.to_owned());
        let props = WriterProperties::builder()
            .set_key_value_metadata(Some(vec![kv("swe_forge.table", "instances"), kv(TABLE_VERSION_KEY, "2")]))
            .build();
        let mut w = ArrowWriter::try_new(File::create(&path).unwrap(), schema.clone(), Some(props)).unwrap();
        w.write(&RecordBatch::try_new(schema, arrays).unwrap()).unwrap();
        w.close().unwrap();
        assert_eq!(read_instances_parquet(&path).unwrap(), records);
        let err = read_flat_columns(&path).unwrap_err().to_string();
        assert!(err.contains("column `difficulty`: missing"), "{err}");

        // The same file claiming layout 3 misses a flat column, and says which.
        let (batch, _) = read_batch_of(&path);
        let props = WriterProperties::builder()
            .set_key_value_metadata(Some(vec![kv("swe_forge.table", "instances"), kv(TABLE_VERSION_KEY, "3")]))
            .build();
        let v3 = dir.path().join("v3.parquet");
        let mut w = ArrowWriter::try_new(File::create(&v3).unwrap(), batch.schema(), Some(props)).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        let err = read_instances_parquet(&v3).unwrap_err().to_string();
        assert!(err.contains("column `difficulty`: missing"), "{err}");
    }

    #[test]
    fn schema_and_column_list_agree() {
        let names: Vec<&str> = SCHEMA.iter().map(|f| f.name().as_str()).collect();
        assert_eq!(names, INSTANCE_COLUMNS);
        let built = instance_columns(Path::new("x"), &[], 0).unwrap();
        for ((f, a), want) in built.iter().zip(SCHEMA.iter()) {
            assert_eq!(f, want);
            assert_eq!(a.data_type(), want.data_type(), "{}", f.name());
        }
    }
}
