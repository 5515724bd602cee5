//! Shared plumbing of the Parquet tables: the plain Arrow types every table is written with,
//! the file's key-value metadata, writing one record batch, reading a file back with its columns
//! checked by name and type, and telling a Parquet file from JSONL by its magic bytes.
//!
//! Only plain types are written (`string`, `list<…>` with 32-bit offsets, `struct`, `uint64`, `bool`),
//! never `string_view` or `large_list`: pyarrow 15, pandas on pyarrow 21+, Hugging Face
//! `datasets` 2.19, polars and duckdb all read them.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, ListArray, RecordBatch, StringArray, StructArray, UInt64Array};
use arrow_buffer::OffsetBuffer;
use arrow_schema::{DataType, Field, Fields, Schema};
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;

use crate::ExportError;

/// Key-value metadata key naming the table a file holds: `instances`, `tests` or `swebench`.
pub const TABLE_KEY: &str = "swe_forge.table";
/// Key-value metadata key of the table layout's version ([`TABLE_VERSION`]).
pub const TABLE_VERSION_KEY: &str = "swe_forge.table_version";
/// Key-value metadata key of the record schema version (`swe_forge.schema_version` of records).
pub const SCHEMA_VERSION_KEY: &str = "swe_forge.schema_version";
/// Key-value metadata key of the swe-forge version that wrote the file.
pub const VERSION_KEY: &str = "swe_forge.version";
/// Key-value metadata key of the git commit swe-forge was built from (absent when unknown).
pub const GIT_COMMIT_KEY: &str = "swe_forge.git_commit";
/// Version of the tables' column layout: 2 has struct and list columns where 1 had JSON strings;
/// 3 adds the flat columns of `swe_forge` to the instances table (`difficulty`,
/// `evidence_complete`, `image_digest`, ...) and calls the tests table's base-run status
/// `base_status` (2: `run`). Files of layout 2 are read too.
pub const TABLE_VERSION: u32 = 3;

/// Who wrote an export file; stored in every Parquet file's key-value metadata.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Producer {
    /// swe-forge's version (`CARGO_PKG_VERSION` of the binary).
    pub version: String,
    /// The git commit the binary was built from, when known.
    pub git_commit: Option<String>,
}

/// True when `path` starts with Parquet's magic bytes `PAR1` (JSONL never does).
pub fn is_parquet(path: impl AsRef<Path>) -> Result<bool, ExportError> {
    let path = path.as_ref();
    let mut file = File::open(path).map_err(|source| ExportError::Io { path: path.to_owned(), source })?;
    let mut magic = [0u8; 4];
    let mut read = 0;
    while read < magic.len() {
        match file.read(&mut magic[read..]) {
            Ok(0) => return Ok(false),
            Ok(n) => read += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(source) => return Err(ExportError::Io { path: path.to_owned(), source }),
        }
    }
    Ok(&magic == b"PAR1")
}

/// `string`, never null.
pub(crate) fn text_field(name: &str) -> Field {
    Field::new(name, DataType::Utf8, false)
}

/// `string`, null where the value is absent.
pub(crate) fn nullable_text_field(name: &str) -> Field {
    Field::new(name, DataType::Utf8, true)
}

/// `uint64`, never null.
pub(crate) fn unsigned_field(name: &str) -> Field {
    Field::new(name, DataType::UInt64, false)
}

/// `list<string>` (32-bit offsets), never null, elements never null.
pub(crate) fn text_list_field(name: &str) -> Field {
    Field::new_list(name, Field::new_list_field(DataType::Utf8, false), false)
}

/// `list<struct<fields>>`, never null, elements never null.
pub(crate) fn struct_list_field(name: &str, fields: Fields) -> Field {
    Field::new_list(name, Field::new_list_field(DataType::Struct(fields), false), false)
}

/// A `string` column.
pub(crate) fn texts<'a>(values: impl IntoIterator<Item = &'a str>) -> ArrayRef {
    Arc::new(values.into_iter().map(Some).collect::<StringArray>())
}

/// A `string` column with nulls.
pub(crate) fn nullable_texts<'a>(values: impl IntoIterator<Item = Option<&'a str>>) -> ArrayRef {
    Arc::new(values.into_iter().collect::<StringArray>())
}

/// A `uint64` column.
pub(crate) fn unsigned(values: impl IntoIterator<Item = u64>) -> ArrayRef {
    Arc::new(values.into_iter().collect::<UInt64Array>())
}

/// A list column: `lengths[i]` consecutive elements of `values` per row; `field` is the
/// column's own field (a `List`).
pub(crate) fn list(field: &Field, lengths: Vec<usize>, values: ArrayRef) -> ArrayRef {
    let DataType::List(item) = field.data_type() else { unreachable!("list() takes list fields") };
    Arc::new(ListArray::new(item.clone(), OffsetBuffer::from_lengths(lengths), values, None))
}

/// A `list<string>` column with one list per row.
pub(crate) fn text_list<'a, R, I>(field: &Field, rows: R) -> ArrayRef
where
    R: IntoIterator<Item = I>,
    I: IntoIterator<Item = &'a str>,
{
    let mut lengths = Vec::new();
    let mut values = Vec::new();
    for row in rows {
        let before = values.len();
        values.extend(row);
        lengths.push(values.len() - before);
    }
    list(field, lengths, texts(values))
}

/// A `struct` column (no null rows) of `fields` made of `columns`.
pub(crate) fn structs(fields: &Fields, columns: Vec<ArrayRef>) -> ArrayRef {
    Arc::new(StructArray::new(fields.clone(), columns, None))
}

/// Most rows a row group of a table written in batches holds, and most bytes of patches, issue
/// text and test names one batch of records gathers before it is written: a table is written
/// in row groups of bounded size, so memory does not grow with the number of rows.
pub(crate) const BATCH_ROWS: usize = 2048;
/// See [`BATCH_ROWS`]: 64 MiB.
pub(crate) const BATCH_BYTES: usize = 64 << 20;

/// A Parquet table being written through the one output writer, one record batch (one row
/// group) at a time, zstd-compressed, with swe-forge's key-value metadata naming its table.
/// Nothing is in place until [`ParquetSink::finish`].
pub(crate) struct ParquetSink {
    path: std::path::PathBuf,
    table: &'static str,
    producer: Producer,
    /// The output, until the first batch gives the writer its schema.
    out: Option<swe_forge_fs::Output>,
    writer: Option<ArrowWriter<BufWriter<swe_forge_fs::Output>>>,
    /// The schema of the first batch, every batch's.
    schema: Option<Arc<Schema>>,
}

impl ParquetSink {
    /// Prepares the output `path` (no file is in place before [`ParquetSink::finish`]).
    pub(crate) fn create(path: &Path, table: &'static str, producer: &Producer) -> Result<ParquetSink, ExportError> {
        let out = swe_forge_fs::Output::create(path)?;
        Ok(ParquetSink {
            path: path.to_owned(),
            table,
            producer: producer.clone(),
            out: Some(out),
            writer: None,
            schema: None,
        })
    }

    /// The path being written.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Whether no batch was written yet.
    pub(crate) fn is_empty(&self) -> bool {
        self.writer.is_none()
    }

    /// Writes `columns` as one row group; the first batch sets the file's schema.
    pub(crate) fn write(&mut self, columns: Vec<(Field, ArrayRef)>) -> Result<(), ExportError> {
        let path = &self.path;
        let arrow_err = |source| ExportError::Arrow { path: path.to_owned(), source };
        let parquet_err = |source| ExportError::Parquet { path: path.to_owned(), source };
        let (fields, arrays): (Vec<Field>, Vec<ArrayRef>) = columns.into_iter().unzip();
        let schema = self.schema.get_or_insert_with(|| Arc::new(Schema::new(fields))).clone();
        let batch = RecordBatch::try_new(schema.clone(), arrays).map_err(arrow_err)?;
        if self.writer.is_none() {
            let out = self.out.take().expect("an output until the writer is made");
            let props = WriterProperties::builder()
                .set_compression(Compression::ZSTD(ZstdLevel::default()))
                .set_key_value_metadata(Some(metadata(self.table, &self.producer)))
                .build();
            self.writer = Some(ArrowWriter::try_new(BufWriter::new(out), schema, Some(props)).map_err(parquet_err)?);
        }
        let writer = self.writer.as_mut().expect("made above");
        writer.write(&batch).map_err(parquet_err)?;
        writer.flush().map_err(parquet_err)
    }

    /// Writes the footer and puts the file in place. A table no batch was written to must be
    /// given its (empty) batch first.
    pub(crate) fn finish(self) -> Result<(), ExportError> {
        let path = self.path;
        let parquet_err = |source| ExportError::Parquet { path: path.clone(), source };
        let writer = self.writer.expect("finish after at least one batch");
        let buffered = writer.into_inner().map_err(parquet_err)?;
        let out = buffered.into_inner().map_err(|e| ExportError::Io { path: path.clone(), source: e.into_error() })?;
        Ok(out.commit()?)
    }
}

/// swe-forge's key-value metadata of a file holding `table`.
fn metadata(table: &str, producer: &Producer) -> Vec<KeyValue> {
    let mut meta = vec![
        KeyValue::new(TABLE_KEY.to_owned(), table.to_owned()),
        KeyValue::new(TABLE_VERSION_KEY.to_owned(), TABLE_VERSION.to_string()),
        KeyValue::new(SCHEMA_VERSION_KEY.to_owned(), swe_forge_core::SCHEMA_VERSION.to_string()),
        KeyValue::new(VERSION_KEY.to_owned(), producer.version.clone()),
    ];
    if let Some(commit) = &producer.git_commit {
        meta.push(KeyValue::new(GIT_COMMIT_KEY.to_owned(), commit.clone()));
    }
    meta
}

/// The Arrow schema and key-value metadata of the Parquet file at `path`, from its footer.
pub(crate) fn peek(path: &Path) -> Result<(arrow_schema::SchemaRef, BTreeMap<String, String>), ExportError> {
    let file = File::open(path).map_err(|source| ExportError::Io { path: path.to_owned(), source })?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(file)
        .map_err(|source| ExportError::Parquet { path: path.to_owned(), source })?;
    Ok((builder.schema().clone(), key_values(&builder)))
}

/// The key-value metadata of a file being read.
fn key_values(builder: &ParquetRecordBatchReaderBuilder<File>) -> BTreeMap<String, String> {
    builder
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .into_iter()
        .flatten()
        .filter_map(|kv| Some((kv.key.clone(), kv.value.clone()?)))
        .collect()
}

/// A Parquet file read back: into memory ([`Table::read`]), or a record batch at a time
/// ([`Table::open`]).
pub(crate) struct Table {
    path: PathBuf,
    batches: Vec<RecordBatch>,
    /// The fields that hold no null, checked in every batch.
    non_null: Vec<String>,
}

impl Table {
    /// Reads the whole file and checks that every field of `want` is present with its type
    /// (nested names and nullability included) and that non-nullable columns hold no null.
    /// A file whose metadata names a table other than `table` is refused.
    pub(crate) fn read(path: &Path, table: &str, want: &[Field]) -> Result<Table, ExportError> {
        let (mut t, reader) = Table::open(path, table, want)?;
        t.batches = reader
            .collect::<Result<Vec<_>, _>>()
            .map_err(|source| ExportError::Arrow { path: path.to_owned(), source })?;
        for f in want.iter().filter(|f| !f.is_nullable()) {
            let nulls: usize = t.batches.iter().map(|b| t.column_of(b, f.name()).map_or(0, |c| c.null_count())).sum();
            if nulls > 0 {
                return Err(t.null_err(f.name(), nulls));
            }
        }
        Ok(t)
    }

    /// [`Table::read`]'s checks of the footer, and a reader of the file's record batches (one
    /// row group at a time), each to be checked with [`Table::check`]; the table holds no batch.
    pub(crate) fn open(
        path: &Path,
        table: &str,
        want: &[Field],
    ) -> Result<(Table, ParquetRecordBatchReader), ExportError> {
        let parquet_err = |source| ExportError::Parquet { path: path.to_owned(), source };
        let file = File::open(path).map_err(|source| ExportError::Io { path: path.to_owned(), source })?;
        let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(parquet_err)?;
        let meta = key_values(&builder);
        if let Some(found) = meta.get(TABLE_KEY).filter(|t| *t != table) {
            return Err(ExportError::Table { path: path.to_owned(), expected: table.to_owned(), found: found.clone() });
        }
        let schema = builder.schema().clone();
        let column_err = |column: &str, message: String| ExportError::Column {
            path: path.to_owned(),
            column: column.to_owned(),
            message,
        };
        for f in want {
            let found = schema.field_with_name(f.name()).map_err(|_| column_err(f.name(), "missing".to_owned()))?;
            if found.data_type() != f.data_type() {
                return Err(column_err(
                    f.name(),
                    format!("expected type {}, found {}", f.data_type(), found.data_type()),
                ));
            }
        }
        let reader = builder.build().map_err(parquet_err)?;
        let non_null = want.iter().filter(|f| !f.is_nullable()).map(|f| f.name().clone()).collect();
        Ok((Table { path: path.to_owned(), batches: Vec::new(), non_null }, reader))
    }

    /// Checks that the non-nullable columns of a batch of [`Table::open`]'s reader hold no null.
    pub(crate) fn check(&self, batch: &RecordBatch) -> Result<(), ExportError> {
        for name in &self.non_null {
            let nulls = self.column_of(batch, name)?.null_count();
            if nulls > 0 {
                return Err(self.null_err(name, nulls));
            }
        }
        Ok(())
    }

    fn null_err(&self, column: &str, nulls: usize) -> ExportError {
        ExportError::Column {
            path: self.path.clone(),
            column: column.to_owned(),
            message: format!("{nulls} null values in a non-null column"),
        }
    }

    /// The record batches, in file order.
    pub(crate) fn batches(&self) -> &[RecordBatch] {
        &self.batches
    }

    /// Column `name` of `batch` (present: [`Table::read`] checked it).
    pub(crate) fn column_of<'b>(&self, batch: &'b RecordBatch, name: &str) -> Result<&'b ArrayRef, ExportError> {
        batch.column_by_name(name).ok_or_else(|| ExportError::Column {
            path: self.path.clone(),
            column: name.to_owned(),
            message: "missing".to_owned(),
        })
    }

    /// Error for the value at `row` of `column`.
    pub(crate) fn value_err(&self, row: usize, column: &str, message: String) -> ExportError {
        ExportError::Value { path: self.path.clone(), row, column: column.to_owned(), message }
    }

    /// The path being read.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

/// A `string` array's value at `i`, `None` when null.
pub(crate) fn opt_str(a: &StringArray, i: usize) -> Option<&str> {
    a.is_valid(i).then(|| a.value(i))
}

/// Child `name` of a struct array, as strings.
pub(crate) fn child_strings<'a>(s: &'a StructArray, name: &str) -> &'a StringArray {
    s.column_by_name(name).expect("checked by Table::read").as_string::<i32>()
}

/// Child `name` of a struct array, as `uint64`.
pub(crate) fn child_unsigned<'a>(s: &'a StructArray, name: &str) -> &'a UInt64Array {
    s.column_by_name(name).expect("checked by Table::read").as_primitive()
}

/// Child `name` of a struct array, as a list.
pub(crate) fn child_list<'a>(s: &'a StructArray, name: &str) -> &'a ListArray {
    s.column_by_name(name).expect("checked by Table::read").as_list::<i32>()
}

/// The element range of row `i` of a list array.
pub(crate) fn range(l: &ListArray, i: usize) -> std::ops::Range<usize> {
    let o = l.value_offsets();
    o[i] as usize..o[i + 1] as usize
}

/// The strings of row `i` of a `list<string>` array.
pub(crate) fn list_strings(l: &ListArray, i: usize) -> Vec<String> {
    let values = l.values().as_string::<i32>();
    range(l, i).map(|j| values.value(j).to_owned()).collect()
}
