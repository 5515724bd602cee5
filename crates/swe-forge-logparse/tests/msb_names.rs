//! Multi-SWE-bench naming, checked against the published records of the devset
//! (`data/devset/instances.jsonl`, 22 records in 13 repositories).
//!
//! For each repository, a log in the format its Multi-SWE-bench harness parses is written from
//! the published test names (what that harness saw), parsed, and folded with `msb_rollup`:
//! the names that come out must be exactly the published ones. Then the name shapes our own
//! fixture logs produce per language must be shapes the devset contains (a Java class, a bare
//! Go name, `file:title`, ...).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

use swe_forge_logparse::{Framework, GoSubtests, MsbNaming, msb_rollup, parse, parse_files};

use swe_forge_test_support::DEVSET;

/// Published test names per `org/repo` (keys of every `*_tests` map).
fn published() -> BTreeMap<String, BTreeSet<String>> {
    let text = fs::read_to_string(DEVSET).expect("the devset sits in data/devset");
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let record: serde_json::Value = serde_json::from_str(line).expect("a JSON record");
        let repo = format!("{}/{}", record["org"].as_str().unwrap_or("?"), record["repo"].as_str().unwrap_or("?"));
        let names = out.entry(repo).or_default();
        for (key, value) in record.as_object().expect("an object") {
            if key.ends_with("_tests")
                && let Some(map) = value.as_object()
            {
                names.extend(map.keys().cloned());
            }
        }
    }
    out
}

fn language(repo: &str) -> &'static str {
    match repo {
        "tokio-rs/tracing" | "serde-rs/serde" | "rayon-rs/rayon" => "rust",
        "facebook/zstd" => "c-make-check",
        "nlohmann/json" => "cpp-ctest",
        "yhirose/cpp-httplib" => "cpp-gtest",
        "grpc/grpc-go" => "go",
        "fasterxml/jackson-dataformat-xml" | "alibaba/fastjson2" | "apache/dubbo" => "java",
        "anuraghazra/github-readme-stats" | "darkreader/darkreader" => "jest",
        "axios/axios" => "mocha",
        other => panic!("devset repository {other} has no language here; add it"),
    }
}

/// A log in the format the repository's Multi-SWE-bench harness reads, listing `names` as
/// passing; parsed and rolled up.
fn round_trip(repo: &str, lang: &str, names: &BTreeSet<String>) -> BTreeSet<String> {
    let mut log = String::new();
    let parsed = match lang {
        "rust" => {
            log.push_str("     Running unittests src/lib.rs (target/debug/deps/krate-0123456789abcdef)\n");
            log.push_str(&format!("running {} tests\n", names.len()));
            for n in names {
                log.push_str(&format!("test {n} ... ok\n"));
            }
            parse(Framework::CargoLibtest, log.as_bytes())
        }
        "c-make-check" => {
            for n in names {
                log.push_str(&format!("PASS: {n}\n"));
            }
            parse(Framework::Automake, log.as_bytes())
        }
        "cpp-ctest" => {
            log.push_str("Test project /testbed/build\n");
            for (i, n) in names.iter().enumerate() {
                log.push_str(&format!("      Start {:>3}: {n}\n", i + 1));
                log.push_str(&format!(
                    "{:>3}/{} Test {:>4}: {n} ....   Passed    0.01 sec\n",
                    i + 1,
                    names.len(),
                    format!("#{}", i + 1)
                ));
            }
            parse(Framework::Ctest, log.as_bytes())
        }
        "cpp-gtest" => {
            for n in names {
                log.push_str(&format!("[ RUN      ] {n}\n[       OK ] {n} (0 ms)\n"));
            }
            parse(Framework::Gtest, log.as_bytes())
        }
        "go" => {
            // The harness names a test by its name without the last `/` level, so a published
            // `Test/Group` comes from a subtest one level deeper.
            for n in names {
                let depth = n.matches('/').count();
                log.push_str(&format!("{}--- PASS: {n} (0.00s)\n", "    ".repeat(depth)));
                if depth > 0 {
                    log.push_str(&format!("{}--- PASS: {n}/case (0.00s)\n", "    ".repeat(depth + 1)));
                }
            }
            log.push_str("ok  \texample.com/m\t0.01s\n");
            let mut parsed = parse(Framework::GoTestVerbose, log.as_bytes());
            // The devset's Go repository (grpc-go) is one whose handler names subtests by their
            // parent, as the built-in rules say.
            let (org, name) = repo.split_once('/').expect("org/repo");
            let rule = MsbNaming::builtin().expect("the built-in rules load").go_subtests(org, name);
            assert_eq!(rule, GoSubtests::Base, "{repo}");
            parsed.name_go_subtests(Framework::GoTestVerbose, rule);
            parsed
        }
        "java" => {
            // Both the console and the XML reports must give the class names.
            let mut xml = String::from("<?xml version=\"1.0\"?>\n<testsuites>\n");
            for n in names {
                log.push_str(&format!("[INFO] Running {n}\n"));
                log.push_str(&format!(
                    "[INFO] Tests run: 2, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 0.01 s -- in {n}\n"
                ));
                xml.push_str(&format!(
                    "<testsuite name=\"{n}\"><testcase name=\"a\" classname=\"{n}\"/><testcase name=\"b(int)[1]\" classname=\"{n}\"/></testsuite>\n"
                ));
            }
            xml.push_str("</testsuites>\n");
            let from_xml = parse_files(Framework::JunitXml, &[("TEST-all.xml".to_owned(), xml.into_bytes())]);
            assert_eq!(msb_rollup(&from_xml).keys().cloned().collect::<BTreeSet<_>>(), *names);
            parse(Framework::MavenSurefire, log.as_bytes())
        }
        "jest" => {
            let mut files: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
            for n in names {
                match n.split_once(':') {
                    Some((file, title)) => files.entry(file).or_default().push(title),
                    None => {
                        files.entry(n).or_default();
                    }
                }
            }
            for (file, titles) in files {
                log.push_str(&format!("PASS {file}\n"));
                for t in titles {
                    log.push_str(&format!("  ✓ {t} (3 ms)\n"));
                }
            }
            parse(Framework::Jest, log.as_bytes())
        }
        "mocha" => {
            log.push_str("\n  some suite\n");
            for n in names {
                log.push_str(&format!("    ✔ {n}\n"));
            }
            log.push_str(&format!("\n  {} passing (20ms)\n", names.len()));
            parse(Framework::Mocha, log.as_bytes())
        }
        _ => unreachable!(),
    };
    msb_rollup(&parsed).keys().cloned().collect()
}

#[test]
fn published_names_come_back_unchanged() {
    let published = published();
    assert_eq!(published.len(), 13, "{:?}", published.keys());
    for (repo, names) in &published {
        let got = round_trip(repo, language(repo), names);
        let missing: Vec<_> = names.difference(&got).take(5).collect();
        // One published jest record lists a file's tests without the file itself (its `PASS`
        // line did not match MSB's regex); our log prints it, so a file-level name may be extra.
        let file_of_published_test = |n: &&String| {
            language(repo) == "jest" && !n.contains(':') && names.iter().any(|p| p.starts_with(&format!("{n}:")))
        };
        let extra: Vec<_> = got.difference(names).filter(|n| !file_of_published_test(n)).take(5).collect();
        assert!(missing.is_empty() && extra.is_empty(), "{repo}: missing {missing:?}, extra {extra:?}");
    }
}

/// The shape of a Multi-SWE-bench name per language, as found in the devset.
fn shape(lang: &str, name: &str) -> bool {
    let ident = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_alphanumeric() || c == '_');
    match lang {
        // `module::test` or a bare test name (no binary prefix, no spaces), or a trybuild case
        // (`tests/ui/x.rs`, printed by trybuild as a libtest line).
        "rust" => name.split("::").all(ident) || (name.ends_with(".rs") && !name.contains(char::is_whitespace)),
        // A script path relative to the test directory.
        "c-make-check" => !name.contains(char::is_whitespace) && name.contains('.'),
        // A ctest target: one token.
        "cpp-ctest" => !name.is_empty() && !name.contains(char::is_whitespace),
        // `Suite.Test`, with `/` parts for parameterised tests.
        "cpp-gtest" => name.split_once('.').is_some_and(|(s, t)| !s.is_empty() && !t.is_empty()) && !name.contains(' '),
        // A bare Go name (no package), `/`-separated subtests.
        "go" => {
            let top = name.split('/').next().unwrap_or("");
            ["Test", "Example", "Benchmark", "Fuzz"].iter().any(|p| top.starts_with(p)) && !name.contains(' ')
        }
        // A fully qualified class: lower-case package parts, then a class.
        "java" => {
            let parts: Vec<&str> = name.split('.').collect();
            parts.len() >= 2
                && parts[..parts.len() - 1].iter().all(|p| p.starts_with(|c: char| c.is_lowercase()) && ident(p))
                && parts
                    .last()
                    .is_some_and(|c| c.starts_with(char::is_uppercase) && !c.contains(' ') && !c.contains('#'))
        }
        // `path/file.test.js` or `path/file.test.js:title`.
        "jest" => {
            let file = name.split_once(':').map_or(name, |(f, _)| f);
            file.contains('/') && file.contains(".test") && !file.contains(' ')
        }
        // A bare title: no file, no describe path.
        "mocha" => !name.is_empty() && !name.contains(" > "),
        _ => false,
    }
}

#[test]
fn devset_names_have_the_documented_shapes() {
    for (repo, names) in published() {
        let lang = language(&repo);
        for n in &names {
            assert!(shape(lang, n), "{repo}: published name {n:?} does not have the {lang} shape");
        }
    }
}

fn fixture(case: &str) -> Vec<u8> {
    fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("test_data").join(case)).expect("test data file")
}

#[test]
fn our_names_have_the_devset_shapes() {
    let cases: &[(&str, Framework, &str)] = &[
        ("rust", Framework::CargoLibtest, "cargo-test/no_fail_fast.log"),
        ("go", Framework::GoTestJson, "go-test-json/mixed.log"),
        ("go", Framework::GoTestVerbose, "go-test/mixed.log"),
        ("java", Framework::MavenSurefire, "maven-surefire/junit5_mixed.log"),
        ("java", Framework::JunitXml, "junit-xml/surefire_one_file.log"),
        ("jest", Framework::Jest, "jest/verbose.log"),
        ("jest", Framework::JestJson, "jest-json/with_text_report.log"),
        ("mocha", Framework::Mocha, "mocha/spec.log"),
        ("mocha", Framework::MochaJson, "mocha-json/report.log"),
        ("cpp-ctest", Framework::Ctest, "ctest/serial.log"),
        ("cpp-ctest", Framework::CtestJunit, "ctest-junit/report.log"),
        ("cpp-gtest", Framework::Gtest, "gtest/basic.log"),
        ("cpp-gtest", Framework::GtestXml, "gtest-xml/report.log"),
        ("c-make-check", Framework::Automake, "automake/make_check.log"),
    ];
    for (lang, fw, case) in cases {
        let rolled = msb_rollup(&parse(*fw, &fixture(case)));
        assert!(!rolled.is_empty(), "{case}");
        for name in rolled.keys() {
            assert!(shape(lang, name), "{case}: our name {name:?} does not have the {lang} shape");
        }
    }
}

#[test]
fn java_classes_roll_up_like_multi_swe_bench() {
    use swe_forge_core::TestStatus::{Fail, Pass, Skip};
    let files: Vec<(String, Vec<u8>)> =
        fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("test_data/junit-xml/surefire_reports"))
            .expect("reports")
            .map(|e| {
                let p = e.expect("entry").path();
                (p.file_name().expect("name").to_string_lossy().into_owned(), fs::read(&p).expect("readable"))
            })
            .collect();
    let xml = msb_rollup(&parse_files(Framework::JunitXml, &files));
    let console = msb_rollup(&parse(Framework::MavenSurefire, &fixture("maven-surefire/junit5_mixed.log")));
    let expected = [
        ("com.example.AllGoodTest", Pass),
        ("com.example.CalcTest", Fail),
        ("com.example.CalcTest$Inner", Fail),
        ("com.example.nested.CrashInitTest", Fail),
        ("com.example.nested.SkippedClassTest", Skip),
    ];
    for (class, status) in expected {
        assert_eq!(xml.get(class), Some(&status), "xml {class}");
        assert_eq!(console.get(class), Some(&status), "console {class}");
    }
}
