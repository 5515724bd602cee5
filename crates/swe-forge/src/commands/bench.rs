//! `swe-forge bench overhead`: the harness overhead of validation once images exist; `swe-forge
//! bench runs`: the fixed cost of one test run, step by step; `swe-forge bench scale`: time and
//! peak memory of `export` or `curate` on synthetic datasets of growing size.
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
        BenchCommand::Scale { sizes, binary, command } => {
            tokio::task::spawn_blocking(move || scale(&sizes, binary, command))
                .await
                .map_err(|e| anyhow::anyhow!("bench scale: {e}"))?
        }
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

/// For each size: a synthetic dataset written to a temporary folder (with its kept logs when
/// `regrade` is measured), then each command run on it by a child `swe-forge`; its wall time and
/// peak resident memory (`VmHWM` of `/proc/<pid>/status`, read every 10 ms while it runs).
fn scale(sizes: &[usize], binary: Option<std::path::PathBuf>, commands: Vec<crate::cli::ScaleCommand>) -> Result<()> {
    use crate::cli::ScaleCommand;
    use anyhow::Context;
    let binary = match binary {
        Some(b) => b,
        None => std::env::current_exe().context("finding this binary")?,
    };
    let dir = tempfile::tempdir().context("making a temporary folder")?;
    outln!("| command | records | input MB | seconds | peak RSS MiB |");
    outln!("|---|---|---|---|---|");
    for &n in sizes {
        let input = dir.path().join(format!("records-{n}.jsonl"));
        let work = dir.path().join(format!("work-{n}"));
        let logs = commands.contains(&ScaleCommand::Regrade).then_some(work.as_path());
        write_synthetic(&input, n, logs)?;
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
            outln!(
                "| {} | {n} | {:.0} | {seconds:.1} | {:.0} |",
                command.name(),
                bytes as f64 / 1e6,
                peak_kib as f64 / 1024.0
            );
            let _ = std::fs::remove_dir_all(&out);
        }
        let _ = std::fs::remove_file(&input);
        let _ = std::fs::remove_dir_all(&work);
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

/// Writes `n` synthetic records to `path` as JSONL, one at a time; with `work`, the kept logs of
/// their runs too (`<work>/logs/<instance_id>/{run,test,fix}.log`, as validation keeps them).
fn write_synthetic(path: &std::path::Path, n: usize, work: Option<&std::path::Path>) -> Result<()> {
    use std::io::Write;
    let mut w = std::io::BufWriter::new(std::fs::File::create(path)?);
    for i in 0..n {
        let r = synthetic_record(i);
        if let Some(work) = work {
            let dir = work.join("logs").join(&r.instance_id);
            std::fs::create_dir_all(&dir)?;
            for (phase, log) in synthetic_logs(&r) {
                std::fs::write(dir.join(format!("{}.log", phase.as_str())), log)?;
            }
        }
        serde_json::to_writer(&mut w, &r)?;
        w.write_all(b"\n")?;
    }
    w.flush()?;
    Ok(())
}

/// The kept log of each of a synthetic record's runs, as `cargo test` prints it: every test of
/// the phase with its status.
fn synthetic_logs(r: &swe_forge_core::Instance) -> [(swe_forge_core::Phase, String); 3] {
    use swe_forge_core::{Phase, TestStatus};
    let log = |status: fn(&swe_forge_core::Transition) -> TestStatus| {
        let mut tests: Vec<(&String, TestStatus)> =
            r.p2p_tests.iter().chain(&r.fixed_tests).map(|(k, t)| (k, status(t))).collect();
        tests.retain(|(_, s)| *s != TestStatus::None);
        tests.sort();
        let mut out = format!(
            "     Running unittests src/lib.rs (target/debug/deps/synth-0123456789abcdef)\n\nrunning {} tests\n",
            tests.len()
        );
        for (name, s) in &tests {
            let name = name.strip_prefix("synth::").unwrap_or(name);
            out.push_str(&format!("test {name} ... {}\n", if *s == TestStatus::Pass { "ok" } else { "FAILED" }));
        }
        let failed = tests.iter().filter(|(_, s)| *s != TestStatus::Pass).count();
        out.push_str(&format!(
            "\ntest result: {}. {} passed; {failed} failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s\n",
            if failed == 0 { "ok" } else { "FAILED" },
            tests.len() - failed
        ));
        out
    };
    [(Phase::Run, log(|t| t.run)), (Phase::Test, log(|t| t.test)), (Phase::Fix, log(|t| t.fix))]
}

/// A pseudo-random number of `seed` (splitmix64): the words of a synthetic patch, which differ from
/// one record to the next as real patches do (shared words would make every pair a candidate
/// duplicate for curate).
fn mix(seed: u64) -> u64 {
    let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// An accepted record of about 6 KB of JSONL: a fix patch and a test patch whose words differ from
/// record to record, an issue, 16 tests that pass throughout, 5 that the fix makes pass and 2 it
/// adds, the three runs' results and the runs themselves (parsed as `cargo test` output).
pub(crate) fn synthetic_record(i: usize) -> swe_forge_core::Instance {
    use swe_forge_core::{Instance, Phase, PhaseRun, TestMap, TestResult, TestStatus, Transition, ValidationStatus};
    let (org, repo) = (format!("org{}", i % 97), format!("repo{}", i % 13));
    let number = i as u64 + 1;
    const WORDS: [&str; 16] = [
        "value", "count", "offset", "buffer", "parser", "token", "state", "limit", "index", "cursor", "width", "depth",
        "frame", "chunk", "entry", "scope",
    ];
    let word = |seed: u64| {
        let h = mix(seed);
        format!("{}_{:x}", WORDS[(h % 16) as usize], (h >> 8) & 0xfff)
    };
    let hunk = |file: &str, lines: usize, salt: u64| {
        let mut p = format!("diff --git a/{file} b/{file}\n--- a/{file}\n+++ b/{file}\n@@ -1,{lines} +1,{lines} @@\n");
        for l in 0..lines {
            let seed = (i as u64) << 16 | salt << 8 | l as u64;
            let (a, b, c) = (word(seed * 3), word(seed * 3 + 1), word(seed * 3 + 2));
            p.push_str(&format!("-    let {a} = {b}({c}, {i});\n+    let {a} = {b}({c}, {i}) + 1;\n"));
        }
        p
    };
    let t = |run, test, fix| Transition { run, test, fix };
    let (pass, fail, none) = (TestStatus::Pass, TestStatus::Fail, TestStatus::None);
    let p2p: TestMap =
        (0..16).map(|k| (format!("synth::tests::module_{}::case_{k}", k % 5), t(pass, pass, pass))).collect();
    let f2p: TestMap =
        (0..5).map(|k| (format!("synth::tests::regression_{i}::case_{k}"), t(fail, fail, pass))).collect();
    let n2p: TestMap = (0..2).map(|k| (format!("synth::tests::new_{i}::case_{k}"), t(none, none, pass))).collect();
    let mut fixed = f2p.clone();
    fixed.extend(n2p.clone());
    let names = |m: &TestMap| m.keys().cloned().collect::<Vec<_>>();
    let result = |passed: Vec<String>, failed: Vec<String>| TestResult {
        passed_count: passed.len() as u64,
        failed_count: failed.len() as u64,
        skipped_count: 0,
        passed_tests: passed,
        failed_tests: failed,
        skipped_tests: Vec::new(),
    };
    let all_pass: Vec<String> = names(&p2p).into_iter().chain(names(&fixed)).collect();
    let mut r: Instance = serde_json::from_value(serde_json::json!({
        "org": org, "repo": repo, "number": number, "state": "closed",
        "title": format!("Fix the computation of value {i} in the parser"),
        "body": "The parser computes a value one too small when the input ends in a newline. ".repeat(4),
        "base": {"label": format!("{org}:main"), "ref": "main", "sha": format!("{:040x}", i)},
        "resolved_issues": [{"number": number + 1000, "title": "Off by one", "body": "Steps to reproduce: parse a file that ends in a newline."}],
        "fix_patch": hunk("src/parser.rs", 8, 1), "test_patch": hunk("tests/parser.rs", 5, 2),
    }))
    .expect("a synthetic record is a record");
    r.instance_id = r.expected_id();
    (r.p2p_tests, r.f2p_tests, r.n2p_tests, r.fixed_tests) = (p2p.clone(), f2p.clone(), n2p, fixed);
    r.run_result = result(names(&p2p), names(&f2p));
    r.test_patch_result = result(names(&p2p), names(&f2p));
    r.fix_patch_result = result(all_pass, Vec::new());
    let mut meta = swe_forge_core::ForgeMeta::new(ValidationStatus::Accepted);
    meta.parser = Some("cargo-test".to_owned());
    meta.test_command = Some("cargo test".to_owned());
    meta.runs = synthetic_logs(&r)
        .into_iter()
        .map(|(phase, log)| PhaseRun {
            phase,
            exit_code: Some(if phase == Phase::Fix { 0 } else { 101 }),
            duration_ms: 1000,
            timed_out: false,
            log_sha256: {
                use sha2::Digest as _;
                format!("{:x}", sha2::Sha256::digest(log.as_bytes()))
            },
            log_bytes: log.len() as u64,
            tests: log.lines().filter(|l| l.starts_with("test ")).count() as u64,
            attempt: 0,
            command_ms: None,
        })
        .collect();
    r.swe_forge = Some(meta);
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn synthetic_records_are_valid_distinct_and_about_7_kb() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        write_synthetic(&path, 10, None).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let records = swe_forge_core::read_jsonl(text.as_bytes()).unwrap();
        assert_eq!(records.len(), 10);
        for (line, r) in text.lines().zip(&records) {
            assert!((5_000..8_000).contains(&line.len()), "{} bytes", line.len());
            assert_eq!(r.status(), swe_forge_core::ValidationStatus::Accepted);
            assert_eq!((r.p2p_tests.len(), r.fixed_tests.len()), (16, 7));
            assert_eq!(r.instance_id, r.expected_id());
        }
    }

    /// The kept logs of synthetic records grade to the records' own lists, and no two synthetic
    /// fix patches are near-duplicates: what `bench scale` measures is the commands' real work.
    #[test]
    fn synthetic_records_regrade_to_their_lists_and_are_not_duplicates() {
        let dir = tempfile::tempdir().unwrap();
        let (path, work) = (dir.path().join("r.jsonl"), dir.path().join("work"));
        write_synthetic(&path, 200, Some(&work)).unwrap();
        let records = swe_forge_core::read_jsonl(std::fs::read_to_string(&path).unwrap().as_bytes()).unwrap();
        for r in records.iter().take(20) {
            let new = swe_forge_validate::regrade(r, &work).unwrap();
            assert_eq!(new.status(), r.status(), "{:?}", new.swe_forge.as_ref().map(|m| &m.rejections));
            assert_eq!((&new.fixed_tests, &new.p2p_tests), (&r.fixed_tests, &r.p2p_tests));
        }
        let groups = swe_forge_curate::find_duplicates(&records, swe_forge_curate::DedupOptions::default());
        assert!(groups.is_empty(), "{groups:?}");
    }

    #[test]
    fn peak_memory_is_read_from_proc_status() {
        assert_eq!(vm_hwm_kib("Name:\tx\nVmPeak:\t  9 kB\nVmHWM:\t   1234 kB\nVmRSS:\t 5 kB\n"), Some(1234));
        assert_eq!(vm_hwm_kib("Name:\tx\n"), None);
    }
}
