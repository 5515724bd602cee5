//! The sections of a published dataset's card that tell a reader how to use it: which test names
//! its lists use, how to load it with Hugging Face `datasets`, evaluate predictions with
//! `swe-forge evaluate` or Multi-SWE-bench's harness, and how to cite it (BibTeX with a
//! placeholder owner, `<owner>`, for the publisher to fill in).

use std::fmt::Write as _;

use crate::HubCard;

/// The dataset's name on the Hub from its pretty name: lowercase letters, digits and `-`.
pub fn hub_slug(pretty_name: &str) -> String {
    let mut slug = String::new();
    for c in pretty_name.chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c.to_ascii_lowercase());
        } else if !slug.is_empty() && !slug.ends_with('-') {
            slug.push('-');
        }
    }
    let slug = slug.trim_end_matches('-');
    if slug.is_empty() { "dataset".to_owned() } else { slug.to_owned() }
}

/// What the card says of its test names, by `naming` (`canonical` or `msb`).
fn naming_text(naming: &str) -> &'static str {
    if naming == "msb" {
        "Test names: **Multi-SWE-bench's** (`TestPopEmptyReturnsError`), as its harness reports them \
         (`swe-forge publish --naming msb`, front matter `test_naming: \"msb\"`), in `FAIL_TO_PASS`, `PASS_TO_PASS` \
         and the test maps of every configuration."
    } else {
        "Test names: **swe-forge's canonical ids** (`gostack::TestPopEmptyReturnsError`: the test's file or \
         package, then its name; front matter `test_naming: \"canonical\"`), in `FAIL_TO_PASS`, `PASS_TO_PASS` \
         and the test maps of every configuration. Multi-SWE-bench's harness reports its own names, which do not \
         match these: for it, publish with `swe-forge publish --naming msb`."
    }
}

/// The card's `## Usage` section: the naming, `load_dataset`, `swe-forge evaluate`, and
/// Multi-SWE-bench's harness, for the dataset `<owner>/<slug>`.
pub fn usage_section(card: &HubCard) -> String {
    let repo = format!("<owner>/{}", hub_slug(&card.pretty_name));
    let slug = hub_slug(&card.pretty_name);
    let msb = card.naming == "msb";
    let mut t = String::from("## Usage\n\n");
    let _ = writeln!(t, "{}\n", naming_text(&card.naming));
    t.push_str("With Hugging Face `datasets` (every configuration has a `test` split):\n\n```python\n");
    t.push_str("from datasets import load_dataset\n\n");
    let _ = writeln!(t, "ds = load_dataset(\"{repo}\", split=\"test\")");
    if let Some(lang) = card.configs.iter().find(|c| c.name.starts_with("lang_")) {
        let _ = writeln!(t, "{0} = load_dataset(\"{repo}\", \"{0}\", split=\"test\")", lang.name);
    }
    t.push_str("```\n\nEvaluate predictions (SWE-bench's or Multi-SWE-bench's format) with swe-forge:\n\n```sh\n");
    let _ = writeln!(t, "huggingface-cli download {repo} --repo-type dataset --local-dir {slug}");
    let _ = writeln!(
        t,
        "for f in {slug}/data/instances/*/*/*.parquet; do swe-forge export --records \"$f\" --jsonl -; done > test.jsonl"
    );
    let profile = if msb { " --profile msb" } else { "" };
    let _ = writeln!(t, "swe-forge evaluate --dataset test.jsonl --predictions predictions.jsonl --out eval/{profile}");
    t.push_str("```\n\n");
    if msb {
        t.push_str("`--profile msb` reads the lists in Multi-SWE-bench's names. ");
    }
    t.push_str("Or with Multi-SWE-bench's harness, on the same `test.jsonl` (its records' format), ");
    if msb {
        t.push_str("whose names these lists use:\n\n");
    } else {
        t.push_str(
            "which needs Multi-SWE-bench's names: publish with `--naming msb` first (these lists use canonical \
             ids):\n\n",
        );
    }
    t.push_str(
        "```sh\n# config.json: {\"mode\": \"evaluation\", \"workdir\": \"work\", \"dataset_files\": [\"test.jsonl\"],\n\
         #               \"patch_files\": [\"predictions.jsonl\"], \"output_dir\": \"out\", \"log_dir\": \"logs\"}\n\
         python -m multi_swe_bench.harness.run_evaluation --config config.json\n```\n",
    );
    t
}

/// The card's `## Citation` section: BibTeX of the dataset, its owner a placeholder.
pub fn citation_section(card: &HubCard) -> String {
    let slug = hub_slug(&card.pretty_name);
    let title = card.pretty_name.replace(['{', '}', '\\'], "");
    format!(
        "## Citation\n\nReplace `<owner>` (and `<year>`) with the dataset's:\n\n```bibtex\n\
         @misc{{{key},\n  title = {{{title}}},\n  author = {{<owner>}},\n  year = {{<year>}},\n  \
         howpublished = {{\\url{{https://huggingface.co/datasets/<owner>/{slug}}}}},\n  \
         note = {{Made with swe-forge; test names: {naming}}}\n}}\n```\n",
        key = slug.replace('-', "_"),
        naming = card.naming,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{HubConfig, HubSplit};

    fn card(naming: &str) -> HubCard {
        let split = |path: &str| vec![HubSplit { name: "test".into(), rows: 3, path: path.into() }];
        HubCard {
            pretty_name: "Go: {stack} set!".into(),
            license: "mit".into(),
            other_license: None,
            languages: vec!["en".into()],
            naming: naming.into(),
            configs: vec![
                HubConfig { name: "default".into(), splits: split("data/instances/*/*/test-00000-of-00001.parquet") },
                HubConfig { name: "lang_go".into(), splits: split("data/instances/go/*/test-00000-of-00001.parquet") },
            ],
        }
    }

    #[test]
    fn slugs() {
        assert_eq!(hub_slug("Go: {stack} set!"), "go-stack-set");
        assert_eq!(hub_slug("curated"), "curated");
        assert_eq!(hub_slug("--"), "dataset");
    }

    #[test]
    fn usage_loads_the_test_split_and_says_the_naming() {
        let text = usage_section(&card("canonical"));
        assert!(text.contains("ds = load_dataset(\"<owner>/go-stack-set\", split=\"test\")"), "{text}");
        assert!(
            text.contains("lang_go = load_dataset(\"<owner>/go-stack-set\", \"lang_go\", split=\"test\")"),
            "{text}"
        );
        assert!(text.contains("swe-forge evaluate --dataset test.jsonl --predictions predictions.jsonl --out eval/\n"));
        assert!(text.contains("canonical ids") && text.contains("publish with `--naming msb` first"), "{text}");
        assert!(text.contains("python -m multi_swe_bench.harness.run_evaluation --config config.json"), "{text}");
        let text = usage_section(&card("msb"));
        assert!(text.contains("**Multi-SWE-bench's**") && text.contains("--out eval/ --profile msb\n"), "{text}");
        assert!(!text.contains("first"), "{text}");
    }

    #[test]
    fn citation_is_bibtex_with_a_placeholder_owner() {
        let text = citation_section(&card("msb"));
        assert!(text.contains("@misc{go_stack_set,\n  title = {Go: stack set!},\n  author = {<owner>},"), "{text}");
        assert!(text.contains("https://huggingface.co/datasets/<owner>/go-stack-set}"), "{text}");
        assert!(text.contains("test names: msb}"), "{text}");
        assert_eq!(text.matches('{').count(), text.matches('}').count(), "balanced braces: {text}");
    }
}
