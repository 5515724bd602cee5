//! `swe-forge bench overhead`: the harness overhead of validation once images exist; `swe-forge
//! bench runs`: the fixed cost of one test run, step by step.
//!
//! Overhead: each instance runs one at a time (`jobs = 1`) so that wall time and the time inside
//! the test commands (measured in the containers, `PhaseRun::command_ms`) add up; overhead = wall
//! time minus test-command time, as a share of test-command time.

use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use swe_forge_docker::{Backend, BaseSpec, Engine, RunOutput, RunSpec, RunStages};

use crate::cli::BenchCommand;
use crate::settings::prepare;
use crate::validation::validate_records;
use swe_forge_config::Pipeline;

pub async fn bench_command(cmd: BenchCommand) -> Result<()> {
    match cmd {
        BenchCommand::Overhead { pipeline, repeat, engine } => overhead(pipeline, repeat, engine).await,
        BenchCommand::Runs { image, repeat, script_ms } => runs(image, repeat, script_ms).await,
    }
}

async fn overhead(pipeline: std::path::PathBuf, repeat: u32, engine: crate::cli::EngineArgs) -> Result<()> {
    let p = Pipeline::load(&pipeline)?;
    let (records, mut settings) = prepare(&p, &engine)?;
    settings.jobs = 1;
    let work = tempfile_dir()?;
    settings.work_dir = work.join("work");
    // Warm-up: builds whatever image is missing; not measured.
    validate_records(records.clone(), settings.clone(), &work.join("warmup.jsonl"), true).await?;
    outln!("| repeat | instances | runs | wall s | in test commands s | overhead s | overhead |");
    outln!("|---|---|---|---|---|---|---|");
    for i in 1..=repeat {
        let started = Instant::now();
        let results =
            validate_records(records.clone(), settings.clone(), &work.join(format!("r{i}.jsonl")), true).await?;
        let wall = started.elapsed().as_secs_f64();
        let runs: Vec<_> = results.iter().filter_map(|r| r.swe_forge.as_ref()).flat_map(|m| m.runs.iter()).collect();
        let inside: f64 = runs.iter().filter_map(|r| r.command_ms).sum::<u64>() as f64 / 1000.0;
        let overhead = wall - inside;
        outln!(
            "| {i} | {} | {} | {wall:.2} | {inside:.2} | {overhead:.2} | {:.1}% |",
            results.len(),
            runs.len(),
            100.0 * overhead / inside.max(f64::EPSILON)
        );
    }
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}

/// Runs of a script that does nothing but wait `script_ms`, set up as a test run is, in turn:
/// removal waited for (`Engine::run`), removal in the background with a container of its own
/// (`Backend::run` without containers started ahead), and `Backend::run` as test runs use it
/// (removal in the background, the container started ahead while the previous run ran).
async fn runs(image: Option<String>, repeat: u32, script_ms: u64) -> Result<()> {
    let engine = Engine::connect().await?;
    let image = match image {
        Some(i) => i,
        None => engine.ensure_base(&BaseSpec::default(), &|m| eprintln!("{m}")).await?,
    };
    let wait =
        if script_ms > 0 { format!("sleep {}.{:03} && ", script_ms / 1000, script_ms % 1000) } else { String::new() };
    let mut spec = RunSpec::new(
        &image,
        format!("{wait}mkdir -p /swe-forge/results && cat /swe-forge/in.txt > /swe-forge/results/r.txt"),
    );
    spec.files = vec![("/swe-forge/in.txt".to_owned(), b"ok\n".to_vec())];
    spec.memory_bytes = Some(4096 << 20);
    spec.pids_limit = Some(4096);
    spec.collect = Some("/swe-forge/results".to_owned());
    let backend = Backend::Local(engine.clone());
    let check = |out: &RunOutput| -> Result<()> {
        if out.exit_code != Some(0) || out.files.len() != 1 {
            bail!("the run failed: exit {:?}, log {}", out.exit_code, String::from_utf8_lossy(&out.log));
        }
        Ok(())
    };
    // Warm-up: finds the network, loads the image's layers into the page cache.
    check(&engine.run(&spec).await?)?;
    let script = Duration::from_millis(script_ms);
    let mut kinds: Vec<(&str, Vec<(Duration, RunStages)>)> = Vec::new();
    for kind in ["waited for", "in the background", "in the background, started ahead"] {
        engine.set_prestart(kind.ends_with("ahead"));
        let mut rows = Vec::new();
        for _ in 0..repeat {
            let t = Instant::now();
            let out = if kind == "waited for" { engine.run(&spec).await? } else { backend.run(&spec).await? };
            rows.push((t.elapsed().saturating_sub(script), out.stages));
            check(&out)?;
        }
        kinds.push((kind, rows));
    }
    let t = Instant::now();
    backend.settle().await;
    let settle = t.elapsed();
    outln!("image {image}, a script of {script_ms} ms, {repeat} runs of each kind, medians in ms");
    let names: Vec<&str> = RunStages::default().named().iter().map(|(n, _)| *n).collect();
    outln!("\n| removal | wall beyond the script (p90) | {} |", names.join(" | "));
    outln!("|---|---|{}", "---|".repeat(names.len()));
    for (kind, rows) in &kinds {
        let walls: Vec<Duration> = rows.iter().map(|(w, _)| *w).collect();
        let stages: Vec<String> =
            (0..names.len()).map(|i| ms(quantile(rows.iter().map(|(_, s)| s.named()[i].1).collect(), 0.5))).collect();
        outln!(
            "| {kind} | {} ({}) | {} |",
            ms(quantile(walls.clone(), 0.5)),
            ms(quantile(walls, 0.9)),
            stages.join(" | ")
        );
    }
    outln!("\nwaiting at the end for the background removals and the containers started ahead: {} ms", ms(settle));
    Ok(())
}

fn quantile(mut v: Vec<Duration>, q: f64) -> Duration {
    v.sort_unstable();
    v.get(((v.len().saturating_sub(1)) as f64 * q).round() as usize).copied().unwrap_or_default()
}

fn ms(d: Duration) -> String {
    format!("{:.0}", d.as_secs_f64() * 1000.0)
}

fn tempfile_dir() -> Result<std::path::PathBuf> {
    let dir = std::env::temp_dir().join(format!("swe-forge-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}
