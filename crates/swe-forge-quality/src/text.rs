//! The texts a signal reads and how they are compared: tokens, words, code-like identifiers.

use swe_forge_core::Instance;

/// What a solver is given: the resolved issues' titles and bodies, one after the other; the PR's
/// own title and body when it resolves no issue.
pub fn problem_statement(inst: &Instance) -> String {
    let mut out = String::new();
    for issue in &inst.resolved_issues {
        push_part(&mut out, &issue.title);
        push_part(&mut out, issue.body.as_deref().unwrap_or_default());
    }
    if out.trim().is_empty() {
        push_part(&mut out, &inst.title);
        push_part(&mut out, inst.body.as_deref().unwrap_or_default());
    }
    out
}

/// The record's hints (comments on the issue before the fix), when it has any.
pub fn hints_text(inst: &Instance) -> Option<String> {
    inst.hints.as_ref().filter(|h| !h.trim().is_empty()).cloned()
}

fn push_part(out: &mut String, part: &str) {
    if part.trim().is_empty() {
        return;
    }
    if !out.is_empty() {
        out.push('\n');
    }
    out.push_str(part);
}

/// The tokens of `s`: runs of word characters, and every other non-space character alone;
/// backticks (Markdown's inline code) are dropped.
pub fn tokens(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in s.char_indices() {
        if c.is_alphanumeric() || c == '_' {
            start.get_or_insert(i);
            continue;
        }
        if let Some(st) = start.take() {
            out.push(&s[st..i]);
        }
        if !c.is_whitespace() && c != '`' {
            out.push(&s[i..i + c.len_utf8()]);
        }
    }
    if let Some(st) = start {
        out.push(&s[st..]);
    }
    out
}

/// The words of `s` (runs of word characters).
pub fn words(s: &str) -> impl Iterator<Item = &str> {
    s.split(|c: char| !(c.is_alphanumeric() || c == '_')).filter(|w| !w.is_empty())
}

/// `name` folded for a lenient comparison: lower case, without `_` and `-` (`parse_duration`,
/// `parseDuration` and `parse-duration` fold alike).
pub fn fold(name: &str) -> String {
    name.chars().filter(|c| *c != '_' && *c != '-').flat_map(char::to_lowercase).collect()
}

/// Whether `word` looks like code rather than prose: it has an underscore inside, or a capital
/// letter after a small one (`snake_case`, `camelCase`, `ErrEmpty`).
pub fn code_like(word: &str) -> bool {
    let inner_underscore = word.trim_matches('_').contains('_');
    let camel = word.as_bytes().windows(2).any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase());
    word.len() >= 4 && (inner_underscore || camel) && !word.chars().all(|c| c.is_ascii_digit() || c == '_')
}
