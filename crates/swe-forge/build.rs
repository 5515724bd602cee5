//! Records the git commit the binary is built from as `SWE_FORGE_GIT_COMMIT`, which the
//! Parquet exports write into their metadata (outside a git checkout it is unset), and the
//! version `--version` prints as `SWE_FORGE_VERSION` (`0.0.0 (commit 0123456789ab)`).

use std::path::Path;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    (out.status.success() && !text.is_empty()).then_some(text)
}

fn main() {
    let version = std::env::var("CARGO_PKG_VERSION").unwrap_or_default();
    match git(&["rev-parse", "HEAD"]) {
        Some(commit) => {
            println!("cargo:rustc-env=SWE_FORGE_GIT_COMMIT={commit}");
            println!("cargo:rustc-env=SWE_FORGE_VERSION={version} (commit {})", &commit[..commit.len().min(12)]);
        }
        None => println!("cargo:rustc-env=SWE_FORGE_VERSION={version}"),
    }
    // Run again when HEAD moves: HEAD itself, the branch it points at, packed refs.
    let mut watched = vec!["HEAD".to_owned(), "packed-refs".to_owned()];
    watched.extend(git(&["symbolic-ref", "-q", "HEAD"]));
    for name in watched {
        if let Some(path) = git(&["rev-parse", "--git-path", &name]).filter(|p| Path::new(p).exists()) {
            println!("cargo:rerun-if-changed={path}");
        }
    }
    // Nothing else is read; without a watched file (no git) run once.
    println!("cargo:rerun-if-changed=build.rs");
}
