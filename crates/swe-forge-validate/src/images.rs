//! The image layers of an instance: base (bootstrapped once) -> toolchain (Debian packages of
//! a toolchain plus a recipe's extras) -> source (the repository at the base commit, submodules
//! included at their pinned commits: a git repository with one commit, no remote, no history)
//! -> instance (setup commands run with network, then committed). Tags are derived from
//! everything that goes into a layer, so an existing tag is reused as is.

use std::collections::HashMap;

use sha2::{Digest, Sha256};
use swe_forge_docker::{BuildContext, DockerError, LABEL_ROLE, RunSpec};
use swe_forge_git::SourceRepo;

use crate::{Recipe, Toolchain, Validator};

/// Where the repository lives inside every instance image.
pub(crate) const REPO_DIR: &str = "/testbed";

pub(crate) fn sha256_hex(parts: &[&str]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p.as_bytes());
        h.update([0u8]);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

pub(crate) fn short_hash(parts: &[&str]) -> String {
    sha256_hex(parts)[..12].to_owned()
}

/// The toolchain with a recipe's extra packages and variables.
pub(crate) fn effective_toolchain(mut t: Toolchain, recipe: &Recipe) -> Toolchain {
    for p in &recipe.extra_packages {
        if !t.packages.contains(p) {
            t.packages.push(p.clone());
        }
    }
    t.env.extend(recipe.env.clone());
    t
}

/// Dockerfile of a toolchain image.
pub(crate) fn toolchain_dockerfile(base: &str, t: &Toolchain) -> String {
    let mut df = format!(
        "FROM {base}\nENV DEBIAN_FRONTEND=noninteractive\nRUN apt-get update \\\n && apt-get install -y --no-install-recommends {} \\\n && apt-get clean && rm -rf /var/lib/apt/lists/* /var/log/apt /var/log/dpkg.log /var/log/alternatives.log /var/cache/ldconfig/aux-cache\n",
        t.packages.join(" ")
    );
    for (k, v) in &t.env {
        df.push_str(&format!("ENV {k}={}\n", shell_quote(v)));
    }
    if !t.warm.is_empty() {
        df.push_str(&format!("RUN {}\n", t.warm.join(" \\\n && ")));
    }
    df
}

/// Dockerfile of the source layer of an instance.
pub(crate) fn source_dockerfile(toolchain: &str, sha: &str) -> String {
    format!(
        "FROM {toolchain}\nCOPY repo/ {REPO_DIR}/\nWORKDIR {REPO_DIR}\n\
RUN git -c init.defaultBranch=main init -q \\\n && git add -A \\\n && GIT_AUTHOR_DATE=2000-01-01T00:00:00Z GIT_COMMITTER_DATE=2000-01-01T00:00:00Z git -c user.name=swe-forge -c user.email=swe-forge@localhost commit -q --no-verify --allow-empty -m 'base {sha}' \\\n && git config user.name swe-forge && git config user.email swe-forge@localhost \\\n && git reflog expire --expire=now --all\n"
    )
}

/// Fails the setup step when the repository holds anything but the one base commit: a remote,
/// another ref, a tag, or more than one commit (agents have read answers out of git history).
pub(crate) const LEAK_CHECK: &str = r#"
cd /testbed
leak() { echo "swe-forge: future-leak check failed: $1"; exit 86; }
[ -z "$(git remote)" ] || leak "the repository has a remote: $(git remote | tr '\n' ' ')"
[ "$(git for-each-ref | wc -l)" = 1 ] || leak "refs besides the base branch: $(git for-each-ref --format='%(refname)' | tr '\n' ' ')"
[ "$(git rev-list --all | wc -l)" = 1 ] || leak "more than one commit is reachable"
[ -z "$(git stash list 2>/dev/null)" ] || leak "stash entries"
"#;

/// Exit code of the setup script when the leak check fails.
pub(crate) const LEAK_EXIT: i64 = 86;

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

/// A built instance image and what went into it.
pub(crate) struct InstanceImage {
    pub tag: String,
    pub toolchain_tag: String,
    pub toolchain_dockerfile: String,
    pub source_image_id: String,
    pub source_tag: String,
    pub setup_log: Option<Vec<u8>>,
}

impl Validator {
    pub(crate) async fn toolchain_image(&self, t: &Toolchain) -> Result<(String, String), DockerError> {
        let base = self.base_image().await?;
        let dockerfile = toolchain_dockerfile(&base, t);
        let tag = format!("swe-forge/toolchain-{}:{}", t.name, short_hash(&[&dockerfile]));
        let cell = self.once_cell(&tag);
        cell.get_or_try_init(|| async {
            if self.engine.image_id(&tag).await?.is_none() {
                self.reporter.note(&format!("building toolchain image {tag}"));
            }
            let labels = HashMap::from([
                (LABEL_ROLE.to_owned(), "toolchain".to_owned()),
                ("dev.swe-forge.toolchain".to_owned(), t.name.clone()),
            ]);
            let context = || BuildContext::new().finish(&dockerfile);
            self.engine.build_once(&tag, context, &labels, &mut |l| tracing::debug!(target: "build", "{l}")).await?;
            Ok(tag.clone())
        })
        .await
        .cloned()
        .map(|tag| (tag, dockerfile))
    }

    /// What the toolchain image says of its versions (run once per image).
    pub(crate) async fn toolchain_versions(&self, tag: &str, t: &Toolchain) -> String {
        let cell = self.once_cell(&format!("versions {tag}"));
        let got = cell
            .get_or_try_init(|| async {
                let out = self.engine.run(&RunSpec::new(tag, &t.version_command)).await?;
                Ok::<_, DockerError>(String::from_utf8_lossy(&out.log).trim().to_owned())
            })
            .await;
        got.cloned().unwrap_or_else(|e| format!("unknown ({e})"))
    }

    /// Builds (or finds) the instance image. With `rebuild`, both instance layers are built
    /// again from scratch (no build cache) under tags ending in `-rebuild`, to check that the
    /// image is reproducible.
    pub(crate) async fn instance_image(
        &self,
        repo: &SourceRepo,
        inst: &swe_forge_core::Instance,
        recipe: &Recipe,
        toolchain: &Toolchain,
        rebuild: bool,
    ) -> Result<InstanceImage, ImageFailure> {
        let (toolchain_tag, toolchain_dockerfile) =
            self.toolchain_image(toolchain).await.map_err(ImageFailure::Infra)?;
        let sha = &inst.base.sha;
        let tree = repo.commit(sha).map(|c| c.tree_id()).map_err(|e| ImageFailure::Build(e.to_string()))?;
        let source_df = source_dockerfile(&toolchain_tag, sha);
        let mut setup =
            format!("{}\nset -e\ncd {REPO_DIR}\n{}\n{LEAK_CHECK}", toolchain.setup_prelude, recipe.setup.join("\n"));
        if let Some(user) = &recipe.test_user {
            // The unprivileged test user owns the repository (and nothing else).
            setup.push_str(&format!(
                "\nid -u {user} >/dev/null 2>&1 || useradd --create-home --uid 1000 {user}\nchown -R {user}: {REPO_DIR}\nmkdir -p /swe-forge/results && chown -R {user}: /swe-forge\n"
            ));
        }
        // Submodules come from local copies; one without a copy changes the content (an empty
        // folder), so the tags say which are missing (nothing is added when none is).
        let root = &self.settings.repos_root;
        let missing = crate::submodules::missing_warnings(repo, sha, root, &inst.org).join("\n");
        let tree_key = if missing.is_empty() { tree.to_string() } else { format!("{tree}\n{missing}") };
        // The file times of the build context are part of the content (they changed once, from 0).
        let tree_key = format!("{tree_key}\nmtime {}", swe_forge_git::SOURCE_MTIME);
        let key = short_hash(&[&toolchain_tag, &tree_key, &source_df, &setup]);
        let name = format!("swe-forge/{}__{}", inst.org, inst.repo).to_lowercase();
        let suffix = if rebuild { "-rebuild" } else { "" };
        let tag = format!("{name}:pr-{}-{key}{suffix}", inst.number);
        let src_tag = format!("{name}:src-{}{suffix}", short_hash(&[&toolchain_tag, &tree_key, &source_df]));
        let labels = HashMap::from([
            (LABEL_ROLE.to_owned(), "instance".to_owned()),
            ("dev.swe-forge.instance".to_owned(), inst.instance_id.clone()),
            ("dev.swe-forge.base-sha".to_owned(), sha.clone()),
        ]);
        // Layer 1: the sources.
        let context = || {
            let mut ctx = BuildContext::new();
            repo.write_tree_tar_with_submodules(tree, "repo", ctx.tar(), root, &inst.org)
                .map_err(|e| DockerError::Io { what: e.to_string(), source: std::io::Error::other("tree export") })?;
            ctx.finish(&source_df)
        };
        let log_line = &mut |l: &str| tracing::debug!(target: "build", "{l}");
        let built = if rebuild {
            match context() {
                Ok(ctx) => self.engine.build_uncached(&src_tag, ctx, &labels, log_line).await,
                Err(e) => Err(e),
            }
        } else {
            self.engine.build_once(&src_tag, context, &labels, log_line).await
        };
        let source_image_id = match built {
            Ok(id) => id,
            Err(DockerError::BuildFailed { message, log_tail, .. }) => {
                return Err(ImageFailure::Build(format!("{message}\n{log_tail}")));
            }
            Err(e) => return Err(ImageFailure::Infra(e)),
        };
        let mut image = InstanceImage {
            tag: tag.clone(),
            toolchain_tag,
            toolchain_dockerfile,
            source_image_id,
            source_tag: src_tag.clone(),
            setup_log: None,
        };
        if !rebuild && self.engine.image_id(&tag).await.map_err(ImageFailure::Infra)?.is_some() {
            return Ok(image);
        }
        // Layer 2: setup with network (and the CA bundle, removed before the commit), then commit.
        let mut spec = RunSpec::new(&src_tag, setup);
        spec.network = true;
        spec.ca_bundle = self.settings.ca_bundle.clone();
        spec.timeout = self.settings.setup_timeout;
        spec.memory_bytes = self.settings.memory_bytes;
        spec.cpus = self.settings.cpus;
        let (out, committed) = self.engine.run_and_commit(&spec, &tag, &labels).await.map_err(ImageFailure::Infra)?;
        if committed.is_none() {
            let dir = self.settings.work_dir.join("logs").join(&inst.instance_id);
            let _ = std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(dir.join("setup.log"), &out.log));
            let text = String::from_utf8_lossy(&out.log);
            let tail: Vec<&str> = text.lines().rev().take(25).collect();
            let why = if out.timed_out {
                format!("timed out after {} s", self.settings.setup_timeout.as_secs())
            } else if out.exit_code == Some(LEAK_EXIT) {
                "left history in the repository".to_owned()
            } else {
                format!("exited with {:?}", out.exit_code)
            };
            return Err(ImageFailure::Build(format!(
                "setup {why}:\n{}",
                tail.into_iter().rev().collect::<Vec<_>>().join("\n")
            )));
        }
        image.setup_log = Some(out.log);
        Ok(image)
    }
}
