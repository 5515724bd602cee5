//! `swe-forge revalidate` end to end on the real Docker engine: our own validated fixture
//! records agree with themselves; a hand-written Multi-SWE-bench-style record of a repository
//! with a git submodule agrees only when the submodule's content is in the image; one whose
//! tests read another repository's files (an extra source at a tag) agrees, and is not run,
//! with a message naming what is missing, when that repository is not in the mirrors; and a Rust
//! crate whose first test binary fails shows the two profiles' difference (fail-fast `cargo
//! test` turns later binaries' tests into n2p, `--no-fail-fast` does not); a Java 8 project runs
//! on the `java8` toolchain (packages of another Debian suite) a pipeline override names.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Value, json};
use swe_forge_core::Instance;

use crate::support::{make_repos, read_records, root, swe_forge, text};

/// Runs git in `dir` with a fixed identity and dates.
fn git(dir: &Path, args: &[&str]) -> String {
    swe_forge_test_support::git_at(dir, "2024-01-01T00:00:00Z", args)
}

fn write(dir: &Path, files: &[(&str, &str)]) {
    for (path, content) in files {
        let p = dir.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
    }
}

/// A repository at `dir` with `files` committed; returns the commit.
fn repo_with(dir: &Path, files: &[(&str, &str)]) -> String {
    std::fs::create_dir_all(dir).unwrap();
    git(dir, &["init", "-q"]);
    write(dir, files);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", "base"]);
    git(dir, &["rev-parse", "HEAD"])
}

/// The diff that turns the committed tree into one with `files` changed (the work tree is
/// reset afterwards).
fn patch(dir: &Path, files: &[(&str, &str)]) -> String {
    write(dir, files);
    for (path, _) in files {
        git(dir, &["add", path]);
    }
    let diff = git(dir, &["diff", "--cached", "--binary"]) + "\n";
    git(dir, &["reset", "-q", "--hard"]);
    diff
}

/// A published record in Multi-SWE-bench's shape: `rows` are (name, run, test, fix) statuses.
fn published(
    org: &str,
    repo: &str,
    number: u64,
    sha: &str,
    test_patch: &str,
    fix_patch: &str,
    rows: &[(&str, &str, &str, &str)],
) -> Value {
    let mut maps: BTreeMap<&str, serde_json::Map<String, Value>> = BTreeMap::new();
    let mut results = [BTreeMap::<&str, Vec<&str>>::new(), BTreeMap::new(), BTreeMap::new()];
    for (name, run, test, fix) in rows {
        let t = json!({"run": run, "test": test, "fix": fix});
        let cat = match (*test, *fix) {
            ("PASS", "PASS") => Some("p2p_tests"),
            ("FAIL", "PASS") => Some("f2p_tests"),
            ("SKIP", "PASS") => Some("s2p_tests"),
            ("NONE", "PASS") => Some("n2p_tests"),
            _ => None,
        };
        if let Some(cat) = cat {
            maps.entry(cat).or_default().insert(name.to_string(), t.clone());
            if cat != "p2p_tests" {
                maps.entry("fixed_tests").or_default().insert(name.to_string(), t);
            }
        }
        for (r, s) in results.iter_mut().zip([run, test, fix]) {
            let key = match *s {
                "PASS" => "passed_tests",
                "FAIL" => "failed_tests",
                "SKIP" => "skipped_tests",
                _ => continue,
            };
            r.entry(key).or_default().push(name);
        }
    }
    let result = |r: &BTreeMap<&str, Vec<&str>>| {
        let list = |k: &str| r.get(k).cloned().unwrap_or_default();
        json!({
            "passed_count": list("passed_tests").len(), "failed_count": list("failed_tests").len(),
            "skipped_count": list("skipped_tests").len(), "passed_tests": list("passed_tests"),
            "failed_tests": list("failed_tests"), "skipped_tests": list("skipped_tests"),
        })
    };
    let mut v = json!({
        "org": org, "repo": repo, "number": number, "state": "closed", "title": "t", "body": null,
        "base": {"label": format!("{org}:main"), "ref": "main", "sha": sha},
        "resolved_issues": [], "fix_patch": fix_patch, "test_patch": test_patch,
        "run_result": result(&results[0]), "test_patch_result": result(&results[1]), "fix_patch_result": result(&results[2]),
        "instance_id": format!("{org}__{repo}-{number}"),
    });
    for cat in ["fixed_tests", "p2p_tests", "f2p_tests", "s2p_tests", "n2p_tests"] {
        v[cat] = Value::Object(maps.remove(cat).unwrap_or_default());
    }
    v
}

fn write_records(path: &Path, records: &[Value]) {
    let lines: Vec<String> = records.iter().map(|r| r.to_string()).collect();
    std::fs::write(path, lines.join("\n") + "\n").unwrap();
}

/// Runs revalidate and returns the agreement report.
fn revalidate(records: &Path, repos: &Path, profile: &str, out: &Path) -> Value {
    revalidate_with(records, repos, None, profile, out)
}

/// [`revalidate`] with a pipeline file's overrides.
fn revalidate_with(records: &Path, repos: &Path, pipeline: Option<&Path>, profile: &str, out: &Path) -> Value {
    let mut args = vec![
        "revalidate",
        "--records",
        records.to_str().unwrap(),
        "--repos",
        repos.to_str().unwrap(),
        "--profile",
        profile,
        "--out",
        out.to_str().unwrap(),
        "--timeout",
        "600",
        "--ca-bundle",
        "system",
    ];
    if let Some(p) = pipeline {
        args.extend(["--pipeline", p.to_str().unwrap()]);
    }
    let o = swe_forge(&args);
    assert!(o.status.success(), "{}", text(&o));
    assert!(out.join("agreement.md").exists() && out.join("environments.md").exists());
    serde_json::from_slice(&std::fs::read(out.join("agreement.json")).unwrap()).unwrap()
}

fn row<'a>(report: &'a Value, id: &str) -> &'a Value {
    report["instances"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["instance_id"] == id)
        .unwrap_or_else(|| panic!("{id} missing: {report}"))
}

fn names(v: &Value) -> Vec<&str> {
    v.as_array().unwrap().iter().map(|s| s.as_str().unwrap()).collect()
}

#[test]
fn our_validated_fixture_records_agree_with_a_revalidation() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = make_repos(tmp.path());
    let wanted = ["forge-fixtures__gostack-1", "forge-fixtures__gostack-5", "forge-fixtures__ringq-7"];
    let all = std::fs::read_to_string(root().join("data/fixtures/instances.jsonl")).unwrap();
    let subset: Vec<Value> = all
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| wanted.contains(&v["instance_id"].as_str().unwrap()))
        .collect();
    let candidates = tmp.path().join("candidates.jsonl");
    write_records(&candidates, &subset);
    let validated = tmp.path().join("validated.jsonl");
    let o = swe_forge(&[
        "validate",
        "--records",
        candidates.to_str().unwrap(),
        "--repos",
        repos.to_str().unwrap(),
        "--out",
        validated.to_str().unwrap(),
        "--timeout",
        "600",
    ]);
    assert!(o.status.success(), "{}", text(&o));

    let report = revalidate(&validated, &repos, "default", &tmp.path().join("default"));
    assert_eq!(report["naming"], "auto");
    let go = row(&report, "forge-fixtures__gostack-1");
    assert_eq!(go["naming"], "canonical", "records swe-forge made are compared by canonical ids");
    assert_eq!(go["agrees"], true, "{go}");
    assert_eq!(names(&go["fail_to_pass"]["only_ours"]).len(), 0);
    assert_eq!(go["runs"][2]["published"], go["runs"][2]["ours"], "run counts side by side");
    let rust = row(&report, "forge-fixtures__ringq-7");
    assert_eq!(rust["agrees"], true, "{rust}");
    let bad = row(&report, "forge-fixtures__gostack-5");
    assert_eq!(bad["outcome"], "not_run");
    assert_eq!(bad["cause"], "patch_does_not_apply");
    assert_eq!(report["overall"]["compared"], 2);
    assert_eq!(report["overall"]["exact_both"], 2);
    assert!(report["overall"]["images_built"].as_u64().unwrap() >= 2);
    assert!(go["image"]["unique_bytes"].as_u64().is_some(), "{go}");
    // The re-derived records are the validator's in canonical naming: the same lists again.
    let rederived = read_records(&tmp.path().join("default/rederived.jsonl"));
    let ours: Vec<Instance> = read_records(&validated);
    for r in &rederived {
        let o = ours.iter().find(|o| o.instance_id == r.instance_id).unwrap();
        assert_eq!(r.fixed_tests.keys().collect::<Vec<_>>(), o.fixed_tests.keys().collect::<Vec<_>>());
        assert_eq!(r.p2p_tests.keys().collect::<Vec<_>>(), o.p2p_tests.keys().collect::<Vec<_>>());
    }
    let md = std::fs::read_to_string(tmp.path().join("default/agreement.md")).unwrap();
    assert!(md.contains("**2 of 2 compared instances agree exactly**"), "{md}");
    assert!(md.contains("| repo `forge-fixtures/gostack` |"), "{md}");

    // Started again, the run resumes from its state store and runs nothing; an output folder
    // from before the store (revalidated.jsonl only) is taken over the same way.
    let out = tmp.path().join("default");
    let again = |what: &str| {
        let o = swe_forge(&[
            "revalidate",
            "--records",
            validated.to_str().unwrap(),
            "--repos",
            repos.to_str().unwrap(),
            "--profile",
            "default",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{what}: {}", text(&o));
        assert!(text(&o).contains("resuming: 3 of 3 instances already re-validated"), "{what}: {}", text(&o));
        assert_eq!(std::fs::read_to_string(out.join("agreement.md")).unwrap(), md, "{what}");
    };
    again("from the store");
    std::fs::remove_file(out.join("state.sqlite")).unwrap();
    let _ = std::fs::remove_file(out.join("state.sqlite-wal"));
    let _ = std::fs::remove_file(out.join("state.sqlite-shm"));
    again("from revalidated.jsonl");

    // The same Go instance as Multi-SWE-bench would have published it: bare test names.
    let go_msb = {
        let mut v: Value = serde_json::from_str(all.lines().next().unwrap()).unwrap();
        let p = published(
            "forge-fixtures",
            "gostack",
            1,
            v["base"]["sha"].as_str().unwrap(),
            v["test_patch"].as_str().unwrap(),
            v["fix_patch"].as_str().unwrap(),
            &[
                ("TestPushThenPop", "PASS", "PASS", "PASS"),
                ("TestLen", "PASS", "PASS", "PASS"),
                ("TestPopEmptyReturnsError", "NONE", "FAIL", "PASS"),
            ],
        );
        for k in [
            "fixed_tests",
            "p2p_tests",
            "f2p_tests",
            "s2p_tests",
            "n2p_tests",
            "run_result",
            "test_patch_result",
            "fix_patch_result",
        ] {
            v[k] = p[k].clone();
        }
        v
    };
    let msb_records = tmp.path().join("msb.jsonl");
    write_records(&msb_records, &[go_msb]);
    let report = revalidate(&msb_records, &repos, "msb", &tmp.path().join("msb"));
    let go = row(&report, "forge-fixtures__gostack-1");
    assert_eq!(go["naming"], "msb");
    assert_eq!(go["agrees"], true, "{go}");
    assert!(go["test_command"].as_str().unwrap().starts_with("go test -v"), "{go}");
}

/// A Go module whose tests read a file of a submodule pinned at an older commit.
fn submodule_fixture(repos: &Path) -> (String, String, String) {
    let lib = repos.join("forge-fixtures/sublib");
    let pinned = repo_with(&lib, &[("data.txt", "pinned\n")]);
    write(&lib, &[("data.txt", "newer\n")]);
    git(&lib, &["commit", "-qam", "newer"]);
    let app = repos.join("forge-fixtures/withsub");
    std::fs::create_dir_all(&app).unwrap();
    git(&app, &["init", "-q"]);
    write(
        &app,
        &[
            ("go.mod", "module example.com/withsub\n\ngo 1.21\n"),
            (
                ".gitmodules",
                "[submodule \"vendor/lib\"]\n\tpath = vendor/lib\n\turl = https://github.com/forge-fixtures/sublib.git\n",
            ),
            (
                "double.go",
                "package withsub\n\n// Double returns twice x.\nfunc Double(x int) int { return x + x + 1 }\n",
            ),
            (
                "data_test.go",
                "package withsub\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestSubmoduleData(t *testing.T) {\n\tb, err := os.ReadFile(\"vendor/lib/data.txt\")\n\tif err != nil || string(b) != \"pinned\\n\" {\n\t\tt.Fatalf(\"vendor/lib/data.txt = %q, %v; want the pinned content\", b, err)\n\t}\n}\n",
            ),
        ],
    );
    git(&app, &["add", "-A"]);
    git(&app, &["update-index", "--add", "--cacheinfo", &format!("160000,{pinned},vendor/lib")]);
    git(&app, &["commit", "-qm", "base"]);
    let base = git(&app, &["rev-parse", "HEAD"]);
    let test_patch = patch(
        &app,
        &[(
            "double_test.go",
            "package withsub\n\nimport \"testing\"\n\nfunc TestDouble(t *testing.T) {\n\tif Double(2) != 4 {\n\t\tt.Fatalf(\"Double(2) = %d\", Double(2))\n\t}\n}\n",
        )],
    );
    let fix_patch = patch(
        &app,
        &[("double.go", "package withsub\n\n// Double returns twice x.\nfunc Double(x int) int { return x + x }\n")],
    );
    (base, test_patch, fix_patch)
}

#[test]
fn a_submodule_is_in_the_image_at_its_pinned_commit() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = tmp.path().join("repos");
    let (base, test_patch, fix_patch) = submodule_fixture(&repos);
    let record = published(
        "forge-fixtures",
        "withsub",
        3,
        &base,
        &test_patch,
        &fix_patch,
        &[("TestSubmoduleData", "PASS", "PASS", "PASS"), ("TestDouble", "NONE", "FAIL", "PASS")],
    );
    let records = tmp.path().join("published.jsonl");
    write_records(&records, &[record]);
    let report = revalidate(&records, &repos, "msb", &tmp.path().join("with"));
    let r = row(&report, "forge-fixtures__withsub-3");
    assert_eq!(r["agrees"], true, "the submodule's pinned content is in the image: {r}");

    // Without a local copy of the submodule its folder is empty: the test that reads it fails,
    // PASS_TO_PASS differs, and the cause says why.
    let only_app = tmp.path().join("only-app");
    std::fs::create_dir_all(only_app.join("forge-fixtures")).unwrap();
    std::os::unix::fs::symlink(repos.join("forge-fixtures/withsub"), only_app.join("forge-fixtures/withsub")).unwrap();
    let report = revalidate(&records, &only_app, "msb", &tmp.path().join("without"));
    let r = row(&report, "forge-fixtures__withsub-3");
    assert_eq!(r["agrees"], false, "{r}");
    assert_eq!(names(&r["pass_to_pass"]["only_published"]), ["TestSubmoduleData"]);
    assert_eq!(r["cause"], "missing_submodule", "{r}");
    let ours = read_records(&tmp.path().join("without/revalidated.jsonl"));
    let warnings = &ours[0].swe_forge.as_ref().unwrap().warnings;
    assert!(warnings.iter().any(|w| w.contains("submodule not found locally: vendor/lib")), "{warnings:?}");

    // Once the submodule's copy is there, `--fresh --instance` runs that instance again in the same
    // output folder: the new result is appended and wins, the earlier one stays in the file.
    let without = tmp.path().join("without");
    let o = swe_forge(&[
        "revalidate",
        "--records",
        records.to_str().unwrap(),
        "--repos",
        repos.to_str().unwrap(),
        "--profile",
        "msb",
        "--out",
        without.to_str().unwrap(),
        "--instance",
        "forge-fixtures__withsub-3",
        "--fresh",
        "--ca-bundle",
        "system",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let report: Value = serde_json::from_slice(&std::fs::read(without.join("agreement.json")).unwrap()).unwrap();
    assert_eq!(row(&report, "forge-fixtures__withsub-3")["agrees"], true);
    let log = std::fs::read(without.join("revalidated.jsonl")).unwrap();
    assert_eq!(swe_forge_core::read_jsonl_log(log.as_slice()).unwrap().len(), 2, "appended, nothing lost");
}

/// A Go module whose tests read a file of another repository, declared as an extra source at a
/// tag (a newer commit of that repository has other content); returns the base, both patches
/// and the commit the tag names.
fn extra_source_fixture(repos: &Path) -> (String, String, String, String) {
    let data = repos.join("forge-fixtures/testdata");
    let tagged = repo_with(&data, &[("golden.txt", "tagged\n")]);
    git(&data, &["tag", "-a", "v1", "-m", "v1"]);
    write(&data, &[("golden.txt", "newer\n")]);
    git(&data, &["commit", "-qam", "newer"]);
    let app = repos.join("forge-fixtures/withextra");
    let base = repo_with(
        &app,
        &[
            ("go.mod", "module example.com/withextra\n\ngo 1.21\n"),
            (
                "double.go",
                "package withextra\n\n// Double returns twice x.\nfunc Double(x int) int { return x + x + 1 }\n",
            ),
            (
                "data_test.go",
                "package withextra\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestExtraData(t *testing.T) {\n\tb, err := os.ReadFile(\"/swe-forge/extra/testdata/golden.txt\")\n\tif err != nil || string(b) != \"tagged\\n\" {\n\t\tt.Fatalf(\"golden.txt = %q, %v; want the tagged content\", b, err)\n\t}\n\tif _, err := os.Stat(\"/swe-forge/extra/testdata/.git\"); err == nil {\n\t\tt.Fatal(\"the extra source has a .git\")\n\t}\n}\n",
            ),
        ],
    );
    let test_patch = patch(
        &app,
        &[(
            "double_test.go",
            "package withextra\n\nimport \"testing\"\n\nfunc TestDouble(t *testing.T) {\n\tif Double(2) != 4 {\n\t\tt.Fatalf(\"Double(2) = %d\", Double(2))\n\t}\n}\n",
        )],
    );
    let fix_patch = patch(
        &app,
        &[("double.go", "package withextra\n\n// Double returns twice x.\nfunc Double(x int) int { return x + x }\n")],
    );
    (base, test_patch, fix_patch, tagged)
}

#[test]
fn an_extra_source_is_in_the_image_at_its_tag_and_a_missing_one_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = tmp.path().join("repos");
    let (base, test_patch, fix_patch, tagged) = extra_source_fixture(&repos);
    let record = published(
        "forge-fixtures",
        "withextra",
        4,
        &base,
        &test_patch,
        &fix_patch,
        &[("TestExtraData", "PASS", "PASS", "PASS"), ("TestDouble", "NONE", "FAIL", "PASS")],
    );
    let records = tmp.path().join("published.jsonl");
    write_records(&records, &[record]);
    // A profile file of its own: msb's Go command and naming, plus the repository's extra source.
    let profile = tmp.path().join("extra.toml");
    std::fs::write(
        &profile,
        r#"name = "extra"
naming = "msb"
[overrides."lang:go"]
test_command = "go test -v -count=1 ./..."
parser = "go-test"
[overrides."forge-fixtures/withextra"]
extra_sources = [{ repo = "forge-fixtures/testdata", rev = "v1", path = "/swe-forge/extra/testdata" }]
"#,
    )
    .unwrap();
    let profile = profile.to_str().unwrap();
    let report = revalidate(&records, &repos, profile, &tmp.path().join("with"));
    let r = row(&report, "forge-fixtures__withextra-4");
    assert_eq!(r["agrees"], true, "the tagged tree is in the image: {r}");
    assert_eq!((r["fail_to_pass"]["ours"].as_u64(), r["pass_to_pass"]["ours"].as_u64()), (Some(1), Some(1)), "{r}");
    let ours = read_records(&tmp.path().join("with/revalidated.jsonl"));
    let meta = ours[0].swe_forge.as_ref().unwrap();
    assert!(meta.rejections.is_empty(), "{:?}", meta.rejections);
    let prov = meta.provenance.as_ref().unwrap();
    assert_eq!(prov.extra_sources.len(), 1);
    assert_eq!(prov.extra_sources[0].sha, tagged, "the tag resolved to its commit");
    assert_eq!(prov.extra_sources[0].rev, "v1");
    assert_eq!(prov.extra_sources[0].path, "/swe-forge/extra/testdata");

    // Without the extra source in the mirrors the instance is not run, and says what is missing
    // and where it was looked for.
    let only_app = tmp.path().join("only-app");
    std::fs::create_dir_all(only_app.join("forge-fixtures")).unwrap();
    std::os::unix::fs::symlink(repos.join("forge-fixtures/withextra"), only_app.join("forge-fixtures/withextra"))
        .unwrap();
    let report = revalidate(&records, &only_app, profile, &tmp.path().join("without"));
    let r = row(&report, "forge-fixtures__withextra-4");
    assert_eq!(r["outcome"], "not_run", "{r}");
    assert_eq!(r["cause"], "repo_unavailable", "{r}");
    let ours = read_records(&tmp.path().join("without/revalidated.jsonl"));
    let rejection = &ours[0].swe_forge.as_ref().unwrap().rejections[0];
    assert_eq!(rejection.reason.as_str(), "repo_unavailable");
    assert!(
        rejection.detail.starts_with("extra source forge-fixtures/testdata at v1: no such repository"),
        "{}",
        rejection.detail
    );
    let looked = only_app.join("forge-fixtures/testdata");
    assert!(rejection.detail.contains(looked.to_str().unwrap()), "{}", rejection.detail);
}

/// A crate whose first test binary (the library's unit tests) fails in the test run.
fn fail_fast_fixture(dir: &Path) -> (String, String, String) {
    let lib_rs = |body: &str, extra_test: &str| {
        format!(
            "/// Adds, saturating at the bounds.\npub fn clamp_add(a: i32, b: i32) -> i32 {{\n    {body}\n}}\n\n#[cfg(test)]\nmod tests {{\n    #[test]\n    fn adds() {{\n        assert_eq!(super::clamp_add(1, 2), 3);\n    }}\n{extra_test}}}\n"
        )
    };
    let base = repo_with(
        dir,
        &[
            ("Cargo.toml", "[package]\nname = \"failfast\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"),
            (
                "Cargo.lock",
                "# This file is automatically @generated by Cargo.\n# It is not intended for manual editing.\nversion = 3\n\n[[package]]\nname = \"failfast\"\nversion = \"0.1.0\"\n",
            ),
            ("src/lib.rs", &lib_rs("a.wrapping_add(b)", "")),
            (
                "tests/later.rs",
                "#[test]\nfn later_one() {\n    assert_eq!(failfast::clamp_add(2, 2), 4);\n}\n\n#[test]\nfn later_two() {\n    assert_eq!(failfast::clamp_add(-1, 1), 0);\n}\n",
            ),
        ],
    );
    let saturates =
        "\n    #[test]\n    fn saturates() {\n        assert_eq!(super::clamp_add(i32::MAX, 1), i32::MAX);\n    }\n";
    let test_patch = patch(dir, &[("src/lib.rs", &lib_rs("a.wrapping_add(b)", saturates))]);
    let fix_patch = {
        write(dir, &[("src/lib.rs", &lib_rs("a.wrapping_add(b)", saturates))]);
        git(dir, &["commit", "-qam", "tests"]);
        let p = patch(dir, &[("src/lib.rs", &lib_rs("a.saturating_add(b)", saturates))]);
        git(dir, &["reset", "-q", "--hard", &base]);
        p
    };
    (base, test_patch, fix_patch)
}

#[test]
fn fail_fast_cargo_test_turns_later_binaries_into_n2p_only_in_the_msb_profile() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = tmp.path().join("repos");
    let (base, test_patch, fix_patch) = fail_fast_fixture(&repos.join("forge-fixtures/failfast"));
    // What Multi-SWE-bench publishes: its plain `cargo test` stopped after the failing unit-test
    // binary, so the integration tests had no result in the test run.
    let record = published(
        "forge-fixtures",
        "failfast",
        2,
        &base,
        &test_patch,
        &fix_patch,
        &[
            ("tests::adds", "PASS", "PASS", "PASS"),
            ("tests::saturates", "NONE", "FAIL", "PASS"),
            ("later_one", "PASS", "NONE", "PASS"),
            ("later_two", "PASS", "NONE", "PASS"),
        ],
    );
    let records = tmp.path().join("published.jsonl");
    write_records(&records, &[record]);

    let msb = revalidate(&records, &repos, "msb", &tmp.path().join("msb"));
    let r = row(&msb, "forge-fixtures__failfast-2");
    assert_eq!(r["agrees"], true, "fail-fast cargo test reproduces the published n2p: {r}");
    assert_eq!(r["test_command"], "cargo test");
    assert_eq!(r["runs"][1]["ours"]["passed"], 1, "only the first binary ran in the test run: {r}");

    let default = revalidate(&records, &repos, "default", &tmp.path().join("default"));
    let r = row(&default, "forge-fixtures__failfast-2");
    assert_eq!(r["naming"], "msb");
    assert_eq!(r["agrees"], false, "{r}");
    assert_eq!(r["f2p"]["exact"], true, "the strict f2p list agrees under both profiles: {r}");
    assert_eq!(names(&r["fail_to_pass"]["only_published"]), ["later_one", "later_two"]);
    assert_eq!(names(&r["pass_to_pass"]["only_ours"]), ["later_one", "later_two"]);
    assert_eq!(r["cause"], "different_test_command", "{r}");
    assert!(r["test_command"].as_str().unwrap().contains("--no-fail-fast"), "{r}");

    // Reports again without running anything, with the msb profile's agreement beside this one.
    let o = swe_forge(&[
        "revalidate",
        "--records",
        records.to_str().unwrap(),
        "--repos",
        repos.to_str().unwrap(),
        "--out",
        tmp.path().join("default").to_str().unwrap(),
        "--report-only",
        "--compare",
        tmp.path().join("msb/agreement.json").to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let env = std::fs::read_to_string(tmp.path().join("default/environments.md")).unwrap();
    assert!(
        env.contains("FAIL_TO_PASS = published (default)") && env.contains("FAIL_TO_PASS = published (msb)"),
        "{env}"
    );
    assert!(env.contains("| forge-fixtures__failfast-2 | rust | built |"), "{env}");
    assert!(env.contains("| no (J 0.33) | no (J 0.33) | yes | yes |"), "{env}");
}

/// A Maven project targeting Java 8 whose `JavaVersionTest` passes only there
/// ([`crate::support::java_fixture`]).
fn java8_fixture(dir: &Path) -> (String, String, String) {
    let j = crate::support::java_fixture("java8", "1.8", "4.13.2");
    let base = repo_with(
        dir,
        &[
            ("pom.xml", &j.pom),
            ("src/main/java/fixtures/Half.java", &j.half_base),
            ("src/test/java/fixtures/JavaVersionTest.java", j.version_test),
        ],
    );
    let test_patch = patch(dir, &[("src/test/java/fixtures/HalfTest.java", j.half_test)]);
    let fix_patch = patch(dir, &[("src/main/java/fixtures/Half.java", &j.half_fixed)]);
    (base, test_patch, fix_patch)
}

#[test]
fn a_toolchain_from_another_debian_suite_runs_the_java_a_repository_targets() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = tmp.path().join("repos");
    let (base, test_patch, fix_patch) = java8_fixture(&repos.join("forge-fixtures/java8"));
    let record = published(
        "forge-fixtures",
        "java8",
        4,
        &base,
        &test_patch,
        &fix_patch,
        &[("fixtures.JavaVersionTest", "PASS", "PASS", "PASS"), ("fixtures.HalfTest", "NONE", "FAIL", "PASS")],
    );
    let records = tmp.path().join("published.jsonl");
    write_records(&records, &[record]);
    // The override is data: the `java8` toolchain (Debian sid's OpenJDK 8 on the trixie base).
    let pipeline = tmp.path().join("java8.toml");
    std::fs::write(
        &pipeline,
        format!(
            "name = \"java8\"\n[source]\nrecords = {records:?}\nrepos = {repos:?}\n[validate]\nca_bundle = \"system\"\n\
[output]\nvalidated = \"out.jsonl\"\n[overrides.\"forge-fixtures/java8\"]\ntoolchain = \"java8\"\n"
        ),
    )
    .unwrap();
    let out = tmp.path().join("out");
    let report = revalidate_with(&records, &repos, Some(&pipeline), "msb", &out);
    let r = row(&report, "forge-fixtures__java8-4");
    assert_eq!(r["agrees"], true, "the tests ran on Java 8: {r}");
    let ours = read_records(&out.join("revalidated.jsonl"));
    let prov = ours[0].swe_forge.as_ref().unwrap().provenance.as_ref().unwrap();
    assert!(prov.toolchain_versions.contains("1.8.0"), "{prov:?}");
    // The exact Debian version of the package from sid (a moving suite), e.g. `8u462-ga~us1-1`.
    assert!(
        prov.toolchain_versions.lines().any(|l| l.starts_with("openjdk-8-jdk-headless 8u")),
        "{:?}",
        prov.toolchain_versions
    );
    assert!(prov.toolchain_image.contains("toolchain-java8"), "{prov:?}");
}

/// Under `msb` a test binary that the test patch keeps from building reports nothing in the test
/// run (Multi-SWE-bench builds in each run's fresh container, so no binary of the base stands in
/// for it): its tests are fixed once the fix builds them, as the published lists have them.
#[test]
fn a_test_binary_the_test_patch_breaks_counts_its_tests_as_fixed_under_msb() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = tmp.path().join("repos");
    let dir = repos.join("forge-fixtures/twobins");
    let cmake = "cmake_minimum_required(VERSION 3.10)\nproject(twobins CXX)\nenable_testing()\n\
add_library(calc src/calc.cpp)\ntarget_include_directories(calc PUBLIC src)\n\
add_executable(unit_bin test/unit.cpp)\ntarget_link_libraries(unit_bin calc)\nadd_test(NAME unit COMMAND unit_bin)\n\
add_executable(other_bin test/other.cpp)\ntarget_link_libraries(other_bin calc)\nadd_test(NAME other COMMAND other_bin)\n";
    let header = |extra: &str| format!("int add(int, int);\n{extra}");
    let calc = |extra: &str| format!("#include \"calc.h\"\nint add(int a, int b) {{ return a + b; }}\n{extra}");
    let unit = |checks: &str| {
        format!("#include \"calc.h\"\nint main() {{\n    if (add(2, 3) != 5) return 1;\n{checks}    return 0;\n}}\n")
    };
    let base = repo_with(
        &dir,
        &[
            ("CMakeLists.txt", cmake),
            ("src/calc.h", &header("")),
            ("src/calc.cpp", &calc("")),
            ("test/unit.cpp", &unit("")),
            ("test/other.cpp", "#include \"calc.h\"\nint main() { return add(1, 1) == 2 ? 0 : 1; }\n"),
        ],
    );
    let test_patch = patch(&dir, &[("test/unit.cpp", &unit("    if (sub(5, 3) != 2) return 1;\n"))]);
    let fix_patch = patch(
        &dir,
        &[
            ("src/calc.h", &header("int sub(int, int);\n")),
            ("src/calc.cpp", &calc("int sub(int a, int b) { return a - b; }\n")),
        ],
    );
    let record = published(
        "forge-fixtures",
        "twobins",
        4,
        &base,
        &test_patch,
        &fix_patch,
        &[("unit", "PASS", "NONE", "PASS"), ("other", "PASS", "PASS", "PASS")],
    );
    let records = tmp.path().join("published.jsonl");
    write_records(&records, &[record]);
    let msb = revalidate(&records, &repos, "msb", &tmp.path().join("msb"));
    let r = row(&msb, "forge-fixtures__twobins-4");
    assert_eq!(r["agrees"], true, "the broken binary's test is fixed, not run from the base's build: {r}");
}
