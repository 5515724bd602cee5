//! Errors that stop a whole validation (per-instance problems become rejections instead).

/// A validation could not proceed at all.
#[derive(Debug, thiserror::Error)]
pub enum ValidateError {
    /// The Docker engine failed outside any one instance.
    #[error(transparent)]
    Docker(#[from] swe_forge_docker::DockerError),
    /// A recipe, toolchain or override is invalid.
    #[error(transparent)]
    Recipe(#[from] swe_forge_recipes::RecipeError),
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
    /// Several instances in a row failed for this machine's reasons (the engine, the network, a
    /// registry out of reach), not their repositories': validation stopped. Those instances and
    /// the ones not started are left undecided, so a later run does them.
    #[error(
        "stopped: {} instances in a row failed because of this machine, not their repositories ({}): {cause}; \
         they and the instances not finished are left undecided, a re-run resumes them",
        instances.len(),
        instances.join(", ")
    )]
    MachineBroken {
        /// The instances whose failures stopped the run, in the order they ended.
        instances: Vec<String>,
        /// What the last of them failed on.
        cause: String,
    },
}
