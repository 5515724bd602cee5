//! The errors of this crate. Parsing logs never fails (any bytes are accepted); only the data
//! files this crate reads can be wrong.

use thiserror::Error;

/// A Multi-SWE-bench naming file (`pipelines/naming/msb.toml`) that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum MsbNamingError {
    /// Not TOML, or not the expected tables and keys.
    #[error("Multi-SWE-bench naming file: {0}")]
    Toml(String),
    /// An entry that is not an `org/repo` name.
    #[error("Multi-SWE-bench naming file: `{0}` is not `org/repo`")]
    NotARepository(String),
    /// An entry listed twice (names are compared without regard to case).
    #[error("Multi-SWE-bench naming file: `{0}` is listed twice")]
    Repeated(String),
    /// An entry in two lists of one table (two rules for one repository and framework).
    #[error("Multi-SWE-bench naming file: `{0}` has two rules in one table")]
    TwoRules(String),
}

/// A naming name that is not one of `msb`, `canonical`, `auto` (see [`crate::Naming`]).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("unknown naming `{0}` (known: msb, canonical, auto)")]
pub struct UnknownNaming(pub String);
