//! The review page: a loopback HTTP server (hyper on tokio) that serves a dataset to people who
//! review its instances, and appends their reviews to the state store (`swe-forge-store`).
//!
//! `server` owns the connections (bound to 127.0.0.1, a bounded number at a time, each with a
//! deadline); `api` the routes and the checks of origin; `index` the summary and byte range of
//! every record, so a page of thousands of instances stays fast; `overview` an instance's first screen (quality
//! signals with their evidence, the gold patch and controls, warnings, upstream links); `table`
//! the per-test table of an instance; `logs` the run logs decoded (`go test -json`) and cut into per-test sections;
//! `workdir` where validation left the logs when no folder is given; `rows` the record's forms
//! of the store's review and decision rows, which `swe-forge-curate` takes. The questionnaire's
//! keep rule is `swe_forge_curate::KeepRule`. This crate never prints and never talks to Docker, git or
//! any address but the loopback one it listens on.

mod api;
mod error;
mod index;
mod logs;
mod overview;
mod rows;
mod server;
mod table;
mod workdir;

pub use error::ReviewError;
pub use rows::{decision_from_row, review_from_row};
pub use server::{Limits, ReviewServer, ServerOptions, WorkDir};
pub use workdir::{find_store, find_work_dir, store_for};
