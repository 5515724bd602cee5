//! `swe-forge revalidate`: run published records (test lists included) through the validator
//! under a profile and write, in the output folder, the re-derived records and an agreement
//! report (`swe_forge_agree`) comparing them with the published lists.
//!
//! Output folder: `state.sqlite` (the state store: a killed run resumes from it),
//! `revalidated.jsonl` (our records as the validator left them, canonical ids, appended as each
//! finishes), `timings.jsonl` (per instance, the time
//! before its first run: image build and setup), `rederived.jsonl` (our records in the
//! comparison's naming), `agreement.json` and `agreement.md`, `environments.md` (per instance:
//! image, build time, unique bytes, agreement; beside other profiles' reports given with
//! `--compare`), `work/` (logs).
//!
//! A profile (`pipelines/profiles/<name>.toml`, built in for `msb` and `default`, or any file)
//! is recipe overrides keyed by `lang:<language>`, `recipe:<name>` or `org/repo`, applied after
//! the pipeline's overrides of the same key, plus the naming of the comparison.

use std::collections::{HashMap, HashSet};
use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};
use swe_forge_agree::{
    AgreementReport, InstanceAgreement, Revalidated, agree, agreement_markdown, environments_markdown,
};
use swe_forge_core::{Instance, TestResult};
use swe_forge_docker::{Engine, ImageStack};
use swe_forge_logparse::Naming;
use swe_forge_recipes::plan_env_commits;
use swe_forge_store::{RunRow, Store};
use swe_forge_validate::{Done, Settings, ValidateError};

use crate::cli::RevalidateArgs;
use crate::records::read_logs;
use crate::records::{off_thread, read_records};
use crate::resumable::Run;
use crate::settings::{apply_engine_args, apply_pipeline};
use swe_forge_config::Pipeline;
use swe_forge_config::Profile;

/// Time before an instance's first run, kept across resumed runs.
#[derive(Debug, Serialize, Deserialize)]
struct Timing {
    instance_id: String,
    build_ms: u64,
}

pub async fn revalidate_command(args: RevalidateArgs) -> Result<()> {
    let profile = Profile::load(&args.profile)?;
    eprintln!("profile {}: {}", profile.name, profile.description);
    let path = args.records.clone();
    let all_published = off_thread(move || read_records(&path)).await?;
    let out = &args.out;
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let (settings, published) = revalidation_settings(&args, &profile, all_published)?;
    let work_dir = settings.work_dir.clone();
    let done = revalidate(&args, settings, &published).await?;

    let sizes = image_sizes(&done.run.store, &done.ids).await?;
    let ours =
        Ours { store: &done.run.store, ids: &done.ids, sizes: &sizes, timings: &done.timings, work_dir: &work_dir };
    // The records re-derived from our runs are written as they are made.
    let rederived_path = out.join("rederived.jsonl");
    let mut rederived = swe_forge_export::JsonlWriter::create(&rederived_path)
        .with_context(|| format!("writing {}", rederived_path.display()))?;
    let rows = agreement_rows(&published, &ours, profile.naming, &mut rederived)?;
    rederived.finish().with_context(|| format!("writing {}", rederived_path.display()))?;
    let mut report = AgreementReport::new(&profile.name, profile.naming, rows);
    report.commands = profile.commands();
    write_file(&out.join("agreement.json"), &serde_json::to_vec_pretty(&report)?)?;
    write_file(&out.join("agreement.md"), agreement_markdown(&report).as_bytes())?;
    let others = read_reports(&args.compare)?;
    let all: Vec<&AgreementReport> = std::iter::once(&report).chain(&others).collect();
    write_file(&out.join("environments.md"), environments_markdown(&all).as_bytes())?;
    if args.json {
        outln!("{}", summary_json(&report, out, done.stopped.is_some()));
    } else {
        print_summary(&report);
    }
    done.stopped.map_or(Ok(()), |e| Err(e.into()))
}

/// The settings a revalidation runs with (the pipeline file's, then the profile's, then the
/// flags'), and the published records it re-validates: those the pipeline keeps and
/// `--instance` names. Environment commits are planned from every record, so that a filtered
/// run builds the same images.
fn revalidation_settings(
    args: &RevalidateArgs,
    profile: &Profile,
    all_published: Vec<Instance>,
) -> Result<(Settings, Vec<Instance>)> {
    let work_dir = args.work_dir.clone().unwrap_or_else(|| args.out.join("work"));
    let mut settings = Settings::new(args.repos.clone(), work_dir.clone());
    // An audit of published lists gathers no evidence and runs no hunk unless asked
    // (`--evidence-runs`, `--hunk-runs`); no layout variant prunes the lists it compares.
    settings.evidence_runs = 0;
    settings.hunk_runs = 0;
    settings.layout_variants = 0;
    let pipeline = args.pipeline.as_ref().map(|p| Pipeline::load(p)).transpose()?;
    if let Some(pipeline) = &pipeline {
        apply_pipeline(&mut settings, pipeline);
        settings.work_dir.clone_from(&work_dir);
    }
    let wanted: HashSet<&str> = args.instances.iter().map(String::as_str).collect();
    let published: Vec<Instance> = all_published
        .iter()
        .filter(|r| pipeline.as_ref().is_none_or(|p| p.keeps(r)))
        .filter(|r| wanted.is_empty() || wanted.contains(r.instance_id.as_str()))
        .cloned()
        .collect();
    if published.is_empty() {
        bail!("no records to re-validate (check --instance and the pipeline's filters)");
    }
    profile.merge_into(&mut settings.overrides);
    settings.label_rule = profile.labels;
    apply_engine_args(&mut settings, &args.engine);
    settings.env_commits = plan_env_commits(&all_published, &settings.repos_root, &settings.overrides);
    Ok((settings, published))
}

/// A revalidation's run, after it: the store, the ids of our results in it, each one's build
/// time, and the circuit breaker's stop if it stopped the run.
struct Rerun {
    run: Run,
    ids: HashSet<String>,
    timings: HashMap<String, u64>,
    stopped: Option<ValidateError>,
}

/// Re-validates the `published` records the state store (`<out>/state.sqlite`) has no result
/// for (none with `--report-only`).
///
/// A killed run resumes from the store, and a result the engine cut short (infrastructure) runs
/// again. `revalidated.jsonl` is the same results as an append-only log (with --fresh, an
/// earlier result stays there and the later one wins when it is read); an output folder from
/// before the store is taken over from it.
async fn revalidate(args: &RevalidateArgs, settings: Settings, published: &[Instance]) -> Result<Rerun> {
    let progress = args.out.join("revalidated.jsonl");
    let timings_path = args.out.join("timings.jsonl");
    let store_path = args.out.join("state.sqlite");
    let new_store = !store_path.exists();
    let mut run = Run::open(&store_path, "instances", "re-validated")?;
    if new_store && progress.exists() {
        take_over_log(&mut run.store, &progress, published)?;
    }
    if args.fresh && !args.report_only {
        run.store.requeue(&published.iter().map(|r| r.instance_id.clone()).collect::<Vec<_>>())?;
    }
    let candidates: Vec<Instance> = published.iter().map(to_candidate).collect();
    let todo = if args.report_only { Vec::new() } else { run.pending(&candidates)? };
    let todo_ids: HashSet<&str> = todo.iter().map(|c| c.instance_id.as_str()).collect();
    // The ids of our results; the records stay in the store and are read one at a time.
    let mut ids: HashSet<String> =
        run.store.validated_ids()?.into_iter().filter(|id| !todo_ids.contains(id.as_str())).collect();
    let mut timings: HashMap<String, u64> = read_timings(&timings_path);
    drop(todo_ids);
    let mut files = if todo.is_empty() { None } else { Some((append(&progress)?, append(&timings_path)?)) };
    let stopped = run
        .run(settings, todo, async |validator, _, store, todo| {
            let Some((file, timing_file)) = files.as_mut() else { return Ok(()) };
            let mut keep = |done: Done<Instance>| -> Result<()> {
                let r = done.result;
                store.finish(&r, &RunRow::of(&r))?;
                let run_ms: u64 = r.swe_forge.iter().flat_map(|m| &m.runs).map(|x| x.duration_ms).sum();
                let build_ms = (done.elapsed.as_millis() as u64).saturating_sub(run_ms);
                writeln!(file, "{}", serde_json::to_string(&r)?).and_then(|()| file.sync_data())?;
                let t = Timing { instance_id: r.instance_id.clone(), build_ms };
                writeln!(timing_file, "{}", serde_json::to_string(&t)?)?;
                timings.insert(t.instance_id, build_ms);
                ids.insert(r.instance_id.clone());
                Ok(())
            };
            validator.validate_each(todo, &mut keep).await
        })
        .await?;
    drop(files);
    Ok(Rerun { run, ids, timings, stopped })
}

/// Takes over the results of an output folder from before the state store: each record of
/// `progress` (the append-only log) that is among `published` is entered as finished.
fn take_over_log(store: &mut Store, progress: &Path, published: &[Instance]) -> Result<()> {
    let file = std::fs::File::open(progress).with_context(|| format!("opening {}", progress.display()))?;
    let earlier = swe_forge_core::read_jsonl_log(std::io::BufReader::new(file))
        .with_context(|| format!("reading {}", progress.display()))?;
    let by_id: HashMap<&str, &Instance> = published.iter().map(|p| (p.instance_id.as_str(), p)).collect();
    for r in earlier.iter().filter(|r| by_id.contains_key(r.instance_id.as_str())) {
        store.enqueue(&[to_candidate(by_id[r.instance_id.as_str()])])?;
        store.finish(r, &[])?;
    }
    Ok(())
}

/// What this run knows of its own results: the store that holds the records, their ids, image
/// sizes, build times and where the logs are.
struct Ours<'a> {
    store: &'a Store,
    ids: &'a HashSet<String>,
    sizes: &'a HashMap<String, Sizes>,
    timings: &'a HashMap<String, u64>,
    work_dir: &'a Path,
}

/// One agreement row per published record (pending when not re-validated yet); the records
/// re-derived from our runs go to `rederived` as they are made, each of ours read from the store
/// when its turn comes.
fn agreement_rows(
    published: &[Instance],
    ours: &Ours<'_>,
    naming: Naming,
    rederived: &mut swe_forge_export::JsonlWriter,
) -> Result<Vec<InstanceAgreement>> {
    let mut rows: Vec<InstanceAgreement> = Vec::new();
    for p in published {
        let o = match ours.ids.contains(&p.instance_id) {
            true => ours.store.result(&p.instance_id)?,
            false => None,
        };
        let Some(o) = o else {
            rows.push(InstanceAgreement::pending(p, naming));
            continue;
        };
        let logs = read_logs(ours.work_dir, &o);
        let (mut row, record) = agree(Revalidated { published: p, ours: &o, logs: logs.as_ref() }, naming);
        row.image.build_ms = ours.timings.get(&p.instance_id).copied();
        if let Some(size) = ours.sizes.get(&p.instance_id) {
            row.image.unique_bytes = Some(size.instance);
            row.image.environment.clone_from(&size.environment);
            row.image.environment_bytes = size.environment_bytes;
        }
        rows.push(row);
        if let Some(record) = record {
            rederived.write(&record)?;
        }
    }
    Ok(rows)
}

/// The agreement reports given with `--compare`.
fn read_reports(paths: &[PathBuf]) -> Result<Vec<AgreementReport>> {
    let mut others = Vec::new();
    for path in paths {
        // Capped: an agreement report is small, and `--compare /dev/zero` must not fill the memory.
        let read = swe_forge_fs::read_capped(path, swe_forge_fs::READ_CAP)
            .with_context(|| format!("reading {}", path.display()))?;
        if read.truncated {
            bail!("{}: over {} MiB, not an agreement report", path.display(), swe_forge_fs::READ_CAP >> 20);
        }
        others.push(
            serde_json::from_slice::<AgreementReport>(&read.bytes)
                .with_context(|| format!("{} is not an agreement report", path.display()))?,
        );
    }
    Ok(others)
}

/// The published record without its results, as a candidate for the validator.
fn to_candidate(published: &Instance) -> Instance {
    let mut c = published.clone();
    for m in [&mut c.fixed_tests, &mut c.p2p_tests, &mut c.f2p_tests, &mut c.s2p_tests, &mut c.n2p_tests] {
        m.clear();
    }
    for r in [&mut c.run_result, &mut c.test_patch_result, &mut c.fix_patch_result] {
        *r = TestResult::default();
    }
    c
}

/// What an instance image adds on disk on top of the image it was built on (its repository
/// environment, its toolchain image for records made before environments), and its environment
/// image (if any) with what that adds over its toolchain: the engine's [`Engine::added`], when
/// both images exist.
struct Sizes {
    instance: u64,
    environment: Option<String>,
    environment_bytes: Option<u64>,
}

async fn image_sizes(store: &Store, ours: &HashSet<String>) -> Result<HashMap<String, Sizes>> {
    let mut out = HashMap::new();
    let Ok(engine) = Engine::connect().await else { return Ok(out) };
    // Bytes on disk only: no layer's transfer size is needed.
    let no_layers = HashMap::new();
    let disk =
        async |image: &str, below: &str| engine.added(image, below, &no_layers).await.ok().flatten().map(|a| a.disk);
    for id in ours {
        let Some(r) = store.result(id)? else { continue };
        let Some(meta) = &r.swe_forge else { continue };
        let (Some(image), Some(prov)) = (&meta.image, &meta.provenance) else { continue };
        let stack = ImageStack::new(image, &prov.env_image, &prov.toolchain_image);
        let environment_bytes = match stack.environment {
            None => None,
            Some(env) => disk(env, stack.toolchain).await,
        };
        if let Some(instance) = disk(stack.instance, stack.parent()).await {
            let environment = stack.environment.map(str::to_owned);
            out.insert(id.clone(), Sizes { instance, environment, environment_bytes });
        }
    }
    Ok(out)
}

fn read_timings(path: &Path) -> HashMap<String, u64> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines().filter_map(|l| serde_json::from_str::<Timing>(l).ok()).map(|t| (t.instance_id, t.build_ms)).collect()
}

fn append(path: &PathBuf) -> Result<std::fs::File> {
    OpenOptions::new().create(true).append(true).open(path).with_context(|| format!("opening {}", path.display()))
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    Ok(swe_forge_fs::write_file(path, bytes)?)
}

/// What the summary calls an instance's outcome: `agrees`, `differs`, `not_run`, `pending`.
fn outcome(r: &InstanceAgreement) -> &'static str {
    match (r.outcome, r.agrees) {
        (swe_forge_agree::Outcome::Compared, true) => "agrees",
        (swe_forge_agree::Outcome::Compared, false) => "differs",
        (swe_forge_agree::Outcome::NotRun, _) => "not_run",
        (swe_forge_agree::Outcome::Pending, _) => "pending",
    }
}

/// The summary's figures as one JSON object (`--json`): the output folder, the profile, the
/// tally of agreement.json, and per instance the table's columns; whether the run was stopped.
fn summary_json(report: &AgreementReport, out: &Path, stopped: bool) -> serde_json::Value {
    let list = |c: &Option<swe_forge_agree::ListComparison>| {
        c.as_ref().map(|c| serde_json::json!({ "exact": c.exact, "published": c.published, "ours": c.ours }))
    };
    let instances: Vec<serde_json::Value> = report
        .instances
        .iter()
        .map(|r| {
            serde_json::json!({
                "instance_id": r.instance_id,
                "outcome": outcome(r),
                "fail_to_pass": list(&r.fail_to_pass),
                "pass_to_pass": list(&r.pass_to_pass),
                "cause": r.cause.map(|c| c.as_str()),
            })
        })
        .collect();
    serde_json::json!({
        "out": out.display().to_string(),
        "profile": report.profile,
        "records": report.instances.len(),
        "overall": report.overall,
        "instances": instances,
        "stopped": stopped,
    })
}

fn print_summary(report: &AgreementReport) {
    outln!("{:<44} {:<9} {:>13} {:>13}  cause", "instance", "outcome", "FAIL_TO_PASS", "PASS_TO_PASS");
    for r in &report.instances {
        let cmp = |c: &Option<swe_forge_agree::ListComparison>| match c {
            Some(c) => format!("{}{}/{}", if c.exact { "=" } else { "≠" }, c.published, c.ours),
            None => "-".to_owned(),
        };
        outln!(
            "{:<44} {:<9} {:>13} {:>13}  {}",
            r.instance_id,
            outcome(r).replace('_', " "),
            cmp(&r.fail_to_pass),
            cmp(&r.pass_to_pass),
            r.cause.map(|c| c.as_str()).unwrap_or("")
        );
    }
    let o = &report.overall;
    outln!(
        "profile {}: {} of {} compared instances agree exactly ({} instances, {} images built)",
        report.profile,
        o.exact_both,
        o.compared,
        o.instances,
        o.images_built
    );
}
