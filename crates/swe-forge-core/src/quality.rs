//! `swe_forge.quality`: the signals SWE-bench Verified's annotators judged by hand, computed per
//! accepted instance. Each signal keeps its evidence; `flags` names those that were raised.

use serde::{Deserialize, Serialize};

/// Layout version of [`Quality`].
pub const QUALITY_VERSION: u32 = 1;

/// A quality signal that was raised on an instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QualityFlag {
    /// Nothing for a solver to read: no resolved issue has a title or body and the pull request
    /// has no body (its title alone is no problem statement).
    NoIssueText,
    /// The issue text holds the fix: its added lines or a code block that matches them.
    SolutionLeak,
    /// The tests use identifiers the fix introduces and the issue never names.
    UnnamedIdentifiers,
    /// The issue names no file, symbol, error message or reproduction the fix touches.
    Unspecific,
    /// Some hunks of the fix can be left out and every FAIL_TO_PASS test still passes.
    UntestedHunks,
    /// Repeated runs of the gold patch or of the empty patch disagreed.
    Flaky,
}

impl QualityFlag {
    /// Every flag, in the order the card and the review page list them.
    pub const ALL: [QualityFlag; 6] = [
        QualityFlag::NoIssueText,
        QualityFlag::SolutionLeak,
        QualityFlag::UnnamedIdentifiers,
        QualityFlag::Unspecific,
        QualityFlag::UntestedHunks,
        QualityFlag::Flaky,
    ];

    /// The flag as it is written in records (`solution_leak`).
    pub fn as_str(self) -> &'static str {
        match self {
            QualityFlag::NoIssueText => "no_issue_text",
            QualityFlag::SolutionLeak => "solution_leak",
            QualityFlag::UnnamedIdentifiers => "unnamed_identifiers",
            QualityFlag::Unspecific => "unspecific",
            QualityFlag::UntestedHunks => "untested_hunks",
            QualityFlag::Flaky => "flaky",
        }
    }

    /// What the flag means, for a reader of the card or the review page.
    pub fn meaning(self) -> &'static str {
        match self {
            QualityFlag::NoIssueText => "no issue text and no pull request body: nothing for a solver to read",
            QualityFlag::SolutionLeak => "the issue text holds the fix",
            QualityFlag::UnnamedIdentifiers => "the tests need names the issue never gives",
            QualityFlag::Unspecific => "the issue names nothing the fix touches",
            QualityFlag::UntestedHunks => "part of the fix is not needed by any FAIL_TO_PASS test",
            QualityFlag::Flaky => "repeated gold or empty-patch runs disagreed",
        }
    }
}

impl std::str::FromStr for QualityFlag {
    type Err = String;

    /// A flag by its written name (`no_issue_text`); an unknown name is refused, naming the known.
    fn from_str(s: &str) -> Result<QualityFlag, String> {
        QualityFlag::ALL.into_iter().find(|f| f.as_str() == s).ok_or_else(|| {
            let known: Vec<&str> = QualityFlag::ALL.iter().map(|f| f.as_str()).collect();
            format!("{s:?} is not a quality flag (one of {})", known.join(", "))
        })
    }
}

/// Whether `inst` gives a solver nothing to read ([`QualityFlag::NoIssueText`]): no resolved issue
/// has a title or a body, and the pull request has no body. A mirror mined without an issues
/// export leaves records so.
pub fn lacks_issue_text(inst: &crate::Instance) -> bool {
    let blank = |s: Option<&str>| s.is_none_or(|s| s.trim().is_empty());
    inst.resolved_issues.iter().all(|i| blank(Some(&i.title)) && blank(i.body.as_deref()))
        && blank(inst.body.as_deref())
}

impl std::fmt::Display for QualityFlag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The quality signals of one instance (`swe_forge.quality`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Quality {
    /// Layout version ([`QUALITY_VERSION`]).
    pub version: u32,
    /// The signals raised, in [`QualityFlag::ALL`] order; empty when none was.
    pub flags: Vec<QualityFlag>,
    /// Solution leakage: how much of the fix the issue text holds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub leakage: Option<Leakage>,
    /// Identifiers the fix introduces, the test patch uses and the issue never names.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unnamed_identifiers: Vec<UnnamedIdentifier>,
    /// What the issue names that the fix touches.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub specificity: Option<Specificity>,
    /// The fix run with one hunk left out at a time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hunks: Option<HunkAblation>,
    /// Repeated runs of the gold patch and of the empty patch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flakiness: Option<Flakiness>,
}

impl Quality {
    /// Whether `flag` was raised.
    pub fn has(&self, flag: QualityFlag) -> bool {
        self.flags.contains(&flag)
    }

    /// Raises `flag` (once, in [`QualityFlag::ALL`] order).
    pub fn raise(&mut self, flag: QualityFlag) {
        if !self.flags.contains(&flag) {
            self.flags.push(flag);
            self.flags.sort();
        }
    }

    /// Lowers `flag` (a signal recomputed and no longer raised).
    pub fn lower(&mut self, flag: QualityFlag) {
        self.flags.retain(|f| *f != flag);
    }
}

/// How much of the fix's added code the issue text (title, body, hints) holds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Leakage {
    /// Share of the fix's significant added lines found in the issue text, 0..=1.
    pub score: f64,
    /// The share from which the flag is raised.
    pub threshold: f64,
    /// Significant added lines of the fix (the denominator of `score`).
    pub added_lines: u32,
    /// The added lines the issue text holds, as the fix writes them (at most 20).
    pub matched_lines: Vec<String>,
}

/// An identifier the fix introduces that the test patch uses and the issue never names.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct UnnamedIdentifier {
    /// The identifier (`parseDuration`, `ErrTimeout`, `--strict`, `src/util/slug.ts`).
    pub name: String,
    /// What it is: `function`, `method`, `type`, `constant`, `option`, `file`.
    pub kind: String,
    /// The fix's file that introduces it.
    pub file: String,
}

/// What the issue names that the fix touches.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Specificity {
    /// Files of the fix the issue names (by path or file name).
    pub files: Vec<String>,
    /// Identifiers of the fix's hunks (functions, types, ...) the issue names.
    pub symbols: Vec<String>,
    /// Messages (string literals) of the fix the issue quotes.
    pub messages: Vec<String>,
    /// Whether the issue holds a reproduction (a code block, a command, a stack trace).
    pub reproduction: bool,
}

impl Specificity {
    /// Whether the issue names anything the fix touches or shows how to reproduce it.
    pub fn specific(&self) -> bool {
        self.reproduction || !(self.files.is_empty() && self.symbols.is_empty() && self.messages.is_empty())
    }
}

/// The fix run with one hunk left out at a time.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct HunkAblation {
    /// Hunks of the fix patch.
    pub hunks: u32,
    /// Of those, hunks that change no shipped code (documentation, examples, configuration files,
    /// comments only): never left out, since no test can need them.
    pub not_code: u32,
    /// Hunks of code left out and run, in patch order (at most `[validate] hunk_runs`,
    /// `--hunk-runs`).
    pub tried: u32,
    /// Hunks whose removal left every FAIL_TO_PASS test passing: `file @@ header`.
    pub untested: Vec<String>,
    /// `untested / tried` (0 when nothing was tried).
    pub untested_share: f64,
    /// Wall time of the runs, in seconds.
    pub seconds: f64,
}

/// Repeated runs of the gold patch and of the empty patch.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Flakiness {
    /// Runs of each.
    pub runs: u32,
    /// Tests whose status differed between the gold patch's runs.
    pub gold_disagreements: Vec<String>,
    /// Tests whose status differed between the empty patch's runs.
    pub empty_disagreements: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_are_written_in_snake_case_and_kept_in_order() {
        let mut q = Quality { version: QUALITY_VERSION, ..Quality::default() };
        q.raise(QualityFlag::UntestedHunks);
        q.raise(QualityFlag::SolutionLeak);
        q.raise(QualityFlag::SolutionLeak);
        assert_eq!(q.flags, [QualityFlag::SolutionLeak, QualityFlag::UntestedHunks]);
        let json = serde_json::to_value(&q).unwrap();
        assert_eq!(json["flags"], serde_json::json!(["solution_leak", "untested_hunks"]));
        for flag in QualityFlag::ALL {
            assert_eq!(flag.as_str().parse::<QualityFlag>(), Ok(flag));
            assert_eq!(serde_json::to_value(flag).unwrap(), flag.as_str());
        }
        assert!("leak".parse::<QualityFlag>().unwrap_err().contains("no_issue_text"));
        assert_eq!(serde_json::from_value::<Quality>(json).unwrap(), q);
        for f in QualityFlag::ALL {
            assert_eq!(serde_json::to_value(f).unwrap(), f.as_str());
        }
        q.lower(QualityFlag::SolutionLeak);
        assert!(!q.has(QualityFlag::SolutionLeak) && q.has(QualityFlag::UntestedHunks));
    }

    #[test]
    fn an_issue_is_specific_when_it_names_something_or_reproduces() {
        assert!(!Specificity::default().specific());
        assert!(Specificity { reproduction: true, ..Specificity::default() }.specific());
        assert!(Specificity { symbols: vec!["parse".into()], ..Specificity::default() }.specific());
    }
}
