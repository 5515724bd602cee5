//! The tests table: the long form of the category maps, one Parquet row per
//! (instance, test) over every test in the union of `p2p_tests`, `f2p_tests`, `s2p_tests`,
//! `n2p_tests` and `fixed_tests`, with the test's three statuses and its category. The base
//! run's status is `base_status` (layout 3); tables of layout 2 call it `run` and are read too.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use arrow_array::cast::AsArray;
use arrow_schema::Field;
use swe_forge_core::{Instance, TestMap, TestStatus, Transition};

use crate::ExportError;
use crate::table::{ParquetSink, Producer, Table, peek, text_field, texts};

/// The `swe_forge.table` metadata value of the tests table.
pub const TESTS_TABLE: &str = "tests";

/// Column names of the tests table, in file order; every column is a non-null `string`.
pub const TEST_COLUMNS: [&str; 6] = ["instance_id", "test", "base_status", "test_status", "fix_status", "category"];

/// The name of the base run's status column in tables of layout 2 (now `base_status`).
const OLD_BASE_STATUS: &str = "run";

/// The Multi-SWE-bench category of a test that ends PASS.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Category {
    /// PASS -> PASS.
    P2p,
    /// FAIL -> PASS.
    F2p,
    /// SKIP -> PASS.
    S2p,
    /// NONE -> PASS.
    N2p,
}

impl Category {
    /// All categories, in the order their maps are searched.
    pub const ALL: [Category; 4] = [Category::P2p, Category::F2p, Category::S2p, Category::N2p];

    /// The lower-case name used in the table (`p2p`, `f2p`, `s2p`, `n2p`).
    pub fn as_str(self) -> &'static str {
        match self {
            Category::P2p => "p2p",
            Category::F2p => "f2p",
            Category::S2p => "s2p",
            Category::N2p => "n2p",
        }
    }

    /// Parses the name written by [`Category::as_str`].
    pub fn from_name(name: &str) -> Option<Category> {
        Category::ALL.into_iter().find(|c| c.as_str() == name)
    }

    /// The category implied by a test's status with the test patch (its fix status being PASS).
    pub fn from_test_status(status: TestStatus) -> Category {
        match status {
            TestStatus::Pass => Category::P2p,
            TestStatus::Fail => Category::F2p,
            TestStatus::Skip => Category::S2p,
            TestStatus::None => Category::N2p,
        }
    }

    /// The instance's map holding this category's tests.
    pub fn map(self, instance: &Instance) -> &TestMap {
        match self {
            Category::P2p => &instance.p2p_tests,
            Category::F2p => &instance.f2p_tests,
            Category::S2p => &instance.s2p_tests,
            Category::N2p => &instance.n2p_tests,
        }
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One row of the tests table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestRow {
    /// The instance the test belongs to.
    pub instance_id: String,
    /// Test id.
    pub test: String,
    /// Statuses in the base, test and fix runs (columns `base_status`, `test_status`,
    /// `fix_status`).
    pub transition: Transition,
    /// The category map the test is in.
    pub category: Category,
}

/// The tests table's rows for `instances`: per instance (in order), every test of the union of
/// its five maps, sorted by test id.
///
/// A test's category and statuses come from the first of `p2p_tests`, `f2p_tests`, `s2p_tests`,
/// `n2p_tests` that holds it; a test found only in `fixed_tests` takes the category its
/// test-patch status implies (FAIL -> f2p, SKIP -> s2p, NONE -> n2p).
pub fn test_rows(instances: &[Instance]) -> Vec<TestRow> {
    let mut rows = Vec::new();
    for inst in instances {
        push_rows(inst, &mut rows);
    }
    rows
}

/// The rows of one instance (see [`test_rows`]), appended to `rows`.
fn push_rows(inst: &Instance, rows: &mut Vec<TestRow>) {
    let mut tests: BTreeMap<&str, (Category, Transition)> = BTreeMap::new();
    for cat in Category::ALL {
        for (name, t) in cat.map(inst) {
            tests.entry(name).or_insert((cat, *t));
        }
    }
    for (name, t) in &inst.fixed_tests {
        tests.entry(name).or_insert((Category::from_test_status(t.test), *t));
    }
    rows.extend(tests.into_iter().map(|(name, (category, transition))| TestRow {
        instance_id: inst.instance_id.clone(),
        test: name.to_owned(),
        transition,
        category,
    }));
}

/// Writes the tests table of `instances` (see [`test_rows`]) to `path`, atomically.
///
/// Columns, all non-null `string`: `instance_id`, `test`, `base_status`, `test_status`, `fix_status`
/// (`PASS`/`FAIL`/`SKIP`/`NONE`) and `category` (`p2p`/`f2p`/`s2p`/`n2p`); key-value metadata
/// as in the instances table.
pub fn write_tests_parquet(
    path: impl AsRef<Path>,
    instances: &[Instance],
    producer: &Producer,
) -> Result<(), ExportError> {
    let mut w = TestsWriter::create(path.as_ref(), producer)?;
    for inst in instances {
        w.write(inst)?;
    }
    w.finish()
}

/// Most rows of one row group of the tests table.
const TEST_BATCH_ROWS: usize = 65_536;

/// The tests table written one instance at a time, in row groups of at most 65,536 rows; the
/// file is the one [`write_tests_parquet`] writes, put in place by [`TestsWriter::finish`].
pub struct TestsWriter {
    sink: ParquetSink,
    rows: Vec<TestRow>,
}

impl TestsWriter {
    /// Prepares the tests table at `path` (see [`write_tests_parquet`]).
    pub fn create(path: &Path, producer: &Producer) -> Result<TestsWriter, ExportError> {
        Ok(TestsWriter { sink: ParquetSink::create(path, TESTS_TABLE, producer)?, rows: Vec::new() })
    }

    /// Adds the rows of `inst`.
    pub fn write(&mut self, inst: &Instance) -> Result<(), ExportError> {
        push_rows(inst, &mut self.rows);
        while self.rows.len() >= TEST_BATCH_ROWS {
            let rest = self.rows.split_off(TEST_BATCH_ROWS);
            let full = std::mem::replace(&mut self.rows, rest);
            self.write_rows(full)?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), ExportError> {
        let rows = std::mem::take(&mut self.rows);
        self.write_rows(rows)
    }

    fn write_rows(&mut self, rows: Vec<TestRow>) -> Result<(), ExportError> {
        let column = |name: &str, f: fn(&TestRow) -> &str| (text_field(name), texts(rows.iter().map(f)));
        let columns = vec![
            column("instance_id", |r| &r.instance_id),
            column("test", |r| &r.test),
            column("base_status", |r| r.transition.run.as_str()),
            column("test_status", |r| r.transition.test.as_str()),
            column("fix_status", |r| r.transition.fix.as_str()),
            column("category", |r| r.category.as_str()),
        ];
        self.sink.write(columns)
    }

    /// Writes the rows left and the footer, and puts the file in place.
    pub fn finish(mut self) -> Result<(), ExportError> {
        if !self.rows.is_empty() || self.sink.is_empty() {
            self.flush()?;
        }
        self.sink.finish()
    }
}

/// Reads a tests table written by [`write_tests_parquet`], or by swe-forge before layout 3 (the
/// base run's status in a column `run`, told by the file's schema: no `base_status`).
pub fn read_tests_parquet(path: impl AsRef<Path>) -> Result<Vec<TestRow>, ExportError> {
    let path = path.as_ref();
    let (file_schema, _) = peek(path)?;
    let base = match file_schema.field_with_name("base_status") {
        Err(_) if file_schema.field_with_name(OLD_BASE_STATUS).is_ok() => OLD_BASE_STATUS,
        _ => "base_status",
    };
    let columns = TEST_COLUMNS.map(|name| if name == "base_status" { base } else { name });
    let schema: Vec<Field> = columns.iter().map(|name| text_field(name)).collect();
    let t = Table::read(path, TESTS_TABLE, &schema)?;
    let mut out = Vec::new();
    for batch in t.batches() {
        let [instance_id, test, run, test_status, fix_status, category] =
            columns.map(|name| batch.column_by_name(name).expect("checked by Table::read").as_string::<i32>());
        let first = out.len();
        for i in 0..batch.num_rows() {
            let row = first + i;
            let status = |column: &str, value: &str| {
                parse_status(value).ok_or_else(|| t.value_err(row, column, format!("unknown test status `{value}`")))
            };
            out.push(TestRow {
                instance_id: instance_id.value(i).to_owned(),
                test: test.value(i).to_owned(),
                transition: Transition {
                    run: status(base, run.value(i))?,
                    test: status("test_status", test_status.value(i))?,
                    fix: status("fix_status", fix_status.value(i))?,
                },
                category: Category::from_name(category.value(i))
                    .ok_or_else(|| t.value_err(row, "category", format!("unknown category `{}`", category.value(i))))?,
            });
        }
    }
    Ok(out)
}

/// Parses `PASS`/`FAIL`/`SKIP`/`NONE`.
pub(crate) fn parse_status(s: &str) -> Option<TestStatus> {
    [TestStatus::Pass, TestStatus::Fail, TestStatus::Skip, TestStatus::None].into_iter().find(|t| t.as_str() == s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use TestStatus::{Fail, None as Absent, Pass, Skip};

    fn t(run: TestStatus, test: TestStatus, fix: TestStatus) -> Transition {
        Transition { run, test, fix }
    }

    #[test]
    fn union_of_maps_one_row_each() {
        let mut inst: Instance = serde_json::from_value(serde_json::json!({
            "org": "o", "repo": "r", "number": 1, "state": "closed", "title": "t", "body": null,
            "base": {"label": "o:main", "ref": "main", "sha": "abc"}, "resolved_issues": [],
            "fix_patch": "", "test_patch": "", "instance_id": "o__r-1"
        }))
        .unwrap();
        inst.p2p_tests.insert("a".into(), t(Pass, Pass, Pass));
        inst.f2p_tests.insert("b".into(), t(Fail, Fail, Pass));
        inst.fixed_tests.insert("b".into(), t(Fail, Fail, Pass));
        // Only in `fixed_tests`: the category follows the test-patch status.
        inst.fixed_tests.insert("c".into(), t(Skip, Skip, Pass));
        inst.fixed_tests.insert("d".into(), t(Absent, Absent, Pass));
        let rows = test_rows(std::slice::from_ref(&inst));
        let got: Vec<(&str, Category)> = rows.iter().map(|r| (r.test.as_str(), r.category)).collect();
        assert_eq!(got, [("a", Category::P2p), ("b", Category::F2p), ("c", Category::S2p), ("d", Category::N2p)]);
        assert_eq!(rows[2].transition, t(Skip, Skip, Pass));
        assert!(rows.iter().all(|r| r.instance_id == "o__r-1"));
    }

    #[test]
    fn names_parse_back() {
        for c in Category::ALL {
            assert_eq!(Category::from_name(c.as_str()), Some(c));
        }
        assert_eq!(Category::from_name("fixed"), None);
        for s in [Pass, Fail, Skip, Absent] {
            assert_eq!(parse_status(s.as_str()), Some(s));
        }
    }
}
