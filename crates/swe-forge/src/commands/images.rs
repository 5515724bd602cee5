//! `swe-forge images`: the base image and the images swe-forge made.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Result, bail};
use swe_forge_docker::{BaseSpec, Engine, LABEL_REPOSITORY, LABEL_ROLE};
use swe_forge_validate::{Settings, Silent, Validator};

use crate::cli::{ImagesCommand, VerifyArgs};
use crate::records::read_records;
use crate::settings::{apply_engine_args, apply_pipeline};
use crate::ship;
use swe_forge_config::Pipeline;

pub async fn images_command(cmd: ImagesCommand) -> Result<()> {
    let engine = Engine::connect().await?;
    match cmd {
        ImagesCommand::Bootstrap => {
            let tag = engine.ensure_base(&BaseSpec::default(), &|m| eprintln!("{m}")).await?;
            println!("{tag}");
        }
        ImagesCommand::Verify(verify) => {
            let VerifyArgs { records, repos, instances, pipeline, engine: args } = *verify;
            let mut settings = Settings::new(repos, std::env::temp_dir().join("swe-forge-verify"));
            if let Some(p) = &pipeline {
                apply_pipeline(&mut settings, &Pipeline::load(p)?);
            }
            apply_engine_args(&mut settings, &args);
            let validator = Validator::new(engine, settings, Arc::new(Silent))?;
            let mut failures = 0;
            for inst in read_records(&records)? {
                if !instances.is_empty() && !instances.contains(&inst.instance_id) {
                    continue;
                }
                if inst.swe_forge.as_ref().and_then(|m| m.image.as_ref()).is_none() {
                    continue;
                }
                eprintln!("rebuilding {} from scratch", inst.instance_id);
                match validator.verify_image(&inst).await {
                    Ok(r) if r.identical() => println!(
                        "{}: identical ({} files; {} volatile files differ, as on every build)",
                        r.instance_id,
                        r.files,
                        r.volatile.len()
                    ),
                    Ok(r) => {
                        println!(
                            "{}: differs ({} files: {} added, {} removed, {} changed)",
                            r.instance_id,
                            r.files,
                            r.added.len(),
                            r.removed.len(),
                            r.changed.len()
                        );
                        for (kind, list) in [("added", &r.added), ("removed", &r.removed), ("changed", &r.changed)] {
                            for p in list.iter().take(50) {
                                println!("  {kind} {p}");
                            }
                        }
                    }
                    Err(e) => {
                        failures += 1;
                        println!("{}: could not verify: {e}", inst.instance_id);
                    }
                }
            }
            if failures > 0 {
                bail!("{failures} image(s) could not be verified");
            }
        }
        ImagesCommand::Sizes { records } => sizes(&engine, &records).await?,
        ImagesCommand::Cleanup { dry_run } => cleanup(&engine, dry_run).await?,
        ImagesCommand::Prune { keep, all_repositories, dry_run } => {
            cleanup(&engine, dry_run).await?;
            prune(&engine, &keep, all_repositories, dry_run).await?;
        }
        ImagesCommand::Push { records, registry, tag_style, out } => {
            ship::push(&engine, &records, &registry, tag_style, out).await?;
        }
        ImagesCommand::Pull { records, registry } => ship::pull(&engine, &records, registry.as_deref()).await?,
        ImagesCommand::Save { records, out } => ship::save(&engine, &records, &out).await?,
        ImagesCommand::Load { archive } => ship::load(&engine, &archive).await?,
        ImagesCommand::List => {
            for role in ["base", "toolchain", "environment", "instance"] {
                for tag in engine.images_with_labels(&[(LABEL_ROLE, role)]).await? {
                    println!("{role:<10} {tag}");
                }
            }
        }
    }
    Ok(())
}

/// Removes (or, dry, lists) the containers of swe-forge runs whose process is gone.
async fn cleanup(engine: &Engine, dry_run: bool) -> Result<()> {
    let found = engine.remove_orphan_containers(dry_run).await?;
    for c in &found {
        let verb = if dry_run { "would remove" } else { "removed" };
        println!("{verb} container {} of run {} ({}, {})", c.id, c.run, c.image, c.state);
    }
    eprintln!(
        "{} container(s) of runs whose process is gone {}",
        found.len(),
        if dry_run { "would be removed" } else { "removed" }
    );
    Ok(())
}

/// Removes (or, dry, lists) instance and environment images no record of `keep` uses.
async fn prune(engine: &Engine, keep: &[PathBuf], all_repositories: bool, dry_run: bool) -> Result<()> {
    let mut tags: HashSet<String> = HashSet::new();
    let mut ids: HashSet<String> = HashSet::new();
    let mut repos: BTreeSet<String> = BTreeSet::new();
    for path in keep {
        for inst in read_records(path)? {
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
    let (mut removed, mut kept) = (0usize, 0usize);
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
                if dry_run {
                    println!("would remove {role:<11} {tag}");
                } else {
                    engine.remove_image(&tag).await?;
                    println!("removed {role:<11} {tag}");
                }
                removed += 1;
            }
        }
    }
    let scope = if all_repositories { "all repositories".to_owned() } else { format!("{} repositories", repos.len()) };
    eprintln!(
        "{removed} image(s) {} and {kept} kept, over {scope}; toolchain and base images are never pruned",
        if dry_run { "would be removed" } else { "removed" }
    );
    Ok(())
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
/// and bytes each environment adds on top of its toolchain (shared by its instances).
async fn sizes(engine: &Engine, records: &std::path::Path) -> Result<()> {
    println!("| instance | language | environment image | env commit | instance adds MiB |");
    println!("|---|---|---|---|---|");
    let mut unique = Vec::new();
    // Environment (or toolchain, for records made before environments) -> (toolchain, instances).
    let mut envs: BTreeMap<String, (String, Vec<String>)> = BTreeMap::new();
    let mut adds: HashMap<String, u64> = HashMap::new();
    for inst in read_records(records)? {
        let Some(meta) = &inst.swe_forge else { continue };
        let (Some(image), Some(prov)) = (&meta.image, &meta.provenance) else { continue };
        let parent = if prov.env_image.is_empty() { &prov.toolchain_image } else { &prov.env_image };
        let (Some(total), Some(below)) = (engine.image_size(image).await?, engine.image_size(parent).await?) else {
            continue;
        };
        let add = total.saturating_sub(below);
        unique.push(add);
        adds.insert(inst.instance_id.clone(), add);
        let commit = if prov.env_commit.is_empty() { "-" } else { &prov.env_commit[..prov.env_commit.len().min(12)] };
        println!(
            "| {} | {} | {} | {commit} | {:.1} |",
            inst.instance_id,
            inst.lang.as_deref().unwrap_or("?"),
            if prov.env_image.is_empty() { "-" } else { &prov.env_image },
            mib(add)
        );
        if !prov.env_image.is_empty() {
            let e = envs.entry(prov.env_image.clone()).or_insert_with(|| (prov.toolchain_image.clone(), Vec::new()));
            e.1.push(inst.instance_id.clone());
        }
    }
    let mut amortized = Vec::new();
    if !envs.is_empty() {
        println!("\n| environment image (shared) | toolchain image | instances | environment adds MiB |");
        println!("|---|---|---|---|");
        for (env, (toolchain, ids)) in &envs {
            let (Some(total), Some(below)) = (engine.image_size(env).await?, engine.image_size(toolchain).await?)
            else {
                continue;
            };
            let add = total.saturating_sub(below);
            println!("| {env} | {toolchain} | {} | {:.1} |", ids.len(), mib(add));
            for id in ids {
                amortized.push(adds.get(id).copied().unwrap_or(0) + add / ids.len() as u64);
            }
        }
    }
    if let Some(m) = median(unique.clone()) {
        println!(
            "\nmedian bytes an instance adds on top of its environment: {:.1} MiB over {} instances",
            mib(m as u64),
            unique.len()
        );
    }
    if let Some(m) = median(amortized) {
        println!("median with its share of the environment: {:.1} MiB", mib(m as u64));
    }
    Ok(())
}
