//! `swe-forge images`: the base image and the images swe-forge made.

use std::sync::Arc;

use anyhow::{Result, bail};
use swe_forge_docker::{BaseSpec, Engine, LABEL_ROLE};
use swe_forge_validate::{Settings, Silent, Validator};

use crate::cli::{ImagesCommand, VerifyArgs};
use crate::commands::validate::{apply_engine_args, apply_pipeline, read_records};
use crate::pipeline::Pipeline;

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
        ImagesCommand::Sizes { records } => {
            println!("| instance | language | toolchain image | toolchain MiB | instance adds MiB |");
            println!("|---|---|---|---|---|");
            let mut unique = Vec::new();
            for inst in read_records(&records)? {
                let Some(meta) = &inst.swe_forge else { continue };
                let (Some(image), Some(prov)) = (&meta.image, &meta.provenance) else { continue };
                let (Some(total), Some(base)) =
                    (engine.image_size(image).await?, engine.image_size(&prov.toolchain_image).await?)
                else {
                    continue;
                };
                let mib = |b: u64| b as f64 / f64::from(1 << 20);
                let adds = total.saturating_sub(base);
                unique.push(adds);
                println!(
                    "| {} | {} | {} | {:.0} | {:.1} |",
                    inst.instance_id,
                    inst.lang.as_deref().unwrap_or("?"),
                    prov.toolchain_image,
                    mib(base),
                    mib(adds)
                );
            }
            unique.sort_unstable();
            if !unique.is_empty() {
                let n = unique.len();
                let median =
                    if n % 2 == 1 { unique[n / 2] as f64 } else { (unique[n / 2 - 1] + unique[n / 2]) as f64 / 2.0 };
                println!("\nmedian bytes an instance adds: {:.1} MiB over {n} instances", median / f64::from(1 << 20));
            }
        }
        ImagesCommand::List => {
            for role in ["base", "toolchain", "instance"] {
                for tag in engine.images_with_labels(&[(LABEL_ROLE, role)]).await? {
                    println!("{role:<10} {tag}");
                }
            }
        }
    }
    Ok(())
}
