//! The Harbor export: one task folder per instance, in the layout Harbor (`harbor` on PyPI) and
//! the frameworks built on its task folders load (`schemas/harbor.md`):
//!
//! ```text
//! <dir>/swe-forge-harbor.json        what swe-forge wrote (the marker that lets a later export replace it)
//! <dir>/<instance_id>/instruction.md  the issue (title and body of each resolved issue)
//! <dir>/<instance_id>/task.toml       name, timeouts, no network, the verifier's collection, [metadata.swe_forge]
//! <dir>/<instance_id>/environment/Dockerfile   FROM the instance image, pinned by digest
//! <dir>/<instance_id>/tests/          test.sh and what it reads (test patch, lists, results script)
//! <dir>/<instance_id>/solution/       solve.sh and the gold patch
//! ```
//!
//! The agent works in `/testbed` of a container of the instance image. Grading does not trust that
//! container: the task runs its verifier in a separate environment (a fresh container of the same
//! image), and the only thing carried over is the diff of `/testbed` against the base commit, which
//! a `[[verifier.collect]]` command writes once the agent is done. `tests/test.sh` applies that
//! diff, puts every file the test patch names back to the base, then runs the image's own contract
//! (`/swe-forge/run-tests` with the test patch, `schemas/instance-image.md`) and grades the run's
//! per-test results: reward 1 when every FAIL_TO_PASS and PASS_TO_PASS test passed, else 0. A
//! diff that `swe_forge_quality::scan_forgery` flags (`tests/forgery.pl`, its rules) gets 0
//! without a run, as `swe-forge evaluate` grades it `tampered`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;
use swe_forge_core::{ForgeMeta, Framework, Instance, restored_test_files};
use swe_forge_quality::{forgery_exempt, forgery_scan_script};

use crate::ExportError;
use crate::error::NotATask;
use crate::swebench::{RESULTS_SCRIPT, names_table, problem_statement};
use crate::table::Producer;

/// The file naming the export in its folder; its presence lets a later export replace the folder.
pub const HARBOR_MANIFEST: &str = "swe-forge-harbor.json";

/// The version of `task.toml`'s schema the export writes (Harbor 0.26's `TaskConfig`).
const TASK_SCHEMA_VERSION: &str = "1.4";

/// Where the collect command writes the agent's diff, in the agent's container; Harbor puts the
/// artifact back at the same path in the verifier's container.
const MODEL_PATCH: &str = "/tmp/swe-forge-model.patch";

/// The grading script's reader of the per-test results and the lists (perl, which every Debian
/// image has, as the results script).
const GRADE_SCRIPT: &str = include_str!("harbor_grade.pl");

/// What a Harbor export wrote: the manifest of its folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HarborManifest {
    /// `harbor`.
    pub format: String,
    /// The swe-forge version that wrote it.
    pub swe_forge_version: String,
    /// The git commit of that swe-forge, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub swe_forge_git_commit: Option<String>,
    /// The task folders, by instance id: the task's Harbor name.
    pub tasks: BTreeMap<String, String>,
}

/// One instance's Harbor task folder, as files (path relative to the folder -> text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HarborTask {
    /// The Harbor name (`[task] name`, `org/name`).
    pub name: String,
    /// Relative path -> contents; scripts are the files ending in `.sh`.
    pub files: BTreeMap<String, String>,
}

#[derive(Serialize)]
struct TaskToml<'a> {
    schema_version: &'a str,
    task: TaskSection<'a>,
    metadata: Metadata<'a>,
    verifier: VerifierSection,
    agent: AgentSection,
    environment: EnvironmentSection,
    artifacts: Vec<&'a str>,
}

#[derive(Serialize)]
struct TaskSection<'a> {
    name: &'a str,
    description: &'a str,
    keywords: Vec<String>,
}

#[derive(Serialize)]
struct Metadata<'a> {
    swe_forge: ForgeProvenance<'a>,
}

/// The provenance of a task, `[metadata.swe_forge]`.
#[derive(Serialize)]
struct ForgeProvenance<'a> {
    version: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    git_commit: Option<&'a str>,
    instance_id: &'a str,
    repo: String,
    pull_number: u64,
    base_commit: &'a str,
    image: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    image_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    registry_image: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    language: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    difficulty: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    recipe: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    merged_at: Option<&'a str>,
    parser: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    results_parser: &'a str,
    fail_to_pass: usize,
    pass_to_pass: usize,
}

#[derive(Serialize)]
struct VerifierSection {
    timeout_sec: f64,
    environment_mode: &'static str,
    network_mode: &'static str,
    collect: Vec<Collect>,
}

#[derive(Serialize)]
struct Collect {
    command: String,
    service: &'static str,
    timeout_sec: f64,
}

#[derive(Serialize)]
struct AgentSection {
    timeout_sec: f64,
}

#[derive(Serialize)]
struct EnvironmentSection {
    build_timeout_sec: f64,
    network_mode: &'static str,
    workdir: &'static str,
}

impl HarborTask {
    /// The task folder of `inst`; `names` renames the run's canonical ids to the names of the
    /// record's lists (`--naming msb`), as in the SWE-bench export.
    pub fn from_instance(
        inst: &Instance,
        names: Option<&BTreeMap<String, String>>,
        producer: &Producer,
    ) -> Result<HarborTask, NotATask> {
        let meta = inst.swe_forge.as_ref().ok_or(NotATask::NotValidated)?;
        let image = meta.image.as_deref().ok_or(NotATask::NoImage)?;
        let from = match (&meta.registry_image, &meta.image_id) {
            (Some(pinned), _) => pinned.clone(),
            (None, Some(id)) if id.starts_with("sha256:") => id.clone(),
            _ => return Err(NotATask::Unpinned),
        };
        if !inst.instance_id.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
            || !inst.instance_id.starts_with(|c: char| c.is_ascii_alphanumeric())
        {
            return Err(NotATask::IdNotPortable);
        }
        let list = |keys: Vec<&String>| -> Result<String, NotATask> {
            let mut s = String::new();
            for k in keys {
                if k.contains(['\n', '\r']) {
                    return Err(NotATask::LineBreak(k.clone()));
                }
                s.push_str(k);
                s.push('\n');
            }
            Ok(s)
        };
        let fail_to_pass = list(inst.fixed_tests.keys().collect())?;
        let pass_to_pass = list(inst.p2p_tests.keys().collect())?;
        let parser = meta.parser.map_or("", Framework::name);
        let results_parser = meta.results_parser.map_or("", Framework::name);
        let name = format!("{}/{}", inst.org, inst.instance_id);
        let toml = task_toml(inst, meta, &name, image, producer);
        let task_toml = toml::to_string(&toml)?;
        let mut files = BTreeMap::new();
        files.insert("instruction.md".to_owned(), instruction(inst));
        files.insert("task.toml".to_owned(), task_toml);
        files.insert("environment/Dockerfile".to_owned(), dockerfile(&inst.instance_id, image, &from));
        let names_arg = match names {
            Some(names) => {
                files.insert("tests/names.tsv".to_owned(), names_table(names));
                " /tests/names.tsv"
            }
            None => "",
        };
        files.insert("tests/test.sh".to_owned(), test_script(inst, parser, results_parser, names_arg));
        files.insert("tests/test.patch".to_owned(), inst.test_patch.clone());
        files.insert("tests/fail_to_pass.txt".to_owned(), fail_to_pass);
        files.insert("tests/pass_to_pass.txt".to_owned(), pass_to_pass);
        files.insert("tests/results.pl".to_owned(), RESULTS_SCRIPT.to_owned());
        files.insert("tests/grade.pl".to_owned(), GRADE_SCRIPT.to_owned());
        files.insert("tests/forgery.pl".to_owned(), forgery_scan_script());
        files.insert("solution/fix.patch".to_owned(), inst.fix_patch.clone());
        files.insert("solution/solve.sh".to_owned(), SOLVE_SCRIPT.to_owned());
        Ok(HarborTask { name, files })
    }
}

/// The task.toml of a validated instance named `name` whose image is `image`.
fn task_toml<'a>(
    inst: &'a Instance,
    meta: &'a ForgeMeta,
    name: &'a str,
    image: &'a str,
    producer: &'a Producer,
) -> TaskToml<'a> {
    let longest_ms = meta.runs.iter().map(|r| r.duration_ms).max().unwrap_or(0);
    // Three times the slowest validation run, at least ten minutes: the verifier builds
    // nothing, it runs the tests once.
    let verifier_timeout = (3.0 * longest_ms as f64 / 1000.0).max(600.0).round();
    let keywords: Vec<String> = [
        Some("swe-forge".to_owned()),
        inst.lang.clone(),
        meta.difficulty.as_ref().map(|d| d.label.as_str().to_owned()),
    ]
    .into_iter()
    .flatten()
    .collect();
    TaskToml {
        schema_version: TASK_SCHEMA_VERSION,
        task: TaskSection { name, description: &inst.title, keywords },
        metadata: Metadata {
            swe_forge: ForgeProvenance {
                version: &producer.version,
                git_commit: producer.git_commit.as_deref(),
                instance_id: &inst.instance_id,
                repo: format!("{}/{}", inst.org, inst.repo),
                pull_number: inst.number,
                base_commit: &inst.base.sha,
                image,
                image_id: meta.image_id.as_deref(),
                registry_image: meta.registry_image.as_deref(),
                language: inst.lang.as_deref(),
                difficulty: meta.difficulty.as_ref().map(|d| d.label.as_str()),
                recipe: meta.provenance.as_ref().map(|p| p.recipe.as_str()).filter(|r| !r.is_empty()),
                merged_at: meta.merged_at.as_ref().map(|t| t.as_str()),
                parser: meta.parser.map_or("", Framework::name),
                results_parser: meta.results_parser.map_or("", Framework::name),
                fail_to_pass: inst.fixed_tests.len(),
                pass_to_pass: inst.p2p_tests.len(),
            },
        },
        verifier: VerifierSection {
            timeout_sec: verifier_timeout,
            environment_mode: "separate",
            network_mode: "no-network",
            collect: vec![Collect { command: collect_command(), service: "main", timeout_sec: 300.0 }],
        },
        agent: AgentSection { timeout_sec: 3600.0 },
        environment: EnvironmentSection { build_timeout_sec: 600.0, network_mode: "no-network", workdir: "/testbed" },
        artifacts: vec![MODEL_PATCH],
    }
}

/// The environment's Dockerfile: the instance image `image` of `instance_id`, pinned as `from`.
fn dockerfile(instance_id: &str, image: &str, from: &str) -> String {
    format!(
        "# {instance_id} (swe-forge): the instance image {image}, pinned by digest.\n\
         # Without a registry reference the pin is the image's content id, which the classic\n\
         # builder (DOCKER_BUILDKIT=0) resolves among local images; `swe-forge images push` then\n\
         # `export` again pins the registry digest instead.\n\
         FROM {from}\nWORKDIR /testbed\n\
         # What the image holds untracked stays out of the agent's diff (task.toml's collect).\n\
         RUN git -c safe.directory='*' ls-files -z --others --exclude-standard --directory > {UNTRACKED}\n"
    )
}

/// The agent's changes to `/testbed`, untracked files included and ignored ones not (as `git
/// diff` of a clone would show them), as one binary-safe patch against the base commit, the
/// image's only commit.
/// Files the image itself holds untracked (build outputs of the setup that no `.gitignore`
/// covers) are in both containers already: they, and anything under an untracked folder, stay out
/// of the diff ([`UNTRACKED`], listed when the environment is built).
fn collect_command() -> String {
    format!(
        "cd /testbed && git -c safe.directory='*' add -A && \
         {{ [ ! -s {UNTRACKED} ] || GIT_LITERAL_PATHSPECS=1 git -c safe.directory='*' rm -r -q --cached --ignore-unmatch --pathspec-from-file={UNTRACKED} --pathspec-file-nul; }} && \
         git -c safe.directory='*' diff --cached --binary HEAD > {MODEL_PATCH}"
    )
}

/// The untracked files and folders of `/testbed` in the instance image (NUL-separated), written
/// by the environment's Dockerfile.
const UNTRACKED: &str = "/swe-forge/harbor-untracked";

/// The oracle: the gold patch applied in `/testbed`.
const SOLVE_SCRIPT: &str = "#!/bin/bash\n# The gold patch (the pull request's fix), applied where the agent works.\nset -euo pipefail\ncd /testbed\ngit -c safe.directory='*' apply --whitespace=nowarn /solution/fix.patch\n";

/// The instruction: the issue the pull request resolved, and where the code is.
fn instruction(inst: &Instance) -> String {
    format!(
        "{}\n---\n\nThe repository is checked out in `/testbed`, at the commit this issue was reported against. \
         Change its code so that the issue above is resolved. Tests will be run on your changes; \
         changes to the tests that check the issue are discarded.\n",
        problem_statement(inst).trim_end()
    )
}

/// `tests/test.sh`, run in the verifier's fresh container of the instance image.
fn test_script(inst: &Instance, parser: &str, results_parser: &str, names_arg: &str) -> String {
    let quote = |s: &str| format!("'{}'", s.replace('\'', "'\\''"));
    let mut s = format!(
        "#!/bin/bash\n\
         # Grades {id} (swe-forge, schemas/harbor.md): the agent's diff applied to a fresh /testbed,\n\
         # the test patch's files put back to the base, then the image's /swe-forge/run-tests with the\n\
         # test patch; reward 1 when every FAIL_TO_PASS and PASS_TO_PASS test passed, else 0.\n\
         set -uo pipefail\n\
         out=/logs/verifier\n\
         mkdir -p \"$out\"\n\
         echo 0 > \"$out/reward.txt\"\n\
         cd /testbed || exit 1\n\
         git() {{ command git -c safe.directory='*' \"$@\"; }}\n\
         if [ -s {MODEL_PATCH} ]; then\n  \
           if ! perl /tests/forgery.pl {MODEL_PATCH}{exempt} > \"$out/forgery.txt\"; then\n    \
             {{ echo 'swe-forge: tampered: the agent'\\''s changes write test results or steer the test runner; nothing is run'; cat \"$out/forgery.txt\"; }} | tee \"$out/grading.txt\"; exit 0\n  \
           fi\n  \
           git apply --whitespace=nowarn --binary {MODEL_PATCH} || {{ echo 'swe-forge: the agent'\\''s changes do not apply to the base' | tee \"$out/grading.txt\"; exit 0; }}\n\
         fi\n\
         swe_forge_restore() {{ if git cat-file -e \"HEAD:$1\" 2>/dev/null; then git checkout -q HEAD -- \"$1\"; else rm -rf -- \"$1\"; fi; }}\n",
        id = inst.instance_id,
        exempt = forgery_exempt(&inst.fix_patch).iter().map(|r| format!(" {}", r.as_str())).collect::<String>(),
    );
    for path in restored_test_files(&inst.test_patch, &inst.fix_patch) {
        s.push_str(&format!("swe_forge_restore {}\n", quote(&path)));
    }
    s.push_str(&format!(
        "cp /tests/test.patch /swe-forge/test.patch\n\
         rm -f /swe-forge/fix.patch\n\
         rm -rf /swe-forge/results\n\
         /swe-forge/run-tests > \"$out/run.log\" 2>&1\n\
         echo \"swe-forge: /swe-forge/run-tests exited with $?\"\n\
         perl /tests/results.pl \"$out/run.log\" /swe-forge/results {} {}{names_arg} > \"$out/results.txt\"\n\
         perl /tests/grade.pl \"$out/results.txt\" /tests/fail_to_pass.txt /tests/pass_to_pass.txt \"$out/reward.txt\" | tee \"$out/grading.txt\"\n",
        quote(parser),
        quote(results_parser)
    ));
    s
}

/// Writes one task folder per instance into `dir`: [`HarborWriter`] given each in turn.
pub fn write_harbor_dir(
    dir: &Path,
    instances: &[Instance],
    names: &[Option<BTreeMap<String, String>>],
    producer: &Producer,
) -> Result<(), ExportError> {
    let mut w = HarborWriter::create(dir, producer)?;
    for (row, inst) in instances.iter().enumerate() {
        w.write(inst, names.get(row).and_then(Option::as_ref))?;
    }
    w.finish()
}

/// Task folders written one instance at a time into a new folder next to `dir`, renamed into
/// place by [`HarborWriter::finish`], replacing a folder an earlier Harbor export wrote (its
/// [`HARBOR_MANIFEST`]); any other existing folder must be empty. Dropped before (an error), it
/// removes what it wrote and leaves `dir` as it was. Only the ids and task names are kept.
pub struct HarborWriter {
    dir: PathBuf,
    parent: PathBuf,
    base: String,
    /// Whether `dir` holds an earlier export to replace.
    replace: bool,
    staging: tempfile::TempDir,
    /// Removes the staging folder on SIGINT or SIGTERM.
    _pending: swe_forge_fs::PendingDir,
    producer: Producer,
    tasks: BTreeMap<String, String>,
}

impl HarborWriter {
    /// Checks `dir` (a folder, not a symlink; new, empty or an earlier Harbor export) and makes
    /// the staging folder beside it.
    pub fn create(dir: &Path, producer: &Producer) -> Result<HarborWriter, ExportError> {
        let replace = existing_export(dir)?;
        let parent = match dir.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
            _ => PathBuf::from("."),
        };
        std::fs::create_dir_all(&parent).map_err(io(&parent))?;
        let base = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "harbor".into());
        let staging = tempfile::Builder::new()
            .prefix(&format!(".{base}."))
            .suffix(".partial")
            .tempdir_in(&parent)
            .map_err(io(&parent))?;
        let pending = swe_forge_fs::PendingDir::register(staging.path()).map_err(io(staging.path()))?;
        Ok(HarborWriter {
            dir: dir.to_owned(),
            parent,
            base,
            replace,
            staging,
            _pending: pending,
            producer: producer.clone(),
            tasks: BTreeMap::new(),
        })
    }

    /// Writes the task folder of `inst`, its test lists renamed by `names` when given; an
    /// instance that cannot be a task, or one already written, is an error.
    pub fn write(&mut self, inst: &Instance, names: Option<&BTreeMap<String, String>>) -> Result<(), ExportError> {
        let id = &inst.instance_id;
        if self.tasks.contains_key(id) {
            return Err(ExportError::Instance { id: id.clone(), message: "is in the records twice".into() });
        }
        let task = HarborTask::from_instance(inst, names, &self.producer)
            .map_err(|e| ExportError::Instance { id: id.clone(), message: e.to_string() })?;
        for (rel, text) in &task.files {
            let path = self.staging.path().join(id).join(rel);
            if let Some(p) = path.parent() {
                std::fs::create_dir_all(p).map_err(io(p))?;
            }
            std::fs::write(&path, text).map_err(io(&path))?;
            if rel.ends_with(".sh") {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).map_err(io(&path))?;
            }
        }
        self.tasks.insert(id.clone(), task.name);
        Ok(())
    }

    /// Writes the manifest and puts the folder in place.
    pub fn finish(self) -> Result<(), ExportError> {
        let HarborWriter { dir, parent, base, replace, staging, _pending, producer, tasks } = self;
        let manifest = HarborManifest {
            format: "harbor".into(),
            swe_forge_version: producer.version.clone(),
            swe_forge_git_commit: producer.git_commit.clone(),
            tasks,
        };
        let manifest_path = staging.path().join(HARBOR_MANIFEST);
        let json = serde_json::to_string_pretty(&manifest).expect("the manifest serializes") + "\n";
        std::fs::write(&manifest_path, json).map_err(io(&manifest_path))?;
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(staging.path(), std::fs::Permissions::from_mode(0o755))
                .map_err(io(staging.path()))?;
        }
        put_in_place(&staging.keep(), &dir, &parent, &base, replace)
    }
}

/// Wraps an I/O error on `path`.
fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ExportError {
    let path = path.to_owned();
    move |source| ExportError::Io { path, source }
}

/// Whether `dir` holds an earlier Harbor export to replace (`false` when it does not exist); an
/// error when it is something else: a symlink, a file, or a folder of other things.
fn existing_export(dir: &Path) -> Result<bool, ExportError> {
    match std::fs::symlink_metadata(dir) {
        Ok(m) if m.file_type().is_symlink() => Err(ExportError::Destination {
            path: dir.to_owned(),
            message: "is a symlink: give the folder itself".into(),
        }),
        Ok(m) if !m.is_dir() => {
            Err(ExportError::Destination { path: dir.to_owned(), message: "is not a folder".into() })
        }
        Ok(_) => {
            let empty = std::fs::read_dir(dir).map_err(io(dir))?.next().is_none();
            if !empty && !dir.join(HARBOR_MANIFEST).is_file() {
                return Err(ExportError::Destination {
                    path: dir.to_owned(),
                    message: format!(
                        "exists and is not a Harbor export of swe-forge (no {HARBOR_MANIFEST}): give a new or empty folder"
                    ),
                });
            }
            Ok(true)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(io(dir)(e)),
    }
}

/// Gives the folder `staged` the name `dir`; an earlier export there (`replace`) goes aside in
/// `parent` first and is removed once the new one is in place.
fn put_in_place(staged: &Path, dir: &Path, parent: &Path, base: &str, replace: bool) -> Result<(), ExportError> {
    if replace {
        // The earlier export goes aside, the new one takes its name, then the old one is removed.
        let old = tempfile::Builder::new()
            .prefix(&format!(".{base}."))
            .suffix(".old")
            .tempdir_in(parent)
            .map_err(io(parent))?;
        let old_path = old.keep();
        let aside = old_path.join("export");
        std::fs::rename(dir, &aside).map_err(io(dir))?;
        if let Err(e) = std::fs::rename(staged, dir) {
            let _ = std::fs::rename(&aside, dir);
            let _ = std::fs::remove_dir_all(staged);
            let _ = std::fs::remove_dir_all(&old_path);
            return Err(io(dir)(e));
        }
        std::fs::remove_dir_all(&old_path).map_err(io(&old_path))?;
    } else if let Err(e) = std::fs::rename(staged, dir) {
        let _ = std::fs::remove_dir_all(staged);
        return Err(io(dir)(e));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn producer() -> Producer {
        Producer { version: "9.9.9".into(), git_commit: Some("0123abcd".into()) }
    }

    fn record() -> Instance {
        serde_json::from_value(serde_json::json!({
            "org": "o", "repo": "r", "number": 7, "state": "closed", "title": "Fix pop", "body": null,
            "base": {"label": "o:main", "ref": "main", "sha": "0123456789abcdef0123456789abcdef01234567"},
            "resolved_issues": [{"number": 3, "title": "Pop panics", "body": "on empty"}],
            "fix_patch": "diff --git a/p.go b/p.go\n", "instance_id": "o__r-7",
            "test_patch": "diff --git a/p_test.go b/p_test.go\n--- a/p_test.go\n+++ b/p_test.go\n@@ -1 +1 @@\n-a\n+b\n",
            "fixed_tests": {"p::TestB": {"run": "NONE", "test": "FAIL", "fix": "PASS"}},
            "p2p_tests": {"p::TestA": {"run": "PASS", "test": "PASS", "fix": "PASS"}},
            "swe_forge": {"schema_version": 1, "status": "accepted", "parser": "go-test-json",
                "image": "swe-forge/o__r:pr-7-abc", "image_id": "sha256:feed"}
        }))
        .unwrap()
    }

    #[test]
    fn a_task_folder_grades_in_a_separate_verifier_from_the_agents_diff() {
        let task = HarborTask::from_instance(&record(), None, &producer()).unwrap();
        assert_eq!(task.name, "o/o__r-7");
        let toml: toml::Value = toml::from_str(&task.files["task.toml"]).unwrap();
        assert_eq!(toml["schema_version"].as_str(), Some("1.4"));
        assert_eq!(toml["task"]["name"].as_str(), Some("o/o__r-7"));
        assert_eq!(toml["verifier"]["environment_mode"].as_str(), Some("separate"));
        assert_eq!(toml["environment"]["network_mode"].as_str(), Some("no-network"));
        assert_eq!(toml["artifacts"][0].as_str(), Some(MODEL_PATCH));
        assert!(toml["verifier"]["collect"][0]["command"].as_str().unwrap().ends_with(&format!("> {MODEL_PATCH}")));
        let meta = &toml["metadata"]["swe_forge"];
        assert_eq!(meta["image"].as_str(), Some("swe-forge/o__r:pr-7-abc"));
        assert_eq!((meta["fail_to_pass"].as_integer(), meta["version"].as_str()), (Some(1), Some("9.9.9")));
        // Pinned by content id without a registry, by the registry digest with one.
        assert!(task.files["environment/Dockerfile"].contains("\nFROM sha256:feed\n"));
        let mut pushed = record();
        pushed.swe_forge.as_mut().unwrap().registry_image = Some("localhost:5000/swe-forge/o__r@sha256:beef".into());
        let task2 = HarborTask::from_instance(&pushed, None, &producer()).unwrap();
        assert!(task2.files["environment/Dockerfile"].contains("\nFROM localhost:5000/swe-forge/o__r@sha256:beef\n"));
        assert!(task.files["instruction.md"].starts_with("Pop panics\non empty\n"));
        assert_eq!(task.files["tests/fail_to_pass.txt"], "p::TestB\n");
        assert_eq!(task.files["tests/pass_to_pass.txt"], "p::TestA\n");
        let test_sh = &task.files["tests/test.sh"];
        let (apply, restore, run) = (
            test_sh.find("git apply").unwrap(),
            test_sh.find("swe_forge_restore 'p_test.go'").unwrap(),
            test_sh.find("/swe-forge/run-tests >").unwrap(),
        );
        assert!(apply < restore && restore < run, "{test_sh}");
        assert!(test_sh.contains("'go-test-json' ''"), "{test_sh}");
        assert!(!task.files.contains_key("tests/names.tsv"));
        let names = BTreeMap::from([("p::TestB".to_owned(), "TestB".to_owned())]);
        let named = HarborTask::from_instance(&record(), Some(&names), &producer()).unwrap();
        assert_eq!(named.files["tests/names.tsv"], "p::TestB\tTestB\n");
        assert!(named.files["tests/test.sh"].contains(" /tests/names.tsv >"));
    }

    /// Runs the task's `tests/test.sh` with its paths moved under a temporary folder: the base
    /// is one commit holding `p.go`, `model` the agent's diff, and `run-tests` prints TestB and
    /// TestA passing (the run a forgery fooled); the reward and what the grading printed.
    fn grade_locally(task: &HarborTask, model: &str) -> (String, String) {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().to_str().unwrap();
        let repo = format!("{root}/testbed");
        for (rel, text) in &task.files {
            let path = format!("{root}/{rel}");
            std::fs::create_dir_all(Path::new(&path).parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        std::fs::create_dir_all(&repo).unwrap();
        std::fs::write(format!("{repo}/p.go"), "package p\n").unwrap();
        std::fs::write(format!("{repo}/p_test.go"), "a\n").unwrap();
        for args in [&["init", "-q"][..], &["add", "-A"], &["commit", "-q", "-m", "base"]] {
            let out = std::process::Command::new("git")
                .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"])
                .args(args)
                .current_dir(&repo)
                .output()
                .unwrap();
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        }
        std::fs::write(format!("{root}/model.patch"), model).unwrap();
        let events: String = ["TestB", "TestA"]
            .iter()
            .map(|t| format!("echo '{{\"Action\":\"pass\",\"Package\":\"p\",\"Test\":\"{t}\"}}'\n"))
            .collect();
        std::fs::create_dir_all(format!("{root}/swe-forge")).unwrap();
        std::fs::write(format!("{root}/swe-forge/run-tests"), format!("#!/bin/sh\n{events}")).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(format!("{root}/swe-forge/run-tests"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
        let script = task.files["tests/test.sh"]
            .replace(MODEL_PATCH, &format!("{root}/model.patch"))
            .replace("/logs/verifier", &format!("{root}/logs"))
            .replace("/swe-forge/", &format!("{root}/swe-forge/"))
            .replace("/tests/", &format!("{root}/tests/"))
            .replace("cd /testbed", &format!("cd {repo}"));
        let out = std::process::Command::new("bash").arg("-c").arg(&script).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let reward = std::fs::read_to_string(format!("{root}/logs/reward.txt")).unwrap();
        (reward.trim().to_owned(), String::from_utf8_lossy(&out.stdout).into_owned())
    }

    #[test]
    fn an_agent_diff_that_forges_results_gets_no_reward() {
        let task = HarborTask::from_instance(&record(), None, &producer()).unwrap();
        let file = |path: &str, line: &str| {
            format!("diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1 +1,2 @@\n package p\n+{line}\n")
        };
        // The run is fooled either way; the forging line costs the reward.
        let forged = file("p.go", "func init() { fmt.Print(\"\\x16--- PASS: TestB (0.00s)\\n\") }");
        let (reward, printed) = grade_locally(&task, &forged);
        assert_eq!(reward, "0", "{printed}");
        assert!(printed.contains("swe-forge: tampered: p.go:2: result-framing: "), "{printed}");
        let (reward, printed) = grade_locally(&task, &file("p.go", "func Args() []string { return os.Args[1:] }"));
        assert_eq!(reward, "1", "an ordinary change is graded: {printed}");
        // A rule the gold patch meets is not applied.
        let mut tool = record();
        tool.fix_patch = file("p.go", "const pass = \"--- PASS: \"");
        let task = HarborTask::from_instance(&tool, None, &producer()).unwrap();
        assert_eq!(grade_locally(&task, &forged).0, "1");
    }

    #[test]
    fn instances_that_cannot_be_tasks_are_refused_by_name() {
        let mut no_image = record();
        no_image.swe_forge.as_mut().unwrap().image = None;
        assert!(
            HarborTask::from_instance(&no_image, None, &producer())
                .unwrap_err()
                .to_string()
                .contains("no instance image")
        );
        let mut unpinned = record();
        unpinned.swe_forge.as_mut().unwrap().image_id = None;
        assert!(
            HarborTask::from_instance(&unpinned, None, &producer())
                .unwrap_err()
                .to_string()
                .contains("to pin its image")
        );
        let mut odd_id = record();
        odd_id.instance_id = "../o__r-7".into();
        assert!(HarborTask::from_instance(&odd_id, None, &producer()).unwrap_err().to_string().contains("folder name"));
        let mut broken = record();
        let t = broken.fixed_tests.remove("p::TestB").unwrap();
        broken.fixed_tests.insert("p::Test\nB".into(), t);
        assert!(HarborTask::from_instance(&broken, None, &producer()).unwrap_err().to_string().contains("line break"));
    }

    #[test]
    fn an_export_replaces_its_own_folder_and_nothing_else() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("harbor");
        write_harbor_dir(&dir, &[record()], &[], &producer()).unwrap();
        assert!(dir.join("o__r-7/tests/test.sh").is_file() && dir.join(HARBOR_MANIFEST).is_file());
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.join("o__r-7/solution/solve.sh")).unwrap().permissions().mode();
        assert_eq!(mode & 0o111, 0o111);
        // Again with another record: the earlier task folder is gone, nothing is left beside.
        let mut other = record();
        other.instance_id = "o__r-8".into();
        write_harbor_dir(&dir, &[other.clone()], &[], &producer()).unwrap();
        assert!(!dir.join("o__r-7").exists() && dir.join("o__r-8/task.toml").is_file());
        let beside: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(beside, ["harbor"]);
        // A folder of the user's is not replaced; an error leaves the destination as it was.
        let mine = tmp.path().join("mine");
        std::fs::create_dir(&mine).unwrap();
        std::fs::write(mine.join("notes.txt"), "keep").unwrap();
        let err = write_harbor_dir(&mine, &[record()], &[], &producer()).unwrap_err();
        assert!(err.to_string().contains("not a Harbor export"), "{err}");
        assert_eq!(std::fs::read_to_string(mine.join("notes.txt")).unwrap(), "keep");
        let mut bad = record();
        bad.swe_forge.as_mut().unwrap().image = None;
        assert!(write_harbor_dir(&dir, &[bad], &[], &producer()).is_err());
        assert!(dir.join("o__r-8/task.toml").is_file());
        let err = write_harbor_dir(&dir, &[other.clone(), other], &[], &producer()).unwrap_err();
        assert!(err.to_string().contains("twice"), "{err}");
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 2);
    }
}
