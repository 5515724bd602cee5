//! `swe-forge mine`: merged PRs of GitHub repositories or local mirrors -> candidate records
//! (JSONL, resumable) and a funnel report (JSON + Markdown). Flags, environment and a pipeline
//! file's `[mine]` section are resolved here into the miner's option structs; progress goes to
//! stderr, the funnel table (or, with --json, one summary object) to stdout.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use swe_forge_mine::{
    Client, ClientOptions, Decision, GithubOptions, Journal, Limits, MirrorOptions, Reporter, Window, load_tokens,
    markdown_table, mine_github, mine_mirror,
};

use crate::cli::{IssueLinks, MineArgs};
use crate::exit::Usage;
use crate::records::load_pipeline;
use crate::terminal::clean;
use swe_forge_config::Pipeline;

/// One unit of work.
enum Job {
    Mirror(MirrorOptions),
    Github(GithubOptions),
}

struct Settings {
    out: PathBuf,
    funnel: PathBuf,
    cache_dir: PathBuf,
    jobs: Vec<Job>,
}

pub async fn mine_command(args: MineArgs) -> Result<()> {
    // Off the runtime's thread: `--pipeline FIFO` waits for its writer, and SIGINT and SIGTERM
    // still stop the command.
    let pipeline = match &args.pipeline {
        Some(p) => Some(load_pipeline(p).await?),
        None => None,
    };
    let settings = resolve(&args, pipeline)?;
    let mut journal =
        Journal::open(&settings.out, args.fresh).with_context(|| format!("opening {}", settings.out.display()))?;
    let reporter = StderrReporter::default();
    let mut client: Option<Client> = None;
    for job in &settings.jobs {
        match job {
            Job::Mirror(o) => {
                eprintln!("mining mirror {}", clean(&o.path.display().to_string()));
                mine_mirror(o, &mut journal, &reporter).with_context(|| format!("mining {}", o.path.display()))?;
            }
            Job::Github(o) => {
                if client.is_none() {
                    client = Some(github_client(&args, &settings.cache_dir)?);
                }
                let c = client.as_ref().expect("just built");
                eprintln!("mining {} on GitHub ({})", clean(&o.repos.join(", ")), o.window.search_range());
                mine_github(o, c, &mut journal, &reporter)
                    .await
                    .with_context(|| format!("mining {}", o.repos.join(", ")))?;
            }
        }
    }
    journal.finish().with_context(|| format!("writing {}", settings.out.display()))?;
    let funnels = journal.funnels();
    write_funnel(&settings.funnel, &funnels, client.as_ref().map(Client::stats))?;
    let (candidates, textless) = count_textless(&settings.out)?;
    if args.json {
        let value = serde_json::json!({
            "out": settings.out.display().to_string(),
            "funnel": settings.funnel.display().to_string(),
            "candidates": candidates,
            "no_issue_text": textless,
            "repositories": funnels,
            "requests": client.as_ref().map(Client::stats),
        });
        outln!("{value}");
    } else {
        outln!("{}", clean(&markdown_table(&funnels)));
    }
    if textless > 0 {
        let hint = if settings.jobs.iter().any(|j| matches!(j, Job::Mirror(o) if o.issue_exports.is_empty())) {
            "; a mirror has no issue text: give --issues-export with a saved `gh api --paginate 'repos/OWNER/NAME/issues?state=all'`"
        } else {
            ""
        };
        eprintln!(
            "warning: {textless} of {candidates} candidates have no issue text and no pull request body (quality flag no_issue_text; `curate --drop-flag no_issue_text` leaves them out){hint}"
        );
    }
    if let Some(c) = &client {
        let s = c.stats();
        eprintln!(
            "GitHub requests: {} ({} GraphQL, {} REST; {} answered 304 from the cache; {} rate limited, {} server errors, {} malformed, {} token switches)",
            s.requests,
            s.graphql,
            s.rest,
            s.not_modified,
            s.rate_limited,
            s.server_errors,
            s.malformed,
            s.token_switches
        );
    }
    eprintln!("wrote {} and {}", settings.out.display(), settings.funnel.display());
    Ok(())
}

/// The settings of a mine: the flags over `pipeline`, the file `--pipeline` names, read already.
fn resolve(args: &MineArgs, pipeline: Option<Pipeline>) -> Result<Settings> {
    let limits = Limits { max_files: args.max_files, max_fix_lines: args.max_fix_lines };
    // Flags that contradict each other are a usage error (exit 2), as clap's own.
    if let (Some(since), Some(until)) = (&args.since, &args.until)
        && swe_forge_mine::parse_time(since, false)? > swe_forge_mine::parse_time(until, true)?
    {
        return Err(Usage(format!("--since {since} is after --until {until}: the merge window holds no time")).into());
    }
    let window = Window::parse(args.since.as_deref(), args.until.as_deref())?;
    let (out, jobs, funnel, cache_dir) = if let (Some(p), Some(pipeline)) = (&args.pipeline, pipeline) {
        let Some(section) = &pipeline.mine else { bail!("{} has no [mine] section", p.display()) };
        let missing_mirror =
            section.repos.iter().any(|r| r.mirror.as_ref().is_some_and(|m| !pipeline.path(m).exists()));
        if missing_mirror && let Some(script) = &pipeline.source.make_repos {
            make_repos(&pipeline.path(script), &pipeline.path(&pipeline.source.repos))?;
        }
        let mut jobs = Vec::new();
        for r in &section.repos {
            check_repo_name(&r.name).with_context(|| format!("{}: [mine] repos", p.display()))?;
            // A flag beats the pipeline file: --since, --until, --max-files, --max-fix-lines,
            // --merged-only and --issue-links over the repository's and the section's settings.
            let window = Window::parse(
                args.since.as_deref().or(r.since.as_deref()).or(section.since.as_deref()),
                args.until.as_deref().or(r.until.as_deref()).or(section.until.as_deref()),
            )
            .with_context(|| format!("window of {}", r.name))?;
            let limits = Limits {
                max_files: args.max_files.or(r.max_files).or(section.max_files),
                max_fix_lines: args.max_fix_lines.or(r.max_fix_lines).or(section.max_fix_lines),
            };
            let require_issue = args.issue_links.map(|l| l == IssueLinks::Required).or(section.require_issue);
            jobs.push(match &r.mirror {
                Some(m) => {
                    let mut o = MirrorOptions::new(pipeline.path(m));
                    o.repo = Some(r.name.clone());
                    o.branch = r.branch.clone();
                    o.window = window;
                    o.limits = limits;
                    o.merged_only = args.merged_only || section.merged_only.unwrap_or(false);
                    o.require_issue = require_issue.unwrap_or(false);
                    o.issue_exports = args.issues_exports.clone();
                    Job::Mirror(o)
                }
                None => {
                    let mut o = github_options(args, vec![r.name.clone()], window, limits);
                    o.require_issue = require_issue.unwrap_or(true);
                    Job::Github(o)
                }
            });
        }
        let out = args.out.clone().unwrap_or_else(|| pipeline.path(&pipeline.source.records));
        let funnel = section.funnel.as_ref().map(|f| pipeline.path(f));
        let cache = section.cache_dir.as_ref().map(|c| pipeline.path(c));
        (out, jobs, funnel, cache)
    } else {
        let out = args.out.clone().expect("clap requires --out without --pipeline");
        for r in &args.github_repos {
            check_repo_name(r)?;
        }
        let jobs = if let Some(m) = &args.mirror {
            if args.github_repos.len() > 1 {
                bail!("--mirror mines one repository: give at most one --github-repo");
            }
            let mut o = MirrorOptions::new(m);
            o.repo = args.github_repos.first().cloned();
            o.branch = args.branch.clone();
            o.window = window;
            o.limits = limits;
            o.merged_only = args.merged_only;
            o.require_issue = args.issue_links == Some(IssueLinks::Required);
            o.issue_exports = args.issues_exports.clone();
            vec![Job::Mirror(o)]
        } else {
            if args.github_repos.is_empty() {
                bail!("give --github-repo owner/name (GitHub), --mirror PATH or --pipeline FILE");
            }
            vec![Job::Github(github_options(args, args.github_repos.clone(), window, limits))]
        };
        (out, jobs, None, None)
    };
    check_inputs(args, &jobs, &out)?;
    let funnel = args.funnel.clone().or(funnel).unwrap_or_else(|| sibling(&out, "funnel.json"));
    let cache_dir = args.cache_dir.clone().or(cache_dir).unwrap_or_else(|| sibling(&out, "cache"));
    Ok(Settings { out, funnel, cache_dir, jobs })
}

/// Usage errors of `--issues-export` and `--out` once the jobs are known.
fn check_inputs(args: &MineArgs, jobs: &[Job], out: &Path) -> Result<()> {
    if !args.issues_exports.is_empty() && !jobs.iter().any(|j| matches!(j, Job::Mirror(_))) {
        return Err(Usage(
            "--issues-export gives texts to mirrors (--mirror, or a pipeline's mirror); GitHub mode reads them from the API"
                .to_owned(),
        )
        .into());
    }
    for path in &args.issues_exports {
        if !path.is_file() {
            return Err(Usage(format!("--issues-export {}: no such file", path.display())).into());
        }
    }
    if out.as_os_str() == "-" {
        return Err(Usage(
            "--out - : mine writes its candidates to a file it resumes from (with a journal beside it); give a path"
                .to_owned(),
        )
        .into());
    }
    Ok(())
}

/// The candidates in `out` and how many of them raise `no_issue_text`, read one line at a time.
fn count_textless(out: &Path) -> Result<(usize, usize)> {
    let (mut all, mut textless) = (0, 0);
    for r in crate::records::open_records(out)? {
        let r = r?;
        all += 1;
        textless +=
            usize::from(swe_forge_curate::quality_flags(&r).contains(&swe_forge_core::QualityFlag::NoIssueText));
    }
    Ok((all, textless))
}

/// `owner/name`, each part a safe path component (candidates' ids and folders derive from them).
fn check_repo_name(name: &str) -> Result<()> {
    let Some((owner, repo)) = name.split_once('/') else { bail!("--github-repo {name:?} is not owner/name") };
    for part in [owner, repo] {
        if let Some(why) = swe_forge_core::path_component_problem(part) {
            bail!("--github-repo {name:?}: {part:?} {why}");
        }
    }
    Ok(())
}

fn make_repos(script: &Path, repos: &Path) -> Result<()> {
    eprintln!("creating repositories with {}", script.display());
    let status = std::process::Command::new("bash")
        .arg(script)
        .arg(repos)
        .stdout(std::process::Stdio::null())
        .status()
        .with_context(|| format!("running {}", script.display()))?;
    if !status.success() {
        bail!("{} failed ({status})", script.display());
    }
    Ok(())
}

fn github_options(args: &MineArgs, repos: Vec<String>, window: Window, limits: Limits) -> GithubOptions {
    let mut o = GithubOptions::new(repos);
    o.window = window;
    o.limits = limits;
    o.page_size = args.page_size.clamp(1, 100);
    o.require_issue = args.issue_links != Some(IssueLinks::Optional);
    o.repos_dir = args.repos_dir.clone();
    o
}

fn github_client(args: &MineArgs, cache_dir: &Path) -> Result<Client> {
    let tokens = load_tokens(std::env::var("GITHUB_TOKEN").ok().as_deref(), &args.token_files)?;
    if tokens.is_empty() {
        eprintln!(
            "warning: no GITHUB_TOKEN and no --token-file: anonymous requests (60 an hour, no GraphQL on github.com)"
        );
    } else {
        eprintln!("using {} token(s)", tokens.len());
    }
    let mut o = ClientOptions::new(&args.api_url, tokens);
    o.cache_dir = Some(cache_dir.to_owned());
    o.max_wait = Duration::from_secs(args.max_wait);
    Ok(Client::new(o)?)
}

/// `<dir>/<stem>.<suffix>` next to `out`.
fn sibling(out: &Path, suffix: &str) -> PathBuf {
    let stem = out.file_stem().unwrap_or_default().to_string_lossy();
    out.with_file_name(format!("{stem}.{suffix}"))
}

fn write_funnel(
    path: &Path,
    funnels: &[swe_forge_mine::Funnel],
    stats: Option<swe_forge_mine::RequestStats>,
) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let json = serde_json::json!({ "repositories": funnels, "requests": stats });
    let batch = swe_forge_fs::Batch::begin();
    swe_forge_fs::write_file(path, (serde_json::to_string_pretty(&json)? + "\n").as_bytes())?;
    swe_forge_fs::write_file(path.with_extension("md"), markdown_table(funnels).as_bytes())?;
    batch.commit()?;
    Ok(())
}

/// Progress lines on stderr: every listing page, every 100th decision, and a line when 30 s
/// passed since the last one (a repository whose PRs each need API calls).
struct StderrReporter {
    counts: Mutex<Counts>,
}

struct Counts {
    listed: u64,
    decided: u64,
    kept: u64,
    last_line: std::time::Instant,
}

impl Default for StderrReporter {
    fn default() -> StderrReporter {
        let counts = Counts { listed: 0, decided: 0, kept: 0, last_line: std::time::Instant::now() };
        StderrReporter { counts: Mutex::new(counts) }
    }
}

impl Reporter for StderrReporter {
    fn listed(&self, repo: &str, count: usize) {
        let mut c = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        c.listed += count as u64;
        c.last_line = std::time::Instant::now();
        if !crate::reporter::quiet() {
            eprintln!("  {}", clean(&listed_line(repo, &c)));
        }
    }

    fn noted(&self, repo: &str, message: &str) {
        if !crate::reporter::quiet() {
            eprintln!("  {}: {}", clean(repo), clean(message));
        }
    }

    fn decided(&self, repo: &str, number: u64, decision: Decision) {
        let mut c = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        c.decided += 1;
        if decision == Decision::Kept {
            c.kept += 1;
            tracing::info!(repo, number, "kept");
        }
        if c.decided.is_multiple_of(100) || c.last_line.elapsed() >= crate::reporter::STATUS_EVERY {
            c.last_line = std::time::Instant::now();
            if !crate::reporter::quiet() {
                eprintln!("  {}: {} decided, {} kept (last: #{number})", clean(repo), c.decided, c.kept);
            }
        }
    }
}

/// The line said when a page is listed: the decisions only once there are some.
fn listed_line(repo: &str, c: &Counts) -> String {
    match c.decided {
        0 => format!("{repo}: {} PRs listed", c.listed),
        _ => format!("{repo}: {} PRs listed, {} decided, {} kept", c.listed, c.decided, c.kept),
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::cli::{Cli, Command};

    fn mine_args(argv: &[&str]) -> MineArgs {
        match Cli::try_parse_from([&["swe-forge", "mine"], argv].concat()).unwrap().command {
            Command::Mine(a) => a,
            other => panic!("parsed as {other:?}"),
        }
    }

    /// [`resolve`] with the pipeline file `--pipeline` names, read here.
    fn resolved(args: &MineArgs) -> Settings {
        resolve(args, args.pipeline.as_ref().map(|p| Pipeline::load(p).unwrap())).unwrap()
    }

    /// A flag beats the pipeline file's `[mine]` section and its repository's own settings.
    #[test]
    fn flags_beat_the_pipeline_files_mine_section() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir(tmp.path().join("mirror")).unwrap();
        let pipeline = tmp.path().join("p.toml");
        std::fs::write(
            &pipeline,
            "name = 'p'\n[source]\nrecords = 'mined.jsonl'\nrepos = 'repos'\n[output]\nvalidated = 'v.jsonl'\n\
             [mine]\nsince = '2020-01-01'\nuntil = '2020-12-31'\nmax_files = 50\nmax_fix_lines = 400\n\
             merged_only = false\nrequire_issue = false\nfunnel = 'pipeline-funnel.json'\n\
             [[mine.repos]]\nname = 'o/r'\nmirror = 'mirror'\nmax_files = 40\n",
        )
        .unwrap();
        let p = pipeline.to_str().unwrap();
        let mirror_of = |s: Settings| match s.jobs.into_iter().next() {
            Some(Job::Mirror(o)) => (s.out, s.funnel, o),
            _ => panic!("not one mirror job"),
        };

        let (out, funnel, o) = mirror_of(resolved(&mine_args(&["--pipeline", p])));
        assert_eq!(out, tmp.path().join("mined.jsonl"));
        assert_eq!(funnel, tmp.path().join("pipeline-funnel.json"));
        assert_eq!(o.window, Window::parse(Some("2020-01-01"), Some("2020-12-31")).unwrap());
        assert_eq!(o.limits, Limits { max_files: Some(40), max_fix_lines: Some(400) }, "the repository's own first");
        assert!(!o.merged_only && !o.require_issue);

        let flagged = [
            "--pipeline",
            p,
            "--since",
            "2021-03-01",
            "--until",
            "2021-03-31",
            "--max-files",
            "3",
            "--max-fix-lines",
            "9",
            "--merged-only",
            "--issue-links",
            "required",
            "--out",
            "elsewhere/out.jsonl",
            "--funnel",
            "elsewhere/funnel.json",
        ];
        let (out, funnel, o) = mirror_of(resolved(&mine_args(&flagged)));
        assert_eq!(out, PathBuf::from("elsewhere/out.jsonl"));
        assert_eq!(funnel, PathBuf::from("elsewhere/funnel.json"));
        assert_eq!(o.window, Window::parse(Some("2021-03-01"), Some("2021-03-31")).unwrap());
        assert_eq!(o.limits, Limits { max_files: Some(3), max_fix_lines: Some(9) });
        assert!(o.merged_only && o.require_issue);
    }

    /// A listing before any decision says no "0 decided, 0 kept" (issue #60).
    #[test]
    fn the_listed_line_counts_decisions_once_there_are_some() {
        let mut c = Counts { listed: 50, decided: 0, kept: 0, last_line: std::time::Instant::now() };
        assert_eq!(listed_line("o/r", &c), "o/r: 50 PRs listed");
        c.decided = 3;
        c.kept = 1;
        assert_eq!(listed_line("o/r", &c), "o/r: 50 PRs listed, 3 decided, 1 kept");
    }
}
