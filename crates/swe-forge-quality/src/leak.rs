//! Solution leakage: the fix's significant added lines found in the issue text, compared as
//! token sequences (spacing, indentation, diff markers and Markdown backticks do not count).

use std::collections::BTreeSet;

use swe_forge_core::{DiffLine, Leakage, diff_lines, file_diffs};

use crate::defs::Lang;
use crate::runs::TokenRuns;
use crate::text::tokens;

/// The share of the fix's significant added lines the issue text must hold for `solution_leak`.
pub const LEAK_THRESHOLD: f64 = 0.5;

/// An added line counts when it has at least this many tokens (`return zero, ErrEmpty` has 4;
/// `}` and `return nil` do not count).
const MIN_TOKENS: usize = 4;

/// At most this many matched lines are kept as evidence.
const MAX_MATCHED: usize = 20;

/// How much of `fix_patch`'s added code `issue` holds. A significant added line is in a source
/// file (not documentation), has at least four tokens, is no comment, import or `main` signature,
/// and is not one of the fix's removed lines moved or re-indented; it is found when its tokens
/// appear in a row in the issue's tokens (a diff, code block or inline code in the issue:
/// `+`/`-`/`>` markers at the start of its lines are dropped).
/// Time is linear in the lengths of the patch and the issue ([`TokenRuns`]).
pub fn leakage(fix_patch: &str, issue: &str, threshold: f64) -> Leakage {
    let haystack = TokenRuns::new(issue_tokens(issue));
    let removed: BTreeSet<String> = diff_lines(fix_patch)
        .filter_map(|(_, l)| if let DiffLine::Removed(t) = l { Some(normalised(t)) } else { None })
        .collect();
    let mut seen = BTreeSet::new();
    let (mut added, mut matched) = (0u32, Vec::new());
    let code = file_diffs(fix_patch).into_iter().filter(|f| Lang::of(&f.path).is_some());
    for (_, line) in code.flat_map(|f| diff_lines(f.text)) {
        let DiffLine::Added(text) = line else { continue };
        let norm = normalised(text);
        if !significant(text, &norm) || removed.contains(&norm) || !seen.insert(norm.clone()) {
            continue;
        }
        added += 1;
        if haystack.contains(norm.split(' ')) {
            matched.push(text.trim().to_owned());
        }
    }
    let score = if added == 0 { 0.0 } else { matched.len() as f64 / f64::from(added) };
    matched.truncate(MAX_MATCHED);
    Leakage { score: (score * 1000.0).round() / 1000.0, threshold, added_lines: added, matched_lines: matched }
}

fn normalised(line: &str) -> String {
    tokens(line).join(" ")
}

fn significant(text: &str, norm: &str) -> bool {
    let t = text.trim_start();
    let comment =
        ["//", "/*", "*", "<!--"].iter().any(|p| t.starts_with(p)) || (t.starts_with("# ") && !t.starts_with("#["));
    let boilerplate =
        ["#include", "import ", "package ", "use ", "using ", "from ", "require("].iter().any(|p| t.starts_with(p))
            || norm.starts_with("int main (")
            || norm.starts_with("func main (")
            || norm.starts_with("fn main (")
            || norm.contains("static void main (");
    !comment && !boilerplate && norm.split(' ').count() >= MIN_TOKENS
}

/// The issue's tokens, line after line, a `+`, `-` or `>` marker at the start of a line dropped.
fn issue_tokens(issue: &str) -> impl Iterator<Item = &str> {
    issue.lines().flat_map(|line| {
        let line = line.trim_start();
        let line = line.strip_prefix(['+', '-', '>']).filter(|rest| !rest.starts_with(['+', '-', '>'])).unwrap_or(line);
        tokens(line)
    })
}
