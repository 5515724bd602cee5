//! `swe-forge publish`: a dataset folder as the Hugging Face Hub reads it: configurations of
//! Parquet tables under `data/`, one file per split (`default`: every instance, as
//! `export --parquet` writes it; `lang_<language>` and `repo_<org>__<repo>`: the same rows of one
//! language or repository; `swebench`: the SWE-bench rows of `export --format swebench`;
//! `tests`: the tests table of `export --tests-parquet`), and `README.md`: YAML front matter
//! naming the configurations' files, license and language, then the dataset card of `report`,
//! its plots in `plots/`; with `--license other` and no `--license-link`, `LICENSE.md` naming the
//! repositories whose licenses apply.

use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use swe_forge_card::{HubCard, HubConfig, ReportOptions};
use swe_forge_core::{Instance, MarkdownTable, ValidationStatus};
use swe_forge_curate::{Heuristic, is_kept};

use crate::exit::Usage;
use crate::records::open_records;

#[derive(Debug, clap::Args)]
#[command(after_help = "Example:\n  swe-forge publish --dataset curated.jsonl --out hub/ --license apache-2.0")]
pub struct PublishArgs {
    /// The dataset: validated (or curated) records, JSONL or an instances Parquet table. Only
    /// records validation accepted, not dropped by a review and not duplicates are published.
    #[arg(long, visible_alias = "records")]
    pub dataset: PathBuf,
    /// The folder to write: README.md, plots/ and data/<split>-00000-of-00001.parquet.
    #[arg(long, short)]
    pub out: PathBuf,
    /// A folder of split files, one split per file named by its stem, e.g. `<splits>/lang` as
    /// `curate --splits <splits>` writes it. Default: one split, `test`, of the whole dataset.
    #[arg(long)]
    pub splits: Option<PathBuf>,
    /// The license id in the front matter (`apache-2.0`, `mit`, `cc-by-4.0`, ...); `other` when
    /// none fits, e.g. instances of repositories under different licenses.
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
    /// A natural language of the instances' text (issues, titles), ISO 639-1, for the front
    /// matter's `language` (repeatable).
    #[arg(long = "language", default_value = "en", value_name = "CODE")]
    pub languages: Vec<String>,
    /// The card's title and the dataset's pretty name. Default: the dataset's file name.
    #[arg(long)]
    pub title: Option<String>,
}

pub fn publish_command(args: PublishArgs) -> Result<()> {
    let other_license = license_of(&args)?;
    for code in &args.languages {
        if !swe_forge_card::valid_language(code) {
            return Err(Usage(format!("--language {code:?} is not an ISO 639 code (`en`, `pt-BR`)")).into());
        }
    }
    let title = args.title.clone().unwrap_or_else(|| {
        args.dataset.file_stem().map_or_else(|| "Dataset".into(), |s| s.to_string_lossy().into_owned())
    });
    let split_files = args.splits.as_deref().map(split_files).transpose()?;

    // Records are read one at a time and written to every file they belong to as they come; the
    // files are renamed into place together at the end, so an error leaves the previous
    // publication's files.
    let batch = swe_forge_fs::Batch::begin();
    let mut publication = Publication::new(&args.out);
    let options = ReportOptions { out_dir: args.out.clone(), title: title.clone(), heuristic: Heuristic::CALIBRATED };
    let mut card = swe_forge_card::Card::new(options);
    let mut census = Census::default();
    for r in open_records(&args.dataset)? {
        let r = r?;
        card.add(&r);
        census.add(&r);
        if split_files.is_none() && is_kept(&r) {
            publication.add("test", &r)?;
        }
    }
    census.check(&args.dataset)?;
    for (name, file) in split_files.iter().flatten() {
        let before = publication.records;
        for r in open_records(file)? {
            let r = r?;
            if is_kept(&r) {
                publication.add(name, &r)?;
            }
        }
        if publication.records == before {
            eprintln!("{}: no accepted records, left out", file.display());
        }
    }
    if let Some(dir) = &args.splits
        && publication.records == 0
    {
        bail!("no split file of {} holds an accepted record: nothing to publish", dir.display());
    }
    let (configs, repos) = publication.finish()?;
    clear_parquet(&args.out.join("data"))?;
    batch.commit()?;
    for config in &configs {
        for (split, rows) in &config.splits {
            outln!("{rows:>6}  {}", args.out.join(config.path(split)).display());
        }
    }
    if let Some((_, link)) = &other_license
        && args.license_link.is_none()
    {
        swe_forge_fs::write_file(args.out.join(link), license_file(&repos).as_bytes())?;
    }
    let card = card.write()?;
    let hub = HubCard {
        pretty_name: title,
        license: args.license.clone(),
        other_license,
        languages: args.languages.clone(),
        configs,
    };
    let body = std::fs::read_to_string(&card).with_context(|| format!("reading {}", card.display()))?;
    let text = format!("{}{body}\n{}", swe_forge_card::front_matter(&hub), files_section(&hub.configs));
    swe_forge_fs::write_file(&card, text.as_bytes())?;
    outln!("{}", card.display());
    Ok(())
}

/// The file `--license other` links to unless `--license-link` names another.
const LICENSE_FILE: &str = "LICENSE.md";

/// `license_name` and `license_link` with `--license other` (defaults filled in), None with any
/// other license; `--license-name` or `--license-link` with another license is a usage error.
fn license_of(args: &PublishArgs) -> Result<Option<(String, String)>> {
    if !swe_forge_card::valid_license(&args.license) {
        return Err(
            Usage(format!("--license {:?} is not a license id (letters, digits and . + - _)", args.license)).into()
        );
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

/// The configurations a record belongs to, in the card's order: `default` (every split as
/// given), `lang_<language>` and `repo_<org>__<repo>` (each split cut to one language or
/// repository; a split without a record of it has no file there), `swebench` and `tests` (the
/// same splits as other tables). A configuration is keyed by its rank in that order and the
/// language or repository it cuts to.
fn configurations_of(r: &Instance) -> [(u8, String, Table); 5] {
    [
        (0, String::new(), Table::Instances),
        (1, r.lang.clone().unwrap_or_else(|| "unknown".into()), Table::Instances),
        (2, format!("{}__{}", r.org, r.repo), Table::Instances),
        (3, String::new(), Table::Swebench),
        (4, String::new(), Table::Tests),
    ]
}

/// The name of a configuration from its key (see [`configurations_of`]).
fn config_name(rank: u8, key: &str) -> String {
    match rank {
        0 => swe_forge_card::DEFAULT_CONFIG.to_owned(),
        1 => format!("lang_{}", swe_forge_card::split_name(key)),
        2 => format!("repo_{}", swe_forge_card::split_name(key)),
        3 => "swebench".to_owned(),
        _ => "tests".to_owned(),
    }
}

/// Bytes of rows the files of a publication may hold before the largest is written out as a row
/// group: with one file per language and repository, a dataset of many small repositories would
/// otherwise hold every record until the end.
const BUFFER_BUDGET: usize = 256 << 20;

/// One Parquet file of a publication being written.
struct File {
    config: String,
    split: String,
    sink: Sink,
    rows: usize,
    /// What the sink held after the last write, as counted in [`Publication::buffered`].
    buffered: usize,
}

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

    /// Writes the row or rows of `r`; returns how many.
    fn write(&mut self, r: &Instance) -> Result<usize> {
        Ok(match self {
            Sink::Instances(w) => w.write(r).map(|()| 1)?,
            Sink::Swebench(w) => w.write(r, None).map(|()| 1)?,
            Sink::Tests(w) => {
                w.write(r)?;
                swe_forge_export::test_rows(std::slice::from_ref(r)).len()
            }
        })
    }

    /// Bytes of rows held, not yet written as a row group.
    fn buffered(&self) -> usize {
        match self {
            Sink::Instances(w) => w.buffered(),
            Sink::Swebench(w) => w.buffered(),
            Sink::Tests(w) => w.buffered(),
        }
    }

    /// Writes the rows held as a row group.
    fn flush(&mut self) -> Result<()> {
        match self {
            Sink::Instances(w) => w.flush()?,
            Sink::Swebench(w) => w.flush()?,
            Sink::Tests(w) => w.flush()?,
        }
        Ok(())
    }

    fn finish(self) -> Result<()> {
        match self {
            Sink::Instances(w) => w.finish()?,
            Sink::Swebench(w) => w.finish()?,
            Sink::Tests(w) => w.finish()?,
        }
        Ok(())
    }
}

/// The Parquet files of a publication, written as the records come (each file in row groups,
/// put in place by the [`swe_forge_fs::Batch`] the caller holds), and the repositories of the
/// records it holds, for `LICENSE.md`.
struct Publication {
    out: PathBuf,
    producer: swe_forge_export::Producer,
    /// Files by configuration key and split (numbered in the order the splits came).
    files: BTreeMap<(u8, String, usize), File>,
    splits: Vec<String>,
    /// Bytes of rows all files hold, and how many they may hold.
    buffered: usize,
    budget: usize,
    /// Records added, and the repositories of the distinct instances among them.
    records: usize,
    seen: HashSet<String>,
    repos: BTreeMap<String, usize>,
}

impl Publication {
    fn new(out: &Path) -> Publication {
        Publication::with_budget(out, BUFFER_BUDGET)
    }

    /// A publication whose files hold at most about `budget` bytes of rows in all.
    fn with_budget(out: &Path, budget: usize) -> Publication {
        Publication {
            budget,
            out: out.to_owned(),
            producer: crate::exporting::producer(),
            files: BTreeMap::new(),
            splits: Vec::new(),
            buffered: 0,
            records: 0,
            seen: HashSet::new(),
            repos: BTreeMap::new(),
        }
    }

    /// Writes `r` to the files of its configurations in `split`.
    fn add(&mut self, split: &str, r: &Instance) -> Result<()> {
        let index = match self.splits.iter().position(|s| s == split) {
            Some(i) => i,
            None => {
                self.splits.push(split.to_owned());
                self.splits.len() - 1
            }
        };
        let r = crate::exporting::labelled(r);
        for (rank, key, table) in configurations_of(&r) {
            let file = match self.files.entry((rank, key, index)) {
                Entry::Occupied(e) => e.into_mut(),
                Entry::Vacant(e) => {
                    let config = config_name(rank, &e.key().1);
                    let path = self.out.join(swe_forge_card::config_path(&config, split));
                    let sink = Sink::create(table, &path, &self.producer)?;
                    e.insert(File { config, split: split.to_owned(), sink, rows: 0, buffered: 0 })
                }
            };
            file.rows += file.sink.write(&r)?;
            let now = file.sink.buffered();
            self.buffered = (self.buffered + now).saturating_sub(file.buffered);
            file.buffered = now;
        }
        self.records += 1;
        if self.seen.insert(r.instance_id.clone()) {
            *self.repos.entry(format!("{}/{}", r.org, r.repo)).or_default() += 1;
        }
        while self.buffered > self.budget {
            let Some(largest) = self.files.values_mut().max_by_key(|f| f.buffered) else { break };
            largest.sink.flush()?;
            self.buffered = self.buffered.saturating_sub(largest.buffered);
            largest.buffered = 0;
        }
        Ok(())
    }

    /// Finishes every file (its rename waits for the batch); returns the configurations in the
    /// card's order with their splits' row counts, and the instances of each repository.
    fn finish(self) -> Result<(Vec<HubConfig>, BTreeMap<String, usize>)> {
        let mut configs: Vec<HubConfig> = Vec::new();
        for (_, file) in self.files {
            file.sink.finish()?;
            match configs.last_mut() {
                Some(c) if c.name == file.config => c.splits.push((file.split, file.rows)),
                _ => configs.push(HubConfig { name: file.config, splits: vec![(file.split, file.rows)] }),
            }
        }
        Ok((configs, self.repos))
    }
}

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
        "## Files\n\nConfigurations (`datasets.load_dataset(REPO, NAME)`): `default` holds every instance, one row \
         per instance in swe-forge's instances table (the record's fields as columns, `swe_forge` as JSON; columns \
         in swe-forge's `schemas/parquet.md`); `lang_*` and `repo_*` the same rows of one language or \
         repository; `swebench` the SWE-bench rows of the same instances; `tests` one row per test.\n\n",
    );
    let mut table = MarkdownTable::new(["configuration", "split", "rows", "file"]);
    for config in configs {
        for (split, rows) in &config.splits {
            table.row([
                format!("`{}`", config.name),
                format!("`{split}`"),
                rows.to_string(),
                format!("`{}`", config.path(split)),
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

/// Removes the Parquet files an earlier publication left in `data/` and in its configurations'
/// folders (`data/<config>/`, removed when empty), so no stale split or configuration remains.
/// Symlinks are not followed.
fn clear_parquet(data: &Path) -> Result<()> {
    let Ok(entries) = std::fs::read_dir(data) else { return Ok(()) };
    for entry in entries.flatten() {
        let (path, kind) = (entry.path(), entry.file_type().with_context(|| format!("reading {}", data.display()))?);
        if kind.is_dir() {
            clear_parquet(&path)?;
            // Left when it holds anything but Parquet files.
            let _ = std::fs::remove_dir(&path);
        } else if kind.is_file() && path.extension().is_some_and(|e| e == "parquet") {
            std::fs::remove_file(&path).with_context(|| format!("removing {}", path.display()))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// With a budget smaller than one record, every file is written out as a row group after
    /// each record; the tables read back whole, in order, as with the whole budget.
    #[test]
    fn files_over_the_budget_are_written_out_and_read_back_whole() {
        let records: Vec<Instance> = (0..40).map(crate::commands::bench::synthetic_record).collect();
        let tables = |budget: usize| {
            let dir = tempfile::tempdir().unwrap();
            let batch = swe_forge_fs::Batch::begin();
            let mut publication = Publication::with_budget(dir.path(), budget);
            for r in &records {
                publication.add(if r.number % 2 == 0 { "even" } else { "odd" }, r).unwrap();
            }
            let (configs, repos) = publication.finish().unwrap();
            batch.commit().unwrap();
            let read = |config: &str, split: &str| {
                let path = dir.path().join(swe_forge_card::config_path(config, split));
                (
                    swe_forge_export::read_instances_parquet(&path).ok().map(|r| r.len()),
                    swe_forge_export::parquet_row_groups(&path).unwrap(),
                )
            };
            let default = read("default", "even");
            let tests =
                swe_forge_export::read_tests_parquet(dir.path().join(swe_forge_card::config_path("tests", "odd")))
                    .unwrap();
            (configs.len(), repos, default, tests.len())
        };
        let (configs, repos, (rows, groups), tests) = tables(1);
        let (whole_configs, whole_repos, (whole_rows, whole_groups), whole_tests) = tables(BUFFER_BUDGET);
        assert_eq!((configs, &repos, rows, tests), (whole_configs, &whole_repos, whole_rows, whole_tests));
        assert_eq!(rows, Some(20));
        assert_eq!(tests, 20 * 23);
        assert_eq!(repos.values().sum::<usize>(), 40);
        assert_eq!(whole_groups, 1, "the whole budget holds the 20 rows in one row group");
        assert_eq!(groups, 20, "a budget under one record writes a row group per record");
    }
}
