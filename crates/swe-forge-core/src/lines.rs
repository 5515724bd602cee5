//! Lines of the files a person or another tool gives swe-forge (records, predictions, labels,
//! journals), read with a cap on each line: an input without line feeds (`/dev/zero`, a file of one
//! endless line) ends in an error after [`MAX_LINE`] bytes instead of growing in memory until the
//! kernel kills the process. Every reader of line-based input goes through [`bounded_lines`].

use std::io::{self, BufRead, Read};

/// Longest line read: 64 MiB. A record holds a fix patch and a test patch of at most 8 MiB each
/// (validation refuses larger ones), its issue text and test lists, so a real line is far shorter.
pub const MAX_LINE: usize = 64 << 20;

/// The lines of `reader` (without their `\n` or `\r\n`), each of at most `max` bytes; see
/// [`BoundedLines`].
pub fn bounded_lines<R: BufRead>(reader: R, max: usize) -> BoundedLines<R> {
    BoundedLines { reader, max, number: 0, done: false }
}

/// Iterator of [`bounded_lines`]. A line longer than the cap, or not UTF-8, is an error of kind
/// `InvalidData` naming the line's number, after which the iterator ends; no more than the cap
/// and one byte of a line is ever held.
pub struct BoundedLines<R> {
    reader: R,
    max: usize,
    number: usize,
    done: bool,
}

impl<R: BufRead> Iterator for BoundedLines<R> {
    type Item = io::Result<String>;

    fn next(&mut self) -> Option<io::Result<String>> {
        if self.done {
            return None;
        }
        self.number += 1;
        let mut buf = Vec::new();
        let read = (&mut self.reader).take(self.max as u64 + 1).read_until(b'\n', &mut buf);
        let result = match read {
            Ok(0) => {
                self.done = true;
                return None;
            }
            Ok(_) if buf.last() == Some(&b'\n') || buf.len() <= self.max => {
                if buf.last() == Some(&b'\n') {
                    buf.pop();
                    if buf.last() == Some(&b'\r') {
                        buf.pop();
                    }
                }
                String::from_utf8(buf).map_err(|_| {
                    io::Error::new(io::ErrorKind::InvalidData, format!("line {} is not valid UTF-8", self.number))
                })
            }
            Ok(_) => Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "line {} is longer than {} MiB, the most one line may hold; not read further",
                    self.number,
                    self.max >> 20
                ),
            )),
            Err(e) => Err(e),
        };
        self.done = result.is_err();
        Some(result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_split_like_std_and_a_long_one_stops_the_read() {
        let lines: Vec<String> = bounded_lines(&b"a\r\nbb\n\nccc"[..], 3).map(Result::unwrap).collect();
        assert_eq!(lines, ["a", "bb", "", "ccc"]);
        // Exactly at the cap, with and without its line feed.
        assert_eq!(bounded_lines(&b"abc\nabc"[..], 3).map(Result::unwrap).collect::<Vec<_>>(), ["abc", "abc"]);
        let mut it = bounded_lines(&b"ok\nabcd\nnever\n"[..], 3);
        assert_eq!(it.next().unwrap().unwrap(), "ok");
        let err = it.next().unwrap().unwrap_err();
        assert!(err.to_string().starts_with("line 2 is longer than"), "{err}");
        assert!(it.next().is_none(), "the iterator goes on after an over-long line");
        assert!(bounded_lines(&b"\xff\n"[..], 3).next().unwrap().is_err());
    }

    #[test]
    fn an_endless_line_is_refused_without_reading_it_all() {
        let mut zero = std::fs::File::open("/dev/zero").map(io::BufReader::new).unwrap();
        let err = bounded_lines(&mut zero, 1 << 20).next().unwrap().unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
    }
}
