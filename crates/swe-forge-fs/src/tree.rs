//! Reading logs and result folders that a test run (or anyone) may have filled with anything:
//! symlinks out of the folder or into loops, FIFOs, devices, files of many gigabytes.
//!
//! [`read_tree`] never follows a symlink that leads out of the tree, enters each folder once
//! (so a loop ends), reads regular files only and keeps at most a cap of each: its head and its
//! tail, with a line saying how much was dropped between them. What it leaves out or cuts is
//! listed, for the caller to warn about.

use std::collections::HashSet;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// Most bytes of one log or result file read into memory: 64 MiB, the log cap of a validation
/// run (the executor keeps the head and tail of a longer log the same way).
pub const READ_CAP: u64 = 64 << 20;

/// What [`read_capped`] read of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capped {
    /// The file's content, or its head and tail with a line between them saying how many
    /// bytes were dropped.
    pub bytes: Vec<u8>,
    /// Size of the file (for a FIFO or device: what was read).
    pub total: u64,
    /// Whether bytes were dropped.
    pub truncated: bool,
}

/// Reads `path` keeping at most `cap` bytes of it: a regular file longer than that keeps its
/// first and last `cap / 2` bytes; anything else (a FIFO, a device, stdin) is read up to `cap`
/// bytes and no further.
pub fn read_capped(path: &Path, cap: u64) -> io::Result<Capped> {
    let file = File::open(path)?;
    let meta = file.metadata()?;
    read_open(file, &meta, cap)
}

/// Reads the regular file `path` as [`read_capped`] does; anything else (a FIFO, a device, a
/// socket, a folder) is an error of kind `InvalidInput`, told without blocking: the file is
/// opened non-blocking, so a FIFO nobody writes does not hold the caller. What a command reads
/// from a folder it did not write (kept logs, parses) goes through this.
pub fn read_file_capped(path: &Path, cap: u64) -> io::Result<Capped> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = File::options().read(true).custom_flags(libc::O_NONBLOCK).open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "not a regular file (a FIFO, a device, a folder)"));
    }
    read_open(file, &meta, cap)
}

fn read_open(mut file: File, meta: &std::fs::Metadata, cap: u64) -> io::Result<Capped> {
    if meta.is_dir() {
        return Err(io::Error::new(io::ErrorKind::IsADirectory, "a folder, not a file"));
    }
    if !meta.is_file() {
        let mut bytes = Vec::new();
        (&mut file).take(cap).read_to_end(&mut bytes)?;
        let more = bytes.len() as u64 == cap && file.read(&mut [0u8; 1])? > 0;
        if more {
            bytes.extend_from_slice(b"\n[swe-forge: not read past this point]\n");
        }
        return Ok(Capped { total: bytes.len() as u64, bytes, truncated: more });
    }
    let total = meta.len();
    if total <= cap {
        let mut bytes = Vec::with_capacity(total as usize);
        // A file growing meanwhile is still read no further than the cap.
        (&mut file).take(cap).read_to_end(&mut bytes)?;
        return Ok(Capped { total, bytes, truncated: false });
    }
    let head_len = cap / 2;
    let tail_len = cap - head_len;
    let mut bytes = Vec::with_capacity(cap as usize + 64);
    (&mut file).take(head_len).read_to_end(&mut bytes)?;
    bytes.extend_from_slice(format!("\n[swe-forge: {} bytes dropped here]\n", total - cap).as_bytes());
    file.seek(SeekFrom::Start(total - tail_len))?;
    file.take(tail_len).read_to_end(&mut bytes)?;
    Ok(Capped { total, bytes, truncated: true })
}

/// The regular files of a folder, read with [`read_capped`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tree {
    /// Path relative to the folder (`/`-separated) and content, sorted by path.
    pub files: Vec<(String, Vec<u8>)>,
    /// What was left out or cut, sorted by path.
    pub skipped: Vec<Skipped>,
}

/// An entry [`read_tree`] left out or cut.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Skipped {
    /// Path relative to the folder.
    pub path: String,
    /// Why: `symlink out of the tree`, `not a regular file`, `cut to head and tail`, ...
    pub why: String,
}

impl std::fmt::Display for Skipped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path, self.why)
    }
}

/// Every regular file under `dir` (an empty tree when `dir` does not exist), each read with at
/// most `cap` bytes kept. Symlinks are followed only when they lead to a file or folder inside
/// `dir`; each folder is read once.
pub fn read_tree(dir: &Path, cap: u64) -> io::Result<Tree> {
    let mut tree = Tree::default();
    let root = match std::fs::canonicalize(dir) {
        Ok(r) => r,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(tree),
        Err(e) => return Err(e),
    };
    // Folders by (device, inode): a folder reached twice (a symlink to an ancestor) is read
    // once, and no path is resolved again (resolving every folder's path cost a walk of all its
    // ancestors each, cubic in the depth: 20 s for a file 1,000 folders deep).
    let id = |m: &std::fs::Metadata| {
        use std::os::unix::fs::MetadataExt;
        (m.dev(), m.ino())
    };
    let mut seen: HashSet<(u64, u64)> = HashSet::from([id(&std::fs::metadata(&root)?)]);
    let mut stack: Vec<(PathBuf, String)> = vec![(root.clone(), String::new())];
    while let Some((real, rel_dir)) = stack.pop() {
        let entries = match std::fs::read_dir(&real) {
            Ok(e) => e,
            Err(e) if real == root => return Err(e),
            Err(e) => {
                tree.skipped.push(Skipped { path: rel_dir, why: format!("cannot list: {e}") });
                continue;
            }
        };
        for entry in entries {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let rel = if rel_dir.is_empty() { name } else { format!("{rel_dir}/{name}") };
            let skip = |why: &str| Skipped { path: rel.clone(), why: why.to_owned() };
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                tree.skipped.push(skip("cannot read its type"));
                continue;
            };
            let (real_path, meta) = if kind.is_symlink() {
                let Ok(target) = std::fs::canonicalize(&path) else {
                    tree.skipped.push(skip("symlink to nothing, or a symlink loop"));
                    continue;
                };
                if !target.starts_with(&root) {
                    tree.skipped.push(skip("symlink out of the tree"));
                    continue;
                }
                match std::fs::metadata(&target) {
                    Ok(m) => (target, m),
                    Err(e) => {
                        tree.skipped.push(skip(&format!("cannot read: {e}")));
                        continue;
                    }
                }
            } else {
                match entry.metadata() {
                    Ok(m) => (path, m),
                    Err(e) => {
                        tree.skipped.push(skip(&format!("cannot read: {e}")));
                        continue;
                    }
                }
            };
            if meta.is_dir() {
                // `real_path` is canonical: a folder of a canonical folder that is no symlink,
                // or a symlink's canonical target.
                if seen.insert(id(&meta)) {
                    stack.push((real_path, rel));
                } else {
                    tree.skipped.push(skip("folder already read (symlink loop)"));
                }
            } else if !meta.is_file() {
                tree.skipped.push(skip("not a regular file"));
            } else {
                match read_capped(&real_path, cap) {
                    Ok(c) => {
                        if c.truncated {
                            tree.skipped.push(skip(&format!("{} bytes, cut to head and tail", c.total)));
                        }
                        tree.files.push((rel, c.bytes));
                    }
                    Err(e) => tree.skipped.push(skip(&format!("cannot read: {e}"))),
                }
            }
        }
    }
    tree.files.sort();
    tree.skipped.sort();
    Ok(tree)
}
