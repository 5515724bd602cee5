//! Which commit each instance's repository environment is built at. The environment (toolchain +
//! the repository at that commit + the recipe's setup: dependencies fetched, build warmed) is
//! shared by every instance of the repository built at the same commit; an instance adds only what
//! differs between that commit and its own base.
//!
//! Environments are keyed by what instances really share: the dependency fingerprint of the base
//! (a hash of the files the recipe's `fingerprint` patterns name: lockfiles, dependency manifests,
//! build files; the toolchain is in the environment's tag besides). Rule, over the repository's
//! distinct base commits from the oldest (by committer time; among equal times an ancestor of the
//! others first, then the smallest sha):
//! - a per-repository override `env_commit`, when it is an ancestor of (or equal to) the base, wins;
//! - else the oldest base of the same fingerprint that already has an environment and is an
//!   ancestor of (or equal to) this base;
//! - else, while the repository has fewer environments than its cap (`max_environments`, default
//!   [`DEFAULT_MAX_ENVIRONMENTS`]), a new environment at this base;
//! - else the nearest older environment that is an ancestor of this base (its instance layer runs
//!   the recipe's `refresh` commands first: see `images.rs` in `swe-forge-validate`); a base with no environment among its
//!   ancestors gets its own whatever the cap.
//!
//! Never a commit the base does not contain: nothing of the future enters an image.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use swe_forge_core::Instance;
use swe_forge_git::SourceRepo;

use swe_forge_config::RecipeOverride;

use crate::Recipe;

/// Environments per repository when its override does not say.
pub const DEFAULT_MAX_ENVIRONMENTS: usize = 4;

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
        let cap = over.and_then(|o| o.max_environments).unwrap_or(DEFAULT_MAX_ENVIRONMENTS).max(1);
        // Distinct base commits with their fingerprints, oldest first.
        let mut fingerprints: HashMap<String, String> = HashMap::new();
        let mut bases: Vec<(i64, String)> = Vec::new();
        for inst in &insts {
            let Ok(c) = repo.commit(&inst.base.sha) else { continue };
            let sha = c.id().to_string();
            if !fingerprints.contains_key(&sha) {
                let forced = over.and_then(|o| o.forced_recipe(inst));
                let patterns = fingerprint_patterns(&repo, &sha, forced.as_deref());
                fingerprints.insert(sha.clone(), fingerprint(&repo, &sha, &patterns));
                bases.push((c.committer().when().seconds(), sha));
            }
        }
        let ordered = oldest_first(&repo, bases);
        let chosen = choose_environments(&repo, &ordered, &fingerprints, cap);
        for inst in insts {
            let Ok(base) = repo.commit(&inst.base.sha).map(|c| c.id().to_string()) else { continue };
            let forced = over
                .and_then(|o| o.env_commit_for(inst))
                .and_then(|sha| repo.commit(&sha).ok().map(|c| c.id().to_string()))
                .filter(|c| repo.contains(&base, c));
            let env = forced.unwrap_or_else(|| chosen.get(&base).cloned().unwrap_or_else(|| base.clone()));
            out.insert(inst.instance_id.clone(), env);
        }
    }
    out
}

/// The fingerprint patterns of the recipe a commit builds with: the forced one, else the one
/// its build files name; none (every base shares) when neither is known.
fn fingerprint_patterns(repo: &SourceRepo, sha: &str, forced: Option<&str>) -> Vec<String> {
    let name = forced.map(str::to_owned).or_else(|| crate::detect::detect(repo, sha).recipe);
    name.and_then(|n| Recipe::named(&n).ok()).map(|r| r.fingerprint).unwrap_or_default()
}

/// The dependency fingerprint of commit `sha`: 16 hex digits of the sha256 of every file the
/// `patterns` match (path and blob id, in path order); empty when nothing is matched or there
/// are no patterns.
pub fn fingerprint(repo: &SourceRepo, sha: &str, patterns: &[String]) -> String {
    if patterns.is_empty() {
        return String::new();
    }
    let mut paths: Vec<String> = repo
        .paths_at(sha)
        .unwrap_or_default()
        .into_iter()
        .filter(|p| patterns.iter().any(|pat| path_matches(pat, p)))
        .collect();
    if paths.is_empty() {
        return String::new();
    }
    paths.sort();
    let lines: Vec<String> =
        paths.iter().map(|p| format!("{p} {}", repo.blob_id_at(sha, p).unwrap_or_default())).collect();
    let parts: Vec<&str> = lines.iter().map(String::as_str).collect();
    crate::sha256_hex(&parts)[..16].to_owned()
}

/// Whether `path` is one of the files fingerprint `patterns` match (see [`Recipe::fingerprint`]).
pub fn fingerprint_matches(patterns: &[String], path: &str) -> bool {
    patterns.iter().any(|pat| path_matches(pat, path))
}

/// Whether a patch's version of `path`, a file the fingerprint matches, is put in place for the
/// prefetch ([`Recipe::prefetch`], which runs with the network): manifests and lockfiles are; the
/// files that point a package manager at another registry, a wrapper, a plugin or a toolchain to
/// download are not (`.npmrc`, `.yarnrc*`, anything under `.yarn/`, `.pnpmfile.cjs`, `.nvmrc`,
/// `.node-version`, `.tool-versions`, `.cargo/config*`, `rust-toolchain*`, anything under
/// `.mvn/`): the base's stay in place.
pub fn prefetch_puts_in_place(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let dirs: Vec<&str> = path.split('/').rev().skip(1).collect();
    let config_name = name == ".npmrc"
        || name.starts_with(".yarnrc")
        || name.starts_with(".pnpmfile")
        || matches!(name, ".nvmrc" | ".node-version" | ".tool-versions")
        || name.starts_with("rust-toolchain")
        || (dirs.first() == Some(&".cargo") && name.starts_with("config"));
    !config_name && !dirs.iter().any(|d| matches!(*d, ".yarn" | ".mvn" | ".cargo"))
}

/// Whether `path` matches a fingerprint pattern (see [`Recipe::fingerprint`]).
fn path_matches(pattern: &str, path: &str) -> bool {
    if pattern.contains('/') {
        glob(pattern.as_bytes(), path.as_bytes())
    } else {
        glob(pattern.as_bytes(), path.rsplit('/').next().unwrap_or(path).as_bytes())
    }
}

/// `*` matches any run of bytes but `/`; everything else matches itself.
fn glob(p: &[u8], s: &[u8]) -> bool {
    match p.split_first() {
        None => s.is_empty(),
        Some((b'*', rest)) => (0..=s.len()).take_while(|&i| i == 0 || s[i - 1] != b'/').any(|i| glob(rest, &s[i..])),
        Some((c, rest)) => s.first() == Some(c) && glob(rest, &s[1..]),
    }
}

/// Distinct base commits sorted by committer time; among equal times a commit before every
/// commit that contains it, then by sha.
fn oldest_first(repo: &SourceRepo, mut bases: Vec<(i64, String)>) -> Vec<String> {
    bases.sort();
    let mut out = Vec::with_capacity(bases.len());
    let mut i = 0;
    while i < bases.len() {
        let time = bases[i].0;
        let n = bases[i..].iter().take_while(|(t, _)| *t == time).count();
        let mut group: Vec<String> = bases[i..i + n].iter().map(|(_, c)| c.clone()).collect();
        i += n;
        while !group.is_empty() {
            // The smallest sha none of the others is an ancestor of.
            let k = (0..group.len())
                .find(|&k| group.iter().enumerate().all(|(j, o)| j == k || !repo.contains(&group[k], o)))
                .unwrap_or(0);
            out.push(group.remove(k));
        }
    }
    out
}

/// base -> environment commit, by the rule of the module docs (overrides aside).
fn choose_environments(
    repo: &SourceRepo,
    ordered: &[String],
    fingerprints: &HashMap<String, String>,
    cap: usize,
) -> HashMap<String, String> {
    let mut envs: Vec<&String> = Vec::new();
    let mut chosen = HashMap::new();
    for base in ordered {
        let fp = &fingerprints[base];
        let ancestors: Vec<&String> = envs.iter().copied().filter(|e| repo.contains(base, e)).collect();
        let env = match ancestors.iter().find(|e| fingerprints[e.as_str()] == *fp) {
            Some(same) => (*same).clone(),
            None => match ancestors.last() {
                // The nearest older one: environments are kept in the order of their commits.
                Some(nearest) if envs.len() >= cap => (*nearest).clone(),
                _ => {
                    envs.push(base);
                    base.clone()
                }
            },
        };
        chosen.insert(base.clone(), env);
    }
    chosen
}

#[cfg(test)]
mod tests {

    use super::*;

    #[test]
    fn the_prefetch_puts_manifests_in_place_never_a_registry_or_toolchain_configuration() {
        let js = Recipe::named("js-jest").unwrap();
        for kept in ["package.json", "packages/a/package.json", "yarn.lock", "package-lock.json", "pnpm-lock.yaml"] {
            assert!(fingerprint_matches(&js.fingerprint, kept) && prefetch_puts_in_place(kept), "{kept}");
        }
        for p in ["go.mod", "go.sum", "sub/go.mod", "Cargo.toml", "Cargo.lock", "pom.xml", "config/x.json"] {
            assert!(prefetch_puts_in_place(p), "{p}");
        }
        for config in [
            ".npmrc",
            "packages/a/.npmrc",
            ".yarnrc",
            ".yarnrc.yml",
            ".yarn/releases/yarn-4.1.0.cjs",
            ".yarn/plugins/x.cjs",
            ".pnpmfile.cjs",
            ".nvmrc",
            ".node-version",
            ".tool-versions",
            ".cargo/config",
            ".cargo/config.toml",
            "crates/x/.cargo/config.toml",
            "rust-toolchain",
            "rust-toolchain.toml",
            ".mvn/extensions.xml",
            ".mvn/maven.config",
        ] {
            assert!(!prefetch_puts_in_place(config), "{config}");
        }
        // The JavaScript fingerprint holds some of them (an environment is not shared across
        // them): matched, and still not put in place.
        for config in [".npmrc", ".yarnrc.yml", ".nvmrc"] {
            assert!(fingerprint_matches(&js.fingerprint, config), "{config}");
        }
    }

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

    #[test]
    fn environments_follow_the_dependency_fingerprint_up_to_the_cap() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("o/r");
        std::fs::create_dir_all(dir.join("src")).unwrap();
        git(&dir, "2024-01-01T00:00:00Z", &["init", "-q"]);
        let commit = |date: &str, files: &[(&str, &str)]| {
            for (path, content) in files {
                std::fs::write(dir.join(path), content).unwrap();
                git(&dir, date, &["add", path]);
            }
            git(&dir, date, &["commit", "-q", "-m", date]);
            git(&dir, date, &["rev-parse", "HEAD"])
        };
        let manifest = |dep: &str| format!("[package]\nname = \"r\"\n[dependencies]\n{dep}\n");
        let a = commit("2024-01-01T00:00:00Z", &[("Cargo.toml", &manifest("")), ("src/lib.rs", "//! a\n")]);
        let b = commit("2024-01-02T00:00:00Z", &[("src/lib.rs", "//! b\n")]); // same fingerprint as a
        let c = commit("2024-01-03T00:00:00Z", &[("Cargo.toml", &manifest("x = \"1\""))]);
        let d = commit("2024-01-04T00:00:00Z", &[("src/lib.rs", "//! d\n")]); // as c
        let e = commit("2024-01-05T00:00:00Z", &[("Cargo.toml", &manifest("y = \"1\""))]);
        let f = commit("2024-01-06T00:00:00Z", &[("Cargo.toml", &manifest(""))]); // a's again
        let repo = SourceRepo::open(&dir).unwrap();
        let pats = Recipe::named("rust").unwrap().fingerprint;
        assert_eq!(fingerprint(&repo, &a, &pats), fingerprint(&repo, &b, &pats));
        assert_eq!(fingerprint(&repo, &a, &pats), fingerprint(&repo, &f, &pats));
        assert_ne!(fingerprint(&repo, &a, &pats), fingerprint(&repo, &c, &pats));
        assert_eq!(fingerprint(&repo, &a, &pats).len(), 16);
        assert_eq!(fingerprint(&repo, &a, &[]), "", "no patterns: one fingerprint for all");

        let records: Vec<Instance> =
            [&f, &e, &d, &c, &b, &a].iter().enumerate().map(|(n, s)| inst(n as u64, s)).collect();
        let env_of = |plan: &BTreeMap<String, String>, sha: &str| {
            let r = records.iter().find(|r| r.base.sha == sha).unwrap();
            plan[&r.instance_id].clone()
        };
        // Default cap: one environment per fingerprint, at its oldest base.
        let plan = plan_env_commits(&records, tmp.path(), &BTreeMap::new());
        let got: Vec<String> = [&a, &b, &c, &d, &e, &f].iter().map(|s| env_of(&plan, s)).collect();
        assert_eq!(got, [&a, &a, &c, &c, &e, &a].map(|s| s.clone()));
        // A cap of two: e's fingerprint comes third and takes the nearest older environment (c).
        let over =
            BTreeMap::from([("o/r".to_owned(), RecipeOverride { max_environments: Some(2), ..Default::default() })]);
        let plan = plan_env_commits(&records, tmp.path(), &over);
        let got: Vec<String> = [&a, &b, &c, &d, &e, &f].iter().map(|s| env_of(&plan, s)).collect();
        assert_eq!(got, [&a, &a, &c, &c, &c, &a].map(|s| s.clone()));
    }

    #[test]
    fn fingerprint_patterns_match_names_at_any_depth_and_paths_whole() {
        assert!(path_matches("Cargo.toml", "Cargo.toml"));
        assert!(path_matches("Cargo.toml", "crates/x/Cargo.toml"));
        assert!(!path_matches("Cargo.toml", "crates/x/Cargo.toml.orig"));
        assert!(path_matches("*.am", "lib/Makefile.am"));
        assert!(path_matches("*.m4", "m4/ax_check.m4"));
        assert!(!path_matches("*.m4", "m4/ax_check.m4.bak"));
        assert!(path_matches(".cargo/config.toml", ".cargo/config.toml"));
        assert!(!path_matches(".cargo/config.toml", "x/.cargo/config.toml"));
        assert!(!path_matches("src/*.rs", "src/a/b.rs"), "* stops at /");
        assert!(path_matches("src/*.rs", "src/b.rs"));
    }
}
