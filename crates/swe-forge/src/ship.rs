//! `swe-forge images push | pull | save | load`: the images records name, shipped to other
//! machines through a registry or one `docker save` archive.
//!
//! A record names four images (base, toolchain, repository environment, instance); each is
//! pushed once per run under `HOST:PORT/<its own name>`, and the engine uploads a layer the
//! registry already holds (another image's) not again. The pushed references, pinned by digest,
//! go onto the records (`swe_forge.registry_image`, `swe_forge.registry_images`).
//!
//! With `--json`, each prints one JSON object instead of its table or lines, with the same
//! figures (bytes, not MiB).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use swe_forge_core::{Instance, MarkdownTable};
use swe_forge_docker::{Engine, split_reference};

use crate::records::read_records;

/// How pushed images are named besides their own names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TagStyle {
    /// Our own names only: `HOST:PORT/swe-forge/<org>__<repo>:pr-<N>-<hash>`, ...
    Forge,
    /// Also each instance image the way Multi-SWE-bench names them, locally and in the registry:
    /// `mswebench/<org>_m_<repo>:pr-<N>` (lower case).
    Msb,
}

/// The local names of the images `inst` needs, base first; empty when it has no image.
pub fn image_names(inst: &Instance) -> Vec<String> {
    let Some(meta) = &inst.swe_forge else { return Vec::new() };
    let Some(image) = &meta.image else { return Vec::new() };
    let mut names: Vec<String> = Vec::new();
    if let Some(p) = &meta.provenance {
        names.extend([&p.base_image, &p.toolchain_image, &p.env_image].into_iter().filter(|n| !n.is_empty()).cloned());
    }
    names.push(image.clone());
    names
}

/// Multi-SWE-bench's name of an instance image: `mswebench/<org>_m_<repo>:pr-<number>`.
pub fn msb_name(inst: &Instance) -> String {
    format!("mswebench/{}_m_{}:pr-{}", inst.org, inst.repo, inst.number).to_lowercase()
}

/// `HOST:PORT/<name without its tag>@<digest>`.
fn pinned(registry: &str, name: &str, digest: &str) -> String {
    format!("{registry}/{}@{digest}", split_reference(name).0)
}

fn mib(b: u64) -> f64 {
    b as f64 / f64::from(1 << 20)
}

/// Pushes every image the records name and writes the records with the pushed references.
pub async fn push(
    engine: &Engine,
    records: &Path,
    registry: &str,
    style: TagStyle,
    out: Option<PathBuf>,
    json: bool,
) -> Result<()> {
    let registry = registry.trim_end_matches('/');
    let mut insts = read_records(records)?;
    let out = out.unwrap_or_else(|| alongside(records, "pushed"));
    // `-o -`: stdout carries the records alone, the table of pushes goes to stderr.
    crate::exit::output_to(&out);
    // Local name -> pinned reference, each image pushed once.
    let mut pushed: BTreeMap<String, String> = BTreeMap::new();
    let mut total_bytes = 0u64;
    // A row per image as it is pushed (all at the end in JSON).
    let mut rows = Vec::new();
    if !json {
        let head = ["image", "layers uploaded", "layers already there", "bytes uploaded"];
        outln!("{}", MarkdownTable::new(head).right(1..).head());
    }
    for inst in &insts {
        let mut names = image_names(inst);
        if names.is_empty() {
            continue;
        }
        if style == TagStyle::Msb {
            let msb = msb_name(inst);
            engine.tag(names.last().expect("an instance image"), &msb).await?;
            names.push(msb);
        }
        for name in names {
            if pushed.contains_key(&name) {
                continue;
            }
            let remote = format!("{registry}/{name}");
            eprintln!("pushing {remote}");
            engine.tag(&name, &remote).await.with_context(|| format!("{}: image {name}", inst.instance_id))?;
            let report = engine.push(&remote).await;
            // The registry's name was only needed for the push.
            engine.untag(&remote).await?;
            let report = report?;
            let reference = pinned(registry, &name, &report.digest);
            if !json {
                outln!(
                    "{}",
                    MarkdownTable::row_line([
                        name.clone(),
                        report.layers_pushed.to_string(),
                        report.layers_existing.to_string(),
                        report.bytes_pushed.to_string(),
                    ])
                );
            }
            rows.push(serde_json::json!({
                "image": name,
                "layers_pushed": report.layers_pushed,
                "layers_existing": report.layers_existing,
                "bytes_pushed": report.bytes_pushed,
                "reference": reference,
            }));
            total_bytes += report.bytes_pushed;
            pushed.insert(name.clone(), reference);
        }
    }
    for inst in &mut insts {
        let names = image_names(inst);
        let msb = msb_name(inst);
        let Some(meta) = inst.swe_forge.as_mut() else { continue };
        let Some(image) = meta.image.clone() else { continue };
        meta.registry_image = pushed.get(&image).cloned();
        meta.registry_images = names
            .iter()
            .chain(std::iter::once(&msb))
            .filter_map(|n| pushed.get(n).map(|r| (n.clone(), r.clone())))
            .collect();
    }
    swe_forge_export::write_jsonl(&out, &insts)?;
    eprintln!(
        "{} image(s) pushed to {registry}, {:.1} MiB uploaded; records with their references: {}",
        rows.len(),
        mib(total_bytes),
        out.display()
    );
    if json {
        let value = serde_json::json!({
            "registry": registry,
            "out": out.display().to_string(),
            "pushed": rows.len(),
            "bytes_pushed": total_bytes,
            "images": rows,
        });
        outln!("{value}");
    }
    Ok(())
}

/// Pulls the images the records name and gives them back their local names. The references
/// come from the records (`registry_images`); `registry` replaces their host (a registry
/// moved), or names them by tag for records pushed without references.
pub async fn pull(engine: &Engine, records: &Path, registry: Option<&str>, json: bool) -> Result<()> {
    let registry = registry.map(|r| r.trim_end_matches('/'));
    let mut done: BTreeMap<String, String> = BTreeMap::new();
    // Per image, in order: its name, reference, local id, whether it was pulled.
    let mut images = Vec::new();
    for inst in read_records(records)? {
        let Some(meta) = &inst.swe_forge else { continue };
        // Ids the record knows: a name present locally with another id is pulled again.
        let mut ids: BTreeMap<&str, &str> = BTreeMap::new();
        if let (Some(image), Some(id)) = (&meta.image, &meta.image_id) {
            ids.insert(image, id);
        }
        if let Some(p) = &meta.provenance {
            ids.insert(&p.env_image, &p.env_image_id);
        }
        for name in image_names(&inst) {
            if done.contains_key(&name) {
                continue;
            }
            let reference = match (meta.registry_images.get(&name), registry) {
                (Some(r), None) => r.clone(),
                (Some(r), Some(host)) => {
                    let (_, digest) = split_reference(r);
                    pinned(host, &name, digest)
                }
                (None, Some(host)) => format!("{host}/{name}"),
                (None, None) => bail!(
                    "{}: no registry reference for {name} (push the records with `swe-forge images push`, or name one with --registry)",
                    inst.instance_id
                ),
            };
            let local = engine.image_id(&name).await?;
            let expected = ids.get(name.as_str()).filter(|id| !id.is_empty()).copied();
            if local.is_some() && (expected.is_none() || local.as_deref() == expected) {
                eprintln!("{name} is here already");
                images.push(serde_json::json!({ "image": name, "reference": reference, "id": local, "pulled": false }));
                done.insert(name, reference);
                continue;
            }
            eprintln!("pulling {reference}");
            // Only the local name stays, as before the push.
            let id = engine.pull_as(&reference, &name, expected).await.with_context(|| inst.instance_id.clone())?;
            if !json {
                outln!("{name} {id}");
            }
            images.push(serde_json::json!({ "image": name, "reference": reference, "id": id, "pulled": true }));
            done.insert(name, reference);
        }
    }
    eprintln!("{} image(s) ready under their local names", done.len());
    if json {
        outln!("{}", serde_json::json!({ "ready": done.len(), "images": images }));
    }
    Ok(())
}

/// Writes every image the records name into one archive (layers shared by images written once).
pub async fn save(engine: &Engine, records: &Path, out: &Path, json: bool) -> Result<()> {
    let mut names: Vec<String> = Vec::new();
    for inst in read_records(records)? {
        for n in image_names(&inst) {
            if !names.contains(&n) {
                names.push(n);
            }
        }
    }
    if names.is_empty() {
        bail!("no record of {} names an image", records.display());
    }
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    eprintln!("saving {} image(s) to {}", refs.len(), out.display());
    let bytes = engine.save(&refs, out).await?;
    if json {
        let value = serde_json::json!({ "out": out.display().to_string(), "images": names, "size_bytes": bytes });
        outln!("{value}");
    } else {
        for n in &names {
            outln!("{n}");
        }
    }
    eprintln!("{} image(s), {:.1} MiB: {}", names.len(), mib(bytes), out.display());
    Ok(())
}

/// Loads an archive written by `images save`.
pub async fn load(engine: &Engine, archive: &Path) -> Result<()> {
    for name in engine.load(archive).await? {
        outln!("{name}");
    }
    Ok(())
}

/// `<dir>/<stem>.<what>.jsonl` beside `path`.
fn alongside(path: &Path, what: &str) -> PathBuf {
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "records".to_owned());
    path.with_file_name(format!("{stem}.{what}.jsonl"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_references() {
        let inst: Instance = serde_json::from_value(serde_json::json!({
            "org": "Forge-Fixtures", "repo": "GoStack", "number": 3, "instance_id": "Forge-Fixtures__GoStack-3",
            "state": "closed", "title": "t", "resolved_issues": [],
            "base": {"label": "", "ref": "main", "sha": "abc"}, "fix_patch": "", "test_patch": ""
        }))
        .unwrap();
        assert_eq!(msb_name(&inst), "mswebench/forge-fixtures_m_gostack:pr-3");
        assert!(image_names(&inst).is_empty());
        assert_eq!(
            pinned("127.0.0.1:5000", "swe-forge/a__b:pr-1-x", "sha256:ff"),
            "127.0.0.1:5000/swe-forge/a__b@sha256:ff"
        );
        assert_eq!(alongside(Path::new("d/v.jsonl"), "pushed"), Path::new("d/v.pushed.jsonl"));
    }
}
