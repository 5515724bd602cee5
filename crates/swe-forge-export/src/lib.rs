//! Export of instance records to the files a dataset ships: JSONL (the Multi-SWE-bench
//! format), an instances Parquet table (one row per instance, lossless) and a tests Parquet
//! table (one row per instance and test). Every file is written atomically: a crash leaves
//! either the previous file or the complete new one. polars is linked by this crate only.

mod atomic;
mod error;
mod instances;
mod table;
mod tests_table;

pub use atomic::{write_file, write_jsonl};
pub use error::ExportError;
pub use instances::{INSTANCE_COLUMNS, read_instances_parquet, write_instances_parquet};
pub use tests_table::{Category, TEST_COLUMNS, TestRow, read_tests_parquet, test_rows, write_tests_parquet};
