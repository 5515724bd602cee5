//! The SWE-bench export: one row per instance with SWE-bench's fields (what its harness and
//! the datasets built on it read), plus the instance image swe-forge built. Not lossless: the
//! records stay the source of truth; this is a view for SWE-bench tooling.
//!
//! Two generations of SWE-bench's harness read these rows. Up to 4.x, `make_test_spec` builds the
//! evaluation script from its own table of repositories and versions; from 5.0 it takes the row's
//! own `image`, `eval_script`, `log_parser` and `eval_type`. The eval script runs the instance
//! image's contract (`schemas/instance-image.md`): the files of the test patch put back to the
//! base, the test patch written where `/swe-forge/run-tests` applies it, then that script between
//! SWE-bench's output markers.

use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};
use swe_forge_core::{Instance, PatchShape};

use crate::ExportError;
use crate::atomic::write_atomic;
use crate::table::{Producer, nullable_text_field, nullable_texts, text_field, texts, write_batch};

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

/// SWE-bench 5's log parser (a key of `swebench.harness.log_parsers.PARSER_REGISTRY`) that reads
/// the console output of each of our log parsers' formats, where it has one.
const LOG_PARSERS: [(&str, &str); 6] = [
    ("go-test", "parse_log_gotest"),
    ("cargo-test", "parse_log_cargo"),
    ("jest", "parse_log_jest"),
    ("vitest", "parse_log_vitest"),
    ("tap", "parse_log_tap"),
    ("gtest", "parse_log_googletest"),
];

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
    /// When the pull request was merged (`swe_forge.merged_at`); null when unknown.
    pub created_at: Option<String>,
    /// The first 12 hex digits of `environment_setup_commit`: instances sharing one
    /// repository environment share a version, as SWE-bench's do.
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
    /// SWE-bench 5's parser for the log's format (`parse_log_gotest` for `go-test`, ...); empty
    /// when SWE-bench has none for it or the record names no parser.
    pub log_parser: String,
    /// `pass_and_fail`.
    pub eval_type: String,
}

impl SweBenchRow {
    /// The SWE-bench row of `inst`.
    pub fn from_instance(inst: &Instance) -> SweBenchRow {
        let meta = inst.swe_forge.as_ref();
        let env_commit = meta
            .and_then(|m| m.provenance.as_ref())
            .map(|p| p.env_commit.as_str())
            .filter(|c| !c.is_empty())
            .unwrap_or(&inst.base.sha)
            .to_owned();
        let json_list = |keys: Vec<&String>| serde_json::to_string(&keys).expect("a list of strings serializes");
        SweBenchRow {
            repo: format!("{}/{}", inst.org, inst.repo),
            instance_id: inst.instance_id.clone(),
            base_commit: inst.base.sha.clone(),
            patch: inst.fix_patch.clone(),
            test_patch: inst.test_patch.clone(),
            problem_statement: problem_statement(inst),
            hints_text: inst.hints.clone().unwrap_or_default(),
            created_at: meta.and_then(|m| m.merged_at.as_ref()).map(|t| t.as_str().to_owned()),
            version: env_commit.chars().take(12).collect(),
            fail_to_pass: json_list(inst.fixed_tests.keys().collect()),
            pass_to_pass: json_list(inst.p2p_tests.keys().collect()),
            environment_setup_commit: env_commit,
            image: meta.and_then(|m| m.image.clone()),
            eval_script: if meta.is_some_and(|m| m.image.is_some()) {
                eval_script(&inst.test_patch)
            } else {
                String::new()
            },
            log_parser: meta
                .and_then(|m| m.parser.as_deref())
                .and_then(|p| LOG_PARSERS.iter().find(|(ours, _)| *ours == p))
                .map(|(_, theirs)| (*theirs).to_owned())
                .unwrap_or_default(),
            eval_type: EVAL_TYPE.to_owned(),
        }
    }
}

/// The evaluation script of an instance image for SWE-bench 5, run after the model's patch is
/// applied in `/testbed`: every path the test patch names put back to the base commit (the
/// image's only commit) or removed, the test patch written to `/swe-forge/test.patch` (a heredoc
/// whose delimiter the patch never contains), no fix patch, then `/swe-forge/run-tests` (which
/// applies the test patch and runs the tests) between SWE-bench's markers, last before the end
/// marker so that SWE-bench records its exit code.
pub fn eval_script(test_patch: &str) -> String {
    let quote = |s: &str| format!("'{}'", s.replace('\'', "'\\''"));
    let mut s = String::from(EVAL_HEADER);
    s.push_str(&format!("cd {WORKDIR}\n"));
    s.push_str(
        "swe_forge_restore() { if git cat-file -e \"HEAD:$1\" 2>/dev/null; then git checkout -q HEAD -- \"$1\"; else rm -rf -- \"$1\"; fi; }\n",
    );
    for path in PatchShape::of(test_patch).touched {
        s.push_str(&format!("swe_forge_restore {}\n", quote(&path)));
    }
    let mut delimiter = String::from("EOF_SWE_FORGE_TEST_PATCH");
    while test_patch.lines().any(|l| l == delimiter) {
        delimiter.push('_');
    }
    s.push_str(&format!("cat > {TEST_PATCH} <<'{delimiter}'\n{test_patch}"));
    if !test_patch.is_empty() && !test_patch.ends_with('\n') {
        s.push('\n');
    }
    s.push_str(&format!("{delimiter}\nrm -f {FIX_PATCH}\n"));
    s.push_str(&format!(": '{START_TEST_OUTPUT}'\n{RUN_TESTS}\n: '{END_TEST_OUTPUT}'\n"));
    s
}

/// Title and body of each resolved issue, else of the pull request.
fn problem_statement(inst: &Instance) -> String {
    let one = |title: &str, body: Option<&str>| format!("{title}\n{}\n", body.unwrap_or(""));
    if inst.resolved_issues.is_empty() {
        return one(&inst.title, inst.body.as_deref());
    }
    inst.resolved_issues.iter().map(|i| one(&i.title, i.body.as_deref())).collect()
}

/// Writes the SWE-bench rows of `instances` to `path` as JSONL, atomically.
pub fn write_swebench_jsonl(path: impl AsRef<Path>, instances: &[Instance]) -> Result<(), ExportError> {
    let path = path.as_ref();
    write_atomic(path, |w| {
        for (row, inst) in instances.iter().enumerate() {
            serde_json::to_writer(&mut *w, &SweBenchRow::from_instance(inst)).map_err(|source| ExportError::Json {
                path: path.to_owned(),
                row,
                column: "*".to_owned(),
                source,
            })?;
            w.write_all(b"\n").map_err(|source| ExportError::Io { path: path.to_owned(), source })?;
        }
        Ok(())
    })
}

/// Writes the SWE-bench rows of `instances` to `path` as Parquet (every column `string`;
/// `created_at` and `image` nullable), atomically, with the key-value metadata of the other
/// tables (`swe_forge.table` = `swebench`).
pub fn write_swebench_parquet(
    path: impl AsRef<Path>,
    instances: &[Instance],
    producer: &Producer,
) -> Result<(), ExportError> {
    let path = path.as_ref();
    let rows: Vec<SweBenchRow> = instances.iter().map(SweBenchRow::from_instance).collect();
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
    write_atomic(path, |w| write_batch(path, w, SWEBENCH_TABLE, producer, columns))
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
        inst.swe_forge = Some(meta);
        let row = SweBenchRow::from_instance(&inst);
        assert_eq!(row.problem_statement, "Fix pop\n\n");
        assert_eq!(row.image.as_deref(), Some("swe-forge/o_r:pr-7"));
        assert_eq!(row.created_at.as_deref(), Some("2024-01-02T03:04:05Z"));
        assert_eq!(row.environment_setup_commit, "fedcba9876543210fedcba9876543210fedcba98");
        assert_eq!(row.version, "fedcba987654");
        assert_eq!(row.eval_script, eval_script("T"));
        assert_eq!((row.log_parser.as_str(), row.eval_type.as_str()), ("", "pass_and_fail"));
        inst.swe_forge.as_mut().unwrap().parser = Some("go-test".into());
        assert_eq!(SweBenchRow::from_instance(&inst).log_parser, "parse_log_gotest");
        inst.swe_forge.as_mut().unwrap().parser = Some("go-test-json".into());
        assert_eq!(SweBenchRow::from_instance(&inst).log_parser, "", "SWE-bench reads no `go test -json`");
        assert_eq!(SweBenchRow::from_instance(&record()).eval_script, "", "no image, nothing to run");
    }

    #[test]
    fn the_eval_script_runs_the_image_contract_between_swe_bench_s_markers() {
        let patch = "diff --git a/it's_test.go b/it's_test.go\nnew file mode 100644\n--- /dev/null\n+++ b/it's_test.go\n\
            @@ -0,0 +1,2 @@\n+EOF_SWE_FORGE_TEST_PATCH\n+package p\n\
            diff --git a/old_test.go b/new_test.go\nrename from old_test.go\nrename to new_test.go\nEOF_SWE_FORGE_TEST_PATCH\n";
        let script = eval_script(patch);
        assert!(script.starts_with("#!/bin/bash\nset -uxo pipefail\ncd /testbed\n"), "{script}");
        for path in ["'it'\\''s_test.go'", "'old_test.go'", "'new_test.go'"] {
            assert!(script.contains(&format!("swe_forge_restore {path}\n")), "{path}: {script}");
        }
        // A line of the patch equal to the usual delimiter makes the delimiter longer.
        assert!(script.contains("cat > /swe-forge/test.patch <<'EOF_SWE_FORGE_TEST_PATCH_'\n"), "{script}");
        assert!(script.ends_with(
            "EOF_SWE_FORGE_TEST_PATCH_\nrm -f /swe-forge/fix.patch\n: '>>>>> Start Test Output'\n/swe-forge/run-tests\n: '>>>>> End Test Output'\n"
        ));

        // Run it (with the contract's paths moved into a temporary folder): the heredoc writes
        // the patch back byte for byte and the restore function accepts every path.
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().to_str().unwrap();
        let local = script.replace("/swe-forge/", &format!("{root}/")).replace("cd /testbed", &format!("cd {root}"));
        std::fs::write(format!("{root}/run-tests"), "#!/bin/sh\necho ran\n").unwrap();
        std::fs::set_permissions(format!("{root}/run-tests"), std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let out = std::process::Command::new("bash").arg("-c").arg(&local).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(std::fs::read_to_string(format!("{root}/test.patch")).unwrap(), patch);
        assert_eq!(String::from_utf8_lossy(&out.stdout), "ran\n");
    }
}
