//! `swe-forge demo`: `run` on pipelines/demo.toml over the bundled fixtures.

use std::path::PathBuf;

use anyhow::{Result, bail};

use crate::cli::DemoArgs;

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
    super::run::run_command(&pipeline, args.fresh && !args.resume, &args.engine).await
}
