//! `swe-forge images`: the base image and the images swe-forge made.

use anyhow::Result;
use swe_forge_docker::{BaseSpec, Engine, LABEL_ROLE};

use crate::cli::ImagesCommand;

pub async fn images_command(cmd: ImagesCommand) -> Result<()> {
    let engine = Engine::connect().await?;
    match cmd {
        ImagesCommand::Bootstrap => {
            let tag = engine.ensure_base(&BaseSpec::default(), &|m| eprintln!("{m}")).await?;
            println!("{tag}");
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
