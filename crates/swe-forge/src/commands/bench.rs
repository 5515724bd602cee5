//! `swe-forge bench overhead`: the harness overhead of validation once images exist.
//!
//! Each instance runs one at a time (`jobs = 1`) so that wall time and the time inside the test
//! commands (measured in the containers, `PhaseRun::command_ms`) add up; overhead = wall time
//! minus test-command time, as a share of test-command time.

use std::time::Instant;

use anyhow::Result;

use crate::cli::BenchCommand;
use crate::settings::prepare;
use crate::validation::validate_records;
use swe_forge_config::Pipeline;

pub async fn bench_command(cmd: BenchCommand) -> Result<()> {
    let BenchCommand::Overhead { pipeline, repeat, engine } = cmd;
    let p = Pipeline::load(&pipeline)?;
    let (records, mut settings) = prepare(&p, &engine)?;
    settings.jobs = 1;
    let work = tempfile_dir()?;
    settings.work_dir = work.join("work");
    // Warm-up: builds whatever image is missing; not measured.
    validate_records(records.clone(), settings.clone(), &work.join("warmup.jsonl"), true).await?;
    println!("| repeat | instances | runs | wall s | in test commands s | overhead s | overhead |");
    println!("|---|---|---|---|---|---|---|");
    for i in 1..=repeat {
        let started = Instant::now();
        let results =
            validate_records(records.clone(), settings.clone(), &work.join(format!("r{i}.jsonl")), true).await?;
        let wall = started.elapsed().as_secs_f64();
        let runs: Vec<_> = results.iter().filter_map(|r| r.swe_forge.as_ref()).flat_map(|m| m.runs.iter()).collect();
        let inside: f64 = runs.iter().filter_map(|r| r.command_ms).sum::<u64>() as f64 / 1000.0;
        let overhead = wall - inside;
        println!(
            "| {i} | {} | {} | {wall:.2} | {inside:.2} | {overhead:.2} | {:.1}% |",
            results.len(),
            runs.len(),
            100.0 * overhead / inside.max(f64::EPSILON)
        );
    }
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}

fn tempfile_dir() -> Result<std::path::PathBuf> {
    let dir = std::env::temp_dir().join(format!("swe-forge-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}
