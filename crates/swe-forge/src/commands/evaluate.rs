//! `swe-forge evaluate`: predictions (SWE-bench's or Multi-SWE-bench's format, or `gold`) run
//! against a validated dataset. Each result is stored in `<out>/state.sqlite` as it finishes, so a
//! killed evaluation resumes where it stopped; the per-instance reports, `evaluations.jsonl` and
//! the summary (`summary.json`, `summary.md`) are written from the store at the end.

use std::collections::HashMap;
use std::io::{BufRead, Read};
use std::path::Path;

use anyhow::{Context, Result, bail};
use sha2::{Digest, Sha256};
use swe_forge_core::Instance;
use swe_forge_recipes::plan_env_commits;
use swe_forge_store::{Store, input_digest};
use swe_forge_validate::{Done, Evaluation, Prediction, Settings, Stopped, Summary, evaluable};

use crate::cli::EvaluateArgs;
use crate::records::{folder_out, load_pipeline, off_thread, read_records};
use crate::resumable::Run;
use crate::settings::{apply_pipeline, apply_runner_args};
use swe_forge_config::Pipeline;
use swe_forge_config::Profile;

/// The settings an evaluation runs with: the pipeline file's, then the profile's, then the flags'
/// (a flag beats both). `pipeline` is the file `--pipeline` names, read already.
fn evaluation_settings(args: &EvaluateArgs, dataset: &[Instance], pipeline: Option<&Pipeline>) -> Result<Settings> {
    let out = &args.out;
    let mut settings = Settings::new(args.repos.clone().unwrap_or_default(), out.join("work"));
    if let Some(p) = pipeline {
        apply_pipeline(&mut settings, p);
        // `--out` beats the pipeline file: its `[validate] work_dir` is the validation's folder
        // (whose logs an evaluation must not overwrite), this evaluation's is `<out>/work`.
        settings.work_dir = out.join("work");
    }
    if let Some(name) = &args.profile {
        let profile = Profile::load(name)?;
        eprintln!("profile {}: {}", profile.name, profile.description);
        profile.merge_into(&mut settings.overrides);
        settings.label_rule = profile.labels;
        settings.eval_naming = profile.naming;
    }
    apply_runner_args(&mut settings, &args.engine);
    if let Some(j) = args.jobs {
        settings.jobs = j;
    }
    if args.repos.is_some() {
        settings.env_commits = plan_env_commits(dataset, &settings.repos_root, &settings.overrides);
    }
    Ok(settings)
}

pub async fn evaluate_command(args: EvaluateArgs) -> Result<()> {
    folder_out("--out", &args.out)?;
    let path = args.dataset.clone();
    let dataset = off_thread(move || read_records(&path)).await?;
    let by_id = dataset_by_id(&args.dataset, &dataset)?;
    let known = known_predictions(&args, &dataset, &by_id).await?;
    let out = &args.out;
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    // Read off the runtime's thread: a FIFO nobody writes waits there, and SIGINT and SIGTERM
    // still stop the command.
    let pipeline = match &args.pipeline {
        Some(p) => Some(load_pipeline(p).await?),
        None => None,
    };
    let settings = evaluation_settings(&args, &dataset, pipeline.as_ref())?;

    let mut run = Run::open(&out.join("state.sqlite"), "predictions", "evaluated")?;
    if args.fresh {
        run.store.reset_evaluations()?;
    }
    let digests: Vec<String> =
        known.iter().map(|p| evaluation_digest(by_id[p.instance_id.as_str()], p, settings.reruns)).collect();
    let mut results = stored_evaluations(&run.store, &known, &digests)?;
    let todo = run.resume((0..known.len()).filter(|&i| results[i].is_none()).collect::<Vec<usize>>(), known.len());
    let work: Vec<(&Instance, &Prediction)> =
        todo.iter().map(|&i| (by_id[known[i].instance_id.as_str()], &known[i])).collect();
    let stopped = run
        .run(settings, work, async |validator, bars, store, work| {
            let mut keep = |done: Done<Evaluation>| -> Result<()> {
                let (i, ev) = (todo[done.index], done.result);
                store.save_evaluation(&ev.instance_id, &ev.model, &digests[i], &serde_json::to_string(&ev)?)?;
                bars.done(&ev.instance_id, &outcome_line(&ev));
                results[i] = Some(ev);
                Ok(())
            };
            validator.evaluate_each(work, out, &mut keep).await.map_err(Stopped::Sink)
        })
        .await?;
    let evaluations: Vec<Evaluation> = results.into_iter().flatten().collect();
    write_reports(out, &dataset, &evaluations)?;
    let summary = Summary::of(&dataset, &evaluations);
    if args.json {
        let mut value = serde_json::to_value(&summary)?;
        if let serde_json::Value::Object(map) = &mut value {
            map.insert("out".to_owned(), out.display().to_string().into());
            map.insert("stopped".to_owned(), stopped.is_some().into());
        }
        outln!("{value}");
    } else {
        outln!(
            "{} of {} predictions resolved ({:.1}%); {} errors; report in {}",
            summary.resolved_instances,
            summary.submitted_instances,
            100.0 * summary.resolved_rate,
            summary.error_instances,
            out.join("summary.md").display()
        );
    }
    stopped.map_or(Ok(()), |e| Err(e.into()))
}

/// The records of the dataset (read from `path`) by instance id; an id that appears twice is an
/// error.
fn dataset_by_id<'a>(path: &Path, dataset: &'a [Instance]) -> Result<HashMap<&'a str, &'a Instance>> {
    let mut by_id: HashMap<&str, &Instance> = HashMap::new();
    for (line, r) in dataset.iter().enumerate() {
        if by_id.insert(&r.instance_id, r).is_some() {
            bail!("{}: instance {} appears twice (second time on record {})", path.display(), r.instance_id, line + 1);
        }
    }
    Ok(by_id)
}

/// The predictions (`gold`, or read from the file) that name an instance of the dataset, with a
/// warning naming those that do not; two predictions of one model for one instance, or none
/// known, is an error.
async fn known_predictions(
    args: &EvaluateArgs,
    dataset: &[Instance],
    by_id: &HashMap<&str, &Instance>,
) -> Result<Vec<Prediction>> {
    let predictions = if args.predictions.as_os_str() == "gold" {
        gold(dataset)
    } else {
        let path = args.predictions.clone();
        off_thread(move || read_predictions(&path)).await?
    };
    let mut seen = HashMap::new();
    for p in &predictions {
        if seen.insert((p.instance_id.clone(), p.model.clone()), ()).is_some() {
            bail!("{}: two predictions of {} for {}", args.predictions.display(), p.model, p.instance_id);
        }
    }
    let (known, unknown): (Vec<Prediction>, Vec<Prediction>) =
        predictions.into_iter().partition(|p| by_id.contains_key(p.instance_id.as_str()));
    if !unknown.is_empty() {
        let ids: Vec<&str> = unknown.iter().take(10).map(|p| p.instance_id.as_str()).collect();
        eprintln!(
            "warning: {} predictions name instances the dataset does not have: {}",
            unknown.len(),
            crate::terminal::clean(&ids.join(", "))
        );
    }
    if known.is_empty() {
        bail!("no prediction names an instance of {}", args.dataset.display());
    }
    Ok(known)
}

/// Each prediction's evaluation the store still holds under its digest (`digests`, in the same
/// order), None for those to run.
fn stored_evaluations(store: &Store, known: &[Prediction], digests: &[String]) -> Result<Vec<Option<Evaluation>>> {
    let mut results = Vec::with_capacity(known.len());
    for (p, d) in known.iter().zip(digests) {
        let stored = store.evaluation(&p.instance_id, &p.model, d)?;
        results
            .push(stored.map(|json| serde_json::from_str(&json)).transpose().context("reading a stored evaluation")?);
    }
    Ok(results)
}

/// Each evaluable record's own fix patch, as model `gold`.
fn gold(dataset: &[Instance]) -> Vec<Prediction> {
    dataset
        .iter()
        .filter(|r| evaluable(r))
        .map(|r| Prediction { instance_id: r.instance_id.clone(), model: "gold".into(), patch: r.fix_patch.clone() })
        .collect()
}

/// Most bytes of a predictions file in the JSON list format (JSON lines have no such cap, each
/// line being capped instead): 256 MiB.
const MAX_PREDICTIONS_LIST: u64 = 256 << 20;

/// Predictions from a JSON list or JSON lines, in SWE-bench's format (`instance_id`,
/// `model_name_or_path`, `model_patch`) or Multi-SWE-bench's (`org`, `repo`, `number`,
/// `fix_patch`).
pub fn read_predictions(path: &Path) -> Result<Vec<Prediction>> {
    let file = std::fs::File::open(path).with_context(|| format!("reading predictions {}", path.display()))?;
    let mut reader = std::io::BufReader::new(file);
    let first = loop {
        let buf = reader.fill_buf().with_context(|| format!("reading predictions {}", path.display()))?;
        match buf.iter().position(|b| !b.is_ascii_whitespace()) {
            Some(i) => break Some(buf[i]),
            None if buf.is_empty() => break None,
            None => {
                let n = buf.len();
                reader.consume(n);
            }
        }
    };
    let values: Vec<(usize, serde_json::Value)> = if first == Some(b'[') {
        // One JSON document: capped like a line, so an endless one ends in an error.
        let mut text = Vec::new();
        (&mut reader)
            .take(MAX_PREDICTIONS_LIST + 1)
            .read_to_end(&mut text)
            .with_context(|| format!("reading predictions {}", path.display()))?;
        if text.len() as u64 > MAX_PREDICTIONS_LIST {
            bail!(
                "{}: a JSON list of predictions may hold at most {} MiB; give JSON lines instead",
                path.display(),
                MAX_PREDICTIONS_LIST >> 20
            );
        }
        let list: Vec<serde_json::Value> =
            serde_json::from_slice(&text).with_context(|| format!("{}: not a JSON list", path.display()))?;
        list.into_iter().enumerate().map(|(i, v)| (i + 1, v)).collect()
    } else {
        let mut out = Vec::new();
        for (i, line) in swe_forge_core::bounded_lines(reader, swe_forge_core::MAX_LINE).enumerate() {
            let line = line.with_context(|| format!("reading predictions {}", path.display()))?;
            if line.trim().is_empty() {
                continue;
            }
            let v = serde_json::from_str(&line).with_context(|| format!("{}:{}: not JSON", path.display(), i + 1))?;
            out.push((i + 1, v));
        }
        out
    };
    let default_model = path.file_stem().map_or_else(|| "model".into(), |s| s.to_string_lossy().into_owned());
    values
        .into_iter()
        .map(|(n, v)| prediction(&v, &default_model).with_context(|| format!("{}: prediction {n}", path.display())))
        .collect()
}

fn prediction(v: &serde_json::Value, default_model: &str) -> Result<Prediction> {
    let text = |k: &str| v.get(k).and_then(|x| x.as_str()).map(str::to_owned);
    let model = text("model_name_or_path").or_else(|| text("model")).unwrap_or_else(|| default_model.to_owned());
    if let Some(id) = text("instance_id")
        && let Some(patch) = text("model_patch").or_else(|| text("fix_patch"))
    {
        return Ok(Prediction { instance_id: id, model, patch });
    }
    if let (Some(org), Some(repo), Some(number), Some(patch)) =
        (text("org"), text("repo"), v.get("number").and_then(|n| n.as_u64()), text("fix_patch"))
    {
        return Ok(Prediction { instance_id: format!("{org}__{repo}-{number}"), model, patch });
    }
    if v.get("instance_id").is_some() && v.get("model_patch").is_some_and(|p| p.is_null()) {
        // SWE-bench writes a null patch for a model that produced nothing.
        return Ok(Prediction { instance_id: text("instance_id").unwrap_or_default(), model, patch: String::new() });
    }
    bail!("neither SWE-bench's fields (instance_id, model_patch) nor Multi-SWE-bench's (org, repo, number, fix_patch)")
}

/// The version of how evaluation grades (raised when a change makes stored results stale: 2 drops
/// changes to tests and adds canaries).
const EVALUATION_RULES: &str = "evaluation-rules-2";

/// What decides whether a stored evaluation still answers: the record's inputs and lists, its
/// image, the patch, the number of reruns and the grading rules' version.
fn evaluation_digest(inst: &Instance, p: &Prediction, reruns: u32) -> String {
    let image = inst.swe_forge.as_ref().and_then(|m| m.image.clone()).unwrap_or_default();
    let lists = serde_json::to_string(&(&inst.fixed_tests, &inst.p2p_tests)).unwrap_or_default();
    let mut h = Sha256::new();
    for part in [input_digest(inst), lists, image, p.patch.clone(), reruns.to_string(), EVALUATION_RULES.into()] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// The progress line of a finished prediction, after its instance id: the model it is of (an
/// evaluation may hold several), then how it ended.
fn outcome_line(ev: &Evaluation) -> String {
    format!("[{}] {}", ev.model, outcome_text(ev))
}

fn outcome_text(ev: &Evaluation) -> String {
    match (&ev.verdict, &ev.detail) {
        (Some(v), _) => format!(
            "{} ({} of {} FAIL_TO_PASS, {} of {} PASS_TO_PASS pass)",
            ev.outcome.as_str(),
            v.f2p_passed.len(),
            v.f2p_passed.len() + v.f2p_failed.len(),
            v.p2p_passed.len(),
            v.p2p_passed.len() + v.p2p_failed.len()
        ),
        (None, Some(d)) => format!("{}: {}", ev.outcome.as_str(), d.lines().next().unwrap_or_default()),
        (None, None) => ev.outcome.as_str().to_owned(),
    }
}

/// `evaluations.jsonl` (one line per prediction), `logs/<model>/<id>/report.json`,
/// `summary.json` and `summary.md`.
fn write_reports(out: &Path, dataset: &[Instance], evaluations: &[Evaluation]) -> Result<()> {
    let mut lines = String::new();
    for ev in evaluations {
        lines.push_str(&serde_json::to_string(ev)?);
        lines.push('\n');
        let dir = out.join(&ev.logs);
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        swe_forge_export::write_file(dir.join("report.json"), serde_json::to_string_pretty(ev)?.as_bytes())?;
    }
    swe_forge_export::write_file(out.join("evaluations.jsonl"), lines.as_bytes())?;
    let summary = Summary::of(dataset, evaluations);
    swe_forge_export::write_file(out.join("summary.json"), serde_json::to_string_pretty(&summary)?.as_bytes())?;
    swe_forge_export::write_file(out.join("summary.md"), summary.markdown().as_bytes())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::time::Duration;

    use clap::Parser;

    use super::*;
    use crate::cli::{Cli, Command};

    /// A progress line names the model whose prediction finished (issue #60: it named only the
    /// instance, so the lines of two models' predictions for it could not be told apart).
    #[test]
    fn progress_lines_name_the_model() {
        let ev: Evaluation = serde_json::from_value(serde_json::json!({
            "instance_id": "o__r-1", "model": "gpt-x", "outcome": "error", "detail": "the patch does not apply\nmore",
            "logs": "logs/gpt-x/o__r-1",
        }))
        .unwrap();
        assert_eq!(outcome_line(&ev), "[gpt-x] error: the patch does not apply");
    }

    fn evaluate_args(argv: &[&str]) -> EvaluateArgs {
        let base = ["swe-forge", "evaluate", "--dataset", "d.jsonl", "--predictions", "gold", "--out", "ev"];
        match Cli::try_parse_from([&base[..], argv].concat()).unwrap().command {
            Command::Evaluate(a) => *a,
            other => panic!("parsed as {other:?}"),
        }
    }

    /// The pipeline file's `[validate]` settings apply unless a flag names another value; the
    /// evaluation's own folder is always `<out>/work`.
    #[test]
    fn flags_beat_the_pipeline_file() {
        let tmp = tempfile::tempdir().unwrap();
        let pipeline = tmp.path().join("p.toml");
        std::fs::write(
            &pipeline,
            "name = 'p'\n[source]\nrecords = 'r.jsonl'\nrepos = 'repos'\n[output]\nvalidated = 'v.jsonl'\n\
             [validate]\njobs = 1\nphase_timeout_secs = 7\nreruns = 4\nmemory_mb = 100\nwork_dir = 'validation-work'\n",
        )
        .unwrap();
        let p = pipeline.to_str().unwrap();
        let loaded = Pipeline::load(&pipeline).unwrap();

        let s = evaluation_settings(&evaluate_args(&["--pipeline", p]), &[], Some(&loaded)).unwrap();
        assert_eq!((s.jobs, s.phase_timeout, s.reruns), (1, Duration::from_secs(7), 4));
        assert_eq!(s.memory_bytes, Some(100 << 20));
        assert_eq!(s.work_dir, PathBuf::from("ev/work"), "the validation's folder is never an evaluation's");

        let flags = ["--pipeline", p, "--jobs", "2", "--timeout", "30", "--reruns", "0", "--memory-mb", "200"];
        let s = evaluation_settings(&evaluate_args(&flags), &[], Some(&loaded)).unwrap();
        assert_eq!((s.jobs, s.phase_timeout, s.reruns), (2, Duration::from_secs(30), 0));
        assert_eq!(s.memory_bytes, Some(200 << 20));
    }

    #[test]
    fn predictions_in_both_formats_and_as_a_list() {
        let tmp = tempfile::tempdir().unwrap();
        let jsonl = tmp.path().join("preds.jsonl");
        std::fs::write(
            &jsonl,
            "{\"instance_id\":\"o__r-1\",\"model_name_or_path\":\"m1\",\"model_patch\":\"diff\"}\n\n{\"org\":\"o\",\"repo\":\"r\",\"number\":2,\"fix_patch\":\"d2\"}\n{\"instance_id\":\"o__r-3\",\"model_patch\":null}\n",
        )
        .unwrap();
        let p = read_predictions(&jsonl).unwrap();
        assert_eq!(p[0], Prediction { instance_id: "o__r-1".into(), model: "m1".into(), patch: "diff".into() });
        assert_eq!(p[1], Prediction { instance_id: "o__r-2".into(), model: "preds".into(), patch: "d2".into() });
        assert_eq!(p[2].patch, "");
        let list = tmp.path().join("preds.json");
        std::fs::write(&list, "[{\"instance_id\":\"o__r-1\",\"model_name_or_path\":\"m\",\"model_patch\":\"x\"}]")
            .unwrap();
        assert_eq!(read_predictions(&list).unwrap().len(), 1);
        std::fs::write(&list, "[{\"id\":1}]").unwrap();
        let err = format!("{:#}", read_predictions(&list).unwrap_err());
        assert!(err.contains("prediction 1") && err.contains("SWE-bench's fields"), "{err}");
    }
}
