//! The Docker engine as commands use it: connected for one piece of work, whose killed runs it
//! cleans up first.

use std::path::Path;

use std::sync::Arc;

use anyhow::{Context, Result};
use swe_forge_docker::{Backend, Engine, Swarm};
use swe_forge_validate::Settings;

/// Connects to the engine for the work whose state store is `store`, and removes what killed
/// runs of the same work left (containers of runs whose process is gone: SIGKILL, a reboot),
/// so that a run started again leaves nothing of the killed one behind. Every container this
/// process makes carries the work's job label; other work's containers are left alone.
pub async fn connect_engine(store: &Path) -> Result<Engine> {
    let job = job_of(store);
    swe_forge_docker::set_job(&job);
    let engine = Engine::connect().await?;
    match engine.remove_orphan_containers_of_job(&job).await {
        Ok(gone) if !gone.is_empty() => eprintln!("removed {} container(s) left by killed runs", gone.len()),
        Ok(_) => {}
        Err(e) => eprintln!("warning: could not look for containers left by killed runs: {e}"),
    }
    Ok(engine)
}

/// [`connect_engine`]'s cleanup when there is nothing to run: done when an engine answers,
/// skipped without a word when none does (nothing needs it).
pub async fn tidy_engine(store: &Path) {
    let job = job_of(store);
    if let Ok(engine) = Engine::connect().await
        && let Ok(gone) = engine.remove_orphan_containers_of_job(&job).await
        && !gone.is_empty()
    {
        eprintln!("removed {} container(s) left by killed runs", gone.len());
    }
}

/// The job label of the work whose state store is `store`: a digest of its absolute path.
fn job_of(store: &Path) -> String {
    use sha2::Digest;
    let path = std::path::absolute(store).unwrap_or_else(|_| store.to_owned());
    let digest = sha2::Sha256::digest(path.as_os_str().as_encoded_bytes());
    digest.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// The backend test runs go to: the local engine, or the swarm the settings name (connected,
/// checked to be a manager; its registry must be named).
/// The validator for the work whose state store is `store`: on the engine ([`connect_engine`])
/// and the run backend the settings name, with progress bars for `todo` instances.
pub async fn validator_for(
    store: &Path,
    settings: Settings,
    todo: usize,
) -> Result<(swe_forge_validate::Validator, Arc<crate::reporter::Bars>)> {
    let engine = connect_engine(store).await?;
    let bars = Arc::new(crate::reporter::Bars::new(todo));
    let backend = backend_for(&settings, &engine).await?;
    let validator = swe_forge_validate::Validator::new(engine, settings, bars.clone())?.with_backend(backend);
    Ok((validator, bars))
}

pub async fn backend_for(settings: &Settings, engine: &Engine) -> Result<Backend> {
    let Some(spec) = &settings.swarm else { return Ok(Backend::Local(engine.clone())) };
    if spec.registry.is_empty() {
        anyhow::bail!(
            "the swarm backend needs the registry its nodes pull from: --registry HOST:PORT (or `registry` in the pipeline's [validate])"
        );
    }
    let swarm = Swarm::connect(spec, engine.clone())
        .await
        .with_context(|| format!("connecting to the swarm manager at {}", spec.manager))?;
    Ok(Backend::Swarm(Arc::new(swarm)))
}
