//! The name of a test-output format: the parser a recipe, an override, the command line and a
//! record (`swe_forge.parser`, `swe_forge.results_parser`) name. It lives here, in plain data,
//! so that records carry the typed name; the parsers themselves are in `swe-forge-logparse`,
//! which re-exports it.
//!
//! Serde reads and writes a framework as its name (`go-test-json`); a name that matches no
//! framework is refused, with the known names, wherever it appears.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A test-output format `swe-forge-logparse` can parse.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Framework {
    /// `go test -json` event stream (`go-test-json`).
    GoTestJson,
    /// `go test -v` text output (`go-test`).
    GoTestVerbose,
    /// libtest text output of `cargo test` (`cargo-test`).
    CargoLibtest,
    /// libtest JSON lines: `cargo test -- -Z unstable-options --format json`, nextest's
    /// `libtest-json` (`libtest-json`).
    LibtestJson,
    /// cargo-nextest JUnit XML (`nextest-junit`).
    NextestJunit,
    /// Maven Surefire console output (`maven-surefire`).
    MavenSurefire,
    /// JUnit XML as written by Surefire, Gradle and most tools (`junit-xml`).
    JunitXml,
    /// jest `--json` report (`jest-json`).
    JestJson,
    /// jest text output, best with `--verbose` (`jest`).
    Jest,
    /// mocha spec reporter text (`mocha`).
    Mocha,
    /// mocha json reporter (`mocha-json`).
    MochaJson,
    /// vitest json reporter (`vitest-json`).
    VitestJson,
    /// vitest verbose reporter text (`vitest`).
    Vitest,
    /// node:test spec reporter text (`node-test`).
    NodeTest,
    /// Test Anything Protocol, including node:test's TAP reporter (`tap`).
    Tap,
    /// ctest text output (`ctest`).
    Ctest,
    /// ctest `--output-junit` XML (`ctest-junit`).
    CtestJunit,
    /// GoogleTest text output (`gtest`).
    Gtest,
    /// GoogleTest `--gtest_output=xml` (`gtest-xml`).
    GtestXml,
    /// Catch2 console reporter text (`catch2`).
    Catch2,
    /// Catch2 `-r xml` reporter (`catch2-xml`).
    Catch2Xml,
    /// Catch2 `-r junit` reporter (`catch2-junit`).
    Catch2Junit,
    /// automake `make check` output, or its `.trs` files (`automake`).
    Automake,
}

impl Framework {
    /// Every framework, in declaration order.
    pub const ALL: [Framework; 23] = [
        Framework::GoTestJson,
        Framework::GoTestVerbose,
        Framework::CargoLibtest,
        Framework::LibtestJson,
        Framework::NextestJunit,
        Framework::MavenSurefire,
        Framework::JunitXml,
        Framework::JestJson,
        Framework::Jest,
        Framework::Mocha,
        Framework::MochaJson,
        Framework::VitestJson,
        Framework::Vitest,
        Framework::NodeTest,
        Framework::Tap,
        Framework::Ctest,
        Framework::CtestJunit,
        Framework::Gtest,
        Framework::GtestXml,
        Framework::Catch2,
        Framework::Catch2Xml,
        Framework::Catch2Junit,
        Framework::Automake,
    ];

    /// The parser name used in recipes and on the command line, such as `go-test-json`.
    pub fn name(self) -> &'static str {
        match self {
            Framework::GoTestJson => "go-test-json",
            Framework::GoTestVerbose => "go-test",
            Framework::CargoLibtest => "cargo-test",
            Framework::LibtestJson => "libtest-json",
            Framework::NextestJunit => "nextest-junit",
            Framework::MavenSurefire => "maven-surefire",
            Framework::JunitXml => "junit-xml",
            Framework::JestJson => "jest-json",
            Framework::Jest => "jest",
            Framework::Mocha => "mocha",
            Framework::MochaJson => "mocha-json",
            Framework::VitestJson => "vitest-json",
            Framework::Vitest => "vitest",
            Framework::NodeTest => "node-test",
            Framework::Tap => "tap",
            Framework::Ctest => "ctest",
            Framework::CtestJunit => "ctest-junit",
            Framework::Gtest => "gtest",
            Framework::GtestXml => "gtest-xml",
            Framework::Catch2 => "catch2",
            Framework::Catch2Xml => "catch2-xml",
            Framework::Catch2Junit => "catch2-junit",
            Framework::Automake => "automake",
        }
    }

    /// Whether the format is a structured report (XML or JSON) rather than console text.
    pub fn is_structured(self) -> bool {
        matches!(
            self,
            Framework::GoTestJson
                | Framework::LibtestJson
                | Framework::NextestJunit
                | Framework::JunitXml
                | Framework::JestJson
                | Framework::MochaJson
                | Framework::VitestJson
                | Framework::CtestJunit
                | Framework::GtestXml
                | Framework::Catch2Xml
                | Framework::Catch2Junit
        )
    }

    /// The file-name extension of the result files `swe_forge_logparse::parse_files` reads for this framework
    /// (`xml` for the XML reports, `trs` for automake); `None` for formats read from a log.
    pub fn result_file_extension(self) -> Option<&'static str> {
        match self {
            Framework::NextestJunit
            | Framework::JunitXml
            | Framework::CtestJunit
            | Framework::GtestXml
            | Framework::Catch2Xml
            | Framework::Catch2Junit => Some("xml"),
            Framework::Automake => Some("trs"),
            Framework::JestJson | Framework::MochaJson | Framework::VitestJson => Some("json"),
            _ => None,
        }
    }
}

impl fmt::Display for Framework {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The error of [`Framework::from_str`]: the name matches no framework.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownFramework(pub String);

impl fmt::Display for UnknownFramework {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown log parser `{}` (known: ", self.0)?;
        for (i, fw) in Framework::ALL.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(fw.name())?;
        }
        f.write_str(")")
    }
}

impl std::error::Error for UnknownFramework {}

impl FromStr for Framework {
    type Err = UnknownFramework;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Framework::ALL.into_iter().find(|fw| fw.name() == s).ok_or_else(|| UnknownFramework(s.to_owned()))
    }
}

/// Written as its name (`go-test-json`), so recipes, overrides and profiles carry a parser that
/// exists or fail to load.
impl Serialize for Framework {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Framework {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_reads_back_as_its_framework_in_text_and_json() {
        for fw in Framework::ALL {
            assert_eq!(fw.name().parse::<Framework>(), Ok(fw));
            let json = serde_json::to_string(&fw).unwrap();
            assert_eq!(json, format!("\"{}\"", fw.name()));
            assert_eq!(serde_json::from_str::<Framework>(&json).unwrap(), fw);
        }
    }

    #[test]
    fn an_unknown_name_is_refused_with_the_known_names() {
        let e = serde_json::from_str::<Framework>("\"pytest\"").unwrap_err().to_string();
        assert!(e.starts_with("unknown log parser `pytest` (known: go-test-json, go-test, "), "{e}");
        assert!(e.contains("automake)"), "{e}");
    }
}
