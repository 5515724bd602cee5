//! `swe-forge publish`: a dataset folder as the Hugging Face Hub reads it: configurations of
//! Parquet tables under `data/`, one file per split (`default`: every instance, as
//! `export --parquet` writes it; `lang_<language>` and `repo_<org>__<repo>`: the same rows of one
//! language or repository; `swebench`: the SWE-bench rows of `export --format swebench`;
//! `tests`: the tests table of `export --tests-parquet`), and `README.md`: YAML front matter
//! naming the configurations' files, license and language, then the dataset card of `report`,
//! its plots in `plots/`; with `--license other` and no `--license-link`, `LICENSE.md` naming the
//! repositories whose licenses apply.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use swe_forge_card::{HubCard, HubConfig, ReportOptions};
use swe_forge_core::{Instance, MarkdownTable, ValidationStatus};
use swe_forge_curate::{Heuristic, is_kept};

use crate::exit::Usage;
use crate::records::read_records;

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
    let records = read_records(&args.dataset)?;
    let kept = publishable(&records, &args.dataset)?;
    let splits: Vec<(String, Vec<Instance>)> = match &args.splits {
        None => vec![("test".to_owned(), kept)],
        Some(dir) => split_files(dir)?,
    };
    let title = args.title.clone().unwrap_or_else(|| {
        args.dataset.file_stem().map_or_else(|| "Dataset".into(), |s| s.to_string_lossy().into_owned())
    });

    let data = args.out.join("data");
    clear_parquet(&data)?;
    let mut configs = Vec::new();
    for (config, table, members) in configurations(&splits) {
        let mut counts = Vec::new();
        for (split, rows) in &members {
            let path = args.out.join(swe_forge_card::config_path(&config, split));
            match table {
                Table::Instances => crate::exporting::export(rows, None, Some(&path), None)?,
                Table::Swebench => {
                    crate::exporting::create_parents([Some(&path), None, None])?;
                    swe_forge_export::write_swebench_parquet(&path, rows, &crate::exporting::producer())?;
                }
                Table::Tests => crate::exporting::export(rows, None, None, Some(&path))?,
            }
            let count = table.rows(rows);
            outln!("{count:>6}  {}", path.display());
            counts.push((split.clone(), count));
        }
        configs.push(HubConfig { name: config, splits: counts });
    }
    if let Some((_, link)) = &other_license
        && args.license_link.is_none()
    {
        swe_forge_fs::write_file(args.out.join(link), license_file(&records_of(&splits)).as_bytes())?;
    }
    let card = swe_forge_card::write_report(
        &records,
        &ReportOptions { out_dir: args.out.clone(), title: title.clone(), heuristic: Heuristic::CALIBRATED },
    )?;
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

impl Table {
    fn rows(self, members: &[Instance]) -> usize {
        match self {
            Table::Instances | Table::Swebench => members.len(),
            Table::Tests => swe_forge_export::test_rows(members).len(),
        }
    }
}

/// A configuration's splits: each split's name and its records.
type Splits = Vec<(String, Vec<Instance>)>;

/// The configurations of a publication, in the card's order: `default` (every split as given),
/// `lang_<language>` and `repo_<org>__<repo>` (each split cut to one language or repository,
/// empty splits left out), `swebench` and `tests` (the same splits as other tables).
fn configurations(splits: &Splits) -> Vec<(String, Table, Splits)> {
    let mut out = vec![(swe_forge_card::DEFAULT_CONFIG.to_owned(), Table::Instances, splits.clone())];
    let subsets = |key: &dyn Fn(&Instance) -> String, prefix: &str| -> Vec<(String, Table, Splits)> {
        let keys: BTreeSet<String> = splits.iter().flat_map(|(_, m)| m.iter().map(key)).collect();
        keys.into_iter()
            .map(|k| {
                let cut: Splits = splits
                    .iter()
                    .map(|(name, m)| (name.clone(), m.iter().filter(|r| key(r) == k).cloned().collect::<Vec<_>>()))
                    .filter(|(_, m)| !m.is_empty())
                    .collect();
                (format!("{prefix}_{}", swe_forge_card::split_name(&k)), Table::Instances, cut)
            })
            .collect()
    };
    out.extend(subsets(&|r: &Instance| r.lang.clone().unwrap_or_else(|| "unknown".into()), "lang"));
    out.extend(subsets(&|r: &Instance| format!("{}__{}", r.org, r.repo), "repo"));
    out.push(("swebench".to_owned(), Table::Swebench, splits.clone()));
    out.push(("tests".to_owned(), Table::Tests, splits.clone()));
    out
}

/// Every record of the splits, once.
fn records_of(splits: &Splits) -> Vec<&Instance> {
    let mut seen = BTreeSet::new();
    splits.iter().flat_map(|(_, m)| m).filter(|r| seen.insert(r.instance_id.as_str())).collect()
}

/// The LICENSE.md of `--license other`: the instances come from these repositories, each under
/// its own license.
fn license_file(records: &[&Instance]) -> String {
    let mut repos: BTreeMap<String, usize> = BTreeMap::new();
    for r in records {
        *repos.entry(format!("{}/{}", r.org, r.repo)).or_default() += 1;
    }
    let mut text = String::from(
        "# License\n\nEach instance of this dataset is taken from a public repository: its issue text, patches and \
         tests are that repository's, under that repository's license. The repositories, with their number of \
         instances:\n\n",
    );
    for (repo, n) in &repos {
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

/// The records a publication ships: accepted, not dropped by a review, not duplicates. Refuses a
/// dataset that has none, saying why.
fn publishable(records: &[Instance], path: &Path) -> Result<Vec<Instance>> {
    let kept: Vec<Instance> = records.iter().filter(|r| is_kept(r)).cloned().collect();
    if !kept.is_empty() {
        return Ok(kept);
    }
    let count = |s: ValidationStatus| records.iter().filter(|r| r.status() == s).count();
    let (accepted, rejected) = (count(ValidationStatus::Accepted), count(ValidationStatus::Rejected));
    let pending = records.len() - accepted - rejected;
    if records.is_empty() {
        bail!("{} holds no records: nothing to publish", path.display());
    }
    if accepted == 0 {
        bail!(
            "{} has no accepted records ({} records: {rejected} rejected, {pending} not validated): only records \
             validation accepted are published; run `swe-forge validate` on them first",
            path.display(),
            records.len()
        );
    }
    bail!(
        "{} has {accepted} accepted records, but reviews dropped or duplicate marks removed every one: nothing to publish",
        path.display()
    )
}

/// One split per `*.jsonl` or `*.parquet` file of `dir`, named by its stem (made a name the Hub
/// accepts), sorted by name; each keeps only publishable records, and empty ones are left out.
fn split_files(dir: &Path) -> Result<Vec<(String, Vec<Instance>)>> {
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
    let mut splits: Vec<(String, Vec<Instance>)> = Vec::new();
    for file in files {
        let name = swe_forge_card::split_name(&file.file_stem().unwrap_or_default().to_string_lossy());
        if splits.iter().any(|(n, _)| *n == name) {
            bail!("two split files of {} give the split name {name:?}", dir.display());
        }
        let members: Vec<Instance> = read_records(&file)?.into_iter().filter(is_kept).collect();
        if members.is_empty() {
            eprintln!("{}: no accepted records, left out", file.display());
            continue;
        }
        splits.push((name, members));
    }
    if splits.is_empty() {
        bail!("no split file of {} holds an accepted record: nothing to publish", dir.display());
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
