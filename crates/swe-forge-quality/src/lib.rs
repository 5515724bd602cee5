//! The quality signals of an instance that its text alone gives: whether the issue holds the
//! fix ([`leakage`]), which identifiers the fix introduces and the tests use although the issue
//! never names them ([`unnamed_identifiers`]), and what the issue names that the fix touches
//! ([`specificity`]). Pure functions of the record: no repository, no run. Validation leaves out
//! one hunk at a time only among [`code_hunks`]; evaluation and the exported graders refuse the
//! patches [`scan_forgery`] flags. The signals that need
//! runs (hunks left out, repeated runs) are validation's; [`assess`] keeps them as they are.

mod defs;
mod forgery;
mod hunks;
mod leak;
mod runs;
mod specific;
mod text;
mod unnamed;

use swe_forge_core::{
    ForgeMeta, Instance, Leakage, QUALITY_VERSION, Quality, QualityFlag, Specificity, UnnamedIdentifier,
};

pub use forgery::{Forgery, ForgeryRule, forgery_exempt, forgery_scan_script, scan_forgery};
pub use hunks::{code_hunks, is_shipped_code};
pub use leak::{LEAK_THRESHOLD, leakage};
pub use specific::specificity;
pub use text::{hints_text, problem_statement};
pub use unnamed::unnamed_identifiers;

/// The signals read from one record's text.
#[derive(Debug, Clone, PartialEq)]
pub struct TextSignals {
    /// Whether the record has no text for a solver ([`swe_forge_core::lacks_issue_text`]).
    pub no_issue_text: bool,
    /// How much of the fix the issue text and hints hold.
    pub leakage: Leakage,
    /// Identifiers the fix introduces, the tests use and the problem statement never names.
    pub unnamed_identifiers: Vec<UnnamedIdentifier>,
    /// What the problem statement names that the fix touches.
    pub specificity: Specificity,
}

/// Reads the text signals of `inst`: its problem statement (the resolved issues' titles and
/// bodies, or the PR's own when it resolves none), hints, fix patch and test patch.
pub fn read(inst: &Instance) -> TextSignals {
    let statement = problem_statement(inst);
    let mut leak_text = statement.clone();
    if let Some(h) = hints_text(inst) {
        leak_text.push('\n');
        leak_text.push_str(&h);
    }
    TextSignals {
        no_issue_text: swe_forge_core::lacks_issue_text(inst),
        leakage: leakage(&inst.fix_patch, &leak_text, LEAK_THRESHOLD),
        unnamed_identifiers: unnamed_identifiers(&inst.fix_patch, &inst.test_patch, &statement),
        specificity: specificity(&inst.fix_patch, &statement),
    }
}

/// Writes `signals` into `quality`, raising or lowering `no_issue_text`, `solution_leak`,
/// `unnamed_identifiers` and `unspecific`; the run signals (`hunks`, `flakiness`) and their flags stay as they are.
pub fn apply(quality: &mut Quality, signals: TextSignals) {
    quality.version = QUALITY_VERSION;
    let leaked = signals.leakage.added_lines > 0 && signals.leakage.score >= signals.leakage.threshold;
    set(quality, QualityFlag::NoIssueText, signals.no_issue_text);
    set(quality, QualityFlag::SolutionLeak, leaked);
    set(quality, QualityFlag::UnnamedIdentifiers, !signals.unnamed_identifiers.is_empty());
    set(quality, QualityFlag::Unspecific, !signals.specificity.specific());
    quality.leakage = Some(signals.leakage);
    quality.unnamed_identifiers = signals.unnamed_identifiers;
    quality.specificity = Some(signals.specificity);
}

fn set(quality: &mut Quality, flag: QualityFlag, raised: bool) {
    if raised { quality.raise(flag) } else { quality.lower(flag) }
}

/// Computes the text signals of a record that has a `swe_forge` block and writes them into its
/// `swe_forge.quality` (made when it has none). Records without the block are left alone.
pub fn assess(inst: &mut Instance) {
    let signals = read(inst);
    if let Some(meta) = inst.swe_forge.as_mut() {
        apply(quality_of(meta), signals);
    }
}

fn quality_of(meta: &mut ForgeMeta) -> &mut Quality {
    meta.quality.get_or_insert_with(|| Quality { version: QUALITY_VERSION, ..Quality::default() })
}

#[cfg(test)]
mod tests;
