//! Turning raw log bytes into clean text lines: a streaming line reader with a bound on line
//! length (so memory stays flat however large the log), lossy UTF-8 decoding, carriage-return
//! overwrites resolved, and removal of ANSI escape sequences. Knows nothing of test formats.

use std::borrow::Cow;
use std::io::{BufRead, ErrorKind};

const ESC: char = '\u{1b}';

/// Longest line kept, in bytes; the rest of a longer line is dropped (and counted). Test result
/// lines are short; this only bounds memory on pathological input.
pub(crate) const MAX_LINE: usize = 4 << 20;

/// Reads `\n`-terminated lines from a buffered reader, each at most [`MAX_LINE`] bytes.
pub(crate) struct Lines<R> {
    reader: R,
    buf: Vec<u8>,
    /// Lines longer than [`MAX_LINE`] (cut).
    pub(crate) overlong: usize,
    /// The read error that ended the stream early, if any.
    pub(crate) error: Option<String>,
    /// Bytes read so far.
    pub(crate) offset: u64,
}

impl<R: BufRead> Lines<R> {
    pub(crate) fn new(reader: R) -> Self {
        Lines { reader, buf: Vec::new(), overlong: 0, error: None, offset: 0 }
    }

    /// The next raw line without its `\n`; `None` at the end of the input.
    pub(crate) fn next_raw(&mut self) -> Option<&[u8]> {
        self.buf.clear();
        let mut any = false;
        let mut cut = false;
        loop {
            let chunk = match self.reader.fill_buf() {
                Ok(c) => c,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.error.get_or_insert_with(|| e.to_string());
                    break;
                }
            };
            if chunk.is_empty() {
                break;
            }
            any = true;
            let (take, used, done) = match memchr::memchr(b'\n', chunk) {
                Some(i) => (i, i + 1, true),
                None => (chunk.len(), chunk.len(), false),
            };
            let room = MAX_LINE.saturating_sub(self.buf.len());
            if take > room {
                cut = true;
            }
            self.buf.extend_from_slice(&chunk[..take.min(room)]);
            self.reader.consume(used);
            self.offset += used as u64;
            if done {
                break;
            }
        }
        if cut {
            self.overlong += 1;
        }
        any.then_some(self.buf.as_slice())
    }

    /// The first byte of the next line that is not a space or tab, without consuming anything
    /// (looks only at what is already buffered, refilling once when the buffer is empty).
    pub(crate) fn peek_line_start(&mut self) -> Option<u8> {
        let chunk = loop {
            match self.reader.fill_buf() {
                Ok(c) => break c,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(_) => return None,
            }
        };
        chunk.iter().copied().find(|&b| b != b' ' && b != b'\t')
    }

    /// The underlying reader, positioned at the start of the next line.
    pub(crate) fn reader_mut(&mut self) -> &mut R {
        &mut self.reader
    }

    /// Warnings about the reading itself (read errors, cut lines).
    pub(crate) fn warnings(&self) -> Vec<String> {
        let mut w = Vec::new();
        if let Some(e) = &self.error {
            w.push(format!("reading the log failed after {} bytes: {e}", self.offset));
        }
        if self.overlong > 0 {
            w.push(format!("{} line(s) longer than {MAX_LINE} bytes were cut", self.overlong));
        }
        w
    }
}

/// Feeds every cleaned line of `reader` to `f`; returns the reader's warnings. A line that sits
/// whole in the reader's buffer is handed over without copying.
pub(crate) fn for_each_line<R: BufRead>(reader: R, f: impl FnMut(&str)) -> Vec<String> {
    for_each_line_where(reader, None, f)
}

/// Whether a line whose first byte that is not a space or tab is this one can matter to a
/// parser; lines that cannot are skipped before they are decoded.
pub(crate) type FirstByte = fn(u8) -> bool;

/// [`for_each_line`], skipping lines that `wants` rules out (lines holding `\r` or starting
/// with an escape sequence are always kept: what follows may be anything).
pub(crate) fn for_each_line_where<R: BufRead>(
    reader: R,
    wants: Option<FirstByte>,
    mut f: impl FnMut(&str),
) -> Vec<String> {
    let mut lines = Lines::new(reader);
    let keep = |raw: &[u8]| match (wants, raw.iter().find(|&&b| b != b' ' && b != b'\t')) {
        (None, _) => true,
        (Some(_), None) => false,
        (Some(w), Some(&b)) => b == 0x1b || w(b) || memchr::memchr(b'\r', raw).is_some(),
    };
    loop {
        let used = match lines.reader.fill_buf() {
            Ok(chunk) => match memchr::memchr(b'\n', chunk) {
                Some(i) if i <= MAX_LINE => {
                    let raw = &chunk[..i];
                    if keep(raw) {
                        f(&clean_line(&decode(raw)));
                    }
                    Some(i + 1)
                }
                _ => None,
            },
            Err(_) => None,
        };
        match used {
            Some(n) => {
                lines.reader.consume(n);
                lines.offset += n as u64;
            }
            None => match lines.next_raw() {
                Some(raw) => {
                    if keep(raw) {
                        f(&clean_line(&decode(raw)));
                    }
                }
                None => break,
            },
        }
    }
    lines.warnings()
}

/// Decodes `log` as UTF-8, replacing invalid sequences with U+FFFD (validation first: it is
/// faster than the lossy decoder on the common, valid case).
pub(crate) fn decode(log: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(log) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(log),
    }
}

/// The lines of `text`, each cleaned by [`clean_line`].
#[cfg(test)]
pub(crate) fn lines(text: &str) -> impl Iterator<Item = Cow<'_, str>> {
    text.split('\n').map(clean_line)
}

/// Cleans one line (without its `\n`): drops trailing `\r`, keeps only what follows the last
/// interior `\r` (a terminal would have overwritten the rest), and removes ANSI escapes.
pub(crate) fn clean_line(line: &str) -> Cow<'_, str> {
    let line = line.trim_end_matches('\r');
    let line = match line.rfind('\r') {
        Some(i) => line.get(i + 1..).unwrap_or(""),
        None => line,
    };
    if line.contains(ESC) { Cow::Owned(strip_ansi(line)) } else { Cow::Borrowed(line) }
}

/// Removes ANSI/VT100 escape sequences: CSI (`ESC [ ... final`), OSC (`ESC ] ... BEL` or
/// `ESC ] ... ESC \`), character-set and other `ESC intermediate* final` sequences.
pub(crate) fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != ESC {
            out.push(c);
            continue;
        }
        match chars.peek().copied() {
            Some('[') => {
                chars.next();
                // Parameter and intermediate bytes, then one final byte in 0x40..=0x7e.
                while let Some(&n) = chars.peek() {
                    if ('\u{20}'..='\u{3f}').contains(&n) {
                        chars.next();
                    } else {
                        if ('\u{40}'..='\u{7e}').contains(&n) {
                            chars.next();
                        }
                        break;
                    }
                }
            }
            Some(']') => {
                chars.next();
                while let Some(n) = chars.next() {
                    if n == '\u{7}' {
                        break;
                    }
                    if n == ESC {
                        if chars.peek() == Some(&'\\') {
                            chars.next();
                        }
                        break;
                    }
                }
            }
            Some(n) if ('\u{20}'..='\u{2f}').contains(&n) => {
                // nF sequence such as `ESC ( B`: intermediates then one final byte.
                while let Some(&m) = chars.peek() {
                    chars.next();
                    if !('\u{20}'..='\u{2f}').contains(&m) {
                        break;
                    }
                }
            }
            Some(n) if ('\u{30}'..='\u{7e}').contains(&n) => {
                chars.next();
            }
            _ => {}
        }
    }
    out
}

/// Leading spaces of `line` (tabs count as one).
pub(crate) fn indent(line: &str) -> usize {
    line.len() - line.trim_start_matches([' ', '\t']).len()
}

/// `text` without a trailing duration such as ` (12 ms)`, ` (0.9ms)`, ` 5ms` or ` 1.2 s`.
pub(crate) fn strip_duration(text: &str) -> &str {
    let t = text.trim_end();
    // Parenthesised: ` (12 ms)`.
    if let Some(inner) = t.strip_suffix(')')
        && let Some(open) = inner.rfind('(')
        && inner[..open].ends_with(' ')
        && is_duration(&inner[open + 1..])
    {
        return t[..open].trim_end();
    }
    // Bare: ` 5ms`.
    if t.ends_with('s')
        && let Some(sp) = t.rfind(' ')
        && is_duration(&t[sp + 1..])
    {
        return t[..sp].trim_end();
    }
    t
}

/// `12 ms`, `0.9ms`, `5ms`, `1.2 s`, `1m`.
fn is_duration(s: &str) -> bool {
    let s = s.trim();
    let digits_end = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
    if digits_end == 0 || !s.as_bytes()[0].is_ascii_digit() {
        return false;
    }
    matches!(s[digits_end..].trim_start(), "ms" | "s" | "m" | "µs" | "us" | "ns")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_colours_and_charset_switches() {
        assert_eq!(strip_ansi("test a ... \u{1b}[32mok\u{1b}(B\u{1b}[m"), "test a ... ok");
        assert_eq!(strip_ansi("\u{1b}[1m\u{1b}[92m     Running\u{1b}[0m x"), "     Running x");
        assert_eq!(strip_ansi("\u{1b}]0;title\u{7}rest"), "rest");
        assert_eq!(strip_ansi("\u{1b}]8;;http://x\u{1b}\\link"), "link");
        assert_eq!(strip_ansi("end\u{1b}"), "end");
        assert_eq!(strip_ansi("\u{1b}[31"), "");
    }

    #[test]
    fn resolves_carriage_returns() {
        assert_eq!(clean_line("ok\r"), "ok");
        assert_eq!(clean_line("Building [==>  ]\r     Running x\r\r"), "     Running x");
        let l: Vec<_> = lines("a\r\nb\n\u{1b}[31mc\u{1b}[0m").collect();
        assert_eq!(l, ["a", "b", "c"]);
    }

    #[test]
    fn streams_lines_with_a_bound() {
        let mut input = b"one\r\ntwo\n".to_vec();
        input.extend(std::iter::repeat_n(b'x', MAX_LINE + 10));
        input.extend_from_slice(b"\nlast");
        let mut seen = Vec::new();
        let warnings = for_each_line(&input[..], |l| seen.push(l.len().min(10)));
        assert_eq!(seen, [3, 3, 10, 4]);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
    }

    #[test]
    fn durations() {
        assert_eq!(strip_duration("adds (12 ms)"), "adds");
        assert_eq!(strip_duration("top passes (0.914737ms)"), "top passes");
        assert_eq!(strip_duration("a > b 5ms"), "a > b");
        assert_eq!(strip_duration("param 1"), "param 1");
        assert_eq!(strip_duration("takes (a while)"), "takes (a while)");
        assert_eq!(strip_duration("x 1.2s"), "x");
    }
}
