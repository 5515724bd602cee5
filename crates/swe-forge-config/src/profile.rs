//! Profiles (`pipelines/profiles/<name>.toml`, built in for `msb` and `default`, or any file):
//! recipe overrides keyed by `lang:<language>`, `recipe:<name>` or `org/repo`, applied after the
//! pipeline's overrides of the same key, plus the naming test lists are read in. `revalidate`
//! compares published lists under one; `evaluate` runs and grades under one.

use std::collections::BTreeMap;
use std::path::Path;

use schemars::JsonSchema;
use serde::Deserialize;
use swe_forge_logparse::Naming;

use crate::overrides::override_key;
use crate::{ConfigError, RecipeOverride};

/// The built-in profiles: name and text.
pub(crate) const BUILT_IN: &[(&str, &str)] = &[
    ("msb", include_str!("../../../pipelines/profiles/msb.toml")),
    ("default", include_str!("../../../pipelines/profiles/default.toml")),
];

/// A profile file.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "swe-forge profile")]
pub struct Profile {
    /// Name shown in reports.
    pub name: String,
    /// Free text.
    #[serde(default)]
    pub description: String,
    /// The naming both sides are compared in.
    #[schemars(schema_with = "crate::schema::naming_schema")]
    pub naming: Naming,
    /// The label rule (`strict`, swe-forge's, by default; `msb`: Multi-SWE-bench's categories,
    /// a test the test phase did not run included, and no fail-fast switched off).
    #[serde(default)]
    #[schemars(schema_with = "crate::schema::label_rule_schema")]
    pub labels: swe_forge_core::LabelRule,
    /// Recipe overrides keyed by `lang:<language>`, `recipe:<name>` or `org/repo`.
    #[serde(default)]
    pub overrides: BTreeMap<String, RecipeOverride>,
}

impl Profile {
    /// A built-in profile by name, or a profile file.
    pub fn load(name_or_path: &str) -> Result<Profile, ConfigError> {
        let path = Path::new(name_or_path);
        if path.is_file() {
            let text = crate::read_config(path).map_err(|source| ConfigError::Read {
                what: "profile",
                path: path.to_owned(),
                source,
            })?;
            Profile::from_toml(&text, &path.display().to_string())
        } else if let Some((n, t)) = BUILT_IN.iter().find(|(n, _)| *n == name_or_path) {
            Profile::from_toml(t, &format!("built-in profile {n}"))
        } else {
            let known: Vec<&str> = BUILT_IN.iter().map(|(n, _)| *n).collect();
            Err(ConfigError::UnknownProfile { name: name_or_path.to_owned(), known: known.join(", ") })
        }
    }

    /// Parses and checks a profile's text; `origin` names it in errors.
    pub fn from_toml(text: &str, origin: &str) -> Result<Profile, ConfigError> {
        let p: Profile =
            toml::from_str(text).map_err(|source| ConfigError::Parse { origin: origin.to_owned(), source })?;
        for (key, o) in &p.overrides {
            o.check(origin, &override_key(key))?;
        }
        Ok(p)
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
    fn built_in_profiles_load() {
        for (name, _) in BUILT_IN {
            assert_eq!(Profile::load(name).unwrap().name, *name);
        }
        let msb = Profile::load("msb").unwrap();
        assert_eq!(msb.naming, Naming::Msb);
        assert_eq!(msb.overrides["lang:rust"].test_command.as_deref(), Some("cargo test"));
        // Multi-SWE-bench's images hold no package a project's CI installs.
        for recipe in ["c-cmake", "c-autotools", "c-make", "c-meson"] {
            assert_eq!(msb.overrides[&format!("recipe:{recipe}")].ci_apt_packages, Some(false), "{recipe}");
        }
        // Nor do its handlers configure with the options a project's CI passes.
        for recipe in ["c-cmake", "c-autotools", "java-maven"] {
            assert_eq!(msb.overrides[&format!("recipe:{recipe}")].ci_build_flags, Some(false), "{recipe}");
        }
        let e = Profile::load("nope").unwrap_err();
        assert!(matches!(e, ConfigError::UnknownProfile { .. }));
        assert!(e.to_string().contains("built-in profiles are msb, default"), "{e}");
    }

    #[test]
    fn a_bad_naming_is_refused_at_load() {
        let e = Profile::from_toml("name = \"p\"\nnaming = \"msbb\"\n", "p.toml").unwrap_err();
        let ConfigError::Parse { origin, source } = e else { panic!("{e:?}") };
        assert_eq!(origin, "p.toml");
        assert!(source.to_string().contains("msbb"), "{source}");
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
