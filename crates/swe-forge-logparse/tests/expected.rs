//! Golden tests: every `test_data/<framework>/<case>.log` is parsed with the framework its
//! folder names and compared with `<case>.json` (canonical id -> status). Run with
//! `UPDATE_EXPECT=1` to rewrite the JSON files from the current parser output.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use swe_forge_core::TestStatus;
use swe_forge_logparse::{Framework, detect, parse};

#[test]
fn every_log_matches_its_expected_statuses() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("test_data");
    let update = std::env::var_os("UPDATE_EXPECT").is_some_and(|v| v == "1");
    let mut cases = 0;
    let mut failures = Vec::new();
    let mut dirs: Vec<_> =
        fs::read_dir(&root).expect("test_data exists").map(|e| e.expect("dir entry").path()).collect();
    dirs.sort();
    for dir in dirs.iter().filter(|d| d.is_dir()) {
        let dir_name = dir.file_name().and_then(|n| n.to_str()).expect("utf-8 folder name");
        let framework: Framework = dir_name.parse().unwrap_or_else(|e| panic!("test_data/{dir_name}: {e}"));
        let mut logs: Vec<_> = fs::read_dir(dir)
            .expect("readable folder")
            .map(|e| e.expect("dir entry").path())
            .filter(|p| p.extension().is_some_and(|x| x == "log"))
            .collect();
        logs.sort();
        for log_path in logs {
            cases += 1;
            let case = format!("{dir_name}/{}", log_path.file_stem().and_then(|s| s.to_str()).unwrap_or("?"));
            let log = fs::read(&log_path).expect("readable log");
            let parsed = parse(framework, &log);
            let json_path = log_path.with_extension("json");
            if update {
                let mut text = serde_json::to_string_pretty(&parsed.tests).expect("serialisable");
                text.push('\n');
                fs::write(&json_path, text).expect("writable expectation");
                continue;
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
            if !expected.is_empty() && detect(&log) != Some(framework) {
                failures.push(format!("{case}: detect gave {:?}", detect(&log)));
            }
            // Every MSB name belongs to a parsed test.
            if let Some(id) = parsed.msb_names.keys().find(|id| !parsed.tests.contains_key(*id)) {
                failures.push(format!("{case}: msb name for unknown id {id}"));
            }
        }
    }
    assert!(cases >= 20, "only {cases} cases found under {}", root.display());
    assert!(failures.is_empty(), "{} case(s) differ:\n{}", failures.len(), failures.join("\n"));
}
