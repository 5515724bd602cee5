//! Splits of a dataset, each written as its own JSONL file under one folder:
//! `date/before-<cutoff>.jsonl`, `date/from-<cutoff>.jsonl` and `date/undated.jsonl` (by
//! `swe_forge.merged_at`, for a contamination cutoff), `repo/<org>__<repo>.jsonl` and
//! `lang/<lang>.jsonl` (the record's `lang`, or the language its patches are written in, see
//! `language`). Records keep their input order. The `.jsonl` files of a kind's folder that this run
//! does not write are removed once the new files are in place (with the batch of outputs the
//! run commits, `swe_forge_fs::Batch`), so a split made with another cutoff leaves nothing stale
//! behind, and a failure before leaves the old split files all there.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use swe_forge_core::Instance;

use crate::CurateError;
use crate::lang::language;

/// Which splits to write, and where.
#[derive(Debug, Clone, Default)]
pub struct SplitOptions {
    /// The folder the split files go to.
    pub out_dir: PathBuf,
    /// `YYYY-MM-DD`: instances merged before this day go to `before-`, the others to `from-`.
    /// Dates are compared in UTC, as GitHub writes them.
    pub cutoff: Option<String>,
    /// One file per repository.
    pub by_repo: bool,
    /// One file per language.
    pub by_lang: bool,
}

/// The files written, with their number of records, sorted by path.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SplitSummary {
    /// Path and record count of each file.
    pub files: Vec<(PathBuf, usize)>,
}

/// Whether a cutoff is a real `YYYY-MM-DD` day.
pub fn valid_cutoff(day: &str) -> bool {
    swe_forge_core::Day::parse(day).is_some()
}

/// Writes the asked-for splits of `records`: [`SplitWriter`] given each in turn.
pub fn write_splits(records: &[&Instance], options: &SplitOptions) -> Result<SplitSummary, CurateError> {
    let mut splits = SplitWriter::new(options.clone())?;
    for r in records {
        splits.add(r)?;
    }
    splits.finish()
}

/// The split files of records given one at a time ([`SplitWriter::add`]), written by
/// [`SplitWriter::finish`]. Each record's line is kept in an unnamed temporary file and each
/// split file is copied from it in turn, so memory holds the place of each line, not the records,
/// and one split file is open at a time.
pub struct SplitWriter {
    options: SplitOptions,
    kinds: Vec<&'static str>,
    /// Each split file, with the place of its records' lines in `spool`.
    files: BTreeMap<PathBuf, Vec<swe_forge_fs::Slot>>,
    /// The cutoff, parsed.
    cutoff: Option<swe_forge_core::Day>,
    spool: swe_forge_fs::Spool,
}

impl SplitWriter {
    /// Splits as `options` asks; a cutoff that is not a day is refused.
    pub fn new(options: SplitOptions) -> Result<SplitWriter, CurateError> {
        let mut kinds = Vec::new();
        let mut files = BTreeMap::new();
        let mut day = None;
        if let Some(cutoff) = &options.cutoff {
            let Some(parsed) = swe_forge_core::Day::parse(cutoff) else {
                return Err(CurateError::Usage(format!("cutoff {cutoff:?} is not a YYYY-MM-DD day")));
            };
            day = Some(parsed);
            kinds.push("date");
            // The three date files are written even when empty.
            for name in [format!("before-{cutoff}"), format!("from-{cutoff}"), "undated".to_owned()] {
                files.insert(options.out_dir.join("date").join(format!("{name}.jsonl")), Vec::new());
            }
        }
        if options.by_repo {
            kinds.push("repo");
        }
        if options.by_lang {
            kinds.push("lang");
        }
        Ok(SplitWriter { options, kinds, files, cutoff: day, spool: swe_forge_fs::Spool::new() })
    }

    /// The split files `r` goes to.
    fn files_of(&self, r: &Instance) -> Vec<PathBuf> {
        let o = &self.options;
        let mut out = Vec::new();
        if let (Some(cutoff), Some(day)) = (&o.cutoff, self.cutoff) {
            let name = match r.swe_forge.as_ref().and_then(|m| m.merged_at.as_ref()) {
                None => "undated".to_owned(),
                Some(d) if d.date() < day => format!("before-{cutoff}"),
                Some(_) => format!("from-{cutoff}"),
            };
            out.push(o.out_dir.join("date").join(format!("{name}.jsonl")));
        }
        if o.by_repo {
            out.push(o.out_dir.join("repo").join(format!("{}.jsonl", file_name(&format!("{}__{}", r.org, r.repo)))));
        }
        if o.by_lang {
            out.push(o.out_dir.join("lang").join(format!("{}.jsonl", file_name(&language(r)))));
        }
        out
    }

    /// Adds `r` (after the records added before it) to the split files it goes to.
    pub fn add(&mut self, r: &Instance) -> Result<(), CurateError> {
        let files = self.files_of(r);
        if files.is_empty() {
            return Ok(());
        }
        let spool_err = |source| CurateError::Io { path: PathBuf::from("(temporary file of the splits)"), source };
        let mut line = serde_json::to_vec(r).map_err(|e| spool_err(e.into()))?;
        line.push(b'\n');
        let slot = self.spool.push(&line).map_err(spool_err)?;
        for path in files {
            self.files.entry(path).or_default().push(slot);
        }
        Ok(())
    }

    /// Writes every split file (kinds' folders marked; their other `.jsonl` files removed once the
    /// new ones are in place);
    /// folders that are not curate's own are refused before anything is touched.
    pub fn finish(self) -> Result<SplitSummary, CurateError> {
        let SplitWriter { options, kinds, files, spool, .. } = self;
        // A kind's folder that is a symlink (or no folder) would have files outside the split
        // folder removed and written: refused before anything is touched.
        for kind in &kinds {
            let dir = options.out_dir.join(kind);
            if let Ok(meta) = std::fs::symlink_metadata(&dir)
                && !meta.is_dir()
            {
                return Err(CurateError::Usage(format!(
                    "{} is {}, not a folder: the {kind} splits go there and its .jsonl files are removed first; \
                     refusing to touch files outside {}",
                    dir.display(),
                    if meta.file_type().is_symlink() { "a symlink" } else { "a file" },
                    options.out_dir.display()
                )));
            }
        }
        // A kind's folder holding .jsonl files that no curate wrote (no marker) is someone's
        // data (the input itself, say, at `<splits>/repo/x.jsonl`): refused before anything is
        // removed.
        for kind in &kinds {
            let dir = options.out_dir.join(kind);
            if !dir.join(MARKER).exists()
                && let Some(found) = jsonl_files(&dir).into_iter().next()
            {
                return Err(CurateError::Usage(format!(
                    "{} holds {} which curate did not write (no {MARKER} there): the {kind} splits replace the \
                     .jsonl files of that folder; move them or give --splits another folder",
                    dir.display(),
                    found.display()
                )));
            }
        }
        // The new files first (put in place with the run's other outputs when a batch is open),
        // then the stale ones go: a failure or a signal before leaves every old split file.
        let batch = swe_forge_fs::Batch::begin();
        for kind in &kinds {
            let dir = options.out_dir.join(kind);
            std::fs::create_dir_all(&dir).map_err(CurateError::io(&dir))?;
            let marker = dir.join(MARKER);
            std::fs::write(
                &marker,
                "written by swe-forge curate --splits: its .jsonl files are replaced on each run\n",
            )
            .map_err(CurateError::io(&marker))?;
        }
        let mut summary = SplitSummary::default();
        for (path, lines) in &files {
            swe_forge_fs::write_with(path, |w| {
                for &slot in lines {
                    spool
                        .read(slot)
                        .and_then(|line| std::io::Write::write_all(w, &line))
                        .map_err(CurateError::io(path))?;
                }
                Ok::<(), CurateError>(())
            })?;
            summary.files.push((path.clone(), lines.len()));
        }
        for kind in &kinds {
            for stale in jsonl_files(&options.out_dir.join(kind)).into_iter().filter(|p| !files.contains_key(p)) {
                swe_forge_fs::remove_after_commit(&stale)?;
            }
        }
        batch.commit()?;
        Ok(summary)
    }
}

/// A name made safe for a file: anything but letters, digits and `._+-` becomes `_`.
fn file_name(s: &str) -> String {
    let name: String =
        s.chars().map(|c| if c.is_ascii_alphanumeric() || "._+-".contains(c) { c } else { '_' }).collect();
    if name.is_empty() || name.starts_with('.') { format!("_{name}") } else { name }
}

/// The file that marks a split folder as curate's own: only there are .jsonl files removed.
pub const MARKER: &str = ".swe-forge-splits";

fn jsonl_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut found: Vec<PathBuf> =
        entries.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "jsonl")).collect();
    found.sort();
    found
}

/// Writes records as JSONL with the one output writer (`swe_forge_fs::write_with`: a temporary
/// file with an unpredictable name renamed into place, or written through a device or FIFO).
pub fn write_records(path: &Path, records: &[&Instance]) -> Result<(), CurateError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(CurateError::io(dir))?;
    }
    swe_forge_fs::write_with(path, |w| {
        swe_forge_core::write_jsonl(w, records.iter().copied())
            .map_err(|source| CurateError::Records { path: path.to_owned(), source })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kind_folder_that_is_a_symlink_is_refused_and_nothing_outside_is_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let outside = tmp.path().join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("keep.jsonl"), "{}\n").unwrap();
        let out_dir = tmp.path().join("splits");
        std::fs::create_dir_all(&out_dir).unwrap();
        std::os::unix::fs::symlink(&outside, out_dir.join("repo")).unwrap();
        let r = record("o", 1, Some("go"), None);
        let options = SplitOptions { out_dir: out_dir.clone(), by_repo: true, by_lang: true, ..Default::default() };
        let err = write_splits(&[&r], &options).unwrap_err().to_string();
        assert!(err.contains("is a symlink, not a folder"), "{err}");
        assert!(outside.join("keep.jsonl").exists(), "a file outside the split folder was removed");
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 1, "a split was written outside");
        assert!(!out_dir.join("lang").exists(), "other kinds were written before the refusal");
    }

    #[test]
    fn jsonl_files_curate_did_not_write_are_never_removed() {
        let tmp = tempfile::tempdir().unwrap();
        // The dataset itself sits where the repository splits would go.
        std::fs::create_dir_all(tmp.path().join("repo")).unwrap();
        std::fs::write(tmp.path().join("repo/dataset.jsonl"), "{}\n").unwrap();
        let r = record("o", 1, Some("go"), None);
        let options =
            SplitOptions { out_dir: tmp.path().to_owned(), by_repo: true, by_lang: true, ..Default::default() };
        let err = write_splits(&[&r], &options).unwrap_err().to_string();
        assert!(err.contains("dataset.jsonl which curate did not write"), "{err}");
        assert_eq!(std::fs::read_to_string(tmp.path().join("repo/dataset.jsonl")).unwrap(), "{}\n");
        assert!(!tmp.path().join("lang").exists(), "other kinds were written before the refusal");
        // Elsewhere, splits are written, marked, and replaced by the next run.
        std::fs::remove_file(tmp.path().join("repo/dataset.jsonl")).unwrap();
        write_splits(&[&r], &options).unwrap();
        assert!(tmp.path().join("repo").join(MARKER).exists() && tmp.path().join("lang").join(MARKER).exists());
        write_splits(&[&r], &options).unwrap();
        assert_eq!(ids(&tmp.path().join("repo/o__r.jsonl")), ["o__r-1"]);
    }

    /// The old split files stay until the new ones are in place: a run that fails (or is
    /// stopped) after writing its splits, before its outputs are renamed, leaves every old split
    /// file, also those the new run would not write; before, they were removed first, and a full
    /// disk or a kill at the wrong moment left none.
    #[test]
    fn old_split_files_stay_until_the_new_ones_are_in_place() {
        let tmp = tempfile::tempdir().unwrap();
        let options = |cutoff: &str| SplitOptions {
            out_dir: tmp.path().to_owned(),
            cutoff: Some(cutoff.to_owned()),
            by_repo: true,
            ..Default::default()
        };
        let (a, b) = (record("a", 1, None, Some("2024-01-01T00:00:00Z")), record("b", 2, None, None));
        write_splits(&[&a, &b], &options("2023-01-01")).unwrap();
        let listing = || {
            let mut all: Vec<String> = ["date", "repo"]
                .iter()
                .flat_map(|k| jsonl_files(&tmp.path().join(k)))
                .map(|p| p.strip_prefix(tmp.path()).unwrap().display().to_string())
                .collect();
            all.sort();
            all
        };
        let old = listing();
        assert_eq!(old.len(), 5, "{old:?}");
        {
            // The run's batch (curate's records and splits) is dropped before its commit.
            let _run = swe_forge_fs::Batch::begin();
            write_splits(&[&a], &options("2025-01-01")).unwrap();
        }
        assert_eq!(listing(), old, "a run stopped before its commit removed old split files");
        assert_eq!(ids(&tmp.path().join("repo/b__r.jsonl")), ["b__r-2"]);
        // Committed, the stale files of the other cutoff and of repository b go.
        let run = swe_forge_fs::Batch::begin();
        write_splits(&[&a], &options("2025-01-01")).unwrap();
        run.commit().unwrap();
        assert_eq!(
            listing(),
            ["date/before-2025-01-01.jsonl", "date/from-2025-01-01.jsonl", "date/undated.jsonl", "repo/a__r.jsonl"]
        );
        assert_eq!(ids(&tmp.path().join("date/before-2025-01-01.jsonl")), ["a__r-1"]);
    }

    /// The cutoff compares UTC days: a merge at 23:30 on New Year's Eve in New York is on the
    /// first of January in UTC (before, the day as written put it before the cutoff).
    #[test]
    fn the_cutoff_compares_utc_days() {
        let tmp = tempfile::tempdir().unwrap();
        let options =
            SplitOptions { out_dir: tmp.path().to_owned(), cutoff: Some("2024-01-01".into()), ..Default::default() };
        let records = [
            record("ny", 1, None, Some("2023-12-31T23:30:00-05:00")),
            record("tokyo", 2, None, Some("2024-01-01T08:00:00+09:00")),
        ];
        write_splits(&records.iter().collect::<Vec<_>>(), &options).unwrap();
        assert_eq!(ids(&tmp.path().join("date/from-2024-01-01.jsonl")), ["ny__r-1"]);
        assert_eq!(ids(&tmp.path().join("date/before-2024-01-01.jsonl")), ["tokyo__r-2"]);
    }

    fn record(org: &str, number: u64, lang: Option<&str>, merged: Option<&str>) -> Instance {
        let mut r = swe_forge_test_support::record(org, "r", number);
        r.lang = lang.map(str::to_owned);
        if let Some(m) = merged {
            let mut meta = swe_forge_core::ForgeMeta::new(swe_forge_core::ValidationStatus::Accepted);
            meta.merged_at = Some(swe_forge_core::Timestamp::parse(m).unwrap());
            r.swe_forge = Some(meta);
        }
        r
    }

    fn ids(path: &Path) -> Vec<String> {
        let text = std::fs::read_to_string(path).unwrap();
        swe_forge_core::read_jsonl(text.as_bytes()).unwrap().into_iter().map(|r| r.instance_id).collect()
    }

    #[test]
    fn date_repo_and_language_splits() {
        let dir = tempfile::tempdir().unwrap();
        let records = [
            record("a", 1, Some("go"), Some("2023-12-31T23:59:59Z")),
            record("a", 2, Some("go"), Some("2024-01-01T00:00:00Z")),
            record("b/../x", 3, Some("c++"), None),
        ];
        // A split of an earlier run (its folder marked as curate's own) goes.
        std::fs::create_dir_all(dir.path().join("date")).unwrap();
        std::fs::write(dir.path().join("date").join(MARKER), "").unwrap();
        std::fs::write(dir.path().join("date/before-2020-01-01.jsonl"), "stale").unwrap();
        let options = SplitOptions {
            out_dir: dir.path().to_owned(),
            cutoff: Some("2024-01-01".into()),
            by_repo: true,
            by_lang: true,
        };
        let refs: Vec<&Instance> = records.iter().collect();
        let summary = write_splits(&refs, &options).unwrap();
        let names: Vec<(String, usize)> = summary
            .files
            .iter()
            .map(|(p, n)| (p.strip_prefix(dir.path()).unwrap().to_string_lossy().into_owned(), *n))
            .collect();
        assert_eq!(
            names,
            [
                ("date/before-2024-01-01.jsonl".to_owned(), 1),
                ("date/from-2024-01-01.jsonl".to_owned(), 1),
                ("date/undated.jsonl".to_owned(), 1),
                ("lang/c++.jsonl".to_owned(), 1),
                ("lang/go.jsonl".to_owned(), 2),
                ("repo/a__r.jsonl".to_owned(), 2),
                ("repo/b_.._x__r.jsonl".to_owned(), 1),
            ]
        );
        assert_eq!(ids(&dir.path().join("date/before-2024-01-01.jsonl")), ["a__r-1"]);
        assert_eq!(ids(&dir.path().join("lang/go.jsonl")), ["a__r-1", "a__r-2"]);
        assert!(!dir.path().join("date/before-2020-01-01.jsonl").exists());
        let bad = SplitOptions { cutoff: Some("2024-1-1".into()), ..options };
        assert!(write_splits(&refs, &bad).is_err());
    }
}
