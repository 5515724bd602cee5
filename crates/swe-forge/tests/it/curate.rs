//! `swe-forge curate` and `swe-forge report` on a fixture dataset made from the devset: human
//! labels over the heuristic, a backport found as a duplicate, date/repository/language splits,
//! schema-valid output, the calibration report, the dataset card with its plots, and `-o -`
//! leaving stdout to the records alone.

use std::path::Path;

use swe_forge_core::{DifficultyLabel, ForgeMeta, Instance, LabelSource, RejectReason, Rejection, ValidationStatus};

use crate::support::{read_records, root, swe_forge, text};

/// The devset as a validated file: every record accepted with a merge date, the last one rejected,
/// and a backport of the first (same fix, other number, re-indented) appended.
pub fn fixture(path: &Path) -> Vec<Instance> {
    let mut records = read_records(&root().join("data/devset/instances.jsonl"));
    for (i, r) in records.iter_mut().enumerate() {
        let mut meta = ForgeMeta::new(ValidationStatus::Accepted);
        meta.merged_at = Some(swe_forge_core::Timestamp::parse(&format!("20{}-06-01T00:00:00Z", 19 + i % 6)).unwrap());
        r.lang = Some(["rust", "c", "cpp", "go", "java", "js", "ts"][i % 7].to_owned());
        r.swe_forge = Some(meta);
    }
    let last = records.len() - 1;
    let meta = records[last].swe_forge.as_mut().unwrap();
    meta.status = ValidationStatus::Rejected;
    meta.rejections.push(Rejection::new(RejectReason::PassToFail, "a::b"));
    let mut backport = records[0].clone();
    backport.number += 5000;
    backport.instance_id = backport.expected_id();
    backport.fix_patch = backport.fix_patch.replace("    ", "  ");
    records.push(backport);
    swe_forge_core::write_jsonl(std::fs::File::create(path).unwrap(), &records).unwrap();
    records
}

#[test]
fn curate_labels_dedups_splits_and_validates_against_the_schema() {
    let tmp = tempfile::tempdir().unwrap();
    let dataset = tmp.path().join("validated.jsonl");
    let records = fixture(&dataset);
    let labels = tmp.path().join("labels.tsv");
    // The second label names no instance: it is ignored with a warning naming it.
    std::fs::write(&labels, format!("instance_id\tlabel\n{}\thard\nnobody__nothing-7\teasy\n", records[1].instance_id))
        .unwrap();
    let out = tmp.path().join("curated.jsonl");
    let splits = tmp.path().join("splits");
    let o = swe_forge(&[
        "curate",
        "--dataset",
        dataset.to_str().unwrap(),
        "--labels",
        labels.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--splits",
        splits.to_str().unwrap(),
        "--cutoff",
        "2022-01-01",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("warning: 1 label(s) of ") && text(&o).contains("are ignored: nobody__nothing-7"),
        "{}",
        text(&o)
    );
    assert!(
        text(&o).contains(
            "23 records: 1 labelled by people, 0 reviewed (0 dropped by the keep rule), 0 decided (0 dropped, 0 need work), 1 duplicates (1 of them dropped from the kept set, as the card counts); 21 kept"
        ),
        "{}",
        text(&o)
    );
    let curated = read_records(&out);
    let meta = |i: usize| curated[i].swe_forge.clone().unwrap();
    let d1 = meta(1).difficulty.unwrap();
    assert_eq!((d1.label, d1.source), (DifficultyLabel::Hard, LabelSource::Human));
    assert!(curated.iter().all(|r| r.swe_forge.as_ref().unwrap().difficulty.is_some()));
    assert_eq!(meta(22).duplicate_of.unwrap().of, records[0].instance_id);

    // Splits hold the 21 kept records: each kind partitions them.
    let count = |p: &Path| read_records(p).len();
    let date: usize = ["before-2022-01-01", "from-2022-01-01", "undated"]
        .iter()
        .map(|n| count(&splits.join(format!("date/{n}.jsonl"))))
        .sum();
    assert_eq!(date, 21);
    assert_eq!(count(&splits.join("date/before-2022-01-01.jsonl")), 12);
    let by = |kind: &str| -> usize {
        let files = std::fs::read_dir(splits.join(kind)).unwrap().map(|e| e.unwrap().path());
        // Beside the splits, the marker that makes the folder curate's own.
        files.filter(|p| !p.ends_with(".swe-forge-splits")).map(|p| count(&p)).sum()
    };
    assert!(splits.join("repo/.swe-forge-splits").is_file());
    assert_eq!((by("repo"), by("lang")), (21, 21));
    assert_eq!(count(&splits.join("repo/nlohmann__json.jsonl")), 3);

    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root().join("schemas/instance.schema.json")).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    for line in std::fs::read_to_string(&out).unwrap().lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let errors: Vec<String> = validator.iter_errors(&v).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{}: {errors:?}", v["instance_id"]);
    }

    // The dataset card of the curated file.
    let card_dir = tmp.path().join("card");
    let o = swe_forge(&[
        "report",
        "--dataset",
        out.to_str().unwrap(),
        "--out",
        card_dir.to_str().unwrap(),
        "--title",
        "Fixture set",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let card = std::fs::read_to_string(card_dir.join("README.md")).unwrap();
    assert!(card.starts_with("# Fixture set\n\n21 instances from 12 repositories in 7 languages"), "{card}");
    assert!(card.contains("| accepted by validation | 22 | 1 rejected, 0 not validated |"), "{card}");
    assert!(card.contains("| not a duplicate | 21 | 1 |"), "{card}");
    assert!(card.contains("| `pass_to_fail` | 1 |"), "{card}");
    for plot in ["languages", "difficulty", "rejections", "fix-lines", "fixed-tests"] {
        let svg = std::fs::read_to_string(card_dir.join(format!("plots/{plot}.svg"))).unwrap();
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>\n"), "{plot}");
    }
}

#[test]
fn calibrate_prints_agreement_with_human_labels() {
    let tmp = tempfile::tempdir().unwrap();
    let labels = tmp.path().join("labels.jsonl");
    let records = read_records(&root().join("data/devset/instances.jsonl"));
    let lines: String = records
        .iter()
        .enumerate()
        .map(|(i, r)| {
            format!(
                "{{\"instance_id\": \"{}\", \"lang\": \"x\", \"label\": \"{}\"}}\n",
                r.instance_id,
                ["easy", "medium", "hard"][i % 3]
            )
        })
        .collect();
    std::fs::write(&labels, lines).unwrap();
    let devset = root().join("data/devset/instances.jsonl");
    let o =
        swe_forge(&["curate", "--dataset", devset.to_str().unwrap(), "--calibrate", labels.to_str().unwrap(), "--fit"]);
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("| x | 22 |") && out.contains("| human \\ heuristic | easy | medium | hard | total |"),
        "{out}"
    );
    assert!(out.contains("Best thresholds for these weights"), "{out}");
    let o = swe_forge(&["curate", "--dataset", devset.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "--out is required: {}", text(&o));
}

#[test]
fn every_exported_record_has_a_difficulty_label() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out.jsonl");
    let devset = root().join("data/devset/instances.jsonl");
    let o = swe_forge(&["export", "--records", devset.to_str().unwrap(), "--all", "--jsonl", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let exported = read_records(&out);
    assert_eq!(exported.len(), 22);
    for r in &exported {
        let d = r.swe_forge.as_ref().and_then(|m| m.difficulty.clone()).unwrap();
        assert_eq!((d.source, d.label), (LabelSource::Heuristic, d.heuristic), "{}", r.instance_id);
    }
}

/// Curate streams a regular file in two passes and reads stdin into memory: both give the same
/// bytes, duplicates included, with and without `--kept-only`.
#[test]
fn curate_of_a_file_in_two_passes_equals_curate_of_stdin_in_memory() {
    let tmp = tempfile::tempdir().unwrap();
    let dataset = tmp.path().join("validated.jsonl");
    fixture(&dataset);
    let splits = ["--cutoff", "2020-01-01", "--split-by", "repo,lang"];
    for extra in [&[][..], &["--kept-only"][..], &splits[..]] {
        let with_splits = extra.len() > 1;
        let from_file = tmp.path().join("from-file.jsonl");
        let mut args = vec!["curate", "--dataset", dataset.to_str().unwrap(), "--out", from_file.to_str().unwrap()];
        let file_splits = tmp.path().join("file-splits");
        if with_splits {
            args.extend(["--splits", file_splits.to_str().unwrap()]);
        }
        args.extend(extra);
        let o = swe_forge(&args);
        assert!(o.status.success(), "{}", text(&o));
        let from_stdin = tmp.path().join("from-stdin.jsonl");
        let mut args = vec!["curate", "--dataset", "-", "--out", from_stdin.to_str().unwrap()];
        let stdin_splits = tmp.path().join("stdin-splits");
        if with_splits {
            args.extend(["--splits", stdin_splits.to_str().unwrap()]);
        }
        args.extend(extra);
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_swe-forge"))
            .args(&args)
            .stdin(std::fs::File::open(&dataset).unwrap())
            .env("SWE_FORGE_NO_PROGRESS", "1")
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o));
        let (a, b) = (std::fs::read(&from_file).unwrap(), std::fs::read(&from_stdin).unwrap());
        assert!(!a.is_empty());
        assert!(a == b, "{extra:?}: the two-pass output differs from the in-memory one");
        let curated = read_records(&from_file);
        assert!(
            curated.iter().any(|r| r.swe_forge.as_ref().is_some_and(|m| m.duplicate_of.is_some())) || !extra.is_empty()
        );
        if with_splits {
            // The splits written from the stream's spool are the in-memory ones, file for file.
            let files = |dir: &std::path::Path| -> Vec<(String, Vec<u8>)> {
                let mut out = Vec::new();
                for kind in ["date", "repo", "lang"] {
                    let mut names: Vec<_> =
                        std::fs::read_dir(dir.join(kind)).unwrap().map(|e| e.unwrap().path()).collect();
                    names.sort();
                    for p in names {
                        out.push((
                            format!("{kind}/{}", p.file_name().unwrap().to_string_lossy()),
                            std::fs::read(&p).unwrap(),
                        ));
                    }
                }
                out
            };
            let (a, b) = (files(&file_splits), files(&stdin_splits));
            assert!(a.len() > 5 && a.iter().any(|(_, bytes)| !bytes.is_empty()), "{a:?}");
            assert!(a == b, "the splits of the two-pass curate differ from the in-memory ones");
        }
    }
}

/// `curate` and the card count duplicates alike: a duplicate mark on a record validation rejected
/// drops nothing, and both say how many marks there are and how many records they drop.
#[test]
fn curate_and_the_card_count_duplicates_alike() {
    let tmp = tempfile::tempdir().unwrap();
    let dataset = tmp.path().join("validated.jsonl");
    let mut records = fixture(&dataset);
    // A backport of the rejected record: a second mark, on a record that is not kept anyway.
    let rejected = records.iter().find(|r| r.status() == ValidationStatus::Rejected).unwrap();
    let mut copy = rejected.clone();
    copy.number += 7000;
    copy.instance_id = copy.expected_id();
    records.push(copy);
    swe_forge_core::write_jsonl(std::fs::File::create(&dataset).unwrap(), &records).unwrap();
    let out = tmp.path().join("curated.jsonl");
    let o = swe_forge(&["curate", "--dataset", dataset.to_str().unwrap(), "--out", out.to_str().unwrap(), "--json"]);
    assert!(o.status.success(), "{}", text(&o));
    let summary: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o)));
    assert_eq!((summary["duplicates"].as_u64(), summary["duplicates_dropped"].as_u64()), (Some(2), Some(1)));
    assert_eq!((summary["records"].as_u64(), summary["kept"].as_u64()), (Some(24), Some(21)));
    assert_eq!(summary["out"].as_str(), out.to_str());

    let card_dir = tmp.path().join("card");
    let o = swe_forge(&["report", "--dataset", out.to_str().unwrap(), "--out", card_dir.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let card = std::fs::read_to_string(card_dir.join("README.md")).unwrap();
    assert!(card.contains("| not a duplicate | 21 | 1 (2 marked in the file) |"), "{card}");
}

/// `curate` computes the text quality signals of every record validation did not reject, counts
/// each flag of the kept set, and `--require-quality` keeps only the records that raise none; the
/// card gives each flag's share of the curated records.
#[test]
fn curate_require_quality_keeps_the_unflagged_and_the_card_gives_each_flags_share() {
    let tmp = tempfile::tempdir().unwrap();
    let dataset = tmp.path().join("validated.jsonl");
    fixture(&dataset);
    let out = tmp.path().join("curated.jsonl");
    let args = ["curate", "--dataset", dataset.to_str().unwrap(), "--out", out.to_str().unwrap()];
    let o = swe_forge(&[&args[..], &["--json", "--require-quality", "--kept-only"]].concat());
    assert!(o.status.success(), "{}", text(&o));
    let summary: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o)));
    // zstd-3530 and github-readme-stats-3442 test functions their issues never name;
    // fastjson2-82's issue is a screenshot.
    assert_eq!(summary["flags"]["unnamed_identifiers"].as_u64(), Some(2), "{summary}");
    assert_eq!(summary["flags"]["unspecific"].as_u64(), Some(1), "{summary}");
    assert_eq!(summary["flags"]["solution_leak"].as_u64(), Some(0), "{summary}");
    assert_eq!((summary["flagged_dropped"].as_u64(), summary["kept"].as_u64()), (Some(3), Some(18)), "{summary}");
    let kept: Vec<String> = read_records(&out).into_iter().map(|r| r.instance_id).collect();
    assert_eq!(kept.len(), 18);
    assert!(!kept.iter().any(|id| id == "facebook__zstd-3530" || id == "alibaba__fastjson2-82"), "{kept:?}");

    // Without --require-quality every kept record is written, its signals with it; the sentence
    // names the flags.
    let o = swe_forge(&args);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("quality flags of the 21 kept records: no_issue_text 0, solution_leak 0, unnamed_identifiers 2, unspecific 1, untested_hunks 0, flaky 0"),
        "{}",
        text(&o)
    );
    let all = read_records(&out);
    let zstd = all.iter().find(|r| r.instance_id == "facebook__zstd-3530").unwrap();
    let q = zstd.swe_forge.as_ref().unwrap().quality.as_ref().unwrap();
    let names: Vec<&str> = q.unnamed_identifiers.iter().map(|u| u.name.as_str()).collect();
    assert_eq!(names, ["ZSTD_CCtx_setFParams", "ZSTD_CCtx_setParams"]);
    let rejected = all.iter().find(|r| r.status() == ValidationStatus::Rejected).unwrap();
    assert!(rejected.swe_forge.as_ref().unwrap().quality.is_none(), "a rejected record is not assessed");
    let card_dir = tmp.path().join("card");
    let o = swe_forge(&["report", "--dataset", out.to_str().unwrap(), "--out", card_dir.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let card = std::fs::read_to_string(card_dir.join("README.md")).unwrap();
    assert!(
        card.contains("| `unnamed_identifiers` | the tests need names the issue never gives | 2 | 10 % |"),
        "{card}"
    );
    assert!(card.contains("Shares are of the 21 kept instances that carry quality signals; 0 carry none"), "{card}");
}

/// Under `--require-quality` the two counts of kept records agree: the sentence's is the kept
/// set, the flag line says its count is of the records kept before the quality rule, and how
/// many are kept after it (issue #60: "21 kept" beside "18 kept").
#[test]
fn curate_require_quality_says_what_each_kept_count_counts() {
    let tmp = tempfile::tempdir().unwrap();
    let dataset = tmp.path().join("validated.jsonl");
    fixture(&dataset);
    let out = tmp.path().join("curated.jsonl");
    let args = ["curate", "--dataset", dataset.to_str().unwrap(), "--out", out.to_str().unwrap(), "--no-store"];
    let o = swe_forge(&[&args[..], &["--require-quality"]].concat());
    assert!(o.status.success(), "{}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains(", 3 with a quality flag; 18 kept; 23 written to"), "{stdout}");
    assert!(
        stdout.contains(
            "quality flags of the 21 records kept before the quality-flag rules (--require-quality, --drop-flag), 18 kept after them: no_issue_text 0,"
        ),
        "{stdout}"
    );
    assert!(!stdout.contains("21 kept"), "{stdout}");
}

/// `curate -o -` writes the records to stdout and nothing else, with or without `-q` and `--json`:
/// its summary goes to stderr.
#[test]
fn curate_to_stdout_writes_only_records_there() {
    let tmp = tempfile::tempdir().unwrap();
    let dataset = tmp.path().join("validated.jsonl");
    let records = fixture(&dataset);
    for extra in [&[][..], &["-q"], &["--json"]] {
        let mut args = vec!["curate", "--dataset", dataset.to_str().unwrap(), "-o", "-", "--no-store"];
        args.extend(extra);
        let o = swe_forge(&args);
        assert!(o.status.success(), "{extra:?}: {}", text(&o));
        let stdout = String::from_utf8(o.stdout.clone()).unwrap();
        let lines: Vec<&str> = stdout.lines().collect();
        assert_eq!(lines.len(), records.len(), "{extra:?}: {stdout}");
        for line in lines {
            let r: swe_forge_core::Instance =
                serde_json::from_str(line).unwrap_or_else(|e| panic!("{extra:?}: not a record ({e}): {line}"));
            assert!(!r.instance_id.is_empty());
        }
        let stderr = String::from_utf8_lossy(&o.stderr);
        let summary = if extra == ["--json"] { "\"out\":\"-\"" } else { "written to -" };
        assert!(stderr.contains(summary), "{extra:?}: the summary: {stderr}");
    }
}
