//! Detection of the recipe and of the toolchain versions a repository asks for, from the
//! files of its base commit (go.mod, Cargo.toml, pom.xml, package.json, CMakeLists.txt, ...).

use std::collections::BTreeMap;

use swe_forge_git::SourceRepo;

/// What the files of a commit say about building it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Detection {
    /// Recipe name, or None when nothing is recognised.
    pub recipe: Option<String>,
    /// Language override for the recipe (`typescript`, `cpp`).
    pub language: Option<String>,
    /// Toolchain override (`rust-web` when the crate needs a newer compiler).
    pub toolchain: Option<String>,
    /// Why the repository cannot be built here, when it cannot.
    pub unsupported: Option<String>,
    /// Versions asked for, by source (`go.mod go`, `Cargo.toml rust-version`, ...).
    pub requested_versions: BTreeMap<String, String>,
    /// Build and lock files at the root: path -> blob id.
    pub lockfiles: BTreeMap<String, String>,
}

/// Rust compiler of the `rust` toolchain (trixie's rustc); newer requests get `rust-web`.
const RUSTC_STABLE: (u32, u32) = (1, 85);

pub(crate) const LOCKFILES: &[&str] = &[
    "go.mod",
    "go.sum",
    "Cargo.toml",
    "Cargo.lock",
    "rust-toolchain",
    "rust-toolchain.toml",
    "pom.xml",
    "build.gradle",
    "build.gradle.kts",
    "package.json",
    "package-lock.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "npm-shrinkwrap.json",
    ".nvmrc",
    "CMakeLists.txt",
    "configure.ac",
    "meson.build",
    "Makefile",
];

/// Detects how to build the tree of commit `sha`.
pub fn detect(repo: &SourceRepo, sha: &str) -> Detection {
    let mut d = Detection::default();
    let read = |name: &str| repo.file_at(sha, name).map(|b| String::from_utf8_lossy(&b).into_owned());
    let exists = |name: &str| repo.blob_id_at(sha, name).is_some();
    for f in LOCKFILES {
        if let Some(id) = repo.blob_id_at(sha, f) {
            d.lockfiles.insert((*f).to_owned(), id);
        }
    }
    if let Some(gomod) = read("go.mod") {
        d.recipe = Some("go".into());
        if let Some(v) = gomod.lines().find_map(|l| l.trim().strip_prefix("go ")) {
            d.requested_versions.insert("go.mod go".into(), v.trim().to_owned());
        }
    } else if let Some(cargo) = read("Cargo.toml") {
        d.recipe = Some("rust".into());
        let mut wants: Option<String> = None;
        if let Some(v) = toml_string(&cargo, "rust-version") {
            d.requested_versions.insert("Cargo.toml rust-version".into(), v.clone());
            wants = Some(v);
        }
        for f in ["rust-toolchain", "rust-toolchain.toml"] {
            if let Some(t) = read(f) {
                let channel = toml_string(&t, "channel").unwrap_or_else(|| t.trim().to_owned());
                d.requested_versions.insert(format!("{f} channel"), channel.clone());
                wants = Some(channel);
            }
        }
        if let Some(v) = wants.as_deref().and_then(parse_version)
            && v > RUSTC_STABLE
        {
            d.toolchain = Some("rust-web".into());
        }
    } else if let Some(pom) = read("pom.xml") {
        d.recipe = Some("java-maven".into());
        for tag in ["maven.compiler.release", "maven.compiler.source", "maven.compiler.target", "java.version"] {
            if let Some(v) = xml_tag(&pom, tag) {
                d.requested_versions.insert(format!("pom.xml {tag}"), v);
            }
        }
        for (tag, v) in compiler_plugin_versions(&pom) {
            d.requested_versions.entry(format!("pom.xml maven-compiler-plugin {tag}")).or_insert(v);
        }
    } else if exists("build.gradle") || exists("build.gradle.kts") {
        d.unsupported =
            Some("Gradle build: no Gradle distribution can be downloaded on this network; add a Maven override or a gradle wrapper cache".into());
    } else if let Some(pkg) = read("package.json") {
        let json: serde_json::Value = serde_json::from_str(&pkg).unwrap_or_default();
        let has_dep = |name: &str| {
            ["dependencies", "devDependencies"].iter().any(|k| json.get(k).and_then(|m| m.get(name)).is_some())
        };
        let test_script = json.pointer("/scripts/test").and_then(|v| v.as_str()).unwrap_or("");
        let recipe = if has_dep("vitest") || test_script.contains("vitest") {
            "js-vitest"
        } else if has_dep("jest") || test_script.contains("jest") {
            "js-jest"
        } else if has_dep("mocha") || test_script.contains("mocha") {
            "js-mocha"
        } else {
            "js-jest"
        };
        d.recipe = Some(recipe.into());
        let ts_files =
            repo.paths_at(sha).unwrap_or_default().iter().filter(|p| p.ends_with(".ts") || p.ends_with(".tsx")).count();
        if exists("tsconfig.json") || has_dep("typescript") || ts_files > 0 {
            d.language = Some("typescript".into());
        }
        if let Some(v) = json.pointer("/engines/node").and_then(|v| v.as_str()) {
            d.requested_versions.insert("package.json engines.node".into(), v.to_owned());
        }
        if let Some(v) = read(".nvmrc") {
            d.requested_versions.insert(".nvmrc".into(), v.trim().to_owned());
        }
    } else if exists("CMakeLists.txt") {
        d.recipe = Some("c-cmake".into());
    } else if exists("meson.build") {
        d.recipe = Some("c-meson".into());
    } else if ["configure.ac", "configure.in", "Makefile.am", "configure"].iter().any(|f| exists(f)) {
        d.recipe = Some("c-autotools".into());
    }
    if d.recipe.as_deref().is_some_and(|r| r.starts_with("c-")) && is_cpp(&repo.paths_at(sha).unwrap_or_default()) {
        d.language = Some("cpp".into());
    }
    d
}

/// Whether C++ sources outnumber C sources.
fn is_cpp(paths: &[String]) -> bool {
    let (mut c, mut cpp) = (0u32, 0u32);
    for p in paths {
        match p.to_lowercase().rsplit_once('.').map(|(_, ext)| ext.to_owned()).as_deref() {
            Some("c") => c += 1,
            Some("cc" | "cpp" | "cxx" | "hpp" | "hh" | "hxx") => cpp += 1,
            _ => {}
        }
    }
    cpp > c
}

fn toml_string(text: &str, key: &str) -> Option<String> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once('=')?;
        (k.trim() == key).then(|| v.trim().trim_matches('"').to_owned())
    })
}

fn xml_tag(text: &str, tag: &str) -> Option<String> {
    let open = format!("<{tag}>");
    let start = text.find(&open)? + open.len();
    let end = text[start..].find('<')? + start;
    Some(text[start..end].trim().to_owned())
}

/// The `release`, `source` and `target` of the maven-compiler-plugin's configuration, with a
/// `${property}` resolved from the pom's own properties (dubbo's `${java_source_version}`).
fn compiler_plugin_versions(pom: &str) -> Vec<(&'static str, String)> {
    let Some(start) = pom.find("<artifactId>maven-compiler-plugin</artifactId>") else {
        return Vec::new();
    };
    let plugin = &pom[start..];
    let plugin = &plugin[..plugin.find("</plugin>").unwrap_or(plugin.len())];
    let mut out = Vec::new();
    for tag in ["release", "source", "target"] {
        let Some(mut v) = xml_tag(plugin, tag) else { continue };
        if let Some(name) = v.strip_prefix("${").and_then(|r| r.strip_suffix('}')) {
            match xml_tag(pom, name) {
                Some(resolved) => v = resolved,
                None => continue,
            }
        }
        if !v.is_empty() {
            out.push((tag, v));
        }
    }
    out
}

/// `1.70`, `1.70.0`, `stable` -> (major, minor).
fn parse_version(v: &str) -> Option<(u32, u32)> {
    let mut parts = v.trim().split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    Some((major, minor))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_parsers() {
        assert_eq!(toml_string("[package]\nrust-version = \"1.88\"\n", "rust-version").as_deref(), Some("1.88"));
        assert_eq!(
            xml_tag("<p><maven.compiler.release>17</maven.compiler.release>", "maven.compiler.release").as_deref(),
            Some("17")
        );
        assert_eq!(parse_version("1.70.0"), Some((1, 70)));
        let dubbo = "<properties><java_source_version>1.8</java_source_version></properties><build><plugins>\
            <plugin><artifactId>maven-surefire-plugin</artifactId><configuration><source>9</source></configuration></plugin>\
            <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-compiler-plugin</artifactId>\
            <configuration><source>${java_source_version}</source><target>${unset}</target></configuration></plugin>";
        assert_eq!(compiler_plugin_versions(dubbo), [("source", "1.8".to_owned())]);
        assert!(compiler_plugin_versions("<project/>").is_empty());
        assert_eq!(parse_version("stable"), None);
    }
}
