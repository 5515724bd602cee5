//! Recipes: how to install, set up and test a repository. Toolchains (`recipes/toolchains.toml`)
//! are the Debian packages of an image; recipes (`recipes/<name>.toml`) add the setup commands,
//! the test command and the parsers. Per-repository overrides ([`RecipeOverride`], the data of
//! pipeline files and profiles, owned by `swe-forge-config`) are applied here and their recipe and
//! toolchain names checked.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use swe_forge_config::{ExtraSource, RecipeOverride};
use swe_forge_core::Instance;
use swe_forge_logparse::Framework;

use crate::{RecipeError, RecipeProblem};

/// The Debian packages and environment of a toolchain image.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Toolchain {
    /// Name (`go`, `rust`, `rust-web`, `java`, `node`, `cfamily`); filled in from the table key.
    #[serde(default)]
    pub name: String,
    /// Debian packages (a toolchain `like` another and with none of its own has the other's).
    #[serde(default)]
    pub packages: Vec<String>,
    /// Packages added to those it has from `like` (and that a toolchain `like` it has too).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub add_packages: Vec<String>,
    /// Image environment.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Prints the versions of the toolchain (recorded in each instance's provenance).
    #[serde(default)]
    pub version_command: String,
    /// Shell lines run before every setup step (with network), e.g. trusting the extra CA bundle.
    #[serde(default)]
    pub setup_prelude: String,
    /// Commands run when the toolchain image is built (no network needed), to put work every
    /// instance would repeat (compiling a standard library) into the shared layer.
    #[serde(default)]
    pub warm: Vec<String>,
    /// Further suites of the base image's Debian mirror (`sid`), pinned below the base suite: only
    /// packages asked for as `name/suite` come from them (an older JDK the base suite dropped).
    #[serde(default)]
    pub apt_suites: Vec<String>,
    /// Another toolchain whose packages, base suite, version command, setup prelude and warm
    /// commands this one takes where it has none of its own (and so on up its own `like`).
    #[serde(default)]
    pub like: Option<String>,
    /// A script run once with network (and the CA bundle, deleted before the commit) on the image
    /// of the packages, then committed as the toolchain image: a toolchain from outside Debian
    /// (Node from the npm registry). A toolchain with one is a template: releases.toml gives each
    /// version its `vars`, exported before the script.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub fetch: String,
    /// The variables of a template's version (`NODE_VERSION`, `NODE_SHA512`, ...).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub vars: BTreeMap<String, String>,
    /// The Debian suite of the base image under it, when not the pipeline's (an older C library:
    /// `bullseye`'s glibc 2.31 for code that needs `MINSIGSTKSZ` to be a constant).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_suite: Option<String>,
    /// Packages installed in a layer of their own over `packages`: a variant that differs from
    /// another toolchain only by these (an older compiler beside bullseye's) shares its layer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub more_packages: Vec<String>,
    /// Its compilers drop the project's `-Werror` flags and append `-Wno-error` (a wrapper
    /// the warm commands install): every record built with it carries the warning
    /// `warnings_not_errors`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub warnings_not_errors: bool,
    /// Packages the project's CI installs (a recipe's [`Recipe::ci_packages`]), each installed
    /// when the image's suite has it and skipped, with a line in the build log, when not.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ci_packages: Vec<String>,
}

/// Everything needed to build and test one repository.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Recipe {
    /// Recipe name (the file name); filled in when loaded.
    #[serde(default)]
    pub name: String,
    /// Language written on the record (`go`, `rust`, `java`, `javascript`, `typescript`, `c`, `cpp`).
    pub language: String,
    /// The toolchain image.
    pub toolchain: String,
    /// Packages added to the toolchain image (`name/suite` for one from a suite in `apt_suites`).
    #[serde(default)]
    pub extra_packages: Vec<String>,
    /// Whether the Debian packages the project's CI installs (`.travis.yml` addons, `apt-get
    /// install` lines) go into the toolchain image: the C-family recipes, whose builds need the
    /// system libraries and tools a CI names (`gperf`, `libzstd-dev`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ci_apt_packages: bool,
    /// Whether the build options the project's CI passes to the build tool this recipe configures
    /// with (CMake `-D`, `configure` switches, Maven `-P`: `ciflags.rs`) are appended to its
    /// calls of that tool ([`Recipe::add_ci_flags`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ci_build_flags: bool,
    /// The packages the CI of the instance's base commit installs, when `ci_apt_packages`; filled
    /// in when the recipe is resolved for an instance.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ci_packages: Vec<String>,
    /// Suites added to the toolchain's (see [`Toolchain::apt_suites`]), for extra packages the base
    /// suite lacks (`json-test-data/sid`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub apt_suites: Vec<String>,
    /// Variables added to the toolchain image.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Commands run once in the instance image with network access (dependencies, warm build);
    /// `$SWE_FORGE_COMMIT_TIME` holds the committer time of the tree they run on (RFC 3339, UTC),
    /// `$SWE_FORGE_REPO` the repository (`org/repo`).
    #[serde(default)]
    pub setup: Vec<String>,
    /// Commands run before the test command in every run (cleaning stale reports).
    #[serde(default)]
    pub pre_test: Vec<String>,
    /// The test command, run from the repository root.
    pub test_command: String,
    /// Parser of the run's log.
    pub parser: Framework,
    /// `find -path` patterns of structured result files, copied out of the container after a run
    /// (files the test command writes to /swe-forge/results are copied out too).
    #[serde(default)]
    pub results: Vec<String>,
    /// Parser of the structured result files; the log parser is the fallback when there are none.
    #[serde(default)]
    pub results_parser: Option<Framework>,
    /// Extra environment of the three test runs.
    #[serde(default)]
    pub run_env: BTreeMap<String, String>,
    /// Whether the test runs may reach the network (default: no).
    #[serde(default)]
    pub network_in_runs: bool,
    /// Run the tests as this unprivileged user (created in the instance image, owner of the
    /// repository); root when absent, since many suites expect it.
    #[serde(default)]
    pub test_user: Option<String>,
    /// Trees of other repositories put into the image (see [`ExtraSource`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extra_sources: Vec<ExtraSource>,
    /// The files whose contents make a commit's dependency fingerprint (lockfiles, dependency
    /// manifests, build files): a pattern without `/` matches a file of that name at any depth,
    /// one with `/` the whole path; `*` matches any run of characters but `/`. Instances with the
    /// same fingerprint share a repository environment ([`crate::plan_env_commits`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fingerprint: Vec<String>,
    /// Commands run first in an instance layer whose fingerprint differs from its environment's,
    /// before the setup, so that the setup gives what a clean build at the base gives (autotools:
    /// the generated files of the environment's build files removed, `git clean -fdx`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refresh: Vec<String>,
    /// Commands an instance layer runs instead of the setup when its fingerprint is its
    /// environment's: the dependencies are the environment's, only the repository's own code is
    /// built again (Maven: compile, no warm-up run of the suite). Empty: the setup. An override
    /// that replaces the setup replaces these too (with its own `layer_setup`, or the setup).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub layer_setup: Vec<String>,
    /// Commands that fetch the dependencies the manifests name, run in an instance layer whose
    /// patches change a manifest (a file `fingerprint` matches: a fix that adds a package), with
    /// the manifests as the patches leave them and the network on; the manifests are put back
    /// as at the base afterwards, so the runs find the patches' dependencies without a network
    /// and the tree is the base's. Empty: none are fetched (the runs find the base's alone).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prefetch: Vec<String>,
    /// Whether the setup and prefetch install dependencies with the repository's package manager
    /// (the JavaScript recipes: `js_deps`, `js_prefetch`; [`Recipe::use_package_manager`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub package_managers: bool,
    /// Debian packages a failed first build was found to need (`sysdeps.rs`: the header, library
    /// or command its log names, looked up in the suite's `Contents` index), installed in the
    /// layer of the CI's packages; filled in by validation, recorded in the provenance.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub system_packages: Vec<String>,
    /// Other ways to build, each taken once when a setup's log shows its sign ([`Fallback`]).
    /// Not in the recipe's hash: one taken changes the commands, which are.
    #[serde(default, skip_serializing)]
    pub fallbacks: Vec<Fallback>,
}

/// Another way to build a recipe's setup and tests, taken when a failed setup's log shows
/// `sign`: each `[from, to]` of `replace` is replaced in the setup, layer setup, prefetch,
/// pre-test and test commands (CMake's Makefile generator instead of Ninja).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fallback {
    /// Its name, in the provenance (`Unix Makefiles`).
    pub name: String,
    /// Text of the failed setup's log that calls for it.
    pub sign: String,
    /// Replacements, `[from, to]`.
    pub replace: Vec<[String; 2]>,
}

/// What a recipe's commands say where the build file's test target goes ([`Recipe::use_test_target`]).
pub const TEST_TARGET: &str = "@TEST_TARGET@";

/// Where a recipe's setup writes the C-family test launcher (`c-cmake` as CMake's test launcher,
/// `c-meson` as `meson test`'s wrapper): the command of `recipes/test-launcher.sh`, put in when
/// the recipe is read.
const TEST_LAUNCHER: &str = "@TEST_LAUNCHER@";

/// `recipes/test-launcher.sh`: comment lines, then the one line of the command that writes
/// `build/swe-forge-test-launcher`.
const TEST_LAUNCHER_FILE: &str = include_str!("../recipes/test-launcher.sh");

/// The command of [`TEST_LAUNCHER_FILE`].
fn test_launcher_command() -> &'static str {
    TEST_LAUNCHER_FILE.lines().find(|l| !l.starts_with('#') && !l.trim().is_empty()).unwrap_or_default()
}

/// Where a setup writes, one line each, what it had to do beyond the recipe's first way (a
/// fallback it took); the provenance's `setup_notes`. Outside the repository, in the image.
pub const SETUP_NOTES: &str = "/swe-forge/setup-notes";

/// `command` with `flags` after each call of `tool` in it (`./configure`, a configuring `cmake`,
/// `mvn`: a word of its own, at the start or after a shell operator or space), or None when it
/// calls none. `cmake --build`, `-E` and `-P` calls are not configure steps.
fn with_flags(command: &str, tool: crate::FlagTool, flags: &str) -> Option<String> {
    use crate::FlagTool;
    let word = match tool {
        FlagTool::Cmake => "cmake",
        FlagTool::Configure => "./configure",
        FlagTool::Maven => "mvn",
        FlagTool::Meson => "meson setup",
    };
    let mut out = String::new();
    let mut rest = command;
    let mut any = false;
    while let Some(i) = rest.find(word) {
        let before_ok = i == 0 || rest[..i].ends_with([' ', ';', '(', '{', '|', '&']);
        let after = &rest[i + word.len()..];
        let after_ok = after.is_empty() || after.starts_with([' ', ';', '&', '|', ')', '}']);
        let call = after.split([';', '&', '|', '}', ')']).next().unwrap_or_default();
        let configures = tool != FlagTool::Cmake || !["--build", " -E ", " -P "].iter().any(|w| call.contains(w));
        out.push_str(&rest[..i + word.len()]);
        if before_ok && after_ok && configures {
            out.push(' ');
            out.push_str(flags);
            any = true;
        }
        rest = after;
    }
    out.push_str(rest);
    any.then_some(out)
}

const TOOLCHAINS: &str = include_str!("../recipes/toolchains.toml");

const RECIPES: &[(&str, &str)] = &[
    ("go", include_str!("../recipes/go.toml")),
    ("rust", include_str!("../recipes/rust.toml")),
    ("java-maven", include_str!("../recipes/java-maven.toml")),
    ("java-ant", include_str!("../recipes/java-ant.toml")),
    ("js-jest", include_str!("../recipes/js-jest.toml")),
    ("js-vitest", include_str!("../recipes/js-vitest.toml")),
    ("js-mocha", include_str!("../recipes/js-mocha.toml")),
    ("js-npm", include_str!("../recipes/js-npm.toml")),
    ("js-karma", include_str!("../recipes/js-karma.toml")),
    ("c-cmake", include_str!("../recipes/c-cmake.toml")),
    ("c-autotools", include_str!("../recipes/c-autotools.toml")),
    ("c-meson", include_str!("../recipes/c-meson.toml")),
    ("c-make", include_str!("../recipes/c-make.toml")),
];

impl Toolchain {
    /// The toolchain named `name`: a table of toolchains.toml, or a version of a template that
    /// releases.toml names (`node16`: `node-dist` with Node 16's variables).
    pub fn named(name: &str) -> Result<Toolchain, RecipeError> {
        let all: BTreeMap<String, Toolchain> = toml::from_str(TOOLCHAINS)
            .map_err(|e| RecipeError::Recipe { name: "toolchains".into(), problem: e.into() })?;
        let releases = crate::Releases::builtin();
        let versions: Vec<String> = releases
            .0
            .iter()
            .flat_map(|(tool, list)| list.iter().filter(|r| !r.vars.is_empty()).map(|r| r.toolchain_name(*tool)))
            .collect();
        let known =
            all.keys().filter(|k| all[*k].fetch.is_empty()).chain(&versions).cloned().collect::<Vec<_>>().join(", ");
        let (mut t, vars) = match (all.get(name), releases.template_named(name)) {
            (Some(t), _) if t.fetch.is_empty() => (t.clone(), BTreeMap::new()),
            (None, Some(r)) if all.get(&r.toolchain).is_some_and(|t| !t.fetch.is_empty()) => {
                (all[&r.toolchain].clone(), r.vars.clone())
            }
            (Some(_), _) => {
                return Err(RecipeError::Recipe {
                    name: name.to_owned(),
                    problem: RecipeProblem::Template { have: known },
                });
            }
            _ => {
                return Err(RecipeError::Recipe {
                    name: name.to_owned(),
                    problem: RecipeProblem::NoSuchToolchain { have: known },
                });
            }
        };
        // `like` chains (a compiler variant of bullseye's toolchain, which is like today's).
        let mut seen = vec![name.to_owned()];
        let mut added = std::mem::take(&mut t.add_packages);
        while let Some(like) = t.like.take() {
            let l = all.get(&like).ok_or_else(|| RecipeError::Recipe {
                name: name.to_owned(),
                problem: RecipeProblem::LikeNamesNothing { like: like.clone(), have: known.clone() },
            })?;
            if seen.contains(&like) {
                return Err(RecipeError::Recipe {
                    name: name.to_owned(),
                    problem: RecipeProblem::LikeCircle { chain: seen, like },
                });
            }
            seen.push(like);
            if t.packages.is_empty() {
                t.packages.clone_from(&l.packages);
            }
            if t.base_suite.is_none() {
                t.base_suite.clone_from(&l.base_suite);
            }
            if t.version_command.is_empty() {
                t.version_command.clone_from(&l.version_command);
            }
            if t.setup_prelude.is_empty() {
                t.setup_prelude.clone_from(&l.setup_prelude);
            }
            if t.warm.is_empty() {
                t.warm.clone_from(&l.warm);
            }
            t.like.clone_from(&l.like);
            added.splice(0..0, l.add_packages.iter().cloned());
        }
        for p in added {
            if !t.packages.contains(&p) {
                t.packages.push(p);
            }
        }
        t.like = seen.get(1).cloned();
        t.name = name.to_owned();
        t.vars = vars;
        Ok(t)
    }
}

impl Recipe {
    /// The built-in recipe `name`.
    pub fn named(name: &str) -> Result<Recipe, RecipeError> {
        let (_, text) = RECIPES.iter().find(|(n, _)| *n == name).ok_or_else(|| RecipeError::Recipe {
            name: name.to_owned(),
            problem: RecipeProblem::NoSuchRecipe { have: Recipe::names().collect::<Vec<_>>().join(", ") },
        })?;
        let mut r: Recipe =
            toml::from_str(text).map_err(|e| RecipeError::Recipe { name: name.to_owned(), problem: e.into() })?;
        r.name = name.to_owned();
        for c in &mut r.setup {
            if c.contains(TEST_LAUNCHER) {
                *c = c.replace(TEST_LAUNCHER, test_launcher_command());
            }
        }
        Ok(r)
    }

    /// The build tool whose CI options this recipe takes: the first of CMake, `configure` and
    /// Maven it calls to configure (in its setup, or for Maven its test command too); none when
    /// it takes none (`ci_build_flags`).
    pub fn ci_flag_tool(&self) -> Option<crate::FlagTool> {
        use crate::FlagTool;
        if !self.ci_build_flags {
            return None;
        }
        crate::FLAG_TOOLS.into_iter().find(|tool| {
            let calls = |c: &String| with_flags(c, *tool, "").is_some();
            self.setup.iter().any(calls) || *tool == FlagTool::Maven && calls(&self.test_command)
        })
    }

    /// Appends the CI's build options of `set` (one job's, or fewer: [`crate::option_sets`]) to
    /// the recipe's calls of their tool: CMake options to each configuring `cmake` command of the
    /// setup (not `cmake --build`), `configure` switches to each `./configure` of the setup,
    /// Maven profiles to each `mvn` command of the setup, the layer setup and the test command.
    /// What was added and where from, for the provenance. Nothing when the recipe does not take
    /// them or the set is empty.
    pub fn add_ci_flags(&mut self, set: &crate::CiOptionSet) -> Vec<String> {
        use crate::FlagTool;
        if !self.ci_build_flags || set.flags.is_empty() {
            return Vec::new();
        }
        let tool = set.tool;
        let joined = set.flags.iter().map(|f| crate::shell_quote(f)).collect::<Vec<_>>().join(" ");
        let mut added = false;
        let mut add = |c: &mut String| {
            if let Some(with) = with_flags(c, tool, &joined) {
                *c = with;
                added = true;
            }
        };
        self.setup.iter_mut().for_each(&mut add);
        if tool == FlagTool::Maven {
            self.layer_setup.iter_mut().for_each(&mut add);
            add(&mut self.test_command);
        }
        if added {
            vec![format!("{} `{}` from the CI ({})", tool.label(), set.flags.join(" "), set.label)]
        } else {
            Vec::new()
        }
    }

    /// Installs the packages of `stand_ins` (with the CI's, a C-family recipe's: those that take
    /// `ci_apt_packages`), appends the CMake options that point each `FetchContent_Declare` at its
    /// stand-in to the setup's configuring `cmake` calls, and fills each empty submodule folder
    /// from its stand-in's source tree before the setup. What stands in for what, for the
    /// provenance. Nothing for a recipe that takes no CI packages.
    pub fn use_stand_ins(&mut self, stand_ins: &crate::StandIns) -> Vec<String> {
        if !self.ci_apt_packages || stand_ins.is_empty() {
            return Vec::new();
        }
        let mut notes = Vec::new();
        let all = stand_ins
            .fetches
            .iter()
            .map(|(_, s)| *s)
            .chain(stand_ins.submodules.iter().chain(&stand_ins.patch_submodules).map(|(_, s)| *s));
        for p in all.flat_map(|s| &s.packages) {
            if !self.ci_packages.contains(p) {
                self.ci_packages.push(p.clone());
            }
        }
        let options = crate::standins::cmake_options(&stand_ins.fetches).join(" ");
        if !options.is_empty()
            && self.setup.iter_mut().fold(false, |any, c| match with_flags(c, crate::FlagTool::Cmake, &options) {
                Some(with) => {
                    *c = with;
                    true
                }
                None => any,
            })
        {
            for (d, s) in &stand_ins.fetches {
                notes.push(format!(
                    "stand-in: Debian's {} ({}) for `FetchContent_Declare({} {})`, whose host is out of reach",
                    s.name,
                    s.packages.join(", "),
                    d.name,
                    d.url
                ));
            }
        }
        if let Some(step) = crate::standins::submodule_step(&stand_ins.patch_submodules) {
            self.pre_test.push(step);
            for (path, s) in &stand_ins.patch_submodules {
                notes.push(format!(
                    "stand-in: Debian's {} ({}) for the submodule {path} a patch adds, before each test run",
                    s.name,
                    s.packages.join(", ")
                ));
            }
        }
        if let Some(step) = crate::standins::submodule_step(&stand_ins.submodules) {
            self.setup.insert(0, step);
            for (path, s) in &stand_ins.submodules {
                notes.push(format!(
                    "stand-in: Debian's {} ({}) for the submodule {path}, which no local copy holds",
                    s.name,
                    s.packages.join(", ")
                ));
            }
        }
        notes
    }

    /// Puts the install functions of `pm` (`js-deps.sh`, with the manager and the package that
    /// installs it) before the setup, layer setup and prefetch (the prefetch's `js_prefetch`
    /// from `js-prefetch.sh`: no lifecycle script runs), and runs the project's `test` script
    /// with the manager (`yarn test`, not `npm test`: its scripts may call `yarn` themselves).
    /// What was chosen, for the provenance. Nothing when the recipe does not take them.
    pub fn use_package_manager(&mut self, pm: &crate::PackageManager) -> Vec<String> {
        if !self.package_managers {
            return Vec::new();
        }
        let prelude = format!(
            "export SWE_FORGE_PM={} SWE_FORGE_PM_PACKAGE={}\n{}",
            crate::shell_quote(&pm.kind),
            crate::shell_quote(pm.package.as_deref().unwrap_or_default()),
            crate::JS_DEPS_SH
        );
        for steps in [&mut self.setup, &mut self.layer_setup] {
            if !steps.is_empty() {
                steps.insert(0, prelude.clone());
            }
        }
        if !self.prefetch.is_empty() {
            self.prefetch.insert(0, format!("{prelude}{}", crate::pkgmanager::JS_PREFETCH_SH));
        }
        let mut notes = vec![format!(
            "package manager {}, from {}: the dependencies installed with it{}",
            pm.label(),
            pm.reason,
            if pm.reason == "no lockfile" { " as of the commit's time" } else { " from the lockfile as committed" }
        )];
        let tool = pm.command();
        let words: Vec<&str> = self.test_command.split_whitespace().collect();
        if tool != "npm"
            && words.first() == Some(&"npm")
            && matches!(words.get(1), Some(&"test" | &"run" | &"run-script"))
        {
            let command = format!("{tool}{}", &self.test_command.trim_start()[3..]).replace(" run-script ", " run ");
            notes.push(format!("`{command}` instead of `{}`: the project's package manager", self.test_command));
            self.test_command = command;
        }
        notes
    }

    /// The fallback whose sign `log` shows, if any.
    pub fn fallback_for(&self, log: &str) -> Option<&Fallback> {
        self.fallbacks.iter().find(|f| !f.sign.is_empty() && log.contains(&f.sign))
    }

    /// Takes the fallback named `name` (its replacements made, itself removed, so it is taken
    /// once); false when the recipe has none of that name or it changes no command.
    pub fn take_fallback(&mut self, name: &str) -> bool {
        let Some(i) = self.fallbacks.iter().position(|f| f.name == name) else { return false };
        let f = self.fallbacks.remove(i);
        let mut changed = false;
        let mut edit = |c: &mut String| {
            for [from, to] in &f.replace {
                if c.contains(from.as_str()) {
                    *c = c.replace(from.as_str(), to);
                    changed = true;
                }
            }
        };
        for steps in [&mut self.setup, &mut self.layer_setup, &mut self.prefetch, &mut self.pre_test] {
            steps.iter_mut().for_each(&mut edit);
        }
        edit(&mut self.test_command);
        changed
    }

    /// Runs the recipe in the project folder `dir` of the repository (a path ending in `/`, as
    /// [`crate::project_dir`] finds it; the repository is at `root` in the image): every command
    /// (setup, layer setup, prefetch, refresh, pre-test steps and the test command) changes to
    /// the folder first, and the fingerprint's files are those of the folder. What changed, for
    /// the provenance.
    pub fn in_folder(&mut self, dir: &str, root: &str) -> String {
        let to = crate::shell_quote(&format!("{root}/{}", dir.trim_end_matches('/')));
        let cd = format!("cd {to} || exit 1; ");
        for c in self
            .setup
            .iter_mut()
            .chain(self.layer_setup.iter_mut())
            .chain(self.prefetch.iter_mut())
            .chain(self.refresh.iter_mut())
            .chain(self.pre_test.iter_mut())
            .chain([&mut self.test_command])
        {
            *c = format!("{cd}{c}");
        }
        for f in &mut self.fingerprint {
            *f = format!("{dir}{f}");
        }
        format!(
            "the project is in {dir} (the root has no build file; the folder of the patches' files that has one): every command runs there"
        )
    }

    /// Puts the build file's test target (detection's [`crate::Detection::test_target`]) where
    /// the recipe's commands say `@TEST_TARGET@`; whether any did.
    pub fn use_test_target(&mut self, target: &str) -> bool {
        let mut used = false;
        let quoted = crate::shell_quote(target);
        for c in self.setup.iter_mut().chain(self.layer_setup.iter_mut()).chain([&mut self.test_command]) {
            if c.contains(TEST_TARGET) {
                *c = c.replace(TEST_TARGET, &quoted);
                used = true;
            }
        }
        used
    }

    /// Names of the built-in recipes.
    pub fn names() -> impl Iterator<Item = &'static str> {
        RECIPES.iter().map(|(n, _)| *n)
    }

    /// Applies `o` (and its matching variants) when it matches `inst`.
    pub fn apply(&mut self, o: &RecipeOverride, inst: &Instance) {
        if !o.matches(inst) {
            return;
        }
        if let Some(t) = &o.toolchain {
            self.toolchain = t.clone();
        }
        if let Some(l) = &o.language {
            self.language = l.clone();
        }
        self.extra_packages.extend(o.extra_packages.iter().cloned());
        for s in &o.apt_suites {
            if !self.apt_suites.contains(s) {
                self.apt_suites.push(s.clone());
            }
        }
        self.env.extend(o.env.clone());
        let replace = |dst: &mut Vec<String>, src: &Option<Vec<String>>| {
            if let Some(s) = src {
                dst.clone_from(s);
            }
        };
        if o.setup.is_some() {
            self.layer_setup.clear();
        }
        replace(&mut self.setup, &o.setup);
        replace(&mut self.layer_setup, &o.layer_setup);
        replace(&mut self.prefetch, &o.prefetch);
        replace(&mut self.pre_test, &o.pre_test);
        replace(&mut self.results, &o.results);
        if let Some(t) = &o.test_command {
            self.test_command.clone_from(t);
        }
        if let Some(p) = o.parser {
            self.parser = p;
        }
        if let Some(p) = o.results_parser {
            self.results_parser = Some(p);
        }
        self.run_env.extend(o.run_env.clone());
        if let Some(n) = o.network_in_runs {
            self.network_in_runs = n;
        }
        if let Some(c) = o.ci_apt_packages {
            self.ci_apt_packages = c;
        }
        if let Some(c) = o.ci_build_flags {
            self.ci_build_flags = c;
        }
        if let Some(u) = &o.test_user {
            self.test_user = Some(u.clone());
        }
        for x in &o.extra_sources {
            self.extra_sources.retain(|e| e.path != x.path);
            self.extra_sources.push(x.clone());
        }
        for v in &o.variants {
            self.apply(v, inst);
        }
    }
}

/// Every recipe and toolchain `o` and its variants name exists, so a typo is an error when
/// validation starts, not a rejection of each instance it reaches (a parser name is checked when
/// the override is read).
pub fn check_override(o: &RecipeOverride) -> Result<(), RecipeError> {
    if let Some(r) = &o.recipe {
        Recipe::named(r)?;
    }
    if let Some(t) = &o.toolchain {
        Toolchain::named(t)?;
    }
    o.variants.iter().try_for_each(check_override)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inst(number: u64) -> Instance {
        swe_forge_test_support::record("o", "r", number)
    }

    #[test]
    fn built_in_recipes_and_toolchains_load() {
        for name in Recipe::names() {
            let r = Recipe::named(name).unwrap();
            Toolchain::named(&r.toolchain).unwrap();
            assert!(!r.test_command.is_empty());
            // Without one, every instance of a repository shares the environment of its oldest
            // base, and each layer installs its own dependencies again.
            assert!(!r.fingerprint.is_empty(), "recipe {name} names no dependency fingerprint files");
        }
        assert!(Recipe::named("cobol").unwrap_err().to_string().contains("no such recipe"));
    }

    #[test]
    fn the_c_recipes_write_the_same_test_launcher() {
        let cmake = Recipe::named("c-cmake").unwrap();
        let meson = Recipe::named("c-meson").unwrap();
        let launcher = test_launcher_command();
        assert!(launcher.starts_with("printf '%s\\n' '#!/bin/sh'") && !launcher.contains('\n'), "{launcher}");
        assert!(cmake.setup[0].ends_with(&format!("&& {launcher}")), "{}", cmake.setup[0]);
        assert!(meson.setup.iter().any(|c| c == launcher), "{:?}", meson.setup);
        assert!(Recipe::names().all(|n| !format!("{:?}", Recipe::named(n).unwrap()).contains(TEST_LAUNCHER)));
    }

    #[test]
    fn a_recipe_in_a_folder_changes_to_it_in_every_command() {
        let mut r = Recipe::named("rust").unwrap();
        let before = r.clone();
        let note = r.in_folder("json_tests/", "/testbed");
        assert!(note.contains("json_tests/"), "{note}");
        let cd = "cd /testbed/json_tests || exit 1; ";
        assert_eq!(r.test_command, format!("{cd}{}", before.test_command));
        for (now, was) in r.setup.iter().zip(&before.setup).chain(r.prefetch.iter().zip(&before.prefetch)) {
            assert_eq!(now, &format!("{cd}{was}"));
        }
        assert!(r.fingerprint.iter().all(|f| f.starts_with("json_tests/")), "{:?}", r.fingerprint);
    }

    #[test]
    fn the_cis_build_options_go_to_the_configure_steps_of_the_recipes_that_take_them() {
        use crate::{CiOptionSet, FlagTool};
        let set = |tool, label: &str, flag: &str| CiOptionSet { tool, label: label.into(), flags: vec![flag.into()] };
        let cmake_set = set(FlagTool::Cmake, ".github/workflows/ci.yml job test", "-DFOO_BUILD_TESTS=ON");
        let configure_set = set(FlagTool::Configure, ".travis.yml", "--enable-tests");
        let maven_set = set(FlagTool::Maven, ".travis.yml", "-Pci");
        let mut cmake = Recipe::named("c-cmake").unwrap();
        let before = cmake.clone();
        assert_eq!(cmake.ci_flag_tool(), Some(FlagTool::Cmake));
        let notes = cmake.add_ci_flags(&cmake_set);
        assert_eq!(notes, ["cmake -D `-DFOO_BUILD_TESTS=ON` from the CI (.github/workflows/ci.yml job test)"]);
        assert!(cmake.setup[0].starts_with("cmake -DFOO_BUILD_TESTS=ON -S . -B build"), "{}", cmake.setup[0]);
        assert_eq!(cmake.setup[1], before.setup[1], "`cmake --build` takes no options");
        assert_eq!(cmake.test_command, before.test_command);
        let mut autotools = Recipe::named("c-autotools").unwrap();
        assert_eq!(autotools.ci_flag_tool(), Some(FlagTool::Configure));
        autotools.add_ci_flags(&configure_set);
        let configure = autotools.setup.iter().find(|c| c.contains("./configure")).unwrap();
        assert_eq!(
            configure.matches("./configure --enable-tests").count(),
            2,
            "the first try and the fallback: {configure}"
        );
        let mut maven = Recipe::named("java-maven").unwrap();
        assert_eq!(maven.ci_flag_tool(), Some(FlagTool::Maven));
        let notes = maven.add_ci_flags(&maven_set);
        assert_eq!(notes, ["mvn -P `-Pci` from the CI (.travis.yml)"]);
        assert!(maven.setup[0].starts_with("mvn -Pci -B") && maven.layer_setup[0].starts_with("mvn -Pci -B"));
        assert!(maven.test_command.starts_with("mvn -Pci -B"));
        let mut meson = Recipe::named("c-meson").unwrap();
        assert_eq!(meson.ci_flag_tool(), Some(FlagTool::Meson));
        meson.add_ci_flags(&set(FlagTool::Meson, ".github/workflows/ci.yaml job linux", "-Dbuild_tests=true"));
        assert_eq!(meson.setup[0], "meson setup -Dbuild_tests=true build");
        assert_eq!(meson.setup[1], "meson compile -C build", "`meson compile` takes no options");
        assert_eq!(
            with_flags("cd b && cmake .. && cmake --build . && cmake -E echo", FlagTool::Cmake, "-DX=1").unwrap(),
            "cd b && cmake -DX=1 .. && cmake --build . && cmake -E echo"
        );
        assert_eq!(with_flags("mkcmake x; mvnw test", FlagTool::Cmake, "-DX=1"), None, "a word of its own");
        // A recipe that does not take them, or one an override (a profile) turned them off in.
        let mut go = Recipe::named("go").unwrap();
        let go_before = go.clone();
        assert_eq!(go.ci_flag_tool(), None);
        assert!(go.add_ci_flags(&cmake_set).is_empty());
        assert_eq!(go, go_before);
        let mut off = Recipe::named("c-cmake").unwrap();
        off.apply(&RecipeOverride { ci_build_flags: Some(false), ..RecipeOverride::default() }, &inst(1));
        assert_eq!(off.ci_flag_tool(), None);
        assert!(off.add_ci_flags(&cmake_set).is_empty());
        assert_eq!(off.setup, before.setup);
    }

    #[test]
    fn cmake_under_ninja_falls_back_to_makefiles_on_a_file_no_rule_makes() {
        let mut r = Recipe::named("c-cmake").unwrap();
        let log =
            "ninja: error: 'test/prefix/lib/libgmock.a', needed by 'test/unit', missing and no known rule to make it";
        assert_eq!(r.fallback_for("ninja: build stopped: subcommand failed."), None);
        let name = r.fallback_for(log).unwrap().name.clone();
        assert_eq!(name, "Unix Makefiles");
        assert!(r.take_fallback(&name));
        assert!(r.setup[0].starts_with("cmake -S . -B build -G \"Unix Makefiles\" "), "{}", r.setup[0]);
        assert!(!r.test_command.contains("-k 0") && r.test_command.contains("cmake --build build -- -k "));
        assert!(r.fallbacks.is_empty() && r.fallback_for(log).is_none(), "taken once");
        assert!(!r.take_fallback(&name));
        // The Makefile generator's test command, run by sh: `make -k`, no `-k 0` target.
        assert!(!r.test_command.contains("-- -k 0"), "{}", r.test_command);
    }

    #[test]
    fn an_error_is_typed_and_its_message_names_the_recipe() {
        let e = Recipe::named("cobol").unwrap_err();
        assert!(
            matches!(&e, RecipeError::Recipe { name, problem: RecipeProblem::NoSuchRecipe { .. } } if name == "cobol"),
            "{e:?}"
        );
        assert!(e.to_string().starts_with("recipe cobol: no such recipe (have: go, rust, "), "{e}");
        let e = Toolchain::named("cobol").unwrap_err();
        assert!(matches!(&e, RecipeError::Recipe { problem: RecipeProblem::NoSuchToolchain { .. }, .. }), "{e:?}");
        assert!(e.to_string().starts_with("recipe cobol: no such toolchain (have: "), "{e}");
        // The problem is part of the message, not a cause the binary would print a second time.
        assert!(std::error::Error::source(&e).is_none());
    }

    #[test]
    fn a_typo_in_a_variant_is_found_when_the_override_loads() {
        let typo = "parser = \"go-test\"\n[[variants]]\nnumbers = [1, 5]\nresults_parser = \"junit-xm\"\n";
        assert!(toml::from_str::<RecipeOverride>(typo).unwrap_err().to_string().contains("junit-xm"));
        let o: RecipeOverride = toml::from_str("[[variants]]\nnumbers = [1, 5]\nrecipe = \"cobol\"\n").unwrap();
        let e = check_override(&o).unwrap_err();
        assert!(matches!(&e, RecipeError::Recipe { problem: RecipeProblem::NoSuchRecipe { .. }, .. }), "{e:?}");
        let ok: RecipeOverride = toml::from_str("[[variants]]\nnumbers = [1, 5]\nparser = \"junit-xml\"\n").unwrap();
        check_override(&ok).unwrap();
    }

    #[test]
    fn an_override_of_the_setup_is_also_what_a_layer_runs_unless_it_says_otherwise() {
        let maven = Recipe::named("java-maven").unwrap();
        assert!(!maven.layer_setup.is_empty());
        let mut own = maven.clone();
        own.apply(&toml::from_str("setup = [\"./build.sh\"]").unwrap(), &inst(1));
        assert!(own.layer_setup.is_empty(), "a layer runs the override's setup: {:?}", own.layer_setup);
        let mut both = maven.clone();
        both.apply(&toml::from_str("setup = [\"./build.sh\"]\nlayer_setup = [\"./quick.sh\"]").unwrap(), &inst(1));
        assert_eq!((both.setup, both.layer_setup), (vec!["./build.sh".to_owned()], vec!["./quick.sh".to_owned()]));
        let mut env_only = maven.clone();
        env_only.apply(&toml::from_str("env = { A = \"1\" }").unwrap(), &inst(1));
        assert_eq!(env_only.layer_setup, maven.layer_setup);
    }

    #[test]
    fn overrides_and_variants_by_number() {
        let o: RecipeOverride = toml::from_str(
            r#"
            extra_packages = ["tzdata"]
            test_command = "go test -json ./pkg/..."
            env = { X = "1" }
            [[variants]]
            numbers = [1, 100]
            test_command = "go test -json ./old/..."
            recipe = "rust"
            "#,
        )
        .unwrap();
        let mut new = Recipe::named("go").unwrap();
        new.apply(&o, &inst(500));
        assert!(new.extra_packages.contains(&"tzdata".to_owned()));
        assert_eq!(new.test_command, "go test -json ./pkg/...");
        assert_eq!(o.forced_recipe(&inst(500)), None);
        let mut old = Recipe::named("go").unwrap();
        old.apply(&o, &inst(50));
        assert_eq!(old.test_command, "go test -json ./old/...");
        assert_eq!(o.forced_recipe(&inst(50)).as_deref(), Some("rust"));
        assert!(toml::from_str::<RecipeOverride>("test_comand = \"x\"").is_err(), "typos are refused");
    }

    #[test]
    fn an_override_adds_a_suite_whose_named_packages_go_into_the_toolchain_image() {
        let o: RecipeOverride = toml::from_str(
            r#"
            apt_suites = ["sid"]
            extra_packages = ["json-test-data/sid"]
            [[variants]]
            numbers = [1, 100]
            apt_suites = ["sid", "experimental"]
            "#,
        )
        .unwrap();
        let mut r = Recipe::named("c-cmake").unwrap();
        let plain = serde_json::to_string(&r).unwrap();
        assert!(!plain.contains("apt_suites"), "absent from the recipe hash when unused");
        let without = crate::toolchain_dockerfile(
            "base",
            &crate::effective_toolchain(Toolchain::named(&r.toolchain).unwrap(), &r),
        );
        assert!(!without.contains("sources.list.d"), "{without}");
        r.apply(&o, &inst(500));
        let df = crate::toolchain_dockerfile(
            "base",
            &crate::effective_toolchain(Toolchain::named(&r.toolchain).unwrap(), &r),
        );
        assert!(df.contains("$m sid main\" >> /etc/apt/sources.list.d/swe-forge-suites.list"), "{df}");
        assert!(df.contains("Pin: release n=sid\\nPin-Priority: 100"), "{df}");
        assert!(df.contains(" json-test-data/sid"), "{df}");
        let mut old = Recipe::named("c-cmake").unwrap();
        old.apply(&o, &inst(50));
        assert_eq!(old.apt_suites, ["sid", "experimental"], "a suite is named once");
    }

    #[test]
    fn extra_sources_add_up_and_one_path_is_replaced() {
        let o: RecipeOverride = toml::from_str(
            r#"
            extra_sources = [{ repo = "o/data", rev = "v1", path = "/swe-forge/extra/data" }]
            [[variants]]
            numbers = [1, 100]
            extra_sources = [
              { repo = "o/data", rev = "v0", path = "/swe-forge/extra/data" },
              { repo = "o/more", rev = "main", path = "/opt/more" },
            ]
            "#,
        )
        .unwrap();
        let mut new = Recipe::named("c-cmake").unwrap();
        let plain = serde_json::to_string(&new).unwrap();
        assert!(!plain.contains("extra_sources"), "absent from the recipe hash when unused");
        new.apply(&o, &inst(500));
        assert_eq!(new.extra_sources.iter().map(|x| x.rev.as_str()).collect::<Vec<_>>(), ["v1"]);
        let mut old = Recipe::named("c-cmake").unwrap();
        old.apply(&o, &inst(50));
        let got: Vec<(&str, &str)> = old.extra_sources.iter().map(|x| (x.repo.as_str(), x.rev.as_str())).collect();
        assert_eq!(got, [("o/data", "v0"), ("o/more", "main")]);
        assert!(toml::from_str::<RecipeOverride>("extra_sources = [{ repo = \"a/b\", rev = \"v1\" }]").is_err());
    }
}
