//! Recipes: how to install, warm and test a repository of one language. The defaults are
//! the TOML files in this crate's `recipes/` folder; per-repository overrides come from
//! pipeline files (data, never code).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use swe_forge_git::SourceRepo;

use crate::ValidateError;

/// Everything needed to build and test one repository.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Recipe {
    /// Language name (`go`, `rust`).
    pub language: String,
    /// Debian packages of the toolchain image.
    pub packages: Vec<String>,
    /// Environment of the toolchain image.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Commands run once in the instance image with network access (dependency fetch, warm build).
    #[serde(default)]
    pub setup: Vec<String>,
    /// The test command, run from the repository root.
    pub test_command: String,
    /// Name of the log parser (see swe-forge-logparse).
    pub parser: String,
    /// Extra environment of the three test runs (which have no network).
    #[serde(default)]
    pub run_env: BTreeMap<String, String>,
}

/// Per-repository changes to a recipe; every field is optional.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecipeOverride {
    /// Force the language instead of detecting it.
    pub language: Option<String>,
    /// Packages added to the toolchain image.
    #[serde(default)]
    pub extra_packages: Vec<String>,
    /// Variables added to the toolchain image.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Replaces the setup commands.
    pub setup: Option<Vec<String>>,
    /// Replaces the test command.
    pub test_command: Option<String>,
    /// Replaces the parser.
    pub parser: Option<String>,
    /// Variables added to the test runs.
    #[serde(default)]
    pub run_env: BTreeMap<String, String>,
}

const DEFAULTS: &[(&str, &str)] =
    &[("go", include_str!("../recipes/go.toml")), ("rust", include_str!("../recipes/rust.toml"))];

impl Recipe {
    /// The default recipe of `language`.
    pub fn default_for(language: &str) -> Result<Recipe, ValidateError> {
        let (_, text) = DEFAULTS.iter().find(|(l, _)| *l == language).ok_or_else(|| ValidateError::Recipe {
            name: language.to_owned(),
            message: format!(
                "no recipe for this language (have: {})",
                DEFAULTS.iter().map(|(l, _)| *l).collect::<Vec<_>>().join(", ")
            ),
        })?;
        toml::from_str(text).map_err(|e| ValidateError::Recipe { name: language.to_owned(), message: e.to_string() })
    }

    /// Languages with a default recipe.
    pub fn languages() -> impl Iterator<Item = &'static str> {
        DEFAULTS.iter().map(|(l, _)| *l)
    }

    /// Applies an override.
    pub fn apply(&mut self, o: &RecipeOverride) {
        self.packages.extend(o.extra_packages.iter().cloned());
        self.env.extend(o.env.clone());
        if let Some(s) = &o.setup {
            self.setup = s.clone();
        }
        if let Some(t) = &o.test_command {
            self.test_command = t.clone();
        }
        if let Some(p) = &o.parser {
            self.parser = p.clone();
        }
        self.run_env.extend(o.run_env.clone());
    }
}

/// Detects the language of the tree at `sha` from its build files (go.mod, Cargo.toml).
pub fn detect_language(repo: &SourceRepo, sha: &str) -> Option<&'static str> {
    let tree = repo.commit(sha).ok()?.tree().ok()?;
    let has = |name: &str| tree.get_name(name).is_some();
    if has("go.mod") {
        Some("go")
    } else if has("Cargo.toml") {
        Some("rust")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_recipes_parse_and_overrides_apply() {
        for lang in Recipe::languages() {
            let r = Recipe::default_for(lang).unwrap();
            assert_eq!(r.language, lang);
            assert!(!r.test_command.is_empty());
        }
        let mut r = Recipe::default_for("go").unwrap();
        let o: RecipeOverride = toml::from_str(
            "extra_packages = [\"tzdata\"]\ntest_command = \"go test -json ./pkg/...\"\nenv = { X = \"1\" }",
        )
        .unwrap();
        r.apply(&o);
        assert!(toml::from_str::<RecipeOverride>("test_comand = \"x\"").is_err(), "typos are refused");
        assert!(r.packages.contains(&"tzdata".to_owned()));
        assert_eq!(r.test_command, "go test -json ./pkg/...");
        assert_eq!(r.env["X"], "1");
        assert!(Recipe::default_for("cobol").unwrap_err().to_string().contains("no recipe"));
    }
}
