//! `swe-forge review`: serves the review page for a dataset on 127.0.0.1 until interrupted.

use std::path::PathBuf;

use anyhow::{Context, Result};
use swe_forge_curate::Heuristic;
use swe_forge_review::{Limits, ReviewServer, ServerOptions, WorkDir};

use crate::cli::KeepArgs;

#[derive(Debug, clap::Args)]
pub struct ReviewArgs {
    /// The dataset to review (JSONL records, e.g. the output of validate, or an instances Parquet
    /// table).
    #[arg(long, visible_alias = "records")]
    pub dataset: PathBuf,
    /// The state store that keeps the reviews and decisions (SQLite; made if missing). Default:
    /// <dataset>.work/state.sqlite when it exists (where earlier versions kept reviews), else
    /// <work-dir>/state.sqlite.
    #[arg(long)]
    pub store: Option<PathBuf>,
    /// Where validation wrote its run logs (<work-dir>/logs/<instance_id>/{run,test,fix}.log).
    /// Default: the folder next to the dataset where validate put them: <dataset>.work
    /// (`validate --out <dataset>`), <stem>-work (the demo's data/out/demo-work for
    /// data/out/demo.jsonl), <stem>-validated.work (a pipeline's default), or the only folder
    /// there holding logs/ and state.sqlite. The page warns when no logs are found.
    #[arg(long)]
    pub work_dir: Option<PathBuf>,
    /// Port on 127.0.0.1 (0 picks a free one).
    #[arg(long, default_value_t = 8377)]
    pub port: u16,
    /// Reviewer name saved with each review when the page gives none. Default: $USER.
    #[arg(long)]
    pub reviewer: Option<String>,
    #[command(flatten)]
    pub keep: KeepArgs,
}

pub fn review_command(args: ReviewArgs) -> Result<()> {
    let work_dir = match &args.work_dir {
        Some(w) => WorkDir::Given(w.clone()),
        None => swe_forge_review::find_work_dir(&args.dataset).map_or(WorkDir::None, WorkDir::Found),
    };
    let old_store = args.dataset.with_extension("work").join("state.sqlite");
    let store = args.store.clone().unwrap_or_else(|| match &work_dir {
        _ if old_store.is_file() => old_store.clone(),
        WorkDir::Given(w) | WorkDir::Found(w) => w.join("state.sqlite"),
        WorkDir::None => old_store.clone(),
    });
    if let Some(parent) = store.parent().filter(|p| !p.as_os_str().is_empty() && !p.exists()) {
        std::fs::create_dir_all(parent).with_context(|| format!("making {}", parent.display()))?;
    }
    let reviewer = args
        .reviewer
        .clone()
        .or_else(|| std::env::var("USER").ok())
        .filter(|r| !r.trim().is_empty())
        .unwrap_or_else(|| "anonymous".into());
    // The page reads the dataset as JSONL by byte ranges: a Parquet dataset is served from a
    // JSONL copy that lives as long as the server.
    let jsonl_copy = jsonl_copy(&args.dataset)?;
    let dataset = jsonl_copy.as_ref().map_or(args.dataset.clone(), |f| f.path().to_owned());
    let server = ReviewServer::bind(ServerOptions {
        dataset,
        work_dir: work_dir.clone(),
        store: store.clone(),
        reviewer,
        keep_rule: args.keep.rule(),
        port: args.port,
        heuristic: Heuristic::CALIBRATED,
        limits: Limits::default(),
    })
    .with_context(|| format!("serving the review page for {}", args.dataset.display()))?;
    eprintln!("{} instances; reviews go to {}", server.instances(), store.display());
    let with_logs = server.instances_with_logs();
    match &work_dir {
        WorkDir::Given(w) | WorkDir::Found(w) if with_logs > 0 => {
            eprintln!("run logs of {with_logs} instances from {}", w.display());
        }
        WorkDir::Given(w) | WorkDir::Found(w) => eprintln!(
            "warning: {} holds no logs/<instance_id>/ folder for any instance of {}: the page shows no run logs",
            w.display(),
            args.dataset.display()
        ),
        WorkDir::None => eprintln!(
            "warning: no work folder with run logs next to {} (validate writes them to <out>.work/logs/ or the \
             pipeline's [validate] work_dir): the page shows no run logs; give the folder with --work-dir",
            args.dataset.display()
        ),
    }
    outln!("http://{}/", server.local_addr());
    use std::io::Write as _;
    std::io::stdout().flush()?;
    // A runtime of its own, not `crate::interrupt`'s: the review server starts no container, so
    // SIGINT and SIGTERM end it at once (docs/reliability.md). Few threads: the routes read files
    // and the store, and connections are bounded by `Limits`.
    let runtime =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).max_blocking_threads(8).enable_all().build()?;
    runtime.block_on(server.serve())?;
    drop(jsonl_copy);
    Ok(())
}

/// A temporary JSONL copy of `dataset` when it is an instances Parquet table.
fn jsonl_copy(dataset: &std::path::Path) -> Result<Option<tempfile::NamedTempFile>> {
    use std::io::Write as _;
    if !swe_forge_export::is_parquet(dataset)? {
        return Ok(None);
    }
    let file = tempfile::Builder::new().prefix("swe-forge-review-").suffix(".jsonl").tempfile()?;
    // One record at a time (the table itself is read a row group at a time).
    let mut out = std::io::BufWriter::new(file.as_file());
    for record in crate::records::open_records(dataset)? {
        serde_json::to_writer(&mut out, &record?)?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    drop(out);
    Ok(Some(file))
}
