//! Building an image from a Dockerfile and a context assembled in memory.

use std::collections::HashMap;

use bollard::query_parameters::BuildImageOptions;
use futures_util::StreamExt;

use crate::{DockerError, Engine};

/// A build context: a tar stream to which files (and git trees) are added, then the Dockerfile.
pub struct BuildContext {
    tar: tar::Builder<Vec<u8>>,
}

impl Default for BuildContext {
    fn default() -> Self {
        BuildContext::new()
    }
}

impl BuildContext {
    /// An empty context.
    pub fn new() -> BuildContext {
        let mut tar = tar::Builder::new(Vec::new());
        tar.mode(tar::HeaderMode::Deterministic);
        BuildContext { tar }
    }

    /// The tar builder, for callers that stream whole trees into the context.
    pub fn tar(&mut self) -> &mut tar::Builder<Vec<u8>> {
        &mut self.tar
    }

    /// Adds one file with fixed times and owners.
    pub fn add_file(&mut self, path: &str, content: &[u8], mode: u32) -> Result<(), DockerError> {
        let mut h = tar::Header::new_gnu();
        h.set_size(content.len() as u64);
        h.set_mode(mode);
        h.set_mtime(0);
        h.set_entry_type(tar::EntryType::Regular);
        self.tar
            .append_data(&mut h, path, content)
            .map_err(DockerError::io(format!("adding {path} to a build context")))
    }

    /// Adds the Dockerfile and returns the finished tar stream.
    pub fn finish(mut self, dockerfile: &str) -> Result<Vec<u8>, DockerError> {
        self.add_file("Dockerfile", dockerfile.as_bytes(), 0o644)?;
        self.tar.into_inner().map_err(DockerError::io("finishing a build context"))
    }
}

impl Engine {
    /// Returns the id of `tag`, building it from `context` first when the engine does not have
    /// it. Concurrent callers (threads or processes) build it once.
    pub async fn build_once(
        &self,
        tag: &str,
        context: impl FnOnce() -> Result<Vec<u8>, DockerError>,
        labels: &HashMap<String, String>,
        on_line: &mut (dyn FnMut(&str) + Send),
    ) -> Result<String, DockerError> {
        if let Some(id) = self.image_id(tag).await? {
            return Ok(id);
        }
        let _lock = crate::lock::lock(tag).await?;
        if let Some(id) = self.image_id(tag).await? {
            return Ok(id);
        }
        self.build(tag, context()?, labels, on_line).await
    }

    /// Builds `context` (which holds its Dockerfile) as `tag` with `labels`; returns the image id.
    /// `on_line` receives the build output line by line.
    pub async fn build(
        &self,
        tag: &str,
        context: Vec<u8>,
        labels: &HashMap<String, String>,
        on_line: &mut (dyn FnMut(&str) + Send),
    ) -> Result<String, DockerError> {
        self.build_with_cache(tag, context, labels, on_line, true).await
    }

    /// Like [`Engine::build`], without the engine's build cache: every step runs again (used
    /// to check that an image is reproducible).
    pub async fn build_uncached(
        &self,
        tag: &str,
        context: Vec<u8>,
        labels: &HashMap<String, String>,
        on_line: &mut (dyn FnMut(&str) + Send),
    ) -> Result<String, DockerError> {
        self.build_with_cache(tag, context, labels, on_line, false).await
    }

    async fn build_with_cache(
        &self,
        tag: &str,
        context: Vec<u8>,
        labels: &HashMap<String, String>,
        on_line: &mut (dyn FnMut(&str) + Send),
        cache: bool,
    ) -> Result<String, DockerError> {
        let opts = BuildImageOptions {
            t: Some(tag.to_owned()),
            rm: true,
            forcerm: true,
            nocache: !cache,
            labels: Some(labels.clone()),
            ..Default::default()
        };
        let mut log = String::new();
        let mut stream = self.docker.build_image(opts, None, Some(bollard::body_full(context.into())));
        while let Some(item) = stream.next().await {
            let info = match item {
                Ok(i) => i,
                Err(bollard::errors::Error::DockerStreamError { error }) => {
                    return Err(self.build_error(tag, error, &log).await);
                }
                Err(e) => return Err(DockerError::api("build", tag)(e)),
            };
            if let Some(s) = info.stream {
                for line in s.lines() {
                    on_line(line);
                }
                log.push_str(&s);
            }
            if let Some(detail) = info.error_detail {
                return Err(self.build_error(tag, detail.message.unwrap_or_default(), &log).await);
            }
        }
        self.image_id(tag).await?.ok_or_else(|| DockerError::BuildFailed {
            tag: tag.to_owned(),
            message: "the engine reported no error but has no such image".to_owned(),
            log_tail: tail(&log, 30),
        })
    }

    /// A build's error: [`DockerError::EngineLost`] when the engine said something only the engine
    /// fails with, or no longer answers; [`DockerError::BuildFailed`] (the Dockerfile's) otherwise.
    async fn build_error(&self, tag: &str, message: String, log: &str) -> DockerError {
        if engine_failure(&message) || self.docker.ping().await.is_err() {
            return DockerError::EngineLost { tag: tag.to_owned(), message };
        }
        DockerError::BuildFailed { tag: tag.to_owned(), message, log_tail: tail(log, 30) }
    }
}

/// Messages of a build that failed because the engine did (it was stopped or restarted mid-build,
/// its storage is full), not because of a Dockerfile step.
const ENGINE_FAILURES: &[&str] = &[
    "transport is closing",
    "connection reset by peer",
    "broken pipe",
    "no space left on device",
    "shutting down",
    // The engine lost its bridge network (seen after other engines in the host's network
    // namespace were torn down): every RUN step fails to start.
    "could not find bridge",
    "failed to create endpoint",
];

fn engine_failure(message: &str) -> bool {
    ENGINE_FAILURES.iter().any(|m| message.contains(m))
}

pub(crate) fn tail(text: &str, lines: usize) -> String {
    let v: Vec<&str> = text.lines().collect();
    v[v.len().saturating_sub(lines)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::engine_failure;

    #[test]
    fn engine_failures_are_told_from_failing_steps() {
        assert!(engine_failure("transport is closing: unavailable"));
        assert!(engine_failure("failed to register layer: write /var/lib/docker/x: no space left on device"));
        assert!(engine_failure(
            "failed to create endpoint x on network bridge: adding interface veth1 to bridge docker0 failed: could not find bridge docker0: route ip+net: no such network interface"
        ));
        assert!(!engine_failure("The command '/bin/sh -c apt-get install -y nope' returned a non-zero code: 100"));
        assert!(!engine_failure("COPY failed: file not found in build context"));
    }
}
