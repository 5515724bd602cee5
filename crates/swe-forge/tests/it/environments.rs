//! Repository environments on the real engine: two instances of one fixture repository with
//! different base commits (jsduration 12 and 13; 13 starts from a later commit of main) share one
//! environment image built at the older base, each instance layer adds only its change, and the
//! repository inside an instance holds exactly one commit with the base tree.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use swe_forge_core::{Instance, ValidationStatus};

use crate::pipeline::pipeline_in;
use crate::support::{make_repos, read_records, root, swe_forge, text};

fn docker(args: &[&str]) -> String {
    let out = Command::new("docker").args(args).output().unwrap();
    assert!(out.status.success(), "docker {args:?}: {}", text(&out));
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// Runs `script` in a fresh container of `image` (no network); returns stdout and the exit code.
pub(crate) fn in_image(image: &str, script: &str) -> (String, Option<i32>) {
    let out = Command::new("docker")
        .args(["run", "--rm", "--network", "none", "--entrypoint", "bash", image, "-c", script])
        .output()
        .unwrap();
    (String::from_utf8_lossy(&out.stdout).trim().to_owned(), out.status.code())
}

fn size(image: &str) -> u64 {
    docker(&["image", "inspect", "--format", "{{.Size}}", image]).parse().unwrap()
}

fn layers(image: &str) -> Vec<String> {
    serde_json::from_str(&docker(&["image", "inspect", "--format", "{{json .RootFS.Layers}}", image])).unwrap()
}

fn git_out(repo: &Path, args: &[&str]) -> String {
    let out = Command::new("git").arg("-C").arg(repo).args(args).output().unwrap();
    assert!(out.status.success(), "git {args:?}: {}", text(&out));
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// Validates `records` (written to `dir/records.jsonl`) into `dir/validated.jsonl`; returns them.
pub(crate) fn validate(records: &[&Instance], repos: &Path, dir: &Path, pipeline: Option<&Path>) -> Vec<Instance> {
    validate_with(records, repos, dir, pipeline, &[])
}

/// [`validate`] with more arguments.
pub(crate) fn validate_with(
    records: &[&Instance],
    repos: &Path,
    dir: &Path,
    pipeline: Option<&Path>,
    extra: &[&str],
) -> Vec<Instance> {
    std::fs::create_dir_all(dir).unwrap();
    let input = dir.join("records.jsonl");
    swe_forge_core::write_jsonl(std::fs::File::create(&input).unwrap(), records.iter().copied()).unwrap();
    let out = dir.join("validated.jsonl");
    let mut args = vec![
        "validate",
        "--records",
        input.to_str().unwrap(),
        "--repos",
        repos.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--timeout",
        "300",
        "--ca-bundle",
        "system",
    ];
    if let Some(p) = pipeline {
        args.extend(["--pipeline", p.to_str().unwrap()]);
    }
    args.extend(extra);
    let o = swe_forge(&args);
    assert!(o.status.success(), "{}", text(&o));
    read_records(&out)
}

fn lists(r: &Instance) -> (BTreeSet<String>, BTreeSet<String>) {
    (r.f2p_tests.keys().cloned().collect(), r.p2p_tests.keys().cloned().collect())
}

/// jest's own options (`--ci --json --outputFile`) stay out of the suite's `process.argv`: on a
/// machine of two cores jest runs the suite in band, in its own process, and a CLI library whose
/// tests parse `process.argv` (commander's `program.parse()`) would stop at `--ci` and end the run
/// with one test. A test the test patch adds sees the arguments `npx jest` would give it: none.
#[test]
fn jests_own_options_stay_out_of_the_suites_process_argv() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = make_repos(tmp.path());
    let fixtures = read_records(&root().join("data/fixtures/instances.jsonl"));
    let mut r = fixtures.into_iter().find(|r| r.instance_id == "forge-fixtures__jsduration-12").unwrap();
    r.test_patch.push_str(&crate::evaluate_integrity::new_file(
        "test/argv.test.js",
        "test('the runner leaves process.argv alone', () => {\n  expect(process.argv.slice(2)).toEqual([]);\n  expect(process.execArgv).toEqual([]);\n});\n",
    ));
    let done = validate(&[&r], &repos, &tmp.path().join("out"), None);
    let r = &done[0];
    assert_eq!(r.status(), ValidationStatus::Accepted, "{:?}", r.swe_forge);
    let passing: Vec<&String> = r.p2p_tests.keys().chain(r.n2p_tests.keys()).collect();
    assert!(passing.iter().any(|k| k.contains("leaves process.argv alone")), "{passing:?} {:?}", r.f2p_tests);
    assert!(!r.f2p_tests.is_empty(), "{r:?}");
}

/// A fix that adds a package to `package.json` (as commander's PR 1473 adds `ts-jest`): the runs
/// have no network, so the package is installed into the instance layer with the patched
/// manifest in place (the recipe's `prefetch`), and the manifest is put back as at the base. The
/// test the test patch adds, which loads the package, passes with the fix; the provenance says
/// what was fetched, and the image's `package.json` is the base's.
#[test]
fn a_fix_that_adds_a_package_finds_it_installed_in_the_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = make_repos(tmp.path());
    let fixtures = read_records(&root().join("data/fixtures/instances.jsonl"));
    let mut r = fixtures.into_iter().find(|r| r.instance_id == "forge-fixtures__jsduration-12").unwrap();
    r.test_patch.push_str(&crate::evaluate_integrity::new_file(
        "test/pad.test.js",
        "const leftPad = require('left-pad');\ntest('pads with the package the fix adds', () => {\n  expect(leftPad('7', 3, '0')).toBe('007');\n});\n",
    ));
    r.fix_patch.push_str(
        "diff --git a/package.json b/package.json\n--- a/package.json\n+++ b/package.json\n@@ -3,6 +3,9 @@\n   \"version\": \"0.1.0\",\n   \"description\": \"Parses durations like 1h30m; fixture repository of swe-forge\",\n   \"main\": \"src/duration.js\",\n+  \"dependencies\": {\n+    \"left-pad\": \"1.3.0\"\n+  },\n   \"scripts\": {\n     \"test\": \"jest\"\n   },\n",
    );
    let done = validate_with(&[&r], &repos, &tmp.path().join("out"), None, &["--hunk-runs", "0"]);
    let r = &done[0];
    assert_eq!(r.status(), ValidationStatus::Accepted, "{:?}", r.swe_forge);
    let pad = "test/pad.test.js > pads with the package the fix adds";
    assert!(r.fix_patch_result.passed_tests.iter().any(|t| t == pad), "{:?}", r.fix_patch_result);
    let meta = r.swe_forge.as_ref().unwrap();
    let notes = &meta.provenance.as_ref().unwrap().setup_notes;
    assert!(
        notes.iter().any(|n| n == "the patches change package.json: the dependencies they name were fetched into the image (the files are the base's)"),
        "{notes:?}"
    );
    let image = meta.image.as_deref().unwrap();
    let out = std::process::Command::new("docker")
        .args([
            "run",
            "--rm",
            "--network",
            "none",
            image,
            "bash",
            "-c",
            "cd /testbed && git status --porcelain && grep -c left-pad package.json || true",
        ])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "0\n", "the image's tree is the base's: {}", text(&out));
}

/// The prefetch runs with the network and the patch's `package.json` in place: a `preinstall`
/// script the fix adds (which would edit `src/duration.js` and leave a mark) does not run, and the
/// fix's `.npmrc` (another registry, out of reach) is not in place during the fetch: the package
/// still comes from the base's registry, and the image's tree is the base's.
#[test]
fn the_prefetch_runs_no_script_of_the_patch_and_ignores_its_registry_configuration() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = make_repos(tmp.path());
    let fixtures = read_records(&root().join("data/fixtures/instances.jsonl"));
    let mut r = fixtures.into_iter().find(|r| r.instance_id == "forge-fixtures__jsduration-12").unwrap();
    r.test_patch.push_str(&crate::evaluate_integrity::new_file(
        "test/pad.test.js",
        "const leftPad = require('left-pad');\ntest('pads with the package the fix adds', () => {\n  expect(leftPad('7', 3, '0')).toBe('007');\n});\n",
    ));
    r.fix_patch.push_str(
        "diff --git a/package.json b/package.json\n--- a/package.json\n+++ b/package.json\n@@ -3,6 +3,10 @@\n   \"version\": \"0.1.0\",\n   \"description\": \"Parses durations like 1h30m; fixture repository of swe-forge\",\n   \"main\": \"src/duration.js\",\n+  \"dependencies\": {\n+    \"left-pad\": \"1.3.0\"\n+  },\n   \"scripts\": {\n+    \"preinstall\": \"echo '// pwned' >> src/duration.js; touch /tmp/swe-forge-pwned\",\n     \"test\": \"jest\"\n   },\n",
    );
    r.fix_patch.push_str(&crate::evaluate_integrity::new_file(".npmrc", "registry=http://registry.invalid/\n"));
    let done = validate_with(&[&r], &repos, &tmp.path().join("out"), None, &["--hunk-runs", "0"]);
    let r = &done[0];
    let meta = r.swe_forge.as_ref().unwrap();
    let notes = &meta.provenance.as_ref().unwrap().setup_notes;
    assert!(
        notes.iter().any(|n| n == "the patches change package.json: the dependencies they name were fetched into the image (the files are the base's)"),
        "the fix's .npmrc is not among the files put in place, and the fetch reached the base's registry: {notes:?}"
    );
    let image = meta.image.as_deref().unwrap();
    let out = std::process::Command::new("docker")
        .args(["run", "--rm", "--network", "none", image, "bash", "-c"])
        .arg("cd /testbed && git status --porcelain; grep -c pwned src/duration.js; ls /tmp/swe-forge-pwned 2>&1 | grep -c 'No such'")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "0\n1\n", "no script of the patch ran: {}", text(&out));
}

/// The same for Go: a fix that adds a module to `go.mod` (and its `go.sum`) finds it in the
/// module cache of the runs, which have no network (the go recipe's `prefetch`, `go mod download`).
#[test]
fn a_fix_that_adds_a_go_module_finds_it_downloaded_in_the_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = make_repos(tmp.path());
    let fixtures = read_records(&root().join("data/fixtures/instances.jsonl"));
    let mut r = fixtures.into_iter().find(|r| r.instance_id == "forge-fixtures__gostack-1").unwrap();
    r.test_patch.push_str(&crate::evaluate_integrity::new_file(
        "cmp_test.go",
        "package gostack\n\nimport (\n\t\"testing\"\n\n\t\"github.com/google/go-cmp/cmp\"\n)\n\nfunc TestWithTheModuleTheFixAdds(t *testing.T) {\n\tif d := cmp.Diff([]int{1, 2}, []int{1, 2}); d != \"\" {\n\t\tt.Fatal(d)\n\t}\n}\n",
    ));
    r.fix_patch.push_str(
        "diff --git a/go.mod b/go.mod\n--- a/go.mod\n+++ b/go.mod\n@@ -1,3 +1,5 @@\n module gostack\n \n go 1.22\n+\n+require github.com/google/go-cmp v0.5.9\n",
    );
    r.fix_patch.push_str(&crate::evaluate_integrity::new_file(
        "go.sum",
        "github.com/google/go-cmp v0.5.9 h1:O2Tfq5qg4qc4AmwVlvv0oLiVAGB7enBSJ2x2DqQFi38=\ngithub.com/google/go-cmp v0.5.9/go.mod h1:17dUlkBOakJ0+DkrSSNjCkIjxS6bF9zb3elmeNGIjoY=\n",
    ));
    let done = validate_with(&[&r], &repos, &tmp.path().join("out"), None, &["--hunk-runs", "0"]);
    let r = &done[0];
    assert_eq!(r.status(), ValidationStatus::Accepted, "{:?}", r.swe_forge);
    let t = "gostack::TestWithTheModuleTheFixAdds";
    assert!(r.fix_patch_result.passed_tests.iter().any(|x| x == t), "{:?}", r.fix_patch_result);
    let notes = &r.swe_forge.as_ref().unwrap().provenance.as_ref().unwrap().setup_notes;
    assert!(notes.iter().any(|n| n.starts_with("the patches change go.mod, go.sum: the dependencies")), "{notes:?}");
}

/// A jest run that reports one test for a suite of many test files is a truncated run
/// (`short_suite`), rejected under the strict rule with the counts: here a jest config that runs
/// one file of thirteen (its two tests, the one the test patch adds included), the way a suite that ends jest early (commander's `program.parse()`)
/// leaves one test of hundreds.
#[test]
fn a_jest_run_of_one_test_for_a_suite_of_many_files_is_labelled_truncated() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = make_repos(tmp.path());
    let fixtures = read_records(&root().join("data/fixtures/instances.jsonl"));
    let mut r = fixtures.into_iter().find(|r| r.instance_id == "forge-fixtures__jsduration-12").unwrap();
    for i in 0..11 {
        r.test_patch.push_str(&crate::evaluate_integrity::new_file(
            &format!("test/extra/e{i:02}.test.js"),
            &format!("test('extra {i}', () => {{\n  expect({i}).toBe({i});\n}});\n"),
        ));
    }
    r.test_patch.push_str(&crate::evaluate_integrity::new_file(
        "jest.config.js",
        "module.exports = { testMatch: ['**/test/format.test.js'] };\n",
    ));
    let done = validate(&[&r], &repos, &tmp.path().join("out"), None);
    let r = &done[0];
    let meta = r.swe_forge.as_ref().unwrap();
    let labels = meta.labels.as_ref().expect("labelled");
    assert_eq!(labels.suite_files, Some(13), "2 test files at the base and 11 the test patch adds");
    let short = labels.truncated.iter().find(|t| t.cause == swe_forge_core::TruncationCause::ShortSuite);
    let short = short.unwrap_or_else(|| panic!("no short_suite: {labels:?}"));
    assert_eq!((short.reported, short.missing, short.tolerated), (2, 11, false), "{short:?}");
    assert_eq!(r.status(), ValidationStatus::Rejected);
    let truncated = meta.rejections.iter().find(|x| x.reason == swe_forge_core::RejectReason::TruncatedRun);
    assert!(
        truncated.is_some_and(|x| x.detail.contains("2 tests for a suite of 13 test files")),
        "{:?}",
        meta.rejections
    );
}

#[test]
fn instances_of_a_repository_share_its_environment_and_add_only_their_change() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = make_repos(tmp.path());
    let fixtures = read_records(&root().join("data/fixtures/instances.jsonl"));
    let get = |id: &str| fixtures.iter().find(|r| r.instance_id == id).unwrap();
    let (old, new) = (get("forge-fixtures__jsduration-12"), get("forge-fixtures__jsduration-13"));
    assert_ne!(old.base.sha, new.base.sha, "the fixture needs two base commits");
    let done = validate(&[old, new], &repos, &tmp.path().join("shared"), None);
    for r in &done {
        assert_eq!(r.status(), ValidationStatus::Accepted, "{}: {:?}", r.instance_id, r.swe_forge);
    }
    let meta = |r: &Instance| r.swe_forge.clone().unwrap();
    let prov = |r: &Instance| meta(r).provenance.unwrap();
    let (p12, p13) = (prov(&done[0]), prov(&done[1]));

    // One environment, at the older base (an ancestor of the newer one), for both.
    assert_eq!(p12.env_commit, old.base.sha);
    assert_eq!(p13.env_commit, old.base.sha);
    assert_eq!(p12.env_image, p13.env_image);
    assert!(p13.env_image.contains(":env-"), "{}", p13.env_image);
    assert_eq!(docker(&["image", "inspect", "--format", "{{.Id}}", &p13.env_image]), p13.env_image_id);
    let env_layers = layers(&p13.env_image);
    let (image12, image13) = (meta(&done[0]).image.unwrap(), meta(&done[1]).image.unwrap());
    for image in [&image12, &image13] {
        let l = layers(image);
        assert_eq!(l[..env_layers.len()], env_layers[..], "{image} is built on the environment");
        // One layer each: instance 12 is at the environment commit, its layer holds only the
        // contract (`/swe-forge/run-tests`, `/swe-forge/instance.json`); instance 13's its change too.
        assert_eq!(l.len(), env_layers.len() + 1, "{image}: {l:?}");
    }

    // The environment holds the dependencies (node_modules, shared); the instance layer only the change.
    let env_adds = size(&p13.env_image) - size(&p13.toolchain_image);
    let adds13 = size(&image13) - size(&p13.env_image);
    let adds12 = size(&image12) - size(&p12.env_image);
    assert!(env_adds > 10 << 20, "the environment holds node_modules: {env_adds} bytes");
    assert!(adds13 * 20 < env_adds, "instance 13 adds {adds13} bytes, its environment {env_adds}");
    assert!(adds12 < 64 << 10, "instance 12 is at the environment commit: {adds12} bytes");

    // Inside instance 13: one commit holding exactly the base tree, the env commit gone, build
    // products (node_modules) not committed, the change on disk, no CA bundle, no change set.
    let repo = repos.join("forge-fixtures/jsduration");
    let base_tree = git_out(&repo, &["rev-parse", &format!("{}^{{tree}}", new.base.sha)]);
    let base_files = git_out(&repo, &["ls-tree", "-r", "--name-only", &new.base.sha]);
    let (env_head, code) = in_image(&p13.env_image, "cd /testbed && git rev-parse HEAD");
    assert_eq!(code, Some(0));
    let script = format!(
        "cd /testbed && git rev-list --all | wc -l && git rev-parse HEAD^{{tree}} && git log -1 --format=%s \
         && (git cat-file -e {env_head} 2>/dev/null && echo env-commit-present || echo env-commit-gone) \
         && git ls-files | tr '\\n' ' ' && echo && ls -d node_modules test/format.test.js test/order.test.js 2>&1 \
         ; ls /run/swe-forge /run/swe-forge-instance 2>&1; git status --porcelain --untracked-files=no | wc -l"
    );
    let (out, _) = in_image(&image13, &script);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "1", "{out}");
    assert_eq!(lines[1], base_tree, "the commit holds the base tree: {out}");
    assert_eq!(lines[2], format!("base {}", new.base.sha), "{out}");
    assert_eq!(lines[3], "env-commit-gone", "{out}");
    assert_eq!(lines[4].split_whitespace().collect::<Vec<_>>(), base_files.lines().collect::<Vec<_>>(), "{out}");
    assert!(out.contains("node_modules\n") && out.contains("test/order.test.js"), "{out}");
    assert!(out.contains("cannot access 'test/format.test.js'"), "a file the base deleted is gone: {out}");
    // The files the instance layer writes are newer than the environment's build products, so a
    // build tool that compares file times (make, cargo, Maven) rebuilds from them instead of
    // taking the environment commit's outputs as up to date.
    let (stat, _) = in_image(&image13, "cd /testbed && stat -c %Y test/order.test.js package.json");
    let times: Vec<i64> = stat.lines().map(|l| l.parse().unwrap()).collect();
    let created = docker(&["image", "inspect", "--format", "{{.Created}}", &p13.env_image]);
    let date = Command::new("date").args(["-d", &created, "+%s"]).output().unwrap();
    let env_created: i64 = String::from_utf8_lossy(&date.stdout).trim().parse().unwrap();
    assert_eq!(times[1], swe_forge_git::SOURCE_MTIME as i64, "an unchanged file keeps the tree's fixed time");
    assert!(times[0] >= env_created, "the changed file ({}) is newer than the environment ({env_created})", times[0]);
    assert!(out.contains("cannot access '/run/swe-forge'") && out.contains("cannot access '/run/swe-forge-instance'"));
    assert_eq!(lines.last(), Some(&"0"), "the work tree is clean against the commit: {out}");

    // `images sizes`: the instance's own bytes, and the environment once with the instances sharing it.
    let o = swe_forge(&["images", "sizes", "--records", tmp.path().join("shared/validated.jsonl").to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let report = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(report.contains(&format!("| {} | {} | 2 |", p13.env_image, p13.toolchain_image)), "{report}");
    // The environment's own layers were compressed (and only those are counted): some gzip bytes,
    // fewer than their tar's.
    let env_row = report.lines().find(|l| l.starts_with(&format!("| {} |", p13.env_image))).unwrap();
    let cells: Vec<f64> = env_row.split('|').map(str::trim).skip(4).take(4).map(|c| c.parse().unwrap()).collect();
    let [_, _, tar, gzip] = cells[..] else { panic!("{env_row}") };
    assert!(gzip > 0.0 && gzip < tar, "{env_row}");
    assert!(
        report.contains(&format!("| forge-fixtures__jsduration-13 | javascript | {} |", p13.env_image)),
        "{report}"
    );
    assert!(
        report.contains("median bytes an instance adds on top of its environment: 0.")
            && report.contains("over 2 instances"),
        "{report}"
    );
    // Per instance and per environment: bytes on disk, its own layers (as `docker image inspect`
    // counts them), their tar and gzip bytes, and the build time the records carry.
    let row = |first: &str| -> Vec<String> {
        let line =
            report.lines().find(|l| l.starts_with(&format!("| {first} |"))).unwrap_or_else(|| panic!("{report}"));
        line.trim_matches('|').split('|').map(|c| c.trim().to_owned()).collect()
    };
    let secs = |ms: Option<u64>| ms.map_or_else(|| "-".to_owned(), |ms| format!("{:.1}", ms as f64 / 1000.0));
    let inst = row("forge-fixtures__jsduration-13");
    let env = row(&p13.env_image);
    let toolchain_layers = layers(&p13.toolchain_image).len();
    for (cells, own_layers, build) in [
        (&inst[4..], layers(&image13).len() - env_layers.len(), secs(p13.image_build_ms)),
        (&env[3..], env_layers.len() - toolchain_layers, secs(p12.env_build_ms.or(p13.env_build_ms))),
    ] {
        let mib: Vec<f64> = [0, 2, 3].iter().map(|i| cells[*i].parse().unwrap()).collect();
        let (disk, tar, gzip) = (mib[0], mib[1], mib[2]);
        assert_eq!(cells[1], own_layers.to_string(), "{report}");
        assert!(gzip <= tar && disk <= tar + 0.1, "{report}");
        assert_eq!(cells[4], build, "{report}");
    }
    // The environment's node_modules: megabytes of tar, far fewer compressed.
    let env_tar: f64 = env[5].parse().unwrap();
    let env_gzip: f64 = env[6].parse().unwrap();
    assert!(env_tar > 10.0 && env_gzip < env_tar / 2.0, "{report}");

    // The results are those of an instance built the old way, on an environment at its own base.
    let own = tmp.path().join("own.toml");
    std::fs::write(
        &own,
        format!(
            "name = \"own\"\n[source]\nrecords = \"-\"\nrepos = \"-\"\n[output]\nvalidated = \"-\"\n\
             [overrides.\"forge-fixtures/jsduration\"]\nenv_commit = \"{}\"\n",
            new.base.sha
        ),
    )
    .unwrap();
    let alone = validate(&[old, new], &repos, &tmp.path().join("own"), Some(&own));
    let alone13 = alone.iter().find(|r| r.instance_id == new.instance_id).unwrap();
    assert_eq!(prov(alone13).env_commit, new.base.sha);
    assert_ne!(prov(alone13).env_image, p13.env_image);
    assert_eq!(lists(alone13), lists(&done[1]));
    assert!(done[1].f2p_tests.contains_key("test/duration.test.js > parseDuration > reads days"));
    assert_eq!(lists(&alone[0]), lists(&done[0]));

    // A run filtered down to instance 13 plans from every candidate: the same images.
    let dir = tmp.path().join("filtered");
    std::fs::create_dir_all(&dir).unwrap();
    let p = pipeline_in(&dir, "[filters]\ninstances = [\"forge-fixtures__jsduration-13\"]\n");
    let o = swe_forge(&["run", p.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let filtered = read_records(&dir.join("out/validated.jsonl"));
    assert_eq!(filtered.len(), 1);
    assert_eq!(meta(&filtered[0]).image.unwrap(), image13);
    assert_eq!(lists(&filtered[0]), lists(&done[1]));

    // `images verify` rebuilds the environment and the instance layer from scratch: the same files.
    let o = swe_forge(&[
        "images",
        "verify",
        "--records",
        tmp.path().join("shared/validated.jsonl").to_str().unwrap(),
        "--repos",
        repos.to_str().unwrap(),
        "--instance",
        "forge-fixtures__jsduration-13",
        "--ca-bundle",
        "system",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("forge-fixtures__jsduration-13: identical"), "{}", text(&o));
}

/// The image's configured environment (`Config.Env`), as `K=V` strings.
fn config_env(image: &str) -> Vec<String> {
    serde_json::from_str(&docker(&["image", "inspect", "--format", "{{json .Config.Env}}", image])).unwrap()
}

/// Every setup step sees `SWE_FORGE_COMMIT_TIME`, the committer time (UTC) of the commit its layer
/// holds: the environment commit in the environment layer, the base in the instance layer. Neither
/// it nor the CA bundle's variables end up in an image's configuration.
#[test]
fn setup_steps_see_the_commit_time_of_their_tree_and_images_keep_no_setup_variables() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = make_repos(tmp.path());
    let fixtures = read_records(&root().join("data/fixtures/instances.jsonl"));
    let first = fixtures.iter().find(|r| r.instance_id == "forge-fixtures__gostack-1").unwrap();
    // A later commit on gostack's main: an older author date and a committer date with an offset
    // (the committer time counts, written in UTC).
    let repo = repos.join("forge-fixtures/gostack");
    std::fs::write(repo.join("NOTES.md"), "later\n").unwrap();
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .arg("-C")
            .arg(&repo)
            .args(args)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_AUTHOR_NAME", "later")
            .env("GIT_AUTHOR_EMAIL", "later@swe-forge.invalid")
            .env("GIT_COMMITTER_NAME", "later")
            .env("GIT_COMMITTER_EMAIL", "later@swe-forge.invalid")
            .env("GIT_AUTHOR_DATE", "2023-05-06T07:08:09Z")
            .env("GIT_COMMITTER_DATE", "2024-03-04T05:06:07+02:00")
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {}", text(&out));
    };
    git(&["add", "NOTES.md"]);
    git(&["commit", "-q", "-m", "Later"]);
    let mut later = first.clone();
    later.base.sha = git_out(&repo, &["rev-parse", "HEAD"]);
    // The environment at the fixture's import (2024-01-01), the instance at the later commit; each
    // setup step appends the time it sees to an untracked file of the repository.
    let pipeline = tmp.path().join("times.toml");
    std::fs::write(
        &pipeline,
        format!(
            "name = \"times\"\n[source]\nrecords = \"-\"\nrepos = \"-\"\n[output]\nvalidated = \"-\"\n\
             [overrides.\"forge-fixtures/gostack\"]\nenv_commit = \"{}\"\n\
             setup = [\"echo \\\"$SWE_FORGE_COMMIT_TIME\\\" >> commit-times.txt\"]\n",
            first.base.sha
        ),
    )
    .unwrap();
    let done = validate(&[&later], &repos, &tmp.path().join("v"), Some(&pipeline));
    assert_eq!(done.len(), 1);
    let meta = done[0].swe_forge.clone().unwrap();
    let prov = meta.provenance.clone().unwrap_or_else(|| panic!("{meta:?}"));
    assert_eq!(prov.env_commit, first.base.sha, "{meta:?}");
    let image = meta.image.clone().unwrap();

    let (env_times, code) = in_image(&prov.env_image, "cat /testbed/commit-times.txt");
    assert_eq!(code, Some(0), "{env_times}");
    assert_eq!(env_times, "2024-01-01T00:00:00Z");
    let (times, code) = in_image(&image, "cat /testbed/commit-times.txt && git -C /testbed ls-files | wc -l");
    assert_eq!(code, Some(0), "{times}");
    assert_eq!(times.lines().collect::<Vec<_>>(), ["2024-01-01T00:00:00Z", "2024-03-04T03:06:07Z", "5"], "{times}");

    // The setup steps' variables (the commit time; the CA bundle's, the run used one) are not in
    // the images' configuration, nor in a shell started in them.
    let setup_vars: Vec<String> = swe_forge_docker::CaBundle::env()
        .iter()
        .map(|kv| kv.split_once('=').unwrap().0.to_owned())
        .chain([swe_forge_validate::COMMIT_TIME_VAR.to_owned()])
        .collect();
    for img in [&prov.env_image, &image] {
        let env = config_env(img);
        assert!(env.iter().any(|kv| kv.starts_with("GOTOOLCHAIN=")), "{img}: the toolchain's env is kept: {env:?}");
        for kv in &env {
            let key = kv.split_once('=').map_or(kv.as_str(), |(k, _)| k);
            assert!(!setup_vars.iter().any(|v| v == key), "{img}: {kv} in the image config");
        }
        let (shell_env, _) = in_image(img, "env");
        assert!(!shell_env.contains("SWE_FORGE_"), "{img}: {shell_env}");
    }
}

#[test]
fn a_cmake_test_patch_that_calls_what_only_the_fix_adds_fails_instead_of_running_the_old_binary_and_tests_off_by_default_are_built_with_the_cis_options()
 {
    // One ctest test runs the whole test binary (as cxxopts's `options` does). The test patch
    // calls `sub`, which only the fix declares: in the test run the binary does not build, and
    // the environment's binary of the base must not stand in for it (its test is then not run,
    // and set apart). The tests are behind an
    // option that is off by default (as cxxopts's were until 2019): the setup turns it on. The
    // public header is copied into the build folder at configure time and the tests compile
    // against that copy (as jansson's `file(COPY ...)` of `src/jansson.h`, PR 505): the fix's new
    // declaration reaches the tests only when the run configures again. A second option, which
    // no name rule knows, is one the project's CI passes (`-DCALC_WITH_CHECKS=ON` in its
    // workflow): the setup takes it from there. A third is CTest's `BUILD_TESTING`, declared off
    // in the cache (as gflags' own macro does): the setup turns it on.
    let tmp = tempfile::tempdir().unwrap();
    let repos = tmp.path().join("repos");
    let cmake = "cmake_minimum_required(VERSION 3.10)\nproject(calc CXX)\nenable_testing()\n\
file(COPY src/calc.h DESTINATION ${CMAKE_BINARY_DIR}/include)\n\
option(CALC_BUILD_TESTS \"Set to ON to build tests\" OFF)\n\
option(CALC_WITH_CHECKS \"Set to ON to build the checks\" OFF)\n\
set(BUILD_TESTING OFF CACHE BOOL \"CTest's switch, declared off\")\n\
if(CALC_BUILD_TESTS AND CALC_WITH_CHECKS AND BUILD_TESTING)\n\
  add_executable(tests src/calc.cpp test/tests.cpp)\n\
  target_include_directories(tests PRIVATE ${CMAKE_BINARY_DIR}/include)\n\
  add_test(NAME unit COMMAND tests)\nendif()\n";
    let header = |extra: &str| format!("int add(int, int);\n{extra}");
    let calc = |extra: &str| format!("#include \"calc.h\"\nint add(int a, int b) {{ return a + b; }}\n{extra}");
    let tests = |checks: &str| {
        format!("#include <calc.h>\n\nint main() {{\n    if (add(2, 3) != 5) return 1;\n{checks}    return 0;\n}}\n")
    };
    let fx = crate::toolchains::fixture(
        &repos.join("forge-fixtures/newapi"),
        "2024-03-01T00:00:00Z",
        &[
            ("CMakeLists.txt", cmake),
            (
                ".github/workflows/ci.yml",
                "jobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: cmake -S . -B build -DCALC_WITH_CHECKS=ON -DCALC_SANITIZE=ON\n      - run: cmake --build build && ctest --test-dir build\n",
            ),
            ("src/calc.h", &header("")),
            ("src/calc.cpp", &calc("")),
            ("test/tests.cpp", &tests("")),
        ],
        &[("test/tests.cpp", &tests("    if (sub(5, 3) != 2) return 1;\n"))],
        &[
            ("src/calc.h", &header("int sub(int, int);\n")),
            ("src/calc.cpp", &calc("int sub(int a, int b) { return a - b; }\n")),
        ],
    );
    let inst = crate::toolchains::instance("forge-fixtures", "newapi", 2, fx);
    let out = validate(&[&inst], &repos, &tmp.path().join("out"), None);
    let r = &out[0];
    // The test run's binary did not build: ctest says `Not Run`, and `unit`, which passed at the
    // base and did not run with the test patch, is set apart (never FAIL_TO_PASS); run from
    // the environment's base build it would have passed (PASS_TO_PASS).
    let meta = r.swe_forge.as_ref().unwrap();
    assert_eq!(crate::pipeline::reasons(r), [swe_forge_core::RejectReason::FixedTestsPassedAtBase], "{meta:?}");
    let labels = meta.labels.as_ref().unwrap();
    assert_eq!(labels.not_run_in_test.keys().collect::<Vec<_>>(), ["unit"], "{labels:?}");
    assert!(r.p2p_tests.is_empty() && r.f2p_tests.is_empty(), "{:?}", r.p2p_tests);
    let provenance = meta.provenance.as_ref().unwrap();
    assert_eq!(provenance.recipe, "c-cmake");
    assert_eq!(
        provenance.requested_versions.get(".github/workflows/ci.yml cmake -D").map(String::as_str),
        Some("-DCALC_WITH_CHECKS=ON"),
        "the CI's option is recorded, its sanitizer left out: {:?}",
        provenance.requested_versions
    );
    assert!(
        provenance
            .test_command_notes
            .iter()
            .any(|n| n == "cmake -D `-DCALC_WITH_CHECKS=ON` from the CI (.github/workflows/ci.yml job test)"),
        "{:?}",
        provenance.test_command_notes
    );
}

/// A C++ project whose CI has one job per configuration (issue #56): `precompiled` and
/// `single-file` each pass one of two options its CMakeLists declares mutually exclusive, `cuda`
/// enables the CUDA language (no nvcc here). The options come from one job, never the union of
/// all three (which stops at the FATAL_ERROR): the plainest, `precompiled`, whose configure
/// fails here (its option asks for a package the CI's runner has and no image here does), so the
/// setup is tried again with the next-plainest job's, `single-file`, and the record is accepted
/// with those; the provenance names the job, its options and the attempt before. A second
/// repository fails to configure with any options: its `image_build_failed` record carries the
/// provenance gathered (recipe, every set tried, the setup's line that says why).
#[test]
fn cmake_options_come_from_one_ci_job_and_a_configure_that_fails_with_them_tries_fewer() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = tmp.path().join("repos");
    let cmake = "cmake_minimum_required(VERSION 3.10)\nproject(shapes CXX)\nenable_testing()\n\
option(SHAPES_BUILD_TESTS \"Build the tests\" OFF)\noption(SHAPES_PRECOMPILE \"Precompiled headers\" OFF)\n\
option(SHAPES_SINGLE_FILE \"One translation unit\" OFF)\noption(SHAPES_CUDA \"CUDA kernels\" OFF)\n\
if(SHAPES_PRECOMPILE AND SHAPES_SINGLE_FILE)\n  message(FATAL_ERROR \"SHAPES_PRECOMPILE and SHAPES_SINGLE_FILE are mutually exclusive\")\nendif()\n\
if(SHAPES_PRECOMPILE)\n  find_package(PchTool REQUIRED)\nendif()\nif(SHAPES_CUDA)\n  enable_language(CUDA)\nendif()\n\
if(SHAPES_BUILD_TESTS)\n  add_executable(tests src/shapes.cpp test/tests.cpp)\n  target_include_directories(tests PRIVATE src)\n\
  add_test(NAME unit COMMAND tests)\nendif()\n";
    let job = |name: &str, options: &str| {
        format!(
            "  {name}:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n      - name: Configure\n        run: cmake -S . -B build -DSHAPES_BUILD_TESTS=ON {options}\n      - run: cmake --build build\n      - run: cd build && ctest --output-on-failure\n"
        )
    };
    let workflow = format!(
        "name: CI\non: [push, pull_request]\njobs:\n{}{}{}",
        job("precompiled", "-DSHAPES_PRECOMPILE=ON"),
        job("single-file", "-DSHAPES_SINGLE_FILE=ON"),
        job("cuda", "-DSHAPES_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=75"),
    );
    let header = "int area(int, int);\n";
    let shapes = |body: &str| format!("#include \"shapes.h\"\nint area(int w, int h) {{ return {body}; }}\n");
    let tests = |checks: &str| {
        format!(
            "#include \"shapes.h\"\n\nint main() {{\n    if (area(2, 3) != 6) return 1;\n{checks}    return 0;\n}}\n"
        )
    };
    let fx = crate::toolchains::fixture(
        &repos.join("forge-fixtures/shapes"),
        "2024-03-01T00:00:00Z",
        &[
            ("CMakeLists.txt", cmake),
            (".github/workflows/ci.yml", &workflow),
            ("src/shapes.h", header),
            ("src/shapes.cpp", &shapes("w * h")),
            ("test/tests.cpp", &tests("")),
        ],
        // The test patch builds without the fix (a target that does not build would be `Not Run`
        // with it, set apart under the strict rule): a shape of negative width has no area.
        &[("test/tests.cpp", &tests("    if (area(-2, 3) != 0) return 1;\n"))],
        &[("src/shapes.cpp", &shapes("w < 0 || h < 0 ? 0 : w * h"))],
    );
    let broken = "cmake_minimum_required(VERSION 3.10)\nproject(broken CXX)\n\
message(FATAL_ERROR \"broken needs the vendor toolchain file\")\n";
    let bx = crate::toolchains::fixture(
        &repos.join("forge-fixtures/broken"),
        "2024-03-01T00:00:00Z",
        &[
            ("CMakeLists.txt", broken),
            (".github/workflows/ci.yml", &format!("jobs:\n{}", job("linux", "-DBROKEN_FAST=ON"))),
            ("src/a.cpp", "int a() { return 1; }\n"),
        ],
        &[("test/t.cpp", "int main() { return 0; }\n")],
        &[("src/a.cpp", "int a() { return 2; }\n")],
    );
    let inst = crate::toolchains::instance("forge-fixtures", "shapes", 3, fx);
    let failing = crate::toolchains::instance("forge-fixtures", "broken", 1, bx);
    let cheap = ["--evidence-runs", "0", "--hunk-runs", "0", "--layout-variants", "0"];
    let out = validate_with(&[&inst, &failing], &repos, &tmp.path().join("out"), None, &cheap);
    let r = out.iter().find(|r| r.repo == "shapes").unwrap();
    crate::toolchains::accepted(r);
    assert_eq!(r.f2p_tests.keys().collect::<Vec<_>>(), ["unit"], "{:?}", r.p2p_tests);
    let provenance = r.swe_forge.as_ref().unwrap().provenance.as_ref().unwrap();
    let ci = provenance.ci_options.as_ref().expect("the CI's options are recorded");
    assert_eq!(ci.tool, "cmake -D");
    assert_eq!(ci.job, ".github/workflows/ci.yml job single-file", "{ci:#?}");
    assert_eq!(ci.options, ["-DSHAPES_BUILD_TESTS=ON", "-DSHAPES_SINGLE_FILE=ON"]);
    assert!(ci.reason.starts_with("the plainest of 3 CI jobs that configure with cmake and run the tests"), "{ci:#?}");
    assert!(ci.reason.contains(".github/workflows/ci.yml job cuda (cuda*, 2 options)"), "{}", ci.reason);
    assert_eq!(ci.attempts.len(), 1, "{ci:#?}");
    assert_eq!(ci.attempts[0].job, ".github/workflows/ci.yml job precompiled");
    assert_eq!(ci.attempts[0].options, ["-DSHAPES_BUILD_TESTS=ON", "-DSHAPES_PRECOMPILE=ON"]);
    assert!(ci.attempts[0].error.starts_with("CMake Error at CMakeLists.txt:"), "{:?}", ci.attempts[0]);
    assert!(
        provenance.test_command_notes.iter().any(|n| n
            == "cmake -D `-DSHAPES_BUILD_TESTS=ON -DSHAPES_SINGLE_FILE=ON` from the CI (.github/workflows/ci.yml job single-file)"),
        "{:?}",
        provenance.test_command_notes
    );
    assert_eq!(provenance.setup_error, "");

    let f = out.iter().find(|r| r.repo == "broken").unwrap();
    let meta = f.swe_forge.as_ref().unwrap();
    assert_eq!(meta.rejections[0].reason, swe_forge_core::RejectReason::ImageBuildFailed, "{:?}", meta.rejections);
    let provenance = meta.provenance.as_ref().expect("a record whose image failed carries its provenance");
    assert_eq!(provenance.recipe, "c-cmake");
    assert!(provenance.lockfiles.contains_key("CMakeLists.txt"), "{provenance:#?}");
    assert!(
        provenance
            .setup_error
            .starts_with("CMake Error at CMakeLists.txt:3 (message): broken needs the vendor toolchain file"),
        "{provenance:#?}"
    );
    let ci = provenance.ci_options.as_ref().unwrap();
    let tried: Vec<(&str, &[String])> = ci.attempts.iter().map(|a| (a.job.as_str(), a.options.as_slice())).collect();
    assert_eq!(
        tried,
        [
            (
                ".github/workflows/ci.yml job linux",
                &["-DSHAPES_BUILD_TESTS=ON".to_owned(), "-DBROKEN_FAST=ON".to_owned()] as &[String]
            ),
            ("the test switches of .github/workflows/ci.yml job linux", &["-DSHAPES_BUILD_TESTS=ON".to_owned()]),
        ],
        "{ci:#?}"
    );
    assert_eq!((ci.job.as_str(), ci.options.len()), ("none (the recipe's own options)", 0));
}

/// An autotools project that commits a `configure` made by the tools of its time, which fails
/// here (exit 2, as libtool-era scripts of 2014-2019 do on today's tools): the setup regenerates
/// the build system with `autoreconf -fi`, configures again, and says so in the provenance. The
/// options the project's CI configures with (`--enable-checks`, a switch `configure.ac` declares,
/// off by default) go to both tries. It declares AM_MAINTAINER_MODE (make's rebuild rules off by
/// default): the test patch's new check, added to `Makefile.am`, is built and run all the same.
/// The fix adds `AM_PROG_AR` to `configure.ac` (as libconfuse's PR 36 does), whose `ar-lib` the
/// tree lacks: make's rebuild rules stop on it, and the fix run regenerates and checks again.
#[test]
fn a_committed_configure_that_fails_is_regenerated_with_autoreconf_and_the_cis_switches_are_passed() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = tmp.path().join("repos");
    let dir = repos.join("forge-fixtures/oldconf");
    let configure_ac = "AC_INIT([oldconf], [0.1.0])\nAM_INIT_AUTOMAKE([foreign subdir-objects])\nAM_MAINTAINER_MODE\nAC_PROG_CC\n\
AC_ARG_ENABLE([checks], [AS_HELP_STRING([--enable-checks], [build the checks])], [], [enable_checks=no])\n\
AM_CONDITIONAL([CHECKS], [test \"x$enable_checks\" = xyes])\nAC_CONFIG_FILES([Makefile])\nAC_OUTPUT\n";
    let makefile_am = |extra: &str| {
        format!(
            "if CHECKS\ncheck_PROGRAMS = tests/test_add{extra}\ntests_test_add_SOURCES = tests/test_add.c src/add.c\nTESTS = $(check_PROGRAMS)\nendif\n"
        )
    };
    let add = |body: &str| format!("int add(int a, int b) {{ return {body}; }}\n");
    let test = |checks: &str| {
        format!("int add(int, int);\nint main(void) {{\n    if (add(2, 2) != 4) return 1;\n{checks}    return 0;\n}}\n")
    };
    let (_, test_patch, fix_patch) = crate::toolchains::fixture(
        &dir,
        "2016-05-01T00:00:00Z",
        &[
            ("configure.ac", configure_ac),
            ("Makefile.am", &makefile_am("")),
            ("configure", "#!/bin/sh\necho 'ltmain.sh: version mismatch (made by libtool 1.5.26)' >&2\nexit 2\n"),
            (
                ".travis.yml",
                "language: c\nscript:\n  - autoreconf -fi && ./configure --enable-checks --enable-coverage && make check\n",
            ),
            ("src/add.c", &add("a + a")),
            ("tests/test_add.c", &test("")),
        ],
        &[
            ("tests/test_add.c", &test("    if (add(2, 3) != 5) return 1;\n")),
            ("Makefile.am", &makefile_am(" tests/test_zero\ntests_test_zero_SOURCES = tests/test_zero.c src/add.c")),
            ("tests/test_zero.c", "int add(int, int);\nint main(void) { return add(0, 7) != 7; }\n"),
        ],
        &[
            ("src/add.c", &add("a + b")),
            ("configure.ac", &configure_ac.replace("AC_PROG_CC\n", "AC_PROG_CC\nAM_PROG_AR\n")),
        ],
    );
    // The committed configure is executable, as a project's is.
    swe_forge_test_support::git(&dir, &["update-index", "--chmod=+x", "configure"]);
    swe_forge_test_support::git_at(&dir, "2016-05-01T00:00:00Z", &["commit", "-q", "--amend", "-m", "base"]);
    let base = swe_forge_test_support::git(&dir, &["rev-parse", "HEAD"]);
    let inst = crate::toolchains::instance("forge-fixtures", "oldconf", 3, (base, test_patch, fix_patch));
    let out = validate(&[&inst], &repos, &tmp.path().join("out"), None);
    let r = &out[0];
    crate::toolchains::accepted(r);
    assert_eq!(r.f2p_tests.keys().collect::<Vec<_>>(), ["tests/test_add", "tests/test_zero"], "{:?}", r.p2p_tests);
    let fix_log =
        std::fs::read_to_string(tmp.path().join("out/validated.work/logs").join(&r.instance_id).join("fix.log"))
            .unwrap();
    assert!(fix_log.contains("required file './ar-lib' not found"), "{fix_log}");
    assert!(fix_log.contains("swe-forge: make stopped on a file automake --add-missing installs"), "{fix_log}");
    let provenance = r.swe_forge.as_ref().unwrap().provenance.as_ref().unwrap();
    assert_eq!(
        provenance.setup_notes,
        ["configure failed; the build system was regenerated with autoreconf -fi and configured again"]
    );
    assert_eq!(
        provenance.requested_versions.get(".travis.yml configure").map(String::as_str),
        Some("--enable-checks"),
        "{:?}",
        provenance.requested_versions
    );
}

/// A setup that fails in a submodule no local copy holds (its folder is empty in the image; the
/// build's header in `extlib/lib/include` is not found, as toml11's `nlohmann/json.hpp` was) is
/// rejected `needs_network` with the submodule's path and URL, not `image_build_failed`.
#[test]
fn a_setup_that_fails_in_a_submodule_without_a_local_copy_needs_the_network() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = tmp.path().join("repos");
    let dir = repos.join("forge-fixtures/withsub");
    let date = "2020-01-01T00:00:00Z";
    let cmake = "cmake_minimum_required(VERSION 3.10)\nproject(withsub C)\nenable_testing()\nadd_executable(tests tests.c)\n\
target_include_directories(tests PRIVATE extlib/lib/include)\nadd_test(NAME t COMMAND tests)\n";
    let tests = |v: &str| format!("#include \"lib.h\"\nint main(void) {{ return LIB_VALUE != {v}; }}\n");
    let (_, test_patch, fix_patch) = crate::toolchains::fixture(
        &dir,
        date,
        &[
            ("CMakeLists.txt", cmake),
            (
                ".gitmodules",
                "[submodule \"extlib/lib\"]\n\tpath = extlib/lib\n\turl = https://github.invalid/forge/lib.git\n",
            ),
            ("tests.c", &tests("1")),
        ],
        &[("tests.c", &tests("2"))],
        &[("CMakeLists.txt", &format!("{cmake}# fixed\n"))],
    );
    let pinned = "0123456789abcdef0123456789abcdef01234567";
    swe_forge_test_support::git(
        &dir,
        &["update-index", "--add", "--cacheinfo", &format!("160000,{pinned},extlib/lib")],
    );
    swe_forge_test_support::git_at(&dir, date, &["commit", "-q", "--amend", "-m", "base"]);
    let base = swe_forge_test_support::git(&dir, &["rev-parse", "HEAD"]);
    let inst = crate::toolchains::instance("forge-fixtures", "withsub", 7, (base, test_patch, fix_patch));
    let out = validate(&[&inst], &repos, &tmp.path().join("out"), None);
    let meta = out[0].swe_forge.as_ref().unwrap();
    let r = &meta.rejections[0];
    assert_eq!(r.reason, swe_forge_core::RejectReason::NeedsNetwork, "{r:?}");
    assert!(
        r.detail.starts_with(
            "the setup needs the submodule extlib/lib (https://github.invalid/forge/lib.git), which no local copy holds"
        ),
        "{r:?}"
    );
}

/// `<dir>/<name>.toml`: a pipeline with `validate` (a `[validate]` table, or nothing) whose
/// override of forge-fixtures/gostack is `line`.
fn gostack_pipeline(dir: &Path, name: &str, validate: &str, line: &str) -> std::path::PathBuf {
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(
        &path,
        format!(
            "name = \"{name}\"\n[source]\nrecords = \"-\"\nrepos = \"-\"\n[output]\nvalidated = \"-\"\n{validate}\
             [overrides.\"forge-fixtures/gostack\"]\n{line}\n"
        ),
    )
    .unwrap();
    path
}

/// A setup that needs a host this machine cannot reach (here a clone from `github.invalid`, as a
/// submodule or a SNAPSHOT parent would) is rejected `needs_network`, naming the host, not
/// `image_build_failed`; a host the pipeline lists as reachable is a build failure again.
#[test]
fn a_setup_that_cannot_reach_a_host_is_rejected_needs_network_with_the_host() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = make_repos(tmp.path());
    let fixtures = read_records(&root().join("data/fixtures/instances.jsonl"));
    let inst = fixtures.iter().find(|r| r.instance_id == "forge-fixtures__gostack-1").unwrap();
    let pipeline = |name: &str, validate: &str| {
        gostack_pipeline(
            tmp.path(),
            name,
            validate,
            "setup = [\"git ls-remote https://github.invalid/forge-fixtures/parent.git\"]",
        )
    };
    let rejection = |dir: &str, p: &Path| {
        let done = validate(&[inst], &repos, &tmp.path().join(dir), Some(p));
        let meta = done[0].swe_forge.clone().unwrap();
        assert_eq!(meta.status, ValidationStatus::Rejected, "{meta:?}");
        meta.rejections[0].clone()
    };
    let r = rejection("offline", &pipeline("offline", ""));
    assert_eq!(r.reason, swe_forge_core::RejectReason::NeedsNetwork, "{r:?}");
    assert!(
        r.detail.starts_with("the setup could not reach https://github.invalid/forge-fixtures/parent.git"),
        "{}",
        r.detail
    );
    let r = rejection("listed", &pipeline("listed", "[validate]\nreachable_hosts = [\"github.invalid\"]\n"));
    assert_eq!(r.reason, swe_forge_core::RejectReason::ImageBuildFailed, "{r:?}");
}

/// A test run that needs a host (its test data cloned at test time, where toml11's CI clones it
/// before the tests): runs
/// have no network, no test runs, and the instance is rejected `needs_network` naming the URL,
/// ahead of the keep rule it broke; with the host listed as reachable the keep rule alone stands.
#[test]
fn a_test_run_that_cannot_reach_a_host_is_rejected_needs_network_with_the_host() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = make_repos(tmp.path());
    let fixtures = read_records(&root().join("data/fixtures/instances.jsonl"));
    let inst = fixtures.iter().find(|r| r.instance_id == "forge-fixtures__gostack-1").unwrap();
    let pipeline = |name: &str, validate: &str| {
        let clone = "git clone -q https://github.invalid/forge-fixtures/testdata.git /tmp/testdata";
        gostack_pipeline(
            tmp.path(),
            name,
            validate,
            &format!("test_command = \"{clone} && go test -json -count=1 ./...\""),
        )
    };
    let rejections = |dir: &str, p: &Path| {
        let done = validate_with(&[inst], &repos, &tmp.path().join(dir), Some(p), &["--hunk-runs", "0"]);
        let meta = done[0].swe_forge.clone().unwrap();
        assert_eq!(meta.status, ValidationStatus::Rejected, "{meta:?}");
        meta.rejections.iter().map(|r| (r.reason, r.detail.clone())).collect::<Vec<_>>()
    };
    let r = rejections("offline", &pipeline("offline", ""));
    assert_eq!(r[0].0, swe_forge_core::RejectReason::NeedsNetwork, "{r:?}");
    assert!(
        r[0].1.starts_with("the fix run could not reach https://github.invalid/forge-fixtures/testdata.git"),
        "{}",
        r[0].1
    );
    // No test printed a result and no phase's command passed: the suite never ran, with the exit
    // codes of the three runs (git's 128).
    assert_eq!(r[1].0, swe_forge_core::RejectReason::SuiteNeverRan, "{r:?}");
    assert!(r[1].1.starts_with("no phase reported a test (exit codes 128, 128, 128 "), "{}", r[1].1);
    let r = rejections("listed", &pipeline("listed", "[validate]\nreachable_hosts = [\"github.invalid\"]\n"));
    assert_eq!(r.iter().map(|(reason, _)| *reason).collect::<Vec<_>>(), [swe_forge_core::RejectReason::SuiteNeverRan]);
}

/// `--work-dir` beats the pipeline file's `[validate] work_dir`: the run's store and logs go where
/// the command line says, and the pipeline's folder is not touched.
#[test]
fn the_work_dir_flag_beats_the_pipeline_file() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = make_repos(tmp.path());
    let fixtures = read_records(&root().join("data/fixtures/instances.jsonl"));
    let inst = fixtures.iter().find(|r| r.instance_id == "forge-fixtures__gostack-4").unwrap();
    let pipeline = tmp.path().join("p.toml");
    std::fs::write(
        &pipeline,
        "name = \"p\"\n[source]\nrecords = \"-\"\nrepos = \"-\"\n[validate]\nwork_dir = \"from-pipeline\"\n[output]\nvalidated = \"-\"\n",
    )
    .unwrap();
    let flag = tmp.path().join("from-flag");
    let done =
        validate_with(&[inst], &repos, &tmp.path().join("v"), Some(&pipeline), &["--work-dir", flag.to_str().unwrap()]);
    assert_eq!(done.len(), 1);
    assert!(flag.join("state.sqlite").is_file(), "the store is where --work-dir says");
    assert!(!tmp.path().join("from-pipeline").exists(), "the pipeline's work folder was used");
}
