//! [`Naming`]: which test names a run's statuses, a record's lists or an export are in —
//! swe-forge's canonical ids, the names Multi-SWE-bench's harness gives the same tests (what its
//! published lists hold, by [`msb_rollup`]), or per record whichever of the two the record was
//! made in. Profiles (`naming = "msb"`), agreement reports, evaluation and `export --naming`
//! all use this one type, by the same written names.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use swe_forge_core::{Instance, TestStatus};

use crate::error::UnknownNaming;
use crate::{ParsedLog, msb_rollup};

/// Which test names are used: written `msb`, `canonical` or `auto`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Naming {
    /// Multi-SWE-bench's names (`TestPopEmptyReturnsError`): our runs are rolled up to them
    /// ([`msb_rollup`]) before categorising.
    Msb,
    /// swe-forge's canonical ids (`gostack::TestPopEmptyReturnsError`), as swe-forge records its
    /// own lists.
    Canonical,
    /// Per record: canonical when the record carries a `swe_forge` block (swe-forge made it),
    /// Multi-SWE-bench naming otherwise ([`Naming::resolve`]).
    Auto,
}

impl Naming {
    /// The naming used for `record`: `Auto` resolved, the others as they are.
    pub fn resolve(self, record: &Instance) -> Naming {
        match self {
            Naming::Auto if record.swe_forge.is_some() => Naming::Canonical,
            Naming::Auto => Naming::Msb,
            other => other,
        }
    }

    /// The name written in profiles, reports and flags.
    pub fn as_str(self) -> &'static str {
        match self {
            Naming::Msb => "msb",
            Naming::Canonical => "canonical",
            Naming::Auto => "auto",
        }
    }

    /// The statuses of `parsed` keyed in this naming (`Auto` must be resolved first; it reads
    /// as `Msb`).
    pub fn statuses(self, parsed: &ParsedLog) -> BTreeMap<String, TestStatus> {
        match self {
            Naming::Canonical => parsed.tests.clone(),
            Naming::Msb | Naming::Auto => msb_rollup(parsed),
        }
    }
}

impl fmt::Display for Naming {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Naming {
    type Err = UnknownNaming;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "msb" => Ok(Naming::Msb),
            "canonical" => Ok(Naming::Canonical),
            "auto" => Ok(Naming::Auto),
            other => Err(UnknownNaming(other.to_owned())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_names_round_trip_through_text_and_serde() {
        for naming in [Naming::Msb, Naming::Canonical, Naming::Auto] {
            assert_eq!(naming.to_string().parse::<Naming>().unwrap(), naming);
            let json = serde_json::to_string(&naming).unwrap();
            assert_eq!(json, format!("\"{}\"", naming.as_str()));
            assert_eq!(serde_json::from_str::<Naming>(&json).unwrap(), naming);
        }
        let err = "msb2".parse::<Naming>().unwrap_err();
        assert_eq!(err.to_string(), "unknown naming `msb2` (known: msb, canonical, auto)");
    }

    #[test]
    fn auto_naming_follows_the_swe_forge_block() {
        let mut inst = swe_forge_test_support::record("o", "r", 1);
        assert_eq!(Naming::Auto.resolve(&inst), Naming::Msb);
        inst.swe_forge = Some(swe_forge_core::ForgeMeta::new(swe_forge_core::ValidationStatus::Accepted));
        assert_eq!(Naming::Auto.resolve(&inst), Naming::Canonical);
        assert_eq!(Naming::Msb.resolve(&inst), Naming::Msb);
        assert_eq!(Naming::Canonical.resolve(&inst), Naming::Canonical);
    }
}
