//! Recipes and toolchain choice, without Docker: which recipe a repository's build files call
//! for (`detect.rs`; Ant's build.xml in `ant.rs`), the toolchain versions its build files and CI ask for (`requests.rs`), the
//! packages and build options its CI installs and passes (`cipackages.rs`, `ciflags.rs`, from one job
//! of those `cijobs.rs` reads), the
//! version chosen and the search after a setup fails on it (`toolchoice.rs`), the recipe and
//! toolchain data (`recipes/*.toml`, built in) with per-repository overrides applied
//! (`recipe.rs`), the commit each repository environment is built at (`env.rs`), the test
//! command an instance runs (`testcmd.rs`), the package manager of a JavaScript repository and the
//! install it runs (`pkgmanager.rs`), the system dependency a failed build lacks and the Debian
//! package that provides it (`sysdeps.rs`), the Debian packages standing in for a dependency fetched
//! from a host out of reach (`standins.rs`) and the Dockerfile text of a toolchain image (`dockerfile.rs`).
//!
//! Everything here reads files (build files at a commit, the built-in data) and returns data; it
//! never starts a container or talks to an engine. `swe-forge-validate` builds and runs what this
//! crate chooses.

mod ant;
mod ciflags;
mod cijobs;
mod cipackages;
mod detect;
mod dockerfile;
mod env;
mod error;
mod hash;
mod pkgmanager;
mod recipe;
mod requests;
mod root;
mod standins;
mod sysdeps;
mod testcmd;
mod toolchoice;

pub use ant::{ant_levels, ant_test_target};
pub use ciflags::{
    CiClone, CiFlags, CiOptionSet, FLAG_TOOLS, FlagTool, choice_reason, chosen, ci_clones, ci_flags, flags_for,
    option_failure, option_sets,
};
pub use cijobs::{CiJob, ci_jobs};
pub use cipackages::{CiPackages, all_packages, ci_packages};
pub use detect::{Detection, LOCKFILES, detect, detect_at, project_dir};
pub use dockerfile::{CI_PACKAGES_FILE, effective_toolchain, shell_quote, toolchain_dockerfile};
pub use env::{DEFAULT_MAX_ENVIRONMENTS, fingerprint, fingerprint_matches, plan_env_commits, prefetch_puts_in_place};
pub use error::{RecipeError, RecipeProblem};
pub use hash::sha256_hex;
pub use pkgmanager::{JS_DEPS_SH, PackageManager, package_manager};
pub use recipe::{Fallback, Recipe, SETUP_NOTES, TEST_TARGET, Toolchain, check_override};
pub use root::root_refusal;
pub use standins::{
    FetchDeclaration, StandIn, StandIns, fetch_declarations, patch_submodules, stand_in_for_url, stand_in_table,
    stand_ins_for,
};
pub use sysdeps::{Missing, MissingKind, contents_ignore_case, contents_pattern, missing_dependency, pick_package};
pub use testcmd::{
    NO_FAIL_FAST_JS, PreRunner, ci_test_command, first_runner, mocha_options, no_fail_fast, no_fail_fast_js_step,
    pre_runner_step, pre_runner_steps, script_chain,
};
pub use toolchoice::{
    BIGGER_STACK, COMPILER_STACK, Choice, DEFAULT_TOOLCHAIN_ATTEMPTS, Direction, Release, Releases, Tool,
    ToolchainSign, Version, VersionRequest, Want, bigger_stack_env, choose, classify_failure, next_candidate,
    raised_stack, semver_range_admits, tested_versions,
};
