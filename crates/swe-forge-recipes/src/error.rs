//! The errors of recipe, toolchain and release data: a name that is not known, a file that does
//! not parse. Per-instance problems (no build files, a version nothing admits) are not errors here:
//! the functions that meet them return `None` or a reason for the caller's rejection.

/// A recipe, toolchain, override or releases file is invalid, or names something unknown.
#[derive(Debug, thiserror::Error)]
pub enum RecipeError {
    /// A recipe or toolchain (built-in, or named by an override) is invalid or unknown.
    #[error("recipe {name}: {message}")]
    Recipe {
        /// Which recipe or toolchain (the repository, once the caller knows whose override it is).
        name: String,
        /// What is wrong.
        message: String,
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
