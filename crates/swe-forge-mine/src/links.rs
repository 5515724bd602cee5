//! Finding the issues a pull request says it closes, in its title, body and commit messages.
//!
//! Every closing form GitHub documents: the keywords close/closes/closed, fix/fixes/fixed,
//! resolve/resolves/resolved in any case, with or without a colon, followed by `#N`,
//! `owner/repo#N` or a full issue URL. Each reference needs its own keyword, as on GitHub
//! ("Fixes #1, fixes #2"). HTML comments (pull request templates) are removed first. Unlike
//! Multi-SWE-bench's collector, several references in one text are all kept, not one per keyword.
//! Pure text processing: no network.

use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

/// A reference to an issue, possibly in another repository.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct IssueRef {
    /// `owner/name` of the repository the issue lives in.
    pub repo: String,
    /// Issue number.
    pub number: u64,
}

impl IssueRef {
    /// Whether the issue lives in another repository than `repo` (`owner/name`, any case).
    pub fn is_cross_repo(&self, repo: &str) -> bool {
        !self.repo.eq_ignore_ascii_case(repo)
    }
}

static COMMENT: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"(?s)<!--.*?-->").expect("valid regex"));

static CLOSING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?i)\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\b[ \t]*:?[ \t]*",
        r"(?:",
        r"https?://github\.com/(?P<uo>[A-Za-z0-9_.-]+)/(?P<ur>[A-Za-z0-9_.-]+)/issues/(?P<un>[0-9]+)",
        r"|(?:(?P<o>[A-Za-z0-9_.-]+)/(?P<r>[A-Za-z0-9_.-]+))?#(?P<n>[0-9]+)",
        r")\b",
    ))
    .expect("valid regex")
});

/// Removes HTML comments (`<!-- ... -->`), as GitHub does before it looks for closing keywords.
pub fn strip_html_comments(text: &str) -> String {
    COMMENT.replace_all(text, "").into_owned()
}

/// Every issue `text` says it closes, in order of appearance, without duplicates. `repo` is the
/// pull request's own `owner/name`, used for bare `#N` references.
pub fn closing_references(text: &str, repo: &str) -> Vec<IssueRef> {
    let text = strip_html_comments(text);
    let mut out: Vec<IssueRef> = Vec::new();
    for c in CLOSING.captures_iter(&text) {
        let (owner, name, number) = if let Some(n) = c.name("un") {
            (c.name("uo").map(|m| m.as_str()), c.name("ur").map(|m| m.as_str()), n.as_str())
        } else {
            (c.name("o").map(|m| m.as_str()), c.name("r").map(|m| m.as_str()), &c["n"])
        };
        let Ok(number) = number.parse::<u64>() else { continue };
        let repo = match (owner, name) {
            (Some(o), Some(r)) if !repo.eq_ignore_ascii_case(&format!("{o}/{r}")) => format!("{o}/{r}"),
            _ => repo.to_owned(),
        };
        let r = IssueRef { repo, number };
        if !out.contains(&r) {
            out.push(r);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPO: &str = "google/gson";

    fn refs(text: &str) -> Vec<(String, u64)> {
        closing_references(text, REPO).into_iter().map(|r| (r.repo, r.number)).collect()
    }

    fn here(n: &[u64]) -> Vec<(String, u64)> {
        n.iter().map(|&n| (REPO.to_owned(), n)).collect()
    }

    #[test]
    fn every_keyword_in_every_case_with_or_without_colon() {
        let keywords = ["close", "closes", "closed", "fix", "fixes", "fixed", "resolve", "resolves", "resolved"];
        for kw in keywords {
            for form in [kw.to_owned(), kw.to_uppercase(), capitalize(kw)] {
                for sep in [" ", ": ", ":", "  ", " : "] {
                    let text = format!("Some text.\n{form}{sep}#42\n");
                    assert_eq!(refs(&text), here(&[42]), "{text:?}");
                }
            }
        }
    }

    fn capitalize(s: &str) -> String {
        let mut c = s.chars();
        c.next().map(|f| f.to_uppercase().chain(c).collect()).unwrap_or_default()
    }

    #[test]
    fn closing_forms() {
        let cases: &[(&str, Vec<(String, u64)>)] = &[
            // several references in one body (Multi-SWE-bench keeps only the last per keyword)
            ("fixes #1 and fixes #2; Fixes #3", here(&[1, 2, 3])),
            ("Closes #7, resolves #8", here(&[7, 8])),
            // owner/repo#N: same repository is an ordinary reference, another one is cross-repo
            ("Fixes google/gson#5", here(&[5])),
            ("Fixes GOOGLE/Gson#5", here(&[5])),
            ("Fixes square/moshi#12", vec![("square/moshi".into(), 12)]),
            // full issue URLs
            ("Resolves https://github.com/google/gson/issues/1553", here(&[1553])),
            (
                "fixed: https://github.com/FasterXML/jackson-core/issues/99.",
                vec![("FasterXML/jackson-core".into(), 99)],
            ),
            // duplicates collapse, order is kept
            ("Fixes #9. Also fixes #9 and closes #4", here(&[9, 4])),
            // HTML comments of PR templates are ignored
            ("<!-- Write 'Fixes #123' here -->\nFixes #77", here(&[77])),
            ("<!--\nfixes #1\n-->", vec![]),
            // not closing forms
            ("See #12", vec![]),
            ("prefixes #3 and suffixes #4", vec![]),
            ("Fixes the bug in #3", vec![]),
            ("fixes issue 3", vec![]),
            ("Fixes #12abc", vec![]),
            ("Fixes https://github.com/google/gson/pull/3", vec![]),
            ("Fix typo (#13)", vec![]),
        ];
        for (text, want) in cases {
            assert_eq!(&refs(text), want, "{text:?}");
        }
    }

    #[test]
    fn cross_repo_is_recorded_as_such() {
        let r = closing_references("Fixes square/moshi#12 and fixes #3", REPO);
        assert!(r[0].is_cross_repo(REPO));
        assert!(!r[1].is_cross_repo(REPO));
        assert!(!r[1].is_cross_repo("Google/GSON"));
    }
}
