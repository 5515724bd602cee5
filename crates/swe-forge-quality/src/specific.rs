//! Issue specificity: the files, symbols and messages of the fix that the problem statement
//! names (in prose, in backticks, qualified as `pkg.Func` or `Class#method`), and whether it
//! shows a reproduction (a code block, a command, an error message or stack trace, a call with
//! its inputs).

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
    let backticked: BTreeSet<&str> = backticked_names(statement).collect();
    let types: BTreeSet<&str> = type_names(statement).collect();
    for f in file_diffs(fix_patch) {
        let name = f.path.rsplit('/').next().unwrap_or(&f.path);
        if lower.contains(&f.path.to_lowercase()) || (name.contains('.') && lower.contains(&name.to_lowercase())) {
            files.push(f.path.clone());
        }
        let lang = Lang::of(&f.path);
        for (_, line) in diff_lines(f.text) {
            let header = matches!(line, DiffLine::HunkStart(_));
            let (text, changed) = match line {
                DiffLine::Added(t) | DiffLine::Removed(t) => (t, true),
                DiffLine::Context(t) => (t, false),
                // The function a hunk is in, as git names it after the header (`@@ ... @@ func F(`).
                DiffLine::HunkStart(h) => (h.rsplit_once("@@").map_or("", |(_, c)| c.trim_start()), false),
                _ => continue,
            };
            let defined = lang.map(|l| definitions(l, text)).unwrap_or_default();
            let line_words: BTreeSet<&str> = words(text).collect();
            symbols.extend(named_in(&qualified, &backticked, &line_words));
            if changed || header {
                let code = code_part(text);
                let code_words: BTreeSet<&str> = words(&code).collect();
                symbols.extend(types.iter().filter(|t| code_words.contains(**t)).map(|t| (*t).to_owned()));
            }
            let candidates = defined
                .into_iter()
                .map(|(n, _)| n)
                .chain(words(text).filter(|w| changed && code_like(w)).map(str::to_owned));
            symbols.extend(candidates.filter(|n| statement_words.contains(n.as_str())));
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

/// The qualified and backticked names of the statement that a line of the fix holds: a
/// qualified name by its last part (`Config::builder` on a line defining or calling `builder`),
/// a backticked one by any of its words of three characters or more.
fn named_in(qualified: &BTreeSet<&str>, backticked: &BTreeSet<&str>, line_words: &BTreeSet<&str>) -> Vec<String> {
    let last = |q: &str| q.rsplit(['.', ':', '#']).next().unwrap_or_default().to_owned();
    let q = qualified.iter().filter(|q| line_words.contains(last(q).as_str()));
    let b = backticked.iter().filter(|b| words(b).any(|w| w.len() >= 3 && line_words.contains(w)));
    q.chain(b).map(|n| (*n).to_owned()).collect()
}

/// The qualified names of the statement (`json.Number`, `Config::builder`, `Date#format`): code
/// even when each part alone reads as a word. Host and file names (`github.com`, `a.md`) are
/// left out.
fn qualified_names(statement: &str) -> impl Iterator<Item = &str> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(r"\b[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::|#)[A-Za-z_][A-Za-z0-9_]*)+\b").expect("a valid pattern")
    });
    re.find_iter(statement).map(|m| m.as_str()).filter(|q| {
        let last = q.rsplit(['.', ':', '#']).next().unwrap_or_default();
        q.len() >= 5 && last.len() >= 3 && !["com", "org", "net", "dev", "txt", "html", "json", "yml"].contains(&last)
    })
}

/// The names the statement writes as inline code (`` `meridiem` ``, `` `parse()` ``): one token
/// of word characters, dots, colons, `#`, `$` or `/`, with call parentheses or not.
fn backticked_names(statement: &str) -> impl Iterator<Item = &str> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| Regex::new(r"`([\w$.:#/<>-]{3,80})(?:\(\))?`").expect("a valid pattern"));
    re.captures_iter(statement).filter_map(|c| c.get(1)).map(|m| m.as_str())
}

/// The capitalized words of the statement that are not the first of a sentence or a line
/// (`for Bytes`, `a Decoder`): read as type names when a changed line of the fix's code holds
/// them.
fn type_names(statement: &str) -> impl Iterator<Item = &str> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re =
        RE.get_or_init(|| Regex::new(r"[\w,)] +([A-Z][a-z0-9]+(?:[A-Z][A-Za-z0-9]*)?)\b").expect("a valid pattern"));
    re.captures_iter(statement).filter_map(|c| c.get(1)).map(|m| m.as_str()).filter(|w| w.len() >= 3)
}

/// A line of code without its string literals and trailing comment (`//`, `#`, `/*`); nothing
/// of a comment line.
fn code_part(line: &str) -> String {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| Regex::new(r#""(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'"#).expect("a valid pattern"));
    let t = line.trim_start();
    if ["//", "/*", "* ", "#", "--"].iter().any(|c| t.starts_with(c)) || t == "*" {
        return String::new();
    }
    let code = re.replace_all(line, "\"\"");
    let cut = ["//", "/*", " # "].iter().filter_map(|c| code.find(c)).min().unwrap_or(code.len());
    code[..cut].to_owned()
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
            r"(?m)^\s*```|^\s*~~~|^\s*\$ \S|Traceback \(most recent call last\)|panic: |^goroutine \d+ \[|panicked at",
            r"|\b\w*(?:Error|Exception): |\b[A-Z][A-Za-z]*Exception\b|^\s*(?:error|fatal|ERROR|FATAL)(?:\[\w+\])?: ",
            r"|Exception in thread|^\s+at [\w$.<>]+\([\w$.]+:\d+\)|^\s+at .+:\d+:\d+\)?$|error\[E\d{4}\]",
            r"|Segmentation fault|AddressSanitizer|(?i:steps to reproduce)",
            r#"|\b\w+(?:\.\w+|::\w+)*\([^)\n]*(?:"|'|\b\d)[^)\n]*\)"#,
        ))
        .expect("a valid pattern")
    })
}

/// Whether the statement shows how to reproduce the problem: a fenced code block, a shell
/// command (`$ ` or a command line with options), an error message, stack trace or crash
/// report, "steps to reproduce", or a call with literal inputs (`slugify("a  --  b")`).
fn reproduction(statement: &str) -> bool {
    reproduction_re().is_match(statement) || statement.lines().any(command_line)
}

/// A line that reads as a command with options (`mytool input.txt -o out.txt`, `` `cc -O2 a.c` ``):
/// a lower-case program name first, at most twelve words, an option among them, no sentence
/// punctuation.
fn command_line(line: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(r"^[a-z][\w.+-]*(?:/[\w.+-]+)*(?: +[^ ]+)*? +--?[A-Za-z][\w-]*(?:[ =][^ ]+)*$")
            .expect("a valid pattern")
    });
    let line = line.trim().trim_matches('`').trim();
    let sentence = line.ends_with('.') || line.contains(". ") || line.contains(", ");
    line.split_whitespace().count() <= 12 && !sentence && re.is_match(line)
}
