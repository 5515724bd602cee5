//! `swe-forge run PIPELINE.toml`: source -> filters -> validate -> export, as the file says.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail};
use swe_forge_core::{Instance, ValidationStatus};
use swe_forge_validate::{Settings, plan_env_commits};

use crate::cli::EngineArgs;
use crate::commands::export::export;
use crate::commands::validate::{apply_engine_args, apply_pipeline, print_summary, read_records, validate_records};
use swe_forge_config::Pipeline;

pub async fn run_command(path: &Path, fresh: bool, engine: &EngineArgs) -> Result<()> {
    let p = Pipeline::load(path)?;
    let (records, settings) = prepare(&p, engine)?;
    let validated = p.path(&p.output.validated);
    let results = validate_records(records, settings, &validated, fresh).await?;
    let accepted: Vec<_> = results.iter().filter(|r| r.status() == ValidationStatus::Accepted).cloned().collect();
    let out = |o: &Option<std::path::PathBuf>| o.as_ref().map(|x| p.path(x));
    let (jsonl, parquet, tests) = (out(&p.output.jsonl), out(&p.output.parquet), out(&p.output.tests_parquet));
    let batch = swe_forge_fs::Batch::begin();
    export(&accepted, jsonl.as_deref(), parquet.as_deref(), tests.as_deref())?;
    batch.commit()?;
    print_summary(&results);
    for f in [Some(validated), jsonl, parquet, tests].into_iter().flatten() {
        eprintln!("wrote {}", f.display());
    }
    Ok(())
}

/// The candidates a pipeline keeps and the validation settings it asks for, with its
/// repositories created first when the pipeline names a script for that.
pub fn prepare(p: &Pipeline, engine: &EngineArgs) -> Result<(Vec<Instance>, Settings)> {
    let repos = p.path(&p.source.repos);
    if !repos.exists() {
        let Some(script) = &p.source.make_repos else {
            bail!("repositories folder {} does not exist", repos.display());
        };
        let script = p.path(script);
        eprintln!("creating repositories with {}", script.display());
        let status = Command::new("bash")
            .arg(&script)
            .arg(&repos)
            .stdout(std::process::Stdio::null())
            .status()
            .with_context(|| format!("running {}", script.display()))?;
        if !status.success() {
            bail!("{} failed ({status})", script.display());
        }
    }
    let all = read_records(&p.path(&p.source.records))?;
    let total = all.len();
    let validated = p.path(&p.output.validated);
    let mut settings = Settings::new(repos, validated.with_extension("work"));
    apply_pipeline(&mut settings, p);
    apply_engine_args(&mut settings, engine);
    // Environment commits from every candidate, so that a filtered run builds the same images.
    settings.env_commits = plan_env_commits(&all, &settings.repos_root, &settings.overrides);
    let records: Vec<_> = all.into_iter().filter(|r| p.keeps(r)).collect();
    eprintln!("pipeline {} ({}): {} of {total} candidates pass the filters", p.name, p.description, records.len());
    Ok((records, settings))
}
