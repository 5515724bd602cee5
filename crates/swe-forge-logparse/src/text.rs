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
///
/// The common case is scanned a buffer at a time: the complete lines in the reader's buffer are
/// checked as UTF-8 in one pass, their `\n`s and their `\r`s and escapes found by `memchr`, and
/// each line that holds neither `\r` nor an escape is handed over as a slice of the buffer, with
/// no copy and no cleaning. Lines that span buffers, are longer than [`MAX_LINE`] or hold invalid
/// UTF-8 go through [`Lines::next_raw`] and [`decode`], one at a time.
pub(crate) fn for_each_line_where<R: BufRead>(
    reader: R,
    wants: Option<FirstByte>,
    mut f: impl FnMut(&str),
) -> Vec<String> {
    let mut lines = Lines::new(reader);
    loop {
        let used = match lines.reader.fill_buf() {
            Ok(chunk) => scan_complete_lines(chunk, wants, &mut f),
            Err(_) => 0,
        };
        if used > 0 {
            lines.reader.consume(used);
            lines.offset += used as u64;
            continue;
        }
        // The next line is not whole in the buffer, too long, or not valid UTF-8.
        match lines.next_raw() {
            Some(raw) => {
                if keep(wants, raw) {
                    f(&clean_line(&decode(raw)));
                }
            }
            None => break,
        }
    }
    lines.warnings()
}

/// Whether a raw line goes to the parser: see [`for_each_line_where`].
fn keep(wants: Option<FirstByte>, raw: &[u8]) -> bool {
    match (wants, raw.iter().find(|&&b| b != b' ' && b != b'\t')) {
        (None, _) => true,
        (Some(_), None) => false,
        (Some(w), Some(&b)) => b == 0x1b || w(b) || memchr::memchr(b'\r', raw).is_some(),
    }
}

/// Hands the complete, valid UTF-8 lines at the start of `chunk` to `f` (filtered and cleaned
/// as [`for_each_line_where`] says); returns how many bytes they took, `\n`s included. Stops
/// before the first line that is longer than [`MAX_LINE`] or not valid UTF-8, and before an
/// unfinished last line.
fn scan_complete_lines(chunk: &[u8], wants: Option<FirstByte>, f: &mut impl FnMut(&str)) -> usize {
    let Some(last_newline) = memchr::memrchr(b'\n', chunk) else { return 0 };
    let block = &chunk[..=last_newline];
    // The valid prefix; a `\n` is never inside a multi-byte character, so every line that
    // ends inside it is valid on its own.
    let text = match std::str::from_utf8(block) {
        Ok(t) => t,
        Err(e) => match std::str::from_utf8(&block[..e.valid_up_to()]) {
            Ok(t) => t,
            Err(_) => return 0,
        },
    };
    // Position of the next `\r` or escape (a line that needs cleaning), or past the end.
    let next_dirty = |from: usize| memchr::memchr2(b'\r', 0x1b, &block[from..]).map_or(usize::MAX, |i| from + i);
    let mut dirty = next_dirty(0);
    let mut start = 0;
    for newline in memchr::memchr_iter(b'\n', block) {
        if newline - start > MAX_LINE {
            return start;
        }
        let Some(line) = text.get(start..newline) else { return start };
        if dirty < newline {
            if keep(wants, line.as_bytes()) {
                f(&clean_line(line));
            }
            dirty = next_dirty(newline + 1);
        } else if match wants {
            None => true,
            Some(w) => line.bytes().find(|&b| b != b' ' && b != b'\t').is_some_and(w),
        } {
            f(line);
        }
        start = newline + 1;
    }
    start
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

    /// The line-at-a-time reading every line took before the buffer scan: the scan must hand
    /// over exactly these lines.
    fn reference(input: &[u8], wants: Option<FirstByte>) -> Vec<String> {
        let mut pieces: Vec<&[u8]> = input.split(|&b| b == b'\n').collect();
        if pieces.last().is_some_and(|p| p.is_empty()) {
            pieces.pop();
        }
        pieces.into_iter().filter(|raw| keep(wants, raw)).map(|raw| clean_line(&decode(raw)).into_owned()).collect()
    }

    /// A reader whose buffer holds `cap` bytes, so lines cross buffer boundaries.
    fn scanned(input: &[u8], wants: Option<FirstByte>, cap: usize) -> Vec<String> {
        let mut seen = Vec::new();
        for_each_line_where(std::io::BufReader::with_capacity(cap, input), wants, |l| seen.push(l.to_owned()));
        seen
    }

    #[test]
    fn buffer_scan_hands_over_the_same_lines_as_line_at_a_time_reading() {
        let pieces: [&[u8]; 14] = [
            b"test a ... ok\n",
            b"  \x1b[32mok\x1b[0m\n",
            b"x\ry\n",
            b"   \t\n",
            b"\n",
            b"\xff\xfe bad\n",
            "caf\u{e9} \u{2713} done\n".as_bytes(),
            b"\x1b]0;t\x07 [ RUN ] A.B\n",
            b"[  PASSED  ] 1 test\r\n",
            b"half \xe2\x9c",
            b"\x93 mended\n",
            b"no newline at the end",
            b"\r\n",
            b"\x1b",
        ];
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let only_brackets: FirstByte = |b| b == b'[' || b == b't';
        for round in 0..400 {
            let mut input = Vec::new();
            for _ in 0..(round % 40) {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                input.extend_from_slice(pieces[(state % pieces.len() as u64) as usize]);
            }
            for wants in [None, Some(only_brackets)] {
                let expected = reference(&input, wants);
                for cap in [1, 3, 16, 64, 1 << 16] {
                    assert_eq!(scanned(&input, wants, cap), expected, "round {round}, buffer {cap}: {input:?}");
                }
            }
        }
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
