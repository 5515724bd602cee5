//! The per-test table of one instance: every test any run reported or any list names, with its
//! status in the base, test and fix runs, its category, its pass rates when flaky, and the
//! rejections that name it; an instance's page gets its first rows and every count, the rest in
//! pages ([`page`]), and the record without the per-test lists the table stands for
//! ([`slim_record`]): a record of a million tests is not sent whole.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};
use swe_forge_core::{Instance, TestResult, TestStatus, Transition};

/// One row of the table.
pub(crate) struct Row {
    pub name: String,
    pub statuses: Transition,
    /// `f2p`, `p2p`, `s2p`, `n2p` from the record's lists; else the test run's and the fix run's
    /// statuses as the same letters (`p2f`, `f2f`, `n2n`, ...); `flaky` for a test left out as
    /// flaky; `not_run_in_test` for one set apart by the label rule.
    pub category: String,
    pub flaky: Option<Value>,
    /// Reasons of the rejections whose detail names this test.
    pub rejections: Vec<String>,
}

impl Row {
    pub fn to_json(&self) -> Value {
        json!({
            "name": self.name,
            "run": self.statuses.run.as_str(),
            "test": self.statuses.test.as_str(),
            "fix": self.statuses.fix.as_str(),
            "category": self.category,
            "flaky": self.flaky,
            "rejections": self.rejections,
        })
    }
}

fn statuses(result: &TestResult) -> BTreeMap<&str, TestStatus> {
    let mut m = BTreeMap::new();
    for (list, status) in [
        (&result.passed_tests, TestStatus::Pass),
        (&result.failed_tests, TestStatus::Fail),
        (&result.skipped_tests, TestStatus::Skip),
    ] {
        for name in list {
            m.insert(name.as_str(), status);
        }
    }
    m
}

fn letter(s: TestStatus) -> char {
    match s {
        TestStatus::Pass => 'p',
        TestStatus::Fail => 'f',
        TestStatus::Skip => 's',
        TestStatus::None => 'n',
    }
}

/// The rows of `inst`, tests that changed between runs first, then by name.
pub(crate) fn rows(inst: &Instance) -> Vec<Row> {
    let phases = [statuses(&inst.run_result), statuses(&inst.test_patch_result), statuses(&inst.fix_patch_result)];
    let meta = inst.swe_forge.as_ref();
    let not_run = meta.and_then(|m| m.labels.as_ref()).map(|l| &l.not_run_in_test);
    let listed =
        [("f2p", &inst.f2p_tests), ("s2p", &inst.s2p_tests), ("n2p", &inst.n2p_tests), ("p2p", &inst.p2p_tests)];
    let mut names: BTreeSet<&str> = phases.iter().flat_map(|p| p.keys().copied()).collect();
    names.extend(listed.iter().flat_map(|(_, m)| m.keys().map(String::as_str)));
    names.extend(inst.fixed_tests.keys().map(String::as_str));
    if let Some(m) = meta {
        names.extend(m.flaky.keys().map(String::as_str));
    }
    if let Some(n) = not_run {
        names.extend(n.keys().map(String::as_str));
    }
    // A rejection names tests as `a, b, c` (pass_to_fail, anomaly) or within its text.
    let rejections: Vec<(String, BTreeSet<&str>)> = meta
        .map(|m| {
            m.rejections
                .iter()
                .map(|r| {
                    let named = r
                        .detail
                        .split(", ")
                        .flat_map(|p| std::iter::once(p.trim()).chain(p.split_whitespace()))
                        .filter(|p| names.contains(p))
                        .collect();
                    (rejection_name(r), named)
                })
                .collect()
        })
        .unwrap_or_default();
    let mut rows: Vec<Row> = names
        .iter()
        .map(|&name| {
            let from_runs = || {
                let s = |i: usize| phases[i].get(name).copied().unwrap_or(TestStatus::None);
                Transition { run: s(0), test: s(1), fix: s(2) }
            };
            let in_list = listed.iter().find_map(|(cat, m)| m.get(name).map(|t| (*cat, *t)));
            let flaky =
                meta.and_then(|m| m.flaky.get(name)).map(|p| json!({ "run": p.run, "test": p.test, "fix": p.fix }));
            let nr = not_run.and_then(|n| n.get(name));
            let (category, statuses) = match (in_list, &flaky, nr) {
                (Some((cat, t)), _, _) => (cat.to_owned(), t),
                (None, Some(_), _) => ("flaky".to_owned(), from_runs()),
                (None, None, Some(t)) => ("not_run_in_test".to_owned(), *t),
                (None, None, None) => {
                    let t = inst.fixed_tests.get(name).copied().unwrap_or_else(from_runs);
                    (format!("{}2{}", letter(t.test), letter(t.fix)), t)
                }
            };
            let rejected = rejections.iter().filter(|(_, n)| n.contains(name)).map(|(r, _)| r.clone()).collect();
            Row { name: name.to_owned(), statuses, category, flaky, rejections: rejected }
        })
        .collect();
    let steady = |r: &Row| r.statuses.run == r.statuses.test && r.statuses.test == r.statuses.fix;
    rows.sort_by(|a, b| {
        (a.rejections.is_empty(), steady(a), &a.name).cmp(&(b.rejections.is_empty(), steady(b), &b.name))
    });
    rows
}

/// The record's fields whose per-test lists the table stands for: left out of the record sent.
const LISTS: [&str; 8] = [
    "run_result",
    "test_patch_result",
    "fix_patch_result",
    "fixed_tests",
    "p2p_tests",
    "f2p_tests",
    "s2p_tests",
    "n2p_tests",
];

/// The JSON object of a record without its [`LISTS`], which are skipped as they are read (never
/// held as values).
pub(crate) fn slim_record(raw: &[u8]) -> serde_json::Result<Value> {
    use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
    struct Slim;
    impl<'de> Visitor<'de> for Slim {
        type Value = serde_json::Map<String, Value>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a record (a JSON object)")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut out = serde_json::Map::new();
            while let Some(key) = map.next_key::<String>()? {
                if LISTS.contains(&key.as_str()) {
                    map.next_value::<IgnoredAny>()?;
                } else {
                    let value = map.next_value::<Value>()?;
                    out.insert(key, value);
                }
            }
            Ok(out)
        }
    }
    let mut de = serde_json::Deserializer::from_slice(raw);
    let map = (&mut de).deserialize_map(Slim)?;
    de.end()?;
    Ok(Value::Object(map))
}

/// How many rows of each category, how many changed status and how many a rejection names.
pub(crate) fn counts(rows: &[Row]) -> Value {
    let mut by_category: BTreeMap<&str, usize> = BTreeMap::new();
    for r in rows {
        *by_category.entry(&r.category).or_default() += 1;
    }
    json!({
        "total": rows.len(),
        "by_category": by_category,
        "changed": rows.iter().filter(|r| changed(r)).count(),
        "rejected": rows.iter().filter(|r| !r.rejections.is_empty()).count(),
    })
}

fn changed(r: &Row) -> bool {
    !(r.statuses.run == r.statuses.test && r.statuses.test == r.statuses.fix)
}

/// The rows whose name holds `text` (any case) and whose category is `category` (`:changed`,
/// `:rejected`, or empty for any), `limit` of them from `offset` on, with how many match.
pub(crate) fn page(rows: &[Row], text: &str, category: &str, offset: usize, limit: usize) -> Value {
    let text = text.to_lowercase();
    let matching = rows.iter().filter(|r| {
        (text.is_empty() || r.name.to_lowercase().contains(&text))
            && match category {
                "" => true,
                ":changed" => changed(r),
                ":rejected" => !r.rejections.is_empty(),
                c => r.category == c,
            }
    });
    let (mut total, mut items) = (0usize, Vec::new());
    for r in matching {
        if total >= offset && items.len() < limit {
            items.push(r.to_json());
        }
        total += 1;
    }
    json!({ "total": total, "offset": offset, "limit": limit, "items": items })
}

/// The reason as records spell it (`pass_to_fail`).
pub(crate) fn rejection_name(r: &swe_forge_core::Rejection) -> String {
    match serde_json::to_value(r.reason) {
        Ok(Value::String(s)) => s,
        _ => "rejected".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use swe_forge_core::{ForgeMeta, RejectReason, Rejection, ValidationStatus};

    #[test]
    fn a_pass_to_fail_rejection_names_its_test() {
        let mut r = swe_forge_test_support::record("o", "r", 1);
        let t = |run, test, fix| Transition { run, test, fix };
        use TestStatus::*;
        r.f2p_tests.insert("pkg::TestNew".into(), t(None, Fail, Pass));
        r.p2p_tests.insert("pkg::TestOld".into(), t(Pass, Pass, Pass));
        r.run_result.passed_tests = vec!["pkg::TestLen".into(), "pkg::TestOld".into()];
        r.test_patch_result.passed_tests = vec!["pkg::TestLen".into(), "pkg::TestOld".into()];
        r.test_patch_result.failed_tests = vec!["pkg::TestNew".into()];
        r.fix_patch_result.failed_tests = vec!["pkg::TestLen".into()];
        r.fix_patch_result.passed_tests = vec!["pkg::TestNew".into(), "pkg::TestOld".into(), "pkg::TestFlaky".into()];
        let mut meta = ForgeMeta::new(ValidationStatus::Rejected);
        meta.rejections.push(Rejection::new(RejectReason::PassToFail, "pkg::TestLen"));
        meta.flaky.insert(
            "pkg::TestFlaky".into(),
            swe_forge_core::PassRates { run: Some(1.0), test: Some(0.5), fix: Some(1.0) },
        );
        r.swe_forge = Some(meta);
        let rows = rows(&r);
        let names: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["pkg::TestLen", "pkg::TestFlaky", "pkg::TestNew", "pkg::TestOld"]);
        let len = rows[0].to_json();
        assert_eq!(
            (len["run"].as_str(), len["test"].as_str(), len["fix"].as_str(), len["category"].as_str()),
            (Some("PASS"), Some("PASS"), Some("FAIL"), Some("p2f"))
        );
        assert_eq!(len["rejections"], json!(["pass_to_fail"]));
        assert_eq!(rows[1].category, "flaky");
        assert_eq!(rows[1].to_json()["flaky"]["test"], 0.5);
        assert_eq!((rows[2].category.as_str(), rows[2].statuses.run), ("f2p", None));
        assert_eq!(rows[3].category, "p2p");
        assert!(rows[3].rejections.is_empty());
    }
}
