//! Recipe overrides: per-repository (or per-language, per-recipe) changes to a recipe, written in
//! pipeline files and profiles, with variants by PR number or merge date. Applying one to a recipe
//! and checking the recipe and toolchain names it gives belong to `swe-forge-validate`, which owns
//! the recipes; this file owns the data and which instances an override reaches.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use swe_forge_core::{Day, Instance};
use swe_forge_logparse::Framework;

use crate::ConfigError;

/// The tree of another repository at a revision, put into the source layer of a repository's
/// environment as plain files (no `.git`) at `path`, outside the repository (so the repository
/// still holds exactly its base tree), before any setup step: data a test suite would otherwise
/// download at test time (nlohmann/json's `json_test_data`). The repository is taken from the
/// same local mirrors folder as the instance's own (`<repos>/<org>/<name>`), never the network;
/// `rev` (a tag, branch or sha) is resolved to a commit whose sha goes into the layer's tag and
/// the record's provenance. Its submodules are not expanded. One that cannot be found rejects
/// the instance as `repo_unavailable`, naming the repository, revision and where it was looked for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExtraSource {
    /// `org/name` in the mirrors folder.
    pub repo: String,
    /// A tag, branch or commit sha.
    pub rev: String,
    /// Absolute path in the image, outside the repository (`/testbed`).
    pub path: String,
}

/// Per-repository changes to a recipe; every field is optional. `numbers` and
/// `merged_after`/`merged_before` restrict where it applies; `variants` nest further overrides.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecipeOverride {
    /// Applies only to PRs numbered within `[first, last]`.
    pub numbers: Option<(u64, u64)>,
    /// Applies only to PRs merged on or after this date (`YYYY-MM-DD`; needs `swe_forge.merged_at`).
    #[schemars(with = "Option<String>")]
    pub merged_after: Option<Day>,
    /// Applies only to PRs merged before this date.
    #[schemars(with = "Option<String>")]
    pub merged_before: Option<Day>,
    /// Use this recipe instead of the detected one.
    pub recipe: Option<String>,
    /// Use this toolchain.
    pub toolchain: Option<String>,
    /// Language written on the record.
    pub language: Option<String>,
    /// Packages added to the toolchain image (`name/suite` for one from a suite in `apt_suites`).
    #[serde(default)]
    pub extra_packages: Vec<String>,
    /// Whether the Debian packages the project's CI installs go into the toolchain image (the
    /// C-family recipes' default: yes); `false` where a profile copies a harness that did not.
    pub ci_apt_packages: Option<bool>,
    /// Whether the build options the project's CI passes (`cmake -D...`, `./configure --enable-...`,
    /// `mvn -P...`) are appended to the recipe's configure step (the C-family and Maven recipes'
    /// default: yes); `false` where a profile copies a harness that did not.
    pub ci_build_flags: Option<bool>,
    /// Suites of the base image's Debian mirror added to the toolchain's, pinned below the base
    /// suite (see the toolchain's `apt_suites`).
    #[serde(default)]
    pub apt_suites: Vec<String>,
    /// Variables added to the toolchain image.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Replaces the setup commands (and the recipe's `layer_setup`).
    pub setup: Option<Vec<String>>,
    /// Replaces the commands an instance layer runs instead of the setup when its dependency
    /// fingerprint is its environment's.
    pub layer_setup: Option<Vec<String>>,
    /// Replaces the commands that fetch the dependencies a patch's manifests name in the
    /// instance layer (`[]`: none fetched, the runs find the base's dependencies alone).
    pub prefetch: Option<Vec<String>>,
    /// Replaces the pre-test commands.
    pub pre_test: Option<Vec<String>>,
    /// Replaces the test command.
    pub test_command: Option<String>,
    /// Replaces the log parser.
    #[schemars(with = "Option<String>")]
    pub parser: Option<Framework>,
    /// Replaces the result file patterns.
    pub results: Option<Vec<String>>,
    /// Replaces the result file parser.
    #[schemars(with = "Option<String>")]
    pub results_parser: Option<Framework>,
    /// Variables added to the test runs.
    #[serde(default)]
    pub run_env: BTreeMap<String, String>,
    /// Let the test runs reach the network.
    pub network_in_runs: Option<bool>,
    /// Run the tests as this unprivileged user.
    pub test_user: Option<String>,
    /// Commit the repository environment is built at (dependencies fetched and warmed once, shared
    /// by the repository's instances); used for an instance only when it is an ancestor of (or
    /// equal to) its base commit. Without it: the oldest base commit among the repository's
    /// records with the same dependency fingerprint that is an ancestor of the instance's base
    /// (see `max_environments`).
    pub env_commit: Option<String>,
    /// At most this many repository environments for the repository (default 4): environments are
    /// keyed by the dependency fingerprint of the instances' bases, and an instance whose
    /// fingerprint comes after the cap is reached takes the nearest older environment. Read on the
    /// repository's top-level override only.
    pub max_environments: Option<usize>,
    /// Trees of other repositories put into the image at a path of their own, e.g.
    /// `extra_sources = [{ repo = "org/data", rev = "v1.0", path = "/swe-forge/extra/data" }]`
    /// (see [`ExtraSource`]); added to the recipe's, an entry with the same `path` replaced.
    #[serde(default)]
    pub extra_sources: Vec<ExtraSource>,
    /// Narrower overrides, applied after this one when they match.
    #[serde(default)]
    pub variants: Vec<RecipeOverride>,
}

impl RecipeOverride {
    /// Whether the PR-number range and merge dates (when given) admit `inst`.
    pub fn matches(&self, inst: &Instance) -> bool {
        if let Some((lo, hi)) = self.numbers
            && !(lo..=hi).contains(&inst.number)
        {
            return false;
        }
        let merged = inst.swe_forge.as_ref().and_then(|m| m.merged_at.as_ref()).map(|t| t.date());
        if let Some(after) = self.merged_after
            && merged.is_none_or(|m| m < after)
        {
            return false;
        }
        if let Some(before) = self.merged_before
            && merged.is_none_or(|m| m >= before)
        {
            return false;
        }
        true
    }

    /// The environment commit this override names for `inst`, looking into matching variants too
    /// (the last one wins).
    pub fn env_commit_for(&self, inst: &Instance) -> Option<String> {
        if !self.matches(inst) {
            return None;
        }
        let mut c = self.env_commit.clone();
        for v in &self.variants {
            if let Some(x) = v.env_commit_for(inst) {
                c = Some(x);
            }
        }
        c
    }

    /// The recipe this override forces, looking into matching variants too (the last one wins).
    pub fn forced_recipe(&self, inst: &Instance) -> Option<String> {
        if !self.matches(inst) {
            return None;
        }
        let mut r = self.recipe.clone();
        for v in &self.variants {
            if let Some(x) = v.forced_recipe(inst) {
                r = Some(x);
            }
        }
        r
    }

    /// That what goes into an image's Dockerfile or a run's environment cannot change its
    /// structure: variable names are `[A-Za-z_][A-Za-z0-9_]*`, values hold no control character (a
    /// line feed would end the `ENV` line and start an instruction of its own), packages and
    /// suites are plain Debian names. (Parser names are checked when the file is read.)
    pub(crate) fn check(&self, origin: &str, key: &str) -> Result<(), ConfigError> {
        self.check_fields(origin, key)
    }

    fn check_fields(&self, origin: &str, key: &str) -> Result<(), ConfigError> {
        let invalid =
            |field: String, message: String| ConfigError::Invalid { origin: origin.to_owned(), key: field, message };
        for (field, vars) in [("env", &self.env), ("run_env", &self.run_env)] {
            for (name, value) in vars {
                let mut chars = name.chars();
                let good_name = chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                    && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
                if !good_name {
                    return Err(invalid(
                        format!("{key}.{field}"),
                        format!("variable name {name:?} is not [A-Za-z_][A-Za-z0-9_]*"),
                    ));
                }
                if value.chars().any(char::is_control) {
                    return Err(invalid(
                        format!("{key}.{field}.{name}"),
                        "the value holds a control character (a line feed, ...)".into(),
                    ));
                }
            }
        }
        let plain = |s: &str, extra: &str| {
            !s.is_empty() && !s.starts_with('-') && s.chars().all(|c| c.is_ascii_alphanumeric() || extra.contains(c))
        };
        for p in &self.extra_packages {
            if !plain(p, ".+-:~=/_") {
                return Err(invalid(
                    format!("{key}.extra_packages"),
                    format!("{p:?} is not a Debian package name (name, name=version or name/suite)"),
                ));
            }
        }
        for s in &self.apt_suites {
            if !plain(s, ".-_") {
                return Err(invalid(format!("{key}.apt_suites"), format!("{s:?} is not a Debian suite name")));
            }
        }
        self.check_names(origin, key)?;
        for (i, v) in self.variants.iter().enumerate() {
            v.check_fields(origin, &format!("{key}.variants[{i}]"))?;
        }
        Ok(())
    }

    /// The names spliced into a Dockerfile or a setup line: the test user (`useradd`, `chown`,
    /// `runuser`), recipe, toolchain and language names, the environment commit, and each extra
    /// source's repository, revision and path (`COPY extra/<i>/ <path>/`). None may hold a space,
    /// a line feed or a shell character.
    fn check_names(&self, origin: &str, key: &str) -> Result<(), ConfigError> {
        let invalid =
            |field: String, message: String| ConfigError::Invalid { origin: origin.to_owned(), key: field, message };
        if let Some(u) = &self.test_user
            && !is_user_name(u)
        {
            return Err(invalid(
                format!("{key}.test_user"),
                format!("{u:?} is not a user name ([a-z_][a-z0-9_-]*, at most 32)"),
            ));
        }
        let names = [
            ("recipe", self.recipe.as_deref(), ".+-_"),
            ("toolchain", self.toolchain.as_deref(), ".+-_"),
            ("language", self.language.as_deref(), ".+-_#"),
            ("env_commit", self.env_commit.as_deref(), ".+-_/~^@{}"),
        ];
        for (field, value, extra) in names {
            if let Some(v) = value
                && !is_plain(v, extra)
            {
                return Err(invalid(
                    format!("{key}.{field}"),
                    format!("{v:?} is not a plain name (letters, digits, {extra})"),
                ));
            }
        }
        for (i, x) in self.extra_sources.iter().enumerate() {
            let field = |f: &str| format!("{key}.extra_sources[{i}].{f}");
            if !is_plain(&x.repo, "._-/") {
                return Err(invalid(field("repo"), format!("{:?} is not `org/name`", x.repo)));
            }
            if !is_plain(&x.rev, ".+-_/~^@{}") {
                return Err(invalid(field("rev"), format!("{:?} is not a tag, branch or commit", x.rev)));
            }
            if !(x.path.starts_with('/')
                && x.path.len() > 1
                && x.path[1..].chars().all(|c| c.is_ascii_alphanumeric() || "._-/+@".contains(c)))
            {
                return Err(invalid(
                    field("path"),
                    format!(
                        "{:?} is not an absolute path of letters, digits and `._-/+@` (no space, no line feed)",
                        x.path
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// Not empty, not an option (`-x`), and only ASCII letters, digits and the characters of `extra`.
fn is_plain(s: &str, extra: &str) -> bool {
    !s.is_empty() && !s.starts_with('-') && s.chars().all(|c| c.is_ascii_alphanumeric() || extra.contains(c))
}

/// A login name `useradd` takes as is: `[a-z_][a-z0-9_-]*`, at most 32 characters.
fn is_user_name(s: &str) -> bool {
    let mut chars = s.chars();
    s.len() <= 32
        && chars.next().is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
}

/// `overrides."<key>"` as a TOML path.
pub(crate) fn override_key(key: &str) -> String {
    format!("overrides.{key:?}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_parser_typo_in_a_variant_fails_to_load_naming_it() {
        let e = toml::from_str::<RecipeOverride>(
            "parser = \"go-test\"\n[[variants]]\nnumbers = [1, 5]\nresults_parser = \"junit-xm\"\n",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("unknown log parser `junit-xm`") && e.contains("results_parser"), "{e}");
        let o: RecipeOverride = toml::from_str("parser = \"go-test\"\n").unwrap();
        assert_eq!(o.parser, Some(Framework::GoTestVerbose));
    }

    fn merged_on(merged_at: Option<&str>) -> Instance {
        let mut inst: Instance = serde_json::from_value(serde_json::json!({
            "org": "o", "repo": "r", "number": 1, "state": "closed", "title": "t", "body": null,
            "base": {"label": "o:main", "ref": "main", "sha": "abc"}, "resolved_issues": [],
            "fix_patch": "", "test_patch": "", "instance_id": "o__r-1"
        }))
        .unwrap();
        let mut meta = swe_forge_core::ForgeMeta::new(swe_forge_core::ValidationStatus::Accepted);
        meta.merged_at = merged_at.map(|m| swe_forge_core::Timestamp::parse(m).unwrap());
        inst.swe_forge = Some(meta);
        inst
    }

    #[test]
    fn merge_dates_are_compared_as_days_and_must_be_days() {
        let o: RecipeOverride =
            toml::from_str("merged_after = \"2024-01-01\"\nmerged_before = \"2024-03-01\"\n").unwrap();
        assert!(o.matches(&merged_on(Some("2024-01-01T00:00:00Z"))));
        assert!(o.matches(&merged_on(Some("2024-02-29 23:59:00Z"))));
        assert!(!o.matches(&merged_on(Some("2023-12-31T23:59:59Z"))));
        assert!(!o.matches(&merged_on(Some("2024-03-01"))));
        assert!(!o.matches(&merged_on(None)), "an undated record matches no date range");
        let e = toml::from_str::<RecipeOverride>("merged_after = \"2024-02-30\"\n").unwrap_err().to_string();
        assert!(e.contains("not a YYYY-MM-DD day"), "{e}");
    }
}
