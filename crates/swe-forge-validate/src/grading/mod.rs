//! Grading: from the logs of a validation's runs to statuses, categories and the keep-rule
//! verdict, or, for a prediction, to its verdict. One path for validate, regrade, revalidate and
//! evaluate: parse each run with the record's parsers (`grade.rs`), merge repeated runs and set
//! flaky tests apart (`flaky.rs`), apply the keep rules (`rules.rs`), keep what each run gave
//! (`parsed.rs`), and grade again from kept logs without a container (`regrade.rs`).
//!
//! Nothing here builds an image or starts a container; it reads logs and result files.

pub(crate) mod flaky;
pub(crate) mod grade;
pub(crate) mod parsed;
pub(crate) mod regrade;
pub(crate) mod rules;

pub use grade::{Grade, GradeInput, Parsers, ParsersError, Verdict, grade, grade_prediction};
pub use parsed::{kept_parse, read_parsed, reparse};
pub use regrade::{RegradeError, regrade};
pub use rules::keep_rules;
