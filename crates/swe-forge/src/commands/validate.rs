//! `swe-forge validate`, and the validation loop shared with `run`: resume from the progress
//! file, validate the rest, append each result as soon as it is known.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use swe_forge_core::{Instance, ValidationStatus};
use swe_forge_docker::{Backend, CaBundle, Engine, Swarm, SwarmSpec};
use swe_forge_store::{RunRow, Store};
use swe_forge_validate::{Done, Settings, Stopped, Validator, plan_env_commits};

use crate::cli::{EngineArgs, ValidateArgs};
use crate::reporter::Bars;
use swe_forge_config::Pipeline;

pub async fn validate_command(args: ValidateArgs) -> Result<()> {
    let records = read_records(&args.records)?;
    let work_dir = args.work_dir.clone().unwrap_or_else(|| args.out.with_extension("work"));
    let mut settings = Settings::new(args.repos.clone(), work_dir);
    if let Some(p) = &args.pipeline {
        apply_pipeline(&mut settings, &Pipeline::load(p)?);
    }
    apply_engine_args(&mut settings, &args.engine);
    settings.env_commits = plan_env_commits(&records, &settings.repos_root, &settings.overrides);
    let results = validate_records(records, settings, &args.out, args.fresh).await?;
    print_summary(&results);
    Ok(())
}

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

/// Records from JSONL or from an instances Parquet table swe-forge wrote (told apart by the
/// file's first bytes).
/// Records from a JSONL file or an instances Parquet table; `-` reads either from stdin.
pub fn read_records(path: &Path) -> Result<Vec<Instance>> {
    if path.as_os_str() == "-" {
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin().lock(), &mut bytes).context("reading records from stdin")?;
        if bytes.starts_with(b"PAR1") {
            let tmp = tempfile::NamedTempFile::new().context("buffering Parquet from stdin")?;
            std::fs::write(tmp.path(), &bytes).context("buffering Parquet from stdin")?;
            return swe_forge_export::read_records(tmp.path()).context("reading records from stdin");
        }
        return swe_forge_core::read_jsonl(bytes.as_slice()).context("reading records from stdin");
    }
    swe_forge_export::read_records(path).with_context(|| format!("reading records {}", path.display()))
}

/// Refuses `-` as a folder output: a folder of files cannot go to stdout.
pub fn folder_out(flag: &str, path: &Path) -> Result<()> {
    if path.as_os_str() == "-" {
        anyhow::bail!(
            "{flag} - : this command writes a folder of files, which cannot go to stdout; give a folder path"
        );
    }
    Ok(())
}

/// Writes `records` as JSONL to `path` (atomically), or to stdout when `path` is `-`.
pub fn write_records(path: &Path, records: &[Instance]) -> Result<()> {
    if path.as_os_str() == "-" {
        let mut out = std::io::stdout().lock();
        swe_forge_core::write_jsonl(&mut out, records).context("writing records to stdout")?;
        return Ok(());
    }
    swe_forge_export::write_jsonl(path, records).with_context(|| format!("writing {}", path.display()))
}

pub fn apply_pipeline(settings: &mut Settings, p: &Pipeline) {
    let v = &p.validate;
    let default = swe_forge_docker::BaseSpec::default();
    settings.base = swe_forge_docker::BaseSpec {
        suite: p.base.suite.clone().unwrap_or(default.suite),
        mirror: p.base.mirror.clone().unwrap_or(default.mirror),
    };
    settings.overrides = p.overrides.clone();
    if let Some(j) = v.jobs {
        settings.jobs = j;
    }
    if let Some(t) = v.phase_timeout_secs {
        settings.phase_timeout = Duration::from_secs(t);
    }
    if let Some(t) = v.setup_timeout_secs {
        settings.setup_timeout = Duration::from_secs(t);
    }
    if let Some(m) = v.memory_mb {
        settings.memory_bytes = Some((m as i64) << 20);
    }
    if let Some(c) = &v.ca_bundle {
        settings.ca_bundle = resolve_ca_bundle(&p.path(c));
    }
    if let Some(w) = &v.work_dir {
        settings.work_dir = p.path(w);
    }
    if let Some(r) = v.reruns {
        settings.reruns = r;
    }
    if let Some(l) = v.pids_limit {
        settings.pids_limit = Some(l);
    }
    if let Some(c) = v.cpus {
        settings.cpus = Some(c);
    }
    if v.backend == Some(swe_forge_config::BackendKind::Swarm) || v.swarm_manager.is_some() || v.registry.is_some() {
        let swarm = settings.swarm.get_or_insert_with(default_swarm);
        if let Some(m) = &v.swarm_manager {
            swarm.manager.clone_from(m);
        }
        if let Some(r) = &v.registry {
            swarm.registry.clone_from(r);
        }
    }
    if v.backend == Some(swe_forge_config::BackendKind::Local) {
        settings.swarm = None;
    }
    if let Some(r) = v.infra_retries {
        settings.infra_retries = r;
    }
    if let Some(b) = v.infra_breaker {
        settings.infra_breaker = b;
    }
}

/// A swarm whose manager is the engine swe-forge talks to; the registry still to be named.
fn default_swarm() -> SwarmSpec {
    let manager = std::env::var("DOCKER_HOST").unwrap_or_else(|_| "unix:///var/run/docker.sock".to_owned());
    SwarmSpec { manager, registry: String::new() }
}

/// The backend test runs go to: the local engine, or the swarm the settings name (connected,
/// checked to be a manager; its registry must be named).
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

pub fn apply_engine_args(settings: &mut Settings, a: &EngineArgs) {
    match a.backend.as_deref() {
        Some("swarm") => {
            settings.swarm.get_or_insert_with(default_swarm);
        }
        Some(_) => settings.swarm = None,
        None => {}
    }
    if let Some(swarm) = &mut settings.swarm {
        if let Some(m) = &a.swarm_manager {
            swarm.manager.clone_from(m);
        }
        if let Some(r) = &a.registry {
            swarm.registry.clone_from(r);
        }
    }
    if let Some(j) = a.jobs {
        settings.jobs = j;
    }
    if let Some(t) = a.timeout {
        settings.phase_timeout = Duration::from_secs(t);
    }
    if let Some(m) = a.memory_mb {
        settings.memory_bytes = Some((m as i64) << 20);
    }
    if let Some(c) = &a.ca_bundle {
        settings.ca_bundle = resolve_ca_bundle(c);
    }
    if let Some(r) = a.reruns {
        settings.reruns = r;
    }
    if let Some(p) = a.pids_limit {
        settings.pids_limit = Some(p);
    }
    if let Some(c) = a.cpus {
        settings.cpus = Some(c);
    }
    // Setup steps trust what this machine trusts unless told otherwise (a TLS-intercepting
    // proxy's CA is in the system bundle); the bundle never enters an image.
    if settings.ca_bundle.is_none() {
        settings.ca_bundle = resolve_ca_bundle(Path::new("system"));
    }
}

/// `system` (the last component of a pipeline-relative path too) means this machine's default
/// bundle: `$SSL_CERT_FILE`, else Debian's `/etc/ssl/certs/ca-certificates.crt`; any other value
/// is a PEM file.
fn resolve_ca_bundle(value: &Path) -> Option<CaBundle> {
    if value.file_name().is_some_and(|n| n == "system") && !value.exists() {
        let candidates = [
            std::env::var_os("SSL_CERT_FILE").map(std::path::PathBuf::from),
            Some("/etc/ssl/certs/ca-certificates.crt".into()),
        ];
        return candidates.into_iter().flatten().find(|p| p.is_file()).map(CaBundle);
    }
    Some(CaBundle(value.to_owned()))
}

/// Validates `records` and writes every result to `out` (JSONL). Progress lives in the state
/// store `<work_dir>/state.sqlite`: a run that was killed resumes where it stopped (instances
/// already validated are not run again, unless `fresh` or their inputs changed). Returns all
/// results in input order.
pub async fn validate_records(
    records: Vec<Instance>,
    settings: Settings,
    out: &Path,
    fresh: bool,
) -> Result<Vec<Instance>> {
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let store_path = settings.work_dir.join("state.sqlite");
    let mut store = Store::open(&store_path)?;
    if fresh {
        store.reset()?;
    }
    let todo_ids = store.enqueue(&records)?;
    let todo: Vec<Instance> = records.iter().filter(|r| todo_ids.contains(&r.instance_id)).cloned().collect();
    if todo.len() < records.len() {
        eprintln!(
            "resuming: {} of {} instances already validated in {}",
            records.len() - todo.len(),
            records.len(),
            store_path.display()
        );
    }
    let mut stopped = None;
    if todo.is_empty() {
        tidy_engine(&store_path).await;
    } else {
        let engine = connect_engine(&store_path).await?;
        let bars = Arc::new(Bars::new(todo.len()));
        let backend = backend_for(&settings, &engine).await?;
        let validator = Validator::new(engine, settings, bars.clone())?.with_backend(backend);
        // Each result is in the store before it counts as done; a store error stops the run.
        let mut keep = |done: Done<Instance>| {
            let inst = &done.result;
            let runs: Vec<RunRow> = inst
                .swe_forge
                .iter()
                .flat_map(|m| m.runs.iter())
                .map(|run| RunRow { instance_id: inst.instance_id.clone(), attempt: run.attempt, run: run.clone() })
                .collect();
            store.finish(inst, &runs)
        };
        let kept = validator.validate_each(todo, &mut keep).await;
        validator.settle().await;
        bars.finish();
        match kept {
            Ok(()) => {}
            Err(Stopped::Sink(e)) => return Err(e).context("recording progress in the state store"),
            // The circuit breaker's stop: what was finished is written, then the error is reported.
            Err(Stopped::Machine(e)) => stopped = Some(e),
        }
    }
    let mut done: HashMap<String, Instance> =
        store.validated()?.into_iter().map(|r| (r.instance_id.clone(), r)).collect();
    let results: Vec<Instance> = records.iter().filter_map(|r| done.remove(&r.instance_id)).collect();
    swe_forge_export::write_jsonl(out, &results)?;
    if let Some(e) = stopped {
        eprintln!("{} instance(s) finished before the stop, written to {}", results.len(), out.display());
        return Err(e.into());
    }
    Ok(results)
}

pub fn print_summary(results: &[Instance]) {
    let accepted = results.iter().filter(|r| r.status() == ValidationStatus::Accepted).count();
    println!("{:<36} {:<9} {:>5} {:>5}  reasons", "instance", "status", "f2p", "p2p");
    for r in results {
        let reasons: Vec<String> =
            r.swe_forge.iter().flat_map(|m| m.rejections.iter().map(|x| x.reason.as_str().to_owned())).collect();
        let status = r.status().as_str();
        println!(
            "{:<36} {:<9} {:>5} {:>5}  {}",
            r.instance_id,
            status,
            r.fixed_tests.len(),
            r.p2p_tests.len(),
            reasons.join(",")
        );
    }
    println!("{accepted} of {} instances accepted", results.len());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_flags() -> EngineArgs {
        EngineArgs {
            jobs: None,
            timeout: None,
            memory_mb: None,
            ca_bundle: None,
            reruns: None,
            pids_limit: None,
            cpus: None,
            backend: None,
            swarm_manager: None,
            registry: None,
        }
    }

    #[test]
    fn the_backend_comes_from_the_pipeline_then_the_flags() {
        let toml = "name='x'\n[source]\nrecords='a'\nrepos='b'\n[output]\nvalidated='c'\n[validate]\nbackend='swarm'\nswarm_manager='tcp://m:2375'\nregistry='r:5000'\n";
        let mut s = Settings::new("repos".into(), "work".into());
        apply_pipeline(&mut s, &Pipeline::from_toml(toml, "p").unwrap());
        apply_engine_args(&mut s, &no_flags());
        assert_eq!(s.swarm, Some(SwarmSpec { manager: "tcp://m:2375".into(), registry: "r:5000".into() }));
        apply_engine_args(&mut s, &EngineArgs { registry: Some("other:5000".into()), ..no_flags() });
        assert_eq!(s.swarm.as_ref().unwrap().registry, "other:5000");
        apply_engine_args(&mut s, &EngineArgs { backend: Some("local".into()), ..no_flags() });
        assert_eq!(s.swarm, None);
        let mut plain = Settings::new("repos".into(), "work".into());
        apply_engine_args(&mut plain, &no_flags());
        assert_eq!(plain.swarm, None, "local unless asked");
    }
}
