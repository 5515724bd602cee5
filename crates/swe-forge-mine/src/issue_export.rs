//! Issue and pull request texts from saved GitHub exports, for mining a mirror (git holds no
//! issue text). Three shapes are read, in one file or several, gzip-compressed or not:
//!
//! - the output of `gh api --paginate repos/O/R/issues?state=all` (or `.../pulls`): JSON arrays
//!   written one after another, one per page (`--slurp`'s array of arrays too);
//! - GitHub REST items one per line (JSON lines): `number`, `title`, `body`, a `pull_request`
//!   key on pull requests;
//! - GH Archive event lines: `IssuesEvent`, `IssueCommentEvent`, `PullRequestEvent`, ... whose
//!   `payload.issue` or `payload.pull_request` carries the text, `repo.name` the repository.
//!
//! Only the texts of one repository are kept (an item says which through `repository_url`,
//! `html_url` or its event's `repo.name`; an item that says nothing counts as that repository's),
//! each item's fields are read as it streams by, so a GH Archive dump of all of GitHub costs the
//! memory of one repository's texts. A later item of a number replaces an earlier one (GH Archive
//! is in time order: the last edit wins). Pure reading: no network.

use std::collections::BTreeMap;
use std::fmt;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};

use crate::error::MineError;

/// The title and body of one issue or pull request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportedText {
    /// The title.
    pub title: String,
    /// The body; `None` when GitHub's is null.
    pub body: Option<String>,
    /// Whether the number is a pull request's (GitHub numbers issues and pull requests together).
    pub pull_request: bool,
}

/// The texts of one repository's issues and pull requests, by number.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IssueExport {
    texts: BTreeMap<u64, ExportedText>,
    /// Items read, of every repository.
    items: usize,
}

impl IssueExport {
    /// Reads the texts of `repo` (`owner/name`, any case) from every file of `paths`.
    pub fn read(paths: &[PathBuf], repo: &str) -> Result<IssueExport, MineError> {
        let mut export = IssueExport::default();
        for path in paths {
            export.read_file(path, repo)?;
        }
        Ok(export)
    }

    /// The text of issue or pull request `number`.
    pub fn get(&self, number: u64) -> Option<&ExportedText> {
        self.texts.get(&number)
    }

    /// How many issues and how many pull requests of the repository the export holds.
    pub fn counts(&self) -> (usize, usize) {
        let pulls = self.texts.values().filter(|t| t.pull_request).count();
        (self.texts.len() - pulls, pulls)
    }

    /// Items read, of every repository.
    pub fn items(&self) -> usize {
        self.items
    }

    fn read_file(&mut self, path: &Path, repo: &str) -> Result<(), MineError> {
        let file = std::fs::File::open(path).map_err(MineError::io(path))?;
        let mut reader = BufReader::new(file);
        let gzip = reader.fill_buf().map_err(MineError::io(path))?.starts_with(&[0x1f, 0x8b]);
        let reader: Box<dyn Read> =
            if gzip { Box::new(flate2::read::MultiGzDecoder::new(reader)) } else { Box::new(reader) };
        let bad = |e: serde_json::Error| MineError::Export { path: path.to_owned(), message: e.to_string() };
        let mut de = serde_json::Deserializer::from_reader(BufReader::new(reader));
        // `end` fails while anything but white space is left: the next value.
        while de.end().is_err() {
            Values { repo, export: self }.deserialize(&mut de).map_err(bad)?;
        }
        Ok(())
    }

    fn take(&mut self, entry: Entry, repo: &str) {
        self.items += 1;
        let here = |named: Option<String>| named.is_none_or(|n| n.eq_ignore_ascii_case(repo));
        if let Some(payload) = entry.payload {
            // A GH Archive event: its repository is `repo.name`.
            if !here(entry.repo.map(|r| r.name)) {
                return;
            }
            if let Some(item) = payload.issue {
                self.insert(item, false);
            }
            if let Some(item) = payload.pull_request {
                self.insert(item, true);
            }
            return;
        }
        let named =
            entry.repository_url.as_deref().and_then(api_repo).or_else(|| entry.html_url.as_deref().and_then(web_repo));
        if !here(named) {
            return;
        }
        let pull = entry.pull_request.is_some() || entry.html_url.as_deref().is_some_and(|u| u.contains("/pull/"));
        self.insert(
            Item { number: entry.number, title: entry.title, body: entry.body, html_url: entry.html_url },
            pull,
        );
    }

    fn insert(&mut self, item: Item, pull_request: bool) {
        let Some(number) = item.number else { return };
        let pull_request = pull_request || item.html_url.as_deref().is_some_and(|u| u.contains("/pull/"));
        if item.title.is_none() && item.body.is_none() {
            return;
        }
        self.texts
            .insert(number, ExportedText { title: item.title.unwrap_or_default(), body: item.body, pull_request });
    }
}

/// `owner/name` of `https://api.github.com/repos/owner/name` (any API root).
fn api_repo(url: &str) -> Option<String> {
    let (_, rest) = url.split_once("/repos/")?;
    let mut parts = rest.split('/');
    Some(format!("{}/{}", parts.next()?, parts.next()?))
}

/// `owner/name` of `https://github.com/owner/name/issues/N` (or `/pull/N`).
fn web_repo(url: &str) -> Option<String> {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let mut parts = rest.split('/').skip(1);
    Some(format!("{}/{}", parts.next()?, parts.next()?))
}

/// One element of an export: a REST item or a GH Archive event; the fields read, nothing else kept.
#[derive(Deserialize)]
struct Entry {
    number: Option<u64>,
    title: Option<String>,
    body: Option<String>,
    pull_request: Option<IgnoredAny>,
    repository_url: Option<String>,
    html_url: Option<String>,
    repo: Option<EventRepo>,
    payload: Option<Payload>,
}

#[derive(Deserialize)]
struct EventRepo {
    name: String,
}

#[derive(Deserialize)]
struct Payload {
    issue: Option<Item>,
    pull_request: Option<Item>,
}

#[derive(Deserialize)]
struct Item {
    number: Option<u64>,
    title: Option<String>,
    body: Option<String>,
    html_url: Option<String>,
}

/// A top-level value of an export, or an element of one of its arrays: an array is walked element
/// by element (arrays in it too), an object is one [`Entry`]; nothing else is an export.
struct Values<'a> {
    repo: &'a str,
    export: &'a mut IssueExport,
}

impl<'de> DeserializeSeed<'de> for Values<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<(), D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Values<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of GitHub issues or an issue, pull request or GH Archive event object")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(Values { repo: self.repo, export: &mut *self.export })?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<(), A::Error> {
        let entry = Entry::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
        self.export.take(entry, self.repo);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> IssueExport {
        let tmp = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(tmp.path(), text).unwrap();
        IssueExport::read(&[tmp.path().to_owned()], "Acme/Lib").unwrap()
    }

    #[test]
    fn gh_paginate_pages_json_lines_and_gh_archive_events() {
        // Two pages as `gh api --paginate` writes them, back to back.
        let pages = r#"[{"number":2,"title":"Pop panics","body":"On an empty stack.","repository_url":"https://api.github.com/repos/acme/lib","labels":[{"name":"bug"}]},
            {"number":3,"title":"Fix pop","body":null,"pull_request":{"url":"x"},"repository_url":"https://api.github.com/repos/acme/lib"}][{"number":9,"title":"Elsewhere","body":"b","repository_url":"https://api.github.com/repos/other/lib"}]"#;
        let e = read(pages);
        assert_eq!(
            e.get(2),
            Some(&ExportedText {
                title: "Pop panics".into(),
                body: Some("On an empty stack.".into()),
                pull_request: false
            })
        );
        assert_eq!(e.get(3).map(|t| (t.pull_request, t.body.clone())), Some((true, None)));
        assert_eq!((e.get(9), e.counts(), e.items()), (None, (1, 1), 3));
        // `--slurp`: an array of pages.
        assert_eq!(read(&format!("[{}]", pages.replace("][", "],["))).counts(), (1, 1));
        // JSON lines of items whose repository is in html_url, or not said at all.
        let lines = "{\"number\":4,\"title\":\"t4\",\"body\":\"b4\",\"html_url\":\"https://github.com/acme/lib/pull/4\"}\n{\"number\":5,\"title\":\"t5\",\"body\":\"b5\"}\n";
        let e = read(lines);
        assert_eq!((e.get(4).unwrap().pull_request, e.get(5).unwrap().pull_request), (true, false));
        // GH Archive: the last event of a number wins; other repositories' events are skipped.
        let events = concat!(
            r#"{"type":"IssuesEvent","repo":{"name":"acme/lib"},"payload":{"action":"opened","issue":{"number":7,"title":"old","body":"first"}}}"#,
            "\n",
            r#"{"type":"PushEvent","repo":{"name":"acme/lib"},"payload":{"commits":[]}}"#,
            "\n",
            r#"{"type":"IssuesEvent","repo":{"name":"acme/lib"},"payload":{"action":"edited","issue":{"number":7,"title":"new","body":"second"}}}"#,
            "\n",
            r#"{"type":"PullRequestEvent","repo":{"name":"acme/lib"},"payload":{"number":8,"pull_request":{"number":8,"title":"Fix 7","body":"Fixes #7"}}}"#,
            "\n",
            r#"{"type":"IssuesEvent","repo":{"name":"zzz/lib"},"payload":{"issue":{"number":7,"title":"not ours"}}}"#,
            "\n"
        );
        let e = read(events);
        assert_eq!(e.get(7).map(|t| t.title.as_str()), Some("new"));
        assert_eq!(e.get(8).map(|t| (t.pull_request, t.body.as_deref())), Some((true, Some("Fixes #7"))));
        assert_eq!(e.counts(), (1, 1));
    }

    #[test]
    fn gzip_is_read_and_anything_else_is_refused_naming_the_file() {
        use std::io::Write;
        let tmp = tempfile::tempdir().unwrap();
        let gz = tmp.path().join("2024-01-01-15.json.gz");
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        enc.write_all(br#"{"type":"IssuesEvent","repo":{"name":"acme/lib"},"payload":{"issue":{"number":1,"title":"t","body":"b"}}}"#).unwrap();
        std::fs::write(&gz, enc.finish().unwrap()).unwrap();
        assert_eq!(IssueExport::read(&[gz], "acme/lib").unwrap().counts(), (1, 0));
        for bad in ["[1, 2]", "{\"number\": \"two\"}", "[{\"number\":1}", "not json"] {
            let p = tmp.path().join("bad.json");
            std::fs::write(&p, bad).unwrap();
            let e = IssueExport::read(std::slice::from_ref(&p), "acme/lib").unwrap_err();
            assert!(matches!(&e, MineError::Export { path, .. } if *path == p), "{bad}: {e}");
        }
    }
}
