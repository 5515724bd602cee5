//! The package manager a JavaScript repository names, on the real engine: a yarn project
//! (`forge-fixtures/jsstore`, a committed `yarn.lock` whose `react` is older than the newest its
//! range admits and whose peer ranges npm refuses: `npm install` stops at `ERESOLVE`) is installed
//! with yarn 1 from its lockfile as committed, its test script (which calls `yarn` itself) runs
//! as `yarn test`, and the provenance says which manager, from what, and how.

use swe_forge_core::ValidationStatus;

use crate::environments::{in_image, validate_with};
use crate::support::{make_repos, read_records, root};

#[test]
fn a_yarn_project_is_installed_with_yarn_from_its_committed_lockfile() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = make_repos(tmp.path());
    let records = read_records(&root().join("data/fixtures/engine-instances.jsonl"));
    let inst = records.iter().find(|r| r.instance_id == "forge-fixtures__jsstore-4").unwrap();
    let done = validate_with(&[inst], &repos, &tmp.path().join("out"), None, &["--hunk-runs", "0"]);
    let r = &done[0];
    assert_eq!(r.status(), ValidationStatus::Accepted, "{:?}", r.swe_forge);
    let f2p: Vec<&str> = r.f2p_tests.keys().map(String::as_str).collect();
    assert!(f2p.iter().any(|t| t.contains("reset goes back to the initial state")), "{f2p:?}");
    // react as yarn.lock pins it (19.0.0; npm, were it to install, would not settle the peers).
    let p2p: Vec<&str> = r.p2p_tests.keys().map(String::as_str).collect();
    assert!(p2p.iter().any(|t| t.contains("react is the version yarn.lock pins")), "{p2p:?}");
    let meta = r.swe_forge.as_ref().unwrap();
    assert_eq!(meta.test_command.as_deref(), Some("yarn test"), "{meta:?}");
    let prov = meta.provenance.as_ref().unwrap();
    assert_eq!(prov.requested_versions.get("yarn.lock").map(String::as_str), Some("yarn lockfile v1"), "{prov:?}");
    assert!(
        prov.test_command_notes.iter().any(|n| n.starts_with("package manager yarn@1.")),
        "{:?}",
        prov.test_command_notes
    );
    let (versions, code) = in_image(
        meta.image.as_deref().unwrap(),
        "cd /testbed && yarn --version && node -p \"require('react/package.json').version\" && git status --porcelain && ls -a /root /usr/local/share | grep -c -i yarn-cache || true",
    );
    assert_eq!(code, Some(0), "{versions}");
    let lines: Vec<&str> = versions.lines().collect();
    assert!(lines[0].starts_with("1."), "yarn on PATH in the image: {versions}");
    assert_eq!(&lines[1..], ["19.0.0", "0"], "the lockfile's react, the tree as committed, no yarn cache: {versions}");
}
