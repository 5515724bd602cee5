//! The run backend: where a test run happens. One contract, `run(&RunSpec) -> RunOutput`:
//! a fresh container of `spec.image` runs `spec.script` with `spec.files` in place, under the
//! spec's limits and timeout, without the network unless asked; the merged log (head and tail
//! beyond the cap, size and sha256 of all of it), the exit code, whether the timeout or the
//! memory limit ended it, and the files of `spec.collect` come back; nothing of the run is left
//! behind. `Err` is always the machinery's fault (engine, node, registry), to be retried, never a
//! test result. Images are built by the coordinator's engine whatever the backend.

use std::sync::Arc;

use crate::{DockerError, Engine, RunOutput, RunSpec, Swarm};

/// Where test runs go.
#[derive(Clone)]
pub enum Backend {
    /// The coordinator's own engine (a container per run).
    Local(Engine),
    /// A Docker Swarm (a `replicated-job` service per run, placed on any node).
    Swarm(Arc<Swarm>),
}

impl Backend {
    /// Runs `spec`; what is left to clean up after it is cleaned up in the background
    /// ([`Backend::settle`] waits for it).
    pub async fn run(&self, spec: &RunSpec) -> Result<RunOutput, DockerError> {
        match self {
            Backend::Local(engine) => engine.run_removing_later(spec).await,
            Backend::Swarm(swarm) => swarm.run(spec).await,
        }
    }

    /// Waits for cleanups still under way in the background (the local engine's containers, a
    /// swarm's configs).
    pub async fn settle(&self) {
        match self {
            Backend::Local(engine) => engine.settle().await,
            Backend::Swarm(swarm) => swarm.settle().await,
        }
    }

    /// Says that no more run of `image` is coming: a container started ahead for it goes.
    pub fn done_with(&self, image: &str) {
        if let Backend::Local(engine) = self {
            engine.done_with(image);
        }
    }

    /// `local` or `swarm`.
    pub fn name(&self) -> &'static str {
        match self {
            Backend::Local(_) => "local",
            Backend::Swarm(_) => "swarm",
        }
    }
}
