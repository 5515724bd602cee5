//! What the tests of swe-forge's crates share; a dev-dependency only, never linked into a library
//! or the binary.
//!
//! - [`replay`]: a local HTTP server answering like GitHub (github.com is unreachable here).
//! - [`devset`] / [`devset_text`]: the 22 published records of `data/devset/instances.jsonl`.
//! - [`git`] / [`git_at`]: the git command line with a fixed identity, for small repositories.
//! - [`record`]: a minimal record to build on.
//!
//! **Invariant:** depends on `swe-forge-core` only, so any crate but core may use it in its unit
//! tests without a second copy of its own types.

mod fixtures;
pub mod replay;

pub use fixtures::{DEVSET, devset, devset_text, git, git_at, record, workspace_root};
