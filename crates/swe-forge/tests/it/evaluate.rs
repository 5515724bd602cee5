//! `swe-forge evaluate` on the real engine: gold patches resolve, a wrong patch does not, a patch
//! that edits a test file gains nothing by it, hostile and empty patches are labelled and never
//! applied, and an evaluation killed with SIGKILL resumes to the same summary.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use swe_forge_core::Instance;

use crate::environments::validate;
use crate::support::{make_repos, read_records, root, swe_forge, text};

/// A patch made with git: `edits` (file, text, replacement) applied to `base` of `repo`.
pub(crate) fn patch_of(repo: &Path, base: &str, edits: &[(&str, &str, &str)], scratch: &Path) -> String {
    let git = |args: &[&str], dir: &Path| {
        let o = Command::new("git").args(args).current_dir(dir).output().unwrap();
        assert!(o.status.success(), "git {args:?}: {}", text(&o));
        String::from_utf8(o.stdout).unwrap()
    };
    let work = scratch.join(format!("w{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    git(&["clone", "-q", repo.to_str().unwrap(), work.to_str().unwrap()], scratch);
    git(&["checkout", "-q", base], &work);
    for (file, from, to) in edits {
        let path = work.join(file);
        let content = std::fs::read_to_string(&path).unwrap();
        assert!(content.contains(from), "{file} has no {from:?}");
        std::fs::write(&path, content.replacen(from, to, 1)).unwrap();
    }
    let diff = git(&["diff"], &work);
    std::fs::remove_dir_all(&work).unwrap();
    diff
}

pub(crate) fn evaluate(dataset: &Path, predictions: &str, repos: &Path, out: &Path, extra: &[&str]) -> Value {
    let mut args = vec![
        "evaluate",
        "--dataset",
        dataset.to_str().unwrap(),
        "--predictions",
        predictions,
        "--repos",
        repos.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--timeout",
        "300",
    ];
    args.extend(extra);
    let o = swe_forge(&args);
    assert!(o.status.success(), "{}", text(&o));
    serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap()
}

fn outcomes(out: &Path) -> Vec<(String, String, String)> {
    let text = std::fs::read_to_string(out.join("evaluations.jsonl")).unwrap();
    text.lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            let s = |k: &str| v[k].as_str().unwrap_or_default().to_owned();
            (s("model"), s("instance_id"), s("outcome"))
        })
        .collect()
}

struct Setup {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
    repos: PathBuf,
    dataset: PathBuf,
    record: Instance,
}

fn setup() -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_owned();
    let repos = make_repos(&dir);
    let fixtures = read_records(&root().join("data/fixtures/instances.jsonl"));
    let one = fixtures.iter().find(|r| r.instance_id == "forge-fixtures__gostack-1").unwrap();
    let done = validate(&[one], &repos, &dir.join("v"), None);
    assert_eq!(done[0].status(), swe_forge_core::ValidationStatus::Accepted, "{:?}", done[0].swe_forge);
    Setup { dataset: dir.join("v/validated.jsonl"), record: done[0].clone(), _tmp: tmp, dir, repos }
}

#[test]
fn predictions_are_graded_and_hostile_ones_never_applied() {
    let s = setup();
    let id = s.record.instance_id.as_str();
    let repo = s.repos.join("forge-fixtures/gostack");
    let base = s.record.base.sha.as_str();
    let wrong = patch_of(
        &repo,
        base,
        &[("stack.go", "func (s *Stack[T]) Pop() (T, error) {", "// Pop pops.\nfunc (s *Stack[T]) Pop() (T, error) {")],
        &s.dir,
    );
    // The right fix, plus an edit that would break a PASS_TO_PASS test: the test files are put
    // back, so the edit has no effect and the prediction resolves.
    let fix_and_test_edit = patch_of(
        &repo,
        base,
        &[
            ("stack.go", "return zero, nil", "return zero, ErrEmpty"),
            (
                "stack_test.go",
                "func TestLen(t *testing.T) {",
                "func TestLen(t *testing.T) {\n\tt.Fatal(\"edited by the model\")",
            ),
        ],
        &s.dir,
    );
    let preds = [
        json!({"instance_id": id, "model_name_or_path": "wrong", "model_patch": wrong}),
        json!({"instance_id": id, "model_name_or_path": "fix-and-test-edit", "model_patch": fix_and_test_edit}),
        json!({"instance_id": id, "model_name_or_path": "stale", "model_patch": "diff --git a/stack.go b/stack.go\n--- a/stack.go\n+++ b/stack.go\n@@ -1,2 +1,2 @@\n-this line is not in the file\n+nor is this\n context\n"}),
        json!({"instance_id": id, "model_name_or_path": "escape", "model_patch": "diff --git a/../../x b/../../x\n--- a/../../x\n+++ b/../../x\n@@ -1 +1 @@\n-a\n+b\n"}),
        json!({"instance_id": id, "model_name_or_path": "binary", "model_patch": "diff --git a/a.bin b/a.bin\nnew file mode 100644\nindex 0000000..1111111\nGIT binary patch\nliteral 4\nLcmZ?d00001\n"}),
        json!({"instance_id": id, "model_name_or_path": "nothing", "model_patch": null}),
        // Multi-SWE-bench's format, with the record's own fix.
        json!({"org": "forge-fixtures", "repo": "gostack", "number": 1, "fix_patch": s.record.fix_patch, "model": "msb-format"}),
    ];
    let file = s.dir.join("preds.jsonl");
    std::fs::write(&file, preds.iter().map(|p| format!("{p}\n")).collect::<String>()).unwrap();
    let out = s.dir.join("eval");
    let summary = evaluate(&s.dataset, file.to_str().unwrap(), &s.repos, &out, &[]);
    let got = outcomes(&out);
    let expect = [
        ("wrong", "unresolved"),
        ("fix-and-test-edit", "resolved"),
        ("stale", "patch_does_not_apply"),
        ("escape", "unsafe_patch"),
        ("binary", "unsafe_patch"),
        ("nothing", "empty_patch"),
        ("msb-format", "resolved"),
    ];
    assert_eq!(
        got.iter().map(|(m, _, o)| (m.as_str(), o.as_str())).collect::<Vec<_>>(),
        expect,
        "{}",
        std::fs::read_to_string(out.join("evaluations.jsonl")).unwrap()
    );
    // The wrong patch's report names the FAIL_TO_PASS test that did not pass, and its log.
    let report: Value =
        serde_json::from_slice(&std::fs::read(out.join("logs/wrong").join(id).join("report.json")).unwrap()).unwrap();
    assert_eq!(report["verdict"]["f2p_failed"], json!({"gostack::TestPopEmptyReturnsError": "FAIL"}), "{report}");
    assert!(out.join("logs/wrong").join(id).join("eval.log").is_file());
    // The test edit was undone before the tests ran: TestLen passed in that run.
    let edited = std::fs::read_to_string(out.join("logs/fix-and-test-edit").join(id).join("eval.log")).unwrap();
    assert!(!edited.contains("edited by the model"), "the model's test edit ran:\n{edited}");
    // Hostile patches never reached a container: no log.
    assert!(!out.join("logs/escape").join(id).join("eval.log").exists());
    assert!(!out.join("logs/binary").join(id).join("eval.log").exists());
    assert_eq!(summary["resolved_instances"], 2);
    assert_eq!(summary["empty_patch_ids"], json!([id]));
    assert_eq!(summary["error_ids"], json!([]));
    assert_eq!(summary["by_language"]["go"]["evaluated"], 7, "{summary}");
    let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(md.contains("**2 of 7 predictions resolved (28.6%)**"), "{md}");

    // Gold: every accepted instance resolves.
    let gold = evaluate(&s.dataset, "gold", &s.repos, &s.dir.join("gold"), &["--reruns", "1"]);
    assert_eq!(gold["resolved_ids"], json!([id]), "{gold}");
    assert_eq!(gold["models"], json!(["gold"]));
    assert!(s.dir.join("gold/logs/gold").join(id).join("eval-1.log").is_file(), "--reruns ran the tests again");
}

#[test]
fn an_evaluation_killed_midway_resumes_to_the_same_report() {
    let s = setup();
    let id = s.record.instance_id.as_str();
    let preds: String = (0..4)
        .map(|i| {
            format!(
                "{}\n",
                json!({"instance_id": id, "model_name_or_path": format!("m{i}"), "model_patch": s.record.fix_patch})
            )
        })
        .collect();
    let file = s.dir.join("preds.jsonl");
    std::fs::write(&file, preds).unwrap();
    let out = s.dir.join("eval");
    let mut child = Command::new(env!("CARGO_BIN_EXE_swe-forge"))
        .args(["evaluate", "--dataset", s.dataset.to_str().unwrap(), "--predictions", file.to_str().unwrap()])
        .args(["--repos", s.repos.to_str().unwrap(), "--out", out.to_str().unwrap(), "--jobs", "1"])
        .env("SWE_FORGE_NO_PROGRESS", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Kill it once the second prediction's run has started (the first one's result is stored).
    let started = Instant::now();
    while !out.join("logs/m1").join(id).exists() {
        assert!(started.elapsed() < Duration::from_secs(600), "the evaluation never reached its second prediction");
        assert!(child.try_wait().unwrap().is_none(), "the evaluation ended before it could be killed");
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let o = swe_forge(&[
        "evaluate",
        "--dataset",
        s.dataset.to_str().unwrap(),
        "--predictions",
        file.to_str().unwrap(),
        "--repos",
        s.repos.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("resuming: ") && !text(&o).contains("resuming: 4 of 4"), "{}", text(&o));
    let resumed = std::fs::read_to_string(out.join("summary.json")).unwrap();
    let fresh = s.dir.join("fresh");
    evaluate(&s.dataset, file.to_str().unwrap(), &s.repos, &fresh, &["--fresh"]);
    assert_eq!(resumed, std::fs::read_to_string(fresh.join("summary.json")).unwrap());
    assert_eq!(outcomes(&out), outcomes(&fresh));
    assert_eq!(outcomes(&out).len(), 4);
}

/// A published dataset (records without a `swe_forge` block, lists in Multi-SWE-bench's names,
/// as its harness and publishers write them) is evaluated in those names: the gold patch
/// resolves and a wrong one names the failed test the way the record does.
#[test]
fn published_records_are_graded_in_multi_swe_bench_names() {
    let s = setup();
    let id = s.record.instance_id.as_str();
    let named = s.dir.join("msb-named.jsonl");
    let o = swe_forge(&[
        "export",
        "--records",
        s.dataset.to_str().unwrap(),
        "--jsonl",
        named.to_str().unwrap(),
        "--naming",
        "msb",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    // swe-forge's own record exported in Multi-SWE-bench's names (its `swe_forge` block kept): the
    // lists are read in the naming that finds them.
    let gold = evaluate(&named, "gold", &s.repos, &s.dir.join("eval-named"), &[]);
    assert_eq!(gold["resolved_ids"], json!([id]), "{gold}");
    let mut published: Value = serde_json::from_str(std::fs::read_to_string(&named).unwrap().trim()).unwrap();
    published.as_object_mut().unwrap().remove("swe_forge");
    assert!(published["f2p_tests"].get("TestPopEmptyReturnsError").is_some(), "{}", published["f2p_tests"]);
    let dataset = s.dir.join("published.jsonl");
    std::fs::write(&dataset, format!("{published}\n")).unwrap();

    let repo = s.repos.join("forge-fixtures/gostack");
    let wrong =
        patch_of(&repo, &s.record.base.sha, &[("stack.go", "return zero, nil", "return zero, nil // no")], &s.dir);
    let preds = [
        json!({"instance_id": id, "model_name_or_path": "gold-copy", "model_patch": s.record.fix_patch}),
        json!({"instance_id": id, "model_name_or_path": "wrong", "model_patch": wrong}),
    ];
    let file = s.dir.join("preds.jsonl");
    std::fs::write(&file, preds.iter().map(|p| format!("{p}\n")).collect::<String>()).unwrap();
    let out = s.dir.join("eval");
    let summary = evaluate(&dataset, file.to_str().unwrap(), &s.repos, &out, &[]);
    let got = outcomes(&out);
    assert_eq!(
        got.iter().map(|(m, _, o)| (m.as_str(), o.as_str())).collect::<Vec<_>>(),
        [("gold-copy", "resolved"), ("wrong", "unresolved")],
        "{}",
        std::fs::read_to_string(out.join("evaluations.jsonl")).unwrap()
    );
    let report: Value =
        serde_json::from_slice(&std::fs::read(out.join("logs/wrong").join(id).join("report.json")).unwrap()).unwrap();
    assert_eq!(report["verdict"]["f2p_failed"], json!({"TestPopEmptyReturnsError": "FAIL"}), "{report}");
    assert_eq!(summary["total_instances"], 1, "{summary}");

    // Read in canonical names (a profile can say so), the published names match no test: unresolved.
    let profile = s.dir.join("canonical.toml");
    std::fs::write(&profile, "name = \"canonical\"\nnaming = \"canonical\"\n").unwrap();
    let out = s.dir.join("eval-canonical");
    evaluate(&dataset, "gold", &s.repos, &out, &["--profile", profile.to_str().unwrap()]);
    assert_eq!(outcomes(&out), [("gold".into(), id.to_owned(), "unresolved".into())]);
}
