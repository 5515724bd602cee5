//! The errors of recipe, toolchain and release data: a name that is not known, a file that does
//! not parse. Per-instance problems (no build files, a version nothing admits) are not errors here:
//! the functions that meet them return `None` or a reason for the caller's rejection.

/// A recipe, toolchain, override or releases file is invalid, or names something unknown.
#[derive(Debug, thiserror::Error)]
pub enum RecipeError {
    /// A recipe or toolchain (built-in, or named by an override) is invalid or unknown.
    #[error("recipe {name}: {problem}")]
    Recipe {
        /// Which recipe or toolchain (the repository, once the caller knows whose override it is).
        name: String,
        /// What is wrong (part of this error's message, not a cause of its own).
        problem: RecipeProblem,
    },
    /// releases.toml is not TOML of the expected shape.
    #[error(transparent)]
    ReleasesToml(#[from] toml::de::Error),
    /// A release's version does not read as a version of its family.
    #[error("{family}: version {version:?} is not a version")]
    ReleaseVersion {
        /// The family (`java`, `node`, ...).
        family: &'static str,
        /// The version as written.
        version: String,
    },
    /// A release's `current_from` is not a day.
    #[error("{family} {version}: current_from {current_from:?} is not YYYY-MM-DD")]
    ReleaseDay {
        /// The family (`java`, `node`, ...).
        family: &'static str,
        /// The release's version.
        version: String,
        /// The day as written.
        current_from: String,
    },
}

/// What is wrong with a recipe, a toolchain or an override.
#[derive(Debug, thiserror::Error)]
pub enum RecipeProblem {
    /// No built-in recipe has the name.
    #[error("no such recipe (have: {have})")]
    NoSuchRecipe {
        /// The recipes there are, comma-separated.
        have: String,
    },
    /// No toolchain, nor version of a template, has the name.
    #[error("no such toolchain (have: {have})")]
    NoSuchToolchain {
        /// The toolchains there are, comma-separated.
        have: String,
    },
    /// The name is a template's (`node-dist`): only its versions (`node16`) are toolchains.
    #[error("a template of versions: name one of them (have: {have})")]
    Template {
        /// The toolchains there are, comma-separated.
        have: String,
    },
    /// A toolchain is `like` one that does not exist.
    #[error("`like = {like:?}` names no toolchain (have: {have})")]
    LikeNamesNothing {
        /// The name `like` gives.
        like: String,
        /// The toolchains there are, comma-separated.
        have: String,
    },
    /// Toolchains are `like` each other in a circle.
    #[error("`like` goes round in a circle: {} -> {like}", chain.join(" -> "))]
    LikeCircle {
        /// The toolchains followed, from the one asked for.
        chain: Vec<String>,
        /// The name that closes the circle.
        like: String,
    },
    /// The recipe or toolchain data is not TOML of the expected shape.
    #[error(transparent)]
    Toml(#[from] toml::de::Error),
}
