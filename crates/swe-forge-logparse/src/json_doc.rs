//! Finding JSON reports inside a log and reading them element by element: a line whose first
//! non-blank byte is `{` starts a JSON value that is handed, still unread, to a streaming
//! serde visitor (so a 100 MB report is never held in memory); other lines go to the format's
//! text handler. A value that turns out not to be the report, or does not parse, costs only
//! the bytes read so far; results read before a syntax error (a truncated report) are kept.

use std::io::{BufRead, Read};

use crate::text::{self, Lines};

/// The deserializer handed to [`JsonReport::value`].
pub(crate) type De<'a> = serde_json::Deserializer<serde_json::de::IoRead<&'a mut dyn Read>>;

/// A format whose report is one JSON value among other log lines.
pub(crate) trait JsonReport {
    /// Reads one JSON value from `de`; returns whether it was a report of this format (the
    /// visitor saw the report's key), also when reading it failed part way.
    fn value(&mut self, de: &mut De<'_>) -> (bool, serde_json::Result<()>);
    /// A line outside any JSON value (already cleaned).
    fn text_line(&mut self, _line: &str) {}
}

/// Reads `reader` to the end, feeding JSON values and text lines to `report`; returns warnings.
pub(crate) fn drive<R: BufRead>(reader: R, report: &mut impl JsonReport) -> Vec<String> {
    let mut lines = Lines::new(reader);
    let mut warnings = Vec::new();
    let mut reports = 0usize;
    loop {
        if lines.peek_line_start() == Some(b'{') {
            let reader: &mut dyn Read = lines.reader_mut();
            let mut de = serde_json::Deserializer::from_reader(reader);
            let (recognised, result) = report.value(&mut de);
            reports += usize::from(recognised);
            if let Err(e) = result
                && recognised
            {
                warnings.push(format!(
                    "a JSON report is cut short or malformed ({e}); results read before that point are kept"
                ));
            }
            continue;
        }
        let Some(raw) = lines.next_raw() else { break };
        let decoded = text::decode(raw);
        report.text_line(&text::clean_line(&decoded));
    }
    if reports > 1 {
        warnings.push(format!("{reports} JSON reports found; a test reported by two keeps the later result"));
    }
    warnings.extend(lines.warnings());
    warnings
}
