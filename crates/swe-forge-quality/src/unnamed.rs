//! Tests too narrow: identifiers the fix introduces (defined on its added lines, absent from its
//! other lines), that the test patch's added lines use (call, reference: a test function that
//! merely shares the name is no use) and its other lines do not, and that the problem statement
//! never names. A solver cannot guess them.

use std::collections::BTreeSet;
use std::sync::OnceLock;

use regex::Regex;
use swe_forge_core::{DiffLine, UnnamedIdentifier, diff_lines, file_diffs};

use crate::defs::{Lang, definitions};
use crate::text::{fold, words};

/// Names too common to tell a solver anything (`toString`, `len`).
const COMMON: &[&str] = &["toString", "equals", "hashCode", "len", "get", "set", "run", "render", "String", "Error"];

/// The identifiers of `fix_patch` that `test_patch` needs and `statement` does not name, in the
/// fix's order, each once.
pub fn unnamed_identifiers(fix_patch: &str, test_patch: &str, statement: &str) -> Vec<UnnamedIdentifier> {
    let (test_added, test_other) = uses_of(test_patch);
    let test_text: String = diff_lines(test_patch)
        .filter_map(|(_, l)| if let DiffLine::Added(t) = l { Some(t) } else { None })
        .collect::<Vec<_>>()
        .join("\n");
    let (_, fix_other) = words_of(fix_patch);
    let named: BTreeSet<String> = words(statement).map(fold).chain(option_words(statement)).collect();
    let statement_lower = statement.to_lowercase();
    let mut out: Vec<UnnamedIdentifier> = Vec::new();
    for (name, kind, file) in introduced(fix_patch) {
        let used = if kind == "file" {
            file_used(&name, &test_text)
        } else {
            test_added.contains(&name) && !test_other.contains(&name)
        };
        let existed = kind != "file" && fix_other.contains(&name);
        let is_named = if kind == "file" { file_named(&name, &statement_lower) } else { named.contains(&fold(&name)) };
        if used && !existed && !is_named && !out.iter().any(|u| u.name == name) {
            out.push(UnnamedIdentifier { name, kind: kind.to_owned(), file });
        }
    }
    out
}

/// Words on added lines, and words on every other line (context, removed), of a diff.
fn words_of(diff: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let (mut added, mut other) = (BTreeSet::new(), BTreeSet::new());
    for (_, line) in diff_lines(diff) {
        let (set, text) = match line {
            DiffLine::Added(t) => (&mut added, t),
            DiffLine::Removed(t) | DiffLine::Context(t) => (&mut other, t),
            DiffLine::HunkStart(t) => (&mut other, t.rsplit_once("@@").map_or("", |(_, c)| c)),
            _ => continue,
        };
        set.extend(words(text).map(str::to_owned));
        set.extend(options(text).map(|o| o.to_owned()));
    }
    (added, other)
}

/// [`words_of`] a test patch, where the name a line defines (`fn parse_unit()`, `func TestParse(`,
/// `def test_parse`) is no use of it: only its other words on that line count.
fn uses_of(test_patch: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let (mut added, mut other) = (BTreeSet::new(), BTreeSet::new());
    for f in file_diffs(test_patch) {
        other.extend(words_of(f.text).1);
        let lang = Lang::of(&f.path);
        for (_, line) in diff_lines(f.text) {
            let DiffLine::Added(text) = line else { continue };
            let defined = test_definitions(lang, text);
            let mut seen = BTreeSet::new();
            for w in words(text) {
                // The first occurrence of a defined name is its definition; later ones are uses.
                if !(defined.contains(&w) && seen.insert(w)) {
                    added.insert(w.to_owned());
                }
            }
            added.extend(options(text).map(|o| o.to_owned()));
        }
    }
    (added, other)
}

/// The functions and methods a line of a test file defines, in its language's syntax or as
/// `def`/`fn`/`func`/`function` in any other.
fn test_definitions(lang: Option<Lang>, line: &str) -> BTreeSet<&str> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(r"^\s*(?:pub\s+)?(?:async\s+)?(?:def|fn|func|function)\s+(?:\([^)]*\)\s*)?(\w+)")
            .expect("a valid pattern")
    });
    let mut out: BTreeSet<&str> = re.captures(line).and_then(|c| c.get(1)).map(|m| m.as_str()).into_iter().collect();
    for (name, kind) in lang.map(|l| definitions(l, line)).unwrap_or_default() {
        if matches!(kind, "function" | "method")
            && let Some(w) = words(line).find(|w| *w == name)
        {
            out.insert(w);
        }
    }
    out
}

fn option_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r#"["'`](--?[A-Za-z][\w-]+)["'`=]"#).expect("a valid pattern"))
}

/// Command-line options written as string literals (`"--strict"`).
fn options(text: &str) -> impl Iterator<Item = &str> {
    option_re().captures_iter(text).filter_map(|c| c.get(1)).map(|m| m.as_str())
}

/// Hyphenated words of prose (`--strict`, `max-days`), folded as [`fold`] folds names.
fn option_words(statement: &str) -> Vec<String> {
    statement
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
        .filter(|w| w.trim_matches('-').len() >= 3)
        .map(fold)
        .collect()
}

/// What the fix introduces: definitions on its added lines (first per name), options its added
/// lines spell, and the files it creates.
fn introduced(fix_patch: &str) -> Vec<(String, &'static str, String)> {
    let mut out = Vec::new();
    for f in file_diffs(fix_patch) {
        let new_file = f.text.lines().take_while(|l| !l.starts_with("@@")).any(|l| l == "--- /dev/null");
        if new_file {
            out.push((f.path.clone(), "file", f.path.clone()));
        }
        let lang = Lang::of(&f.path);
        for (_, line) in diff_lines(f.text) {
            let DiffLine::Added(text) = line else { continue };
            if let Some(lang) = lang {
                for (name, kind) in definitions(lang, text) {
                    if !COMMON.contains(&name.as_str()) {
                        out.push((name, kind, f.path.clone()));
                    }
                }
            }
            for o in options(text) {
                out.push((o.to_owned(), "option", f.path.clone()));
            }
        }
    }
    out
}

fn stem(path: &str) -> (&str, &str) {
    let file = path.rsplit('/').next().unwrap_or(path);
    (file, file.split('.').next().unwrap_or(file))
}

/// A new file is used when the test patch names it (`slug.h`) or imports it by its stem
/// (`'./slug'`, `"pkg/slug"`).
fn file_used(path: &str, test_text: &str) -> bool {
    let (file, stem) = stem(path);
    stem.len() >= 3
        && (test_text.contains(file) || ["'", "\""].iter().any(|q| test_text.contains(&format!("/{stem}{q}"))))
}

fn file_named(path: &str, statement_lower: &str) -> bool {
    let (file, stem) = stem(path);
    statement_lower.contains(&file.to_lowercase())
        || words(statement_lower).any(|w| w.len() >= 3 && fold(w) == fold(stem))
}
