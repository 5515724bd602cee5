//! A correct fix is never graded wrong for its layout, on the real engine and a real Rust
//! toolchain: a fixture crate whose fix adds a documented example and shifts every doctest down
//! gets doctest ids without line numbers (the examples that only moved stay PASS_TO_PASS); a
//! test that checks a line number passes with the gold patch and fails under its `blank_line`
//! layout variant, so it leaves the lists as unstable; and the gold patch with one more line at
//! the top of its first hunk is graded resolved by `evaluate`, although the test patch also adds
//! a `#[cfg(test)]` module to the file that patch changes (the file is not put back to the base
//! before the test patch is applied, which would undo the fix).

use serde_json::json;

use crate::environments::validate_with;
use crate::evaluate::evaluate;
use crate::toolchains::{accepted, fixture, instance};

const BASE: &str = r#"//! A map of string keys.

/// A map of string keys to numbers.
pub struct Map {
    items: Vec<(String, i32)>,
}

impl Map {
    /// An empty map.
    ///
    /// ```
    /// assert_eq!(docmap::Map::new().len(), 0);
    /// ```
    pub fn new() -> Map {
        Map { items: Vec::new() }
    }

    /// Puts `v` under `k`.
    ///
    /// ```
    /// let mut m = docmap::Map::new();
    /// m.insert("a", 1);
    /// assert_eq!(m.len(), 1);
    /// ```
    pub fn insert(&mut self, k: &str, v: i32) {
        self.items.push((k.to_owned(), v));
    }

    /// How many keys the map holds.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// The line this function is written on, for diagnostics.
    pub fn written_at() -> u32 {
        line!()
    }
}
"#;

/// The fix: keys are unique. It adds a line to the crate's docs (every doctest moves down) and
/// a second example to `insert`.
fn fixed() -> String {
    BASE.replace(
        "//! A map of string keys.\n",
        "//! A map of string keys.\n//! Keys are unique: a key put twice holds its last value.\n",
    )
    .replace(
        "    /// assert_eq!(m.len(), 1);\n    /// ```\n    pub fn insert(&mut self, k: &str, v: i32) {\n        self.items.push((k.to_owned(), v));\n    }\n",
        "    /// assert_eq!(m.len(), 1);\n    /// ```\n    ///\n    /// A key put twice holds its last value:\n    ///\n    /// ```\n    /// let mut m = docmap::Map::new();\n    /// m.insert(\"a\", 1);\n    /// m.insert(\"a\", 2);\n    /// assert_eq!(m.len(), 1);\n    /// ```\n    pub fn insert(&mut self, k: &str, v: i32) {\n        match self.items.iter_mut().find(|(key, _)| key == k) {\n            Some(item) => item.1 = v,\n            None => self.items.push((k.to_owned(), v)),\n        }\n    }\n",
    )
}

/// The pull request's test in the crate's own `#[cfg(test)]` module, at the end of the file the
/// fix changes.
const INLINE_TESTS: &str = "\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn a_key_put_twice_holds_its_last_value() {\n        let mut m = Map::new();\n        m.insert(\"a\", 1);\n        m.insert(\"a\", 2);\n        assert_eq!(m.items, [(\"a\".to_owned(), 2)]);\n    }\n}\n";

#[test]
fn doctests_keep_their_ids_when_lines_move_and_a_line_number_test_leaves_the_lists() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = tmp.path().join("repos");
    let fix = fixed();
    assert_ne!(fix, BASE);
    let line = fix.lines().position(|l| l.contains("line!()")).unwrap() + 1;
    let tests = format!(
        "#[test]\nfn a_key_put_twice_is_one_key() {{\n    let mut m = docmap::Map::new();\n    m.insert(\"a\", 1);\n    m.insert(\"a\", 2);\n    assert_eq!(m.len(), 1);\n}}\n\n#[test]\nfn written_at_names_its_line() {{\n    assert_eq!(docmap::Map::written_at(), {line});\n}}\n"
    );
    let cargo = "[package]\nname = \"docmap\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n";
    let dir = repos.join("forge-fixtures/docmap");
    let fx = fixture(
        &dir,
        "2024-03-01T00:00:00Z",
        &[("Cargo.toml", cargo), ("src/lib.rs", BASE)],
        &[("tests/insert.rs", &tests), ("src/lib.rs", &format!("{BASE}{INLINE_TESTS}"))],
        &[("src/lib.rs", &fix)],
    );
    let base = fx.0.clone();
    let inst = instance("forge-fixtures", "docmap", 3, fx);
    let out = tmp.path().join("out");
    let done = validate_with(&[&inst], &repos, &out, None, &["--evidence-runs", "0", "--hunk-runs", "0"]);
    let r = &done[0];
    accepted(r);
    let ids = |m: &swe_forge_core::TestMap| m.keys().cloned().collect::<Vec<_>>();
    let (f2p, p2p) = (ids(&r.fixed_tests), ids(&r.p2p_tests));
    // No id holds a line number: the examples that only moved are the same tests before and after.
    assert!(f2p.iter().chain(&p2p).all(|id| !id.contains("(line ")), "{f2p:?} {p2p:?}");
    assert_eq!(
        p2p,
        ["docmap::doc::src/lib.rs - Map::insert", "docmap::doc::src/lib.rs - Map::new"],
        "the doctests the fix only moved are PASS_TO_PASS"
    );
    assert_eq!(f2p.len(), 3, "{f2p:?}");
    assert!(f2p.iter().any(|t| t.ends_with("tests::a_key_put_twice_holds_its_last_value")), "{f2p:?}");
    assert!(f2p.iter().any(|t| t.ends_with("a_key_put_twice_is_one_key")), "{f2p:?}");
    assert!(f2p.contains(&"docmap::doc::src/lib.rs - Map::insert (doctest 2)".to_owned()), "{f2p:?}");
    // The test of a line number passed with the gold patch and failed under the blank line.
    let meta = r.swe_forge.as_ref().unwrap();
    let unstable = &meta.labels.as_ref().unwrap().unstable;
    assert_eq!(unstable.len(), 1, "{unstable:?}");
    let (id, why) = unstable.iter().next().unwrap();
    assert!(id.ends_with("written_at_names_its_line") && why == "blank_line: FAIL", "{unstable:?}");
    let layout = &meta.evidence.as_ref().unwrap().layout;
    let seen: Vec<(&str, bool, usize)> =
        layout.iter().map(|l| (l.variant.as_str(), l.held, l.unstable.len())).collect();
    assert_eq!(seen, [("blank_line", true, 1), ("offset_hunks", true, 0)], "{layout:?}");
    // The gold patch with one more line at the top of its first hunk resolves.
    let shifted =
        crate::evaluate::patch_of(&dir, &base, &[("src/lib.rs", BASE, &format!("// Maps.\n{fix}"))], tmp.path());
    let dataset = out.join("validated.jsonl");
    let predictions = tmp.path().join("predictions.jsonl");
    let row = json!({"instance_id": r.instance_id, "model_name_or_path": "shifted", "model_patch": shifted});
    std::fs::write(&predictions, format!("{row}\n")).unwrap();
    let summary = evaluate(&dataset, predictions.to_str().unwrap(), &repos, &tmp.path().join("eval"), &[]);
    assert_eq!(summary["resolved_instances"], 1, "{summary}");
}
