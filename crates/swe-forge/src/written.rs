//! The files `publish` and `report` wrote in their folder, listed with each one's SHA-256 in
//! `.swe-forge-written` there: a later run replaces or removes only files of that list still as
//! written. A `README.md` or `LICENSE.md` it did not write (or that was edited since), and a
//! Parquet file under `data/` it did not write, are someone's: refused, naming them, unless
//! `--force`.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use sha2::{Digest, Sha256};

/// The list's file name, in the folder written.
pub const MANIFEST: &str = ".swe-forge-written";

/// The files written in one folder: path relative to it -> SHA-256 of the content written.
pub struct Written {
    dir: PathBuf,
    files: BTreeMap<String, String>,
}

impl Written {
    /// The list of `dir` (empty when there is none).
    pub fn read(dir: &Path) -> Result<Written> {
        let path = dir.join(MANIFEST);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
        };
        let mut files = BTreeMap::new();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            // Lines as sha256sum writes them: the digest, two spaces, the path.
            let Some((sha, rel)) = line.split_once("  ") else {
                bail!("{}: {line:?} is not `<sha256>  <path>`; remove the file to start over", path.display());
            };
            files.insert(rel.to_owned(), sha.to_owned());
        }
        Ok(Written { dir: dir.to_owned(), files })
    }

    /// Whether `rel` may be replaced: absent, or listed and unchanged since.
    fn ours(&self, rel: &str) -> Result<bool> {
        let path = self.dir.join(rel);
        match std::fs::symlink_metadata(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(true),
            Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
            Ok(_) => Ok(self.files.get(rel).is_some_and(|sha| sha_of(&path).is_ok_and(|now| now == *sha))),
        }
    }

    /// Refuses to go on when a file of `rels` exists that this list does not hold as written,
    /// unless `force`.
    pub fn check_replace(&self, rels: &[&str], force: bool) -> Result<()> {
        for rel in rels {
            if !force && !self.ours(rel)? {
                bail!(
                    "{} was not written by swe-forge, or was edited since (it is not in {} as it is now): this \
                     command replaces it; move it away, or give --force to replace it",
                    self.dir.join(rel).display(),
                    self.dir.join(MANIFEST).display()
                );
            }
        }
        Ok(())
    }

    /// The Parquet files under `data/` (symlinks not followed), as paths relative to the folder,
    /// sorted, split into those of this list still as written and the others.
    fn parquet_files(&self) -> Result<(Vec<String>, Vec<String>)> {
        let mut found = Vec::new();
        walk_parquet(&self.dir, Path::new("data"), &mut found)?;
        found.sort();
        let (mut ours, mut others) = (Vec::new(), Vec::new());
        for rel in found {
            if self.ours(&rel)? { ours.push(rel) } else { others.push(rel) }
        }
        Ok((ours, others))
    }

    /// The Parquet files under `data/` an earlier run wrote, to remove once the new ones are
    /// written; refused, naming them, when others are there too (unless `force`, which counts
    /// them in).
    pub fn stale_parquet(&self, force: bool) -> Result<Vec<String>> {
        let (mut ours, others) = self.parquet_files()?;
        if !others.is_empty() && !force {
            let shown: Vec<String> = others.iter().take(5).map(|r| self.dir.join(r).display().to_string()).collect();
            let more = if others.len() > 5 { format!(" and {} more", others.len() - 5) } else { String::new() };
            bail!(
                "{} holds Parquet files swe-forge did not write (or that were edited since): {}{more}; publish \
                 replaces the Parquet files under data/, so it refuses to go on: move them away, or give --force to \
                 remove them",
                self.dir.join("data").display(),
                shown.join(", ")
            );
        }
        ours.extend(others);
        Ok(ours)
    }

    /// Notes `rel` as written now.
    pub fn record(&mut self, rel: &str) -> Result<()> {
        let path = self.dir.join(rel);
        let sha = sha_of(&path).with_context(|| format!("reading back {}", path.display()))?;
        self.files.insert(rel.to_owned(), sha);
        Ok(())
    }

    /// Removes `rel` (written by an earlier run) and forgets it; its folders under `data/` go when left empty.
    pub fn remove(&mut self, rel: &str) -> Result<()> {
        let path = self.dir.join(rel);
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(e).with_context(|| format!("removing {}", path.display()));
            }
            _ => {}
        }
        self.files.remove(rel);
        // Its folders up to data/ go too, each left when it holds anything else.
        let data = self.dir.join("data");
        let mut parent = path.parent();
        while let Some(dir) = parent.filter(|d| *d != data && d.starts_with(&data)) {
            if std::fs::remove_dir(dir).is_err() {
                break;
            }
            parent = dir.parent();
        }
        Ok(())
    }

    /// Writes the list, keeping only the files still there.
    pub fn save(&self) -> Result<()> {
        let mut text = String::new();
        for (rel, sha) in &self.files {
            if self.dir.join(rel).exists() {
                text.push_str(&format!("{sha}  {rel}\n"));
            }
        }
        swe_forge_fs::write_file(self.dir.join(MANIFEST), text)?;
        Ok(())
    }
}

fn sha_of(path: &Path) -> std::io::Result<String> {
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            return Ok(format!("{:x}", hasher.finalize()));
        }
        hasher.update(&buf[..n]);
    }
}

/// The `*.parquet` files under `dir/rel`, without following symlinks.
fn walk_parquet(dir: &Path, rel: &Path, found: &mut Vec<String>) -> Result<()> {
    let Ok(entries) = std::fs::read_dir(dir.join(rel)) else { return Ok(()) };
    for entry in entries {
        let entry = entry.with_context(|| format!("reading {}", dir.join(rel).display()))?;
        let kind = entry.file_type().with_context(|| format!("reading {}", entry.path().display()))?;
        let child = rel.join(entry.file_name());
        if kind.is_dir() {
            walk_parquet(dir, &child, found)?;
        } else if child.extension().is_some_and(|e| e == "parquet") {
            found.push(child.to_string_lossy().into_owned());
        }
    }
    Ok(())
}
