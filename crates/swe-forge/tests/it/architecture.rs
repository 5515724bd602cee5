//! ARCHITECTURE.md stays true: its dependency graph is the one the crates' Cargo.toml files say,
//! every source file has a module doc, core links only serde, thiserror and jiff (and is the only
//! crate that links jiff), no production function is over 100 lines, and the file stays short.

use std::collections::{BTreeMap, BTreeSet};

use crate::support::root;

/// What one crate uses of the workspace: `[dependencies]` and `[dev-dependencies]`, short names.
#[derive(Debug, Default, PartialEq, Eq)]
struct Uses {
    deps: BTreeSet<String>,
    dev: BTreeSet<String>,
}

/// The workspace crates each crate's Cargo.toml names, short names (`core` for `swe-forge-core`).
fn from_cargo_files() -> BTreeMap<String, Uses> {
    let mut graph = BTreeMap::new();
    for entry in std::fs::read_dir(root().join("crates")).unwrap().flatten() {
        let Ok(text) = std::fs::read_to_string(entry.path().join("Cargo.toml")) else { continue };
        let name = entry.file_name().to_string_lossy().into_owned();
        let short = name.strip_prefix("swe-forge-").unwrap_or(&name).to_owned();
        let mut uses = Uses::default();
        let mut section = "";
        for line in text.lines() {
            if line.starts_with('[') {
                section = line.trim();
            } else if let Some(dep) = line.strip_prefix("swe-forge-") {
                let dep = dep.split(['.', ' ', '=']).next().unwrap().to_owned();
                match section {
                    "[dependencies]" => uses.deps.insert(dep),
                    "[dev-dependencies]" => uses.dev.insert(dep),
                    _ => false,
                };
            }
        }
        graph.insert(short, uses);
    }
    graph
}

/// The list under "Dependency graph" in ARCHITECTURE.md: `- \`name\`: deps` with `; dev: crates`
/// after them when the crate has workspace dev-dependencies.
fn from_architecture() -> BTreeMap<String, Uses> {
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let section = text.split("Dependency graph").nth(1).expect("ARCHITECTURE.md has a dependency graph");
    let mut graph = BTreeMap::new();
    for line in section.lines().skip_while(|l| !l.starts_with("- ")).take_while(|l| l.starts_with("- ")) {
        let (name, rest) = line[2..].split_once(':').unwrap();
        let (deps, dev) = rest.split_once("; dev:").unwrap_or((rest, ""));
        let names = |s: &str| {
            s.split(',')
                .map(|d| d.trim().trim_matches('`').to_owned())
                .filter(|d| !d.is_empty() && d != "none")
                .collect()
        };
        graph.insert(name.trim_matches('`').to_owned(), Uses { deps: names(deps), dev: names(dev) });
    }
    graph
}

#[test]
fn the_dependency_graph_matches_the_cargo_files() {
    let cargo = from_cargo_files();
    assert!(cargo.len() >= 11, "{cargo:?}");
    assert_eq!(from_architecture(), cargo, "ARCHITECTURE.md's dependency graph differs from the Cargo.toml files");
}

#[test]
fn test_support_is_only_ever_a_dev_dependency() {
    let cargo = from_cargo_files();
    assert!(cargo.contains_key("test-support"));
    for (name, uses) in &cargo {
        assert!(!uses.deps.contains("test-support"), "{name} links test-support outside its tests");
    }
    let manifest = std::fs::read_to_string(root().join("crates/swe-forge-test-support/Cargo.toml")).unwrap();
    assert!(manifest.lines().any(|l| l.trim() == "publish = false"), "test-support is never published");
}

#[test]
fn commands_import_none_of_each_other() {
    let dir = root().join("crates/swe-forge/src/commands");
    let mut files = 0;
    for entry in std::fs::read_dir(&dir).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name == "mod.rs" {
            continue;
        }
        files += 1;
        let text = std::fs::read_to_string(entry.path()).unwrap();
        assert!(
            !text.contains("crate::commands::")
                && !text.lines().any(|l| l.contains("super::") && l.trim() != "use super::*;"),
            "commands/{name} uses another command's module; what commands share lives beside them in src/"
        );
    }
    assert!(files >= 10, "{files} command modules");
}

/// The `.rs` files under every crate's `src/`.
fn source_files() -> Vec<std::path::PathBuf> {
    fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let p = entry.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|e| e == "rs") {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    for entry in std::fs::read_dir(root().join("crates")).unwrap().flatten() {
        let src = entry.path().join("src");
        if src.is_dir() {
            walk(&src, &mut files);
        }
    }
    files.sort();
    files
}

/// Every source file of every crate opens with a module doc (`//!`) saying what it holds.
#[test]
fn every_source_file_has_a_module_doc() {
    let files = source_files();
    assert!(files.len() > 100, "{} source files", files.len());
    let undocumented: Vec<String> = files
        .iter()
        .filter(|f| {
            let text = std::fs::read_to_string(f).unwrap();
            !text.lines().find(|l| !l.trim().is_empty()).is_some_and(|l| l.starts_with("//!"))
        })
        .map(|f| f.strip_prefix(root()).unwrap_or(f).display().to_string())
        .collect();
    assert!(undocumented.is_empty(), "source files without a module doc: {undocumented:?}");
}

/// Recipes never touch Docker: neither `recipes` nor any workspace crate it stands on links
/// `swe-forge-docker` or bollard, so recipe and toolchain choice is tested without an engine.
#[test]
fn recipes_link_no_docker() {
    let cargo = from_cargo_files();
    let mut reached = BTreeSet::from(["recipes".to_owned()]);
    let mut todo = vec!["recipes".to_owned()];
    while let Some(name) = todo.pop() {
        for dep in &cargo[&name].deps {
            if reached.insert(dep.clone()) {
                todo.push(dep.clone());
            }
        }
    }
    assert!(!reached.contains("docker"), "recipes reaches docker through {reached:?}");
    for name in &reached {
        let manifest = std::fs::read_to_string(root().join(format!("crates/swe-forge-{name}/Cargo.toml"))).unwrap();
        assert!(!manifest.contains("bollard"), "{name}, which recipes stands on, links bollard");
    }
}

/// Core is plain data: serde types and pure functions, so every stage can use it without linking
/// git2, bollard, parquet or octocrab. Its dates (jiff) are everyone's: no other crate links jiff.
#[test]
fn core_links_only_serde_thiserror_and_jiff() {
    let manifest = std::fs::read_to_string(root().join("crates/swe-forge-core/Cargo.toml")).unwrap();
    let mut section = "";
    let mut deps = Vec::new();
    for line in manifest.lines() {
        if line.starts_with('[') {
            section = line.trim();
        } else if section == "[dependencies]"
            && let Some(name) = line.split(['.', '=', ' ']).next().filter(|n| !n.is_empty() && !n.starts_with('#'))
        {
            deps.push(name.to_owned());
        }
    }
    let allowed = ["jiff", "serde", "serde_json", "serde_path_to_error", "thiserror"];
    let extra: Vec<&String> = deps.iter().filter(|d| !allowed.contains(&d.as_str())).collect();
    assert!(deps.contains(&"jiff".to_owned()) && extra.is_empty(), "core links {extra:?} (of {deps:?})");
    for entry in std::fs::read_dir(root().join("crates")).unwrap().flatten() {
        let Ok(text) = std::fs::read_to_string(entry.path().join("Cargo.toml")) else { continue };
        let name = entry.file_name().to_string_lossy().into_owned();
        let links_jiff = text.lines().any(|l| l.starts_with("jiff"));
        assert!(name == "swe-forge-core" || !links_jiff, "{name} links jiff: dates go through swe-forge-core");
    }
}

/// ARCHITECTURE.md stays a short map (at most 1,800 words); details belong next to the code.
#[test]
fn the_architecture_file_stays_short() {
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let words = text.split_whitespace().count();
    assert!(words <= 1800, "ARCHITECTURE.md has {words} words");
}

/// No production function is longer than 100 lines (from its `fn` line to its closing brace at
/// the same indentation); test modules (`#[cfg(test)]` to the end of the file, `*tests.rs`
/// files) are not counted.
#[test]
fn no_production_function_is_over_100_lines() {
    let mut long = Vec::new();
    let mut functions = 0;
    for f in source_files() {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        if name == "tests.rs" || name.ends_with("_tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        let lines: Vec<&str> = text.lines().take_while(|l| l.trim() != "#[cfg(test)]").collect();
        for (i, line) in lines.iter().enumerate() {
            let body = line.trim_start();
            let indent = line.len() - body.len();
            let words: Vec<&str> = body.split_whitespace().collect();
            let at = words.iter().position(|w| *w == "fn");
            let is_fn = at.is_some_and(|at| {
                words[..at]
                    .iter()
                    .all(|w| matches!(*w, "pub" | "async" | "const" | "unsafe" | "extern") || w.starts_with("pub("))
            });
            // A declaration without a body (a trait's) ends with `;` before any `{`.
            if !is_fn
                || !lines[i..]
                    .iter()
                    .find(|l| l.contains('{') || l.trim_end().ends_with(';'))
                    .is_some_and(|l| l.contains('{'))
            {
                continue;
            }
            let close = " ".repeat(indent) + "}";
            let Some(end) =
                lines[i..].iter().position(|l| *l == close || (l.starts_with(&close) && l.trim_end() == close))
            else {
                continue;
            };
            functions += 1;
            if end + 1 > 100 {
                long.push(format!("{}:{} {} lines", f.strip_prefix(root()).unwrap_or(&f).display(), i + 1, end + 1));
            }
        }
    }
    assert!(functions > 1000, "only {functions} functions found: the scan is broken");
    assert!(long.is_empty(), "production functions over 100 lines: {long:#?}");
}
