//! Export of instance records to the files a dataset ships: JSONL (the Multi-SWE-bench
//! format), an instances Parquet table (one row per instance, lossless), a tests Parquet table
//! (one row per instance and test), a SWE-bench view (JSONL or Parquet) and Harbor task folders
//! (`harbor.rs`), and reading records
//! back from JSONL or the instances table (also in the first layout, which swe-forge wrote with
//! polars: `legacy.rs`). Every file is written atomically (`swe_forge_fs::write_with`): a crash leaves
//! either the previous file or the complete new one. Parquet files hold plain Arrow types only
//! (no `string_view`, no `large_list`) so that every common reader, old and new, opens them; the
//! Parquet dependency (arrow-rs) is linked by this crate only.

mod error;
mod harbor;
mod instances;
mod legacy;
mod records;
mod swebench;
mod table;
mod tests_table;

pub use error::{ExportError, NotATask};
pub use harbor::{HARBOR_MANIFEST, HarborManifest, HarborTask, HarborWriter, write_harbor_dir};
pub use instances::{
    FLAT_COLUMNS, FlatFields, INSTANCE_COLUMNS, INSTANCES_TABLE, InstancesWriter, read_flat_columns,
    read_instances_parquet, write_instances_parquet,
};
pub use records::{
    JsonlWriter, MAX_STREAMED_PARQUET, RecordStream, open_records, open_records_stream, read_records,
    read_records_stream, write_jsonl,
};
/// Writes bytes to a file atomically: the one atomic file writer, `swe_forge_fs`'s.
pub use swe_forge_fs::write_file;
pub use swebench::{
    SWEBENCH_COLUMNS, SWEBENCH_TABLE, SweBenchJsonlWriter, SweBenchParquetWriter, SweBenchRow, eval_script,
    write_swebench_jsonl, write_swebench_jsonl_named, write_swebench_parquet, write_swebench_parquet_named,
};
pub use table::{
    GIT_COMMIT_KEY, Producer, SCHEMA_VERSION_KEY, TABLE_KEY, TABLE_VERSION, TABLE_VERSION_KEY, VERSION_KEY, is_parquet,
};
pub use tests_table::{
    Category, TEST_COLUMNS, TESTS_TABLE, TestRow, TestsWriter, read_tests_parquet, test_rows, write_tests_parquet,
};
