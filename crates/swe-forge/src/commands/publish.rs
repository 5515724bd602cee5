//! `swe-forge publish`: a dataset folder as the Hugging Face Hub reads it: configurations of
//! Parquet tables under `data/` (`default`: every instance, as `export --parquet` writes it,
//! stored once in a file per language, repository and split; `lang_<language>` and
//! `repo_<org>__<repo>`: the same files of one language or repository, named by pattern;
//! `swebench`: the SWE-bench rows of `export --format swebench`; `tests`: the tests table of
//! `export --tests-parquet`; each with a `test` split), and `README.md`: YAML front matter
//! naming the configurations' files, license and language, then the dataset card of `report`,
//! its plots in `plots/`; with `--license other` and no `--license-link`, `LICENSE.md` naming the
//! repositories whose licenses apply.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use swe_forge_fs::Slot;

use anyhow::{Context, Result, bail};
use swe_forge_card::{HubCard, HubConfig, HubSplit, ReportOptions};
use swe_forge_core::{Instance, MarkdownTable, ValidationStatus};
use swe_forge_curate::{Heuristic, is_kept};
use swe_forge_logparse::Naming;

use crate::decisions::StoreArgs;
use crate::exit::Usage;
use crate::exporting::{KeptRuns, Names, msb_named};
use crate::records::open_records;
use crate::written::Written;

#[derive(Debug, clap::Args)]
#[command(after_help = "Example:\n  swe-forge publish --dataset curated.jsonl --out hub/ --license apache-2.0")]
pub struct PublishArgs {
    /// The dataset: validated (or curated) records, JSONL or an instances Parquet table. Only
    /// records validation accepted, not dropped by a review decision (the store's, see --store)
    /// or a curated review, and not duplicates are published.
    #[arg(long, visible_alias = "records")]
    pub dataset: PathBuf,
    #[command(flatten)]
    pub store: StoreArgs,
    /// The folder to write: README.md, plots/ and the Parquet files under data/.
    #[arg(long, short)]
    pub out: PathBuf,
    /// A folder of split files, one split per file named by its stem, e.g. `<splits>/lang` as
    /// `curate --splits <splits>` writes it. Default: one split, `test`, of the whole dataset;
    /// with splits, every configuration has a `test` split too (every split's rows) unless one
    /// of them is called so.
    #[arg(long)]
    pub splits: Option<PathBuf>,
    /// The license id in the front matter, one the Hub knows (`apache-2.0`, `mit`, `cc-by-4.0`,
    /// ...; any other is refused, naming them); `other` when none fits, e.g. instances of
    /// repositories under different licenses.
    #[arg(long, default_value = "other")]
    pub license: String,
    /// With `--license other`: the license's own id in the front matter's `license_name`
    /// [default: per-repository].
    #[arg(long)]
    pub license_name: Option<String>,
    /// With `--license other`: the license's text in the front matter's `license_link`, a file of
    /// the published folder or a URL [default: LICENSE.md, written here, naming each repository
    /// whose license applies to its instances].
    #[arg(long)]
    pub license_link: Option<String>,
    /// A natural language of the instances' text (issues, titles), an ISO 639-1 code with optional
    /// subtags (`en`, `pt-BR`; any other is refused), for the front matter's `language`
    /// (repeatable).
    #[arg(long = "language", default_value = "en", value_name = "CODE")]
    pub languages: Vec<String>,
    /// Test names in the published test maps and lists (`FAIL_TO_PASS`, ...): swe-forge's
    /// canonical ids, or Multi-SWE-bench's, as `export --naming` writes them (derived from each
    /// record's runs, or those kept under --work-dir); the card and its front matter
    /// (`test_naming`) say which.
    #[arg(long, value_parser = crate::cli::export_naming(), default_value_t = Naming::Canonical)]
    pub naming: Naming,
    /// Where validation kept its runs (`<work-dir>/logs/<instance_id>/`), for --naming msb.
    /// Default: the dataset's path with the extension `.work`, as validate makes it.
    #[arg(long)]
    pub work_dir: Option<PathBuf>,
    /// The card's title and the dataset's pretty name. Default: the dataset's file name.
    #[arg(long)]
    pub title: Option<String>,
    /// Replace a README.md or LICENSE.md in --out that swe-forge did not write (or that was edited
    /// since), and remove Parquet files under --out/data/ it did not write. Without it they are
    /// refused, named (the files written are listed in --out/.swe-forge-written).
    #[arg(long)]
    pub force: bool,
    /// Instances raising these quality flags are not published (nor counted in the card).
    #[command(flatten)]
    pub flags: crate::cli::FlagArgs,
    /// Print the summary as one JSON object on stdout (the folder, the card, each configuration's
    /// splits with their rows and files, the instances left out by --drop-flag) instead of lines.
    #[arg(long)]
    pub json: bool,
}

pub fn publish_command(args: PublishArgs) -> Result<()> {
    let other_license = license_of(&args)?;
    check_languages(&args.languages)?;
    let title = args.title.clone().unwrap_or_else(|| {
        args.dataset.file_stem().map_or_else(|| "Dataset".into(), |s| s.to_string_lossy().into_owned())
    });
    let split_files = args.splits.as_deref().map(split_files).transpose()?;
    let mut decisions = args.store.open(&args.dataset, "publish")?;

    // Records are read one at a time: the card and the census keep a few numbers of each, the
    // publication keeps the records it ships in a temporary file. Nothing in --out changes
    // before the census says there is something to publish.
    let runs = KeptRuns::of(args.naming, args.work_dir.as_deref(), &args.dataset);
    let mut publication = Publication::new(&args.out, runs)?;
    let options = ReportOptions { out_dir: args.out.clone(), title: title.clone(), heuristic: Heuristic::CALIBRATED };
    let mut card = swe_forge_card::Card::new(options);
    let mut census = Census::default();
    // The splits: each one's name and the slots of its records in the publication.
    let mut splits: Vec<(String, Vec<Slot>)> = Vec::new();
    if split_files.is_none() {
        splits.push(("test".to_owned(), Vec::new()));
    }
    let mut flag_dropped = 0;
    for r in open_records(&args.dataset)? {
        let mut r = r?;
        crate::decisions::apply(&mut decisions, &mut r);
        if is_kept(&r) && args.flags.drops(&r) {
            flag_dropped += 1;
            continue;
        }
        card.add(&r);
        census.add(&r);
        if split_files.is_none() && is_kept(&r) {
            splits[0].1.push(publication.keep(&r)?);
        }
    }
    census.check(&args.dataset)?;
    for (name, file) in split_files.iter().flatten() {
        let mut slots = Vec::new();
        for r in open_records(file)? {
            let mut r = r?;
            crate::decisions::apply(&mut decisions, &mut r);
            if is_kept(&r) && !args.flags.drops(&r) {
                slots.push(publication.keep(&r)?);
            }
        }
        if slots.is_empty() {
            eprintln!("{}: no accepted records, left out", file.display());
            continue;
        }
        splits.push((name.clone(), slots));
    }
    crate::decisions::report(&decisions, "publish");
    if !args.flags.drop_flags.is_empty() {
        let names: Vec<&str> = args.flags.drop_flags.iter().map(|f| f.as_str()).collect();
        eprintln!("publish: {flag_dropped} instance(s) left out for raising {}", names.join(" or "));
    }
    if let Some(dir) = &args.splits
        && splits.is_empty()
    {
        bail!("no split file of {} holds an accepted record: nothing to publish", dir.display());
    }
    // Only files an earlier publish or report wrote, unchanged since, are replaced or removed.
    let license_out = other_license.as_ref().filter(|_| args.license_link.is_none()).map(|(_, link)| link.as_str());
    let mut written = Written::read(&args.out)?;
    written.check_replace(&[&["README.md"], license_out.as_slice()].concat(), args.force)?;
    let stale = written.stale_parquet(args.force)?;
    for (name, slots) in &splits {
        publication.split(name, slots)?;
    }
    let (configs, new, repos) = publication.finish()?;
    // The files of the earlier publication this one did not write again go once the new are there.
    for rel in stale.iter().filter(|r| !new.contains(r)) {
        written.remove(rel)?;
    }
    for rel in &new {
        written.record(rel)?;
    }
    if let Some(link) = license_out {
        swe_forge_fs::write_file(args.out.join(link), license_file(&repos).as_bytes())?;
        written.record(link)?;
    }
    let card = card.write()?;
    let hub = HubCard {
        pretty_name: title,
        license: args.license.clone(),
        other_license,
        languages: args.languages.clone(),
        naming: args.naming.as_str().to_owned(),
        configs,
    };
    finish_card(&card, &hub)?;
    written.record("README.md")?;
    written.save()?;
    let dropped = (!args.flags.drop_flags.is_empty()).then_some(flag_dropped);
    print_summary(&args, &hub.configs, &card, dropped);
    Ok(())
}

/// A line per configuration's split (rows, name, files) and the card's path; with --json, one
/// JSON object.
fn print_summary(args: &PublishArgs, configs: &[HubConfig], card: &Path, flag_dropped: Option<usize>) {
    if args.json {
        let configs: Vec<serde_json::Value> = configs
            .iter()
            .map(|c| {
                let splits: Vec<serde_json::Value> = c
                    .splits
                    .iter()
                    .map(|s| serde_json::json!({ "name": s.name, "rows": s.rows, "path": s.path }))
                    .collect();
                serde_json::json!({ "name": c.name, "splits": splits })
            })
            .collect();
        let value = serde_json::json!({
            "out": args.out.display().to_string(),
            "card": card.display().to_string(),
            "naming": args.naming.as_str(),
            "license": args.license,
            "configs": configs,
            "flag_dropped": flag_dropped,
        });
        outln!("{value}");
        return;
    }
    for config in configs {
        for split in &config.splits {
            outln!("{:>6}  {} {}: {}", split.rows, config.name, split.name, args.out.join(&split.path).display());
        }
    }
    outln!("{}", card.display());
}

/// The card `report` wrote at `card` with the Hub's front matter before it, and the files, usage
/// and citation sections after it.
fn finish_card(card: &Path, hub: &HubCard) -> Result<()> {
    let body = std::fs::read_to_string(card).with_context(|| format!("reading {}", card.display()))?;
    let text = format!(
        "{}{body}\n{}\n{}\n{}",
        swe_forge_card::front_matter(hub),
        files_section(&hub.configs),
        swe_forge_card::usage_section(hub),
        swe_forge_card::citation_section(hub)
    );
    Ok(swe_forge_fs::write_file(card, text.as_bytes())?)
}

/// Refuses a `--language` that is not an ISO 639-1 code (with optional subtags), naming the codes.
fn check_languages(codes: &[String]) -> Result<()> {
    match codes.iter().find(|code| !swe_forge_card::valid_language(code)) {
        None => Ok(()),
        Some(code) => Err(Usage(format!(
            "--language {code:?} is not an ISO 639-1 code the Hub knows, with optional subtags (`en`, `pt-BR`); \
             the codes: {}",
            swe_forge_card::hub_languages().join(", ")
        ))
        .into()),
    }
}

/// The file `--license other` links to unless `--license-link` names another.
const LICENSE_FILE: &str = "LICENSE.md";

/// `license_name` and `license_link` with `--license other` (defaults filled in), None with any
/// other license; `--license-name` or `--license-link` with another license is a usage error.
fn license_of(args: &PublishArgs) -> Result<Option<(String, String)>> {
    if !swe_forge_card::hub_license(&args.license) {
        return Err(Usage(format!(
            "--license {:?} is not a license id the Hub knows; give one of: {} (`other`, with --license-name and \
             --license-link, when none fits)",
            args.license,
            swe_forge_card::hub_licenses().join(", ")
        ))
        .into());
    }
    if args.license != "other" {
        if args.license_name.is_some() || args.license_link.is_some() {
            return Err(Usage(format!(
                "--license-name and --license-link go with --license other (the Hub knows {:?} by its id)",
                args.license
            ))
            .into());
        }
        return Ok(None);
    }
    let name = args.license_name.clone().unwrap_or_else(|| "per-repository".to_owned());
    if !swe_forge_card::valid_license(&name) {
        return Err(Usage(format!("--license-name {name:?} is not a license id (letters, digits and . + - _)")).into());
    }
    let link = args.license_link.clone().unwrap_or_else(|| LICENSE_FILE.to_owned());
    if link.is_empty() || link.chars().any(char::is_control) {
        return Err(Usage(format!("--license-link {link:?}: give a file name or a URL")).into());
    }
    Ok(Some((name, link)))
}

/// What a configuration's files hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Table {
    /// swe-forge's instances table, one row per instance.
    Instances,
    /// SWE-bench's rows (`export --format swebench`), one per instance.
    Swebench,
    /// The tests table (`export --tests-parquet`), one row per (instance, test).
    Tests,
}

/// A configuration's place in the card's order: `default` (every instance), `lang_<language>`
/// and `repo_<org>__<repo>` (the instances of one language or repository: the same files,
/// fewer of them), `swebench` and `tests` (other tables of the same instances).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Config {
    Default,
    Lang(String),
    Repo(String),
    Swebench,
    Tests,
}

impl Config {
    /// The configuration's name in the front matter.
    fn name(&self) -> String {
        match self {
            Config::Default => swe_forge_card::DEFAULT_CONFIG.to_owned(),
            Config::Lang(key) => format!("lang_{key}"),
            Config::Repo(key) => format!("repo_{key}"),
            Config::Swebench => "swebench".to_owned(),
            Config::Tests => "tests".to_owned(),
        }
    }

    /// The files of split `split` (`*`: of every split): the instances' files are
    /// `data/instances/<language>/<org>__<repo>/<split>-00000-of-00001.parquet`, each instance
    /// in one, which `default`, `lang_*` and `repo_*` name by pattern.
    fn files(&self, split: &str) -> String {
        let file = if split == "*" { "*.parquet".to_owned() } else { format!("{split}-00000-of-00001.parquet") };
        match self {
            Config::Default => format!("data/instances/*/*/{file}"),
            Config::Lang(lang) => format!("data/instances/{lang}/*/{file}"),
            Config::Repo(repo) => format!("data/instances/*/{repo}/{file}"),
            Config::Swebench => swe_forge_card::split_file("swebench", split),
            Config::Tests => swe_forge_card::split_file("tests", split),
        }
    }

    /// The folder of a record's instances file under `data/instances/`, as names the Hub accepts:
    /// its language's and its repository's.
    fn group_of(r: &Instance) -> (String, String) {
        (
            swe_forge_card::split_name(r.lang.as_deref().unwrap_or("unknown")),
            swe_forge_card::split_name(&format!("{}__{}", r.org, r.repo)),
        )
    }
}

/// One Parquet file being written: instances, SWE-bench or tests rows, as the records come.
enum Sink {
    Instances(swe_forge_export::InstancesWriter),
    Swebench(swe_forge_export::SweBenchParquetWriter),
    Tests(swe_forge_export::TestsWriter),
}

impl Sink {
    fn create(table: Table, path: &Path, producer: &swe_forge_export::Producer) -> Result<Sink> {
        crate::exporting::create_parents([Some(path), None, None])?;
        Ok(match table {
            Table::Instances => Sink::Instances(swe_forge_export::InstancesWriter::create(path, producer)?),
            Table::Swebench => Sink::Swebench(swe_forge_export::SweBenchParquetWriter::create(path, producer)?),
            Table::Tests => Sink::Tests(swe_forge_export::TestsWriter::create(path, producer)?),
        })
    }

    /// Writes the row or rows of `r` (with `names`, the Multi-SWE-bench name of each canonical
    /// id its runs printed, under --naming msb); returns how many.
    fn write(&mut self, r: &Instance, names: Option<&Names>) -> Result<usize> {
        Ok(match self {
            Sink::Instances(w) => w.write(r).map(|()| 1)?,
            Sink::Swebench(w) => w.write(r, names).map(|()| 1)?,
            Sink::Tests(w) => {
                w.write(r)?;
                swe_forge_export::test_rows(std::slice::from_ref(r)).len()
            }
        })
    }

    /// Writes what is left and puts the file in place.
    fn finish(self) -> Result<()> {
        match self {
            Sink::Instances(w) => w.finish()?,
            Sink::Swebench(w) => w.finish()?,
            Sink::Tests(w) => w.finish()?,
        }
        Ok(())
    }
}

/// Where a record is in the [`Spool`].
/// The records a publication ships, as JSONL in a spool: each split's files are written from it
/// in order, and each language's and repository's files from the slots of their records, so that
/// one file is open at a time whatever the number of configurations, and memory holds only the
/// slots.
struct Spool(swe_forge_fs::Spool);

impl Spool {
    fn new() -> Result<Spool> {
        Ok(Spool(swe_forge_fs::Spool::new()))
    }

    fn push(&mut self, r: &Instance, names: Option<&Names>) -> Result<Slot> {
        let line = serde_json::to_vec(&(r, names))?;
        self.0.push(&line).context("writing the records to publish to a temporary file")
    }

    fn get(&self, slot: Slot) -> Result<(Instance, Option<Names>)> {
        let bytes = self.0.read(slot).context("reading the records to publish back")?;
        Ok(serde_json::from_slice(&bytes)?)
    }
}

/// The Parquet files of a publication: each split's `swebench` and `tests` files written as its
/// records come ([`Publication::split`]), then the instances' files, one per language,
/// repository and split ([`Publication::finish`]), which every instances configuration names.
/// Each file is put in place when written.
struct Publication {
    out: PathBuf,
    producer: swe_forge_export::Producer,
    spool: Spool,
    splits: Vec<String>,
    /// The slots of each (language, repository)'s records, with the split of each, in the order
    /// they came.
    groups: BTreeMap<(String, String), Vec<(usize, Slot)>>,
    /// Each configuration's rows in each split (by number).
    rows: BTreeMap<(Config, usize), usize>,
    /// The files written, relative to the folder.
    written: Vec<String>,
    /// The repositories of the distinct instances published, for `LICENSE.md`.
    seen: HashSet<String>,
    repos: BTreeMap<String, usize>,
    /// Rows kept in all splits: more than the distinct instances when the splits overlap.
    kept: usize,
    /// Where `--naming msb` finds each record's runs; None with canonical names.
    runs: Option<KeptRuns>,
}

impl Publication {
    fn new(out: &Path, runs: Option<KeptRuns>) -> Result<Publication> {
        Ok(Publication {
            out: out.to_owned(),
            producer: crate::exporting::producer(),
            spool: Spool::new()?,
            splits: Vec::new(),
            groups: BTreeMap::new(),
            rows: BTreeMap::new(),
            written: Vec::new(),
            seen: HashSet::new(),
            repos: BTreeMap::new(),
            kept: 0,
            runs,
        })
    }

    /// Keeps `r` (labelled, and named, as export labels and names it) for the publication; its
    /// slot goes to [`Publication::split`].
    fn keep(&mut self, r: &Instance) -> Result<Slot> {
        let r = crate::exporting::labelled(r).into_owned();
        let (r, names) = match &self.runs {
            Some(runs) => msb_named(r, runs)?,
            None => (r, None),
        };
        self.spool.push(&r, names.as_ref())
    }

    /// Writes one file of `table` at `rel` from the records at `slots`; notes its rows.
    fn write(&mut self, table: Table, rel: String, slots: impl Iterator<Item = Slot>) -> Result<usize> {
        let mut sink = Sink::create(table, &self.out.join(&rel), &self.producer)?;
        let mut rows = 0;
        for slot in slots {
            let (r, names) = self.spool.get(slot)?;
            rows += sink.write(&r, names.as_ref())?;
        }
        sink.finish()?;
        self.written.push(rel);
        Ok(rows)
    }

    /// Writes split `name`'s `swebench` and `tests` files from the records kept at `slots` (none
    /// when there are none), and notes each record's language and repository.
    fn split(&mut self, name: &str, slots: &[Slot]) -> Result<()> {
        if slots.is_empty() {
            return Ok(());
        }
        self.splits.push(name.to_owned());
        let split = self.splits.len() - 1;
        for config in [Config::Swebench, Config::Tests] {
            let table = if config == Config::Swebench { Table::Swebench } else { Table::Tests };
            let rows = self.write(table, config.files(name), slots.iter().copied())?;
            self.rows.insert((config, split), rows);
        }
        for &slot in slots {
            let (r, _) = self.spool.get(slot)?;
            self.groups.entry(Config::group_of(&r)).or_default().push((split, slot));
            if self.seen.insert(r.instance_id.clone()) {
                *self.repos.entry(format!("{}/{}", r.org, r.repo)).or_default() += 1;
            }
        }
        self.kept += slots.len();
        Ok(())
    }

    /// Writes the instances' files, one at a time; returns the configurations in the card's order
    /// (each with a `test` split: every split's rows when none is called so), the files written,
    /// and the instances of each repository.
    fn finish(mut self) -> Result<Published> {
        for ((lang, repo), members) in std::mem::take(&mut self.groups) {
            for chunk in members.chunk_by(|a, b| a.0 == b.0) {
                let split = chunk[0].0;
                let rel = format!("data/instances/{lang}/{repo}/{}-00000-of-00001.parquet", self.splits[split]);
                let rows = self.write(Table::Instances, rel, chunk.iter().map(|m| m.1))?;
                for config in [Config::Default, Config::Lang(lang.clone()), Config::Repo(repo.clone())] {
                    *self.rows.entry((config, split)).or_default() += rows;
                }
            }
        }
        if self.kept > self.seen.len() {
            eprintln!(
                "publish: the splits overlap ({} rows of {} instances): the `test` split of each configuration \
                 holds every split's rows, an instance as often as it is in them",
                self.kept,
                self.seen.len()
            );
        }
        let mut configs: Vec<(Config, HubConfig)> = Vec::new();
        for ((config, split), rows) in &self.rows {
            let split = &self.splits[*split];
            let entry = HubSplit { name: split.clone(), rows: *rows, path: config.files(split) };
            match configs.last_mut() {
                Some((c, hub)) if c == config => hub.splits.push(entry),
                _ => configs.push((config.clone(), HubConfig { name: config.name(), splits: vec![entry] })),
            }
        }
        // `load_dataset(REPO, NAME, split="test")` reads every configuration.
        let configs = configs
            .into_iter()
            .map(|(config, mut hub)| {
                if !hub.splits.iter().any(|s| s.name == "test") {
                    let rows = hub.splits.iter().map(|s| s.rows).sum();
                    hub.splits.push(HubSplit { name: "test".to_owned(), rows, path: config.files("*") });
                }
                hub
            })
            .collect();
        Ok((configs, self.written, self.repos))
    }
}

/// What a publication wrote: its configurations in the card's order, its files (relative to the
/// folder), and the number of instances of each repository.
type Published = (Vec<HubConfig>, Vec<String>, BTreeMap<String, usize>);

/// The dataset's records by status, and how many a publication ships.
#[derive(Default)]
struct Census {
    records: usize,
    accepted: usize,
    rejected: usize,
    kept: usize,
}

impl Census {
    fn add(&mut self, r: &Instance) {
        self.records += 1;
        self.accepted += usize::from(r.status() == ValidationStatus::Accepted);
        self.rejected += usize::from(r.status() == ValidationStatus::Rejected);
        self.kept += usize::from(is_kept(r));
    }

    /// Refuses a dataset with no record to publish (accepted, not dropped by a review, not a
    /// duplicate), saying why.
    fn check(&self, path: &Path) -> Result<()> {
        let Census { records, accepted, rejected, kept } = *self;
        if kept > 0 {
            return Ok(());
        }
        let pending = records - accepted - rejected;
        if records == 0 {
            bail!("{} holds no records: nothing to publish", path.display());
        }
        if accepted == 0 {
            bail!(
                "{} has no accepted records ({records} records: {rejected} rejected, {pending} not validated): only \
                 records validation accepted are published; run `swe-forge validate` on them first",
                path.display(),
            );
        }
        bail!(
            "{} has {accepted} accepted records, but reviews dropped or duplicate marks removed every one: nothing to publish",
            path.display()
        )
    }
}

/// The LICENSE.md of `--license other`: the instances come from these repositories, each under
/// its own license.
fn license_file(repos: &BTreeMap<String, usize>) -> String {
    let mut text = String::from(
        "# License\n\nEach instance of this dataset is taken from a public repository: its issue text, patches and \
         tests are that repository's, under that repository's license. The repositories, with their number of \
         instances:\n\n",
    );
    for (repo, n) in repos {
        let repo = crate::terminal::clean(repo);
        text.push_str(&format!("- [{repo}](https://github.com/{repo}) ({n})\n"));
    }
    text
}

/// The card's `## Files` section: each configuration, what its rows are, and its files.
fn files_section(configs: &[HubConfig]) -> String {
    let mut text = String::from(
        "## Files\n\nConfigurations (`datasets.load_dataset(REPO, NAME, split=\"test\")`): `default` holds every \
         instance, one row per instance in swe-forge's instances table (the record's fields as columns, \
         `swe_forge` as JSON, and flat columns to filter on without JSON: `difficulty`, `evidence_complete`, \
         `image`, `image_id`, `image_digest`, `warnings`, `quality_flags`, `created_at`, `merged_at`; every column \
         in swe-forge's `schemas/parquet.md`); `lang_*` and `repo_*` the instances of one language or repository. \
         The three read the same files: each instance is stored once, in \
         `data/instances/<language>/<org>__<repo>/<split>-00000-of-00001.parquet`, and each configuration names \
         its files by pattern. `swebench` holds the SWE-bench rows of the same instances, `tests` one row per \
         test. Every configuration has a `test` split: every instance of it.\n\n",
    );
    let mut table = MarkdownTable::new(["configuration", "split", "rows", "files"]);
    for config in configs {
        for split in &config.splits {
            table.row([
                format!("`{}`", config.name),
                format!("`{}`", split.name),
                split.rows.to_string(),
                format!("`{}`", split.path),
            ]);
        }
    }
    text.push_str(&table.to_string());
    text
}

/// One split per `*.jsonl` or `*.parquet` file of `dir`, named by its stem (made a name the Hub
/// accepts), sorted by name. A split keeps only publishable records; one left with none is left
/// out.
fn split_files(dir: &Path) -> Result<Vec<(String, PathBuf)>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("reading the splits folder {}", dir.display()))?
        .filter_map(|e| Some(e.ok()?.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "jsonl" || e == "parquet"))
        .collect();
    files.sort();
    if files.is_empty() {
        bail!(
            "{} holds no split files (*.jsonl, *.parquet); give one kind of split, e.g. {}",
            dir.display(),
            dir.join("lang").display()
        );
    }
    let mut splits: Vec<(String, PathBuf)> = Vec::new();
    for file in files {
        let name = swe_forge_card::split_name(&file.file_stem().unwrap_or_default().to_string_lossy());
        if splits.iter().any(|(n, _)| *n == name) {
            bail!("two split files of {} give the split name {name:?}", dir.display());
        }
        splits.push((name, file));
    }
    Ok(splits)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records of many repositories and two languages, interleaved over two splits: every file
    /// holds the records of its configuration and split, in the order they came.
    #[test]
    fn every_configuration_holds_its_records_in_order() {
        let records: Vec<Instance> = (0..60)
            .map(|i| {
                let mut r = crate::synthetic::synthetic_record(i);
                r.lang = Some(if i % 3 == 0 { "go" } else { "rust" }.to_owned());
                r
            })
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let mut publication = Publication::new(dir.path(), None).unwrap();
        let mut splits: [Vec<Slot>; 2] = Default::default();
        for r in &records {
            splits[(r.number % 2) as usize].push(publication.keep(r).unwrap());
        }
        publication.split("even", &splits[0]).unwrap();
        publication.split("odd", &splits[1]).unwrap();
        let (configs, files, repos) = publication.finish().unwrap();
        // A configuration's split read as the Hub reads it: the files its pattern matches, in
        // the order of their paths.
        let ids = |config: &str, split: &str| -> Vec<String> {
            let config = configs.iter().find(|c| c.name == config).unwrap_or_else(|| panic!("{config}"));
            let pattern = &config.splits.iter().find(|s| s.name == split).unwrap().path;
            let mut matched: Vec<&String> = files.iter().filter(|f| glob_match(pattern, f)).collect();
            matched.sort();
            let mut ids: Vec<String> = matched
                .into_iter()
                .flat_map(|f| swe_forge_export::read_instances_parquet(dir.path().join(f)).unwrap())
                .map(|r| r.instance_id)
                .collect();
            ids.sort();
            ids
        };
        let want = |keep: &dyn Fn(&Instance) -> bool| -> Vec<String> {
            let mut ids: Vec<String> = records.iter().filter(|r| keep(r)).map(|r| r.instance_id.clone()).collect();
            ids.sort();
            ids
        };
        assert_eq!(ids("default", "odd"), want(&|r| r.number % 2 == 1));
        assert_eq!(ids("default", "test"), want(&|_| true));
        assert_eq!(ids("lang_go", "even"), want(&|r| r.number % 2 == 0 && r.lang.as_deref() == Some("go")));
        assert_eq!(ids("lang_go", "test"), want(&|r| r.lang.as_deref() == Some("go")));
        let repo = Config::Repo(format!("{}__{}", records[5].org, records[5].repo).replace('-', "_"));
        let odd = records[5].number % 2 == 1;
        let same_repo = |r: &Instance| r.org == records[5].org && r.repo == records[5].repo;
        assert_eq!(
            ids(&repo.name(), if odd { "odd" } else { "even" }),
            want(&|r| same_repo(r) && (r.number % 2 == 1) == odd)
        );
        assert_eq!(ids(&repo.name(), "test"), want(&same_repo));
        // Each record is in one instances file, read in order within it.
        let instance_files: Vec<&String> = files.iter().filter(|f| f.starts_with("data/instances/")).collect();
        assert_eq!(instance_files.len(), 60, "one per repository (and split)");
        let names: Vec<&str> = configs.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names[..3], ["default", "lang_go", "lang_rust"]);
        assert_eq!(names[names.len() - 2..], ["swebench", "tests"]);
        assert_eq!(names.len(), 3 + 60 + 2, "60 repositories: one each");
        assert!(
            configs.iter().all(|c| c.splits.last().unwrap().name == "test"),
            "every configuration has a test split"
        );
        let tests = &configs[names.len() - 1];
        let splits: Vec<(&str, usize, &str)> =
            tests.splits.iter().map(|s| (s.name.as_str(), s.rows, s.path.as_str())).collect();
        assert_eq!(
            splits,
            [
                ("even", 30 * 23, "data/tests/even-00000-of-00001.parquet"),
                ("odd", 30 * 23, "data/tests/odd-00000-of-00001.parquet"),
                ("test", 60 * 23, "data/tests/*.parquet")
            ]
        );
        assert_eq!(repos.values().sum::<usize>(), 60);
    }

    /// A split called `test` among others is every configuration's `test` split as it is; without
    /// one, `test` is every split's rows, an instance as often as it is in them when they overlap.
    #[test]
    fn a_test_split_in_every_configuration() {
        let records: Vec<Instance> = (0..4).map(crate::synthetic::synthetic_record).collect();
        let dir = tempfile::tempdir().unwrap();
        let publish = |names: [&str; 2], second: usize| {
            let mut publication = Publication::new(dir.path(), None).unwrap();
            let slots: Vec<Slot> = records.iter().map(|r| publication.keep(r).unwrap()).collect();
            publication.split(names[0], &slots).unwrap();
            publication.split(names[1], &slots[..second]).unwrap();
            publication.finish().unwrap().0
        };
        let splits = |configs: &[HubConfig], name: &str| -> Vec<(String, usize)> {
            let config = configs.iter().find(|c| c.name == name).unwrap();
            config.splits.iter().map(|s| (s.name.clone(), s.rows)).collect()
        };
        let configs = publish(["all", "some"], 2);
        let want = |a: usize, b: usize| vec![("all".to_owned(), a), ("some".to_owned(), b), ("test".to_owned(), a + b)];
        assert_eq!(splits(&configs, "default"), want(4, 2), "overlapping splits: every row of each");
        assert_eq!(splits(&configs, "swebench"), want(4, 2));
        let configs = publish(["test", "train"], 1);
        assert_eq!(splits(&configs, "default"), [("test".to_owned(), 4), ("train".to_owned(), 1)]);
        let last = Config::Repo(Config::group_of(&records[3]).1).name();
        assert_eq!(splits(&configs, &last), [("test".to_owned(), 1)], "a repository only in test");
    }

    /// Whether `path` matches `pattern`, whose `*` matches within one path segment (as the Hub's
    /// data files patterns).
    fn glob_match(pattern: &str, path: &str) -> bool {
        let (p, f): (Vec<&str>, Vec<&str>) = (pattern.split('/').collect(), path.split('/').collect());
        p.len() == f.len()
            && p.iter().zip(&f).all(|(p, f)| match p.split_once('*') {
                None => p == f,
                Some((pre, post)) => f.len() >= pre.len() + post.len() && f.starts_with(pre) && f.ends_with(post),
            })
    }
}
