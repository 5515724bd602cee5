//! JSON Schemas of pipeline files and profiles, generated from the types with schemars and
//! committed under `schemas/` for editors and other tools; a test keeps the committed files equal
//! to the generated ones (`UPDATE_SCHEMAS=1 cargo test -p swe-forge-config` rewrites them).

use schemars::{Schema, SchemaGenerator, json_schema};
use swe_forge_logparse::Naming;

use crate::{Pipeline, Profile};

/// Every naming a profile may give, in the order the schema lists them.
const NAMINGS: [Naming; 3] = [Naming::Msb, Naming::Canonical, Naming::Auto];

/// The JSON Schema of a pipeline file (`schemas/pipeline.schema.json`).
pub fn pipeline_schema() -> serde_json::Value {
    schemars::schema_for!(Pipeline).to_value()
}

/// The JSON Schema of a profile file (`schemas/profile.schema.json`).
pub fn profile_schema() -> serde_json::Value {
    schemars::schema_for!(Profile).to_value()
}

/// `naming`: one of [`NAMINGS`] by its written name (`swe_forge_logparse::Naming` is serde data
/// of the log-parsing crate, which does not depend on schemars).
pub(crate) fn naming_schema(_: &mut SchemaGenerator) -> Schema {
    let names: Vec<&str> = NAMINGS.iter().map(|n| n.as_str()).collect();
    json_schema!({ "type": "string", "enum": names })
}

pub(crate) fn label_rule_schema(_: &mut SchemaGenerator) -> Schema {
    let names: Vec<&str> =
        [swe_forge_core::LabelRule::Strict, swe_forge_core::LabelRule::Msb].iter().map(|r| r.as_str()).collect();
    json_schema!({ "type": "string", "enum": names })
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::*;

    fn root() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
    }

    #[test]
    fn the_namings_are_all_of_them() {
        for n in NAMINGS {
            // A new variant makes this match fail to compile: add it to NAMINGS.
            match n {
                Naming::Msb | Naming::Canonical | Naming::Auto => {}
            }
            assert_eq!(serde_json::to_value(n).unwrap(), n.as_str());
        }
    }

    #[test]
    fn the_committed_schemas_are_the_generated_ones() {
        for (file, schema) in [("pipeline.schema.json", pipeline_schema()), ("profile.schema.json", profile_schema())] {
            let path = root().join("schemas").join(file);
            let generated = serde_json::to_string_pretty(&schema).unwrap() + "\n";
            if std::env::var_os("UPDATE_SCHEMAS").is_some() {
                std::fs::write(&path, &generated).unwrap();
            }
            let committed = std::fs::read_to_string(&path).unwrap_or_default();
            assert!(
                committed == generated,
                "schemas/{file} differs from the types; regenerate it with `UPDATE_SCHEMAS=1 cargo test -p swe-forge-config`"
            );
        }
    }

    fn schema_errors(schema: &serde_json::Value, path: &Path) -> Vec<String> {
        let text = std::fs::read_to_string(path).unwrap();
        let value = serde_json::to_value(toml::from_str::<toml::Value>(&text).unwrap()).unwrap();
        let validator = jsonschema::validator_for(schema).unwrap();
        validator.iter_errors(&value).map(|e| format!("{}: {e}", path.display())).collect()
    }

    fn tomls(dir: &Path) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "toml"))
            .collect();
        files.sort();
        files
    }

    #[test]
    fn every_file_under_pipelines_validates_against_its_schema_and_loads() {
        let pipelines = root().join("pipelines");
        let (pipeline, profile) = (pipeline_schema(), profile_schema());
        let mut seen = 0;
        for path in tomls(&pipelines) {
            assert_eq!(schema_errors(&pipeline, &path), Vec::<String>::new());
            Pipeline::load(&path).unwrap();
            seen += 1;
        }
        for path in tomls(&pipelines.join("profiles")) {
            assert_eq!(schema_errors(&profile, &path), Vec::<String>::new());
            Profile::load(path.to_str().unwrap()).unwrap();
            seen += 1;
        }
        // Not a pipeline nor a profile: the logparse crate's naming data, checked where it loads.
        for path in tomls(&pipelines.join("naming")) {
            swe_forge_logparse::MsbNaming::from_toml(&std::fs::read_to_string(&path).unwrap()).unwrap();
            seen += 1;
        }
        for entry in std::fs::read_dir(&pipelines).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            assert!(
                !path.is_dir() || ["profiles", "naming"].contains(&name.as_str()),
                "pipelines/{name}/ is a folder this test does not know: say which schema its files follow"
            );
        }
        assert!(seen >= 6, "{seen}");
    }

    #[test]
    fn the_schemas_refuse_what_loading_refuses() {
        let bad = serde_json::json!({ "name": "x", "source": { "records": "a", "repos": "b" },
            "output": { "validated": "c" }, "validate": { "jobz": 2 } });
        assert!(!jsonschema::validator_for(&pipeline_schema()).unwrap().is_valid(&bad));
        let bad = serde_json::json!({ "name": "p", "naming": "msbb" });
        assert!(!jsonschema::validator_for(&profile_schema()).unwrap().is_valid(&bad));
        let good = serde_json::json!({ "name": "p", "naming": "auto",
            "overrides": { "lang:go": { "numbers": [1, 5], "variants": [{ "parser": "go-test" }] } } });
        assert!(jsonschema::validator_for(&profile_schema()).unwrap().is_valid(&good));
    }
}
