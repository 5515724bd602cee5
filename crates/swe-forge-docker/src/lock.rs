//! Cross-process locks, so that two swe-forge processes (or two tests) that need the same
//! image build it once: the second waits, then finds the image.

use std::fs::File;
use std::path::PathBuf;

use crate::DockerError;

/// Holds an exclusive lock until dropped.
pub struct BuildLock(#[allow(dead_code)] File);

/// Takes the lock named `key` (a tag), waiting for whoever holds it.
pub(crate) async fn lock(key: &str) -> Result<BuildLock, DockerError> {
    let name: String = key.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect();
    let path: PathBuf = std::env::temp_dir().join(format!("swe-forge-{name}.lock"));
    let what = format!("locking {}", path.display());
    tokio::task::spawn_blocking(move || {
        let f = File::options().create(true).truncate(false).write(true).open(&path)?;
        f.lock()?;
        Ok(BuildLock(f))
    })
    .await
    .map_err(|e| DockerError::Io { what: what.clone(), source: std::io::Error::other(e) })?
    .map_err(DockerError::io(what))
}

impl crate::Engine {
    /// Takes the cross-process lock of image `tag` (the one [`crate::Engine::build_once`] takes),
    /// for images made otherwise (`run_and_commit`) that several processes may need at once.
    pub async fn lock_image(&self, tag: &str) -> Result<BuildLock, DockerError> {
        lock(tag).await
    }
}
