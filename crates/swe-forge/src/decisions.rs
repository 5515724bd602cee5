//! The review decisions that travel with a dataset: curate, report, publish and export read the
//! state store `swe-forge review` writes to for the same dataset (`swe_forge_review::find_store`),
//! unless `--store` names another or `--no-store` says to read none, and say on stderr how many
//! decisions they applied and from which store. A store that is there but cannot be read stops the
//! command, naming the flags, rather than publishing what a reviewer dropped.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use swe_forge_core::{Decision, ForgeMeta, Instance, ValidationStatus, Verdict};
use swe_forge_store::{ReviewRow, Store};

/// `--store` and `--no-store`, shared by the commands that apply review decisions.
#[derive(Debug, Clone, clap::Args)]
pub struct StoreArgs {
    /// The state store holding the reviews and decisions made with `swe-forge review`. Default:
    /// the one review uses for this dataset (<dataset>.work/state.sqlite, else state.sqlite in the
    /// work folder next to the dataset), when it exists. An instance decided `drop` or
    /// `needs_work` leaves the kept set, whatever else keeps it.
    #[arg(long, value_name = "PATH")]
    pub store: Option<PathBuf>,
    /// Read no state store: apply no review decision but those the records already carry.
    #[arg(long, conflicts_with = "store")]
    pub no_store: bool,
}

/// The reviews and decisions of one store, and how many decisions were applied to records.
#[derive(Debug)]
pub struct Decisions {
    /// Where they were read.
    pub path: PathBuf,
    /// The latest decision on each decided instance (a verdict this build does not know is left
    /// out, as if not made).
    pub decisions: BTreeMap<String, Decision>,
    /// The latest review of each reviewed instance, as stored (the keep rule is applied by the
    /// reader).
    pub reviews: BTreeMap<String, ReviewRow>,
    applied: usize,
    dropped: usize,
    needs_work: usize,
}

impl StoreArgs {
    /// The decisions `command` applies to `dataset`: none with `--no-store`; those of `--store`
    /// (which must exist); else those of the store review uses for `dataset` when there is one.
    /// A store that is there but cannot be read is an error naming `--store` and `--no-store`.
    pub fn open(&self, dataset: &Path, command: &str) -> Result<Option<Decisions>> {
        if self.no_store {
            return Ok(None);
        }
        let path = match &self.store {
            Some(path) if !path.exists() => bail!("state store {} (--store) does not exist", path.display()),
            Some(path) => path.clone(),
            None if dataset.as_os_str() == "-" => return Ok(None),
            None => {
                let path = swe_forge_review::find_store(dataset);
                if !path.exists() {
                    if !crate::reporter::quiet() {
                        eprintln!(
                            "{command}: no review decisions applied: no state store at {} (--store names one)",
                            path.display()
                        );
                    }
                    return Ok(None);
                }
                path
            }
        };
        match Decisions::read(&path) {
            Ok(decisions) => Ok(Some(decisions)),
            Err(e) => bail!(
                "cannot read the review decisions in the state store {}: {e:#}; give --store PATH to read \
                 another store, or --no-store to {command} without review decisions",
                path.display()
            ),
        }
    }
}

impl Decisions {
    fn read(path: &Path) -> Result<Decisions> {
        if !path.is_file() {
            bail!("not a file");
        }
        let store = Store::open(path)?;
        let decisions = store
            .latest_decisions()?
            .into_iter()
            .filter_map(|(id, row)| Some((id, swe_forge_review::decision_from_row(&row)?)))
            .collect();
        let reviews = store.latest_reviews()?;
        Ok(Decisions { path: path.to_owned(), decisions, reviews, applied: 0, dropped: 0, needs_work: 0 })
    }

    /// Puts the store's decision on `r`, if it has one for `r` (it replaces the one `r` carries),
    /// and counts it.
    pub fn apply(&mut self, r: &mut Instance) {
        let Some(decision) = self.decisions.get(&r.instance_id) else { return };
        self.applied += 1;
        self.dropped += usize::from(decision.verdict == Verdict::Drop);
        self.needs_work += usize::from(decision.verdict == Verdict::NeedsWork);
        r.swe_forge.get_or_insert_with(|| ForgeMeta::new(ValidationStatus::Candidate)).decision =
            Some(decision.clone());
    }

    /// Says on stderr how many decisions `command` applied, and from which store.
    pub fn report(&self, command: &str) {
        eprintln!("{command}: {}", applied_line(self.applied, self.dropped, self.needs_work, &self.path));
    }
}

/// [`Decisions::apply`] of the decisions read, if any.
pub fn apply(decisions: &mut Option<Decisions>, r: &mut Instance) {
    if let Some(d) = decisions.as_mut() {
        d.apply(r);
    }
}

/// [`Decisions::report`] of the decisions read, if any.
pub fn report(decisions: &Option<Decisions>, command: &str) {
    if let Some(d) = decisions {
        d.report(command);
    }
}

/// `3 review decisions applied (1 drop, 1 needs_work) from <store>`.
pub fn applied_line(applied: usize, dropped: usize, needs_work: usize, store: &Path) -> String {
    let s = if applied == 1 { "" } else { "s" };
    format!("{applied} review decision{s} applied ({dropped} drop, {needs_work} needs_work) from {}", store.display())
}

/// Whether a person's decision on `r` takes it out of the kept set (`drop`, `needs_work`).
pub fn dropped_by_decision(r: &Instance) -> bool {
    r.swe_forge.as_ref().and_then(|m| m.decision.as_ref()).is_some_and(|d| d.verdict != Verdict::Keep)
}
