//! `swe-forge run PIPELINE.toml`: source -> filters -> validate -> export, as the file says; and
//! `swe-forge demo`: `run` on pipelines/demo.toml over the bundled fixtures.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use swe_forge_config::Pipeline;
use swe_forge_core::ValidationStatus;

use crate::cli::{DemoArgs, EngineArgs};
use crate::exporting::export;
use crate::records::off_thread;
use crate::settings::prepare;
use crate::validation::{print_summary, validate_records};

pub async fn run_command(path: &Path, fresh: bool, engine: &EngineArgs, json: bool) -> Result<()> {
    // Off the runtime's thread: a pipeline or records file that is a FIFO nobody writes waits
    // there, and SIGINT and SIGTERM still stop the command.
    let (path, engine) = (path.to_owned(), engine.clone());
    let (p, records, settings) = off_thread(move || {
        let p = Pipeline::load(&path)?;
        let (records, settings) = prepare(&p, &engine)?;
        Ok((p, records, settings))
    })
    .await?;
    let validated = p.path(&p.output.validated);
    let results = validate_records(records, settings, &validated, fresh).await?;
    let accepted: Vec<_> = results.iter().filter(|r| r.status() == ValidationStatus::Accepted).cloned().collect();
    let out = |o: &Option<std::path::PathBuf>| o.as_ref().map(|x| p.path(x));
    let (jsonl, parquet, tests) = (out(&p.output.jsonl), out(&p.output.parquet), out(&p.output.tests_parquet));
    let batch = swe_forge_fs::Batch::begin();
    export(&accepted, jsonl.as_deref(), parquet.as_deref(), tests.as_deref())?;
    batch.commit()?;
    print_summary(&results, json);
    for f in [Some(validated), jsonl, parquet, tests].into_iter().flatten() {
        eprintln!("wrote {}", f.display());
    }
    Ok(())
}

pub async fn demo_command(args: DemoArgs) -> Result<()> {
    let here = PathBuf::from("pipelines/demo.toml");
    let built_in = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../pipelines/demo.toml"));
    let pipeline = if here.exists() {
        here
    } else if built_in.exists() {
        built_in
    } else {
        bail!("pipelines/demo.toml not found: run the demo from the swe-forge repository root");
    };
    run_command(&pipeline, args.fresh && !args.resume, &args.engine, args.json).await
}
