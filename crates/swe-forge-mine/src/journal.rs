//! Resumable output: the candidates file and its progress journal (`<out>.progress.jsonl`).
//!
//! Every PR's decision is appended to the journal after its candidate line (if any) is written
//! and synced, and every finished listing page records its cursor. An interrupted mine (even
//! killed with SIGKILL) reopens both files, cuts a torn last line, skips the PRs already decided,
//! restarts listings from the last finished page and never writes a candidate twice: a candidate
//! whose journal entry was lost is recognised by its instance id.
//!
//! Neither file is created, emptied (`fresh`) or written before the first decision is recorded
//! (or [`Journal::finish`]): a mine that fails before deciding anything, on a bad mirror or an
//! unreachable GitHub, leaves previous files as they were and makes no empty ones.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::candidate::Candidate;
use crate::error::MineError;
use crate::funnel::{Decision, Funnel};

#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
enum Event {
    Decided { repo: String, number: u64, decision: Decision, references_issue: bool },
    Page { repo: String, window: String, cursor: String },
    Complete { repo: String, window: String },
}

/// The open candidates file and journal of one mine.
pub struct Journal {
    out_path: PathBuf,
    progress_path: PathBuf,
    /// Both files, opened for appending at the first write.
    files: Option<(File, File)>,
    /// Empty both files when they are opened (`fresh`).
    fresh: bool,
    written: HashSet<String>,
    decided: BTreeMap<(String, u64), (Decision, bool)>,
    cursors: HashMap<(String, String), String>,
    complete: HashSet<(String, String)>,
    repos: Vec<String>,
}

impl Journal {
    /// Reads `out` and its journal to resume from them, or with `fresh` ignores them (they are
    /// emptied at the first write). Touches neither file otherwise.
    pub fn open(out: &Path, fresh: bool) -> Result<Journal, MineError> {
        let progress_path = progress_path(out);
        let (out_text, progress_text) =
            if fresh { Default::default() } else { (read_whole_lines(out)?, read_whole_lines(&progress_path)?) };
        let mut j = Journal {
            out_path: out.to_owned(),
            progress_path: progress_path.clone(),
            files: None,
            fresh,
            written: HashSet::new(),
            decided: BTreeMap::new(),
            cursors: HashMap::new(),
            complete: HashSet::new(),
            repos: Vec::new(),
        };
        for (i, line) in out_text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
            let c = Candidate::from_json_line(line).map_err(|e| {
                let value = serde_json::from_str::<serde_json::Value>(line).ok();
                if value.as_ref().and_then(|v| v.as_object()).is_some_and(|m| !m.contains_key("mining")) {
                    return MineError::NotCandidates { path: out.to_owned(), line: i + 1 };
                }
                MineError::Corrupt { path: out.to_owned(), line: i + 1, message: swe_forge_core::json_line_error(&e) }
            })?;
            j.written.insert(c.record.instance_id);
        }
        for (i, line) in progress_text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
            let e: Event = serde_json::from_str(line).map_err(|e| MineError::Corrupt {
                path: progress_path.clone(),
                line: i + 1,
                message: swe_forge_core::json_line_error(&e),
            })?;
            match e {
                Event::Decided { repo, number, decision, references_issue } => {
                    j.note_repo(&repo);
                    j.decided.insert((repo, number), (decision, references_issue));
                }
                Event::Page { repo, window, cursor } => {
                    j.cursors.insert((repo, window), cursor);
                }
                Event::Complete { repo, window } => {
                    j.complete.insert((repo, window));
                }
            }
        }
        Ok(j)
    }

    /// Creates (with `fresh`, empties) both files if nothing was written yet: a mine that ends
    /// without deciding anything still leaves its outputs.
    pub fn finish(&mut self) -> Result<(), MineError> {
        self.files().map(|_| ())
    }

    /// Both files, opened for appending (and created, or with `fresh` emptied) on first use.
    fn files(&mut self) -> Result<(&mut File, &mut File), MineError> {
        if self.files.is_none() {
            if let Some(dir) = self.out_path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir).map_err(MineError::io(dir))?;
            }
            if self.fresh {
                for p in [&self.out_path, &self.progress_path] {
                    File::create(p).map_err(MineError::io(p))?;
                }
            }
            self.files = Some((append(&self.out_path)?, append(&self.progress_path)?));
        }
        let (out, progress) = self.files.as_mut().expect("opened above");
        Ok((out, progress))
    }

    /// Appends one line to the journal.
    fn journal(&mut self, event: &Event) -> Result<(), MineError> {
        let line = serde_json::to_string(event).expect("events serialize");
        let path = self.progress_path.clone();
        write_line(self.files()?.1, &path, &line)
    }

    /// Path of the candidates file.
    pub fn out_path(&self) -> &Path {
        &self.out_path
    }

    /// Path of the journal.
    pub fn progress_path(&self) -> &Path {
        &self.progress_path
    }

    /// Number of PRs already decided for `repo`.
    pub fn decided_count(&self, repo: &str) -> usize {
        self.decided.keys().filter(|(r, _)| r == repo).count()
    }

    /// Whether PR `number` of `repo` was decided by this or an earlier run.
    pub fn is_decided(&self, repo: &str, number: u64) -> bool {
        self.decided.contains_key(&(repo.to_owned(), number))
    }

    /// Records a decision; a kept PR's candidate is written first (unless an earlier, interrupted
    /// run wrote it already).
    pub fn decide(
        &mut self,
        repo: &str,
        number: u64,
        decision: Decision,
        references_issue: bool,
        candidate: Option<&Candidate>,
    ) -> Result<(), MineError> {
        if self.is_decided(repo, number) {
            return Ok(());
        }
        if let Some(c) = candidate
            && !self.written.contains(&c.record.instance_id)
        {
            let line = c.to_json_line();
            let path = self.out_path.clone();
            write_line(self.files()?.0, &path, &line)?;
            self.written.insert(c.record.instance_id.clone());
        }
        self.journal(&Event::Decided { repo: repo.to_owned(), number, decision, references_issue })?;
        self.note_repo(repo);
        self.decided.insert((repo.to_owned(), number), (decision, references_issue));
        Ok(())
    }

    /// Remembers that every PR of the listing page ending at `cursor` is decided.
    pub fn page_done(&mut self, repo: &str, window: &str, cursor: &str) -> Result<(), MineError> {
        self.journal(&Event::Page { repo: repo.to_owned(), window: window.to_owned(), cursor: cursor.to_owned() })?;
        self.cursors.insert((repo.to_owned(), window.to_owned()), cursor.to_owned());
        Ok(())
    }

    /// Cursor to resume the listing of `window` from.
    pub fn resume_cursor(&self, repo: &str, window: &str) -> Option<&str> {
        self.cursors.get(&(repo.to_owned(), window.to_owned())).map(String::as_str)
    }

    /// Marks a listing window as finished.
    pub fn window_complete(&mut self, repo: &str, window: &str) -> Result<(), MineError> {
        self.journal(&Event::Complete { repo: repo.to_owned(), window: window.to_owned() })?;
        self.complete.insert((repo.to_owned(), window.to_owned()));
        Ok(())
    }

    /// Whether a listing window was finished by this or an earlier run.
    pub fn is_complete(&self, repo: &str, window: &str) -> bool {
        self.complete.contains(&(repo.to_owned(), window.to_owned()))
    }

    /// The funnel of every repository in the journal, in the order they were first mined.
    pub fn funnels(&self) -> Vec<Funnel> {
        let mut funnels: Vec<Funnel> = self.repos.iter().map(|r| Funnel::new(r)).collect();
        for ((repo, _), (decision, refs)) in &self.decided {
            if let Some(f) = funnels.iter_mut().find(|f| &f.repo == repo) {
                f.count(*decision, *refs);
            }
        }
        funnels
    }

    /// Registers a repository so that it shows in the funnel even when it has no PR.
    pub fn note_repo(&mut self, repo: &str) {
        if !self.repos.iter().any(|r| r == repo) {
            self.repos.push(repo.to_owned());
        }
    }
}

/// `<out>.progress.jsonl` next to the candidates file.
pub fn progress_path(out: &Path) -> PathBuf {
    let mut name = out.file_stem().unwrap_or_default().to_os_string();
    name.push(".progress.jsonl");
    out.with_file_name(name)
}

/// The file's complete lines; a torn last line (a killed writer) is cut off the file.
fn read_whole_lines(path: &Path) -> Result<String, MineError> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(String::new()),
        Err(e) => return Err(MineError::Io { path: path.to_owned(), source: e }),
    };
    let keep = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    if keep < bytes.len() {
        tracing::warn!(path = %path.display(), "cutting a torn last line left by an interrupted run");
        let f = OpenOptions::new().write(true).open(path).map_err(MineError::io(path))?;
        f.set_len(keep as u64).map_err(MineError::io(path))?;
    }
    String::from_utf8(bytes[..keep].to_vec()).map_err(|e| MineError::Corrupt {
        path: path.to_owned(),
        line: 0,
        message: e.to_string(),
    })
}

fn append(path: &Path) -> Result<File, MineError> {
    OpenOptions::new().create(true).append(true).open(path).map_err(MineError::io(path))
}

fn write_line(file: &mut File, path: &Path, line: &str) -> Result<(), MineError> {
    let mut buf = Vec::with_capacity(line.len() + 1);
    buf.extend_from_slice(line.as_bytes());
    buf.push(b'\n');
    file.write_all(&buf).and_then(|()| file.sync_data()).map_err(MineError::io(path))
}
