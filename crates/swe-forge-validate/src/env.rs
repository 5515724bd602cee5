//! Which commit each instance's repository environment is built at. The environment (toolchain +
//! the repository at that commit + the recipe's setup: dependencies fetched, build warmed) is
//! shared by every instance of the repository built at the same commit; an instance adds only what
//! differs between that commit and its own base.
//!
//! Rule: a per-repository override `env_commit`, when it is an ancestor of (or equal to) the base;
//! otherwise the oldest base commit (by committer time; among equal times an ancestor of the others,
//! then the smallest sha) of the repository's records that is an ancestor of (or equal to) this
//! base. Never a commit the base does not contain: nothing of the future enters an image.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use swe_forge_core::Instance;
use swe_forge_git::SourceRepo;

use crate::RecipeOverride;

/// The environment commit of every record whose repository and base commit are available:
/// instance id -> commit. Computed over all the records of a run (before any filter), so an
/// instance validated alone gets the same environment.
pub fn plan_env_commits(
    records: &[Instance],
    repos_root: &Path,
    overrides: &BTreeMap<String, RecipeOverride>,
) -> BTreeMap<String, String> {
    let mut by_repo: BTreeMap<(String, String), Vec<&Instance>> = BTreeMap::new();
    for r in records {
        by_repo.entry((r.org.clone(), r.repo.clone())).or_default().push(r);
    }
    let mut out = BTreeMap::new();
    for ((org, name), insts) in by_repo {
        let Ok(repo) = SourceRepo::locate(repos_root, &org, &name) else { continue };
        let over = overrides.get(&format!("{org}/{name}"));
        // Distinct base commits, oldest first.
        let mut bases: Vec<(i64, String)> = insts
            .iter()
            .filter_map(|i| repo.commit(&i.base.sha).ok().map(|c| (c.committer().when().seconds(), c.id().to_string())))
            .collect();
        bases.sort();
        bases.dedup();
        let mut cache: HashMap<String, String> = HashMap::new();
        for inst in insts {
            let Ok(base) = repo.commit(&inst.base.sha).map(|c| c.id().to_string()) else { continue };
            let forced = over
                .and_then(|o| o.env_commit_for(inst))
                .and_then(|sha| repo.commit(&sha).ok().map(|c| c.id().to_string()))
                .filter(|c| repo.contains(&base, c));
            let env = match forced {
                Some(c) => c,
                None => cache.entry(base.clone()).or_insert_with(|| oldest_ancestor(&repo, &base, &bases)).clone(),
            };
            out.insert(inst.instance_id.clone(), env);
        }
    }
    out
}

/// The oldest of `bases` (sorted by time, then sha) that `base` contains; `base` itself at worst.
fn oldest_ancestor(repo: &SourceRepo, base: &str, bases: &[(i64, String)]) -> String {
    let mut i = 0;
    while i < bases.len() {
        let time = bases[i].0;
        let same_time = bases[i..].iter().take_while(|(t, _)| *t == time).count();
        let group: Vec<&String> =
            bases[i..i + same_time].iter().map(|(_, c)| c).filter(|c| repo.contains(base, c)).collect();
        i += same_time;
        if let Some(first) = group.first() {
            // Among commits of one time, one that the others contain; else the smallest sha.
            let root = group.iter().find(|c| group.iter().all(|o| repo.contains(o, c)));
            return (*root.unwrap_or(first)).clone();
        }
    }
    base.to_owned()
}

#[cfg(test)]
mod tests {

    use super::*;

    use swe_forge_test_support::git_at as git;

    fn inst(number: u64, sha: &str) -> Instance {
        let mut i = swe_forge_test_support::record("o", "r", number);
        i.base.sha = sha.to_owned();
        i
    }

    #[test]
    fn the_oldest_base_the_instance_contains_and_never_a_newer_one() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("o/r");
        std::fs::create_dir_all(&dir).unwrap();
        git(&dir, "2024-01-01T00:00:00Z", &["init", "-q"]);
        let commit = |date: &str, msg: &str| {
            git(&dir, date, &["commit", "-q", "--allow-empty", "-m", msg]);
            git(&dir, date, &["rev-parse", "HEAD"])
        };
        let a = commit("2024-01-01T00:00:00Z", "a");
        let a2 = commit("2024-01-01T00:00:00Z", "a2"); // same time as a, a descendant of it
        let b = commit("2024-01-02T00:00:00Z", "b");
        let c = commit("2024-01-03T00:00:00Z", "c");
        // A side branch from a: it does not contain b.
        git(&dir, "2024-01-04T00:00:00Z", &["checkout", "-q", "-b", "side", &a]);
        let s = commit("2024-01-04T00:00:00Z", "s");
        let records = [inst(1, &c), inst(2, &b), inst(3, &s), inst(4, &a2), inst(5, &"0".repeat(40))];
        let plan = plan_env_commits(&records, tmp.path(), &BTreeMap::new());
        // a is not a base: the oldest base contained is a2 for the main line, s (itself) for the side.
        assert_eq!(plan["o__r-1"], a2);
        assert_eq!(plan["o__r-2"], a2);
        assert_eq!(plan["o__r-4"], a2);
        assert_eq!(plan["o__r-3"], s, "a2 is not an ancestor of the side branch");
        assert!(!plan.contains_key("o__r-5"), "a missing base gets no plan");
        // Equal times: the ancestor wins whatever the order of the records.
        let plan = plan_env_commits(&[inst(2, &a2), inst(1, &a)], tmp.path(), &BTreeMap::new());
        assert_eq!(plan["o__r-2"], a);
        // An override applies where it is an ancestor, never to an older base.
        let over =
            BTreeMap::from([("o/r".to_owned(), RecipeOverride { env_commit: Some(b.clone()), ..Default::default() })]);
        let plan = plan_env_commits(&records, tmp.path(), &over);
        assert_eq!(plan["o__r-1"], b);
        assert_eq!(plan["o__r-2"], b);
        assert_eq!(plan["o__r-4"], a2, "b is newer than a2");
        assert_eq!(plan["o__r-3"], s);
    }
}
