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

/// Why no recipe fits an instance; validation rejects the instance `unsupported_environment`
/// with this text.
#[derive(Debug, thiserror::Error)]
pub enum NoRecipe {
    /// Detection found build files that no recipe supports, and says why.
    #[error("{0}")]
    Unsupported(String),
    /// Detection found no build files it knows, and no override names a recipe.
    #[error(
        "no known build files at the base commit (go.mod or *.go files at the root, Cargo.toml, pom.xml, \
         package.json, CMakeLists.txt, configure.ac, meson.build, a Makefile with a check or test target); \
         name a recipe in an override"
    )]
    NoBuildFiles,
    /// The recipe or toolchain named is unknown or invalid.
    #[error(transparent)]
    Recipe(#[from] swe_forge_recipes::RecipeError),
}

/// Why an instance's image could not be rebuilt and compared (`images verify`).
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// The record names no image.
    #[error("{instance_id}: the record names no image (was it validated?)")]
    NoImage {
        /// The instance.
        instance_id: String,
    },
    /// The image on record is not in the engine.
    #[error("{instance_id}: image {image} is not in the engine")]
    NotInEngine {
        /// The instance.
        instance_id: String,
        /// The image on record.
        image: String,
    },
    /// The engine failed.
    #[error(transparent)]
    Docker(#[from] swe_forge_docker::DockerError),
    /// The repository or its base commit could not be read.
    #[error(transparent)]
    Git(#[from] swe_forge_git::GitError),
    /// No recipe fits the instance.
    #[error(transparent)]
    NoRecipe(#[from] NoRecipe),
    /// An extra source of the recipe could not be found.
    #[error(transparent)]
    ExtraSource(#[from] ValidateError),
    /// The rebuild failed for reasons of the repository or recipe.
    #[error("{instance_id}: the rebuild failed: {detail}")]
    Rebuild {
        /// The instance.
        instance_id: String,
        /// What failed.
        detail: String,
    },
    /// The engine failed while rebuilding.
    #[error("{instance_id}: {source}")]
    RebuildEngine {
        /// The instance.
        instance_id: String,
        /// The engine's error.
        source: swe_forge_docker::DockerError,
    },
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_reason_for_no_build_files_is_one_sentence() {
        assert_eq!(
            super::NoRecipe::NoBuildFiles.to_string(),
            "no known build files at the base commit (go.mod or *.go files at the root, Cargo.toml, pom.xml, \
             package.json, CMakeLists.txt, configure.ac, meson.build, a Makefile with a check or test target); name \
             a recipe in an override"
        );
    }
}
