//! Records the git commit the binary is built from as `SWE_FORGE_GIT_COMMIT`, which the
//! Parquet exports write into their metadata. Outside a git checkout the variable is unset.

use std::path::Path;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    (out.status.success() && !text.is_empty()).then_some(text)
}

fn main() {
    if let Some(commit) = git(&["rev-parse", "HEAD"]) {
        println!("cargo:rustc-env=SWE_FORGE_GIT_COMMIT={commit}");
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
