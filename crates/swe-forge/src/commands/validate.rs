//! `swe-forge validate`, and the validation loop shared with `run`: resume from the progress
//! file, validate the rest, append each result as soon as it is known.

use std::collections::HashMap;
use std::fs::OpenOptions;
use std::io::{BufReader, Write};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use swe_forge_core::{Instance, ValidationStatus, read_jsonl};
use swe_forge_docker::{CaBundle, Engine};
use swe_forge_validate::{Settings, Validator};

use crate::cli::{EngineArgs, ValidateArgs};
use crate::pipeline::Pipeline;
use crate::reporter::Bars;

pub async fn validate_command(args: ValidateArgs) -> Result<()> {
    let records = read_records(&args.records)?;
    let work_dir = args.work_dir.clone().unwrap_or_else(|| args.out.with_extension("work"));
    let mut settings = Settings::new(args.repos.clone(), work_dir);
    if let Some(p) = &args.pipeline {
        apply_pipeline(&mut settings, &Pipeline::load(p)?);
    }
    apply_engine_args(&mut settings, &args.engine);
    let results = validate_records(records, settings, &args.out, args.fresh).await?;
    print_summary(&results);
    Ok(())
}

pub fn read_records(path: &Path) -> Result<Vec<Instance>> {
    let file = std::fs::File::open(path).with_context(|| format!("opening records {}", path.display()))?;
    read_jsonl(BufReader::new(file)).with_context(|| format!("reading records {}", path.display()))
}

pub fn apply_pipeline(settings: &mut Settings, p: &Pipeline) {
    let v = &p.validate;
    settings.base = p.base.clone();
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
}

pub fn apply_engine_args(settings: &mut Settings, a: &EngineArgs) {
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

/// Validates `records`, resuming from `progress` (every validated record, JSONL) unless
/// `fresh`; returns all results in input order.
pub async fn validate_records(
    records: Vec<Instance>,
    settings: Settings,
    progress: &Path,
    fresh: bool,
) -> Result<Vec<Instance>> {
    if let Some(dir) = progress.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let mut done: HashMap<String, Instance> = HashMap::new();
    if !fresh && progress.exists() {
        for r in read_records(progress)? {
            done.insert(r.instance_id.clone(), r);
        }
    } else if progress.exists() {
        std::fs::remove_file(progress).with_context(|| format!("removing {}", progress.display()))?;
    }
    let todo: Vec<Instance> = records.iter().filter(|r| !done.contains_key(&r.instance_id)).cloned().collect();
    if !done.is_empty() {
        eprintln!(
            "resuming: {} of {} instances already validated in {}",
            records.len() - todo.len(),
            records.len(),
            progress.display()
        );
    }
    if !todo.is_empty() {
        let engine = Engine::connect().await?;
        let bars = Arc::new(Bars::new(todo.len()));
        let validator = Validator::new(engine, settings, bars.clone())?;
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(progress)
            .with_context(|| format!("opening {}", progress.display()))?;
        let mut write_error = None;
        let results = validator
            .validate_all(todo, |inst| {
                let line = serde_json::to_string(inst).expect("records serialize");
                if let Err(e) = writeln!(file, "{line}").and_then(|()| file.sync_data()) {
                    write_error.get_or_insert(e);
                }
            })
            .await;
        bars.finish();
        if let Some(e) = write_error {
            return Err(e).with_context(|| format!("appending to {}", progress.display()));
        }
        for r in results {
            done.insert(r.instance_id.clone(), r);
        }
    }
    Ok(records.iter().filter_map(|r| done.remove(&r.instance_id)).collect())
}

pub fn print_summary(results: &[Instance]) {
    let accepted = results.iter().filter(|r| r.status() == ValidationStatus::Accepted).count();
    println!("{:<36} {:<9} {:>5} {:>5}  reasons", "instance", "status", "f2p", "p2p");
    for r in results {
        let reasons: Vec<String> =
            r.swe_forge.iter().flat_map(|m| m.rejections.iter().map(|x| x.reason.as_str().to_owned())).collect();
        let status = match r.status() {
            ValidationStatus::Accepted => "accepted",
            ValidationStatus::Rejected => "rejected",
            ValidationStatus::Candidate => "candidate",
        };
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
