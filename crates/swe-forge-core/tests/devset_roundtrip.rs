//! The 22 published Multi-SWE-bench records read and write back without loss.

use std::io::BufRead;

const DEVSET: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/devset/instances.jsonl");

#[test]
fn devset_records_round_trip_without_loss() {
    let text = std::fs::read_to_string(DEVSET).expect("the shared devset sits next to the repository");
    let records = swe_forge_core::read_jsonl(text.as_bytes()).unwrap();
    assert_eq!(records.len(), 22);
    let mut out = Vec::new();
    swe_forge_core::write_jsonl(&mut out, &records).unwrap();
    let originals: Vec<serde_json::Value> =
        text.lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).unwrap()).collect();
    let written: Vec<serde_json::Value> = out.lines().map(|l| serde_json::from_str(&l.unwrap()).unwrap()).collect();
    assert_eq!(originals.len(), written.len());
    for (a, b) in originals.iter().zip(&written) {
        assert_eq!(a, b, "record {} changed on the way through", a["instance_id"]);
    }
    for r in &records {
        assert_eq!(r.instance_id, r.expected_id());
        for res in [&r.run_result, &r.test_patch_result, &r.fix_patch_result] {
            assert_eq!(res.passed_count as usize, res.passed_tests.len());
        }
    }
}

#[test]
fn malformed_record_names_line_and_field() {
    let good = std::fs::read_to_string(DEVSET).unwrap().lines().next().unwrap().to_string();
    let mut bad: serde_json::Value = serde_json::from_str(&good).unwrap();
    bad["base"]["sha"] = serde_json::json!(42);
    let input = format!("{good}\n\n{bad}\n");
    let err = swe_forge_core::read_jsonl(input.as_bytes()).unwrap_err();
    let msg = err.to_string();
    assert!(msg.starts_with("line 3: field `base.sha`"), "{msg}");
    assert!(msg.contains("expected a string"), "{msg}");
    // The file's line once: serde's own position (it reads the line alone: "line 1") is the
    // column only (issue #60).
    assert!(!msg.contains("line 1") && msg.contains(", at column "), "{msg}");
}

#[test]
fn names_that_would_leave_their_folder_and_repeated_ids_are_refused() {
    let good = std::fs::read_to_string(DEVSET).unwrap().lines().next().unwrap().to_string();
    let record: serde_json::Value = serde_json::from_str(&good).unwrap();
    for (field, value, why) in [
        ("instance_id", "/etc/passwd", "holds a path separator"),
        ("instance_id", "..", "names a folder above or at its own"),
        ("org", "a/../../b", "holds a path separator"),
        ("repo", "x\u{1b}[31m", "holds a control character"),
        ("repo", "", "is empty"),
    ] {
        let mut bad = record.clone();
        bad[field] = serde_json::json!(value);
        let err = swe_forge_core::read_jsonl(format!("{good}\n{bad}\n").as_bytes()).unwrap_err().to_string();
        assert!(err.starts_with(&format!("line 2: field `{field}`")) && err.ends_with(why), "{err}");
    }
    let err = swe_forge_core::read_jsonl(format!("{good}\n\n{good}\n").as_bytes()).unwrap_err().to_string();
    assert!(err.starts_with("line 3: instance ") && err.ends_with("already appeared on line 1"), "{err}");
    // An append-only log may repeat an id: every line comes back.
    assert_eq!(swe_forge_core::read_jsonl_log(format!("{good}\n{good}\n").as_bytes()).unwrap().len(), 2);
}

/// A record whose `instance_id` names another pull request (or another repository) is refused
/// where records are read, naming the line and the id it should have; before, it was read and its
/// runs, images and reviews filed under the wrong instance. Dates out of range (`T25:61:61Z`, year
/// 0000) are refused the same way, naming the field.
#[test]
fn ids_that_name_another_pull_request_and_impossible_dates_are_refused() {
    let good = std::fs::read_to_string(DEVSET).unwrap().lines().next().unwrap().to_string();
    let record: serde_json::Value = serde_json::from_str(&good).unwrap();
    let expected = record["instance_id"].as_str().unwrap().to_owned();
    let mut other = record.clone();
    other["number"] = serde_json::json!(record["number"].as_u64().unwrap() + 1);
    let err = swe_forge_core::read_jsonl(format!("{other}\n").as_bytes()).unwrap_err().to_string();
    assert!(err.starts_with(&format!("line 1: field `instance_id`: {expected:?} is not ")), "{err}");
    let mut renamed = record.clone();
    renamed["instance_id"] = serde_json::json!("someone__else-1");
    let err = swe_forge_core::read_jsonl(format!("{good}\n{renamed}\n").as_bytes()).unwrap_err().to_string();
    assert!(err.contains(&format!("line 2: field `instance_id`: \"someone__else-1\" is not {expected:?}")), "{err}");
    // No id at all is the expected one.
    let mut blank = record.clone();
    blank["instance_id"] = serde_json::json!("");
    let read = swe_forge_core::read_jsonl(format!("{blank}\n").as_bytes()).unwrap();
    assert_eq!(read[0].instance_id, expected);

    let meta = serde_json::to_value(swe_forge_core::ForgeMeta::new(swe_forge_core::ValidationStatus::Candidate));
    for (field, date) in [
        ("created_at", "2024-06-01T25:61:61Z"),
        ("merged_at", "0000-01-01T00:00:00Z"),
        ("merged_at", "2024-06-01T12:00:00"),
    ] {
        let mut dated = record.clone();
        dated["swe_forge"] = meta.as_ref().unwrap().clone();
        dated["swe_forge"][field] = serde_json::json!(date);
        let err = swe_forge_core::read_jsonl(format!("{dated}\n").as_bytes()).unwrap_err().to_string();
        assert!(err.starts_with(&format!("line 1: field `swe_forge.{field}`")) && err.contains(date), "{err}");
    }
}

#[test]
fn records_validate_against_the_published_schema() {
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../schemas/instance.schema.json")).unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let text = std::fs::read_to_string(DEVSET).unwrap();
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let errors: Vec<String> = validator.iter_errors(&v).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{}: {errors:?}", v["instance_id"]);
    }
    // The schema is not vacuous: a record without `base` or with a bad status is refused.
    let mut bad: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    bad["f2p_tests"]["x"] = serde_json::json!({"run": "PASS", "test": "MAYBE", "fix": "PASS"});
    assert!(!validator.is_valid(&bad));
    bad.as_object_mut().unwrap().remove("base");
    assert!(!validator.is_valid(&bad));
}

/// A record with a parser name: the first devset record with a `swe_forge` block naming `parser`
/// and `results_parser`, as JSON.
fn with_parsers(parser: &str, results_parser: &str) -> String {
    let good = std::fs::read_to_string(DEVSET).unwrap().lines().next().unwrap().to_string();
    let mut record: serde_json::Value = serde_json::from_str(&good).unwrap();
    record["swe_forge"] = serde_json::json!({
        "schema_version": 1, "status": "accepted", "parser": parser, "results_parser": results_parser
    });
    record.to_string()
}

#[test]
fn every_parser_name_reads_typed_and_writes_back_byte_for_byte() {
    for fw in swe_forge_core::Framework::ALL {
        let records = swe_forge_core::read_jsonl(with_parsers(fw.name(), fw.name()).as_bytes()).unwrap();
        let meta = records[0].swe_forge.as_ref().unwrap();
        assert_eq!((meta.parser, meta.results_parser), (Some(fw), Some(fw)));
        let mut first = Vec::new();
        swe_forge_core::write_jsonl(&mut first, &records).unwrap();
        let text = String::from_utf8(first.clone()).unwrap();
        assert!(text.contains(&format!(r#""parser":"{}""#, fw.name())), "{text}");
        assert!(text.contains(&format!(r#""results_parser":"{}""#, fw.name())), "{text}");
        let mut again = Vec::new();
        swe_forge_core::write_jsonl(&mut again, &swe_forge_core::read_jsonl(&first[..]).unwrap()).unwrap();
        assert_eq!(first, again, "{}", fw.name());
    }
}

#[test]
fn an_unknown_parser_name_is_refused_naming_the_field_and_the_known_names() {
    for (field, line) in
        [("parser", with_parsers("pytest", "junit-xml")), ("results_parser", with_parsers("go-test", "xunit"))]
    {
        let err = swe_forge_core::read_jsonl(format!("\n{line}\n").as_bytes()).unwrap_err();
        let swe_forge_core::RecordError::Malformed { line: 2, field: ref path, ref message } = err else {
            panic!("{err:?}")
        };
        assert_eq!(path, &format!("swe_forge.{field}"));
        assert!(
            message.starts_with("unknown log parser `") && message.contains("(known: go-test-json, go-test, "),
            "{message}"
        );
        let known: Vec<&str> = swe_forge_core::Framework::ALL.iter().map(|f| f.name()).collect();
        assert!(message.contains(&format!("(known: {})", known.join(", "))), "{message}");
    }
}

#[test]
fn the_schema_names_exactly_the_parsers_a_record_reads() {
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../schemas/instance.schema.json")).unwrap(),
    )
    .unwrap();
    let listed: Vec<&str> =
        schema["$defs"]["parser"]["enum"].as_array().unwrap().iter().map(|n| n.as_str().unwrap()).collect();
    let known: Vec<&str> = swe_forge_core::Framework::ALL.iter().map(|f| f.name()).collect();
    assert_eq!(listed, known, "schemas/instance.schema.json lists other parsers than Framework::ALL");
    let validator = jsonschema::validator_for(&schema).unwrap();
    let valid = |line: String| validator.is_valid(&serde_json::from_str(&line).unwrap());
    assert!(valid(with_parsers("go-test", "junit-xml")));
    assert!(!valid(with_parsers("pytest", "junit-xml")) && !valid(with_parsers("go-test", "xunit")));
}
