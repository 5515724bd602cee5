//! `swe-forge bench overhead`: the harness overhead of validation once images exist; `swe-forge
//! bench runs`: the fixed cost of one test run, step by step; `swe-forge bench scale`: time and
//! peak memory of dataset commands (export, curate, report, publish, regrade) on synthetic datasets.
//!
//! Overhead: each instance runs one at a time (`jobs = 1`) so that wall time and the time inside
//! the test commands (measured in the containers, `PhaseRun::command_ms`) add up; overhead = wall
//! time minus test-command time, as a share of test-command time.
//!
//! Each prints a Markdown table, a row as each measurement ends; with `--json`, one JSON object
//! with the same figures at the end instead (times in ms, sizes in bytes).

use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use swe_forge_core::MarkdownTable;
use swe_forge_docker::{Backend, BaseSpec, Engine, RunOutput, RunSpec, RunStages};

use crate::cli::BenchCommand;
use crate::settings::prepare;
use crate::validation::validate_records;
use swe_forge_config::Pipeline;

pub async fn bench_command(cmd: BenchCommand) -> Result<()> {
    match cmd {
        BenchCommand::Overhead { pipeline, repeat, json, engine } => overhead(pipeline, repeat, json, engine).await,
        BenchCommand::Runs { image, repeat, script_ms, json } => runs(image, repeat, script_ms, json).await,
        BenchCommand::Scale { sizes, binary, command, json } => {
            tokio::task::spawn_blocking(move || scale(&sizes, binary, command, json))
                .await
                .map_err(|e| anyhow::anyhow!("bench scale: {e}"))?
        }
    }
}

async fn overhead(pipeline: std::path::PathBuf, repeat: u32, json: bool, engine: crate::cli::EngineArgs) -> Result<()> {
    let p = Pipeline::load(&pipeline)?;
    let (records, mut settings) = prepare(&p, &engine)?;
    settings.jobs = 1;
    let work = tempfile_dir()?;
    settings.work_dir = work.join("work");
    // Warm-up: builds whatever image is missing; not measured.
    validate_records(records.clone(), settings.clone(), &work.join("warmup.jsonl"), true).await?;
    // A row per repeat as it ends (all at the end in JSON).
    let head = ["repeat", "instances", "runs", "wall s", "in test commands s", "overhead s", "overhead"];
    let mut rows = Vec::new();
    if !json {
        outln!("{}", MarkdownTable::new(head).right(..).head());
    }
    for i in 1..=repeat {
        let started = Instant::now();
        let results =
            validate_records(records.clone(), settings.clone(), &work.join(format!("r{i}.jsonl")), true).await?;
        let wall = started.elapsed().as_secs_f64();
        let runs: Vec<_> = results.iter().filter_map(|r| r.swe_forge.as_ref()).flat_map(|m| m.runs.iter()).collect();
        let inside: f64 = runs.iter().filter_map(|r| r.command_ms).sum::<u64>() as f64 / 1000.0;
        let overhead = wall - inside;
        let percent = 100.0 * overhead / inside.max(f64::EPSILON);
        if json {
            rows.push(serde_json::json!({
                "repeat": i,
                "instances": results.len(),
                "runs": runs.len(),
                "wall_ms": (wall * 1000.0).round() as u64,
                "test_commands_ms": (inside * 1000.0).round() as u64,
                "overhead_ms": (overhead * 1000.0).round() as i64,
                "overhead_percent": percent,
            }));
            continue;
        }
        outln!(
            "{}",
            MarkdownTable::row_line([
                i.to_string(),
                results.len().to_string(),
                runs.len().to_string(),
                format!("{wall:.2}"),
                format!("{inside:.2}"),
                format!("{overhead:.2}"),
                format!("{percent:.1}%"),
            ])
        );
    }
    if json {
        outln!("{}", serde_json::json!({ "pipeline": pipeline.display().to_string(), "repeats": rows }));
    }
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}

/// Runs of a script that does nothing but wait `script_ms`, set up as a test run is, in turn:
/// removal waited for (`Engine::run`), removal in the background with a container of its own
/// (`Backend::run` without containers started ahead), and `Backend::run` as test runs use it
/// (removal in the background, the container started ahead while the previous run ran).
async fn runs(image: Option<String>, repeat: u32, script_ms: u64, json: bool) -> Result<()> {
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
    let measured = RunsMeasured { image, script_ms, repeat, kinds, settle };
    if json {
        outln!("{}", measured.json());
    } else {
        measured.print();
    }
    Ok(())
}

/// What `bench runs` measured: per kind of removal, each run's wall time beyond the script and
/// its steps; the wait at the end for the backend to settle.
struct RunsMeasured {
    image: String,
    script_ms: u64,
    repeat: u32,
    kinds: Vec<(&'static str, Vec<(Duration, RunStages)>)>,
    settle: Duration,
}

/// One kind of removal of `bench runs`: the median and p90 wall time beyond the script, each
/// step's median.
struct KindRow {
    kind: &'static str,
    median: Duration,
    p90: Duration,
    stages: Vec<(&'static str, Duration)>,
}

impl RunsMeasured {
    /// A row per kind.
    fn rows(&self) -> Vec<KindRow> {
        let names = RunStages::default().named().map(|(n, _)| n);
        self.kinds
            .iter()
            .map(|(kind, rows)| {
                let walls: Vec<Duration> = rows.iter().map(|(w, _)| *w).collect();
                let stages = (0..names.len())
                    .map(|i| (names[i], quantile(rows.iter().map(|(_, s)| s.named()[i].1).collect(), 0.5)))
                    .collect();
                KindRow { kind, median: quantile(walls.clone(), 0.5), p90: quantile(walls, 0.9), stages }
            })
            .collect()
    }

    /// The table, medians in ms.
    fn print(&self) {
        let (image, script_ms, repeat) = (&self.image, self.script_ms, self.repeat);
        outln!("image {image}, a script of {script_ms} ms, {repeat} runs of each kind, medians in ms");
        let names = RunStages::default().named().map(|(n, _)| n);
        let head = ["removal", "wall beyond the script (p90)"].into_iter().chain(names);
        outln!("\n{}", MarkdownTable::new(head).right(1..).head());
        for KindRow { kind, median, p90, stages } in self.rows() {
            let wall = format!("{} ({})", ms(median), ms(p90));
            let stages = stages.into_iter().map(|(_, d)| ms(d));
            outln!("{}", MarkdownTable::row_line([kind.to_owned(), wall].into_iter().chain(stages)));
        }
        let settle = ms(self.settle);
        outln!("\nwaiting at the end for the background removals and the containers started ahead: {settle} ms");
    }

    /// The same figures as one JSON object, in ms.
    fn json(&self) -> serde_json::Value {
        let millis = |d: Duration| (d.as_secs_f64() * 1000.0).round() as u64;
        let kinds: Vec<serde_json::Value> = self
            .rows()
            .into_iter()
            .map(|KindRow { kind, median, p90, stages }| {
                let stages: serde_json::Map<String, serde_json::Value> =
                    stages.into_iter().map(|(n, d)| (n.replace(' ', "_"), millis(d).into())).collect();
                serde_json::json!({
                    "removal": kind,
                    "wall_beyond_script_ms": { "median": millis(median), "p90": millis(p90) },
                    "stages_ms": stages,
                })
            })
            .collect();
        serde_json::json!({
            "image": self.image,
            "script_ms": self.script_ms,
            "repeat": self.repeat,
            "kinds": kinds,
            "settle_ms": millis(self.settle),
        })
    }
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

/// For each size: a synthetic dataset written to a temporary folder (with its kept logs when
/// `regrade` is measured), then each command run on it by a child `swe-forge`; its wall time and
/// peak resident memory (`VmHWM` of `/proc/<pid>/status`, read every 10 ms while it runs).
fn scale(
    sizes: &[usize],
    binary: Option<std::path::PathBuf>,
    commands: Vec<crate::cli::ScaleCommand>,
    json: bool,
) -> Result<()> {
    use crate::cli::ScaleCommand;
    use anyhow::Context;
    let binary = match binary {
        Some(b) => b,
        None => std::env::current_exe().context("finding this binary")?,
    };
    let dir = tempfile::tempdir().context("making a temporary folder")?;
    // A row per command and size as it ends (all at the end in JSON).
    let mut rows = Vec::new();
    if !json {
        outln!(
            "{}",
            MarkdownTable::new(["command", "records", "input MB", "seconds", "peak RSS MiB"]).right(1..).head()
        );
    }
    for &n in sizes {
        let input = dir.path().join(format!("records-{n}.jsonl"));
        let work = dir.path().join(format!("work-{n}"));
        let logs = commands.contains(&ScaleCommand::Regrade).then_some(work.as_path());
        crate::synthetic::write_synthetic(&input, n, logs)?;
        let bytes = std::fs::metadata(&input)?.len();
        for &command in &commands {
            let out = dir.path().join(format!("out-{n}"));
            let mut child = std::process::Command::new(&binary);
            child.arg(command.name());
            let file = |name: &str| out.join(name);
            std::fs::create_dir_all(&out)?;
            match command {
                ScaleCommand::Export => child
                    .arg("--records")
                    .arg(&input)
                    .arg("--jsonl")
                    .arg(file("out.jsonl"))
                    .arg("--parquet")
                    .arg(file("instances.parquet"))
                    .arg("--tests-parquet")
                    .arg(file("tests.parquet")),
                ScaleCommand::Curate => child.arg("--dataset").arg(&input).arg("--out").arg(file("out.jsonl")),
                ScaleCommand::Report => child.arg("--dataset").arg(&input).arg("--out").arg(file("card")),
                ScaleCommand::Publish => {
                    child.arg("--dataset").arg(&input).arg("--out").arg(file("hub")).arg("--license").arg("mit")
                }
                ScaleCommand::Regrade => {
                    child.arg("--records").arg(&input).arg("--work-dir").arg(&work).arg("--out").arg(file("out.jsonl"))
                }
            };
            let (seconds, peak_kib) =
                measure(child, &binary).with_context(|| format!("{} of {n} records", command.name()))?;
            let _ = std::fs::remove_dir_all(&out);
            if json {
                rows.push(serde_json::json!({
                    "command": command.name(),
                    "records": n,
                    "input_bytes": bytes,
                    "wall_ms": (seconds * 1000.0).round() as u64,
                    "peak_rss_bytes": peak_kib * 1024,
                }));
                continue;
            }
            outln!(
                "{}",
                MarkdownTable::row_line([
                    command.name().to_owned(),
                    n.to_string(),
                    format!("{:.0}", bytes as f64 / 1e6),
                    format!("{seconds:.1}"),
                    format!("{:.0}", peak_kib as f64 / 1024.0),
                ])
            );
        }
        let _ = std::fs::remove_file(&input);
        let _ = std::fs::remove_dir_all(&work);
    }
    if json {
        outln!("{}", serde_json::json!({ "measurements": rows }));
    }
    Ok(())
}

/// Runs `child` (stdout to nowhere); its wall time in seconds and peak resident memory in KiB.
fn measure(mut child: std::process::Command, binary: &std::path::Path) -> Result<(f64, u64)> {
    use anyhow::Context;
    let started = Instant::now();
    let mut child = child
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .with_context(|| format!("starting {}", binary.display()))?;
    // Read as it comes, so that a child writing much to stderr never blocks on a full pipe.
    let mut stderr = child.stderr.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut err = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut err);
        err
    });
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak_kib = 0u64;
    let status = loop {
        if let Some(kib) = std::fs::read_to_string(&status_file).ok().as_deref().and_then(vm_hwm_kib) {
            peak_kib = peak_kib.max(kib);
        }
        if let Some(status) = child.try_wait()? {
            break status;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let seconds = started.elapsed().as_secs_f64();
    let err = reader.join().unwrap_or_default();
    if !status.success() {
        bail!("failed ({status}): {err}");
    }
    Ok((seconds, peak_kib))
}

/// The `VmHWM` (peak resident set) line of a `/proc/<pid>/status`, in KiB.
fn vm_hwm_kib(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.trim_start_matches("VmHWM:").trim().trim_end_matches("kB").trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peak_memory_is_read_from_proc_status() {
        assert_eq!(vm_hwm_kib("Name:\tx\nVmPeak:\t  9 kB\nVmHWM:\t   1234 kB\nVmRSS:\t 5 kB\n"), Some(1234));
        assert_eq!(vm_hwm_kib("Name:\tx\n"), None);
    }
}
