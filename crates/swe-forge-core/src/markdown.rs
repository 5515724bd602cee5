//! [`MarkdownTable`]: the one writer of the Markdown tables in swe-forge's reports (the dataset
//! card, summaries, funnels, benchmarks). Cells are text: a `|` in a cell is escaped and a line
//! break becomes a space, so a cell can never end its row or its table early.

use std::fmt;
use std::ops::RangeBounds;

/// How a column's cells are aligned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Align {
    /// Written `---` (Markdown's default, left).
    #[default]
    Left,
    /// Written `---:`, for numbers.
    Right,
}

/// A Markdown table: headers, one alignment per column, rows of cells. [`fmt::Display`] writes
/// it: `| a | b |` per line (every cell between single spaces), each line ending in a newline.
/// A table whose rows come one at a time (a long command's results) is written as they come:
/// [`MarkdownTable::head`], then a [`MarkdownTable::row_line`] per row.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MarkdownTable {
    headers: Vec<String>,
    aligns: Vec<Align>,
    rows: Vec<Vec<String>>,
}

impl MarkdownTable {
    /// A table with these headers, every column left-aligned.
    pub fn new<I, S>(headers: I) -> MarkdownTable
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let headers: Vec<String> = headers.into_iter().map(Into::into).collect();
        let aligns = vec![Align::Left; headers.len()];
        MarkdownTable { headers, aligns, rows: Vec::new() }
    }

    /// The columns in `columns` (0 is the first; `1..` all but the first) right-aligned.
    pub fn right(mut self, columns: impl RangeBounds<usize>) -> MarkdownTable {
        for (i, a) in self.aligns.iter_mut().enumerate() {
            if columns.contains(&i) {
                *a = Align::Right;
            }
        }
        self
    }

    /// Adds a row; its cells are escaped when written. A row shorter than the headers is
    /// written as it is (Markdown reads the missing cells as empty).
    pub fn row<I, S>(&mut self, cells: I) -> &mut MarkdownTable
    where
        I: IntoIterator<Item = S>,
        S: ToString,
    {
        self.rows.push(cells.into_iter().map(|c| c.to_string()).collect());
        self
    }

    /// The header line and the alignment line, as [`fmt::Display`] writes them but without the
    /// last newline: the start of a table written a line at a time.
    pub fn head(&self) -> String {
        let mut s = String::new();
        // Writing into a `String` cannot fail.
        let _ = self.write_head(&mut s);
        s
    }

    /// One row as [`fmt::Display`] writes it (cells escaped), without its newline: a row of a
    /// table written a line at a time, after its [`MarkdownTable::head`].
    pub fn row_line<I, S>(cells: I) -> String
    where
        I: IntoIterator<Item = S>,
        S: ToString,
    {
        let mut s = String::new();
        let _ = line(&mut s, cells.into_iter().map(|c| c.to_string()));
        s
    }

    /// The number of rows (the header line not counted).
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether no row was added.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The header line and the alignment line, without the last newline.
    fn write_head(&self, out: &mut impl fmt::Write) -> fmt::Result {
        line(out, &self.headers)?;
        out.write_str("\n|")?;
        for a in &self.aligns {
            out.write_str(match a {
                Align::Left => "---|",
                Align::Right => "---:|",
            })?;
        }
        Ok(())
    }
}

/// One cell as written: `|` escaped, line breaks made spaces.
fn escape(cell: &str) -> String {
    cell.replace('|', "\\|").replace(['\n', '\r'], " ")
}

/// One line of cells, without its newline.
fn line<S: AsRef<str>>(out: &mut impl fmt::Write, cells: impl IntoIterator<Item = S>) -> fmt::Result {
    out.write_str("|")?;
    for c in cells {
        write!(out, " {} |", escape(c.as_ref()))?;
    }
    Ok(())
}

impl fmt::Display for MarkdownTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write_head(f)?;
        f.write_str("\n")?;
        for r in &self.rows {
            line(f, r)?;
            f.write_str("\n")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_alignment_and_rows_are_written_line_by_line() {
        let mut t = MarkdownTable::new(["stage", "records", "dropped"]).right(1..);
        t.row(["found", "3", ""]).row(["kept", "2", "1"]);
        assert_eq!(
            t.to_string(),
            "| stage | records | dropped |\n|---|---:|---:|\n| found | 3 |  |\n| kept | 2 | 1 |\n"
        );
        assert_eq!(t.len(), 2);
        let middle = MarkdownTable::new(["a", "b", "c"]).right(1..2);
        assert_eq!(middle.to_string(), "| a | b | c |\n|---|---:|---|\n");
        assert!(middle.is_empty());
    }

    #[test]
    fn a_table_written_a_line_at_a_time_is_the_table() {
        let mut t = MarkdownTable::new(["image", "bytes"]).right(1..);
        t.row(["a|b", "3"]).row(["c", "4"]);
        let lines = [t.head(), MarkdownTable::row_line(["a|b", "3"]), MarkdownTable::row_line(["c", "4"])];
        assert_eq!(lines[0], "| image | bytes |\n|---|---:|");
        assert_eq!(lines[1], "| a\\|b | 3 |");
        assert_eq!(lines.map(|l| l + "\n").concat(), t.to_string());
        assert_eq!(MarkdownTable::row_line([7, 8]), "| 7 | 8 |");
    }

    #[test]
    fn a_cell_cannot_break_its_row() {
        let mut t = MarkdownTable::new(["name"]);
        t.row(["a|b\nc\rd"]);
        assert_eq!(t.to_string(), "| name |\n|---|\n| a\\|b c d |\n");
    }
}
