//! The dataset's index: a summary and the byte range of every record, read once, so lists are
//! filtered and paged from memory and a record is read from its range when it is opened.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

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
    pub fix_lines: u64,
    pub fixed_tests: u64,
    pub offset: u64,
    pub len: usize,
}

/// Every record of the dataset, in file order.
pub(crate) struct Index {
    pub entries: Vec<Entry>,
    pub by_id: HashMap<String, usize>,
}

impl Index {
    /// Reads the dataset: a summary and the byte range of every record.
    pub fn read(path: &Path, heuristic: &Heuristic) -> Result<Index, ReviewError> {
        let file = File::open(path).map_err(ReviewError::io(path))?;
        let mut reader = BufReader::with_capacity(1 << 20, file);
        let mut entries = Vec::new();
        let mut offset = 0u64;
        let mut line = String::new();
        let mut number = 0usize;
        loop {
            line.clear();
            let n = reader.read_line(&mut line).map_err(ReviewError::io(path))?;
            if n == 0 {
                break;
            }
            number += 1;
            let start = offset;
            offset += n as u64;
            if line.trim().is_empty() {
                continue;
            }
            let inst = swe_forge_core::read_jsonl(line.as_bytes()).map_err(|e| ReviewError::Dataset {
                path: path.to_owned(),
                line: number,
                message: e.to_string(),
            })?;
            let Some(inst) = inst.into_iter().next() else { continue };
            entries.push(summary(&inst, heuristic, start, n));
        }
        let by_id = entries.iter().enumerate().map(|(i, e)| (e.id.clone(), i)).collect();
        Ok(Index { entries, by_id })
    }

    /// The entry of an instance.
    pub fn get(&self, id: &str) -> Option<&Entry> {
        self.by_id.get(id).map(|&i| &self.entries[i])
    }
}

fn summary(inst: &Instance, heuristic: &Heuristic, offset: u64, len: usize) -> Entry {
    let (features, _, guessed) = heuristic_label(inst, heuristic);
    let difficulty = inst.swe_forge.as_ref().and_then(|m| m.difficulty.as_ref()).map_or(guessed, |d| d.label);
    Entry {
        id: inst.instance_id.clone(),
        repo: format!("{}/{}", inst.org, inst.repo),
        lang: inst.lang.clone().unwrap_or_else(|| "unknown".into()),
        status: match inst.status() {
            swe_forge_core::ValidationStatus::Candidate => "candidate",
            swe_forge_core::ValidationStatus::Accepted => "accepted",
            swe_forge_core::ValidationStatus::Rejected => "rejected",
        },
        difficulty: difficulty.as_str(),
        title: inst.title.chars().take(200).collect(),
        fix_lines: features.fix_lines_added + features.fix_lines_removed,
        fixed_tests: features.fixed_tests,
        offset,
        len,
    }
}

/// The bytes of one entry's line.
pub(crate) fn read_range(path: &Path, offset: u64, len: usize) -> std::io::Result<Vec<u8>> {
    let mut f = File::open(path)?;
    f.seek(SeekFrom::Start(offset))?;
    let mut buf = vec![0; len];
    f.read_exact(&mut buf)?;
    Ok(buf)
}
