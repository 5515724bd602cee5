//! Three-run validation of instances: for each record, build its image (base -> toolchain ->
//! instance), run the tests at base, with the test patch, and with both patches, parse each
//! log into per-test statuses, derive the categories and apply the keep rules. Which recipe and
//! toolchain an instance gets is `swe-forge-recipes`'s choice; grading lives in `grading/`.
//!
//! Every per-instance failure (a patch that does not apply, an image that does not build, a
//! timeout) ends as a labelled rejection on that record; only engine-wide problems are errors.
//! A first build or first runs that fail for want of a system package, a CMake generator or
//! another build system of the tree are tried again with it (`retries.rs`).
//!
//! Every setup step sees `SWE_FORGE_COMMIT_TIME` ([`COMMIT_TIME_VAR`]): the committer time (RFC 3339,
//! UTC) of the commit whose tree its layer holds (the environment commit, then the base), so that
//! dependencies a repository does not lock are resolved as of that date, not today (`npm install
//! --before`, `cargo generate-lockfile --publish-time`); it is never in the committed image's config.
//! `SWE_FORGE_REPO` ([`REPO_VAR`]) names the repository (`org/repo`).

mod cioptions;
mod driver;
mod error;
mod evaluate;
mod extra;
mod faults;
mod grading;
mod images;
mod network;
mod phases;
mod retries;
mod submodules;
mod truncation;
mod validator;
mod verify;

pub use driver::{Done, Sink, Stopped, drive};
pub use error::{NoRecipe, ValidateError, VerifyError};
pub use evaluate::{
    EVAL_LABEL, Evaluation, MAX_PATCH_BYTES, Outcome, Prediction, Summary, evaluable, hostile_patch_reason,
};
pub use extra::{ResolvedExtraSource, resolve_extra_sources};
pub use grading::{
    Grade, GradeInput, Parsers, ParsersError, RegradeError, Verdict, grade, grade_prediction, keep_rules, kept_parse,
    read_parsed, regrade, reparse,
};
pub use images::{COMMIT_TIME_VAR, REPO_VAR};
pub use swe_forge_config::{ExtraSource, RecipeOverride};
pub use swe_forge_core::PARSED_SUFFIX;
pub use truncation::RunFacts;
pub use validator::{Reporter, Settings, Silent, Step, Validator, default_memory_mb};
pub use verify::{VOLATILE, VerifyReport};
