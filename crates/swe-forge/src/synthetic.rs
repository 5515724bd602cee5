//! Synthetic datasets for `bench scale` and the tests: accepted records of about 7 KB whose patch
//! words differ from record to record, with the kept logs of their three runs.

use anyhow::Result;

/// Writes `n` synthetic records to `path` as JSONL, one at a time; with `work`, the kept logs of
/// their runs too (`<work>/logs/<instance_id>/{run,test,fix}.log`, as validation keeps them).
pub fn write_synthetic(path: &std::path::Path, n: usize, work: Option<&std::path::Path>) -> Result<()> {
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
pub fn synthetic_record(i: usize) -> swe_forge_core::Instance {
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
    meta.parser = Some(swe_forge_core::Framework::CargoLibtest);
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
}
