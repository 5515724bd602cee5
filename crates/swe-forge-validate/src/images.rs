//! The image layers of an instance: base (bootstrapped once) -> toolchain (Debian packages of
//! a toolchain plus a recipe's extras) -> repository environment, shared by the instances of a
//! repository: source (the repository at the environment commit, submodules included at their
//! pinned commits: a git repository with one commit, no remote, no history; a recipe's extra
//! sources as plain files at their own paths outside it) + setup (dependencies
//! fetched and the build warmed, with network, then committed) -> instance (only the files that
//! differ between the environment commit and the base commit, the repository's git rewritten to
//! one commit holding the base tree, the setup run again on top of the warm environment, and the
//! contract a harness runs it by: `/swe-forge/run-tests` and `/swe-forge/instance.json`). Tags
//! are derived from everything that goes into a layer, so an existing tag is reused as is.
//!
//! Details every layer keeps:
//! - A toolchain with a base suite of its own (`cfamily-bullseye`) stands on a base bootstrapped
//!   from that suite. A toolchain from outside Debian (a `fetch` template: Node from the npm
//!   registry) is its packages' image, shared by every version, plus the fetch run in a container
//!   with network and the CA bundle (deleted before the commit), tarballs checked against the
//!   registry's sha512 and removed, then committed.
//! - The instance layer's files are written with the time of writing, so make, cargo and Maven see
//!   them as newer than the environment's build products; paths the base lacks are removed; the
//!   repository's index is staged from the environment's plus the changed paths, so build products
//!   and untracked files never enter its one commit. At the environment commit itself the layer only
//!   runs the future-leak check. When the base's dependency fingerprint (`env.rs`) differs from the
//!   environment commit's, the recipe's `refresh` commands run before the setup (autotools: the
//!   environment's generated files removed), so the setup gives what a clean build gives.
//! - Every setup step sees `SWE_FORGE_COMMIT_TIME`, the committer time of the commit its layer holds,
//!   exported by its script (in the tag, never in the image config), so dependencies a repository
//!   does not lock resolve as of then, and `SWE_FORGE_REPO` (`org/repo`).
//! - When the environment does not build at an older commit it is built at the base (a warning on the
//!   record); a failed setup is remembered for the run.
//! - Environment and instance images carry `dev.swe-forge.role` and `dev.swe-forge.repository`:
//!   `swe-forge images prune --keep <records>` removes those no kept record names; toolchains and the
//!   base are never pruned.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use swe_forge_core::RunLogs;
use swe_forge_docker::{BuildContext, DockerError, LABEL_REPOSITORY, LABEL_ROLE, RunSpec};
use swe_forge_git::{SOURCE_MTIME, SourceRepo};
use swe_forge_recipes::{Recipe, Toolchain, sha256_hex, shell_quote, toolchain_dockerfile};
use tokio::sync::OnceCell;

use crate::phases::{INSTANCE_JSON, RUN_TESTS};
use crate::{ResolvedExtraSource, Validator};

/// How a request treats images that already exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BuildMode {
    /// An image whose tag exists is used as it is; a missing one is built once across jobs and
    /// processes.
    Reuse,
    /// Every layer above the toolchain is built again without the build cache, under tags ending
    /// in `-rebuild` (`images verify`: is the image reproducible?).
    FromScratch,
}

impl BuildMode {
    fn reuses(self) -> bool {
        self == BuildMode::Reuse
    }

    fn tag_suffix(self) -> &'static str {
        match self {
            BuildMode::Reuse => "",
            BuildMode::FromScratch => "-rebuild",
        }
    }
}

/// What one instance image is made of, and how to build it.
pub(crate) struct ImageRequest<'a> {
    pub repo: &'a SourceRepo,
    pub inst: &'a swe_forge_core::Instance,
    pub recipe: &'a Recipe,
    pub toolchain: &'a Toolchain,
    /// The commit its repository environment is wanted at (the base at worst).
    pub env_commit: &'a str,
    pub extras: &'a [ResolvedExtraSource],
    pub mode: BuildMode,
}

/// Where the repository lives inside every instance image.
pub(crate) const REPO_DIR: &str = "/testbed";

pub(crate) fn short_hash(parts: &[&str]) -> String {
    sha256_hex(parts)[..12].to_owned()
}

/// Dockerfile of the source layer of an instance. The label names the files' fixed time: Docker's
/// build cache ignores file times when it compares a COPY, so without a line of its own a tree
/// once copied with other times (0, before MRESOURCES-289 was known) would be reused as it was.
/// Extra sources come first, each from `extra/<i>/` of the context to its path (plain files, no
/// git); without any the Dockerfile is what it was before they existed, so are the tags.
pub(crate) fn source_dockerfile(toolchain: &str, sha: &str, extra_paths: &[&str]) -> String {
    let copy_extras: String =
        extra_paths.iter().enumerate().map(|(i, path)| format!("COPY extra/{i}/ {path}/\n")).collect();
    format!(
        "FROM {toolchain}\nLABEL dev.swe-forge.source-mtime={}\n{copy_extras}COPY repo/ {REPO_DIR}/\nWORKDIR {REPO_DIR}\n\
RUN git -c init.defaultBranch=main init -q \\\n && git add -A \\\n && GIT_AUTHOR_DATE=2000-01-01T00:00:00Z GIT_COMMITTER_DATE=2000-01-01T00:00:00Z git -c user.name=swe-forge -c user.email=swe-forge@localhost commit -q --no-verify --allow-empty -m 'base {sha}' \\\n && git config user.name swe-forge && git config user.email swe-forge@localhost \\\n && git reflog expire --expire=now --all\n",
        swe_forge_git::SOURCE_MTIME
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

/// Lets root run git in the repository whatever its owner (a recipe's test user owns it).
const GIT_SAFE: &str = "export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=safe.directory GIT_CONFIG_VALUE_0=/testbed";

/// Where the instance layer's change set is copied into its container (deleted before the commit).
const CHANGE_DIR: &str = "/run/swe-forge-instance";

/// Brings a copy of the environment's repository to the base commit: removes every path that
/// differs, removes folders the base no longer has (when empty), writes the changed files (with
/// the time of writing, not the tree's fixed time: they must look newer than the environment's
/// build products to make, cargo and Maven, or those keep the environment commit's outputs), then
/// rewrites git so that it holds one commit, the base tree, exactly as the source layer makes it
/// (same author, dates and message), and nothing of the environment commit is left reachable or
/// loose. Build products and other untracked files are never staged.
fn rewrite_script(base_sha: &str) -> String {
    format!(
        r#"d={CHANGE_DIR}
cd {REPO_DIR}
xargs -0 -r rm -rf -- < $d/paths
xargs -0 -r rmdir --ignore-fail-on-non-empty -- < $d/gone-dirs 2>/dev/null || true
tar -xmf $d/change.tar -C /
export GIT_LITERAL_PATHSPECS=1
if [ -s $d/paths ]; then git rm -r -q --cached --ignore-unmatch --pathspec-from-file=$d/paths --pathspec-file-nul; fi
if [ -s $d/written ]; then git add -f --pathspec-from-file=$d/written --pathspec-file-nul; fi
unset GIT_LITERAL_PATHSPECS
tree=$(git write-tree)
commit=$(GIT_AUTHOR_NAME=swe-forge GIT_AUTHOR_EMAIL=swe-forge@localhost GIT_COMMITTER_NAME=swe-forge GIT_COMMITTER_EMAIL=swe-forge@localhost GIT_AUTHOR_DATE=2000-01-01T00:00:00Z GIT_COMMITTER_DATE=2000-01-01T00:00:00Z git commit-tree "$tree" -m 'base {base_sha}')
git update-ref refs/heads/main "$commit"
git reflog expire --expire=now --all
git prune --expire=now
rm -rf $d
"#
    )
}

/// Exit code of the setup script when the leak check fails.
pub(crate) const LEAK_EXIT: i64 = 86;

impl Validator {
    /// What one container of the instance image tells once its setup ran: the sha256 of the
    /// lockfiles and build files (the names `detect` records) at the repository's root, so that
    /// what the setup resolved is pinned too, and the notes the setup wrote of what it had to do
    /// ([`swe_forge_recipes::SETUP_NOTES`], a recipe's fallback). Empty when the image cannot be
    /// run (the record's other fields say why).
    pub(crate) async fn image_facts(&self, tag: &str) -> (BTreeMap<String, String>, Vec<String>) {
        let names: Vec<String> = swe_forge_recipes::LOCKFILES.iter().map(|f| shell_quote(f)).collect();
        let notes = swe_forge_recipes::SETUP_NOTES;
        let script = format!(
            "cat {notes} 2>/dev/null | sed 's/^/note /'; cd {REPO_DIR} && for f in {}; do if [ -f \"$f\" ]; then sha256sum \"$f\"; fi; done",
            names.join(" ")
        );
        let Ok(out) = self.engine.run(&RunSpec::new(tag, &script)).await else {
            return (BTreeMap::new(), Vec::new());
        };
        let log = String::from_utf8_lossy(&out.log);
        let notes =
            log.lines().filter_map(|l| l.strip_prefix("note ")).map(|l| l.chars().take(400).collect()).collect();
        (parse_sha256sums(&log), notes)
    }

    /// The toolchain image of `t`, built once, and what it is made of (the Dockerfile, then the
    /// fetch script of a toolchain from outside Debian).
    pub(crate) async fn toolchain_image(&self, t: &Toolchain) -> Result<(String, String), DockerError> {
        let base = self.base_image(t.base_suite.as_deref()).await?;
        let dockerfile = toolchain_dockerfile(&base, t);
        if t.fetch.is_empty() {
            let tag = format!("swe-forge/toolchain-{}:{}", t.name, short_hash(&[&dockerfile]));
            self.build_toolchain(&tag, &dockerfile, &t.name).await?;
            return Ok((tag, dockerfile));
        }
        // The packages (shared by every version of the template), then the fetch, committed.
        let packages = format!("swe-forge/toolchain-packages:{}", short_hash(&[&dockerfile]));
        self.build_toolchain(&packages, &dockerfile, "packages").await?;
        let script = fetch_script(t);
        let made_of = format!("{dockerfile}# then, with network, committed:\n{script}");
        let tag = format!("swe-forge/toolchain-{}:{}", t.name, short_hash(&[&dockerfile, &script]));
        let cell = self.once_cell(&tag);
        cell.get_or_try_init(|| async {
            let _lock = self.engine.lock_image(&tag).await?;
            if self.engine.image_id(&tag).await?.is_some() {
                return Ok(tag.clone());
            }
            self.reporter.note(&format!("building toolchain image {tag}"));
            let labels = HashMap::from([
                (LABEL_ROLE.to_owned(), "toolchain".to_owned()),
                ("dev.swe-forge.toolchain".to_owned(), t.name.clone()),
            ]);
            let mut run = RunSpec::new(&packages, &script);
            run.network = true;
            run.ca_bundle = self.settings.ca_bundle.clone();
            run.timeout = self.settings.setup_timeout;
            let (out, committed) = self.engine.run_and_commit(&run, &tag, &labels).await?;
            match committed {
                Some(_) => Ok(tag.clone()),
                None => Err(DockerError::BuildFailed {
                    tag: tag.clone(),
                    message: format!(
                        "fetching toolchain {} failed (exit {:?}); a registry this machine cannot reach, or a changed tarball",
                        t.name, out.exit_code
                    ),
                    log_tail: tail_lines(&out.log, 20),
                }),
            }
        })
        .await
        .cloned()
        .map(|tag| (tag, made_of))
    }

    async fn build_toolchain(&self, tag: &str, dockerfile: &str, name: &str) -> Result<(), DockerError> {
        let cell = self.once_cell(tag);
        cell.get_or_try_init(|| async {
            if self.engine.image_id(tag).await?.is_none() {
                self.reporter.note(&format!("building toolchain image {tag}"));
            }
            let labels = HashMap::from([
                (LABEL_ROLE.to_owned(), "toolchain".to_owned()),
                ("dev.swe-forge.toolchain".to_owned(), name.to_owned()),
            ]);
            let context = || BuildContext::new().finish(dockerfile);
            self.engine.build_once(tag, context, &labels, &mut |l| tracing::debug!(target: "build", "{l}")).await?;
            Ok::<_, DockerError>(tag.to_owned())
        })
        .await?;
        Ok(())
    }

    /// What the toolchain image says of its versions (run once per image).
    pub(crate) async fn toolchain_versions(&self, tag: &str, t: &Toolchain) -> String {
        let cell = self.once_cell(&format!("versions {tag}"));
        let got = cell
            .get_or_try_init(|| async {
                let out = self.engine.run(&RunSpec::new(tag, version_script(t))).await?;
                Ok::<_, DockerError>(String::from_utf8_lossy(&out.log).trim().to_owned())
            })
            .await;
        got.cloned().unwrap_or_else(|e| format!("unknown ({e})"))
    }
}

/// The fetch script of a template toolchain: its version's variables exported, then the script.
pub(crate) fn fetch_script(t: &Toolchain) -> String {
    let mut s: String = t.vars.iter().map(|(k, v)| format!("export {k}={}\n", shell_quote(v))).collect();
    s.push_str(&t.fetch);
    s
}

/// The last `n` lines of a log.
fn tail_lines(log: &[u8], n: usize) -> String {
    let text = String::from_utf8_lossy(log);
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// The toolchain's version command, then the exact version of every package taken from another
/// suite (`name/suite`): such a suite moves, and the package name alone does not say what ran;
/// and of every package installed because the project's CI asked for it.
pub(crate) fn version_script(t: &Toolchain) -> String {
    let from_suites: Vec<&str> = t.packages.iter().filter_map(|p| p.split_once('/').map(|(name, _)| name)).collect();
    let mut lines: Vec<String> = Vec::new();
    if !t.version_command.trim().is_empty() {
        lines.push(t.version_command.clone());
    }
    if !from_suites.is_empty() {
        lines.push(format!("dpkg-query -W -f='${{Package}} ${{Version}}\\n' {}", from_suites.join(" ")));
    }
    if !t.ci_packages.is_empty() {
        lines.push(format!(
            "dpkg-query -W -f='${{Package}} ${{Version}}\\n' $(cat {}) 2>/dev/null; true",
            swe_forge_recipes::CI_PACKAGES_FILE
        ));
    }
    if lines.is_empty() { t.version_command.clone() } else { lines.join("\n") }
}

/// Why an instance image could not be made.
pub(crate) enum ImageFailure {
    /// Building or setting up failed for reasons of the repository or recipe.
    Build(String),
    /// The engine failed.
    Infra(DockerError),
}

impl From<swe_forge_git::GitError> for ImageFailure {
    fn from(e: swe_forge_git::GitError) -> Self {
        ImageFailure::Build(e.to_string())
    }
}

/// A built instance image and what went into it.
pub(crate) struct InstanceImage {
    pub tag: String,
    pub toolchain_tag: String,
    pub toolchain_dockerfile: String,
    /// The environment's source layer.
    pub source_image_id: String,
    pub source_tag: String,
    pub env: EnvImage,
    /// The dependency fingerprint of the base (`env.rs`), and of the environment's commit.
    pub fingerprint: String,
    pub env_fingerprint: String,
    /// Log of the instance layer's setup, when it was built now.
    pub setup_log: Option<Vec<u8>>,
    /// Milliseconds building the instance layer took, when it was built now.
    pub build_ms: Option<u64>,
    pub warnings: Vec<String>,
}

/// A repository environment image.
#[derive(Debug, Clone)]
pub(crate) struct EnvImage {
    pub tag: String,
    pub id: String,
    pub commit: String,
    pub source_tag: String,
    pub source_image_id: String,
    /// Milliseconds building it took (source layer, setup, commit), when this process built it.
    pub build_ms: Option<u64>,
}

/// A repository environment built once per run: the image, or why its setup failed.
pub(crate) type EnvCell = Arc<OnceCell<Result<EnvImage, String>>>;

/// Everything that decides a repository environment image, before it is built.
struct EnvSpec {
    commit: String,
    source_df: String,
    src_tag: String,
    tag: String,
    /// The setup script, run on the source layer.
    setup: String,
}

/// The variable every setup step sees: the committer time of the commit whose tree its layer
/// holds (RFC 3339, UTC), for tools that resolve dependencies as of a date (`npm install
/// --before`, `cargo generate-lockfile --publish-time`). Exported by the setup script itself, so
/// it never reaches the committed image's configuration; it is part of the script, so of the tag.
pub const COMMIT_TIME_VAR: &str = "SWE_FORGE_COMMIT_TIME";

/// The variable every setup step sees: the instance's repository as `org/repo`, for recipes that
/// need its name (a Go module path for code written before go.mod).
pub const REPO_VAR: &str = "SWE_FORGE_REPO";

/// The committer time of `sha` (UTC, RFC 3339).
fn commit_time(repo: &SourceRepo, sha: &str) -> Result<String, ImageFailure> {
    Ok(swe_forge_core::rfc3339_utc(repo.commit(sha)?.time().seconds()))
}

/// The setup script of a recipe for the tree of a commit made at `commit_time` in repository
/// `org_repo`: the commit's time and the repository exported, prelude, commands, leak check, the
/// test user made owner.
fn setup_script(
    toolchain: &Toolchain,
    recipe: &Recipe,
    whole_tree_chown: bool,
    commit_time: &str,
    org_repo: &str,
) -> String {
    let mut setup = format!(
        "export {COMMIT_TIME_VAR}={commit_time} {REPO_VAR}={}\n{}\nset -e\ncd {REPO_DIR}\n{}\n{LEAK_CHECK}",
        shell_quote(org_repo),
        toolchain.setup_prelude,
        recipe.setup.join("\n")
    );
    if let Some(user) = recipe.test_user.as_deref().map(shell_quote) {
        // The unprivileged test user owns the repository (and nothing else). On top of an
        // environment only files it does not own yet change (a chown copies a file into the layer).
        let chown = if whole_tree_chown {
            format!("chown -R {user}: {REPO_DIR}")
        } else {
            format!("find {REPO_DIR} ! -user {user} -exec chown -h {user}: {{}} +")
        };
        setup.push_str(&format!(
            "\nid -u {user} >/dev/null 2>&1 || useradd --create-home --uid 1000 {user}\n{chown}\nmkdir -p /swe-forge/results && chown -R {user}: /swe-forge\n"
        ));
    }
    setup
}

/// Why a setup step failed, with the end of its log.
fn setup_failure(out: &swe_forge_docker::RunOutput, timeout: std::time::Duration) -> String {
    let text = String::from_utf8_lossy(&out.log);
    let tail: Vec<&str> = text.lines().rev().take(25).collect();
    let why = if out.timed_out {
        format!("timed out after {} s", timeout.as_secs())
    } else if out.exit_code == Some(LEAK_EXIT) {
        "left history in the repository".to_owned()
    } else {
        format!("exited with {:?}", out.exit_code)
    };
    let tail = tail.into_iter().rev().collect::<Vec<_>>().join("\n");
    let mut text = format!("setup {why}:\n{tail}");
    // A line naming the toolchain's version (above the tail), for the search of another version.
    if let Some(sign) = swe_forge_recipes::classify_failure(&text)
        .is_none()
        .then(|| swe_forge_recipes::classify_failure(&String::from_utf8_lossy(&out.log)))
        .flatten()
    {
        text.push_str(&format!("\nearlier in the log: {}", sign.line));
    }
    if let Some(hint) = crate::faults::tls_hint(&out.log) {
        text.push('\n');
        text.push_str(hint);
    }
    text
}

/// A failed setup step: the machine's fault (infrastructure, retried) when its log shows that a
/// public registry could not be reached, the repository's (`image_build_failed`) otherwise.
fn setup_error(tag: &str, why: String, out: &swe_forge_docker::RunOutput) -> ImageFailure {
    match crate::faults::unreachable_registry(&out.log) {
        Some(host) => ImageFailure::Infra(DockerError::EngineLost {
            tag: tag.to_owned(),
            message: format!(
                "setup could not reach {host}: this machine's network or DNS failed, not the repository ({})",
                why.lines().next().unwrap_or_default()
            ),
        }),
        None => ImageFailure::Build(why),
    }
}

fn nul_list(items: &[String]) -> Vec<u8> {
    items.iter().flat_map(|p| p.bytes().chain([0])).collect()
}

impl Validator {
    fn env_cell(&self, key: &str) -> EnvCell {
        self.env_cells.lock().unwrap_or_else(|e| e.into_inner()).entry(key.to_owned()).or_default().clone()
    }

    /// What goes into the source layer of a tree: the tree, the submodules without a local copy
    /// (an empty folder changes the content) and the file times of the build context.
    fn tree_key(&self, repo: &SourceRepo, sha: &str, org: &str) -> Result<String, ImageFailure> {
        let tree = repo.commit(sha)?.tree_id();
        let missing = crate::submodules::missing_warnings(repo, sha, &self.settings.repos_root, org).join("\n");
        let key = if missing.is_empty() { tree.to_string() } else { format!("{tree}\n{missing}") };
        Ok(format!("{key}\nmtime {SOURCE_MTIME}"))
    }

    /// The repository environment of `req` at `commit`, on the toolchain image `toolchain_tag`.
    fn env_spec(&self, req: &ImageRequest<'_>, toolchain_tag: &str, commit: &str) -> Result<EnvSpec, ImageFailure> {
        let ImageRequest { repo, inst, recipe, toolchain, extras, .. } = *req;
        let suffix = req.mode.tag_suffix();
        let name = format!("swe-forge/{}__{}", inst.org, inst.repo).to_lowercase();
        let mut tree_key = self.tree_key(repo, commit, &inst.org)?;
        for x in extras {
            tree_key.push('\n');
            tree_key.push_str(&x.key());
        }
        let paths: Vec<&str> = extras.iter().map(|x| x.source.path.as_str()).collect();
        let source_df = source_dockerfile(toolchain_tag, commit, &paths);
        let org_repo = format!("{}/{}", inst.org, inst.repo);
        let setup = setup_script(toolchain, recipe, true, &commit_time(repo, commit)?, &org_repo);
        let src_tag = format!("{name}:src-{}{suffix}", short_hash(&[toolchain_tag, &tree_key, &source_df]));
        let tag = format!("{name}:env-{}{suffix}", short_hash(&[toolchain_tag, &tree_key, &source_df, &setup]));
        Ok(EnvSpec { commit: commit.to_owned(), source_df, src_tag, tag, setup })
    }

    /// The repository environment `spec` describes, built once per tag (by this process and
    /// others); a setup that fails is remembered for the rest of the run.
    async fn env_image(&self, req: &ImageRequest<'_>, spec: &EnvSpec) -> Result<EnvImage, ImageFailure> {
        if !req.mode.reuses() {
            return self.build_env(req, spec).await;
        }
        let cell = self.env_cell(&spec.tag);
        let got = cell
            .get_or_try_init(|| async {
                match self.build_env(req, spec).await {
                    Ok(env) => Ok(Ok(env)),
                    Err(ImageFailure::Build(why)) => Ok(Err(why)),
                    Err(ImageFailure::Infra(e)) => Err(e),
                }
            })
            .await;
        match got {
            Ok(Ok(env)) => Ok(env.clone()),
            Ok(Err(why)) => Err(ImageFailure::Build(why.clone())),
            Err(e) => Err(ImageFailure::Infra(e)),
        }
    }

    async fn build_env(&self, req: &ImageRequest<'_>, spec: &EnvSpec) -> Result<EnvImage, ImageFailure> {
        let ImageRequest { repo, inst, extras, .. } = *req;
        let rebuild = !req.mode.reuses();
        let infra = ImageFailure::Infra;
        let _lock = if rebuild { None } else { Some(self.engine.lock_image(&spec.tag).await.map_err(infra)?) };
        let started = std::time::Instant::now();
        let found = |id: String, source_image_id: String, build_ms: Option<u64>| EnvImage {
            tag: spec.tag.clone(),
            id,
            commit: spec.commit.clone(),
            source_tag: spec.src_tag.clone(),
            source_image_id,
            build_ms,
        };
        if !rebuild && let Some(id) = self.engine.image_id(&spec.tag).await.map_err(infra)? {
            let src = self.engine.image_id(&spec.src_tag).await.map_err(infra)?.unwrap_or_default();
            return Ok(found(id, src, None));
        }
        let labels = HashMap::from([
            (LABEL_ROLE.to_owned(), "environment".to_owned()),
            (LABEL_REPOSITORY.to_owned(), format!("{}/{}", inst.org, inst.repo)),
            ("dev.swe-forge.env-commit".to_owned(), spec.commit.clone()),
        ]);
        // Layer 1: the sources at the environment commit, and the extra sources beside them.
        let root = &self.settings.repos_root;
        let tree = repo.commit(&spec.commit)?.tree_id();
        let mut extra_trees = Vec::new();
        for x in extras {
            extra_trees.push(x.repo.commit(&x.sha)?.tree_id());
        }
        let context = || {
            let mut ctx = BuildContext::new();
            let export_err = |e: swe_forge_git::GitError| DockerError::Io {
                what: e.to_string(),
                source: std::io::Error::other("tree export"),
            };
            repo.write_tree_tar_with_submodules(tree, "repo", ctx.tar(), root, &inst.org).map_err(export_err)?;
            for (i, (x, t)) in extras.iter().zip(&extra_trees).enumerate() {
                x.repo.write_tree_tar_present(*t, &format!("extra/{i}"), ctx.tar()).map_err(export_err)?;
            }
            ctx.finish(&spec.source_df)
        };
        let log_line = &mut |l: &str| tracing::debug!(target: "build", "{l}");
        let built = if rebuild {
            match context() {
                Ok(ctx) => self.engine.build_uncached(&spec.src_tag, ctx, &labels, log_line).await,
                Err(e) => Err(e),
            }
        } else {
            self.engine.build_once(&spec.src_tag, context, &labels, log_line).await
        };
        let source_image_id = match built {
            Ok(id) => id,
            Err(DockerError::BuildFailed { message, log_tail, .. }) => {
                return Err(ImageFailure::Build(format!("{message}\n{log_tail}")));
            }
            Err(e) => return Err(ImageFailure::Infra(e)),
        };
        // Layer 2: setup with network (and the CA bundle, removed before the commit), then commit.
        self.reporter.note(&format!("building repository environment {} at {}", spec.tag, &spec.commit[..12]));
        let mut run = RunSpec::new(&spec.src_tag, &spec.setup);
        run.network = true;
        run.ca_bundle = self.settings.ca_bundle.clone();
        run.timeout = self.settings.setup_timeout;
        run.memory_bytes = self.settings.memory_bytes;
        run.cpus = self.settings.cpus;
        let (out, committed) = self.engine.run_and_commit(&run, &spec.tag, &labels).await.map_err(infra)?;
        // The log goes with the instance that built the environment.
        crate::grading::parsed::write_log(
            &RunLogs::new(&self.settings.work_dir, &inst.instance_id),
            "env-setup",
            &out.log,
        );
        match committed {
            Some(id) => Ok(found(id, source_image_id, Some(started.elapsed().as_millis() as u64))),
            None => Err(setup_error(
                &spec.tag,
                format!(
                    "repository environment at {}: {}",
                    spec.commit,
                    setup_failure(&out, self.settings.setup_timeout)
                ),
                &out,
            )),
        }
    }

    /// Builds (or finds) the instance image: the repository environment at `env_commit` (the
    /// base at worst: when the environment does not build at an older commit, it is built at the
    /// base), then the instance layer, as `req.mode` says ([`BuildMode`]).
    pub(crate) async fn instance_image(&self, req: &ImageRequest<'_>) -> Result<InstanceImage, ImageFailure> {
        let ImageRequest { repo, inst, recipe, toolchain, env_commit, .. } = *req;
        let rebuild = !req.mode.reuses();
        let (toolchain_tag, toolchain_dockerfile) =
            self.toolchain_image(toolchain).await.map_err(ImageFailure::Infra)?;
        let base = repo.commit(&inst.base.sha)?.id().to_string();
        let env_commit = match repo.commit(env_commit) {
            Ok(c) if repo.contains(&base, &c.id().to_string()) => c.id().to_string(),
            _ => base.clone(),
        };
        let name = format!("swe-forge/{}__{}", inst.org, inst.repo).to_lowercase();
        let suffix = req.mode.tag_suffix();
        let mut warnings = Vec::new();
        let spec = self.env_spec(req, &toolchain_tag, &env_commit)?;
        let env = match self.env_image(req, &spec).await {
            Err(ImageFailure::Build(why)) if env_commit != base => {
                warnings.push(format!(
                    "the repository environment did not build at {env_commit}; built at the base commit instead: {}",
                    why.lines().take(3).collect::<Vec<_>>().join(" / ")
                ));
                let spec = self.env_spec(req, &toolchain_tag, &base)?;
                self.env_image(req, &spec).await?
            }
            other => other?,
        };
        let base_key = self.tree_key(repo, &base, &inst.org)?;
        let fingerprint = swe_forge_recipes::fingerprint(repo, &base, &recipe.fingerprint);
        let env_fingerprint = swe_forge_recipes::fingerprint(repo, &env.commit, &recipe.fingerprint);
        // Layer 3: the instance. The same commit as the environment needs nothing but the checks.
        let same = env.commit == base;
        // The contract any harness runs the instance by (schemas/instance-image.md), outside
        // the repository; its text goes into the tag with the script's.
        let run_tests = crate::phases::run_tests_script(recipe);
        let instance_json = crate::phases::instance_json(inst, recipe);
        let (mut script, mut files) = self.layer_script(req, &base, &env.commit, fingerprint == env_fingerprint)?;
        let prefetching = add_prefetch(req, &base, &mut script, &mut files)?;
        files.push((RUN_TESTS.to_owned(), run_tests.clone().into_bytes()));
        files.push((INSTANCE_JSON.to_owned(), instance_json.clone().into_bytes()));
        let key = short_hash(&[&env.tag, &base_key, &script, &run_tests, &instance_json]);
        let tag = format!("{name}:pr-{}-{key}{suffix}", inst.number);
        let mut image = InstanceImage {
            tag: tag.clone(),
            toolchain_tag,
            toolchain_dockerfile,
            source_image_id: env.source_image_id.clone(),
            source_tag: env.source_tag.clone(),
            env,
            fingerprint,
            env_fingerprint,
            setup_log: None,
            build_ms: None,
            warnings,
        };
        if !rebuild && self.engine.image_id(&tag).await.map_err(ImageFailure::Infra)?.is_some() {
            return Ok(image);
        }
        // Another process may be making the same layer: one commits it, the other waits and finds
        // it (two commits to one tag would leave the first as a dangling image).
        let _lock = if rebuild { None } else { Some(self.engine.lock_image(&tag).await.map_err(ImageFailure::Infra)?) };
        if !rebuild && self.engine.image_id(&tag).await.map_err(ImageFailure::Infra)?.is_some() {
            return Ok(image);
        }
        let labels = HashMap::from([
            (LABEL_ROLE.to_owned(), "instance".to_owned()),
            ("dev.swe-forge.instance".to_owned(), inst.instance_id.clone()),
            ("dev.swe-forge.base-sha".to_owned(), base.clone()),
            ("dev.swe-forge.env-commit".to_owned(), image.env.commit.clone()),
        ]);
        // Setup with network (and the CA bundle, removed before the commit), then commit.
        let mut spec = RunSpec::new(&image.env.tag, script);
        spec.files = files;
        spec.network = !same || prefetching;
        spec.ca_bundle = self.settings.ca_bundle.clone();
        spec.timeout = self.settings.setup_timeout;
        spec.memory_bytes = self.settings.memory_bytes;
        spec.cpus = self.settings.cpus;
        let started = std::time::Instant::now();
        let (out, committed) = self.engine.run_and_commit(&spec, &tag, &labels).await.map_err(ImageFailure::Infra)?;
        if committed.is_none() {
            crate::grading::parsed::write_log(
                &RunLogs::new(&self.settings.work_dir, &inst.instance_id),
                "setup",
                &out.log,
            );
            return Err(setup_error(&tag, setup_failure(&out, self.settings.setup_timeout), &out));
        }
        image.setup_log = Some(out.log);
        image.build_ms = Some(started.elapsed().as_millis() as u64);
        Ok(image)
    }

    /// The instance layer's setup over the environment made at `env_commit`: the files it adds
    /// and its script. At another commit than `base`, the tree's change to the base and the setup
    /// (only the instance's own build when `same_build_files`); at the base, the checks alone.
    fn layer_script(
        &self,
        req: &ImageRequest<'_>,
        base: &str,
        env_commit: &str,
        same_build_files: bool,
    ) -> Result<(String, Vec<LayerFile>), ImageFailure> {
        let ImageRequest { repo, inst, recipe, toolchain, .. } = *req;
        let mut script = format!("set -e\n{GIT_SAFE}\nchmod 0755 {RUN_TESTS}\n");
        let mut files = Vec::new();
        if env_commit != base {
            let root = &self.settings.repos_root;
            let env_tree = repo.commit(env_commit)?.tree_id();
            let base_tree = repo.commit(base)?.tree_id();
            let prefix = REPO_DIR.trim_start_matches('/');
            let (tar, change) = repo.tree_change_tar(env_tree, base_tree, prefix, root, &inst.org)?;
            let missing: Vec<&str> = change.missing.iter().map(|s| s.path.as_str()).collect();
            let written: Vec<String> =
                change.written.iter().filter(|p| !missing.contains(&p.as_str())).cloned().collect();
            files = vec![
                (format!("{CHANGE_DIR}/change.tar"), tar),
                (format!("{CHANGE_DIR}/paths"), nul_list(&change.paths)),
                (format!("{CHANGE_DIR}/gone-dirs"), nul_list(&change.gone_dirs)),
                (format!("{CHANGE_DIR}/written"), nul_list(&written)),
            ];
            script.push_str(&rewrite_script(base));
            if !same_build_files && !recipe.refresh.is_empty() {
                // The environment was made from other build files: what a clean build would not
                // find goes first (the recipe's refresh), then the setup as on a clean tree.
                script.push_str(&format!("cd {REPO_DIR}\n{}\n", recipe.refresh.join("\n")));
            }
            let org_repo = format!("{}/{}", inst.org, inst.repo);
            let time = commit_time(repo, base)?;
            if same_build_files && !recipe.layer_setup.is_empty() {
                // The environment's dependencies are the instance's: only its own code is built.
                let layer = Recipe { setup: recipe.layer_setup.clone(), ..recipe.clone() };
                script.push_str(&setup_script(toolchain, &layer, false, &time, &org_repo));
            } else {
                script.push_str(&setup_script(toolchain, recipe, false, &time, &org_repo));
            }
        } else {
            script.push_str(&format!("cd {REPO_DIR}\n{LEAK_CHECK}"));
            if let Some(user) = recipe.test_user.as_deref().map(shell_quote) {
                script.push_str(&format!("find {REPO_DIR} ! -user {user} -exec chown -h {user}: {{}} +\n"));
            }
        }
        Ok((script, files))
    }
}

/// Where the manifests as the patches leave them are put for the prefetch (deleted before the
/// commit), under `new/`; the base's go under `keep/` while it runs.
const PREFETCH_DIR: &str = "/run/swe-forge-prefetch";

/// Adds to an instance layer's `script` and `files` the fetch of the dependencies the patches'
/// manifests name ([`Recipe::prefetch`]), when the patches change a file the recipe's
/// fingerprint matches; whether they did (the layer then needs the network). The contents go
/// into the script as hashes, so the layer's tag changes with them.
fn add_prefetch(
    req: &ImageRequest<'_>,
    base: &str,
    script: &mut String,
    files: &mut Vec<LayerFile>,
) -> Result<bool, ImageFailure> {
    let ImageRequest { repo, inst, recipe, toolchain, .. } = *req;
    if recipe.prefetch.is_empty() || recipe.fingerprint.is_empty() {
        return Ok(false);
    }
    // The patch's registry and toolchain configuration is never in place during the fetch: the
    // base's stays.
    let wanted = |p: &str| {
        swe_forge_recipes::fingerprint_matches(&recipe.fingerprint, p) && swe_forge_recipes::prefetch_puts_in_place(p)
    };
    let manifests = swe_forge_git::patched_files(repo, base, &[&inst.test_patch, &inst.fix_patch], &wanted)?;
    if manifests.is_empty() {
        return Ok(false);
    }
    let org_repo = format!("{}/{}", inst.org, inst.repo);
    script.push_str(&prefetch_script(recipe, toolchain, &manifests, &commit_time(repo, base)?, &org_repo));
    files.extend(
        manifests.into_iter().filter_map(|(p, content)| content.map(|c| (format!("{PREFETCH_DIR}/new/{p}"), c))),
    );
    Ok(true)
}

/// The prefetch's script: each manifest as the patches leave it in place of the base's, the
/// recipe's prefetch commands (a failure is noted, not fatal: the runs then show what is
/// missing), every manifest put back as at the base and any file the commands left in the tree
/// that git does not ignore removed, a setup note either way. A tracked file the commands changed
/// (code that ran during the fetch, with the network) fails the layer.
fn prefetch_script(
    recipe: &Recipe,
    toolchain: &Toolchain,
    manifests: &[swe_forge_git::PatchedFile],
    commit_time: &str,
    org_repo: &str,
) -> String {
    let d = PREFETCH_DIR;
    let names: Vec<&str> = manifests.iter().map(|(p, _)| p.as_str()).collect();
    let list = names.join(", ");
    let mut s = format!(
        "cd {REPO_DIR}\nexport {COMMIT_TIME_VAR}={commit_time} {REPO_VAR}={}\n{}\nset -e\n\
         mkdir -p {d}\ngit ls-files -z --others --exclude-standard > {d}/untracked-before\n\
         git diff --binary HEAD | sha256sum > {d}/tracked-before\n",
        shell_quote(org_repo),
        toolchain.setup_prelude
    );
    for (p, content) in manifests {
        let q = shell_quote(p);
        let hash =
            content.as_deref().map_or_else(|| "deleted".to_owned(), |c| sha256_hex(&[&String::from_utf8_lossy(c)]));
        s.push_str(&format!(
            "# {p} as patched: {hash}\nmkdir -p \"$(dirname {d}/keep/{q})\"\n\
             if [ -e {q} ]; then cp -p {q} {d}/keep/{q}; fi\n\
             if [ -e {d}/new/{q} ]; then mkdir -p \"$(dirname {q})\"; cp {d}/new/{q} {q}; else rm -f {q}; fi\n"
        ));
    }
    s.push_str(&format!(
        "echo {}\nset +e\n(\nset -e\n{}\n)\nrc=$?\nset -e\n",
        shell_quote(&format!("swe-forge: the patches change {list}: fetching the dependencies they name")),
        recipe.prefetch.join("\n")
    ));
    for p in &names {
        let q = shell_quote(p);
        s.push_str(&format!("if [ -e {d}/keep/{q} ]; then cp -p {d}/keep/{q} {q}; else rm -f {q}; fi\n"));
    }
    let fetched = format!(
        "the patches change {list}: the dependencies they name were fetched into the image (the files are the base's)"
    );
    let failed =
        format!("the patches change {list}: fetching the dependencies they name failed; the runs have the base's");
    s.push_str(&format!(
        "git ls-files -z --others --exclude-standard | sort -z | comm -z -13 <(sort -z {d}/untracked-before) - | xargs -0 -r rm -f --\n\
         git diff --quiet -- {paths} || {{ echo 'swe-forge: the manifests differ from the base after the prefetch'; exit 1; }}\n\
         if [ \"$(git diff --binary HEAD | sha256sum)\" != \"$(cat {d}/tracked-before)\" ]; then \
         echo 'swe-forge: the prefetch changed files of the repository:'; git diff --stat HEAD | tail -20; exit 1; fi\n\
         rm -rf {d}\nmkdir -p \"$(dirname {notes})\"\n\
         if [ \"$rc\" -eq 0 ]; then echo {fetched} >> {notes}; else echo {failed} | tee -a {notes}; fi\n",
        paths = names.iter().map(|p| shell_quote(p)).collect::<Vec<_>>().join(" "),
        notes = swe_forge_recipes::SETUP_NOTES,
        fetched = shell_quote(&fetched),
        failed = shell_quote(&failed),
    ));
    if let Some(user) = recipe.test_user.as_deref().map(shell_quote) {
        s.push_str(&format!("find {REPO_DIR} ! -user {user} -exec chown -h {user}: {{}} +\n"));
    }
    s
}

/// A file put into a container before its script runs: path and bytes.
type LayerFile = (String, Vec<u8>);

/// `sha256sum` output lines (`<hex>  <path>`) as path -> hex; other lines are left out.
fn parse_sha256sums(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|l| {
            let (hash, path) = l.split_once("  ")?;
            (hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_hexdigit()))
                .then(|| (path.to_owned(), hash.to_owned()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{parse_sha256sums, prefetch_script, source_dockerfile, version_script};
    use swe_forge_recipes::{Recipe, Toolchain};

    /// The prefetch puts the patched manifests in place, runs the recipe's commands, puts the
    /// base's back (a file the patches add is removed), removes what the commands left that git
    /// does not ignore, and notes what happened; run here by bash on a real git tree.
    #[test]
    fn the_prefetch_runs_on_the_patched_manifests_and_leaves_the_base_s() {
        let tmp = tempfile::tempdir().unwrap();
        let sh = |script: &str| {
            let out = std::process::Command::new("bash").arg("-c").arg(script).output().unwrap();
            (
                out.status.code(),
                String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
            )
        };
        let root = tmp.path();
        let repo = root.join("testbed");
        let (d, notes) = (root.join("prefetch"), root.join("notes/setup-notes"));
        let setup = format!(
            "set -e; mkdir -p {r}; cd {r}; git init -q; echo '{{\"a\":1}}' > package.json; echo node_modules > .gitignore; echo 'module.exports = 0' > index.js; \
             git add .; git -c user.name=t -c user.email=t@t commit -qm base; mkdir -p {d}/new; echo '{{\"a\":2}}' > {d}/new/package.json; \
             echo lock > {d}/new/package-lock.json",
            r = repo.display(),
            d = d.display()
        );
        assert_eq!(sh(&setup).0, Some(0));
        let mut recipe = Recipe::named("js-jest").unwrap();
        recipe.prefetch = vec![
            "cat package.json > node_modules.seen || true".into(),
            "mkdir -p node_modules && cp package.json node_modules/seen.json && touch stray".into(),
        ];
        let manifests = [
            ("package-lock.json".to_owned(), Some(b"lock\n".to_vec())),
            ("package.json".to_owned(), Some(b"x".to_vec())),
        ];
        let script =
            prefetch_script(&recipe, &Toolchain::named("node").unwrap(), &manifests, "2020-01-01T00:00:00Z", "o/r")
                .replace("/testbed", &repo.display().to_string())
                .replace(super::PREFETCH_DIR, &d.display().to_string())
                .replace(swe_forge_recipes::SETUP_NOTES, &notes.display().to_string());
        let (code, out) = sh(&script);
        assert_eq!(code, Some(0), "{out}\n{script}");
        assert!(out.contains("swe-forge: the patches change package-lock.json, package.json: fetching"), "{out}");
        let read = |p: &str| std::fs::read_to_string(repo.join(p)).unwrap_or_default();
        assert_eq!(read("node_modules/seen.json"), "{\"a\":2}\n", "the commands saw the patched manifest");
        assert_eq!(read("package.json"), "{\"a\":1}\n", "the base's manifest is back");
        assert!(!repo.join("package-lock.json").exists(), "a manifest the patches add is gone");
        assert!(
            !repo.join("stray").exists() && !repo.join("node_modules.seen").exists(),
            "what the commands left is gone"
        );
        assert!(!d.exists());
        assert!(std::fs::read_to_string(&notes).unwrap().contains("the dependencies they name were fetched"));

        // A fetch that edits a tracked file (a lifecycle script of the patch's manifest) fails the
        // layer, naming the file.
        let commands = "cat package.json > node_modules.seen || true\nmkdir -p node_modules && cp package.json node_modules/seen.json && touch stray";
        assert!(script.contains(commands));
        let (code, out) = sh(&script.replace(commands, "echo 'module.exports = 1' >> index.js"));
        assert_eq!(code, Some(1), "{out}");
        assert!(out.contains("the prefetch changed files of the repository") && out.contains("index.js"), "{out}");
        assert_eq!(sh(&format!("cd {} && git checkout -q -- index.js", repo.display())).0, Some(0));

        let (code, out) = sh(&script.replace(commands, "false"));
        assert_eq!(code, Some(0), "a failed fetch is noted, not fatal: {out}");
        assert!(out.contains("fetching the dependencies they name failed"), "{out}");
    }

    #[test]
    fn extra_sources_are_copied_beside_the_repository_and_change_nothing_when_absent() {
        let plain = source_dockerfile("tc", "abc", &[]);
        assert!(!plain.contains("extra/"), "{plain}");
        assert!(plain.contains("\nCOPY repo/ /testbed/\nWORKDIR /testbed\n"), "{plain}");
        let with = source_dockerfile("tc", "abc", &["/swe-forge/extra/data", "/opt/more"]);
        assert_eq!(with.replace("COPY extra/0/ /swe-forge/extra/data/\nCOPY extra/1/ /opt/more/\n", ""), plain);
        // Only /testbed becomes a git repository.
        assert_eq!(with.matches("git -c init.defaultBranch=main init").count(), 1);
    }

    #[test]
    fn packages_from_another_suite_have_their_versions_asked_for() {
        let mut t = Toolchain::named("cfamily").unwrap();
        assert_eq!(version_script(&t), t.version_command);
        t.packages.push("json-test-data/sid".into());
        let script = version_script(&t);
        assert!(script.starts_with(&format!("{}\n", t.version_command)), "{script}");
        assert!(script.ends_with("dpkg-query -W -f='${Package} ${Version}\\n' json-test-data"), "{script}");
        t.version_command.clear();
        assert!(version_script(&t).starts_with("dpkg-query"));
    }

    #[test]
    fn sha256sum_lines_become_a_map_and_other_lines_are_left_out() {
        let h = "a".repeat(64);
        let text = format!("{h}  Cargo.lock\nswe-forge: test command took 5 ms\n{h}  go.sum\nshort  x\n");
        let got = parse_sha256sums(&text);
        assert_eq!(got.keys().collect::<Vec<_>>(), ["Cargo.lock", "go.sum"]);
        assert_eq!(got["go.sum"], h);
    }
}
