//! The image layers of an instance: base (bootstrapped once) -> toolchain (one per recipe's
//! package set) -> instance (the repository at the base commit, set up and warmed). Tags are
//! derived from everything that goes into a layer, so an existing tag is reused as is.

use std::collections::HashMap;

use sha2::{Digest, Sha256};
use swe_forge_docker::{BuildContext, DockerError, LABEL_ROLE, RunSpec};
use swe_forge_git::SourceRepo;

use crate::{Recipe, Validator};

/// Where the repository lives inside every instance image.
pub(crate) const REPO_DIR: &str = "/testbed";

pub(crate) fn short_hash(parts: &[&str]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p.as_bytes());
        h.update([0u8]);
    }
    h.finalize().iter().take(6).map(|b| format!("{b:02x}")).collect()
}

/// Dockerfile of a toolchain image.
pub(crate) fn toolchain_dockerfile(base: &str, recipe: &Recipe) -> String {
    let mut df = format!(
        "FROM {base}\nENV DEBIAN_FRONTEND=noninteractive\nRUN apt-get update \\\n && apt-get install -y --no-install-recommends {} \\\n && apt-get clean && rm -rf /var/lib/apt/lists/* /var/log/apt /var/log/dpkg.log /var/cache/ldconfig/aux-cache\n",
        recipe.packages.join(" ")
    );
    for (k, v) in &recipe.env {
        df.push_str(&format!("ENV {k}={}\n", shell_quote(v)));
    }
    df
}

/// Dockerfile of the source layer of an instance: the tree at the base commit, as a git
/// repository with one commit and nothing else (no remote, no other refs, no history).
pub(crate) fn source_dockerfile(toolchain: &str, sha: &str) -> String {
    format!(
        "FROM {toolchain}\nCOPY repo/ {REPO_DIR}/\nWORKDIR {REPO_DIR}\n\
RUN git -c init.defaultBranch=main init -q \\\n && git add -A \\\n && GIT_AUTHOR_DATE=2000-01-01T00:00:00Z GIT_COMMITTER_DATE=2000-01-01T00:00:00Z git -c user.name=swe-forge -c user.email=swe-forge@localhost commit -q --no-verify --allow-empty -m 'base {sha}' \\\n && git config user.name swe-forge && git config user.email swe-forge@localhost\n"
    )
}

fn shell_quote(v: &str) -> String {
    if v.chars().all(|c| c.is_ascii_alphanumeric() || "-_./:=@,+".contains(c)) {
        v.to_owned()
    } else {
        format!("\"{}\"", v.replace('\\', "\\\\").replace('"', "\\\""))
    }
}

/// Why an instance image could not be made.
pub(crate) enum ImageFailure {
    /// Building or setting up failed for reasons of the repository or recipe.
    Build(String),
    /// The engine failed.
    Infra(DockerError),
}

impl Validator {
    pub(crate) async fn toolchain_image(&self, recipe: &Recipe) -> Result<String, DockerError> {
        let base = self.base_image().await?;
        let dockerfile = toolchain_dockerfile(&base, recipe);
        let tag = format!("swe-forge/toolchain-{}:{}", recipe.language, short_hash(&[&dockerfile]));
        let cell = self.once_cell(&tag);
        cell.get_or_try_init(|| async {
            if self.engine.image_id(&tag).await?.is_none() {
                self.reporter.note(&format!("building toolchain image {tag}"));
            }
            let labels = HashMap::from([
                (LABEL_ROLE.to_owned(), "toolchain".to_owned()),
                ("dev.swe-forge.language".to_owned(), recipe.language.clone()),
            ]);
            let context = || BuildContext::new().finish(&dockerfile);
            self.engine.build_once(&tag, context, &labels, &mut |l| tracing::debug!(target: "build", "{l}")).await?;
            Ok(tag.clone())
        })
        .await
        .cloned()
    }

    /// Builds (or finds) the instance image; returns its tag and the setup log when it ran.
    pub(crate) async fn instance_image(
        &self,
        repo: &SourceRepo,
        inst: &swe_forge_core::Instance,
        recipe: &Recipe,
    ) -> Result<(String, Option<Vec<u8>>), ImageFailure> {
        let toolchain = self.toolchain_image(recipe).await.map_err(ImageFailure::Infra)?;
        let sha = &inst.base.sha;
        let tree = repo.commit(sha).map(|c| c.tree_id()).map_err(|e| ImageFailure::Build(e.to_string()))?;
        let source_df = source_dockerfile(&toolchain, sha);
        let setup = recipe.setup.join("\n");
        let key = short_hash(&[&toolchain, &tree.to_string(), &source_df, &setup]);
        let name = format!("swe-forge/{}__{}", inst.org, inst.repo).to_lowercase();
        let tag = format!("{name}:pr-{}-{key}", inst.number);
        if self.engine.image_id(&tag).await.map_err(ImageFailure::Infra)?.is_some() {
            return Ok((tag, None));
        }
        // Layer 1: the sources.
        let mut ctx = BuildContext::new();
        repo.write_tree_tar(tree, "repo", ctx.tar()).map_err(|e| ImageFailure::Build(e.to_string()))?;
        let context = ctx.finish(&source_df).map_err(ImageFailure::Infra)?;
        let src_tag = format!("{name}:src-{}", short_hash(&[&toolchain, &tree.to_string(), &source_df]));
        let labels = HashMap::from([
            (LABEL_ROLE.to_owned(), "instance".to_owned()),
            ("dev.swe-forge.instance".to_owned(), inst.instance_id.clone()),
            ("dev.swe-forge.base-sha".to_owned(), sha.clone()),
        ]);
        match self.engine.build(&src_tag, context, &labels, &mut |l| tracing::debug!(target: "build", "{l}")).await {
            Ok(_) => {}
            Err(DockerError::BuildFailed { message, log_tail, .. }) => {
                return Err(ImageFailure::Build(format!("{message}\n{log_tail}")));
            }
            Err(e) => return Err(ImageFailure::Infra(e)),
        }
        // Layer 2: setup with network (and the CA bundle mounted, never copied), then commit.
        let mut spec = RunSpec::new(&src_tag, format!("set -e\ncd {REPO_DIR}\n{setup}\n"));
        spec.network = true;
        spec.ca_bundle = self.settings.ca_bundle.clone();
        spec.timeout = self.settings.setup_timeout;
        spec.memory_bytes = self.settings.memory_bytes;
        let (out, committed) = self.engine.run_and_commit(&spec, &tag, &labels).await.map_err(ImageFailure::Infra)?;
        if committed.is_none() {
            let text = String::from_utf8_lossy(&out.log);
            let tail: Vec<&str> = text.lines().rev().take(20).collect();
            let why = if out.timed_out { "timed out".to_owned() } else { format!("exited with {:?}", out.exit_code) };
            return Err(ImageFailure::Build(format!(
                "setup {why}:\n{}",
                tail.into_iter().rev().collect::<Vec<_>>().join("\n")
            )));
        }
        // The source layer stays tagged: other instances of the same commit reuse it.
        Ok((tag, Some(out.log)))
    }
}
