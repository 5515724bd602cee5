//! Agreement between published test lists and re-derived ones.
//!
//! `swe-forge revalidate` runs published records (Multi-SWE-bench JSONL, test lists included)
//! through the validator again; this crate compares what it found with what was published,
//! instance by instance, without Docker, so every rule here is unit-tested:
//!
//! - [`View`] is one side of a comparison in one [`Naming`](swe_forge_logparse::Naming): the published record's category
//!   maps and run results verbatim, or our three parsed logs rolled up to Multi-SWE-bench names
//!   (or kept as canonical ids) and categorised with the Multi-SWE-bench rule.
//! - [`agree`] compares strict f2p, FAIL_TO_PASS (f2p + s2p + n2p) and PASS_TO_PASS
//!   ([`ListComparison`]: exact, Jaccard, the tests on each side only), puts the run counts side
//!   by side and gives every difference a classified [`Cause`] (`cause.rs` documents the
//!   rules); it also returns the re-derived record in the comparison's naming.
//! - [`AgreementReport`] tallies the rows overall, per language and per repository; JSON via
//!   serde for machines, [`agreement_markdown`] and [`environments_markdown`] for people.
//!
//! Depends on `swe-forge-core` and `swe-forge-logparse` only: it never runs a container, reads a
//! repository or touches the network.

mod cause;
mod compare;
mod error;
mod markdown;
mod naming;
mod report;

pub use cause::{Cause, CauseCount, Evidence, build_failed, classify_tests, looks_like_toolchain};
pub use compare::ListComparison;
pub use error::AgreeError;
pub use markdown::{agreement_markdown, environments_markdown};
pub use naming::{PhaseLogs, View, rederive};
pub use report::{
    AgreementReport, Counts, ImageFacts, InstanceAgreement, Outcome, Revalidated, RunCounts, Tally, agree,
};

#[cfg(test)]
pub(crate) mod tests {
    //! Helpers shared by the unit tests.

    pub(crate) use crate::naming::tests::log;

    pub(crate) use swe_forge_test_support::record;
}
