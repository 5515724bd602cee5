//! `swe-forge images`: the base image and the images swe-forge made.
//!
//! With `--json`, a subcommand that prints a table, a line per image or container, or a count
//! prints one JSON object on stdout instead, with the same figures (bytes, not MiB); what it says
//! on stderr stays there.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Result, bail};
use serde_json::{Map, Value, json};
use swe_forge_core::MarkdownTable;
use swe_forge_docker::{Added, BaseSpec, Engine, ImageStack, LABEL_REPOSITORY, LABEL_ROLE, LeftoverContainer};
use swe_forge_validate::{Settings, Silent, Validator};

use crate::cli::{ImagesCommand, VerifyArgs};
use crate::records::{off_thread, read_records};
use crate::settings::{apply_engine_args, apply_pipeline};
use crate::ship;
use swe_forge_config::Pipeline;

pub async fn images_command(cmd: ImagesCommand) -> Result<()> {
    let engine = Engine::connect().await?;
    match cmd {
        ImagesCommand::Bootstrap => {
            let tag = engine.ensure_base(&BaseSpec::default(), &|m| eprintln!("{m}")).await?;
            outln!("{tag}");
        }
        ImagesCommand::Verify(verify) => verify_images(engine, *verify).await?,
        ImagesCommand::Sizes { records, json } => sizes(&engine, &records, json).await?,
        ImagesCommand::Cleanup { dry_run, json } => {
            let found = cleanup(&engine, dry_run, json).await?;
            if json {
                outln!("{}", Value::Object(containers_json(&found, dry_run)));
            }
        }
        ImagesCommand::Prune { keep, all_repositories, dry_run, json } => {
            let found = cleanup(&engine, dry_run, json).await?;
            let pruned = prune(&engine, &keep, all_repositories, dry_run, json).await?;
            if json {
                let mut value = containers_json(&found, dry_run);
                value.extend(pruned);
                outln!("{}", Value::Object(value));
            }
        }
        ImagesCommand::Push { records, registry, tag_style, out, json } => {
            ship::push(&engine, &records, &registry, tag_style, out, json).await?;
        }
        ImagesCommand::Pull { records, registry, json } => {
            ship::pull(&engine, &records, registry.as_deref(), json).await?;
        }
        ImagesCommand::Save { records, out, json } => ship::save(&engine, &records, &out, json).await?,
        ImagesCommand::Load { archive } => ship::load(&engine, &archive).await?,
        ImagesCommand::List { json } => list(&engine, json).await?,
    }
    Ok(())
}

/// Rebuilds each recorded image from scratch and compares its files with the recorded one.
async fn verify_images(engine: Engine, verify: VerifyArgs) -> Result<()> {
    let VerifyArgs { records, repos, instances, pipeline, json, engine: args } = verify;
    let mut settings = Settings::new(repos, std::env::temp_dir().join("swe-forge-verify"));
    if let Some(p) = &pipeline {
        apply_pipeline(&mut settings, &Pipeline::load(p)?);
    }
    apply_engine_args(&mut settings, &args);
    let validator = Validator::new(engine, settings, Arc::new(Silent))?;
    let path = records.clone();
    let chosen: Vec<_> = off_thread(move || read_records(&path))
        .await?
        .into_iter()
        .filter(|i| instances.is_empty() || instances.contains(&i.instance_id))
        .filter(|i| i.swe_forge.as_ref().and_then(|m| m.image.as_ref()).is_some())
        .collect();
    let total = chosen.len();
    let mut rows = Vec::new();
    for (k, inst) in chosen.into_iter().enumerate() {
        let began = std::time::Instant::now();
        if !crate::reporter::quiet() {
            eprintln!("[{}/{total}] rebuilding {} from scratch", k + 1, inst.instance_id);
        }
        let verified = validator.verify_image(&inst).await.map_err(|e| (inst.instance_id.clone(), e.to_string()));
        if !crate::reporter::quiet() {
            eprintln!("[{}/{total}] {} done ({}s)", k + 1, inst.instance_id, began.elapsed().as_secs());
        }
        if !json {
            print_verified(&verified);
        }
        rows.push(verified);
    }
    let failures = rows.iter().filter(|r| r.is_err()).count();
    if json {
        outln!("{}", verified_json(&rows));
    }
    if failures > 0 {
        bail!("{failures} image(s) could not be verified");
    }
    Ok(())
}

/// One image rebuilt and compared, or the instance and why it could not be.
type Verified = std::result::Result<swe_forge_validate::VerifyReport, (String, String)>;

/// The lines of one verified image: whether it came out the same, and if not the first 50
/// files of each kind of difference.
fn print_verified(verified: &Verified) {
    match verified {
        Ok(r) if r.identical() => outln!(
            "{}: identical ({} files; {} volatile files differ, as on every build)",
            r.instance_id,
            r.files,
            r.volatile.len()
        ),
        Ok(r) => {
            outln!(
                "{}: differs ({} files: {} added, {} removed, {} changed)",
                r.instance_id,
                r.files,
                r.added.len(),
                r.removed.len(),
                r.changed.len()
            );
            for (kind, list) in [("added", &r.added), ("removed", &r.removed), ("changed", &r.changed)] {
                for p in list.iter().take(50) {
                    outln!("  {kind} {p}");
                }
            }
        }
        Err((id, e)) => outln!("{id}: could not verify: {e}"),
    }
}

/// `images verify --json`: how many images came out identical, differ, or failed, and per
/// instance the outcome with every file of each difference.
fn verified_json(rows: &[Verified]) -> Value {
    let count = |f: fn(&Verified) -> bool| rows.iter().filter(|r| f(r)).count();
    let instances: Vec<Value> = rows
        .iter()
        .map(|row| match row {
            Ok(r) => json!({
                "instance_id": r.instance_id,
                "outcome": if r.identical() { "identical" } else { "differs" },
                "files": r.files,
                "volatile": r.volatile,
                "added": r.added,
                "removed": r.removed,
                "changed": r.changed,
            }),
            Err((id, e)) => json!({ "instance_id": id, "outcome": "error", "error": e }),
        })
        .collect();
    json!({
        "records": rows.len(),
        "identical": count(|r| r.as_ref().is_ok_and(|r| r.identical())),
        "differ": count(|r| r.as_ref().is_ok_and(|r| !r.identical())),
        "failed": count(|r| r.is_err()),
        "instances": instances,
    })
}

/// The images swe-forge made, by role, as lines or as JSON.
async fn list(engine: &Engine, json: bool) -> Result<()> {
    let mut rows = Vec::new();
    for role in ["base", "toolchain", "environment", "instance"] {
        for image in engine.listed_images(&[(LABEL_ROLE, role)]).await? {
            if json {
                rows.push(serde_json::json!({
                    "role": role,
                    "tag": image.tag,
                    "id": image.id,
                    "repository": image.labels.get(LABEL_REPOSITORY),
                    "size_bytes": image.size,
                }));
            } else {
                outln!("{role:<10} {}", image.tag);
            }
        }
    }
    if json {
        outln!("{}", serde_json::Value::Array(rows));
    }
    Ok(())
}

/// Removes (or, dry, lists) the containers of swe-forge runs whose process is gone; a line for
/// each unless `json`.
async fn cleanup(engine: &Engine, dry_run: bool, json: bool) -> Result<Vec<LeftoverContainer>> {
    let found = engine.remove_orphan_containers(dry_run).await?;
    for c in found.iter().filter(|_| !json) {
        let verb = if dry_run { "would remove" } else { "removed" };
        outln!("{verb} container {} of run {} ({}, {})", c.id, c.run, c.image, c.state);
    }
    eprintln!(
        "{} container(s) of runs whose process is gone {}",
        found.len(),
        if dry_run { "would be removed" } else { "removed" }
    );
    Ok(found)
}

/// The fields of `images cleanup --json` (the first of `images prune --json`): the containers
/// removed (or, dry, that would be) and how many.
fn containers_json(found: &[LeftoverContainer], dry_run: bool) -> Map<String, Value> {
    let containers: Vec<Value> =
        found.iter().map(|c| json!({ "id": c.id, "run": c.run, "image": c.image, "state": c.state })).collect();
    let mut fields = Map::new();
    fields.insert("dry_run".into(), dry_run.into());
    fields.insert("containers_removed".into(), found.len().into());
    fields.insert("containers".into(), containers.into());
    fields
}

/// Removes (or, dry, lists) instance and environment images no record of `keep` uses; a line
/// for each unless `json`. Returns the fields `images prune --json` adds to the cleanup's.
async fn prune(
    engine: &Engine,
    keep: &[PathBuf],
    all_repositories: bool,
    dry_run: bool,
    json: bool,
) -> Result<Map<String, Value>> {
    let mut tags: HashSet<String> = HashSet::new();
    let mut ids: HashSet<String> = HashSet::new();
    let mut repos: BTreeSet<String> = BTreeSet::new();
    for path in keep {
        let path = path.clone();
        for inst in off_thread(move || read_records(&path)).await? {
            repos.insert(format!("{}/{}", inst.org, inst.repo));
            let Some(meta) = &inst.swe_forge else { continue };
            tags.extend(meta.image.iter().cloned());
            ids.extend(meta.image_id.iter().cloned());
            if let Some(p) = &meta.provenance {
                tags.insert(p.env_image.clone());
                ids.extend([p.env_image_id.clone(), p.source_image_id.clone()]);
            }
        }
    }
    let scopes: Vec<Option<&str>> =
        if all_repositories { vec![None] } else { repos.iter().map(|r| Some(r.as_str())).collect() };
    let (mut removed, mut kept) = (Vec::new(), 0usize);
    for role in ["instance", "environment"] {
        for scope in &scopes {
            let mut labels = vec![(LABEL_ROLE, role)];
            labels.extend(scope.map(|r| (LABEL_REPOSITORY, r)));
            for tag in engine.images_with_labels(&labels).await? {
                let id = engine.image_id(&tag).await?;
                if tags.contains(&tag) || id.is_some_and(|id| ids.contains(&id)) {
                    kept += 1;
                    continue;
                }
                if !dry_run {
                    engine.remove_image(&tag).await?;
                }
                if !json {
                    outln!("{} {role:<11} {tag}", if dry_run { "would remove" } else { "removed" });
                }
                removed.push(json!({ "role": role, "tag": tag }));
            }
        }
    }
    let scope = if all_repositories { "all repositories".to_owned() } else { format!("{} repositories", repos.len()) };
    eprintln!(
        "{} image(s) {} and {kept} kept, over {scope}; toolchain and base images are never pruned",
        removed.len(),
        if dry_run { "would be removed" } else { "removed" }
    );
    let mut fields = Map::new();
    fields.insert("images_removed".into(), removed.len().into());
    fields.insert("images_kept".into(), kept.into());
    fields.insert("repositories".into(), if all_repositories { Value::Null } else { repos.len().into() });
    fields.insert("images".into(), removed.into());
    Ok(fields)
}

fn mib(b: u64) -> f64 {
    b as f64 / f64::from(1 << 20)
}

fn median(mut v: Vec<u64>) -> Option<f64> {
    v.sort_unstable();
    let n = v.len();
    (n > 0).then(|| if n % 2 == 1 { v[n / 2] as f64 } else { (v[n / 2 - 1] + v[n / 2]) as f64 / 2.0 })
}

/// Bytes each instance image adds on top of its repository environment (what is unique to it),
/// and bytes each environment adds on top of its toolchain (shared by its instances): on disk
/// (the engine's sizes), and as its layers travel (uncompressed tar, gzip as a push sends it),
/// with the time building them took when the records say; with `json`, as one JSON object.
async fn sizes(engine: &Engine, records: &std::path::Path, json: bool) -> Result<()> {
    let path = records.to_owned();
    let (rows, envs) = size_rows(off_thread(move || read_records(&path)).await?);
    // The layers each image adds on top of the one it was built on, once (a toolchain's are
    // never counted, and never compressed).
    let pairs: Vec<(String, String)> = rows
        .iter()
        .map(|r| (r.image.clone(), r.parent.clone()))
        .chain(envs.iter().map(|(env, (toolchain, _, _))| (env.clone(), toolchain.clone())))
        .collect();
    let layers = engine.layer_sizes(&pairs).await?;
    // A row per image as it is measured (all at the end in JSON).
    let mut out = SizesOut::new(json);
    let head = ["instance", "language", "environment image", "env commit", "instance adds MiB"];
    out.table(MarkdownTable::new(head.into_iter().chain(ADDED)).right(4..).head(), false);
    let mut unique = Vec::new();
    let mut adds: HashMap<String, Added> = HashMap::new();
    for r in &rows {
        let Some(add) = engine.added(&r.image, &r.parent, &layers).await? else { continue };
        unique.push(add);
        adds.insert(r.id.clone(), add);
        let dash = |s: &str| if s.is_empty() { "-".to_owned() } else { s.to_owned() };
        let named = [r.id.clone(), r.lang.clone(), dash(&r.env_image), dash(&r.commit)];
        out.row(MarkdownTable::row_line(named.into_iter().chain(added_cells(&add, r.build_ms))), || {
            let mut v = added_json(&add, r.build_ms);
            v.insert("instance_id".into(), r.id.clone().into());
            v.insert("language".into(), r.lang.clone().into());
            v.insert("environment_image".into(), (!r.env_image.is_empty()).then(|| r.env_image.clone()).into());
            v.insert("env_commit".into(), (!r.commit.is_empty()).then(|| r.commit.clone()).into());
            v
        });
    }
    let mut amortized = Vec::new();
    if !envs.is_empty() {
        let head = ["environment image (shared)", "toolchain image", "instances", "environment adds MiB"];
        out.table(MarkdownTable::new(head.into_iter().chain(ADDED)).right(2..).head(), true);
        for (env, (toolchain, ids, build_ms)) in &envs {
            let Some(add) = engine.added(env, toolchain, &layers).await? else { continue };
            let named = [env.clone(), toolchain.clone(), ids.len().to_string()];
            out.row(MarkdownTable::row_line(named.into_iter().chain(added_cells(&add, *build_ms))), || {
                let mut v = added_json(&add, *build_ms);
                v.insert("environment_image".into(), env.clone().into());
                v.insert("toolchain_image".into(), toolchain.clone().into());
                v.insert("instances".into(), ids.clone().into());
                v
            });
            for id in ids {
                amortized.push(adds.get(id).copied().unwrap_or_default().with_share(add, ids.len() as u64));
            }
        }
    }
    match out.json {
        Some((instances, environments)) => outln!(
            "{}",
            json!({
                "instances": instances,
                "environments": environments,
                "median": medians_json(&unique),
                "median_with_environment_share": medians_json(&amortized),
            })
        ),
        None => print_medians(&unique, &amortized),
    }
    Ok(())
}

/// Where `images sizes` puts its rows: printed as they come, or kept for one JSON object (the
/// instances' rows, then the environments').
struct SizesOut {
    json: Option<(Vec<Value>, Vec<Value>)>,
    environments: bool,
}

impl SizesOut {
    fn new(json: bool) -> SizesOut {
        SizesOut { json: json.then(Default::default), environments: false }
    }

    /// A table's head (`environments`: the second table's, after a blank line).
    fn table(&mut self, head: String, environments: bool) {
        self.environments = environments;
        if self.json.is_none() {
            outln!("{}{head}", if environments { "\n" } else { "" });
        }
    }

    /// A row: its line, or `value()` in JSON.
    fn row(&mut self, line: String, value: impl FnOnce() -> Map<String, Value>) {
        match &mut self.json {
            None => outln!("{line}"),
            Some((instances, environments)) => {
                let to = if self.environments { environments } else { instances };
                to.push(Value::Object(value()));
            }
        }
    }
}

/// What an image adds, in JSON: [`added_cells`]'s figures, in bytes and ms.
fn added_json(add: &Added, build_ms: Option<u64>) -> Map<String, Value> {
    let mut v = Map::new();
    v.insert("disk_bytes".into(), add.disk.into());
    v.insert("layers".into(), add.layers.into());
    v.insert("tar_bytes".into(), add.tar.into());
    v.insert("gzip_bytes".into(), add.gzip.into());
    v.insert("build_ms".into(), build_ms.into());
    v
}

/// The last columns of both `images sizes` tables, after the bytes on disk an image adds.
const ADDED: [&str; 4] = ["layers", "tar MiB", "gzip MiB", "build s"];

/// The cells of what an image adds: MiB on disk, then [`ADDED`]'s columns.
fn added_cells(add: &Added, build_ms: Option<u64>) -> [String; 5] {
    [
        format!("{:.1}", mib(add.disk)),
        add.layers.to_string(),
        format!("{:.1}", mib(add.tar)),
        format!("{:.1}", mib(add.gzip)),
        secs(build_ms),
    ]
}

/// One instance image of `images sizes`.
struct SizeRow {
    id: String,
    lang: String,
    image: String,
    parent: String,
    env_image: String,
    commit: String,
    build_ms: Option<u64>,
}

/// An environment image -> (its toolchain image, the instances on it, its build time).
type EnvUse = BTreeMap<String, (String, Vec<String>, Option<u64>)>;

/// The rows of the validated records that name an image, and the environments they share.
fn size_rows(records: Vec<swe_forge_core::Instance>) -> (Vec<SizeRow>, EnvUse) {
    let mut rows = Vec::new();
    let mut envs: EnvUse = BTreeMap::new();
    for inst in records {
        let Some(meta) = &inst.swe_forge else { continue };
        let (Some(image), Some(prov)) = (&meta.image, &meta.provenance) else { continue };
        let stack = ImageStack::new(image, &prov.env_image, &prov.toolchain_image);
        rows.push(SizeRow {
            id: inst.instance_id.clone(),
            lang: inst.lang.clone().unwrap_or_else(|| "?".to_owned()),
            image: image.clone(),
            parent: stack.parent().to_owned(),
            env_image: prov.env_image.clone(),
            commit: prov.env_commit.chars().take(12).collect(),
            build_ms: prov.image_build_ms,
        });
        if let Some(env) = stack.environment {
            let e = envs.entry(env.to_owned()).or_insert_with(|| (stack.toolchain.to_owned(), Vec::new(), None));
            e.1.push(inst.instance_id.clone());
            e.2 = e.2.or(prov.env_build_ms);
        }
    }
    (rows, envs)
}

/// The median bytes an instance adds (`unique`), and with its share of its environment
/// (`amortized`).
fn print_medians(unique: &[Added], amortized: &[Added]) {
    let medians = |v: &[Added]| {
        (
            mib(median(v.iter().map(|a| a.disk).collect()).unwrap_or(0.0) as u64),
            mib(median(v.iter().map(|a| a.tar).collect()).unwrap_or(0.0) as u64),
            mib(median(v.iter().map(|a| a.gzip).collect()).unwrap_or(0.0) as u64),
        )
    };
    if !unique.is_empty() {
        let (disk, tar, gzip) = medians(unique);
        outln!(
            "\nmedian bytes an instance adds on top of its environment: {disk:.1} MiB over {} instances (tar {tar:.1} MiB, gzip {gzip:.1} MiB)",
            unique.len()
        );
    }
    if !amortized.is_empty() {
        let (disk, tar, gzip) = medians(amortized);
        outln!("median with its share of the environment: {disk:.1} MiB (tar {tar:.1} MiB, gzip {gzip:.1} MiB)");
    }
}

/// The medians [`print_medians`] prints, in bytes, with the `count` of instances they are of;
/// null for none.
fn medians_json(v: &[Added]) -> Value {
    if v.is_empty() {
        return Value::Null;
    }
    let median = |f: fn(&Added) -> u64| median(v.iter().map(f).collect()).unwrap_or(0.0) as u64;
    json!({
        "count": v.len(),
        "disk_bytes": median(|a| a.disk),
        "tar_bytes": median(|a| a.tar),
        "gzip_bytes": median(|a| a.gzip),
    })
}

fn secs(ms: Option<u64>) -> String {
    ms.map_or_else(|| "-".to_owned(), |ms| format!("{:.1}", ms as f64 / 1000.0))
}
