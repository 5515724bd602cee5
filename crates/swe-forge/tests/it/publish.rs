//! `swe-forge publish`: the Hugging Face Hub layout (data/<split>-00000-of-00001.parquet, README.md
//! with front matter, plots/), the front matter read back by its line structure, the Parquet
//! files read back as records, splits from `curate --splits`, and the refusal of a dataset with no
//! accepted record.

use std::collections::BTreeMap;
use std::path::Path;

use swe_forge_core::ValidationStatus;

use crate::curate::fixture;
use crate::support::{read_records, root, swe_forge, text};

/// The front matter of a card as top-level keys, each with its value (`key: value`) or its
/// lines below it (`- item`, indented lines), after checking that every line has one of these
/// shapes; and the card after it.
fn front_matter(card: &str) -> (BTreeMap<String, Vec<String>>, String) {
    let rest = card.strip_prefix("---\n").expect("the card opens with front matter");
    let end = rest.find("\n---\n").expect("the front matter is closed");
    let mut keys: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut current = String::new();
    for line in rest[..end].lines() {
        if line.starts_with("- ") || line.starts_with("  ") {
            assert!(!current.is_empty(), "{line:?} under no key");
            keys.get_mut(&current).unwrap().push(line.to_owned());
        } else {
            let (key, value) = line.split_once(':').unwrap_or_else(|| panic!("{line:?} is not `key: value`"));
            assert!(key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'), "{key:?}");
            current = key.to_owned();
            let value = value.trim();
            assert!(
                keys.insert(key.to_owned(), if value.is_empty() { vec![] } else { vec![value.to_owned()] }).is_none()
            );
        }
    }
    (keys, rest[end + 5..].to_owned())
}

/// A YAML scalar as written: a JSON string or a plain word.
fn scalar(value: &str) -> String {
    serde_json::from_str(value).unwrap_or_else(|_| value.to_owned())
}

/// The (split, path) pairs of the default config.
fn data_files(keys: &BTreeMap<String, Vec<String>>) -> Vec<(String, String)> {
    let configs = &keys["configs"];
    assert_eq!(configs[..2], ["- config_name: default", "  data_files:"]);
    let mut out = Vec::new();
    for pair in configs[2..].chunks(2) {
        let split = pair[0].strip_prefix("  - split: ").unwrap_or_else(|| panic!("{pair:?}"));
        let path = pair[1].strip_prefix("    path: ").unwrap_or_else(|| panic!("{pair:?}"));
        out.push((scalar(split), scalar(path)));
    }
    out
}

fn publish(dataset: &Path, out: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["publish", "--dataset", dataset.to_str().unwrap(), "--out", out.to_str().unwrap()];
    args.extend_from_slice(extra);
    swe_forge(&args)
}

#[test]
fn publish_writes_the_hub_layout_with_front_matter_card_and_parquet() {
    let tmp = tempfile::tempdir().unwrap();
    let dataset = tmp.path().join("validated.jsonl");
    fixture(&dataset);
    let curated = tmp.path().join("curated.jsonl");
    let splits = tmp.path().join("splits");
    let o = swe_forge(&[
        "curate",
        "--dataset",
        dataset.to_str().unwrap(),
        "--out",
        curated.to_str().unwrap(),
        "--splits",
        splits.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let kept: Vec<String> = read_records(&curated)
        .into_iter()
        .filter(|r| r.status() == ValidationStatus::Accepted && r.swe_forge.as_ref().unwrap().duplicate_of.is_none())
        .map(|r| r.instance_id)
        .collect();
    assert_eq!(kept.len(), 21);

    let hub = tmp.path().join("hub");
    let o = publish(&curated, &hub, &["--license", "mit", "--title", "Fixture set"]);
    assert!(o.status.success(), "{}", text(&o));
    let mut files: Vec<String> = walk(&hub);
    files.sort();
    assert_eq!(
        files,
        [
            "README.md",
            "data/test-00000-of-00001.parquet",
            "plots/difficulty.svg",
            "plots/fix-lines.svg",
            "plots/fixed-tests.svg",
            "plots/languages.svg",
            "plots/rejections.svg",
        ]
    );
    let card = std::fs::read_to_string(hub.join("README.md")).unwrap();
    let (keys, body) = front_matter(&card);
    assert_eq!(
        keys.keys().collect::<Vec<_>>(),
        ["configs", "license", "pretty_name", "size_categories", "tags", "task_categories"]
    );
    assert_eq!(scalar(&keys["pretty_name"][0]), "Fixture set");
    assert_eq!(scalar(&keys["license"][0]), "mit");
    assert_eq!(keys["task_categories"], ["- text-generation"]);
    assert_eq!(keys["tags"], ["- swe-bench", "- code", "- multi-swe-bench"]);
    assert_eq!(keys["size_categories"], ["- n<1K"]);
    assert_eq!(data_files(&keys), [("test".to_owned(), "data/test-00000-of-00001.parquet".to_owned())]);
    assert!(body.starts_with("# Fixture set\n\n21 instances from 12 repositories in 7 languages"), "{body}");
    assert!(body.contains("![instances per language and difficulty](plots/languages.svg)"), "{body}");
    assert!(body.contains("`data/test-00000-of-00001.parquet` (21)"), "{body}");

    let rows = swe_forge_export::read_records(hub.join("data/test-00000-of-00001.parquet")).unwrap();
    assert_eq!(rows.iter().map(|r| r.instance_id.clone()).collect::<Vec<_>>(), kept);
    assert!(rows.iter().all(|r| r.swe_forge.as_ref().unwrap().difficulty.is_some()), "labelled as export does");

    // The language splits curate wrote, one Parquet file each; the default split is gone.
    let o = publish(&curated, &hub, &["--splits", splits.join("lang").to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let card = std::fs::read_to_string(hub.join("README.md")).unwrap();
    let (keys, _) = front_matter(&card);
    assert_eq!(scalar(&keys["license"][0]), "other", "the default license");
    assert_eq!(scalar(&keys["pretty_name"][0]), "curated", "the file's name by default");
    let files = data_files(&keys);
    let names: Vec<&str> = files.iter().map(|f| f.0.as_str()).collect();
    assert_eq!(names, ["c", "cpp", "go", "java", "js", "rust", "ts"]);
    let mut total = 0;
    for (split, path) in &files {
        assert_eq!(*path, format!("data/{split}-00000-of-00001.parquet"));
        let rows = swe_forge_export::read_records(hub.join(path)).unwrap();
        assert!(!rows.is_empty() && rows.iter().all(|r| r.lang.as_deref() == Some(split)), "{split}");
        total += rows.len();
    }
    assert_eq!(total, 21);
    assert!(!hub.join("data/test-00000-of-00001.parquet").exists(), "no stale split");
    let o = publish(&curated, &hub, &["--splits", splits.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("holds no split files"), "{}", text(&o));
}

#[test]
fn publish_refuses_a_dataset_without_accepted_records() {
    let tmp = tempfile::tempdir().unwrap();
    let dataset = tmp.path().join("rejected.jsonl");
    let mut records = fixture(&dataset);
    for r in &mut records {
        r.swe_forge.as_mut().unwrap().status = ValidationStatus::Rejected;
    }
    swe_forge_core::write_jsonl(std::fs::File::create(&dataset).unwrap(), &records).unwrap();
    let hub = tmp.path().join("hub");
    let o = publish(&dataset, &hub, &[]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("has no accepted records (23 records: 23 rejected, 0 not validated)"), "{}", text(&o));
    assert!(!hub.exists(), "nothing written");

    let devset = root().join("data/devset/instances.jsonl");
    let o = publish(&devset, &hub, &[]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("(22 records: 0 rejected, 22 not validated)"), "{}", text(&o));
    assert!(text(&o).contains("run `swe-forge validate`"), "{}", text(&o));
}

/// Every file under `dir`, as a path relative to it with `/` separators.
fn walk(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            out.extend(walk(&path).into_iter().map(|p| format!("{name}/{p}")));
        } else {
            out.push(name);
        }
    }
    out
}
