//! Shipping images to other machines: tagging an image under another name, pushing to and
//! pulling from a registry, saving images to one tar archive and loading it back.
//!
//! The engine does the registry protocol: a layer the registry already holds (under any
//! repository of it) is not uploaded again, so images that share a toolchain or an environment
//! cost its layers once. Nothing here knows about records; the caller names the references.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::Path;

use bollard::query_parameters::{CreateImageOptions, ImportImageOptions, PushImageOptions, TagImageOptions};
use futures_util::StreamExt;

use crate::{DockerError, Engine};

/// What one push did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PushReport {
    /// The reference pushed, `HOST:PORT/path:tag`.
    pub reference: String,
    /// Digest of the manifest the registry stored (`sha256:...`): the reference
    /// `HOST:PORT/path@<digest>` names exactly this image from now on.
    pub digest: String,
    /// Layers uploaded by this push.
    pub layers_pushed: usize,
    /// Layers the registry already had (pushed before, or mounted from another of its
    /// repositories): not uploaded again.
    pub layers_existing: usize,
    /// Bytes of the uploaded layers, as the engine counts them (uncompressed tar streams).
    pub bytes_pushed: u64,
}

/// `name[:tag]` or `name@digest` split into the name and what follows (`latest` when nothing
/// does). A colon before the last slash belongs to a registry's port, not to a tag.
pub fn split_reference(reference: &str) -> (&str, &str) {
    if let Some((name, digest)) = reference.split_once('@') {
        return (name, digest);
    }
    let slash = reference.rfind('/').map_or(0, |i| i + 1);
    match reference[slash..].rfind(':') {
        Some(i) => (&reference[..slash + i], &reference[slash + i + 1..]),
        None => (reference, "latest"),
    }
}

impl Engine {
    /// Gives image `image` (a tag or id) the further name `target` (`name:tag`).
    pub async fn tag(&self, image: &str, target: &str) -> Result<(), DockerError> {
        let (repo, tag) = split_reference(target);
        let opts = TagImageOptions { repo: Some(repo.to_owned()), tag: Some(tag.to_owned()) };
        self.docker.tag_image(image, Some(opts)).await.map_err(|e| missing_or(e, image, "tag image"))
    }

    /// Removes the name `reference` only: the image stays when another name refers to it. A
    /// missing name is not an error.
    pub async fn untag(&self, reference: &str) -> Result<(), DockerError> {
        let opts = bollard::query_parameters::RemoveImageOptions { force: false, noprune: true, ..Default::default() };
        match self.docker.remove_image(reference, Some(opts), None).await {
            Ok(_) | Err(bollard::errors::Error::DockerResponseServerError { status_code: 404, .. }) => Ok(()),
            Err(e) => Err(DockerError::api("untag image", reference)(e)),
        }
    }

    /// Pushes the local image named `reference` (`HOST:PORT/path:tag`) to the registry the name
    /// starts with, and returns the manifest digest and what was uploaded. Plain HTTP works for
    /// registries on 127.0.0.0/8, which the engine trusts by default; others must be listed
    /// under `insecure-registries` or speak TLS.
    pub async fn push(&self, reference: &str) -> Result<PushReport, DockerError> {
        let (name, tag) = split_reference(reference);
        let opts = PushImageOptions { tag: Some(tag.to_owned()), platform: None };
        let mut stream = self.docker.push_image(name, Some(opts), None);
        let mut report = PushReport { reference: reference.to_owned(), ..Default::default() };
        // The engine's progress messages do not say which layer they are about (bollard keeps
        // no id): a layer is told apart by its size, the most bytes sent of it kept.
        let mut sent: HashMap<i64, u64> = HashMap::new();
        while let Some(item) = stream.next().await {
            let info = item.map_err(|e| registry_or_api(e, "push", reference))?;
            let Some(status) = info.status.as_deref() else { continue };
            match status {
                "Pushing" => {
                    let p = info.progress_detail.unwrap_or_default();
                    let e = sent.entry(p.total.unwrap_or(-1)).or_default();
                    *e = (*e).max(p.current.unwrap_or(0).max(0) as u64);
                }
                "Pushed" => report.layers_pushed += 1,
                "Layer already exists" => report.layers_existing += 1,
                s if s.starts_with("Mounted from") => report.layers_existing += 1,
                s => {
                    if let Some((_, rest)) = s.split_once(" digest: ") {
                        report.digest = rest.split_whitespace().next().unwrap_or_default().to_owned();
                    }
                }
            }
        }
        report.bytes_pushed = sent.values().sum();
        if report.digest.is_empty() {
            return Err(DockerError::Registry {
                op: "push",
                reference: reference.to_owned(),
                message: "the engine reported no manifest digest".to_owned(),
            });
        }
        tracing::debug!(?report, "pushed");
        Ok(report)
    }

    /// Pulls `reference` (`HOST:PORT/path:tag` or `HOST:PORT/path@sha256:...`) and returns the
    /// pulled image's id. Pulling by digest leaves no tag: give it one with [`Engine::tag`].
    pub async fn pull(&self, reference: &str) -> Result<String, DockerError> {
        let (name, rest) = split_reference(reference);
        let opts = if reference.contains('@') {
            CreateImageOptions { from_image: Some(reference.to_owned()), ..Default::default() }
        } else {
            CreateImageOptions { from_image: Some(name.to_owned()), tag: Some(rest.to_owned()), ..Default::default() }
        };
        let mut stream = self.docker.create_image(Some(opts), None, None);
        while let Some(item) = stream.next().await {
            item.map_err(|e| registry_or_api(e, "pull", reference))?;
        }
        self.image_id(reference).await?.ok_or_else(|| DockerError::Registry {
            op: "pull",
            reference: reference.to_owned(),
            message: "the engine does not have the image after pulling it".to_owned(),
        })
    }

    /// Pulls `reference` and names the image `name` (a local name, `swe-forge/...:tag`) instead:
    /// the registry's name or digest reference is removed again. With `expected_id`, an image of
    /// another id is refused (and left without a name). Returns the image id.
    pub async fn pull_as(&self, reference: &str, name: &str, expected_id: Option<&str>) -> Result<String, DockerError> {
        let id = self.pull(reference).await?;
        let result = match expected_id {
            Some(want) if want != id => Err(DockerError::Registry {
                op: "pull",
                reference: reference.to_owned(),
                message: format!("the image is {id}, not the expected {want}"),
            }),
            _ => self.tag(&id, name).await,
        };
        if reference != name {
            self.untag(reference).await?;
        }
        result.map(|()| id)
    }

    /// Writes `images` (tags or ids) with every layer they need into one tar archive at `out`
    /// (`docker save`; layers shared by several images are written once). The archive appears
    /// only when complete. Returns its size in bytes.
    pub async fn save(&self, images: &[&str], out: &Path) -> Result<u64, DockerError> {
        for image in images {
            if self.image_id(image).await?.is_none() {
                return Err(DockerError::ImageMissing { image: (*image).to_owned() });
            }
        }
        let dir = out.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let io = |what: &str| DockerError::io(format!("{what} {}", out.display()));
        let mut file = tempfile::NamedTempFile::new_in(dir).map_err(io("creating"))?;
        let mut stream = self.docker.export_images(images);
        let mut bytes = 0u64;
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(DockerError::api("save images", images.join(" ")))?;
            bytes += chunk.len() as u64;
            file.write_all(&chunk).map_err(io("writing"))?;
        }
        file.as_file().sync_all().map_err(io("writing"))?;
        file.persist(out).map_err(|e| io("writing")(e.error))?;
        Ok(bytes)
    }

    /// Loads an archive written by [`Engine::save`] (or `docker save`) and returns the names it
    /// gave the engine (`Loaded image: name:tag`, or the id of an image saved without a name).
    pub async fn load(&self, archive: &Path) -> Result<Vec<String>, DockerError> {
        let failed = |message: String| DockerError::Archive { path: archive.to_path_buf(), message };
        let file = std::fs::File::open(archive).map_err(DockerError::io(format!("opening {}", archive.display())))?;
        // Read in chunks on the blocking pool: archives run to gigabytes.
        let chunks = futures_util::stream::unfold(Some(file), |file| async move {
            let mut file = file?;
            let read = tokio::task::spawn_blocking(move || {
                let mut buf = vec![0u8; 1 << 20];
                let n = file.read(&mut buf)?;
                buf.truncate(n);
                Ok::<_, std::io::Error>((buf, file))
            })
            .await
            .unwrap_or_else(|e| Err(std::io::Error::other(e)));
            match read {
                Ok((buf, _)) if buf.is_empty() => None,
                Ok((buf, file)) => Some((Ok(buf.into()), Some(file))),
                Err(e) => Some((Err(e), None)),
            }
        });
        let mut stream = self.docker.import_image_stream(ImportImageOptions::default(), chunks, None);
        let mut loaded = Vec::new();
        while let Some(item) = stream.next().await {
            let info = item.map_err(|e| match e {
                bollard::errors::Error::DockerStreamError { error } => failed(error),
                bollard::errors::Error::DockerResponseServerError { message, .. } => failed(message),
                e => DockerError::api("load images", archive.display().to_string())(e),
            })?;
            for line in info.stream.iter().flat_map(|s| s.lines()) {
                if let Some(name) =
                    line.strip_prefix("Loaded image: ").or_else(|| line.strip_prefix("Loaded image ID: "))
                {
                    loaded.push(name.trim().to_owned());
                }
            }
        }
        if loaded.is_empty() {
            return Err(failed("the engine loaded no image from it".to_owned()));
        }
        Ok(loaded)
    }
}

/// A registry's refusal (sent mid-stream, or as the response) as `Registry`, anything else as
/// an engine error.
fn registry_or_api(e: bollard::errors::Error, op: &'static str, reference: &str) -> DockerError {
    match e {
        bollard::errors::Error::DockerStreamError { error } => {
            DockerError::Registry { op, reference: reference.to_owned(), message: error }
        }
        bollard::errors::Error::DockerResponseServerError { status_code: 404, message } if op == "push" => {
            DockerError::ImageMissing { image: format!("{reference} ({message})") }
        }
        bollard::errors::Error::DockerResponseServerError { message, .. } => {
            DockerError::Registry { op, reference: reference.to_owned(), message }
        }
        e => DockerError::api(op, reference)(e),
    }
}

fn missing_or(e: bollard::errors::Error, image: &str, op: &'static str) -> DockerError {
    match e {
        bollard::errors::Error::DockerResponseServerError { status_code: 404, .. } => {
            DockerError::ImageMissing { image: image.to_owned() }
        }
        e => DockerError::api(op, image)(e),
    }
}

#[cfg(test)]
mod tests {
    use super::split_reference;

    #[test]
    fn references_split_at_the_tag_or_digest_not_at_a_port() {
        assert_eq!(split_reference("swe-forge/a__b:pr-1-abc"), ("swe-forge/a__b", "pr-1-abc"));
        assert_eq!(split_reference("127.0.0.1:5000/swe-forge/a__b:env-1"), ("127.0.0.1:5000/swe-forge/a__b", "env-1"));
        assert_eq!(split_reference("127.0.0.1:5000/swe-forge/a__b"), ("127.0.0.1:5000/swe-forge/a__b", "latest"));
        assert_eq!(split_reference("h:1/x@sha256:ab"), ("h:1/x", "sha256:ab"));
        assert_eq!(split_reference("debian"), ("debian", "latest"));
    }
}
