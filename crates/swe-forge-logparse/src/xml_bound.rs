//! Bounded memory for the XML parsers: quick-xml reads one whole event (a text run, a CDATA
//! section, a comment, a tag) into its buffer, so a report with a gigabyte of `<system-out>`, or
//! `/dev/zero`, would be held whole. [`reader`] puts two things between the bytes and quick-xml:
//!
//! - a filter that knows just enough XML (text, tags with quoted values, CDATA, comments) to keep
//!   the first [`TEXT_KEEP`] bytes of each text run, CDATA section or comment and the first
//!   [`TAG_KEEP`] bytes of each tag, dropping the rest but never a delimiter, so the document
//!   keeps its shape (no parser here reads text, and a cut attribute is one of many MiB);
//! - a guard that fails the read once more than [`EVENT_MAX`] bytes went by without an event
//!   (what the filter cannot see: a processing instruction or DOCTYPE holding `>`), which the
//!   parsers report as a malformed document, keeping what they parsed before it.

use std::cell::Cell;
use std::collections::VecDeque;
use std::io::{self, BufRead, BufReader, Read};
use std::rc::Rc;

use quick_xml::Reader;

/// Bytes kept of one text run, CDATA section or comment.
pub(crate) const TEXT_KEEP: usize = 64 << 10;
/// Bytes kept of one tag (name and attributes).
pub(crate) const TAG_KEEP: usize = 1 << 20;
/// Most bytes read between two events before the read fails.
pub(crate) const EVENT_MAX: usize = 8 << 20;

/// Counts the bytes handed to quick-xml since the last event.
#[derive(Clone, Default)]
pub(crate) struct Guard(Rc<Cell<usize>>);

impl Guard {
    /// Call after each event quick-xml returned.
    pub(crate) fn event_done(&self) {
        self.0.set(0);
    }
}

/// A quick-xml reader over `inner` whose memory stays bounded (see the module docs), and the
/// guard to tell of each event.
pub(crate) fn reader<R: BufRead>(inner: R) -> (Reader<BufReader<Filter<R>>>, Guard) {
    let guard = Guard::default();
    let filter = Filter {
        inner,
        state: State::Text,
        run: 0,
        prefix: Vec::new(),
        quote: 0,
        last: [0; 2],
        pending: VecDeque::new(),
        guard: guard.clone(),
    };
    (Reader::from_reader(BufReader::with_capacity(1 << 16, filter)), guard)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Text,
    Tag,
    CData,
    Comment,
}

/// The filter of the module docs.
pub(crate) struct Filter<R> {
    inner: R,
    state: State,
    /// Bytes seen in the current text run, tag, CDATA section or comment.
    run: usize,
    /// The first bytes of the current tag, to recognise `<![CDATA[` and `<!--`.
    prefix: Vec<u8>,
    /// The quote of the attribute value the tag is in, or 0.
    quote: u8,
    /// The last two bytes seen inside a CDATA section or comment.
    last: [u8; 2],
    /// Bytes to hand out before reading more.
    pending: VecDeque<u8>,
    guard: Guard,
}

impl<R: BufRead> Filter<R> {
    fn step(&mut self, b: u8) {
        self.run += 1;
        let keep = match self.state {
            State::Text => {
                if b == b'<' {
                    self.enter(State::Tag);
                    self.prefix.push(b);
                    true
                } else {
                    self.run <= TEXT_KEEP
                }
            }
            State::Tag => {
                if self.prefix.len() < 9 {
                    self.prefix.push(b);
                    if self.prefix == b"<![CDATA[" {
                        self.enter(State::CData);
                    } else if self.prefix == b"<!--" {
                        self.enter(State::Comment);
                    }
                }
                if self.quote != 0 {
                    if b == self.quote {
                        self.quote = 0;
                        true
                    } else {
                        self.run <= TAG_KEEP
                    }
                } else if b == b'"' || b == b'\'' {
                    self.quote = b;
                    true
                } else if b == b'>' {
                    self.enter(State::Text);
                    true
                } else {
                    // `/` may close an empty element.
                    b == b'/' || self.run <= TAG_KEEP
                }
            }
            State::CData | State::Comment => {
                let end: &[u8; 2] = if self.state == State::CData { b"]]" } else { b"--" };
                let ends = b == b'>' && &self.last == end;
                self.last = [self.last[1], b];
                if ends {
                    if self.run > TEXT_KEEP {
                        // The terminator's first two bytes were dropped: hand out all three.
                        self.pending.extend(end);
                    }
                    self.enter(State::Text);
                    true
                } else {
                    self.run <= TEXT_KEEP
                }
            }
        };
        if keep {
            self.pending.push_back(b);
        }
    }

    fn enter(&mut self, state: State) {
        self.state = state;
        self.run = 0;
        self.quote = 0;
        self.last = [0; 2];
        if state != State::Tag {
            self.prefix.clear();
        }
    }
}

impl<R: BufRead> Read for Filter<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if out.is_empty() {
            return Ok(0);
        }
        while self.pending.is_empty() {
            let input = self.inner.fill_buf()?;
            if input.is_empty() {
                return Ok(0);
            }
            let n = input.len().min(64 << 10);
            let chunk = input[..n].to_vec();
            self.inner.consume(n);
            for b in chunk {
                self.step(b);
            }
        }
        let seen = self.guard.0.get();
        if seen > EVENT_MAX {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("more than {} MiB of XML without an element ending", EVENT_MAX >> 20),
            ));
        }
        let n = out.len().min(self.pending.len());
        for (slot, b) in out.iter_mut().zip(self.pending.drain(..n)) {
            *slot = b;
        }
        self.guard.0.set(seen + n);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filtered(input: &[u8]) -> Vec<u8> {
        let (xml, _) = reader(input);
        let mut out = Vec::new();
        xml.into_inner().read_to_end(&mut out).unwrap();
        out
    }

    #[test]
    fn small_documents_pass_unchanged() {
        let doc = br#"<?xml version="1.0"?><!-- c > d --><a b='x>y' c="1"><![CDATA[ a > b ]]>text</a>"#;
        assert_eq!(filtered(doc), doc);
    }

    #[test]
    fn long_runs_are_cut_but_keep_their_delimiters() {
        let big = "x".repeat(TEXT_KEEP * 3);
        let doc = format!("<a>{big}<![CDATA[{big}]]><!--{big}--><b v=\"{}\"/></a>", "y".repeat(TAG_KEEP * 2));
        let out = String::from_utf8(filtered(doc.as_bytes())).unwrap();
        let cut = "x".repeat(TEXT_KEEP);
        let expected =
            format!("<a>{cut}<![CDATA[{cut}]]><!--{cut}--><b v=\"{}\"/></a>", "y".repeat(TAG_KEEP - " v=\"".len() - 1));
        assert!(out == expected, "{} bytes, not {}", out.len(), expected.len());
    }
}
