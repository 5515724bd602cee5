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
    /// Runs `spec` and cleans up after it.
    pub async fn run(&self, spec: &RunSpec) -> Result<RunOutput, DockerError> {
        match self {
            Backend::Local(engine) => engine.run(spec).await,
            Backend::Swarm(swarm) => swarm.run(spec).await,
        }
    }

    /// Waits for cleanups still under way in the background (a swarm's configs).
    pub async fn settle(&self) {
        if let Backend::Swarm(swarm) = self {
            swarm.settle().await;
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
