//! The instances table: one Parquet row per instance. Scalar fields are plain columns,
//! `FAIL_TO_PASS`/`PASS_TO_PASS`/`rejection_reasons` are `List(String)` conveniences for
//! dataset users, and every structured field is also kept as a JSON string column so that
//! [`read_instances_parquet`] rebuilds the exact records.

use std::mem::take;
use std::path::Path;

use polars::prelude::*;
use swe_forge_core::{Base, ForgeMeta, Instance, ResolvedIssue, TestMap, TestResult, ValidationStatus};

use crate::ExportError;
use crate::atomic::write_atomic;
use crate::table::{Kind, Table, json_column, list_column, polars_err, write_frame};

/// Column names of the instances table, in file order.
pub const INSTANCE_COLUMNS: [&str; 30] = [
    "instance_id",
    "org",
    "repo",
    "number",
    "state",
    "title",
    "body",
    "base_label",
    "base_ref",
    "base_sha",
    "resolved_issues",
    "fix_patch",
    "test_patch",
    "lang",
    "hints",
    "tag",
    "number_interval",
    "status",
    "rejection_reasons",
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

/// Every column with its kind, in file order (same names as [`INSTANCE_COLUMNS`]).
const SCHEMA: [(&str, Kind); 30] = [
    ("instance_id", Kind::Text),
    ("org", Kind::Text),
    ("repo", Kind::Text),
    ("number", Kind::Unsigned),
    ("state", Kind::Text),
    ("title", Kind::Text),
    ("body", Kind::NullableText),
    ("base_label", Kind::Text),
    ("base_ref", Kind::Text),
    ("base_sha", Kind::Text),
    ("resolved_issues", Kind::Text),
    ("fix_patch", Kind::Text),
    ("test_patch", Kind::Text),
    ("lang", Kind::NullableText),
    ("hints", Kind::NullableText),
    ("tag", Kind::NullableText),
    ("number_interval", Kind::NullableText),
    ("status", Kind::Text),
    ("rejection_reasons", Kind::TextList),
    ("FAIL_TO_PASS", Kind::TextList),
    ("PASS_TO_PASS", Kind::TextList),
    ("f2p_tests", Kind::Text),
    ("p2p_tests", Kind::Text),
    ("s2p_tests", Kind::Text),
    ("n2p_tests", Kind::Text),
    ("fixed_tests", Kind::Text),
    ("run_result", Kind::Text),
    ("test_patch_result", Kind::Text),
    ("fix_patch_result", Kind::Text),
    ("swe_forge", Kind::NullableText),
];

/// The snake_case spelling of a validation status, as in records.
pub(crate) fn status_str(status: ValidationStatus) -> &'static str {
    match status {
        ValidationStatus::Candidate => "candidate",
        ValidationStatus::Accepted => "accepted",
        ValidationStatus::Rejected => "rejected",
    }
}

/// Writes `instances` to `path` as the instances table (one row per instance), atomically.
///
/// Columns, in order: `instance_id`, `org`, `repo`, `number` (UInt64), `state`, `title`,
/// `body`*, `base_label`, `base_ref`, `base_sha`, `resolved_issues` (JSON), `fix_patch`,
/// `test_patch`, `lang`*, `hints`*, `tag`*, `number_interval`*, `status`
/// (`candidate`/`accepted`/`rejected`), `rejection_reasons` (List(String), snake_case),
/// `FAIL_TO_PASS` (List(String), keys of `fixed_tests`), `PASS_TO_PASS` (List(String), keys
/// of `p2p_tests`), then JSON strings of `f2p_tests`, `p2p_tests`, `s2p_tests`, `n2p_tests`,
/// `fixed_tests`, `run_result`, `test_patch_result`, `fix_patch_result` and `swe_forge`*.
/// Columns marked * are null where the record field is absent; every other column is `String`
/// unless noted.
pub fn write_instances_parquet(path: impl AsRef<Path>, instances: &[Instance]) -> Result<(), ExportError> {
    let path = path.as_ref();
    let mut df = instances_frame(path, instances)?;
    write_atomic(path, |w| write_frame(path, w, &mut df))
}

fn instances_frame(path: &Path, xs: &[Instance]) -> Result<DataFrame, ExportError> {
    let text = |name: &str, f: fn(&Instance) -> &str| Column::new(name.into(), xs.iter().map(f).collect::<Vec<_>>());
    let nullable =
        |name: &str, f: fn(&Instance) -> Option<&str>| Column::new(name.into(), xs.iter().map(f).collect::<Vec<_>>());
    let json = |name: &str, f: fn(&Instance) -> serde_json::Result<String>| json_column(path, name, xs, f);
    let columns = vec![
        text("instance_id", |i| &i.instance_id),
        text("org", |i| &i.org),
        text("repo", |i| &i.repo),
        Column::new("number".into(), xs.iter().map(|i| i.number).collect::<Vec<u64>>()),
        text("state", |i| &i.state),
        text("title", |i| &i.title),
        nullable("body", |i| i.body.as_deref()),
        text("base_label", |i| &i.base.label),
        text("base_ref", |i| &i.base.ref_),
        text("base_sha", |i| &i.base.sha),
        json("resolved_issues", |i| serde_json::to_string(&i.resolved_issues))?,
        text("fix_patch", |i| &i.fix_patch),
        text("test_patch", |i| &i.test_patch),
        nullable("lang", |i| i.lang.as_deref()),
        nullable("hints", |i| i.hints.as_deref()),
        nullable("tag", |i| i.tag.as_deref()),
        nullable("number_interval", |i| i.number_interval.as_deref()),
        text("status", |i| status_str(i.status())),
        list_column(
            "rejection_reasons",
            xs.iter().map(|i| i.swe_forge.iter().flat_map(|m| &m.rejections).map(|r| r.reason.as_str())),
        ),
        list_column("FAIL_TO_PASS", xs.iter().map(|i| i.fixed_tests.keys().map(String::as_str))),
        list_column("PASS_TO_PASS", xs.iter().map(|i| i.p2p_tests.keys().map(String::as_str))),
        json("f2p_tests", |i| serde_json::to_string(&i.f2p_tests))?,
        json("p2p_tests", |i| serde_json::to_string(&i.p2p_tests))?,
        json("s2p_tests", |i| serde_json::to_string(&i.s2p_tests))?,
        json("n2p_tests", |i| serde_json::to_string(&i.n2p_tests))?,
        json("fixed_tests", |i| serde_json::to_string(&i.fixed_tests))?,
        json("run_result", |i| serde_json::to_string(&i.run_result))?,
        json("test_patch_result", |i| serde_json::to_string(&i.test_patch_result))?,
        json("fix_patch_result", |i| serde_json::to_string(&i.fix_patch_result))?,
        nullable_json_column(path, "swe_forge", xs)?,
    ];
    DataFrame::new(xs.len(), columns).map_err(polars_err(path))
}

/// The `swe_forge` column: the block as JSON, null when the record has none.
fn nullable_json_column(path: &Path, name: &str, xs: &[Instance]) -> Result<Column, ExportError> {
    let values = xs
        .iter()
        .enumerate()
        .map(|(row, i)| {
            i.swe_forge.as_ref().map(serde_json::to_string).transpose().map_err(|source| ExportError::Json {
                path: path.to_owned(),
                row,
                column: name.to_owned(),
                source,
            })
        })
        .collect::<Result<Vec<Option<String>>, _>>()?;
    Ok(Column::new(name.into(), values))
}

/// Reads an instances table written by [`write_instances_parquet`] back into records.
///
/// Records are rebuilt from the scalar and JSON columns; the derived columns (`status`,
/// `rejection_reasons`, `FAIL_TO_PASS`, `PASS_TO_PASS`) are only checked for presence and type.
pub fn read_instances_parquet(path: impl AsRef<Path>) -> Result<Vec<Instance>, ExportError> {
    let path = path.as_ref();
    let t = Table::read(path, &SCHEMA)?;
    let owned = |v: Vec<&str>| v.into_iter().map(str::to_owned).collect::<Vec<_>>();
    let opt = |v: Vec<Option<&str>>| v.into_iter().map(|s| s.map(str::to_owned)).collect::<Vec<_>>();

    let mut instance_id = owned(t.texts("instance_id")?);
    let mut org = owned(t.texts("org")?);
    let mut repo = owned(t.texts("repo")?);
    let number = t.unsigned("number")?;
    let mut state = owned(t.texts("state")?);
    let mut title = owned(t.texts("title")?);
    let mut body = opt(t.nullable_texts("body")?);
    let mut base_label = owned(t.texts("base_label")?);
    let mut base_ref = owned(t.texts("base_ref")?);
    let mut base_sha = owned(t.texts("base_sha")?);
    let mut resolved_issues: Vec<Vec<ResolvedIssue>> = t.json("resolved_issues")?;
    let mut fix_patch = owned(t.texts("fix_patch")?);
    let mut test_patch = owned(t.texts("test_patch")?);
    let mut lang = opt(t.nullable_texts("lang")?);
    let mut hints = opt(t.nullable_texts("hints")?);
    let mut tag = opt(t.nullable_texts("tag")?);
    let mut number_interval = opt(t.nullable_texts("number_interval")?);
    let mut f2p: Vec<TestMap> = t.json("f2p_tests")?;
    let mut p2p: Vec<TestMap> = t.json("p2p_tests")?;
    let mut s2p: Vec<TestMap> = t.json("s2p_tests")?;
    let mut n2p: Vec<TestMap> = t.json("n2p_tests")?;
    let mut fixed: Vec<TestMap> = t.json("fixed_tests")?;
    let mut run_result: Vec<TestResult> = t.json("run_result")?;
    let mut test_patch_result: Vec<TestResult> = t.json("test_patch_result")?;
    let mut fix_patch_result: Vec<TestResult> = t.json("fix_patch_result")?;
    let mut swe_forge: Vec<Option<ForgeMeta>> = t.nullable_json("swe_forge")?;

    // Every column holds exactly `height` values (a DataFrame invariant), so indexing is in bounds.
    let mut out = Vec::with_capacity(t.height());
    for row in 0..t.height() {
        out.push(Instance {
            org: take(&mut org[row]),
            repo: take(&mut repo[row]),
            number: number[row],
            state: take(&mut state[row]),
            title: take(&mut title[row]),
            body: take(&mut body[row]),
            base: Base {
                label: take(&mut base_label[row]),
                ref_: take(&mut base_ref[row]),
                sha: take(&mut base_sha[row]),
            },
            resolved_issues: take(&mut resolved_issues[row]),
            fix_patch: take(&mut fix_patch[row]),
            test_patch: take(&mut test_patch[row]),
            fixed_tests: take(&mut fixed[row]),
            p2p_tests: take(&mut p2p[row]),
            f2p_tests: take(&mut f2p[row]),
            s2p_tests: take(&mut s2p[row]),
            n2p_tests: take(&mut n2p[row]),
            run_result: take(&mut run_result[row]),
            test_patch_result: take(&mut test_patch_result[row]),
            fix_patch_result: take(&mut fix_patch_result[row]),
            instance_id: take(&mut instance_id[row]),
            hints: take(&mut hints[row]),
            tag: take(&mut tag[row]),
            number_interval: take(&mut number_interval[row]),
            lang: take(&mut lang[row]),
            swe_forge: take(&mut swe_forge[row]),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_and_column_list_agree() {
        let names: Vec<&str> = SCHEMA.iter().map(|(n, _)| *n).collect();
        assert_eq!(names, INSTANCE_COLUMNS);
        let df = instances_frame(Path::new("x"), &[]).unwrap();
        let built: Vec<&str> = df.get_column_names().into_iter().map(|n| n.as_str()).collect();
        assert_eq!(built, INSTANCE_COLUMNS);
        for (name, kind) in SCHEMA {
            assert_eq!(df.column(name).unwrap().dtype(), &kind.dtype(), "{name}");
        }
    }
}
