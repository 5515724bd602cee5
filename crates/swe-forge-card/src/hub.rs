//! The Hugging Face Hub's side of a published dataset folder: where each split's Parquet file
//! goes (`data/<split>-00000-of-00001.parquet`), what a split may be called, and the YAML front
//! matter of its `README.md` (configs with data files per split, license, task categories, tags,
//! size category, pretty name). Text only; the binary writes the files.

use std::fmt::Write as _;

/// Tags every published dataset carries.
pub const HUB_TAGS: [&str; 3] = ["swe-bench", "code", "multi-swe-bench"];

/// What the front matter says of a dataset.
#[derive(Debug, Clone)]
pub struct HubCard {
    /// The dataset's display name.
    pub pretty_name: String,
    /// A license id the Hub knows (`apache-2.0`, `mit`, `cc-by-4.0`, ...; `other` when none fits).
    pub license: String,
    /// Each split's name and number of rows, in order.
    pub splits: Vec<(String, usize)>,
}

/// The path of a split's only Parquet file, relative to the dataset folder.
pub fn split_path(split: &str) -> String {
    format!("data/{split}-00000-of-00001.parquet")
}

/// A split name the Hub accepts (words of letters, digits and `_`, joined by `.`) made from a
/// file stem: anything else becomes `_` (`before-2024-01-01` -> `before_2024_01_01`, `c++` -> `c__`).
pub fn split_name(stem: &str) -> String {
    let name: String = stem.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect();
    if name.is_empty() { "_".into() } else { name }
}

/// Whether `id` can stand unquoted in the front matter as a license id.
pub fn valid_license(id: &str) -> bool {
    !id.is_empty() && id.chars().all(|c| c.is_ascii_alphanumeric() || ".+-_".contains(c))
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

/// The YAML front matter, `---` lines included. Strings are written as JSON strings, which YAML
/// reads as double-quoted scalars.
pub fn front_matter(card: &HubCard) -> String {
    let q = |s: &str| serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into());
    let rows: usize = card.splits.iter().map(|s| s.1).sum();
    let mut y = String::from("---\n");
    let _ = writeln!(y, "pretty_name: {}", q(&card.pretty_name));
    let _ = writeln!(y, "license: {}", q(&card.license));
    y.push_str("task_categories:\n- text-generation\n");
    y.push_str("tags:\n");
    for tag in HUB_TAGS {
        let _ = writeln!(y, "- {tag}");
    }
    let _ = writeln!(y, "size_categories:\n- {}", size_category(rows));
    y.push_str("configs:\n- config_name: default\n  data_files:\n");
    for (split, _) in &card.splits {
        let _ = writeln!(y, "  - split: {}\n    path: {}", q(split), q(&split_path(split)));
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
        assert_eq!(split_path("test"), "data/test-00000-of-00001.parquet");
        assert!(valid_license("apache-2.0") && valid_license("cc-by-4.0") && valid_license("other"));
        assert!(!valid_license("") && !valid_license("a: b") && !valid_license("x\ny"));
    }

    #[test]
    fn front_matter_lists_every_split() {
        let card = HubCard {
            pretty_name: "Go: \"stack\" set".into(),
            license: "mit".into(),
            splits: vec![("go".into(), 600), ("rust".into(), 500)],
        };
        assert_eq!(
            front_matter(&card),
            "---\npretty_name: \"Go: \\\"stack\\\" set\"\nlicense: \"mit\"\ntask_categories:\n- text-generation\n\
             tags:\n- swe-bench\n- code\n- multi-swe-bench\nsize_categories:\n- 1K<n<10K\nconfigs:\n\
             - config_name: default\n  data_files:\n  - split: \"go\"\n    path: \"data/go-00000-of-00001.parquet\"\n\
             \x20 - split: \"rust\"\n    path: \"data/rust-00000-of-00001.parquet\"\n---\n"
        );
    }
}
