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
    /// Reviewer name saved with each review when the page gives none. Default: $USER, else
    /// $LOGNAME, git's user.name, or the account of this uid.
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
    let store = args.store.clone().unwrap_or_else(|| match &work_dir {
        WorkDir::Given(w) | WorkDir::Found(w) => swe_forge_review::store_for(&args.dataset, Some(w)),
        WorkDir::None => swe_forge_review::store_for(&args.dataset, None),
    });
    if let Some(parent) = store.parent().filter(|p| !p.as_os_str().is_empty() && !p.exists()) {
        std::fs::create_dir_all(parent).with_context(|| format!("making {}", parent.display()))?;
    }
    let reviewer = match args.reviewer.clone().filter(|r| !r.trim().is_empty()) {
        Some(r) => r,
        None => default_reviewer(),
    };
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

/// Who reviews when `--reviewer` is not given: `$USER`, `$LOGNAME`, git's `user.name`, then the
/// account of this process's uid in /etc/passwd (a container or a cron job has no `$USER`), and
/// `uid-N` when even that is missing; never a name shared by everyone ("anonymous").
fn default_reviewer() -> String {
    let git_name = || {
        std::process::Command::new("git")
            .args(["config", "user.name"])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
    };
    let uid = {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata("/proc/self").map(|m| m.uid()).ok()
    };
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
    reviewer_from(
        [std::env::var("USER").ok(), std::env::var("LOGNAME").ok()].into_iter().flatten().chain(git_name()),
        uid,
        &passwd,
    )
}

/// The first of `names` that is not blank, else `uid`'s account in `passwd`, else `uid-N`.
fn reviewer_from(names: impl IntoIterator<Item = String>, uid: Option<u32>, passwd: &str) -> String {
    if let Some(name) = names.into_iter().map(|n| n.trim().to_owned()).find(|n| !n.is_empty()) {
        return name;
    }
    let Some(uid) = uid else { return "unknown".into() };
    passwd
        .lines()
        .find_map(|l| {
            let mut f = l.split(':');
            let (name, _, id) = (f.next()?, f.next()?, f.next()?);
            (id.parse() == Ok(uid) && !name.is_empty()).then(|| name.to_owned())
        })
        .unwrap_or_else(|| format!("uid-{uid}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reviewer_is_named_without_user_set() {
        let passwd = "root:x:0:0:root:/root:/bin/bash\nana:x:1000:1000:Ana:/home/ana:/bin/sh\n";
        assert_eq!(reviewer_from(["ana".to_owned()], Some(0), passwd), "ana");
        assert_eq!(reviewer_from([" ".to_owned(), "bo".to_owned()], Some(0), passwd), "bo", "a blank $USER is skipped");
        assert_eq!(reviewer_from([], Some(1000), passwd), "ana", "the uid's account");
        assert_eq!(reviewer_from([], Some(4242), passwd), "uid-4242");
        assert_eq!(reviewer_from([], None, ""), "unknown");
    }
}
