//! The kinds of warning a record can carry that later stages act on. Warnings are text on the
//! record (`swe_forge.warnings`, for people), each starting with its kind's prefix; stages that
//! decide by a warning ask [`Warning::on`], so the text is defined once.

/// A warning kind that other stages read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Warning {
    /// A submodule's commit was not found locally; its folder is empty in the image.
    MissingSubmodule,
    /// An extra source's mirror lacks files; they are absent from the image.
    MissingExtraSource,
    /// A run or build was retried after an engine or infrastructure failure.
    InfraRetry,
    /// A run failed with a sign that a certificate or token of the fixtures expired: its
    /// failures are the date's, not the code's (the detail names the run and the log line).
    TimeBomb,
    /// Built by compilers that drop the project's `-Werror` flags (the setup search's last
    /// attempt after every older compiler stopped on a warning): the detail names the warning.
    WarningsNotErrors,
}

impl Warning {
    /// The text every warning of this kind starts with.
    pub fn prefix(self) -> &'static str {
        match self {
            Warning::MissingSubmodule => "submodule not found locally",
            Warning::MissingExtraSource => "extra source incomplete in the mirror",
            Warning::InfraRetry => "retried after an infrastructure failure",
            Warning::TimeBomb => "time_bomb",
            Warning::WarningsNotErrors => "warnings_not_errors",
        }
    }

    /// A warning of this kind: its prefix, `: ` and the detail.
    pub fn with(self, detail: impl std::fmt::Display) -> String {
        format!("{}: {detail}", self.prefix())
    }

    /// Whether `warnings` hold one of this kind.
    pub fn on(self, warnings: &[String]) -> bool {
        warnings.iter().any(|w| w.starts_with(self.prefix()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_warning_is_found_by_its_kind() {
        let w = vec!["other".to_owned(), Warning::MissingSubmodule.with("libs/x at abc")];
        assert!(Warning::MissingSubmodule.on(&w));
        assert!(!Warning::MissingExtraSource.on(&w));
        assert_eq!(w[1], "submodule not found locally: libs/x at abc");
    }
}
