//! Turning raw log bytes into clean text lines: lossy UTF-8 decoding, line splitting on `\n`
//! with CRLF and carriage-return overwrites resolved, and removal of ANSI escape sequences.

use std::borrow::Cow;

const ESC: char = '\u{1b}';

/// Decodes `log` as UTF-8, replacing invalid sequences with U+FFFD.
pub(crate) fn decode(log: &[u8]) -> Cow<'_, str> {
    String::from_utf8_lossy(log)
}

/// The lines of `text`, each cleaned by [`clean_line`].
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
}
