//! The fixture records agree with their sources and with the repositories the script makes.

use std::process::Command;

use crate::support::{make_repos, read_records, root};

#[test]
fn fixture_records_match_sources_and_repositories() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = make_repos(tmp.path());
    let records = read_records(&root().join("data/fixtures/instances.jsonl"));
    assert!(records.len() >= 6);
    // The records only engine tests validate, outside the demo, agree the same way.
    let engine_only = read_records(&root().join("data/fixtures/engine-instances.jsonl"));
    assert!(!engine_only.is_empty());
    for r in records.iter().chain(&engine_only) {
        let src = root().join(format!("data/fixtures/src/{}__{}/pr-{}", r.org, r.repo, r.number));
        assert_eq!(r.test_patch, std::fs::read_to_string(src.join("test.patch")).unwrap(), "{}", r.instance_id);
        assert_eq!(r.fix_patch, std::fs::read_to_string(src.join("fix.patch")).unwrap(), "{}", r.instance_id);
        // The base is a commit of main (the import, or a later one for a PR with a base.patch).
        let on_main = Command::new("git")
            .args(["-C"])
            .arg(repos.join(&r.org).join(&r.repo))
            .args(["merge-base", "--is-ancestor", &r.base.sha, "main"])
            .status()
            .unwrap();
        assert!(on_main.success(), "{}: base sha drifted", r.instance_id);
        assert_eq!(src.join("base.patch").exists(), r.number == 13 && r.repo == "jsduration", "{}", r.instance_id);
    }
}

#[test]
fn patch_checks_on_the_fixture_repositories() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = make_repos(tmp.path());
    let records = read_records(&root().join("data/fixtures/instances.jsonl"));
    let by_id = |id: &str| records.iter().find(|r| r.instance_id == id).unwrap();
    let repo = swe_forge_git::SourceRepo::locate(&repos, "forge-fixtures", "gostack").unwrap();
    let check = |id: &str| {
        let r = by_id(id);
        swe_forge_git::apply_patches(&repo, &r.base.sha, &[&r.test_patch, &r.fix_patch])
            .unwrap()
            .map(|_| ())
            .map_err(|f| f.index)
    };
    assert_eq!(check("forge-fixtures__gostack-1"), Ok(()));
    assert_eq!(check("forge-fixtures__gostack-3"), Err(0));
    assert_eq!(check("forge-fixtures__gostack-5"), Err(1));
    // The tree export holds every file of the base commit, with fixed metadata.
    let mut builder = tar::Builder::new(Vec::new());
    let tree = repo.commit(&by_id("forge-fixtures__gostack-1").base.sha).unwrap().tree_id();
    let stats = repo.write_tree_tar(tree, "repo", &mut builder).unwrap();
    assert_eq!(stats.files, 4);
    let bytes = builder.into_inner().unwrap();
    let mut archive = tar::Archive::new(bytes.as_slice());
    let mut names: Vec<String> =
        archive.entries().unwrap().map(|e| e.unwrap().path().unwrap().display().to_string()).collect();
    names.sort();
    assert_eq!(names, ["repo/README.md", "repo/go.mod", "repo/stack.go", "repo/stack_test.go"]);
}
