//! The base image: a minimal Debian rootfs made by debootstrap on this machine and imported
//! into the engine (`docker import`), because no registry can be pulled from. Its tag is
//! derived from the rootfs tarball's sha256; once built it is found again by its labels.

use std::path::PathBuf;
use std::process::Command;

use bollard::query_parameters::CreateImageOptions;
use futures_util::StreamExt;
use sha2::{Digest, Sha256};

use crate::{DockerError, Engine, LABEL_ROLE};

/// What rootfs to bootstrap.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct BaseSpec {
    /// Debian suite, e.g. `trixie`.
    pub suite: String,
    /// Debian mirror to bootstrap from.
    pub mirror: String,
}

impl Default for BaseSpec {
    fn default() -> BaseSpec {
        BaseSpec { suite: "trixie".to_owned(), mirror: "http://deb.debian.org/debian".to_owned() }
    }
}

const LABEL_SUITE: &str = "dev.swe-forge.suite";
/// The name every base image has (`swe-forge/base:<suite>-<rootfs sha256>`).
const BASE_REPO_PREFIX: &str = "swe-forge/base:";

impl Engine {
    /// Returns the tag of the base image for `spec`, bootstrapping and importing it first if the
    /// engine has none. `progress` receives one line per step.
    pub async fn ensure_base(&self, spec: &BaseSpec, progress: &(dyn Fn(&str) + Sync)) -> Result<String, DockerError> {
        // An image made from the base by hand (`docker commit` of a container of it) carries
        // the base's labels too: only swe-forge's own base names count.
        let labels = [(LABEL_ROLE, "base"), (LABEL_SUITE, spec.suite.as_str())];
        let ours = |tags: Vec<String>| tags.into_iter().find(|t| t.starts_with(BASE_REPO_PREFIX));
        if let Some(tag) = ours(self.images_with_labels(&labels).await?) {
            return Ok(tag);
        }
        let _lock = crate::lock::lock(&format!("base-{}", spec.suite)).await?;
        if let Some(tag) = ours(self.images_with_labels(&labels).await?) {
            return Ok(tag);
        }
        progress(&format!("bootstrapping a Debian {} rootfs with debootstrap", spec.suite));
        let spec2 = spec.clone();
        let tarball = tokio::task::spawn_blocking(move || bootstrap_tarball(&spec2))
            .await
            .map_err(|e| DockerError::Bootstrap(format!("bootstrap task panicked: {e}")))??;
        let digest = hex(&Sha256::digest(&tarball));
        let tag = format!("swe-forge/base:{}-{}", spec.suite, &digest[..12]);
        progress(&format!("importing {} MiB rootfs as {tag}", tarball.len() >> 20));
        let opts = CreateImageOptions {
            from_src: Some("-".to_owned()),
            repo: Some("swe-forge/base".to_owned()),
            tag: Some(format!("{}-{}", spec.suite, &digest[..12])),
            changes: vec![
                format!("LABEL {LABEL_ROLE}=base"),
                format!("LABEL {LABEL_SUITE}={}", spec.suite),
                format!("LABEL dev.swe-forge.rootfs-sha256={digest}"),
                "ENV LANG=C.UTF-8 PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin".to_owned(),
                "CMD [\"/bin/bash\"]".to_owned(),
            ],
            ..Default::default()
        };
        let mut stream = self.docker.create_image(Some(opts), Some(bollard::body_full(tarball.into())), None);
        while let Some(item) = stream.next().await {
            item.map_err(DockerError::api("import rootfs", tag.clone()))?;
        }
        Ok(tag)
    }
}

/// Runs debootstrap into a temporary folder and returns a tarball of the rootfs with sorted
/// names, numeric owners and clamped times.
fn bootstrap_tarball(spec: &BaseSpec) -> Result<Vec<u8>, DockerError> {
    let which = Command::new("debootstrap").arg("--version").output();
    if which.map(|o| !o.status.success()).unwrap_or(true) {
        return Err(DockerError::Bootstrap(
            "debootstrap is not installed: run `apt-get install -y debootstrap` (or `bash scripts/setup-docker.sh`)"
                .into(),
        ));
    }
    let dir = tempfile::Builder::new()
        .prefix("swe-forge-rootfs-")
        .tempdir()
        .map_err(DockerError::io("creating a rootfs folder"))?;
    let root: PathBuf = dir.path().join("rootfs");
    let out = Command::new("debootstrap")
        .args(["--variant=minbase", &spec.suite])
        .arg(&root)
        .arg(&spec.mirror)
        .output()
        .map_err(DockerError::io("running debootstrap"))?;
    if !out.status.success() {
        let mut log = String::from_utf8_lossy(&out.stdout).into_owned();
        log.push_str(&String::from_utf8_lossy(&out.stderr));
        let tail: Vec<&str> = log.lines().rev().take(15).collect();
        return Err(DockerError::Bootstrap(format!(
            "debootstrap {} from {} failed (it needs root and the mirror):\n{}",
            spec.suite,
            spec.mirror,
            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
        )));
    }
    // Leftovers that differ on every bootstrap and have no use in an image.
    for p in ["var/cache/apt/archives", "var/lib/apt/lists", "var/log"] {
        let _ = Command::new("find").arg(root.join(p)).args(["-mindepth", "1", "-type", "f", "-delete"]).status();
    }
    let out = Command::new("tar")
        .args(["--numeric-owner", "--sort=name", "--mtime=@0", "--clamp-mtime", "-C"])
        .arg(&root)
        .args(["-cf", "-", "."])
        .output()
        .map_err(DockerError::io("packing the rootfs with tar"))?;
    if !out.status.success() {
        return Err(DockerError::Bootstrap(format!(
            "tar of the rootfs failed: {}",
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    Ok(out.stdout)
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
