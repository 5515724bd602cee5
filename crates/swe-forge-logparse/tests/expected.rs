//! Golden tests: every `test_data/<framework>/<case>.log` is parsed with the framework its
//! folder names, and every `test_data/<framework>/<case>/` folder is read as a results
//! directory with `parse_files`; each is compared with `<case>.json` (canonical id -> status)
//! and, where the framework's own timeout killed tests, with `<case>.timed_out.json` (the
//! canonical ids of [`ParsedLog::timed_out`]; no file: none).
//! Logs are also parsed through a reader that returns a few bytes at a time, which must give
//! the same result, and `detect` must name the folder's framework (except for `under_*` cases,
//! another runner's log read with this parser on purpose). Run with `UPDATE_EXPECT=1` to rewrite the JSON files from the current
//! parser output.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use swe_forge_core::TestStatus;
use swe_forge_logparse::{Framework, ParsedLog, detect, parse, parse_files, parse_reader};

/// A reader returning at most 1 to 7 bytes per call, to cross every buffer boundary.
struct Trickle<'a> {
    data: &'a [u8],
    step: usize,
}

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.step = self.step % 7 + 1;
        let n = self.step.min(buf.len()).min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

fn files_under(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).expect("readable folder") {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel = path.strip_prefix(dir).expect("under dir").to_string_lossy().replace('\\', "/");
                out.push((rel, fs::read(&path).expect("readable file")));
            }
        }
    }
    out
}

#[test]
fn every_log_matches_its_expected_statuses() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("test_data");
    let update = std::env::var_os("UPDATE_EXPECT").is_some_and(|v| v == "1");
    let mut cases = 0;
    let mut frameworks = std::collections::BTreeSet::new();
    let mut failures = Vec::new();
    let mut dirs: Vec<_> =
        fs::read_dir(&root).expect("test_data exists").map(|e| e.expect("dir entry").path()).collect();
    dirs.sort();
    for dir in dirs.iter().filter(|d| d.is_dir()) {
        let dir_name = dir.file_name().and_then(|n| n.to_str()).expect("utf-8 folder name");
        let framework: Framework = dir_name.parse().unwrap_or_else(|e| panic!("test_data/{dir_name}: {e}"));
        frameworks.insert(framework);
        let mut inputs: Vec<PathBuf> = fs::read_dir(dir)
            .expect("readable folder")
            .map(|e| e.expect("dir entry").path())
            .filter(|p| p.is_dir() || p.extension().is_some_and(|x| x == "log"))
            .collect();
        inputs.sort();
        for input in inputs {
            cases += 1;
            let stem = input.file_stem().and_then(|s| s.to_str()).unwrap_or("?").to_owned();
            let case = format!("{dir_name}/{stem}");
            let (parsed, log): (ParsedLog, Option<Vec<u8>>) = if input.is_dir() {
                (parse_files(framework, &files_under(&input)), None)
            } else {
                let log = fs::read(&input).expect("readable log");
                let parsed = parse(framework, &log);
                let trickled = parse_reader(framework, Trickle { data: &log, step: 0 });
                if trickled != parsed {
                    failures.push(format!("{case}: parsing in small reads differs from parsing at once"));
                }
                (parsed, Some(log))
            };
            let json_path = dir.join(format!("{stem}.json"));
            let timed_out_path = dir.join(format!("{stem}.timed_out.json"));
            if update {
                let mut text = serde_json::to_string_pretty(&parsed.tests).expect("serialisable");
                text.push('\n');
                fs::write(&json_path, text).expect("writable expectation");
                if parsed.timed_out.is_empty() {
                    let _ = fs::remove_file(&timed_out_path);
                } else {
                    let mut text = serde_json::to_string_pretty(&parsed.timed_out).expect("serialisable");
                    text.push('\n');
                    fs::write(&timed_out_path, text).expect("writable expectation");
                }
                continue;
            }
            let expected_timed_out: BTreeSet<String> = match fs::read_to_string(&timed_out_path) {
                Ok(t) => serde_json::from_str(&t).unwrap_or_else(|e| panic!("{case}.timed_out.json: {e}")),
                Err(_) => BTreeSet::new(),
            };
            if parsed.timed_out != expected_timed_out {
                failures.push(format!("{case}: timed out {:?}, expected {:?}", parsed.timed_out, expected_timed_out));
            }
            // A test the timeout killed failed, and keeps its Multi-SWE-bench name.
            if let Some(id) = parsed
                .timed_out
                .iter()
                .find(|id| parsed.tests.get(*id) != Some(&TestStatus::Fail) || !parsed.msb_names.contains_key(*id))
            {
                failures.push(format!("{case}: timed-out {id} is not a named FAIL"));
            }
            let expected: BTreeMap<String, TestStatus> = match fs::read_to_string(&json_path) {
                Ok(t) => serde_json::from_str(&t).unwrap_or_else(|e| panic!("{case}.json: {e}")),
                Err(e) => {
                    failures.push(format!("{case}: no expectation ({e}); run with UPDATE_EXPECT=1"));
                    continue;
                }
            };
            if parsed.tests != expected {
                let mut diff = String::new();
                for (id, st) in &expected {
                    if parsed.tests.get(id) != Some(st) {
                        diff.push_str(&format!("\n  {id}: expected {st}, got {:?}", parsed.tests.get(id)));
                    }
                }
                for (id, st) in &parsed.tests {
                    if !expected.contains_key(id) {
                        diff.push_str(&format!("\n  {id}: unexpected {st}"));
                    }
                }
                failures.push(format!("{case}:{diff}"));
            }
            // `under_<runner>` cases are another runner's log read with this parser on purpose.
            if let Some(log) = &log
                && !expected.is_empty()
                && !stem.starts_with("under_")
                && detect(log) != Some(framework)
            {
                failures.push(format!("{case}: detect gave {:?}", detect(log)));
            }
            // Every MSB name belongs to a parsed test, and every parsed test has one (doctests,
            // libtest's should-panic tests and ctest results other than Passed and ***Failed
            // aside: Multi-SWE-bench's regexes cannot see them).
            if let Some(id) = parsed.msb_names.keys().find(|id| !parsed.tests.contains_key(*id)) {
                failures.push(format!("{case}: msb name for unknown id {id}"));
            }
            let should_panic = |id: &str| {
                let path = id.split_once("::").map_or(id, |(_, p)| p);
                log.as_ref().is_some_and(|l| String::from_utf8_lossy(l).contains(&format!("{path} - should panic")))
            };
            let unread_ctest_result = |id: &str| {
                framework == Framework::Ctest
                    && log.as_ref().is_some_and(|l| {
                        String::from_utf8_lossy(l).lines().any(|line| {
                            line.contains(&format!(": {id} ")) && line.contains("***") && !line.contains("***Failed")
                        })
                    })
            };
            if let Some(id) = parsed.tests.keys().find(|id| {
                !parsed.msb_names.contains_key(*id)
                    && !id.contains("::doc::")
                    && !should_panic(id)
                    && !unread_ctest_result(id)
            }) {
                failures.push(format!("{case}: no msb name for {id}"));
            }
        }
    }
    assert!(cases >= 60, "only {cases} cases found under {}", root.display());
    for fw in Framework::ALL {
        assert!(frameworks.contains(&fw), "no test data for {fw}");
    }
    assert!(failures.is_empty(), "{} case(s) differ:\n{}", failures.len(), failures.join("\n"));
}
