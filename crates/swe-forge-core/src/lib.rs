//! Plain data shared by every swe-forge stage: the instance record (a superset of the
//! Multi-SWE-bench record), test statuses, the category rules, rejection reasons, the names of
//! the test-output formats (`Framework`), the funnel of a validation's records.
//!
//! This crate must stay small: serde data and pure functions only. It never links git2,
//! bollard, parquet or octocrab; edge crates convert their types into these records.

mod category;
mod day;
mod error;
mod framework;
mod funnel;
mod labels;
mod layout;
mod lines;
mod markdown;
mod patch;
mod quality;
mod record;
mod status;
mod testfiles;
mod variants;
mod warning;

pub use category::{Categorized, categorize, categorize_with};
pub use day::{Day, Timestamp, rfc3339_utc, rfc3339_utc_millis_now, utc_seconds};
pub use error::{DateError, RecordError, json_line_error};
pub use framework::{Framework, UnknownFramework};
pub use funnel::ValidationFunnel;
pub use labels::{
    ALL_TESTS, Control, Evidence, LabelRule, Labels, LayoutRun, Truncation, TruncationCause, exit_code_status,
    phase_gap,
};
pub use layout::{PARSED_SUFFIX, RunLogs};
pub use lines::{BoundedLines, MAX_LINE, bounded_lines};
pub use markdown::{Align, MarkdownTable};
pub use patch::{
    DiffLine, DiffLines, FileDiff, PatchHunk, PatchShape, diff_lines, file_diffs, partition_hunks, patch_hunks,
    without_hunk,
};
pub use quality::{
    Flakiness, HunkAblation, Leakage, QUALITY_VERSION, Quality, QualityFlag, Specificity, UnnamedIdentifier,
    lacks_issue_text,
};
pub use record::{
    Base, BuildAttempt, CiOptions, CiOptionsAttempt, ExtraSourceProvenance, ForgeMeta, Instance, JsonlRecords,
    PassRates, PhaseRun, Provenance, RejectReason, Rejection, ResolvedIssue, SCHEMA_VERSION, TestMap, TestResult,
    ToolchainAttempt, ToolchainChoice, ValidationStatus, image_name_problem, jsonl_records, path_component_problem,
    read_jsonl, read_jsonl_log, write_jsonl,
};
pub use record::{
    Decision, Difficulty, DifficultyFeatures, DifficultyLabel, Duplicate, LabelSource, Review, TimeToFix, Verdict,
};
pub use status::{Phase, PhaseStatuses, TestStatus, Transition};
pub use testfiles::{
    TEST_DIRS, is_js_suite_file, is_test_path, restored_test_files, runner_config_rule, test_change_rule,
    test_path_rule,
};
pub use variants::{HUNK_OFFSET, LayoutVariant};
pub use warning::Warning;
