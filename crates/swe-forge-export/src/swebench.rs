//! The SWE-bench export: one row per instance with SWE-bench's fields (what its harness and
//! the datasets built on it read), plus the instance image swe-forge built. Not lossless: the
//! records stay the source of truth; this is a view for SWE-bench tooling.
//!
//! Two generations of SWE-bench's harness read these rows. Up to 4.x, `make_test_spec` builds the
//! evaluation script from its own table of repositories and versions; from 5.0 it takes the row's
//! own `image`, `eval_script`, `log_parser` and `eval_type`. The eval script runs the instance
//! image's contract (`schemas/instance-image.md`): the files of the test patch put back to the
//! base, the test patch written where `/swe-forge/run-tests` applies it, then, between SWE-bench's
//! output markers, that script and a short perl script (`swebench_results.pl`) that prints the
//! run's own per-test results as `[PASSED] <id>` / `[FAILED] <id>` lines, which SWE-bench's
//! `parse_log_jest_json` reads, in the export's naming. Before all that, the model's changes (the
//! harness's `/tmp/patch.diff`, else the tree's diff against the base) go through the forgery
//! scan (`swe_forge_quality::scan_forgery`, as a perl script): flagged, nothing runs, no test is
//! reported passed, as `swe-forge evaluate` grades it `tampered`.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};
use swe_forge_core::{Framework, Instance, restored_test_files};
use swe_forge_quality::{forgery_exempt, forgery_scan_script};

use crate::ExportError;
use crate::table::{
    BATCH_BYTES, BATCH_ROWS, ParquetSink, Producer, nullable_text_field, nullable_texts, text_field, texts,
};

/// The `swe_forge.table` metadata value of the SWE-bench table.
pub const SWEBENCH_TABLE: &str = "swebench";

/// Column names of the SWE-bench export, in file order (JSONL keys in the same order).
pub const SWEBENCH_COLUMNS: [&str; 16] = [
    "repo",
    "instance_id",
    "base_commit",
    "patch",
    "test_patch",
    "problem_statement",
    "hints_text",
    "created_at",
    "version",
    "FAIL_TO_PASS",
    "PASS_TO_PASS",
    "environment_setup_commit",
    "image",
    "eval_script",
    "log_parser",
    "eval_type",
];

/// SWE-bench's markers around the test output its grading reads, and the eval script's header
/// (`swebench.harness.constants`; `parse_eval_script` strips the header lines).
const START_TEST_OUTPUT: &str = ">>>>> Start Test Output";
const END_TEST_OUTPUT: &str = ">>>>> End Test Output";
const EVAL_HEADER: &str = "#!/bin/bash\nset -uxo pipefail\n";

/// The instance image contract's paths (`schemas/instance-image.md`, version 1).
const WORKDIR: &str = "/testbed";
const RUN_TESTS: &str = "/swe-forge/run-tests";
const TEST_PATCH: &str = "/swe-forge/test.patch";
const FIX_PATCH: &str = "/swe-forge/fix.patch";
const RESULTS_DIR: &str = "/swe-forge/results";

/// Where the eval script keeps the run's log, the results script and the names table.
const RUN_LOG: &str = "/tmp/swe-forge-run.log";
const RESULTS_PL: &str = "/tmp/swe-forge-results.pl";
const NAMES: &str = "/tmp/swe-forge-names.tsv";
const FORGERY_PL: &str = "/tmp/swe-forge-forgery.pl";
const MODEL_DIFF: &str = "/tmp/swe-forge-model.diff";
/// Where SWE-bench's harness writes the model's patch in the container (`DOCKER_PATCH`).
const HARNESS_PATCH: &str = "/tmp/patch.diff";

/// SWE-bench 5's log parser (a key of `swebench.harness.log_parsers.PARSER_REGISTRY`) every row
/// whose format the eval script translates names: it reads `[PASSED] <id>` and `[FAILED] <id>`
/// lines, the id being the rest of the line, so ids with spaces, `::`, `#`, `>` and `/` come out
/// whole. The eval script prints those lines from the run's own log and result files
/// ([`RESULTS_SCRIPT`]).
const LOG_PARSER: &str = "parse_log_jest_json";

/// The formats (swe-forge parser names) [`RESULTS_SCRIPT`] reads: a row names [`LOG_PARSER`]
/// when it reads the record's `results_parser`, or its `parser` (what the script falls back to
/// when the run left no result files).
const TRANSLATED: [Framework; 10] = [
    Framework::GoTestJson,
    Framework::GoTestVerbose,
    Framework::CargoLibtest,
    Framework::Gtest,
    Framework::Automake,
    Framework::Vitest,
    Framework::VitestJson,
    Framework::JunitXml,
    Framework::JestJson,
    Framework::CtestJunit,
];

/// The perl script the eval script runs in the instance image after `/swe-forge/run-tests`
/// (perl is in every Debian image): the run's per-test results in swe-forge's ids, as
/// `[PASSED] <id>` / `[FAILED] <id>` lines.
pub const RESULTS_SCRIPT: &str = include_str!("swebench_results.pl");

/// SWE-bench's evaluation type: every FAIL_TO_PASS test must pass and every PASS_TO_PASS test
/// keep passing (`EvalType.PASS_AND_FAIL`).
const EVAL_TYPE: &str = "pass_and_fail";

/// One instance in SWE-bench's shape.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SweBenchRow {
    /// `owner/name`.
    pub repo: String,
    /// The record's `instance_id` (`owner__name-N`, as SWE-bench spells them).
    pub instance_id: String,
    /// The base commit (`base.sha`).
    pub base_commit: String,
    /// The gold patch: the record's `fix_patch`.
    pub patch: String,
    /// The record's `test_patch`.
    pub test_patch: String,
    /// Title and body of each resolved issue (`title\nbody\n`, one after another); the pull
    /// request's title and body when it resolves none.
    pub problem_statement: String,
    /// The record's `hints`, empty when it has none.
    pub hints_text: String,
    /// When the pull request was opened (`swe_forge.created_at`, as the record has it: RFC 3339,
    /// SWE-bench's `2023-05-25T19:21:06Z`); null when the record does not know (never the merge
    /// date in its place: a time cutoff on `created_at` must not see a pull request as younger
    /// than it is).
    pub created_at: Option<String>,
    /// The repository environment the instance runs in ([`version`]): the tag of
    /// `swe_forge.provenance.env_image` (`env-<12 hex>`), else the first 12 hex digits of
    /// `environment_setup_commit`.
    pub version: String,
    /// The keys of `fixed_tests`, as a JSON list in a string (SWE-bench's encoding).
    #[serde(rename = "FAIL_TO_PASS")]
    pub fail_to_pass: String,
    /// The keys of `p2p_tests`, as a JSON list in a string.
    #[serde(rename = "PASS_TO_PASS")]
    pub pass_to_pass: String,
    /// The commit the repository environment was built at (`swe_forge.provenance.env_commit`),
    /// else the base commit.
    pub environment_setup_commit: String,
    /// The instance image (`swe_forge.image`); null for records swe-forge did not build.
    pub image: Option<String>,
    /// The script SWE-bench 5 runs in the image after applying the model's patch in
    /// `/testbed` ([`eval_script`]); empty for records without an image.
    pub eval_script: String,
    /// `parse_log_jest_json`, the SWE-bench 5 parser of the lines the eval script prints, when
    /// the eval script reads the record's format; empty otherwise.
    pub log_parser: String,
    /// `pass_and_fail`.
    pub eval_type: String,
}

impl SweBenchRow {
    /// The SWE-bench row of `inst`, its test lists in the record's own ids.
    pub fn from_instance(inst: &Instance) -> SweBenchRow {
        SweBenchRow::from_instance_named(inst, None)
    }

    /// The SWE-bench row of `inst` whose test lists are in another naming (`--naming msb`):
    /// `names` maps each of swe-forge's canonical ids the run prints to the name the lists use.
    pub fn from_instance_named(inst: &Instance, names: Option<&BTreeMap<String, String>>) -> SweBenchRow {
        let meta = inst.swe_forge.as_ref();
        let env_commit = meta
            .and_then(|m| m.provenance.as_ref())
            .map(|p| p.env_commit.as_str())
            .filter(|c| !c.is_empty())
            .unwrap_or(&inst.base.sha)
            .to_owned();
        let json_list = |keys: Vec<&String>| serde_json::to_string(&keys).expect("a list of strings serializes");
        let (parser, results_parser) = (meta.and_then(|m| m.parser), meta.and_then(|m| m.results_parser));
        let translated = [results_parser, parser].into_iter().flatten().any(|p| TRANSLATED.contains(&p));
        let has_image = meta.is_some_and(|m| m.image.is_some());
        SweBenchRow {
            repo: format!("{}/{}", inst.org, inst.repo),
            instance_id: inst.instance_id.clone(),
            base_commit: inst.base.sha.clone(),
            patch: inst.fix_patch.clone(),
            test_patch: inst.test_patch.clone(),
            problem_statement: problem_statement(inst),
            hints_text: inst.hints.clone().unwrap_or_default(),
            created_at: meta.and_then(|m| m.created_at.as_ref()).map(|t| t.as_str().to_owned()),
            version: version(inst, &env_commit),
            fail_to_pass: json_list(inst.fixed_tests.keys().collect()),
            pass_to_pass: json_list(inst.p2p_tests.keys().collect()),
            environment_setup_commit: env_commit,
            image: meta.and_then(|m| m.image.clone()),
            eval_script: if has_image {
                eval_script(
                    &inst.test_patch,
                    &inst.fix_patch,
                    parser.map_or("", Framework::name),
                    results_parser.map_or("", Framework::name),
                    names,
                )
            } else {
                String::new()
            },
            log_parser: if has_image && translated { LOG_PARSER.to_owned() } else { String::new() },
            eval_type: EVAL_TYPE.to_owned(),
        }
    }
}

/// The row's `version`. In SWE-bench a version names what instances of a repository share to be
/// installed (4.x looks `MAP_REPO_VERSION_TO_SPECS[repo][version]` up for its install and test
/// commands; 5.x requires the key and hands it to the log parsers, of which only some
/// repositories' own read it, never `parse_log_jest_json`). What swe-forge's instances share is
/// their repository environment image (toolchain, the tree at the environment commit and its
/// setup: `provenance.env_image`, tagged `env-<hash of those>`), so the version is that tag: one
/// key per environment, which a SWE-bench 4.x user registers once. A record without an
/// environment image (not built by swe-forge, so without an image to run either) keeps the first
/// 12 hex digits of the environment commit.
fn version(inst: &Instance, env_commit: &str) -> String {
    let env_image = inst.swe_forge.as_ref().and_then(|m| m.provenance.as_ref()).map(|p| p.env_image.as_str());
    match env_image.and_then(env_tag) {
        Some(tag) => tag.to_owned(),
        None => env_commit.chars().take(12).collect(),
    }
}

/// The tag of an image name (`name:tag`, the name possibly with a registry `host:port/`).
fn env_tag(image: &str) -> Option<&str> {
    let last = image.rsplit('/').next()?;
    last.rsplit_once(':').map(|(_, tag)| tag).filter(|t| !t.is_empty())
}

/// The evaluation script of an instance image for SWE-bench 5, run after the model's patch is
/// applied in `/testbed`: every path the test patch names put back to the base commit (the
/// image's only commit) or removed, except source files with tests inside them
/// (`swe_forge_core::restored_test_files`, which reads `fix_patch` for that), the test patch written to `/swe-forge/test.patch` (heredocs
/// here have delimiters their text never contains), no fix patch; then, between SWE-bench's
/// output markers, `/swe-forge/run-tests` (which applies the test patch and runs the tests) with
/// its log kept in a file and printed with every line behind `| ` (so that no line of it reads
/// as a result), [`RESULTS_SCRIPT`] on that log and `/swe-forge/results` (`parser`,
/// `results_parser`; `names` renames the ids), and last the run's exit code, so that SWE-bench
/// records it.
pub fn eval_script(
    test_patch: &str,
    fix_patch: &str,
    parser: &str,
    results_parser: &str,
    names: Option<&BTreeMap<String, String>>,
) -> String {
    let quote = |s: &str| format!("'{}'", s.replace('\'', "'\\''"));
    let mut s = String::from(EVAL_HEADER);
    s.push_str(&format!("cd {WORKDIR}\n"));
    forgery_check(&mut s, fix_patch);
    s.push_str(
        "swe_forge_restore() { if git cat-file -e \"HEAD:$1\" 2>/dev/null; then git checkout -q HEAD -- \"$1\"; else rm -rf -- \"$1\"; fi; }\n",
    );
    for path in restored_test_files(test_patch, fix_patch) {
        s.push_str(&format!("swe_forge_restore {}\n", quote(&path)));
    }
    heredoc(&mut s, TEST_PATCH, "EOF_SWE_FORGE_TEST_PATCH", test_patch);
    s.push_str(&format!("rm -f {FIX_PATCH}\n"));
    heredoc(&mut s, RESULTS_PL, "EOF_SWE_FORGE_RESULTS", RESULTS_SCRIPT);
    let names_arg = match names {
        Some(names) => {
            heredoc(&mut s, NAMES, "EOF_SWE_FORGE_NAMES", &names_table(names));
            format!(" {NAMES}")
        }
        None => String::new(),
    };
    s.push_str(&format!(": '{START_TEST_OUTPUT}'\n"));
    s.push_str(&format!(
        "if [ -n \"$swe_forge_tampered\" ]; then echo 'swe-forge: tampered: no test run'; swe_forge_code=1; else\n\
         {RUN_TESTS} > {RUN_LOG} 2>&1\nswe_forge_code=$?\nsed 's/^/| /' {RUN_LOG}\n"
    ));
    s.push_str(&format!(
        "perl {RESULTS_PL} {RUN_LOG} {RESULTS_DIR} {} {}{names_arg}\nfi\n",
        quote(parser),
        quote(results_parser)
    ));
    s.push_str(&format!("(exit $swe_forge_code)\n: '{END_TEST_OUTPUT}'\n"));
    s
}

/// Appends the forgery scan of the model's changes: the harness's patch file when it is there,
/// else the diff of `/testbed` (untracked files included, through an index of its own) against
/// the base; findings are printed (each line behind `| `) and set `swe_forge_tampered`. The
/// rules the gold patch `fix_patch` meets are not applied.
fn forgery_check(s: &mut String, fix_patch: &str) {
    heredoc(s, FORGERY_PL, "EOF_SWE_FORGE_FORGERY", &forgery_scan_script());
    let exempt: String = forgery_exempt(fix_patch).iter().map(|r| format!(" {}", r.as_str())).collect();
    s.push_str(&format!(
        "swe_forge_tampered=\n\
         if [ -s {HARNESS_PATCH} ]; then cp {HARNESS_PATCH} {MODEL_DIFF}; else \
         GIT_INDEX_FILE=/tmp/swe-forge-scan.index git read-tree HEAD && GIT_INDEX_FILE=/tmp/swe-forge-scan.index git add -A . && \
         GIT_INDEX_FILE=/tmp/swe-forge-scan.index git diff --cached --no-color --no-ext-diff HEAD > {MODEL_DIFF}; rm -f /tmp/swe-forge-scan.index; fi\n\
         perl {FORGERY_PL} {MODEL_DIFF}{exempt} > /tmp/swe-forge-forgery.txt || swe_forge_tampered=1\n\
         sed 's/^/| /' /tmp/swe-forge-forgery.txt\n"
    ));
}

/// The names file the results script renames ids with: `<canonical id>\t<name>` lines (ids with
/// a tab or line break left out, such characters in names turned into spaces).
pub(crate) fn names_table(names: &BTreeMap<String, String>) -> String {
    names
        .iter()
        .filter(|(id, _)| !id.contains(['\t', '\n']))
        .map(|(id, name)| format!("{id}\t{}\n", name.replace(['\t', '\n'], " ")))
        .collect()
}

/// Appends a heredoc writing `text` to `path`, with a delimiter (`base`, lengthened by `_`) that
/// no line of `text` equals.
fn heredoc(s: &mut String, path: &str, base: &str, text: &str) {
    let mut delimiter = String::from(base);
    while text.lines().any(|l| l == delimiter) {
        delimiter.push('_');
    }
    s.push_str(&format!("cat > {path} <<'{delimiter}'\n{text}"));
    if !text.is_empty() && !text.ends_with('\n') {
        s.push('\n');
    }
    s.push_str(&format!("{delimiter}\n"));
}

/// Title and body of each resolved issue, else of the pull request.
pub(crate) fn problem_statement(inst: &Instance) -> String {
    let one = |title: &str, body: Option<&str>| format!("{title}\n{}\n", body.unwrap_or(""));
    if inst.resolved_issues.is_empty() {
        return one(&inst.title, inst.body.as_deref());
    }
    inst.resolved_issues.iter().map(|i| one(&i.title, i.body.as_deref())).collect()
}

/// Writes the SWE-bench rows of `instances` to `path` as JSONL, atomically.
pub fn write_swebench_jsonl(path: impl AsRef<Path>, instances: &[Instance]) -> Result<(), ExportError> {
    write_swebench_jsonl_named(path, instances, &[])
}

/// [`write_swebench_jsonl`] of instances whose test lists are in another naming: `names[i]`
/// maps canonical ids to the names of `instances[i]` (see [`SweBenchRow::from_instance_named`]);
/// instances past its end, or with `None`, keep canonical ids.
pub fn write_swebench_jsonl_named(
    path: impl AsRef<Path>,
    instances: &[Instance],
    names: &[Option<BTreeMap<String, String>>],
) -> Result<(), ExportError> {
    let mut w = SweBenchJsonlWriter::create(path.as_ref())?;
    for (row, inst) in instances.iter().enumerate() {
        w.write(inst, names.get(row).and_then(Option::as_ref))?;
    }
    w.finish()
}

/// The SWE-bench rows as JSONL, written one instance at a time; the file is the one
/// [`write_swebench_jsonl_named`] writes, put in place by [`SweBenchJsonlWriter::finish`].
pub struct SweBenchJsonlWriter {
    path: std::path::PathBuf,
    out: std::io::BufWriter<swe_forge_fs::Output>,
    row: usize,
}

impl SweBenchJsonlWriter {
    /// Prepares the output `path`.
    pub fn create(path: &Path) -> Result<SweBenchJsonlWriter, ExportError> {
        let out = std::io::BufWriter::new(swe_forge_fs::Output::create(path)?);
        Ok(SweBenchJsonlWriter { path: path.to_owned(), out, row: 0 })
    }

    /// Writes the row of `inst`, its test lists renamed by `names` when given.
    pub fn write(&mut self, inst: &Instance, names: Option<&BTreeMap<String, String>>) -> Result<(), ExportError> {
        let path = &self.path;
        serde_json::to_writer(&mut self.out, &SweBenchRow::from_instance_named(inst, names)).map_err(|source| {
            ExportError::Json { path: path.to_owned(), row: self.row, column: "*".to_owned(), source }
        })?;
        self.out.write_all(b"\n").map_err(|source| ExportError::Io { path: path.to_owned(), source })?;
        self.row += 1;
        Ok(())
    }

    /// Puts the file in place.
    pub fn finish(self) -> Result<(), ExportError> {
        let path = self.path;
        let out = self.out.into_inner().map_err(|e| ExportError::Io { path: path.clone(), source: e.into_error() })?;
        Ok(out.commit()?)
    }
}

/// Writes the SWE-bench rows of `instances` to `path` as Parquet (every column `string`;
/// `created_at` and `image` nullable), atomically, with the key-value metadata of the other
/// tables (`swe_forge.table` = `swebench`).
pub fn write_swebench_parquet(
    path: impl AsRef<Path>,
    instances: &[Instance],
    producer: &Producer,
) -> Result<(), ExportError> {
    write_swebench_parquet_named(path, instances, &[], producer)
}

/// [`write_swebench_parquet`] of instances whose test lists are in another naming (`names` as
/// in [`write_swebench_jsonl_named`]).
pub fn write_swebench_parquet_named(
    path: impl AsRef<Path>,
    instances: &[Instance],
    names: &[Option<BTreeMap<String, String>>],
    producer: &Producer,
) -> Result<(), ExportError> {
    let mut w = SweBenchParquetWriter::create(path.as_ref(), producer)?;
    for (i, inst) in instances.iter().enumerate() {
        w.write(inst, names.get(i).and_then(Option::as_ref))?;
    }
    w.finish()
}

/// The SWE-bench rows as Parquet, written one instance at a time in row groups of bounded
/// size; the file is the one [`write_swebench_parquet_named`] writes, put in place by
/// [`SweBenchParquetWriter::finish`].
pub struct SweBenchParquetWriter {
    sink: ParquetSink,
    rows: Vec<SweBenchRow>,
    bytes: usize,
}

impl SweBenchParquetWriter {
    /// Prepares the table at `path`.
    pub fn create(path: &Path, producer: &Producer) -> Result<SweBenchParquetWriter, ExportError> {
        Ok(SweBenchParquetWriter {
            sink: ParquetSink::create(path, SWEBENCH_TABLE, producer)?,
            rows: Vec::new(),
            bytes: 0,
        })
    }

    /// Adds the row of `inst`, its test lists renamed by `names` when given.
    pub fn write(&mut self, inst: &Instance, names: Option<&BTreeMap<String, String>>) -> Result<(), ExportError> {
        let row = SweBenchRow::from_instance_named(inst, names);
        self.bytes += row.patch.len()
            + row.test_patch.len()
            + row.problem_statement.len()
            + row.hints_text.len()
            + row.fail_to_pass.len()
            + row.pass_to_pass.len()
            + row.eval_script.len()
            + 512;
        self.rows.push(row);
        if self.rows.len() >= BATCH_ROWS || self.bytes >= BATCH_BYTES {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), ExportError> {
        let rows = std::mem::take(&mut self.rows);
        self.bytes = 0;
        let column = |name: &str, f: fn(&SweBenchRow) -> &str| (text_field(name), texts(rows.iter().map(f)));
        let nullable = |name: &str, f: fn(&SweBenchRow) -> Option<&str>| {
            (nullable_text_field(name), nullable_texts(rows.iter().map(f)))
        };
        let columns = vec![
            column("repo", |r| &r.repo),
            column("instance_id", |r| &r.instance_id),
            column("base_commit", |r| &r.base_commit),
            column("patch", |r| &r.patch),
            column("test_patch", |r| &r.test_patch),
            column("problem_statement", |r| &r.problem_statement),
            column("hints_text", |r| &r.hints_text),
            nullable("created_at", |r| r.created_at.as_deref()),
            column("version", |r| &r.version),
            column("FAIL_TO_PASS", |r| &r.fail_to_pass),
            column("PASS_TO_PASS", |r| &r.pass_to_pass),
            column("environment_setup_commit", |r| &r.environment_setup_commit),
            nullable("image", |r| r.image.as_deref()),
            column("eval_script", |r| &r.eval_script),
            column("log_parser", |r| &r.log_parser),
            column("eval_type", |r| &r.eval_type),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> Instance {
        serde_json::from_value(serde_json::json!({
            "org": "o", "repo": "r", "number": 7, "state": "closed", "title": "Fix pop", "body": null,
            "base": {"label": "o:main", "ref": "main", "sha": "0123456789abcdef0123456789abcdef01234567"},
            "resolved_issues": [{"number": 3, "title": "Pop panics", "body": "on empty"}],
            "fix_patch": "F", "test_patch": "T", "instance_id": "o__r-7",
            "fixed_tests": {"p::TestB": {"run": "NONE", "test": "FAIL", "fix": "PASS"}},
            "p2p_tests": {"p::TestA": {"run": "PASS", "test": "PASS", "fix": "PASS"}}
        }))
        .unwrap()
    }

    #[test]
    fn fields_follow_swe_bench() {
        let mut inst = record();
        let row = SweBenchRow::from_instance(&inst);
        assert_eq!(row.repo, "o/r");
        assert_eq!(row.patch, "F");
        assert_eq!(row.problem_statement, "Pop panics\non empty\n");
        assert_eq!(row.fail_to_pass, r#"["p::TestB"]"#);
        assert_eq!(row.pass_to_pass, r#"["p::TestA"]"#);
        assert_eq!(row.environment_setup_commit, inst.base.sha);
        assert_eq!(row.version, "0123456789ab");
        assert_eq!((row.created_at, row.image, row.hints_text.as_str()), (None, None, ""));
        let keys: Vec<String> = match serde_json::to_value(SweBenchRow::from_instance(&inst)).unwrap() {
            serde_json::Value::Object(m) => m.keys().cloned().collect(),
            _ => unreachable!(),
        };
        assert_eq!(keys, SWEBENCH_COLUMNS);

        inst.resolved_issues.clear();
        let mut meta = swe_forge_core::ForgeMeta::new(swe_forge_core::ValidationStatus::Accepted);
        meta.image = Some("swe-forge/o_r:pr-7".into());
        meta.merged_at = Some(swe_forge_core::Timestamp::parse("2024-01-02T03:04:05Z").unwrap());
        meta.provenance = Some(swe_forge_core::Provenance {
            env_commit: "fedcba9876543210fedcba9876543210fedcba98".into(),
            ..Default::default()
        });
        inst.swe_forge = Some(meta.clone());
        let row = SweBenchRow::from_instance(&inst);
        assert_eq!(row.created_at, None, "the merge date is not the creation date");
        assert_eq!(row.version, "fedcba987654", "no environment image: the environment commit");
        meta.created_at = Some(swe_forge_core::Timestamp::parse("2023-12-30T10:00:00Z").unwrap());
        meta.provenance.as_mut().unwrap().env_image = "swe-forge/o__r:env-3f2a1b0c9d8e".into();
        inst.swe_forge = Some(meta);
        let row = SweBenchRow::from_instance(&inst);
        assert_eq!(row.problem_statement, "Fix pop\n\n");
        assert_eq!(row.image.as_deref(), Some("swe-forge/o_r:pr-7"));
        assert_eq!(row.created_at.as_deref(), Some("2023-12-30T10:00:00Z"));
        assert_eq!(row.environment_setup_commit, "fedcba9876543210fedcba9876543210fedcba98");
        assert_eq!(row.version, "env-3f2a1b0c9d8e", "the environment image's tag");
        assert_eq!(env_tag("127.0.0.1:5000/swe-forge/o__r:env-1-rebuild"), Some("env-1-rebuild"));
        assert_eq!(env_tag("127.0.0.1:5000/swe-forge/o__r"), None, "a registry port is no tag");
        assert_eq!(env_tag(""), None);
        assert_eq!(row.eval_script, eval_script("T", "", "", "", None));
        assert_eq!((row.log_parser.as_str(), row.eval_type.as_str()), ("", "pass_and_fail"));
        inst.swe_forge.as_mut().unwrap().parser = Some(Framework::GoTestJson);
        assert_eq!(SweBenchRow::from_instance(&inst).log_parser, "parse_log_jest_json");
        inst.swe_forge.as_mut().unwrap().parser = Some(Framework::Mocha);
        assert_eq!(SweBenchRow::from_instance(&inst).log_parser, "", "a format the eval script does not translate");
        inst.swe_forge.as_mut().unwrap().results_parser = Some(Framework::JunitXml);
        assert_eq!(SweBenchRow::from_instance(&inst).log_parser, "parse_log_jest_json", "the result files are read");
        assert_eq!(SweBenchRow::from_instance(&record()).eval_script, "", "no image, nothing to run");
    }

    #[test]
    fn the_eval_script_runs_the_image_contract_between_swe_bench_s_markers() {
        let patch = "diff --git a/it's_test.go b/it's_test.go\nnew file mode 100644\n--- /dev/null\n+++ b/it's_test.go\n\
            @@ -0,0 +1,2 @@\n+EOF_SWE_FORGE_TEST_PATCH\n+package p\n\
            diff --git a/old_test.go b/new_test.go\nrename from old_test.go\nrename to new_test.go\nEOF_SWE_FORGE_TEST_PATCH\n";
        let script = eval_script(patch, "", "go-test-json", "", None);
        assert!(
            script.starts_with("#!/bin/bash\nset -uxo pipefail\ncd /testbed\ncat > /tmp/swe-forge-forgery.pl"),
            "{script}"
        );
        for path in ["'it'\\''s_test.go'", "'old_test.go'", "'new_test.go'"] {
            assert!(script.contains(&format!("swe_forge_restore {path}\n")), "{path}: {script}");
        }
        // A line of the patch equal to the usual delimiter makes the delimiter longer.
        assert!(script.contains("cat > /swe-forge/test.patch <<'EOF_SWE_FORGE_TEST_PATCH_'\n"), "{script}");
        assert!(script.contains("EOF_SWE_FORGE_TEST_PATCH_\nrm -f /swe-forge/fix.patch\n"), "{script}");
        assert!(
            script.ends_with(
                ": '>>>>> Start Test Output'\n\
             if [ -n \"$swe_forge_tampered\" ]; then echo 'swe-forge: tampered: no test run'; swe_forge_code=1; else\n\
             /swe-forge/run-tests > /tmp/swe-forge-run.log 2>&1\nswe_forge_code=$?\n\
             sed 's/^/| /' /tmp/swe-forge-run.log\n\
             perl /tmp/swe-forge-results.pl /tmp/swe-forge-run.log /swe-forge/results 'go-test-json' ''\nfi\n\
             (exit $swe_forge_code)\n: '>>>>> End Test Output'\n"
            ),
            "{script}"
        );

        // Run it (with the contract's paths moved into a temporary folder): the heredoc writes
        // the patch back byte for byte and the restore function accepts every path.
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().to_str().unwrap();
        let out = run_locally(&script, root, "{\"Action\":\"fail\",\"Package\":\"p\",\"Test\":\"TestA\"}", &[]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(std::fs::read_to_string(format!("{root}/test.patch")).unwrap(), patch);
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "| ran\n| {\"Action\":\"fail\",\"Package\":\"p\",\"Test\":\"TestA\"}\n[FAILED] p::TestA\n"
        );
    }

    /// Runs `script` with the contract's paths moved under `root` (the repository in
    /// `root/testbed`, one commit, then `files` written into it as the model's changes) and a
    /// `run-tests` that prints `line` as go test -json's.
    fn run_locally(script: &str, root: &str, line: &str, files: &[(&str, &str)]) -> std::process::Output {
        let repo = format!("{root}/testbed");
        std::fs::create_dir_all(&repo).unwrap();
        std::fs::write(format!("{repo}/p.go"), "package p\n").unwrap();
        let git = |args: &[&str]| {
            let ok = std::process::Command::new("git")
                .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"])
                .args(args)
                .current_dir(&repo)
                .output()
                .unwrap();
            assert!(ok.status.success(), "{}", String::from_utf8_lossy(&ok.stderr));
        };
        git(&["init", "-q"]);
        git(&["add", "-A"]);
        git(&["commit", "-q", "-m", "base"]);
        for (path, text) in files {
            std::fs::write(format!("{repo}/{path}"), text).unwrap();
        }
        let local = script
            .replace("/swe-forge/", &format!("{root}/"))
            .replace("/tmp/swe-forge-", &format!("{root}/"))
            .replace(HARNESS_PATCH, &format!("{root}/harness.diff"))
            .replace("cd /testbed", &format!("cd {repo}"));
        std::fs::write(format!("{root}/run-tests"), format!("#!/bin/sh\necho ran\necho '{line}'\nexit 3\n")).unwrap();
        std::fs::set_permissions(format!("{root}/run-tests"), std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        std::process::Command::new("bash").arg("-c").arg(&local).output().unwrap()
    }

    #[test]
    fn a_model_change_that_forges_results_runs_nothing_and_passes_nothing() {
        // The forgery prints the FAIL_TO_PASS test's pass (here, run-tests stands for the run it
        // fooled): without the scan, the harness would read `[PASSED] p::TestA`.
        let pass = "{\"Action\":\"pass\",\"Package\":\"p\",\"Test\":\"TestA\"}";
        let forge = "package p\n\nimport (\n\t\"fmt\"\n\t\"os\"\n)\n\nfunc init() {\n\tos.Args = append(os.Args, \"-test.skip=^TestA$\")\n\tfmt.Print(\"\\x16--- PASS: TestA (0.00s)\\n\")\n}\n";
        let script = eval_script("", "", "go-test-json", "", None);
        let tmp = tempfile::tempdir().unwrap();
        let out = run_locally(&script, tmp.path().to_str().unwrap(), pass, &[("zz_forge.go", forge)]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(!stdout.contains("[PASSED]") && !stdout.contains("| ran"), "{stdout}");
        assert!(stdout.starts_with("| swe-forge: tampered: zz_forge.go:9: runner-flag: "), "{stdout}");
        assert!(stdout.ends_with("swe-forge: tampered: no test run\n"), "{stdout}");
        // The harness's patch file, when there is one, is what is read.
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().to_str().unwrap();
        let diff = "diff --git a/x.go b/x.go\n--- a/x.go\n+++ b/x.go\n@@ -1 +1,2 @@\n package p\n+var f = \"/proc/self/fd/1\"\n";
        std::fs::write(format!("{root}/harness.diff"), diff).unwrap();
        let stdout = String::from_utf8_lossy(&run_locally(&script, root, pass, &[]).stdout).into_owned();
        assert!(stdout.starts_with("| swe-forge: tampered: x.go:2: proc-fd: "), "{stdout}");
        // An ordinary change runs; a rule the gold patch meets is not applied.
        let tmp = tempfile::tempdir().unwrap();
        let cli = "package p\n\nfunc Args() []string { return nil }\n";
        let stdout = String::from_utf8_lossy(
            &run_locally(&script, tmp.path().to_str().unwrap(), pass, &[("cli.go", cli)]).stdout,
        )
        .into_owned();
        assert_eq!(stdout, format!("| ran\n| {pass}\n[PASSED] p::TestA\n"));
        let gold = "diff --git a/r.go b/r.go\n--- a/r.go\n+++ b/r.go\n@@ -1 +1,2 @@\n package p\n+const fds = \"/proc/self/fd\"\n";
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().to_str().unwrap();
        std::fs::write(format!("{root}/harness.diff"), diff).unwrap();
        let stdout = String::from_utf8_lossy(
            &run_locally(&eval_script("", gold, "go-test-json", "", None), root, pass, &[]).stdout,
        )
        .into_owned();
        assert!(stdout.ends_with("[PASSED] p::TestA\n"), "{stdout}");
    }

    /// Runs the results script on `log` (and an empty results folder) as the eval script does.
    fn results_of(log: &str, parser: &str, results_parser: &str, names: Option<&str>) -> String {
        let tmp = tempfile::tempdir().unwrap();
        let (script, log_path) = (tmp.path().join("r.pl"), tmp.path().join("run.log"));
        std::fs::write(&script, RESULTS_SCRIPT).unwrap();
        std::fs::write(&log_path, log).unwrap();
        let mut cmd = std::process::Command::new("perl");
        cmd.arg(&script).arg(&log_path).arg(tmp.path().join("results")).arg(parser).arg(results_parser);
        if let Some(names) = names {
            std::fs::write(tmp.path().join("names.tsv"), names).unwrap();
            cmd.arg(tmp.path().join("names.tsv"));
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    }

    #[test]
    fn the_results_script_prints_the_run_s_own_results_in_swe_forge_s_ids() {
        let cargo = "     Running unittests src/lib.rs (target/debug/deps/ringq-c63d06baa944eb56)\n\
            test tests::a ... ok\ntest tests::b - should panic ... FAILED\n\
            \x20    Running tests/capacity.rs (target/debug/deps/capacity-9107e59b94476bc5)\ntest c ... ignored\n\
            \x20  Doc-tests ringq\ntest src/lib.rs - RingQueue<T>::new (line 15) ... ok\n\
            test src/lib.rs - RingQueue<T>::new (line 9) ... ok\ntest src/lib.rs - (line 2) - compile fail ... FAILED\n";
        // Doctests without their line, numbered from the second of an item on, as swe-forge names them.
        assert_eq!(
            results_of(cargo, "cargo-test", "", None),
            "[FAILED] ringq::doc::src/lib.rs - - compile fail\n[PASSED] ringq::doc::src/lib.rs - RingQueue<T>::new\n\
             [PASSED] ringq::doc::src/lib.rs - RingQueue<T>::new (doctest 2)\n[PASSED] ringq::tests::a\n[FAILED] ringq::tests::b\n"
        );
        let gtest = "[ RUN      ] M.A\n[       OK ] M.A (0 ms)\n[  FAILED  ] M.B (1 ms)\n[  FAILED  ] M.B\n";
        assert_eq!(results_of(gtest, "gtest", "", None), "[PASSED] M.A\n[FAILED] M.B\n");
        assert_eq!(
            results_of("PASS: tests/a\nXFAIL: tests/b\nERROR: tests/c\n", "automake", "", None),
            "[PASSED] tests/a\n[PASSED] tests/b\n[FAILED] tests/c\n"
        );
        let vitest = " ✓ test/q.test.ts > Q > peek > returns it 2ms\n × test/q.test.ts > Q > pop\n";
        assert_eq!(
            results_of(vitest, "vitest", "", None),
            "[PASSED] test/q.test.ts > Q > peek > returns it\n[FAILED] test/q.test.ts > Q > pop\n"
        );
        // Another naming: ids renamed, one name failing when any of its ids failed, unnamed ids left out.
        let go = "{\"Action\":\"pass\",\"Package\":\"p\",\"Test\":\"TestA/x\"}\n\
            {\"Action\":\"fail\",\"Package\":\"p\",\"Test\":\"TestA/y\"}\n\
            {\"Action\":\"pass\",\"Package\":\"p\",\"Test\":\"TestB \\u003c1\"}\n\
            {\"Action\":\"pass\",\"Package\":\"p\",\"Test\":\"TestC\"}\n";
        assert_eq!(
            results_of(go, "go-test-json", "", None),
            "[PASSED] p::TestA/x\n[FAILED] p::TestA/y\n[PASSED] p::TestB <1\n[PASSED] p::TestC\n"
        );
        assert_eq!(
            results_of(go, "go-test-json", "", Some("p::TestA/x\tTestA\np::TestA/y\tTestA\np::TestB <1\tTestB <1\n")),
            "[FAILED] TestA\n[PASSED] TestB <1\n"
        );
        assert_eq!(results_of(go, "mocha", "", None), "", "a format it does not know prints nothing");
        let verbose = "=== RUN   TestA\n--- PASS: TestA (0.00s)\n    --- FAIL: TestA/x_y (0.01s)\nFAIL\n\
            FAIL\tgithub.com/o/p\t0.004s\n--- PASS: TestB (0.00s)\nok  \tgithub.com/o/q\t0.002s\n--- SKIP: TestC (0.00s)\n";
        assert_eq!(
            results_of(verbose, "go-test", "", None),
            "[PASSED] github.com/o/p::TestA\n[FAILED] github.com/o/p::TestA/x_y\n[PASSED] github.com/o/q::TestB\n",
            "skipped tests print nothing"
        );
    }
}
