//! `swe-forge validate`: candidate records in, every validated record out (the loop is
//! `crate::validation`'s, shared with `run` and `bench`).

use anyhow::Result;
use swe_forge_recipes::plan_env_commits;
use swe_forge_validate::Settings;

use crate::cli::ValidateArgs;
use crate::records::{load_pipeline, off_thread, read_records};
use crate::settings::{apply_engine_args, apply_pipeline};
use crate::validation::{print_summary, validate_records};

pub async fn validate_command(args: ValidateArgs) -> Result<()> {
    crate::exit::output_to(&args.out);
    // The output replaces its file as records are validated: the input must not be it (export
    // refuses the same).
    if args.records.as_os_str() != "-" && swe_forge_fs::same_file(&args.out, &args.records) {
        anyhow::bail!(
            "-o {} is the input (--records): refusing to overwrite the records being read; give another path",
            args.out.display()
        );
    }
    let path = args.records.clone();
    let records = off_thread(move || read_records(&path)).await?;
    let work_dir = args.work_dir.clone().unwrap_or_else(|| args.out.with_extension("work"));
    let mut settings = Settings::new(args.repos.clone(), work_dir);
    if let Some(p) = &args.pipeline {
        apply_pipeline(&mut settings, &load_pipeline(p).await?);
        // A flag beats the pipeline file: `--work-dir` over its `[validate] work_dir`.
        if let Some(w) = &args.work_dir {
            settings.work_dir.clone_from(w);
        }
    }
    apply_engine_args(&mut settings, &args.engine);
    settings.env_commits = plan_env_commits(&records, &settings.repos_root, &settings.overrides);
    let results = validate_records(records, settings, &args.out, args.fresh).await?;
    print_summary(&results, args.json);
    Ok(())
}
