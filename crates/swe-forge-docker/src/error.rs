//! Errors of the Docker layer, each naming the image, container or host involved.

/// A Docker operation failed.
#[derive(Debug, thiserror::Error)]
pub enum DockerError {
    /// No engine answers.
    #[error(
        "no Docker engine answers at {host}: {source}\n  start one with `bash scripts/setup-docker.sh` (installs Debian's docker.io and starts dockerd), or point DOCKER_HOST at a running engine"
    )]
    Unreachable {
        /// The address tried.
        host: String,
        /// What the client saw.
        #[source]
        source: bollard::errors::Error,
    },
    /// An engine call failed.
    #[error("docker {op} failed for {target}")]
    Api {
        /// The call.
        op: &'static str,
        /// Image, container or tag involved.
        target: String,
        /// The client error.
        #[source]
        source: bollard::errors::Error,
    },
    /// `docker build` reported an error; the tail of its output is kept.
    #[error("building image {tag} failed: {message}\n{log_tail}")]
    BuildFailed {
        /// The tag being built.
        tag: String,
        /// The engine's error message.
        message: String,
        /// Last lines of the build output.
        log_tail: String,
    },
    /// The engine itself failed during a build (it went away, or its storage did): not the
    /// Dockerfile's fault, so worth another try once the engine is back.
    #[error("the engine failed while building image {tag}: {message}")]
    EngineLost {
        /// The tag being built.
        tag: String,
        /// What the engine said, or that it stopped answering.
        message: String,
    },
    /// Bootstrapping the base rootfs failed.
    #[error("bootstrapping the base image failed: {0}")]
    Bootstrap(String),
    /// The engine has no image of that name.
    #[error("no image {image} in the engine")]
    ImageMissing {
        /// The tag, id or reference asked for.
        image: String,
    },
    /// A push or pull failed at the registry: unreachable, unknown repository or manifest, refused.
    #[error("{op} of {reference} failed: {message}")]
    Registry {
        /// `push` or `pull`.
        op: &'static str,
        /// The reference pushed or pulled.
        reference: String,
        /// What the engine or the registry said.
        message: String,
    },
    /// An image archive could not be loaded (not a `docker save` archive, truncated).
    #[error("loading image archive {} failed: {message}", path.display())]
    Archive {
        /// The archive.
        path: std::path::PathBuf,
        /// What the engine said.
        message: String,
    },
    /// A run on a swarm was lost (its node went down or was drained, the swarm shut its task
    /// down, its output did not come back whole) or the swarm refused it: not a test result.
    #[error("swarm {op}: {message}")]
    Swarm {
        /// What was being done.
        op: &'static str,
        /// What happened.
        message: String,
    },
    /// A container started ahead of its run was not there to take the run's command (it exited,
    /// the engine restarted); the run had not begun.
    #[error("container {container}, started ahead of its run, was lost: {message}")]
    WarmLost {
        /// The container.
        container: String,
        /// What happened.
        message: String,
    },
    /// Local I/O around the engine (temporary files, tar streams).
    #[error("i/o error while {what}")]
    Io {
        /// What we were doing.
        what: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
}

impl DockerError {
    pub(crate) fn api(
        op: &'static str,
        target: impl Into<String>,
    ) -> impl FnOnce(bollard::errors::Error) -> DockerError {
        let target = target.into();
        move |source| DockerError::Api { op, target, source }
    }

    pub(crate) fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> DockerError {
        let what = what.into();
        move |source| DockerError::Io { what, source }
    }
}
