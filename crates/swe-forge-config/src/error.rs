//! The errors of loading a pipeline or profile file; each names the file, and a failed check the
//! key too.

use std::path::PathBuf;

/// Why a pipeline or profile file did not load.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file could not be read.
    #[error("reading {what} {}", path.display())]
    Read {
        /// `pipeline` or `profile`.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file is not TOML of the expected shape (the TOML error names the key and line).
    #[error("{origin} is invalid")]
    Parse {
        /// The file (`pipeline <path>`, `<path>` or `built-in profile <name>`).
        origin: String,
        /// Why.
        #[source]
        source: toml::de::Error,
    },
    /// A value has the right type but names nothing that exists.
    #[error("{origin} is invalid: `{key}`: {message}")]
    Invalid {
        /// The file.
        origin: String,
        /// The key, as a TOML path (`overrides."org/repo".variants[0].parser`).
        key: String,
        /// What is wrong with it.
        message: String,
    },
    /// A profile name that is neither a file nor a built-in profile.
    #[error("no profile `{name}`: not a file, and the built-in profiles are {known}")]
    UnknownProfile {
        /// The name given.
        name: String,
        /// The built-in profiles, comma-separated.
        known: String,
    },
}
