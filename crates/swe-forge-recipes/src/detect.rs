//! Detection of the recipe and of the toolchain versions a repository asks for, from the
//! files of its base commit (go.mod, Cargo.toml, pom.xml, package.json, CMakeLists.txt, a plain
//! Makefile, ...) and its CI configuration (`requests.rs`).

use std::collections::BTreeMap;

use swe_forge_git::SourceRepo;

use crate::toolchoice::VersionRequest;

/// What the files of a commit say about building it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Detection {
    /// Recipe name, or None when nothing is recognised.
    pub recipe: Option<String>,
    /// Language override for the recipe (`typescript`, `cpp`).
    pub language: Option<String>,
    /// Why the repository cannot be built here, when it cannot.
    pub unsupported: Option<String>,
    /// Versions asked for, by source (`go.mod go`, `Cargo.toml rust-version`,
    /// `.github/workflows/ci.yml node-version`, ...), as written: the provenance's form of `requests`.
    pub requested_versions: BTreeMap<String, String>,
    /// The same requests, read: which family, what they admit.
    pub requests: Vec<VersionRequest>,
    /// Build and lock files at the root: path -> blob id.
    pub lockfiles: BTreeMap<String, String>,
    /// Debian packages its CI installs before building (`cipackages.rs`); also in
    /// `requested_versions`, by source, as space-separated names.
    pub ci_packages: Vec<crate::CiPackages>,
    /// Build options its CI jobs pass to CMake, `configure` and Maven (`ciflags.rs`), per tool the
    /// plainest job first; that job's are also in `requested_versions`, as `<file> cmake -D` (and
    /// so on), space-separated.
    pub ci_flags: Vec<crate::CiFlags>,
    /// Repositories its CI clones in its commands (`ciflags.rs`, [`crate::ci_clones`]); also in
    /// `requested_versions`, as `<file> git clone`, space-separated URLs.
    pub ci_clones: Vec<crate::CiClone>,
    /// Every C-family build system the tree has, as recipe names, in the order detection prefers
    /// them (`c-cmake`, `c-meson`, `c-autotools`, `c-make` for a Makefile with a `check` or `test`
    /// target); `recipe` is the first. Validation tries the next when a recipe's runs report no
    /// test in any phase (a CMake file that builds the library only, autotools that test it).
    pub build_systems: Vec<String>,
    /// The package manager of a JavaScript repository (one with a package.json): its sources are in
    /// `requested_versions` too (`package.json packageManager`, `yarn.lock`, ...).
    pub package_manager: Option<crate::PackageManager>,
    /// The build file's target that runs the tests, and why it was taken (Ant's `build.xml`:
    /// [`crate::ant_test_target`]); the recipe's `@TEST_TARGET@` ([`crate::Recipe::use_test_target`]).
    pub test_target: Option<(String, String)>,
}

/// The build and lock files recorded at the root (a [`Detection`]'s `lockfiles`), whose sha256
/// an instance image records once its setup ran.
pub const LOCKFILES: &[&str] = &[
    "go.mod",
    "go.sum",
    "Cargo.toml",
    "Cargo.lock",
    "rust-toolchain",
    "rust-toolchain.toml",
    "pom.xml",
    "build.xml",
    "build.gradle",
    "build.gradle.kts",
    "package.json",
    "package-lock.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "npm-shrinkwrap.json",
    ".nvmrc",
    "CMakeLists.txt",
    "configure.ac",
    "meson.build",
    "Makefile",
];

/// Detects how to build the tree of commit `sha`.
pub fn detect(repo: &SourceRepo, sha: &str) -> Detection {
    detect_at(repo, sha, "")
}

/// Detects how to build the project in folder `dir` of the tree of commit `sha` (`""`: the
/// root; else a path ending in `/`): its build files are read there, its CI files at the root
/// (a file the folder lacks, `.nvmrc`, is read at the root too).
pub fn detect_at(repo: &SourceRepo, sha: &str, dir: &str) -> Detection {
    let mut d = Detection::default();
    let in_dir = |name: &str| format!("{dir}{name}");
    let read_file = |path: &str| repo.file_at(sha, path).map(|b| String::from_utf8_lossy(&b).into_owned());
    let read = |name: &str| read_file(&in_dir(name));
    let read_either = |name: &str| read(name).or_else(|| read_file(name));
    let exists = |name: &str| repo.blob_id_at(sha, &in_dir(name)).is_some();
    for f in LOCKFILES {
        if let Some(id) = repo.blob_id_at(sha, &in_dir(f)) {
            d.lockfiles.insert(in_dir(f), id);
        }
    }
    let all_paths = repo.paths_at(sha).unwrap_or_default();
    let paths: Vec<String> = if dir.is_empty() {
        all_paths.clone()
    } else {
        all_paths.iter().filter_map(|p| p.strip_prefix(dir)).map(str::to_owned).collect()
    };
    let mut ci_paths = paths.clone();
    ci_paths.extend(all_paths.iter().filter(|p| !p.starts_with(dir) || dir.is_empty()).cloned());
    ci_paths.sort();
    ci_paths.dedup();
    let read = &read;
    let read_root = &read_file;
    let paths_for_ci = &all_paths;
    d.requests = crate::requests::read_requests(&read_either, &ci_paths);
    for r in &d.requests {
        d.requested_versions.entry(r.source.clone()).or_insert_with(|| r.raw.clone());
    }
    d.ci_packages = crate::ci_packages(read_root, paths_for_ci);
    for c in &d.ci_packages {
        d.requested_versions.entry(c.source.clone()).or_insert_with(|| c.packages.join(" "));
    }
    d.ci_flags = crate::ci_flags(read_root, paths_for_ci);
    for c in crate::FLAG_TOOLS
        .into_iter()
        .filter_map(|tool| crate::chosen(&d.ci_flags, tool))
        .filter(|c| !c.flags.is_empty())
    {
        d.requested_versions.entry(format!("{} {}", c.source, c.tool.label())).or_insert_with(|| c.flags.join(" "));
    }
    d.ci_clones = crate::ci_clones(read_root, paths_for_ci);
    for c in &d.ci_clones {
        d.requested_versions.entry(format!("{} git clone", c.source)).or_insert_with(|| c.urls.join(" "));
    }
    if exists("go.mod") {
        d.recipe = Some("go".into());
    } else if paths.iter().any(|p| !p.contains('/') && p.ends_with(".go")) {
        // Go of the GOPATH era (before go.mod): the recipe makes a go.mod at setup.
        d.recipe = Some("go".into());
        d.requested_versions.insert("go.mod".into(), "none (GOPATH era: made at setup)".into());
    } else if exists("Cargo.toml") {
        d.recipe = Some("rust".into());
    } else if exists("pom.xml") {
        d.recipe = Some("java-maven".into());
    } else if exists("build.gradle") || exists("build.gradle.kts") {
        d.unsupported =
            Some("Gradle build: no Gradle distribution can be downloaded on this network; add a Maven override or a gradle wrapper cache".into());
    } else if let Some(pkg) = read("package.json").filter(|pkg| {
        !js_tests(pkg) && !has_other_build(&exists) && !paths.iter().any(|p| swe_forge_core::is_js_suite_file(p))
    }) {
        // Metadata only (a C library listed for clib, a browser library of 2012 whose QUnit page
        // no script runs): no runner a recipe could guess without fetching one in the offline runs.
        let _ = pkg;
        d.unsupported = Some(
            "package.json runs no tests (no test script but npm's placeholder, no test runner among its dependencies, no jest-style test file) and the tree has no other build file: name a recipe and a test command in an override".into(),
        );
    } else if let Some(pkg) = read("package.json").filter(|pkg| js_tests(pkg) || !has_other_build(&exists)) {
        let json: serde_json::Value = serde_json::from_str(&pkg).unwrap_or_default();
        let has_dep = |name: &str| {
            ["dependencies", "devDependencies"].iter().any(|k| json.get(k).and_then(|m| m.get(name)).is_some())
        };
        let recipe = js_recipe(&json);
        d.recipe = Some(recipe.into());
        let pm = crate::package_manager(&read);
        for (source, said) in &pm.requests {
            d.requested_versions.entry(source.clone()).or_insert_with(|| said.clone());
        }
        d.package_manager = Some(pm);
        let ts_files = paths.iter().filter(|p| p.ends_with(".ts") || p.ends_with(".tsx")).count();
        if exists("tsconfig.json") || has_dep("typescript") || ts_files > 0 {
            d.language = Some("typescript".into());
        }
    } else if let Some(build) = read("build.xml") {
        ant(&build, &mut d);
    } else {
        d.build_systems = c_build_systems(&exists, &read);
        if let Some(first) = d.build_systems.first() {
            d.recipe = Some(first.clone());
        } else if ["Makefile", "makefile", "GNUmakefile"].iter().any(|f| exists(f)) {
            d.unsupported = Some(
                "a Makefile without a `check` or `test` target and no other build files: name a recipe and a test command in an override".into(),
            );
        }
    }
    if d.recipe.as_deref().is_some_and(|r| r.starts_with("c-")) && is_cpp(&paths) {
        d.language = Some("cpp".into());
    }
    d
}

/// The build files that make a folder a project of its own.
const PROJECT_FILES: &[&str] =
    &["go.mod", "Cargo.toml", "pom.xml", "package.json", "CMakeLists.txt", "meson.build", "configure.ac", "build.xml"];

/// The folder of a project whose root has no build file (two crates side by side, `json/` and
/// `json_tests/`; a library in `src/` of a repository of docs): of the folders the `touched`
/// paths are in (the test patch's first), deepest first, the first with a build file detection
/// takes, as a path ending in `/`.
pub fn project_dir(repo: &SourceRepo, sha: &str, touched: &[String]) -> Option<String> {
    let mut seen: Vec<String> = Vec::new();
    for path in touched {
        let parts: Vec<&str> = path.split('/').collect();
        for k in (1..parts.len()).rev() {
            let dir = format!("{}/", parts[..k].join("/"));
            if seen.contains(&dir) || seen.len() >= 64 {
                continue;
            }
            seen.push(dir.clone());
            let has_build_file = PROJECT_FILES.iter().any(|f| repo.blob_id_at(sha, &format!("{dir}{f}")).is_some());
            if has_build_file && detect_at(repo, sha, &dir).recipe.is_some() {
                return Some(dir);
            }
        }
    }
    None
}

/// The JavaScript recipe of a package.json: the runner its test script starts (directly, or
/// through the scripts it runs), else the one among its dependencies.
fn js_recipe(json: &serde_json::Value) -> &'static str {
    let has_dep = |name: &str| {
        ["dependencies", "devDependencies"].iter().any(|k| json.get(k).and_then(|m| m.get(name)).is_some())
    };
    let test_script = json.pointer("/scripts/test").and_then(|v| v.as_str()).unwrap_or("");
    // A test script that names no runner itself (`npm run lint && npm run test-cov && npm
    // run test-browser`): the runner the scripts it runs start first decides.
    let named = ["karma", "vitest", "jest", "mocha"].iter().any(|r| test_script.contains(r));
    let through = if named { None } else { crate::testcmd::first_runner(json) };
    // A runner no recipe drives (QUnit's CLI, tape, ava, nodeunit, ...) that the scripts call: the
    // project's own script runs, not a runner guessed from the dependencies (underscore of 2016:
    // `qunit-cli test/*.js`, with karma among its dependencies for the browser run).
    if !named && through.is_none() && crate::testcmd::calls_other_runner(json) {
        return "js-npm";
    }
    // A test script that starts karma decides (mocha and jest are often dependencies of a karma
    // suite too); karma as a dependency only when the script names no other runner.
    if let Some(runner) = through {
        match runner {
            "mocha" => "js-mocha",
            "jest" => "js-jest",
            "vitest" => "js-vitest",
            _ => "js-karma",
        }
    } else if test_script.contains("karma") {
        "js-karma"
    } else if has_dep("vitest") || test_script.contains("vitest") {
        "js-vitest"
    } else if has_dep("jest") || test_script.contains("jest") {
        "js-jest"
    } else if has_dep("karma") && !test_script.contains("mocha") {
        "js-karma"
    } else if has_dep("mocha") || test_script.contains("mocha") {
        "js-mocha"
    } else if !test_script.trim().is_empty() && !test_script.contains("no test specified") {
        // A test script of its own (`node test/run.js`, tap, ava): run as the project runs it;
        // `npx jest` would fetch a runner the project never used, in a run with no network.
        "js-npm"
    } else {
        "js-jest"
    }
}

/// Whether a package.json runs tests: a test script other than npm's placeholder, or a test runner
/// among its dependencies. One that does neither (a C library published on npm too) yields to the
/// tree's other build files.
fn js_tests(pkg: &str) -> bool {
    let json: serde_json::Value = serde_json::from_str(pkg).unwrap_or_default();
    let test_script = json.pointer("/scripts/test").and_then(|v| v.as_str()).unwrap_or("");
    let runner = ["jest", "vitest", "mocha", "karma", "ava", "tap", "jasmine", "uvu", "node:test"]
        .iter()
        .any(|r| ["dependencies", "devDependencies"].iter().any(|k| json.get(k).and_then(|m| m.get(r)).is_some()));
    runner || (!test_script.trim().is_empty() && !test_script.contains("no test specified"))
}

/// Build files of another kind than package.json: Ant's, or a C-family build system.
fn has_other_build(exists: &dyn Fn(&str) -> bool) -> bool {
    [
        "build.xml",
        "CMakeLists.txt",
        "meson.build",
        "configure.ac",
        "configure.in",
        "Makefile.am",
        "configure",
        "Makefile",
        "makefile",
        "GNUmakefile",
    ]
    .iter()
    .any(|f| exists(f))
}

/// The C-family build systems of a tree, as recipe names, in detection's order: CMake, meson,
/// autotools, then a plain Makefile with a `check` or `test` target (one that `configure` would
/// make does not count while autotools is there).
fn c_build_systems(exists: &dyn Fn(&str) -> bool, read: &dyn Fn(&str) -> Option<String>) -> Vec<String> {
    let mut out = Vec::new();
    if exists("CMakeLists.txt") {
        out.push("c-cmake".to_owned());
    }
    if exists("meson.build") {
        out.push("c-meson".to_owned());
    }
    let autotools = ["configure.ac", "configure.in", "Makefile.am", "configure"].iter().any(|f| exists(f));
    if autotools {
        out.push("c-autotools".to_owned());
    }
    let makefile = ["Makefile", "makefile", "GNUmakefile"].iter().find_map(|f| read(f));
    if !autotools && makefile.is_some_and(|m| make_targets(&m).iter().any(|t| t == "check" || t == "test")) {
        out.push("c-make".to_owned());
    }
    out
}

/// Java before Maven: Ant alone, at the target of build.xml that runs the tests.
fn ant(build: &str, d: &mut Detection) {
    match crate::ant_test_target(build) {
        Some((target, why)) => {
            d.recipe = Some("java-ant".into());
            d.test_target = Some((target, why.to_owned()));
        }
        None => {
            d.unsupported = Some("an Ant build.xml with no target that runs tests (`test`, `tests`, `junit`, one with a <junit> task, `check`): name a test command in an override".into());
        }
    }
}

/// Whether C++ sources outnumber C sources.
fn is_cpp(paths: &[String]) -> bool {
    let (mut c, mut cpp) = (0u32, 0u32);
    for p in paths {
        match p.to_lowercase().rsplit_once('.').map(|(_, ext)| ext.to_owned()).as_deref() {
            Some("c") => c += 1,
            Some("cc" | "cpp" | "cxx" | "hpp" | "hh" | "hxx") => cpp += 1,
            _ => {}
        }
    }
    cpp > c
}

pub(crate) fn toml_string(text: &str, key: &str) -> Option<String> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once('=')?;
        (k.trim() == key).then(|| v.trim().trim_matches('"').to_owned())
    })
}

/// The targets a Makefile defines (`name:` at the start of a line, not `:=` assignments).
fn make_targets(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.starts_with(['\t', ' ', '#', '.']))
        .filter_map(|l| {
            let (names, rest) = l.split_once(':')?;
            (!rest.starts_with('=')).then(|| names.split_whitespace().map(str::to_owned).collect::<Vec<_>>())
        })
        .flatten()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_parsers() {
        assert_eq!(toml_string("[package]\nrust-version = \"1.88\"\n", "rust-version").as_deref(), Some("1.88"));
        let makefile = "CC ?= cc\nCFLAGS := -O2\nall: lib\n\tcc x.c\ntest check: all\n\t./run\n.PHONY: test\n";
        assert_eq!(make_targets(makefile), ["all", "test", "check"]);
        assert!(make_targets("X := 1\n\ttest: no\n").is_empty());
    }

    /// `files` committed in a fresh repository: its folder (kept while it lives), the repository
    /// and the commit.
    fn commit_files(files: &[(&str, &str)]) -> (tempfile::TempDir, SourceRepo, String) {
        let dir = tempfile::tempdir().unwrap();
        swe_forge_test_support::git(dir.path(), &["init", "-q"]);
        for (path, content) in files {
            let p = dir.path().join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, content).unwrap();
        }
        swe_forge_test_support::git(dir.path(), &["add", "-A"]);
        swe_forge_test_support::git(dir.path(), &["commit", "-qm", "base"]);
        let sha = swe_forge_test_support::git(dir.path(), &["rev-parse", "HEAD"]);
        let repo = SourceRepo::open(dir.path()).unwrap();
        (dir, repo, sha)
    }

    /// `files` committed in a fresh repository; the detection of that commit.
    fn detect_files(files: &[(&str, &str)]) -> Detection {
        let (_dir, repo, sha) = commit_files(files);
        detect(&repo, &sha)
    }

    #[test]
    fn a_root_without_build_files_has_its_project_in_the_folder_the_patches_change() {
        let (_dir, repo, sha) = commit_files(&[
            ("README.md", "two crates\n"),
            (".travis.yml", "language: rust\nscript:\n  - (cd json_tests && cargo test)\n"),
            ("json/Cargo.toml", "[package]\nname = \"json\"\nversion = \"0.1.0\"\n"),
            ("json/src/lib.rs", "pub fn f() {}\n"),
            (
                "json_tests/Cargo.toml",
                "[package]\nname = \"json_tests\"\nversion = \"0.0.0\"\n[dependencies]\njson = { path = \"../json\" }\n",
            ),
            ("json_tests/tests/test.rs", "#[test]\nfn t() {}\n"),
            ("docs/notes/a.md", "notes\n"),
        ]);
        let root = detect(&repo, &sha);
        assert_eq!((root.recipe, root.unsupported), (None, None));
        let touched = |p: &[&str]| p.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let found = project_dir(&repo, &sha, &touched(&["json_tests/tests/test.rs", "json/src/lib.rs"]));
        assert_eq!(found.as_deref(), Some("json_tests/"), "the test patch's folder first");
        assert_eq!(project_dir(&repo, &sha, &touched(&["json/src/lib.rs"])).as_deref(), Some("json/"));
        assert_eq!(project_dir(&repo, &sha, &touched(&["docs/notes/a.md", "README.md"])), None);
        let d = detect_at(&repo, &sha, "json_tests/");
        assert_eq!(d.recipe.as_deref(), Some("rust"));
        assert!(d.lockfiles.contains_key("json_tests/Cargo.toml"), "{:?}", d.lockfiles);
    }

    #[test]
    fn a_plain_makefile_with_a_test_target_is_built_with_make() {
        let d = detect_files(&[("Makefile", "all: t\n\tcc -o t t.c\ncheck: all\n\t./t\n"), ("t.c", "int main(){}\n")]);
        assert_eq!((d.recipe.as_deref(), d.unsupported.as_deref()), (Some("c-make"), None));
        let d = detect_files(&[("Makefile", "all:\n\tcc x.cc\n"), ("x.cc", "int main(){}\n")]);
        assert_eq!(d.recipe, None);
        assert!(d.unsupported.unwrap().contains("without a `check` or `test` target"));
    }

    #[test]
    fn a_package_json_that_runs_no_tests_yields_to_the_c_build() {
        let npm_meta =
            r#"{"name": "z", "version": "1.0.0", "scripts": {"test": "echo \"Error: no test specified\" && exit 1"}}"#;
        let make = "all: t\n\tcc -o t t.c\ntest: all\n\t./t\n";
        let d = detect_files(&[("package.json", npm_meta), ("Makefile", make), ("t.c", "int main(){}\n")]);
        assert_eq!(d.recipe.as_deref(), Some("c-make"));
        // A test script, or a runner among the dependencies, keeps the JavaScript recipe.
        let scripted = r#"{"name": "z", "scripts": {"test": "node test.js"}}"#;
        let d = detect_files(&[("package.json", scripted), ("Makefile", make), ("t.c", "int main(){}\n")]);
        assert_eq!(d.recipe.as_deref(), Some("js-npm"));
        let jest = r#"{"name": "z", "devDependencies": {"jest": "29"}}"#;
        let d = detect_files(&[("package.json", jest), ("CMakeLists.txt", "add_library(z z.c)\n")]);
        assert_eq!(d.recipe.as_deref(), Some("js-jest"));
        // Alone, a package.json without tests is metadata (a C library listed for clib): no recipe,
        // said so; with a jest-style test file, the JavaScript default.
        let alone = detect_files(&[("package.json", npm_meta), ("src/uthash.h", "\n")]);
        assert_eq!(alone.recipe, None);
        assert!(alone.unsupported.unwrap().starts_with("package.json runs no tests"));
        let d = detect_files(&[("package.json", npm_meta), ("src/__tests__/a.test.js", "test('a', () => {});\n")]);
        assert_eq!(d.recipe.as_deref(), Some("js-jest"));
    }

    #[test]
    fn every_c_build_system_of_the_tree_is_known_in_detections_order() {
        let d = detect_files(&[
            ("CMakeLists.txt", "add_library(z z.c)\n"),
            ("configure.ac", "AC_INIT([z], [1])\n"),
            ("Makefile.am", "TESTS = t\n"),
            ("z.c", "int z;\n"),
        ]);
        assert_eq!(d.recipe.as_deref(), Some("c-cmake"));
        assert_eq!(d.build_systems, ["c-cmake", "c-autotools"]);
        let d = detect_files(&[("meson.build", "project('z', 'c')\n"), ("Makefile", "test:\n\t./t\n")]);
        assert_eq!(d.build_systems, ["c-meson", "c-make"]);
        let d = detect_files(&[("Cargo.toml", "[package]\n"), ("CMakeLists.txt", "\n")]);
        assert!(d.build_systems.is_empty(), "{:?}", d.build_systems);
    }

    #[test]
    fn go_without_go_mod_is_go_of_the_gopath_era() {
        let d = detect_files(&[
            ("cli.go", "package cli\n"),
            ("Makefile", "test:\n\tgo test ./...\n"),
            (".travis.yml", "language: go\ngo:\n  - 1.6.2\n"),
        ]);
        assert_eq!((d.recipe.as_deref(), d.unsupported.as_deref()), (Some("go"), None));
        assert!(d.requested_versions["go.mod"].contains("GOPATH"));
        // Go files only below the root are not enough (a tool folder of another project).
        let d = detect_files(&[("tools/gen.go", "package main\n"), ("Makefile", "test:\n\t./t\n")]);
        assert_eq!(d.recipe.as_deref(), Some("c-make"));
    }

    #[test]
    fn karma_is_recognised_by_the_test_script_or_alone_as_a_dependency() {
        let pkg = |script: &str, deps: &str| {
            format!("{{\"scripts\": {{\"test\": \"{script}\"}}, \"devDependencies\": {{{deps}}}}}")
        };
        let recipe = |script: &str, deps: &str| detect_files(&[("package.json", &pkg(script, deps))]).recipe.unwrap();
        // date-fns 2019: jest and mocha are dependencies too, the test script starts karma.
        let date_fns =
            "\"jest\": \"^24.8.0\", \"karma\": \"^3.1.4\", \"karma-mocha\": \"^1.3.0\", \"mocha\": \"^3.5.3\"";
        assert_eq!(recipe("karma start config/karma.js", date_fns), "js-karma");
        assert_eq!(recipe("grunt test", "\"karma\": \"^0.13.0\", \"mocha\": \"^2.0.0\""), "js-karma");
        assert_eq!(recipe("mocha test/node", "\"karma\": \"^0.13.0\", \"mocha\": \"^2.0.0\""), "js-mocha");
        assert_eq!(recipe("jest", date_fns), "js-jest");
        assert_eq!(recipe("node test.js", "\"mocha\": \"^2.0.0\""), "js-mocha");
        // A test script that names no runner: the first its scripts start (ajv: mocha with coverage,
        // then karma on a browser bundle).
        let pkg = r#"{"scripts": {"test": "npm run lint && npm run test-cov && npm run test-browser", "lint": "eslint lib",
            "test-cov": "nyc npm run test-spec", "test-spec": "mocha spec", "test-browser": "karma start"},
            "devDependencies": {"karma": "^3.1.4", "mocha": "^5.0.0", "nyc": "^11.0.0"}}"#;
        let d = detect_files(&[("package.json", pkg)]);
        assert_eq!(d.recipe.as_deref(), Some("js-mocha"));
        // commander.js of 2015-2019: its own runner, no test framework among its dependencies.
        assert_eq!(recipe("node test/run.js && npm run test-typings", "\"should\": \"^11.2.1\""), "js-npm");
        // A runner no recipe drives, called through another script: the project's own script.
        let underscore = r#"{"scripts": {"test": "npm run test-node && npm run lint", "test-node": "qunit-cli test/*.js",
            "test-browser": "karma start"}, "devDependencies": {"karma": "^0.13.0", "qunit-cli": "~0.2.0"}}"#;
        assert_eq!(detect_files(&[("package.json", underscore)]).recipe.as_deref(), Some("js-npm"));
        assert_eq!(recipe("tape test/*.js", "\"mocha\": \"^2.0.0\""), "js-npm");
        let none =
            |script: &str| detect_files(&[("package.json", &format!("{{\"scripts\": {{\"test\": \"{script}\"}}}}"))]);
        assert_eq!(none("echo \\\"Error: no test specified\\\" && exit 1").recipe, None);
        assert_eq!(none("").recipe, None);
    }

    #[test]
    fn an_ant_build_file_alone_is_built_with_ant_at_its_test_target() {
        let build = "<project default=\"jar\"><property name=\"v\" value=\"1.6\"/><target name=\"compile\"><javac srcdir=\"src\" source=\"${v}\"/></target><target name=\"test\" depends=\"compile\"><junit/></target></project>";
        let d = detect_files(&[("build.xml", build), ("src/A.java", "class A {}\n")]);
        assert_eq!((d.recipe.as_deref(), d.unsupported.as_deref()), (Some("java-ant"), None));
        assert_eq!(d.test_target, Some(("test".to_owned(), "its name".to_owned())));
        assert_eq!(d.requested_versions["build.xml javac source"], "1.6");
        let d = detect_files(&[("build.xml", build), ("pom.xml", "<project/>")]);
        assert_eq!(d.recipe.as_deref(), Some("java-maven"), "Maven's pom wins");
        let d = detect_files(&[("build.xml", "<project><target name=\"dist\"/></project>")]);
        assert!(d.unsupported.unwrap().contains("no target that runs tests"));
    }

    #[test]
    fn build_files_and_ci_both_ask_and_the_provenance_says_where() {
        let d = detect_files(&[
            (
                "pom.xml",
                "<project><properties><maven.compiler.source>1.6</maven.compiler.source></properties></project>",
            ),
            (".github/workflows/ci.yml", "jobs:\n  t:\n    strategy:\n      matrix:\n        java: [6, 8]\n"),
        ]);
        assert_eq!(d.recipe.as_deref(), Some("java-maven"));
        assert_eq!(d.requested_versions["pom.xml maven.compiler.source"], "1.6");
        assert_eq!(d.requested_versions[".github/workflows/ci.yml java"], "6, 8");
        assert_eq!(d.requests.len(), 2);
    }
}
