//! The dataset's index: a summary, the byte range and the digest of every record, so lists are
//! filtered and paged from memory and a record is read from its range when it is opened. The index
//! remembers the file it was read from (`Stamp`: size, modification time, inode): a dataset
//! rewritten while the server runs is read again, and a record whose bytes no longer have the
//! digest of its entry is never served or reviewed under that entry.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;
use std::time::SystemTime;

use sha2::{Digest, Sha256};
use swe_forge_core::Instance;
use swe_forge_curate::{Heuristic, heuristic_label};

use crate::ReviewError;

/// One record's summary and where its line is.
pub(crate) struct Entry {
    pub id: String,
    pub repo: String,
    pub lang: String,
    pub status: &'static str,
    pub difficulty: &'static str,
    pub title: String,
    /// The quality flags curate raised (`swe_forge.quality.flags`).
    pub flags: Vec<&'static str>,
    pub fix_lines: u64,
    pub fixed_tests: u64,
    pub offset: u64,
    pub len: usize,
    /// sha256 of the line (trailing whitespace left out), hex.
    pub digest: String,
}

/// Every record of the dataset, in file order.
pub(crate) struct Index {
    pub entries: Vec<Entry>,
    pub by_id: HashMap<String, usize>,
    /// The file as it was when it was read.
    pub stamp: Stamp,
}

/// What tells one version of the dataset file from another without reading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp {
    len: u64,
    modified: Option<SystemTime>,
    inode: (u64, u64),
}

impl Stamp {
    /// The stamp of the file at `path` now.
    pub fn of(path: &Path) -> std::io::Result<Stamp> {
        Ok(Stamp::from(&std::fs::metadata(path)?))
    }
}

impl From<&std::fs::Metadata> for Stamp {
    fn from(m: &std::fs::Metadata) -> Stamp {
        #[cfg(unix)]
        let inode = {
            use std::os::unix::fs::MetadataExt;
            (m.dev(), m.ino())
        };
        #[cfg(not(unix))]
        let inode = (0, 0);
        Stamp { len: m.len(), modified: m.modified().ok(), inode }
    }
}

impl Index {
    /// Reads the dataset: a summary and the byte range of every record.
    pub fn read(path: &Path, heuristic: &Heuristic) -> Result<Index, ReviewError> {
        let file = File::open(path).map_err(ReviewError::io(path))?;
        // Taken before reading: a change made while reading gives a later stamp, so the next
        // request reads the file again.
        let stamp = Stamp::from(&file.metadata().map_err(ReviewError::io(path))?);
        let mut reader = BufReader::with_capacity(1 << 20, file);
        let mut entries = Vec::new();
        let mut offset = 0u64;
        let mut line = String::new();
        let mut number = 0usize;
        let mut seen: HashMap<String, usize> = HashMap::new();
        loop {
            line.clear();
            // A line is capped as every reader of records caps it (`swe_forge_core::MAX_LINE`).
            let cap = swe_forge_core::MAX_LINE as u64 + 1;
            let n = (&mut reader).take(cap).read_line(&mut line).map_err(ReviewError::io(path))?;
            if n == 0 {
                break;
            }
            number += 1;
            if n as u64 == cap && !line.ends_with('\n') {
                return Err(ReviewError::Dataset {
                    path: path.to_owned(),
                    line: number,
                    message: format!("longer than {} MiB, the most one line may hold", swe_forge_core::MAX_LINE >> 20),
                });
            }
            let start = offset;
            offset += n as u64;
            if line.trim().is_empty() {
                continue;
            }
            let inst = swe_forge_core::read_jsonl(line.as_bytes()).map_err(|e| ReviewError::Dataset {
                path: path.to_owned(),
                line: number,
                // The record reader calls the one line it was given line 1: the file's is `number`.
                message: e.to_string().strip_prefix("line 1: ").map(str::to_owned).unwrap_or_else(|| e.to_string()),
            })?;
            let Some(inst) = inst.into_iter().next() else { continue };
            // Two records of one id: which one a review is of could not be told.
            if let Some(first) = seen.insert(inst.instance_id.clone(), number) {
                return Err(ReviewError::Dataset {
                    path: path.to_owned(),
                    line: number,
                    message: format!("instance {} already appeared on line {first}", inst.instance_id),
                });
            }
            entries.push(summary(&inst, heuristic, start, n, digest(line.as_bytes())));
        }
        let by_id = entries.iter().enumerate().map(|(i, e)| (e.id.clone(), i)).collect();
        Ok(Index { entries, by_id, stamp })
    }

    /// The entry of an instance.
    pub fn get(&self, id: &str) -> Option<&Entry> {
        self.by_id.get(id).map(|&i| &self.entries[i])
    }
}

fn summary(inst: &Instance, heuristic: &Heuristic, offset: u64, len: usize, digest: String) -> Entry {
    let (features, _, guessed) = heuristic_label(inst, heuristic);
    let difficulty = inst.swe_forge.as_ref().and_then(|m| m.difficulty.as_ref()).map_or(guessed, |d| d.label);
    Entry {
        id: inst.instance_id.clone(),
        repo: format!("{}/{}", inst.org, inst.repo),
        lang: inst.lang.clone().unwrap_or_else(|| "unknown".into()),
        status: inst.status().as_str(),
        difficulty: difficulty.as_str(),
        title: inst.title.chars().take(200).collect(),
        flags: inst
            .swe_forge
            .as_ref()
            .and_then(|m| m.quality.as_ref())
            .map_or_else(Vec::new, |q| q.flags.iter().map(|f| f.as_str()).collect()),
        fix_lines: features.fix_lines_added + features.fix_lines_removed,
        fixed_tests: features.fixed_tests,
        offset,
        len,
        digest,
    }
}

/// The digest of a record's line: sha256 of its bytes without trailing whitespace, hex.
pub(crate) fn digest(line: &[u8]) -> String {
    let end = line.iter().rposition(|b| !b.is_ascii_whitespace()).map_or(0, |i| i + 1);
    Sha256::digest(&line[..end]).iter().map(|b| format!("{b:02x}")).collect()
}

/// The bytes of one entry's line.
pub(crate) fn read_range(path: &Path, offset: u64, len: usize) -> std::io::Result<Vec<u8>> {
    let mut f = File::open(path)?;
    f.seek(SeekFrom::Start(offset))?;
    let mut buf = vec![0; len];
    f.read_exact(&mut buf)?;
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dataset_with_a_repeated_id_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("d.jsonl");
        let one = swe_forge_test_support::record("o", "r", 1);
        let mut again = one.clone();
        again.title = "the second one".into();
        let other = swe_forge_test_support::record("o", "r", 2);
        let mut bytes = Vec::new();
        swe_forge_core::write_jsonl(&mut bytes, [&one, &other, &again]).unwrap();
        std::fs::write(&path, &bytes).unwrap();
        let heuristic = swe_forge_curate::Heuristic::CALIBRATED;
        let err = Index::read(&path, &heuristic).map(|_| ()).unwrap_err().to_string();
        assert!(err.contains(":3: ") && err.contains("instance o__r-1 already appeared on line 1"), "{err}");
        swe_forge_core::write_jsonl(std::fs::File::create(&path).unwrap(), [&one, &other]).unwrap();
        assert_eq!(Index::read(&path, &heuristic).unwrap().entries.len(), 2);
    }
}
