//! The Hugging Face Hub's side of a published dataset folder: where a table's split file goes
//! (`data/<folder>/<split>-00000-of-00001.parquet`), what a split may be called, and the YAML front
//! matter of its `README.md` (configurations with data files per split, license, language, task
//! categories, tags, size category, pretty name). Text only; the binary writes the files.

use std::fmt::Write as _;

/// Tags every published dataset carries.
pub const HUB_TAGS: [&str; 3] = ["swe-bench", "code", "multi-swe-bench"];

/// The name of the configuration that holds every instance, the one the Hub loads by default.
pub const DEFAULT_CONFIG: &str = "default";

/// What the front matter says of a dataset.
#[derive(Debug, Clone)]
pub struct HubCard {
    /// The dataset's display name.
    pub pretty_name: String,
    /// A license id the Hub knows (`apache-2.0`, `mit`, `cc-by-4.0`, ...; `other` when none fits).
    pub license: String,
    /// With `other`: the license's own id (`license_name`) and where it is (`license_link`: a
    /// file of the dataset folder or a URL), as the Hub asks for them.
    pub other_license: Option<(String, String)>,
    /// The natural languages of the instances' text (ISO 639-1, `en`): the Hub's `language`.
    pub languages: Vec<String>,
    /// The test names of the test maps and lists: `canonical` (swe-forge's ids) or `msb`
    /// (Multi-SWE-bench's), the front matter's `test_naming`.
    pub naming: String,
    /// The configurations, each with its splits; the first is [`DEFAULT_CONFIG`] (every instance),
    /// the others subsets or other tables of the same instances.
    pub configs: Vec<HubConfig>,
}

/// One configuration of the dataset: a name, and its splits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HubConfig {
    /// The configuration's name (`default`, `lang_go`, `repo_org__name`, `swebench`, `tests`).
    pub name: String,
    /// Its splits, in order; one of them is `test`.
    pub splits: Vec<HubSplit>,
}

/// One split of a configuration: its name, its number of rows, and its files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HubSplit {
    /// The split's name (`test`, or a split of `--splits`).
    pub name: String,
    /// Its number of rows.
    pub rows: usize,
    /// Its files, relative to the dataset folder: one path, or a glob pattern (`*` matches
    /// within one path segment), so that configurations read the same files instead of copies.
    pub path: String,
}

/// The file of a table's split, relative to the dataset folder:
/// `data/<folder>/<split>-00000-of-00001.parquet`, or with `split` `*` the pattern of every split.
pub fn split_file(folder: &str, split: &str) -> String {
    if split == "*" {
        format!("data/{folder}/*.parquet")
    } else {
        format!("data/{folder}/{split}-00000-of-00001.parquet")
    }
}

/// A split name the Hub accepts (words of letters, digits and `_`, joined by `.`) made from a
/// file stem: anything else becomes `_` (`before-2024-01-01` -> `before_2024_01_01`, `c++` -> `c__`).
pub fn split_name(stem: &str) -> String {
    let name: String = stem.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect();
    if name.is_empty() { "_".into() } else { name }
}

/// Whether `id` can stand unquoted in the front matter as a license id (of `license_name`, a
/// license of one's own).
pub fn valid_license(id: &str) -> bool {
    !id.is_empty() && id.chars().all(|c| c.is_ascii_alphanumeric() || ".+-_".contains(c))
}

/// The lines of a list under `data/` that are not blank or a `#` comment.
fn listed(text: &'static str) -> impl Iterator<Item = &'static str> {
    text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#'))
}

/// The license ids the Hub knows, in the order of its documentation (`data/licenses.txt`).
pub fn hub_licenses() -> Vec<&'static str> {
    listed(include_str!("../data/licenses.txt")).collect()
}

/// Whether `id` is one of the Hub's license ids ([`hub_licenses`]), `other` included.
pub fn hub_license(id: &str) -> bool {
    hub_licenses().contains(&id)
}

/// The ISO 639-1 codes the Hub reads as a dataset's `language`, sorted (`data/languages.txt`).
pub fn hub_languages() -> Vec<&'static str> {
    listed(include_str!("../data/languages.txt")).collect()
}

/// The Hub's size category of a dataset of `rows` rows (`n<1K`, `1K<n<10K`, ...).
pub fn size_category(rows: usize) -> &'static str {
    const CATEGORIES: [&str; 10] = [
        "n<1K",
        "1K<n<10K",
        "10K<n<100K",
        "100K<n<1M",
        "1M<n<10M",
        "10M<n<100M",
        "100M<n<1B",
        "1B<n<10B",
        "10B<n<100B",
        "100B<n<1T",
    ];
    let mut bound = 1000u128;
    for category in CATEGORIES {
        if (rows as u128) < bound {
            return category;
        }
        bound *= 10;
    }
    "n>1T"
}

/// Whether `code` can be a `language` of the front matter: an ISO 639-1 code ([`hub_languages`])
/// with optional subtags (`en`, `pt-BR`, `zh-Hans`).
pub fn valid_language(code: &str) -> bool {
    let mut parts = code.split('-');
    parts.next().is_some_and(|p| hub_languages().contains(&p))
        && parts.all(|p| !p.is_empty() && p.len() <= 8 && p.chars().all(|c| c.is_ascii_alphanumeric()))
}

/// The YAML front matter, `---` lines included. Strings are written as JSON strings, which YAML
/// reads as double-quoted scalars.
pub fn front_matter(card: &HubCard) -> String {
    let q = |s: &str| serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into());
    let rows: usize =
        card.configs.first().map_or(0, |c| c.splits.iter().filter(|s| s.name == "test").map(|s| s.rows).sum());
    let mut y = String::from("---\n");
    let _ = writeln!(y, "pretty_name: {}", q(&card.pretty_name));
    let _ = writeln!(y, "license: {}", q(&card.license));
    if let Some((name, link)) = &card.other_license {
        let _ = writeln!(y, "license_name: {}", q(name));
        let _ = writeln!(y, "license_link: {}", q(link));
    }
    if !card.languages.is_empty() {
        y.push_str("language:\n");
        for l in &card.languages {
            let _ = writeln!(y, "- {}", q(l));
        }
    }
    let _ = writeln!(y, "test_naming: {}", q(&card.naming));
    y.push_str("task_categories:\n- text-generation\n");
    y.push_str("tags:\n");
    for tag in HUB_TAGS {
        let _ = writeln!(y, "- {tag}");
    }
    let _ = writeln!(y, "size_categories:\n- {}", size_category(rows));
    y.push_str("configs:\n");
    for config in &card.configs {
        let _ = writeln!(y, "- config_name: {}", q(&config.name));
        if config.name == DEFAULT_CONFIG {
            y.push_str("  default: true\n");
        }
        y.push_str("  data_files:\n");
        for split in &config.splits {
            let _ = writeln!(y, "  - split: {}\n    path: {}", q(&split.name), q(&split.path));
        }
    }
    y.push_str("---\n");
    y
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_categories_at_their_bounds() {
        assert_eq!(size_category(0), "n<1K");
        assert_eq!(size_category(999), "n<1K");
        assert_eq!(size_category(1000), "1K<n<10K");
        assert_eq!(size_category(99_999), "10K<n<100K");
        assert_eq!(size_category(2_000_000), "1M<n<10M");
    }

    #[test]
    fn split_names_and_licenses() {
        assert_eq!(split_name("before-2024-01-01"), "before_2024_01_01");
        assert_eq!(split_name("c++"), "c__");
        assert_eq!(split_name("tokio-rs__tracing"), "tokio_rs__tracing");
        assert_eq!(split_file("tests", "test"), "data/tests/test-00000-of-00001.parquet");
        assert_eq!(split_file("swebench", "*"), "data/swebench/*.parquet");
        assert!(valid_license("apache-2.0") && valid_license("cc-by-4.0") && valid_license("other"));
        assert!(!valid_license("") && !valid_license("a: b") && !valid_license("x\ny"));
    }

    #[test]
    fn front_matter_lists_every_configuration_and_split() {
        let card = HubCard {
            pretty_name: "Go: \"stack\" set".into(),
            license: "other".into(),
            other_license: Some(("per-repository".into(), "LICENSE.md".into())),
            languages: vec!["en".into()],
            naming: "msb".into(),
            configs: vec![
                HubConfig {
                    name: "default".into(),
                    splits: vec![
                        HubSplit {
                            name: "go".into(),
                            rows: 600,
                            path: "data/instances/*/*/go-00000-of-00001.parquet".into(),
                        },
                        HubSplit {
                            name: "rust".into(),
                            rows: 500,
                            path: "data/instances/*/*/rust-00000-of-00001.parquet".into(),
                        },
                        HubSplit { name: "test".into(), rows: 1100, path: "data/instances/*/*/*.parquet".into() },
                    ],
                },
                HubConfig {
                    name: "lang_go".into(),
                    splits: vec![
                        HubSplit {
                            name: "go".into(),
                            rows: 600,
                            path: "data/instances/go/*/go-00000-of-00001.parquet".into(),
                        },
                        HubSplit { name: "test".into(), rows: 600, path: "data/instances/go/*/*.parquet".into() },
                    ],
                },
            ],
        };
        assert_eq!(
            front_matter(&card),
            "---\npretty_name: \"Go: \\\"stack\\\" set\"\nlicense: \"other\"\nlicense_name: \"per-repository\"\n\
             license_link: \"LICENSE.md\"\nlanguage:\n- \"en\"\ntest_naming: \"msb\"\ntask_categories:\n- text-generation\n\
             tags:\n- swe-bench\n- code\n- multi-swe-bench\nsize_categories:\n- 1K<n<10K\nconfigs:\n\
             - config_name: \"default\"\n  default: true\n  data_files:\n\
             \x20 - split: \"go\"\n    path: \"data/instances/*/*/go-00000-of-00001.parquet\"\n\
             \x20 - split: \"rust\"\n    path: \"data/instances/*/*/rust-00000-of-00001.parquet\"\n\
             \x20 - split: \"test\"\n    path: \"data/instances/*/*/*.parquet\"\n\
             - config_name: \"lang_go\"\n  data_files:\n\
             \x20 - split: \"go\"\n    path: \"data/instances/go/*/go-00000-of-00001.parquet\"\n\
             \x20 - split: \"test\"\n    path: \"data/instances/go/*/*.parquet\"\n---\n"
        );
        let mit = HubCard { license: "mit".into(), other_license: None, languages: vec![], ..card };
        assert!(!front_matter(&mit).contains("license_name") && !front_matter(&mit).contains("language:"));
    }

    #[test]
    fn languages() {
        assert!(valid_language("en") && valid_language("pt-BR") && valid_language("zh-Hans"));
        assert!(!valid_language("") && !valid_language("EN") && !valid_language("english") && !valid_language("en-"));
        // Codes of the right shape that ISO 639-1 does not have.
        assert!(!valid_language("xx") && !valid_language("qq-BR") && !valid_language("eng"));
        let codes = hub_languages();
        assert_eq!(codes.len(), 184, "ISO 639-1 has 184 codes");
        assert!(codes.windows(2).all(|w| w[0] < w[1]) && codes.contains(&"de") && codes.contains(&"zh"));
    }

    #[test]
    fn licenses_are_the_hubs() {
        for id in ["apache-2.0", "mit", "cc-by-4.0", "cc0-1.0", "bsd-3-clause", "gpl-3.0", "odc-by", "other"] {
            assert!(hub_license(id), "{id}");
        }
        for id in ["MIT-ish", "MIT", "Apache-2.0", "apache", "", "per-repository"] {
            assert!(!hub_license(id), "{id}");
        }
        let ids = hub_licenses();
        assert!(ids.iter().all(|id| valid_license(id)), "every id stands unquoted");
        assert_eq!(ids.len(), ids.iter().collect::<std::collections::BTreeSet<_>>().len(), "no id twice");
    }
}
