//! `images verify`: rebuild an instance's image from scratch (no build cache) and compare the
//! two filesystems file by file.

use std::collections::BTreeMap;

use swe_forge_core::Instance;
use swe_forge_git::SourceRepo;

use crate::Validator;
use crate::error::VerifyError;
use crate::images::{BuildMode, ImageFailure, ImageRequest};

/// The outcome of rebuilding one instance image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyReport {
    /// The instance.
    pub instance_id: String,
    /// The image on record.
    pub original: String,
    /// Files only in the rebuilt image.
    pub added: Vec<String>,
    /// Files only in the original image.
    pub removed: Vec<String>,
    /// Files whose content (or symlink target) differs.
    pub changed: Vec<String>,
    /// Differing files that differ on every build by nature (see [`VOLATILE`]): build-cache
    /// metadata with timestamps, git's index with file stat data, configure logs.
    pub volatile: Vec<String>,
    /// Number of files compared.
    pub files: usize,
}

impl VerifyReport {
    /// Whether the rebuild came out the same, volatile files aside.
    pub fn identical(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }
}

impl Validator {
    /// Rebuilds the image of a validated record and compares it with the one on record; the
    /// rebuilt image is removed afterwards.
    pub async fn verify_image(&self, inst: &Instance) -> Result<VerifyReport, VerifyError> {
        let instance_id = || inst.instance_id.clone();
        let original = inst
            .swe_forge
            .as_ref()
            .and_then(|m| m.image.clone())
            .ok_or_else(|| VerifyError::NoImage { instance_id: instance_id() })?;
        if self.engine.image_id(&original).await?.is_none() {
            return Err(VerifyError::NotInEngine { instance_id: instance_id(), image: original });
        }
        let repo = SourceRepo::locate(&self.settings.repos_root, &inst.org, &inst.repo)?;
        let crate::validator::Resolved { recipe, toolchain, .. } = self.resolve_recipe(&repo, inst)?;
        // The environment commit on record, so that the same layers are rebuilt.
        let env_commit = inst
            .swe_forge
            .as_ref()
            .and_then(|m| m.provenance.as_ref())
            .map(|p| p.env_commit.clone())
            .filter(|c| !c.is_empty())
            .unwrap_or_else(|| self.env_commit(inst));
        let extras = crate::resolve_extra_sources(&self.settings.repos_root, &recipe.extra_sources)?;
        let req = ImageRequest {
            repo: &repo,
            inst,
            recipe: &recipe,
            toolchain: &toolchain,
            env_commit: &env_commit,
            extras: &extras,
            mode: BuildMode::FromScratch,
        };
        let rebuilt = match self.instance_image(&req).await {
            Ok(img) => img,
            Err(ImageFailure::Build(detail)) => {
                return Err(VerifyError::Rebuild { instance_id: instance_id(), detail });
            }
            Err(ImageFailure::Infra(source)) => {
                return Err(VerifyError::RebuildEngine { instance_id: instance_id(), source });
            }
        };
        let a = self.engine.image_files(&original).await;
        let b = self.engine.image_files(&rebuilt.tag).await;
        for tag in [&rebuilt.tag, &rebuilt.env.tag, &rebuilt.source_tag] {
            let _ = self.engine.remove_image(tag).await;
        }
        Ok(compare(&inst.instance_id, &original, &a?, &b?))
    }
}

fn compare(id: &str, original: &str, a: &BTreeMap<String, String>, b: &BTreeMap<String, String>) -> VerifyReport {
    let mut r = VerifyReport {
        instance_id: id.to_owned(),
        original: original.to_owned(),
        added: Vec::new(),
        removed: Vec::new(),
        changed: Vec::new(),
        volatile: Vec::new(),
        files: a.len().max(b.len()),
    };
    for (path, digest) in a {
        match b.get(path) {
            None => r.removed.push(path.clone()),
            Some(d) if d != digest => r.changed.push(path.clone()),
            Some(_) => {}
        }
    }
    r.added = b.keys().filter(|p| !a.contains_key(*p)).cloned().collect();
    for list in [&mut r.added, &mut r.removed, &mut r.changed] {
        let (volatile, real): (Vec<String>, Vec<String>) = list.drain(..).partition(|p| is_volatile(p));
        *list = real;
        r.volatile.extend(volatile);
    }
    r.volatile.sort();
    r
}

/// Files that change on every build whatever the inputs: (path suffix or component, why).
pub const VOLATILE: &[(&str, &str)] = &[
    ("/.git/index", "git's index records file stat data (mtime, inode)"),
    ("-a", "Go build-cache action entries (under .cache/go-build) record when they were made"),
    ("/trim.txt", "Go build-cache trim time"),
    ("/testexpire.txt", "Go test-cache expiry time"),
    ("/config.log", "autoconf's log records the date and host"),
    (".lastUpdated", "Maven's download timestamps"),
    ("/_remote.repositories", "Maven's download bookkeeping"),
    ("/.package-lock.json", "npm's hidden lockfile records install times"),
    ("/.cargo/.global-cache", "cargo's record of when each cached crate was last used"),
    ("/target/.rustc_info.json", "cargo's cache of rustc facts, keyed by file times"),
    ("/.ninja_log", "ninja's log records build times"),
    ("/.ninja_deps", "ninja's dependency log records file times"),
    ("/CMakeConfigureLog.yaml", "CMake's configure log records the date"),
];

fn is_volatile(path: &str) -> bool {
    let p = format!("/{path}");
    VOLATILE.iter().any(|(suffix, _)| match *suffix {
        "-a" => p.contains("/.cache/go-build/") && p.ends_with("-a"),
        s => p.ends_with(s),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn volatile_files_are_set_apart() {
        let a: BTreeMap<String, String> = [
            ("testbed/src/x.go", "1"),
            ("testbed/.git/index", "1"),
            ("root/.cache/go-build/0b/abc-a", "1"),
            ("root/.cache/go-build/0b/abc-d", "1"),
            ("gone", "1"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let mut b = a.clone();
        b.insert("testbed/.git/index".into(), "2".into());
        b.insert("root/.cache/go-build/0b/abc-a".into(), "2".into());
        assert!(compare("i", "img", &a, &b).identical());
        b.insert("root/.cache/go-build/0b/abc-d".into(), "2".into());
        b.remove("gone");
        b.insert("new".into(), "1".into());
        let r = compare("i", "img", &a, &b);
        assert!(!r.identical());
        assert_eq!(r.changed, ["root/.cache/go-build/0b/abc-d"]);
        assert_eq!((r.added.clone(), r.removed.clone()), (vec!["new".to_owned()], vec!["gone".to_owned()]));
        assert_eq!(r.volatile.len(), 2);
    }
}
