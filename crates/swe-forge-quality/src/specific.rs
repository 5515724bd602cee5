//! Issue specificity: the files, symbols and messages of the fix that the problem statement
//! names, and whether it shows a reproduction (a code block, a command, a stack trace, a call
//! with its inputs).

use std::collections::BTreeSet;
use std::sync::OnceLock;

use regex::Regex;
use swe_forge_core::{DiffLine, Specificity, diff_lines, file_diffs};

use crate::defs::{Lang, definitions};
use crate::text::{code_like, words};

/// At most this many names of each kind are kept as evidence.
const MAX_NAMES: usize = 10;

/// What `statement` names of `fix_patch`.
pub fn specificity(fix_patch: &str, statement: &str) -> Specificity {
    let lower = statement.to_lowercase();
    let statement_words: BTreeSet<&str> = words(statement).collect();
    let mut files = Vec::new();
    let (mut symbols, mut messages) = (BTreeSet::new(), BTreeSet::new());
    let qualified: BTreeSet<&str> = qualified_names(statement).collect();
    for f in file_diffs(fix_patch) {
        let name = f.path.rsplit('/').next().unwrap_or(&f.path);
        if lower.contains(&f.path.to_lowercase()) || (name.contains('.') && lower.contains(&name.to_lowercase())) {
            files.push(f.path.clone());
        }
        let lang = Lang::of(&f.path);
        for (_, line) in diff_lines(f.text) {
            let (text, changed) = match line {
                DiffLine::Added(t) | DiffLine::Removed(t) => (t, true),
                DiffLine::Context(t) => (t, false),
                // The function a hunk is in, as git names it after the header (`@@ ... @@ func F(`).
                DiffLine::HunkStart(h) => (h.rsplit_once("@@").map_or("", |(_, c)| c.trim_start()), false),
                _ => continue,
            };
            let defined = lang.map(|l| definitions(l, text)).unwrap_or_default();
            let candidates = defined
                .into_iter()
                .map(|(n, _)| n)
                .chain(words(text).filter(|w| changed && code_like(w)).map(str::to_owned));
            symbols.extend(candidates.filter(|n| statement_words.contains(n.as_str())));
            if changed {
                symbols.extend(qualified.iter().filter(|q| text.contains(**q)).map(|q| (*q).to_owned()));
            }
            messages.extend(literals(text).filter(|m| quoted(m, &lower)));
        }
    }
    files.truncate(MAX_NAMES);
    Specificity {
        files,
        symbols: symbols.into_iter().take(MAX_NAMES).collect(),
        messages: messages.into_iter().take(MAX_NAMES).collect(),
        reproduction: reproduction(statement),
    }
}

/// The qualified names of the statement (`json.Number`, `Config::builder`, `opts.strict`): code
/// even when each part alone reads as a word. Host names (`github.com`) are left out.
fn qualified_names(statement: &str) -> impl Iterator<Item = &str> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(r"\b[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::)[A-Za-z_][A-Za-z0-9_]*)+\b").expect("a valid pattern")
    });
    re.find_iter(statement).map(|m| m.as_str()).filter(|q| {
        let last = q.rsplit(['.', ':']).next().unwrap_or_default();
        q.len() >= 5 && !["com", "org", "io", "net", "dev", "md", "txt"].contains(&last)
    })
}

fn literal_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r#""((?:[^"\\]|\\.){8,})"|`([^`]{8,})`|'((?:[^'\\]|\\.){8,})'"#).expect("a valid pattern")
    })
}

/// The string literals of a line of code, eight characters or longer.
fn literals(text: &str) -> impl Iterator<Item = String> + '_ {
    literal_re().captures_iter(text).filter_map(|c| c.iter().skip(1).flatten().next()).map(|m| m.as_str().to_owned())
}

/// Whether the statement quotes `message`: its longest piece between format placeholders
/// (`%s`, `{}`, `${x}`), eight characters or longer, in any case.
fn quoted(message: &str, statement_lower: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re =
        RE.get_or_init(|| Regex::new(r"%[-+ #0-9.]*[a-zA-Z]|\$\{[^}]*\}|\{[^}]*\}|\\n|\\t").expect("a valid pattern"));
    let piece = re.split(message).map(str::trim).max_by_key(|p| p.len()).unwrap_or_default();
    piece.len() >= 8 && piece.chars().any(char::is_alphabetic) && statement_lower.contains(&piece.to_lowercase())
}

fn reproduction_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(concat!(
            r"(?m)^\s*```|^\s*~~~|^\s*\$ \S|Traceback \(most recent call last\)|^panic: |^goroutine \d+ \[",
            r"|Exception in thread|^\s+at [\w$.<>]+\([\w$.]+:\d+\)|^\s+at .+:\d+:\d+\)?$|error\[E\d{4}\]",
            r"|Segmentation fault|AddressSanitizer|(?i:steps to reproduce)",
            r#"|\b\w+(?:\.\w+|::\w+)*\([^)\n]*(?:"|'|\b\d)[^)\n]*\)"#,
        ))
        .expect("a valid pattern")
    })
}

/// Whether the statement shows how to reproduce the problem: a fenced code block, a shell
/// command, a stack trace or crash report, "steps to reproduce", or a call with literal inputs
/// (`slugify("a  --  b")`).
fn reproduction(statement: &str) -> bool {
    reproduction_re().is_match(statement)
}
