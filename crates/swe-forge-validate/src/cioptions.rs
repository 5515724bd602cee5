//! The CI build options an instance's setup takes, and what became of them. `ciflags.rs` (in
//! recipes) chooses one CI job and the sets to try after it; here the set in use is kept with
//! the sets that failed: a setup whose log shows its options failed (a CMake `FATAL_ERROR`,
//! options declared mutually exclusive, a CUDA compiler the image lacks) is built again with the
//! next set (`Validator::build_image`), each failed set with its line going into the
//! provenance (`ci_options`). A record whose image could not be made carries the provenance
//! gathered up to then, with the setup's line that says why ([`failed_provenance`]).

use swe_forge_core::{CiOptions, CiOptionsAttempt, Instance, Provenance, ToolchainChoice};
use swe_forge_recipes::{CiOptionSet, Detection, Recipe, Tool, sha256_hex};

/// The CI option sets of an instance, the one in use and those tried before.
#[derive(Debug, Clone, Default)]
pub(crate) struct CiTry {
    sets: Vec<CiOptionSet>,
    /// The set in use.
    pub at: usize,
    reason: String,
    attempts: Vec<CiOptionsAttempt>,
}

impl CiTry {
    /// The sets `recipe` would try with the CI jobs of `detection`, starting at `at` when given,
    /// else at the set the record's own image was built with (so that a verify rebuilds the
    /// same layers), else at the first.
    pub(crate) fn new(detection: &Detection, recipe: &Recipe, inst: &Instance, at: Option<usize>) -> CiTry {
        let Some(tool) = recipe.ci_flag_tool() else { return CiTry::default() };
        let sets = swe_forge_recipes::option_sets(&detection.ci_flags, tool);
        let reason = swe_forge_recipes::choice_reason(&detection.ci_flags, tool);
        let earlier = inst
            .swe_forge
            .as_ref()
            .filter(|m| m.image.is_some())
            .and_then(|m| m.provenance.as_ref())
            .and_then(|p| p.ci_options.as_ref());
        let (at, attempts) = match (at, earlier) {
            (Some(at), _) => (at, Vec::new()),
            (None, Some(e)) => match sets.iter().position(|s| s.label == e.job && s.flags == e.options) {
                Some(at) => (at, e.attempts.clone()),
                None => (0, Vec::new()),
            },
            (None, None) => (0, Vec::new()),
        };
        CiTry { at: at.min(sets.len().saturating_sub(1)), sets, reason, attempts }
    }

    /// The set in use, if the recipe takes the CI's options and the CI has a job for its tool.
    pub(crate) fn current(&self) -> Option<&CiOptionSet> {
        self.sets.get(self.at)
    }

    /// After a setup failed with `detail`: when its log shows the options failed and a set with
    /// fewer is left, the failed set goes onto the attempts and the next is in use; the line.
    pub(crate) fn next_after(&mut self, detail: &str) -> Option<String> {
        let set = self.current().filter(|s| !s.flags.is_empty() && self.at + 1 < self.sets.len())?;
        let line = swe_forge_recipes::option_failure(detail)?;
        self.attempts.push(CiOptionsAttempt {
            job: set.label.clone(),
            options: set.flags.clone(),
            error: line.clone(),
        });
        self.at += 1;
        Some(line)
    }

    /// The set in use and those tried, for the provenance.
    pub(crate) fn provenance(&self) -> Option<CiOptions> {
        let set = self.current()?;
        Some(CiOptions {
            tool: set.tool.label().to_owned(),
            job: set.label.clone(),
            reason: self.reason.clone(),
            options: set.flags.clone(),
            attempts: self.attempts.clone(),
        })
    }
}

/// What an instance whose setup failed was built with, up to the failure: recipe, the versions
/// and files asked for, toolchain choice and its attempts, the CI's options and theirs, the
/// test command's notes, and the line of `detail` (the setup's failure) that says why.
pub(crate) struct Tried<'a> {
    pub recipe: &'a Recipe,
    pub detection: &'a Detection,
    pub choice: Option<&'a (Tool, ToolchainChoice)>,
    pub command_notes: &'a [String],
    pub ci: &'a CiTry,
    pub base_tree: &'a str,
    pub extras: &'a [crate::ResolvedExtraSource],
}

/// The provenance of a record whose image could not be made: what [`Tried`] says, and the line
/// of the failure's `detail` that says why ([`setup_error_line`]).
pub(crate) fn failed_provenance(t: &Tried<'_>, detail: &str) -> Provenance {
    Provenance {
        recipe: t.recipe.name.clone(),
        recipe_sha256: sha256_hex(&[&serde_json::to_string(t.recipe).unwrap_or_default()]),
        requested_versions: t.detection.requested_versions.clone(),
        lockfiles: t.detection.lockfiles.clone(),
        base_tree: t.base_tree.to_owned(),
        extra_sources: t.extras.iter().map(|x| x.provenance()).collect(),
        toolchain_choice: t.choice.map(|(_, c)| c.clone()),
        test_command_notes: t.command_notes.to_vec(),
        ci_options: t.ci.provenance(),
        setup_error: setup_error_line(detail),
        ..Provenance::default()
    }
}

/// The line of a failed setup's `detail` that says why: one showing its options failed, else
/// one naming the toolchain, else the last that speaks of an error, else the first.
pub(crate) fn setup_error_line(detail: &str) -> String {
    let line = swe_forge_recipes::option_failure(detail)
        .or_else(|| swe_forge_recipes::classify_failure(detail).map(|s| s.line))
        .or_else(|| {
            detail.lines().rev().find(|l| l.to_ascii_lowercase().contains("error")).map(|l| l.trim().to_owned())
        })
        .unwrap_or_else(|| detail.lines().next().unwrap_or_default().trim().to_owned());
    line.chars().take(300).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_that_says_why_a_setup_failed() {
        let cmake = "setup exited with Some(1):\n-- Detecting CXX\nCMake Error at CMakeLists.txt:4 (message):\n  A and B are mutually exclusive\n-- Configuring incomplete, errors occurred!";
        assert_eq!(
            setup_error_line(cmake),
            "CMake Error at CMakeLists.txt:4 (message): A and B are mutually exclusive"
        );
        let compile = "setup exited with Some(1):\nsrc/a.c:1:1: error: unknown type name 'x'\nninja: build stopped: subcommand failed.";
        assert_eq!(setup_error_line(compile), "src/a.c:1:1: error: unknown type name 'x'");
        assert_eq!(setup_error_line("setup timed out after 60 s:\n..."), "setup timed out after 60 s:");
    }

    #[test]
    fn a_failed_set_goes_to_the_attempts_and_the_next_is_used_while_one_is_left() {
        let set = |label: &str, flags: &[&str]| CiOptionSet {
            tool: swe_forge_recipes::FlagTool::Cmake,
            label: label.into(),
            flags: flags.iter().map(|f| (*f).to_owned()).collect(),
        };
        let mut ci = CiTry {
            sets: vec![set("job a", &["-DT=ON", "-DA=ON"]), set("tests of job a", &["-DT=ON"]), set("none", &[])],
            ..CiTry::default()
        };
        let fatal = "CMake Error at CMakeLists.txt:4 (message):\n  A needs B\n";
        assert_eq!(ci.next_after("src/a.c:1: error: x").as_deref(), None, "no sign of the options");
        assert_eq!(ci.next_after(fatal).as_deref(), Some("CMake Error at CMakeLists.txt:4 (message): A needs B"));
        assert_eq!(ci.next_after(fatal).as_deref(), Some("CMake Error at CMakeLists.txt:4 (message): A needs B"));
        assert_eq!(ci.next_after(fatal), None, "none is the last");
        let p = ci.provenance().unwrap();
        assert_eq!((p.job.as_str(), p.options.len(), p.attempts.len()), ("none", 0, 2));
        assert_eq!(p.attempts[0].options, ["-DT=ON", "-DA=ON"]);
    }
}
