//! Errors that stop a whole validation (per-instance problems become rejections instead).

/// A validation could not proceed at all.
#[derive(Debug, thiserror::Error)]
pub enum ValidateError {
    /// The Docker engine failed outside any one instance.
    #[error(transparent)]
    Docker(#[from] swe_forge_docker::DockerError),
    /// A recipe file is invalid.
    #[error("recipe {name}: {message}")]
    Recipe {
        /// Which recipe.
        name: String,
        /// What is wrong.
        message: String,
    },
    /// An extra source a recipe declares is not in the local mirrors (or its path is not allowed).
    #[error("extra source {repo} at {rev}: {reason} (looked for in {looked_in})")]
    ExtraSource {
        /// `org/name` of the extra source.
        repo: String,
        /// The revision asked for.
        rev: String,
        /// Where it was looked for (the mirrors folder, or the repository found there).
        looked_in: String,
        /// What is wrong.
        reason: String,
    },
    /// Writing logs failed.
    #[error("writing {path}")]
    Io {
        /// The file.
        path: std::path::PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
}
