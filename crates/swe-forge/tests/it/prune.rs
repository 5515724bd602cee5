//! `swe-forge images prune` on the real engine. The fixture repository is copied under an org of
//! its own, so that the images in the command's scope (the repositories the kept records cover)
//! are this test's only: other tests build images of the fixtures at the same time.

use std::process::Command;

use swe_forge_core::Instance;

use crate::environments::validate;
use crate::support::{make_repos, read_records, root, swe_forge, text};

fn exists(image: &str) -> bool {
    Command::new("docker").args(["image", "inspect", image]).output().unwrap().status.success()
}

fn write(path: &std::path::Path, records: &[&Instance]) {
    swe_forge_core::write_jsonl(std::fs::File::create(path).unwrap(), records.iter().copied()).unwrap();
}

fn prune(keep: &std::path::Path, dry_run: bool) -> String {
    let mut args = vec!["images", "prune", "--keep", keep.to_str().unwrap()];
    if dry_run {
        args.push("--dry-run");
    }
    let o = swe_forge(&args);
    assert!(o.status.success(), "{}", text(&o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn prune_removes_the_images_no_kept_record_uses_and_nothing_else() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = make_repos(tmp.path());
    std::fs::create_dir_all(repos.join("prune-fixtures")).unwrap();
    let cp = Command::new("cp")
        .arg("-r")
        .arg(repos.join("forge-fixtures/gostack"))
        .arg(repos.join("prune-fixtures/gostack"))
        .output()
        .unwrap();
    assert!(cp.status.success(), "{}", text(&cp));
    let fixtures = read_records(&root().join("data/fixtures/instances.jsonl"));
    let records: Vec<Instance> = ["forge-fixtures__gostack-1", "forge-fixtures__gostack-2"]
        .iter()
        .map(|id| {
            let mut r = fixtures.iter().find(|r| r.instance_id == *id).unwrap().clone();
            r.org = "prune-fixtures".into();
            r.instance_id = r.expected_id();
            r
        })
        .collect();
    let input = tmp.path().join("records.jsonl");
    write(&input, &records.iter().collect::<Vec<_>>());
    // A clean slate: the images an earlier, interrupted run of this test left go first.
    prune(&input, false);
    let done = validate(&records.iter().collect::<Vec<_>>(), &repos, &tmp.path().join("v"), None);
    let image = |r: &Instance| r.swe_forge.as_ref().and_then(|m| m.image.clone()).expect("an image was built");
    let (one, two) = (image(&done[0]), image(&done[1]));
    let env = done[0].swe_forge.as_ref().unwrap().provenance.as_ref().unwrap().env_image.clone();
    assert!(one.starts_with("swe-forge/prune-fixtures__gostack:") && one != two, "{one} {two}");
    assert!(exists(&one) && exists(&two) && exists(&env));

    // Keeping the first record: the second's instance image goes, the shared environment stays.
    let keep = tmp.path().join("keep.jsonl");
    write(&keep, &[&done[0]]);
    let dry = prune(&keep, true);
    assert_eq!(dry.lines().collect::<Vec<_>>(), [format!("would remove instance    {two}")], "{dry}");
    assert!(exists(&two), "a dry run removes nothing");
    let wet = prune(&keep, false);
    assert_eq!(wet.lines().collect::<Vec<_>>(), [format!("removed instance    {two}")], "{wet}");
    assert!(!exists(&two) && exists(&one) && exists(&env));

    // Records of the repository without images (not validated): nothing of it is kept, the
    // environment and its source layer go too; another repository's images are out of scope.
    write(&keep, &records.iter().collect::<Vec<_>>());
    let all = prune(&keep, false);
    assert!(all.contains(&format!("removed instance    {one}")), "{all}");
    assert!(all.contains(&format!("removed environment {env}")), "{all}");
    assert!(all.contains("removed environment swe-forge/prune-fixtures__gostack:src-"), "{all}");
    assert!(all.lines().all(|l| l.contains("swe-forge/prune-fixtures__gostack:")), "{all}");
    assert!(!exists(&one) && !exists(&env));
}
