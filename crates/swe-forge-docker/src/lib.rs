//! Everything that talks to the Docker engine, through bollard: connecting (honouring
//! `DOCKER_HOST`, negotiating the API version), bootstrapping the Debian base image with
//! debootstrap (no registry is ever pulled from), building toolchain and instance images,
//! running one phase of tests in a fresh container with a timeout (on this engine, or as a job on
//! a Docker Swarm: [`Backend`]), and shipping images to other machines (registry push and pull,
//! `docker save` archives).
//!
//! This crate knows nothing about records, categories or log formats: it takes Dockerfiles,
//! build contexts and scripts, and returns image ids and raw logs.

mod backend;
mod base;
mod build;
mod container;
mod end_frame;
mod engine;
mod error;
mod files;
mod inspect;
mod lock;
mod registry;
mod run_label;
mod swarm;
mod warm;

pub use backend::Backend;
pub use base::BaseSpec;
pub use build::BuildContext;
pub use container::{CaBundle, Next, RunOutput, RunSpec, RunStages};
pub use engine::{Engine, ListedImage};
pub use error::DockerError;
pub use inspect::{Added, ImageStack, LayerSize};
pub use lock::BuildLock;
pub use registry::{PushReport, split_reference};
pub use run_label::{
    LABEL_BUILT_BY, LABEL_JOB, LABEL_RUN, LABEL_RUN_HOST, LeftoverContainer, host_name, process_gone,
    run_created_containers, run_id, set_job,
};
pub use swarm::{Swarm, SwarmSpec, remove_run_services};

/// Label every image and container made by swe-forge carries, so they can be found and cleaned.
pub const LABEL_ROLE: &str = "dev.swe-forge.role";

/// Label of repository-environment and instance images: the `org/repo` they were built for.
pub const LABEL_REPOSITORY: &str = "dev.swe-forge.repository";
