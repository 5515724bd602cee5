//! The files of an image: its flattened filesystem, each regular file by content digest and
//! each symlink by target, for comparing two builds of one image.

use std::collections::BTreeMap;
use std::io::{Read, Write};

use bollard::models::ContainerCreateBody;
use bollard::query_parameters::{CreateContainerOptions, RemoveContainerOptions};
use futures_util::StreamExt;
use sha2::{Digest, Sha256};

use crate::{DockerError, Engine, LABEL_ROLE};

/// Paths the engine writes into every container; they say nothing about the image.
const ENGINE_PATHS: &[&str] = &[".dockerenv", "etc/hostname", "etc/hosts", "etc/resolv.conf"];

impl Engine {
    /// Path -> `sha256:<hex>` for regular files, `link:<target>` for symlinks, of the image's
    /// flattened filesystem (directories and device files left out).
    pub async fn image_files(&self, image: &str) -> Result<BTreeMap<String, String>, DockerError> {
        let body = ContainerCreateBody {
            image: Some(image.to_owned()),
            cmd: Some(vec!["true".to_owned()]),
            labels: Some(
                [(LABEL_ROLE.to_owned(), "inspect".to_owned())]
                    .into_iter()
                    .chain(crate::run_label::container_labels())
                    .collect(),
            ),
            ..Default::default()
        };
        let created = self
            .docker
            .create_container(None::<CreateContainerOptions>, body)
            .await
            .map_err(DockerError::api("create container", image))?;
        let result = self.export_files(&created.id).await;
        let opts = RemoveContainerOptions { force: true, v: true, ..Default::default() };
        let _ = self.docker.remove_container(&created.id, Some(opts)).await;
        result
    }

    async fn export_files(&self, id: &str) -> Result<BTreeMap<String, String>, DockerError> {
        let mut spool = tempfile::tempfile().map_err(DockerError::io("creating a spool file"))?;
        let mut stream = self.docker.export_container(id);
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(DockerError::api("export container", id))?;
            spool.write_all(&chunk).map_err(DockerError::io("spooling an export"))?;
        }
        std::io::Seek::rewind(&mut spool).map_err(DockerError::io("reading an export"))?;
        tokio::task::spawn_blocking(move || digest_tar(spool))
            .await
            .map_err(|e| DockerError::Io { what: "hashing an export".into(), source: std::io::Error::other(e) })?
    }
}

fn digest_tar(reader: impl Read) -> Result<BTreeMap<String, String>, DockerError> {
    let mut out = BTreeMap::new();
    let mut archive = tar::Archive::new(reader);
    for entry in archive.entries().map_err(DockerError::io("reading an export"))? {
        let mut entry = entry.map_err(DockerError::io("reading an export"))?;
        let path = entry
            .path()
            .map_err(DockerError::io("reading an export"))?
            .to_string_lossy()
            .trim_start_matches("./")
            .to_owned();
        if ENGINE_PATHS.contains(&path.as_str()) {
            continue;
        }
        match entry.header().entry_type() {
            tar::EntryType::Regular | tar::EntryType::Continuous => {
                let mut h = Sha256::new();
                std::io::copy(&mut entry, &mut HashWriter(&mut h)).map_err(DockerError::io("hashing an export"))?;
                out.insert(path, format!("sha256:{}", crate::base::hex(&h.finalize())));
            }
            tar::EntryType::Symlink | tar::EntryType::Link => {
                let target =
                    entry.link_name().ok().flatten().map(|t| t.to_string_lossy().into_owned()).unwrap_or_default();
                out.insert(path, format!("link:{target}"));
            }
            _ => {}
        }
    }
    Ok(out)
}

struct HashWriter<'a>(&'a mut Sha256);

impl Write for HashWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
