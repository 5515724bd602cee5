//! ARCHITECTURE.md stays true: its dependency graph is the one the crates' Cargo.toml files say.

use std::collections::{BTreeMap, BTreeSet};

use crate::support::root;

/// The workspace crates each crate's `[dependencies]` name, short names (`core` for `swe-forge-core`).
fn from_cargo_files() -> BTreeMap<String, BTreeSet<String>> {
    let mut graph = BTreeMap::new();
    for entry in std::fs::read_dir(root().join("crates")).unwrap().flatten() {
        let Ok(text) = std::fs::read_to_string(entry.path().join("Cargo.toml")) else { continue };
        let name = entry.file_name().to_string_lossy().into_owned();
        let short = name.strip_prefix("swe-forge-").unwrap_or(&name).to_owned();
        let mut deps = BTreeSet::new();
        let mut in_deps = false;
        for line in text.lines() {
            if line.starts_with('[') {
                in_deps = line.trim() == "[dependencies]";
            } else if in_deps && let Some(dep) = line.strip_prefix("swe-forge-") {
                deps.insert(dep.split(['.', ' ', '=']).next().unwrap().to_owned());
            }
        }
        graph.insert(short, deps);
    }
    graph
}

/// The list under "Dependency graph" in ARCHITECTURE.md.
fn from_architecture() -> BTreeMap<String, BTreeSet<String>> {
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let section = text.split("Dependency graph").nth(1).expect("ARCHITECTURE.md has a dependency graph");
    let mut graph = BTreeMap::new();
    for line in section.lines().skip_while(|l| !l.starts_with("- ")).take_while(|l| l.starts_with("- ")) {
        let (name, deps) = line[2..].split_once(':').unwrap();
        let names = |s: &str| {
            s.split(',')
                .map(|d| d.trim().trim_matches('`').to_owned())
                .filter(|d| !d.is_empty() && d != "none")
                .collect()
        };
        graph.insert(name.trim_matches('`').to_owned(), names(deps));
    }
    graph
}

#[test]
fn the_dependency_graph_matches_the_cargo_files() {
    let cargo = from_cargo_files();
    assert!(cargo.len() >= 11, "{cargo:?}");
    assert_eq!(from_architecture(), cargo, "ARCHITECTURE.md's dependency graph differs from the Cargo.toml files");
}
