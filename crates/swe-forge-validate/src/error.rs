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
