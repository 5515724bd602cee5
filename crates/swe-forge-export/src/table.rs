//! Shared plumbing of the two Parquet tables: building columns, writing a frame, and
//! reading a file back with its columns checked by name and type.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use polars::prelude::*;
use serde::de::DeserializeOwned;

use crate::ExportError;

/// The element type a column is written with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `String`, never null.
    Text,
    /// `String`, null where the record field is `None`.
    NullableText,
    /// `UInt64`, never null.
    Unsigned,
    /// `List(String)`, never null.
    TextList,
}

impl Kind {
    /// The polars type of a column of this kind.
    pub(crate) fn dtype(self) -> DataType {
        match self {
            Kind::Text | Kind::NullableText => DataType::String,
            Kind::Unsigned => DataType::UInt64,
            Kind::TextList => DataType::List(Box::new(DataType::String)),
        }
    }
}

/// Maps a polars error to an [`ExportError`] naming `path`.
pub(crate) fn polars_err(path: &Path) -> impl Fn(PolarsError) -> ExportError + '_ {
    move |source| ExportError::Polars { path: path.to_owned(), source }
}

/// A `List(String)` column with one list per row.
pub(crate) fn list_column<'a, R, I>(name: &str, rows: R) -> Column
where
    R: ExactSizeIterator<Item = I>,
    I: Iterator<Item = &'a str>,
{
    let mut builder = ListStringChunkedBuilder::new(name.into(), rows.len(), 0);
    for row in rows {
        builder.append_values_iter(row);
    }
    builder.finish().into_series().into_column()
}

/// A `String` column holding each row's value serialized as JSON.
pub(crate) fn json_column<T, F>(path: &Path, name: &str, items: &[T], to_json: F) -> Result<Column, ExportError>
where
    F: Fn(&T) -> serde_json::Result<String>,
{
    let values = items
        .iter()
        .enumerate()
        .map(|(row, item)| {
            to_json(item).map_err(|source| ExportError::Json {
                path: path.to_owned(),
                row,
                column: name.to_owned(),
                source,
            })
        })
        .collect::<Result<Vec<String>, _>>()?;
    Ok(Column::new(name.into(), values))
}

/// Writes `df` as a zstd-compressed Parquet file to `w`.
pub(crate) fn write_frame(path: &Path, w: &mut BufWriter<&mut File>, df: &mut DataFrame) -> Result<(), ExportError> {
    ParquetWriter::new(&mut *w).finish(df).map_err(polars_err(path))?;
    w.flush().map_err(|source| ExportError::Io { path: path.to_owned(), source })
}

/// A Parquet file read back into memory.
pub(crate) struct Table<'p> {
    path: &'p Path,
    df: DataFrame,
}

impl<'p> Table<'p> {
    /// Reads the whole file and checks that every `(name, kind)` column is present with its type.
    pub(crate) fn read(path: &'p Path, schema: &[(&str, Kind)]) -> Result<Table<'p>, ExportError> {
        let file = File::open(path).map_err(|source| ExportError::Io { path: path.to_owned(), source })?;
        let df = ParquetReader::new(file).finish().map_err(polars_err(path))?;
        let table = Table { path, df };
        for &(name, kind) in schema {
            let col = table.column(name)?;
            let want = kind.dtype();
            if col.dtype() != &want {
                return Err(table.column_err(name, format!("expected type {want}, found {}", col.dtype())));
            }
            if kind != Kind::NullableText && col.null_count() > 0 {
                return Err(table.column_err(name, format!("{} null values in a non-null column", col.null_count())));
            }
        }
        Ok(table)
    }

    /// Number of rows.
    pub(crate) fn height(&self) -> usize {
        self.df.height()
    }

    fn column(&self, name: &str) -> Result<&Column, ExportError> {
        self.df.column(name).map_err(|_| self.column_err(name, "missing".to_owned()))
    }

    fn column_err(&self, column: &str, message: String) -> ExportError {
        ExportError::Column { path: self.path.to_owned(), column: column.to_owned(), message }
    }

    /// Error for the value at `row` of `column`.
    pub(crate) fn value_err(&self, row: usize, column: &str, message: String) -> ExportError {
        ExportError::Value { path: self.path.to_owned(), row, column: column.to_owned(), message }
    }

    /// Values of a `String` column, nulls as `None`.
    pub(crate) fn nullable_texts(&self, name: &str) -> Result<Vec<Option<&str>>, ExportError> {
        let ca = self.column(name)?.str().map_err(polars_err(self.path))?;
        Ok(ca.iter().collect())
    }

    /// Values of a non-null `String` column.
    pub(crate) fn texts(&self, name: &str) -> Result<Vec<&str>, ExportError> {
        self.nullable_texts(name)?
            .into_iter()
            .enumerate()
            .map(|(row, v)| v.ok_or_else(|| self.value_err(row, name, "null in a non-null column".to_owned())))
            .collect()
    }

    /// Values of a non-null `UInt64` column.
    pub(crate) fn unsigned(&self, name: &str) -> Result<Vec<u64>, ExportError> {
        let ca = self.column(name)?.u64().map_err(polars_err(self.path))?;
        ca.iter()
            .enumerate()
            .map(|(row, v)| v.ok_or_else(|| self.value_err(row, name, "null in a non-null column".to_owned())))
            .collect()
    }

    /// Values of a `String` column of JSON documents, parsed; a null cell reads as `None`.
    pub(crate) fn nullable_json<T: DeserializeOwned>(&self, name: &str) -> Result<Vec<Option<T>>, ExportError> {
        self.nullable_texts(name)?
            .into_iter()
            .enumerate()
            .map(|(row, v)| {
                v.map(serde_json::from_str).transpose().map_err(|source| ExportError::Json {
                    path: self.path.to_owned(),
                    row,
                    column: name.to_owned(),
                    source,
                })
            })
            .collect()
    }

    /// Values of a non-null `String` column of JSON documents, parsed.
    pub(crate) fn json<T: DeserializeOwned>(&self, name: &str) -> Result<Vec<T>, ExportError> {
        self.nullable_json(name)?
            .into_iter()
            .enumerate()
            .map(|(row, v)| v.ok_or_else(|| self.value_err(row, name, "null in a non-null column".to_owned())))
            .collect()
    }
}
