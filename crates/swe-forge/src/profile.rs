//! Profiles (`pipelines/profiles/<name>.toml`, built in for `msb` and `default`, or any file):
//! recipe overrides keyed by `lang:<language>`, `recipe:<name>` or `org/repo`, applied after the
//! pipeline's overrides of the same key, plus the naming test lists are read in. `revalidate`
//! compares published lists under one; `evaluate` runs and grades under one.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result, bail};
use serde::Deserialize;
use swe_forge_agree::Naming;
use swe_forge_validate::RecipeOverride;

const BUILT_IN: &[(&str, &str)] = &[
    ("msb", include_str!("../../../pipelines/profiles/msb.toml")),
    ("default", include_str!("../../../pipelines/profiles/default.toml")),
];

/// A profile file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// Name shown in reports.
    pub name: String,
    /// Free text.
    #[serde(default)]
    pub description: String,
    /// The naming both sides are compared in.
    pub naming: Naming,
    /// Recipe overrides keyed by `lang:<language>`, `recipe:<name>` or `org/repo`.
    #[serde(default)]
    pub overrides: BTreeMap<String, RecipeOverride>,
}

impl Profile {
    /// A built-in profile by name, or a profile file.
    pub fn load(name_or_path: &str) -> Result<Profile> {
        let path = Path::new(name_or_path);
        let (origin, text) = if path.is_file() {
            let text = std::fs::read_to_string(path).with_context(|| format!("reading profile {}", path.display()))?;
            (path.display().to_string(), text)
        } else if let Some((n, t)) = BUILT_IN.iter().find(|(n, _)| *n == name_or_path) {
            (format!("built-in profile {n}"), (*t).to_owned())
        } else {
            let known: Vec<&str> = BUILT_IN.iter().map(|(n, _)| *n).collect();
            bail!("no profile `{name_or_path}`: not a file, and the built-in profiles are {}", known.join(", "));
        };
        toml::from_str(&text).with_context(|| format!("{origin} is invalid"))
    }

    /// Merges the profile's overrides into `overrides`: a key both have keeps the pipeline's
    /// override with the profile's applied after it (as an unconditional variant).
    pub fn merge_into(&self, overrides: &mut BTreeMap<String, RecipeOverride>) {
        for (key, o) in &self.overrides {
            match overrides.get_mut(key) {
                Some(existing) => existing.variants.push(o.clone()),
                None => {
                    overrides.insert(key.clone(), o.clone());
                }
            }
        }
    }

    /// The test command each key of the profile sets.
    pub fn commands(&self) -> BTreeMap<String, String> {
        self.overrides.iter().filter_map(|(k, o)| Some((k.clone(), o.test_command.clone()?))).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_profiles_load_and_name_known_parsers() {
        for (name, _) in BUILT_IN {
            let p = Profile::load(name).unwrap();
            assert_eq!(p.name, *name);
            for (key, o) in &p.overrides {
                if let Some(parser) = &o.parser {
                    assert!(parser.parse::<swe_forge_logparse::Framework>().is_ok(), "{name} {key}: {parser}");
                }
            }
        }
        let msb = Profile::load("msb").unwrap();
        assert_eq!(msb.naming, Naming::Msb);
        assert_eq!(msb.overrides["lang:rust"].test_command.as_deref(), Some("cargo test"));
        assert!(Profile::load("nope").unwrap_err().to_string().contains("built-in profiles are msb, default"));
    }

    #[test]
    fn profile_overrides_apply_after_the_pipeline_s() {
        let msb = Profile::load("msb").unwrap();
        let mut overrides = BTreeMap::new();
        overrides.insert(
            "lang:rust".to_owned(),
            RecipeOverride { extra_packages: vec!["libssl-dev".into()], ..RecipeOverride::default() },
        );
        msb.merge_into(&mut overrides);
        let rust = &overrides["lang:rust"];
        assert_eq!(rust.extra_packages, ["libssl-dev"]);
        assert_eq!(rust.variants[0].test_command.as_deref(), Some("cargo test"));
        assert!(overrides.contains_key("lang:go"));
    }
}
