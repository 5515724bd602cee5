//! `swe-forge publish`: the Hugging Face Hub layout (data/<split>-00000-of-00001.parquet, README.md
//! with front matter, plots/), the front matter read back by its line structure, the Parquet
//! files read back as records, splits from `curate --splits`, and the refusal of a dataset with no
//! accepted record.

use std::collections::BTreeMap;
use std::path::Path;

use swe_forge_core::ValidationStatus;

use crate::curate::fixture;
use crate::support::{published_rows, read_records, root, swe_forge, text};

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

/// A configuration's (split, path) pairs.
type DataFiles = Vec<(String, String)>;

/// Every configuration with its (split, path) pairs, in order, after checking that the first
/// is `default` and the only one marked as the default.
fn configs(keys: &BTreeMap<String, Vec<String>>) -> Vec<(String, DataFiles)> {
    let mut out: Vec<(String, DataFiles)> = Vec::new();
    let mut lines = keys["configs"].iter().peekable();
    while let Some(line) = lines.next() {
        let name = line.strip_prefix("- config_name: ").unwrap_or_else(|| panic!("{line:?}"));
        let name = scalar(name);
        if lines.peek().map(|l| l.as_str()) == Some("  default: true") {
            assert!(out.is_empty() && name == "default", "only the first, default, is the default: {name}");
            lines.next();
        }
        assert_eq!(lines.next().map(String::as_str), Some("  data_files:"), "{name}");
        let mut files = Vec::new();
        while lines.peek().is_some_and(|l| l.starts_with("  - split: ")) {
            let split = lines.next().unwrap().strip_prefix("  - split: ").unwrap();
            let path = lines.next().unwrap().strip_prefix("    path: ").unwrap_or_else(|| panic!("{name}"));
            files.push((scalar(split), scalar(path)));
        }
        out.push((name, files));
    }
    assert_eq!(out.first().map(|c| c.0.as_str()), Some("default"));
    out
}

/// The (split, path) pairs of the default config.
fn data_files(keys: &BTreeMap<String, Vec<String>>) -> DataFiles {
    configs(keys).swap_remove(0).1
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
    let mut files: Vec<String> = walk(&hub).into_iter().filter(|f| !f.starts_with("data/")).collect();
    files.sort();
    assert_eq!(
        files,
        [
            ".swe-forge-written",
            "README.md",
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
        ["configs", "language", "license", "pretty_name", "size_categories", "tags", "task_categories", "test_naming"]
    );
    assert_eq!(keys["language"], ["- \"en\""]);
    assert_eq!(scalar(&keys["pretty_name"][0]), "Fixture set");
    assert_eq!(scalar(&keys["license"][0]), "mit");
    assert_eq!(keys["task_categories"], ["- text-generation"]);
    assert_eq!(keys["tags"], ["- swe-bench", "- code", "- multi-swe-bench"]);
    assert_eq!(keys["size_categories"], ["- n<1K"]);
    assert_eq!(
        data_files(&keys),
        [("test".to_owned(), "data/instances/*/*/test-00000-of-00001.parquet".to_owned())],
        "one split, test, of every instance's file"
    );
    assert!(body.starts_with("# Fixture set\n\n21 instances from 12 repositories in 7 languages"), "{body}");
    assert!(body.contains("![instances per language and difficulty](plots/languages.svg)"), "{body}");
    assert!(body.contains("| `default` | `test` | 21 | `data/instances/*/*/test-00000-of-00001.parquet` |"), "{body}");

    // Each instance is stored once, in its language's and repository's file.
    let rows = published_rows(&hub);
    let mut ids: Vec<String> = rows.iter().map(|r| r.instance_id.clone()).collect();
    ids.sort();
    let mut sorted = kept.clone();
    sorted.sort();
    assert_eq!(ids, sorted, "every instance once");
    for r in &rows {
        let repo = hub_name(&format!("{}__{}", r.org, r.repo));
        let file = format!("data/instances/{}/{repo}/test-00000-of-00001.parquet", r.lang.as_ref().unwrap());
        let in_file = swe_forge_export::read_records(hub.join(&file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert!(in_file.iter().any(|x| x.instance_id == r.instance_id), "{file}");
    }
    assert!(rows.iter().all(|r| r.swe_forge.as_ref().unwrap().difficulty.is_some()), "labelled as export does");
    // The default configuration has the flat columns a Hub user filters on (no JSON function):
    // every published instance has a difficulty, the same as its `swe_forge` block's.
    let flat: Vec<_> = walk(&hub)
        .into_iter()
        .filter(|f| f.starts_with("data/instances/"))
        .flat_map(|f| swe_forge_export::read_flat_columns(hub.join(f)).unwrap())
        .collect();
    let rows: Vec<_> = flat.iter().map(|(id, _)| rows.iter().find(|r| r.instance_id == *id).unwrap().clone()).collect();
    assert_eq!(flat.len(), kept.len());
    for ((id, f), r) in flat.iter().zip(&rows) {
        assert_eq!(id, &r.instance_id);
        let label = r.swe_forge.as_ref().unwrap().difficulty.as_ref().unwrap().label.as_str();
        assert_eq!(f.difficulty.as_deref(), Some(label), "{id}");
        assert!(["easy", "medium", "hard"].contains(&label));
        assert_eq!(f, &swe_forge_export::FlatFields::of(r), "{id}");
    }

    // Configurations: every instance, then by language and by repository (the same files, fewer
    // of them), then the SWE-bench rows and the tests table of the same instances; each with one
    // split, `test`; the files they name are every Parquet file on disk, each row in one.
    let all = configs(&keys);
    let names: Vec<&str> = all.iter().map(|c| c.0.as_str()).collect();
    let langs: Vec<&str> = names.iter().filter_map(|n| n.strip_prefix("lang_")).collect();
    assert_eq!(langs, ["c", "cpp", "go", "java", "js", "rust", "ts"]);
    assert_eq!(names.iter().filter(|n| n.starts_with("repo_")).count(), 12, "{names:?}");
    assert_eq!(names[names.len() - 2..], ["swebench", "tests"]);
    let mut on_disk: Vec<String> = walk(&hub).into_iter().filter(|f| f.ends_with(".parquet")).collect();
    on_disk.sort();
    let pairs: std::collections::BTreeSet<(&str, &str, &str)> =
        rows.iter().map(|r| (r.lang.as_deref().unwrap(), r.org.as_str(), r.repo.as_str())).collect();
    assert_eq!(
        on_disk.iter().filter(|f| f.starts_with("data/instances/")).count(),
        pairs.len(),
        "a file per language and repository: {on_disk:?}"
    );
    let mut listed: Vec<String> = all.iter().flat_map(|c| c.1.iter().flat_map(|f| matching(&hub, &f.1))).collect();
    listed.sort();
    listed.dedup();
    assert_eq!(on_disk, listed, "every configuration's files are written, and no other");
    let (mut by_lang, mut by_repo) = (Vec::new(), Vec::new());
    for (name, files) in &all[1..all.len() - 2] {
        assert_eq!(files.len(), 1, "{name}: one split, test");
        assert_eq!(files[0].0, "test");
        let rows: Vec<_> = matching(&hub, &files[0].1)
            .iter()
            .flat_map(|f| swe_forge_export::read_records(hub.join(f)).unwrap())
            .collect();
        let lang = name.strip_prefix("lang_");
        assert!(
            !rows.is_empty()
                && rows.iter().all(|r| lang.map_or(
                    format!("repo_{}", hub_name(&format!("{}__{}", r.org, r.repo))) == *name,
                    |l| r.lang.as_deref() == Some(l)
                )),
            "{name}"
        );
        if lang.is_some() { &mut by_lang } else { &mut by_repo }.extend(rows.into_iter().map(|r| r.instance_id));
    }
    by_lang.sort();
    by_repo.sort();
    assert_eq!((by_lang, by_repo), (sorted.clone(), sorted), "each instance in one language and one repository");
    let swebench = hub.join("data/swebench/test-00000-of-00001.parquet");
    // The SWE-bench rows are `export --format swebench` of the published instances.
    let in_order: Vec<_> = kept.iter().map(|id| rows.iter().find(|r| r.instance_id == *id).unwrap().clone()).collect();
    let published = tmp.path().join("published.jsonl");
    swe_forge_core::write_jsonl(std::fs::File::create(&published).unwrap(), &in_order).unwrap();
    let again = tmp.path().join("swebench.parquet");
    let o = swe_forge(&[
        "export",
        "--records",
        published.to_str().unwrap(),
        "--format",
        "swebench",
        "--parquet",
        again.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        std::fs::read(&swebench).unwrap() == std::fs::read(&again).unwrap(),
        "the SWE-bench rows differ from export's"
    );
    let tests = swe_forge_export::read_tests_parquet(hub.join("data/tests/test-00000-of-00001.parquet")).unwrap();
    assert_eq!(tests.len(), swe_forge_export::test_rows(&rows).len());
    assert!(!tests.is_empty());
    // The language splits curate wrote, one Parquet file each per repository; the default
    // split is gone, and every configuration has a `test` split of all its files.
    let o = publish(&curated, &hub, &["--splits", splits.join("lang").to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let card = std::fs::read_to_string(hub.join("README.md")).unwrap();
    let (keys, _) = front_matter(&card);
    assert_eq!(scalar(&keys["license"][0]), "other", "the default license");
    // `other` names its own license: by default a LICENSE.md naming each repository.
    assert_eq!(scalar(&keys["license_name"][0]), "per-repository");
    assert_eq!(scalar(&keys["license_link"][0]), "LICENSE.md");
    let license = std::fs::read_to_string(hub.join("LICENSE.md")).unwrap();
    assert_eq!(license.lines().filter(|l| l.starts_with("- [") && l.contains("](https://github.com/")).count(), 12);
    assert_eq!(scalar(&keys["pretty_name"][0]), "curated", "the file's name by default");
    let files = data_files(&keys);
    let names: Vec<&str> = files.iter().map(|f| f.0.as_str()).collect();
    assert_eq!(names, ["c", "cpp", "go", "java", "js", "rust", "ts", "test"]);
    let mut total = 0;
    for (split, path) in &files[..7] {
        assert_eq!(*path, format!("data/instances/*/*/{split}-00000-of-00001.parquet"));
        let rows: Vec<_> =
            matching(&hub, path).iter().flat_map(|f| swe_forge_export::read_records(hub.join(f)).unwrap()).collect();
        assert!(!rows.is_empty() && rows.iter().all(|r| r.lang.as_deref() == Some(split)), "{split}");
        total += rows.len();
    }
    assert_eq!(total, 21);
    assert_eq!(files[7], ("test".to_owned(), "data/instances/*/*/*.parquet".to_owned()));
    assert_eq!(matching(&hub, &files[7].1).len(), pairs.len(), "every file, each instance in one");
    for (name, files) in configs(&keys) {
        let test = files.iter().find(|f| f.0 == "test").unwrap_or_else(|| panic!("{name}: no test split"));
        assert!(!matching(&hub, &test.1).is_empty(), "{name}");
        if let Some(lang) = name.strip_prefix("lang_") {
            assert_eq!(
                files,
                [
                    (lang.to_owned(), format!("data/instances/{lang}/*/{lang}-00000-of-00001.parquet")),
                    ("test".to_owned(), format!("data/instances/{lang}/*/*.parquet"))
                ]
            );
        }
    }
    assert!(
        walk(&hub).iter().all(|f| !f.ends_with("/test-00000-of-00001.parquet")),
        "no stale split: {:?}",
        walk(&hub)
    );
    assert!(hub.join("data/swebench/go-00000-of-00001.parquet").exists());
    let o = publish(&curated, &hub, &["--splits", splits.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("holds no split files"), "{}", text(&o));

    // A license of one's own: its id and link as given, no LICENSE.md written; languages as given.
    std::fs::remove_file(hub.join("LICENSE.md")).unwrap();
    let o = publish(
        &curated,
        &hub,
        &[
            "--license-name",
            "forge-1.0",
            "--license-link",
            "https://example.org/forge-1.0",
            "--language",
            "en",
            "--language",
            "de",
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    let (keys, _) = front_matter(&std::fs::read_to_string(hub.join("README.md")).unwrap());
    assert_eq!(scalar(&keys["license_name"][0]), "forge-1.0");
    assert_eq!(scalar(&keys["license_link"][0]), "https://example.org/forge-1.0");
    assert_eq!(keys["language"], ["- \"en\"", "- \"de\""]);
    assert!(!hub.join("LICENSE.md").exists());
    // Those flags with a license the Hub knows, or a language that is not a code: usage errors.
    for extra in [&["--license", "mit", "--license-name", "x"][..], &["--language", "English"]] {
        let o = publish(&curated, &hub, extra);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {}", text(&o));
    }
    // A license or a language the Hub does not know: usage errors naming the accepted values.
    let o = publish(&curated, &hub, &["--license", "MIT-ish"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("\"MIT-ish\" is not a license id the Hub knows"), "{}", text(&o));
    assert!(text(&o).contains("apache-2.0, mit,") && text(&o).contains("cc-by-4.0"), "{}", text(&o));
    let o = publish(&curated, &hub, &["--language", "xx"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("\"xx\" is not an ISO 639-1 code"), "{}", text(&o));
    assert!(text(&o).contains("de, dv,") && text(&o).contains(" en,"), "{}", text(&o));
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

/// `publish` and `report` replace and remove only files they wrote (listed with their SHA-256 in
/// `.swe-forge-written`): a Parquet file under `data/` of someone else, a README.md or LICENSE.md
/// of one's own, or one of theirs edited since, are refused and named, and `--force` replaces
/// them. Before, publish deleted every `*.parquet` under `data/` and both overwrote the two files.
#[test]
fn publish_and_report_touch_only_the_files_they_wrote() {
    let tmp = tempfile::tempdir().unwrap();
    let dataset = tmp.path().join("validated.jsonl");
    fixture(&dataset);
    let hub = tmp.path().join("hub");
    std::fs::create_dir_all(hub.join("data/mine")).unwrap();
    std::fs::write(hub.join("data/mine/keep.parquet"), "someone's table").unwrap();
    let refused = |o: &std::process::Output, says: &str| {
        assert_eq!(o.status.code(), Some(1), "{}", text(o));
        assert!(text(o).contains(says), "{}", text(o));
        assert!(text(o).contains("--force"), "{}", text(o));
    };
    refused(&publish(&dataset, &hub, &[]), "data/mine/keep.parquet");
    assert_eq!(std::fs::read_to_string(hub.join("data/mine/keep.parquet")).unwrap(), "someone's table");
    assert!(!hub.join("README.md").exists(), "nothing written");
    std::fs::remove_dir_all(hub.join("data")).unwrap();

    for own in ["README.md", "LICENSE.md"] {
        std::fs::write(hub.join(own), "my own words").unwrap();
        refused(&publish(&dataset, &hub, &[]), &format!("{own} was not written by swe-forge"));
        assert_eq!(std::fs::read_to_string(hub.join(own)).unwrap(), "my own words");
        std::fs::remove_file(hub.join(own)).unwrap();
    }
    std::fs::write(hub.join("README.md"), "my own words").unwrap();
    refused(
        &swe_forge(&["report", "--dataset", dataset.to_str().unwrap(), "--out", hub.to_str().unwrap()]),
        "README.md",
    );
    assert_eq!(std::fs::read_to_string(hub.join("README.md")).unwrap(), "my own words");

    // --force replaces it; then its own files are its own: a second run replaces them.
    let o = publish(&dataset, &hub, &["--force"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(hub.join("LICENSE.md").exists());
    let o = publish(&dataset, &hub, &[]);
    assert!(o.status.success(), "{}", text(&o));
    let o = swe_forge(&["report", "--dataset", dataset.to_str().unwrap(), "--out", hub.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let o = publish(&dataset, &hub, &[]);
    assert!(o.status.success(), "{}", text(&o));
    // An edit makes the file the editor's.
    let license = std::fs::read_to_string(hub.join("LICENSE.md")).unwrap();
    std::fs::write(hub.join("LICENSE.md"), format!("{license}\nAnd a word of mine.\n")).unwrap();
    refused(&publish(&dataset, &hub, &[]), "LICENSE.md was not written by swe-forge, or was edited since");
    assert!(std::fs::read_to_string(hub.join("LICENSE.md")).unwrap().ends_with("And a word of mine.\n"));
}

/// A name as the Hub accepts it (and swe-forge makes it): letters, digits and `_`.
fn hub_name(s: &str) -> String {
    s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect()
}

/// The files of `hub` a data files pattern matches (`*` within one path segment), sorted.
fn matching(hub: &Path, pattern: &str) -> Vec<String> {
    let p: Vec<&str> = pattern.split('/').collect();
    let mut out: Vec<String> = walk(hub)
        .into_iter()
        .filter(|f| {
            let f: Vec<&str> = f.split('/').collect();
            f.len() == p.len()
                && p.iter().zip(&f).all(|(p, f)| match p.split_once('*') {
                    None => p == f,
                    Some((pre, post)) => f.len() >= pre.len() + post.len() && f.starts_with(pre) && f.ends_with(post),
                })
        })
        .collect();
    out.sort();
    out
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

/// `publish --naming msb` writes Multi-SWE-bench's test names, as `export --naming msb` does, in
/// the instances and SWE-bench rows; the card's text and front matter say which naming the lists
/// use (canonical by default), and the card shows how to load the `test` split, evaluate, and
/// cite the dataset.
#[test]
fn publish_names_tests_as_asked_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("validated.jsonl");
    crate::export::write_records(&input, &crate::export::sample_records());
    let hub = dir.path().join("hub");
    let o = publish(&input, &hub, &["--license", "mit", "--title", "Go stack"]);
    assert!(o.status.success(), "{}", text(&o));
    let card = std::fs::read_to_string(hub.join("README.md")).unwrap();
    let (keys, body) = front_matter(&card);
    assert_eq!(keys["test_naming"], ["\"canonical\""]);
    let rows = published_rows(&hub);
    assert_eq!(rows[0].f2p_tests.keys().collect::<Vec<_>>(), ["gostack::TestPopEmptyReturnsError"]);
    assert!(body.contains("Test names: **swe-forge's canonical ids**"), "{body}");
    assert!(body.contains("ds = load_dataset(\"<owner>/go-stack\", split=\"test\")"), "{body}");
    assert!(body.contains("lang_go = load_dataset(\"<owner>/go-stack\", \"lang_go\", split=\"test\")"), "{body}");
    assert!(body.contains("swe-forge evaluate --dataset test.jsonl --predictions predictions.jsonl"), "{body}");
    assert!(body.contains("multi_swe_bench.harness.run_evaluation") && body.contains("--naming msb"), "{body}");
    assert!(body.contains("```bibtex\n@misc{go_stack,\n  title = {Go stack},\n  author = {<owner>},"), "{body}");

    // Without the runs there is nothing to derive the names from: an error naming the folder.
    let o = publish(&input, &hub, &["--naming", "msb"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("forge-fixtures__gostack-1: --naming msb needs"), "{}", text(&o));
    crate::export::keep_parsed_runs(&dir.path().join("validated.work"));
    let o = publish(&input, &hub, &["--naming", "msb", "--license", "mit", "--title", "Go stack"]);
    assert!(o.status.success(), "{}", text(&o));
    let card = std::fs::read_to_string(hub.join("README.md")).unwrap();
    let (keys, body) = front_matter(&card);
    assert_eq!(keys["test_naming"], ["\"msb\""]);
    assert!(body.contains("Test names: **Multi-SWE-bench's**"), "{body}");
    assert!(body.contains("--out eval/ --profile msb"), "{body}");
    let rows = published_rows(&hub);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].f2p_tests.keys().collect::<Vec<_>>(), ["TestPopEmptyReturnsError"]);
    assert_eq!(rows[0].p2p_tests.keys().collect::<Vec<_>>(), ["TestLen", "TestPushThenPop"]);
    // The SWE-bench rows are those of `export --naming msb --format swebench`.
    let again = dir.path().join("msb-swebench.parquet");
    let (i, a) = (input.to_str().unwrap(), again.to_str().unwrap());
    let o = swe_forge(&["export", "--records", i, "--naming", "msb", "--format", "swebench", "--parquet", a]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        std::fs::read(hub.join("data/swebench/test-00000-of-00001.parquet")).unwrap() == std::fs::read(&again).unwrap(),
        "the SWE-bench rows differ from export --naming msb's"
    );
    // A language configuration's test split reads the instance's one file.
    let configs = configs(&keys);
    let lang = configs.iter().find(|c| c.0 == "lang_go").expect("lang_go");
    assert_eq!(lang.1, [("test".to_owned(), "data/instances/go/*/test-00000-of-00001.parquet".to_owned())]);
    assert_eq!(matching(&hub, &lang.1[0].1).len(), 1);
}
