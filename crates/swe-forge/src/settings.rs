//! Validation settings from a pipeline file and the command line, and the candidates a
//! pipeline keeps.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use swe_forge_config::Pipeline;
use swe_forge_core::Instance;
use swe_forge_docker::{CaBundle, SwarmSpec};
use swe_forge_recipes::plan_env_commits;
use swe_forge_validate::Settings;

use crate::cli::{EngineArgs, RunnerArgs};
use crate::records::read_records;

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
    if let Some(r) = v.infra_retries {
        settings.infra_retries = r;
    }
    if let Some(h) = &v.reachable_hosts {
        settings.reachable_hosts = h.clone();
    }
    if let Some(b) = v.infra_breaker {
        settings.infra_breaker = b;
    }
    if let Some(n) = v.toolchain_attempts {
        settings.toolchain_attempts = n;
    }
    if let Some(n) = v.evidence_runs {
        settings.evidence_runs = n;
    }
    if let Some(n) = v.hunk_runs {
        settings.hunk_runs = n;
    }
    if let Some(n) = v.layout_variants {
        settings.layout_variants = n;
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
}

/// A swarm whose manager is the engine swe-forge talks to; the registry still to be named.
fn default_swarm() -> SwarmSpec {
    let manager = std::env::var("DOCKER_HOST").unwrap_or_else(|_| "unix:///var/run/docker.sock".to_owned());
    SwarmSpec { manager, registry: String::new() }
}

pub fn apply_engine_args(settings: &mut Settings, a: &EngineArgs) {
    apply_runner_args(settings, &a.runner);
    if let Some(j) = a.jobs {
        settings.jobs = j;
    }
    let v = &a.validation;
    if let Some(n) = v.toolchain_attempts {
        settings.toolchain_attempts = n;
    }
    if let Some(n) = v.evidence_runs {
        settings.evidence_runs = n;
    }
    if let Some(n) = v.hunk_runs {
        settings.hunk_runs = n;
    }
    if let Some(n) = v.layout_variants {
        settings.layout_variants = n;
    }
}

/// The flags of where and how containers run, over the pipeline's settings.
pub fn apply_runner_args(settings: &mut Settings, a: &RunnerArgs) {
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
    if let Some(r) = a.reruns {
        settings.reruns = r;
    }
    if let Some(t) = a.timeout {
        settings.phase_timeout = Duration::from_secs(t);
    }
    if let Some(crate::cli::MemoryMb(m)) = a.memory_mb {
        settings.memory_bytes = m.map(|m| (m as i64) << 20);
    }
    if let Some(c) = &a.ca_bundle {
        settings.ca_bundle = resolve_ca_bundle(c);
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

/// The candidates a pipeline keeps and the validation settings it asks for, with its
/// repositories created first when the pipeline names a script for that.
pub fn prepare(p: &Pipeline, engine: &EngineArgs) -> Result<(Vec<Instance>, Settings)> {
    let repos = p.path(&p.source.repos);
    if !repos.exists() {
        let Some(script) = &p.source.make_repos else {
            bail!("repositories folder {} does not exist", repos.display());
        };
        let script = p.path(script);
        eprintln!("creating repositories with {}", script.display());
        let status = Command::new("bash")
            .arg(&script)
            .arg(&repos)
            .stdout(std::process::Stdio::null())
            .status()
            .with_context(|| format!("running {}", script.display()))?;
        if !status.success() {
            bail!("{} failed ({status})", script.display());
        }
    }
    let all = read_records(&p.path(&p.source.records))?;
    let total = all.len();
    let validated = p.path(&p.output.validated);
    let mut settings = Settings::new(repos, validated.with_extension("work"));
    apply_pipeline(&mut settings, p);
    apply_engine_args(&mut settings, engine);
    // Environment commits from every candidate, so that a filtered run builds the same images.
    settings.env_commits = plan_env_commits(&all, &settings.repos_root, &settings.overrides);
    let records: Vec<_> = all.into_iter().filter(|r| p.keeps(r)).collect();
    eprintln!("pipeline {} ({}): {} of {total} candidates pass the filters", p.name, p.description, records.len());
    Ok((records, settings))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_flags() -> RunnerArgs {
        RunnerArgs {
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
    fn containers_get_a_memory_limit_unless_none_is_asked_for() {
        let default = Some((swe_forge_validate::default_memory_mb() as i64) << 20);
        let mut s = Settings::new("repos".into(), "work".into());
        assert_eq!(s.memory_bytes, default, "no flag, no pipeline key: the default limit");
        assert!(default.is_some_and(|d| (64 << 20..=8192 << 20).contains(&d)));
        let toml = "name='x'\n[source]\nrecords='a'\nrepos='b'\n[output]\nvalidated='c'\n[validate]\nmemory_mb = 300\n";
        apply_pipeline(&mut s, &Pipeline::from_toml(toml, "p").unwrap());
        assert_eq!(s.memory_bytes, Some(300 << 20));
        apply_runner_args(&mut s, &RunnerArgs { memory_mb: Some(crate::cli::MemoryMb(Some(500))), ..no_flags() });
        assert_eq!(s.memory_bytes, Some(500 << 20));
        apply_runner_args(&mut s, &RunnerArgs { memory_mb: Some(crate::cli::MemoryMb(None)), ..no_flags() });
        assert_eq!(s.memory_bytes, None, "`--memory-mb none`: no limit");
        apply_runner_args(&mut s, &no_flags());
        assert_eq!(s.memory_bytes, None, "no flag keeps what was set");
    }

    #[test]
    fn the_backend_comes_from_the_pipeline_then_the_flags() {
        let toml = "name='x'\n[source]\nrecords='a'\nrepos='b'\n[output]\nvalidated='c'\n[validate]\nbackend='swarm'\nswarm_manager='tcp://m:2375'\nregistry='r:5000'\n";
        let mut s = Settings::new("repos".into(), "work".into());
        apply_pipeline(&mut s, &Pipeline::from_toml(toml, "p").unwrap());
        apply_runner_args(&mut s, &no_flags());
        assert_eq!(s.swarm, Some(SwarmSpec { manager: "tcp://m:2375".into(), registry: "r:5000".into() }));
        apply_runner_args(&mut s, &RunnerArgs { registry: Some("other:5000".into()), ..no_flags() });
        assert_eq!(s.swarm.as_ref().unwrap().registry, "other:5000");
        apply_runner_args(&mut s, &RunnerArgs { backend: Some("local".into()), ..no_flags() });
        assert_eq!(s.swarm, None);
        let mut plain = Settings::new("repos".into(), "work".into());
        apply_runner_args(&mut plain, &no_flags());
        assert_eq!(plain.swarm, None, "local unless asked");
    }
}
