//! The toolchain versions a commit asks for, read from its build files (pom.xml, package.json,
//! .nvmrc, .node-version, .tool-versions, go.mod, rust-toolchain, Cargo.toml, CMakeLists.txt) and
//! its CI configuration (GitHub workflows, Travis, AppVeyor, CircleCI). Line-based readers over a
//! file lookup, so they are tested without a repository; what they cannot read they leave out.

use crate::toolchoice::{Tool, Version, VersionRequest, Want};

/// Every request the files of a commit make. `read` returns a file's text at the commit, `paths`
/// lists every path of its tree.
pub fn read_requests(read: &dyn Fn(&str) -> Option<String>, paths: &[String]) -> Vec<VersionRequest> {
    let mut out = Vec::new();
    java_requests(read, &mut out);
    node_requests(read, &mut out);
    tool_versions_requests(read, &mut out);
    go_requests(read, &mut out);
    rust_requests(read, &mut out);
    cmake_requests(read, &mut out);
    ci_requests(read, paths, &mut out);
    out
}

/// Reads a file of the repository by its path; None when absent.
type Read<'a> = &'a dyn Fn(&str) -> Option<String>;

/// Adds one request, its raw text trimmed.
fn push(out: &mut Vec<VersionRequest>, tool: Tool, source: String, raw: &str, want: Want) {
    out.push(VersionRequest { tool, source, raw: raw.trim().to_owned(), want });
}

/// Java: the levels `pom.xml` asks for, else Ant's `build.xml`.
fn java_requests(read: Read<'_>, out: &mut Vec<VersionRequest>) {
    let levels = match read("pom.xml") {
        Some(pom) => pom_levels(&pom),
        None => read("build.xml").map(|b| crate::ant_levels(&b)).unwrap_or_default(),
    };
    for (source, raw) in levels {
        if let Some(v) = Version::parse(Tool::Java, &raw) {
            push(out, Tool::Java, source, &raw, Want::Level(v));
        }
    }
}

/// Node: `package.json` engines, lockfile versions, `.nvmrc` and `.node-version`.
fn node_requests(read: Read<'_>, out: &mut Vec<VersionRequest>) {
    if let Some(pkg) = read("package.json") {
        let json: serde_json::Value = serde_json::from_str(&pkg).unwrap_or_default();
        if let Some(v) = json.pointer("/engines/node").and_then(|v| v.as_str()) {
            push(out, Tool::Node, "package.json engines.node".into(), v, Want::Range(v.trim().to_owned()));
        }
    }
    // npm reads lockfiles of version 2 and 3 from npm 7 on: Node 16 is the first line bundling it.
    for f in ["package-lock.json", "npm-shrinkwrap.json"] {
        if let Some(text) = read(f) {
            let json: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
            if let Some(n) = json.get("lockfileVersion").and_then(|v| v.as_u64()).filter(|n| *n >= 2) {
                push(
                    out,
                    Tool::Node,
                    format!("{f} lockfileVersion"),
                    &n.to_string(),
                    Want::AtLeast(Version { major: 16, minor: 0 }),
                );
            }
        }
    }
    for f in [".nvmrc", ".node-version"] {
        if let Some(text) = read(f) {
            let raw = text.lines().next().unwrap_or("").trim().to_owned();
            if let Some(v) = Version::parse(Tool::Node, &raw) {
                push(out, Tool::Node, f.to_owned(), &raw, Want::Exact(v));
            }
        }
    }
}

/// asdf's `.tool-versions`: Node exactly, the others at least.
fn tool_versions_requests(read: Read<'_>, out: &mut Vec<VersionRequest>) {
    if let Some(text) = read(".tool-versions") {
        for l in text.lines() {
            let mut w = l.split_whitespace();
            let (Some(name), Some(raw)) = (w.next(), w.next()) else { continue };
            let tool = match name {
                "nodejs" | "node" => Tool::Node,
                "java" => Tool::Java,
                "golang" | "go" => Tool::Go,
                "rust" => Tool::Rust,
                _ => continue,
            };
            if let Some(v) = Version::parse(
                tool,
                raw.rsplit('-').find(|p| p.starts_with(|c: char| c.is_ascii_digit())).unwrap_or(raw),
            ) {
                let want = if tool == Tool::Node { Want::Exact(v) } else { Want::AtLeast(v) };
                push(out, tool, format!(".tool-versions {name}"), raw, want);
            }
        }
    }
}

/// Go: `go.mod`'s `go` and `toolchain` lines.
fn go_requests(read: Read<'_>, out: &mut Vec<VersionRequest>) {
    if let Some(gomod) = read("go.mod") {
        for key in ["go", "toolchain"] {
            if let Some(raw) = gomod.lines().find_map(|l| l.trim().strip_prefix(&format!("{key} ")))
                && let Some(v) = Version::parse(Tool::Go, raw)
            {
                push(out, Tool::Go, format!("go.mod {key}"), raw, Want::AtLeast(v));
            }
        }
    }
}

/// Rust: `Cargo.toml`'s `rust-version` and the `rust-toolchain` files' channel.
fn rust_requests(read: Read<'_>, out: &mut Vec<VersionRequest>) {
    if let Some(cargo) = read("Cargo.toml")
        && let Some(raw) = crate::detect::toml_string(&cargo, "rust-version")
        && let Some(v) = Version::parse(Tool::Rust, &raw)
    {
        push(out, Tool::Rust, "Cargo.toml rust-version".into(), &raw, Want::AtLeast(v));
    }
    for f in ["rust-toolchain", "rust-toolchain.toml"] {
        if let Some(t) = read(f) {
            let raw = crate::detect::toml_string(&t, "channel").unwrap_or_else(|| t.trim().to_owned());
            if let Some(v) = Version::parse(Tool::Rust, &raw) {
                push(out, Tool::Rust, format!("{f} channel"), &raw, Want::AtLeast(v));
            }
        }
    }
}

/// CMake: `cmake_minimum_required` in `CMakeLists.txt`.
fn cmake_requests(read: Read<'_>, out: &mut Vec<VersionRequest>) {
    if let Some(cmake) = read("CMakeLists.txt")
        && let Some(raw) = cmake_minimum(&cmake)
        && let Some(v) = Version::parse(Tool::Cmake, &raw)
    {
        push(out, Tool::Cmake, "CMakeLists.txt cmake_minimum_required".into(), &raw, Want::AtLeast(v));
    }
}

/// The versions CI configurations test with (GitHub workflows, Travis, AppVeyor, CircleCI), in path order.
fn ci_requests(read: Read<'_>, paths: &[String], out: &mut Vec<VersionRequest>) {
    let mut ci: Vec<&str> = paths
        .iter()
        .map(String::as_str)
        .filter(|p| {
            (p.starts_with(".github/workflows/") && (p.ends_with(".yml") || p.ends_with(".yaml")))
                || [".travis.yml", "appveyor.yml", ".appveyor.yml", ".circleci/config.yml"].contains(p)
        })
        .collect();
    ci.sort_unstable();
    for path in ci {
        if let Some(text) = read(path) {
            for (tool, key, raw, versions) in ci_versions(&text) {
                push(out, tool, format!("{path} {key}"), &raw, Want::Tested(versions));
            }
        }
    }
}

/// Java language levels of a pom: `maven.compiler.release/source/target` and `java.version`
/// properties, and the maven-compiler-plugin's `release/source/target`, each `${property}`
/// resolved from the pom's own properties.
pub(crate) fn pom_levels(pom: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let resolve = |v: String| -> Option<String> {
        match v.strip_prefix("${").and_then(|r| r.strip_suffix('}')) {
            Some(name) => xml_tag(pom, name).filter(|r| !r.starts_with("${")),
            None => Some(v),
        }
    };
    for tag in ["maven.compiler.release", "maven.compiler.source", "maven.compiler.target", "java.version"] {
        if let Some(v) = xml_tag(pom, tag).and_then(resolve)
            && !v.is_empty()
        {
            out.push((format!("pom.xml {tag}"), v));
        }
    }
    if let Some(start) = pom.find("<artifactId>maven-compiler-plugin</artifactId>") {
        let plugin = &pom[start..];
        let plugin = &plugin[..plugin.find("</plugin>").unwrap_or(plugin.len())];
        for tag in ["release", "source", "target"] {
            if let Some(v) = xml_tag(plugin, tag).and_then(resolve)
                && !v.is_empty()
            {
                out.push((format!("pom.xml maven-compiler-plugin {tag}"), v));
            }
        }
    }
    out
}

pub(crate) fn xml_tag(text: &str, tag: &str) -> Option<String> {
    let open = format!("<{tag}>");
    let start = text.find(&open)? + open.len();
    let end = text[start..].find('<')? + start;
    Some(text[start..end].trim().to_owned())
}

/// `cmake_minimum_required(VERSION 3.10)` -> `3.10` (`3.5...3.28` -> `3.5`).
fn cmake_minimum(text: &str) -> Option<String> {
    let lower = text.to_lowercase();
    let at = lower.find("cmake_minimum_required")?;
    let args = &text[at..];
    let args = &args[args.find('(')? + 1..args.find(')')?];
    let mut w = args.split_whitespace();
    while let Some(t) = w.next() {
        if t.eq_ignore_ascii_case("VERSION") {
            return w.next().map(|v| v.split("...").next().unwrap_or(v).to_owned());
        }
    }
    None
}

/// Keys of CI files that name a version, by family (workflow inputs and matrix axes, Travis,
/// AppVeyor).
const CI_KEYS: &[(Tool, &[&str])] = &[
    (Tool::Node, &["node-version", "node_version", "node-versions", "node", "nodejs", "node_js", "nodejs_version"]),
    (Tool::Java, &["java-version", "java_version", "java", "jdk"]),
    (Tool::Go, &["go-version", "go_version", "go", "golang"]),
    (Tool::Rust, &["rust-version", "rust", "toolchain"]),
];

/// Docker images of CI jobs (CircleCI, GitHub `container:`) and the family whose version their
/// tag names.
const CI_IMAGES: &[(Tool, &[&str])] = &[
    (Tool::Node, &["node:", "circleci/node:", "cimg/node:"]),
    (Tool::Java, &["openjdk:", "circleci/openjdk:", "cimg/openjdk:", "eclipse-temurin:", "maven:"]),
    (Tool::Go, &["golang:", "circleci/golang:", "cimg/go:"]),
    (Tool::Rust, &["rust:", "circleci/rust:", "cimg/rust:"]),
];

/// Versions a CI file names: `key: 16`, `key: [14, 16]`, `key:` followed by `- 14` items, and
/// image tags (`cimg/node:16.13`). Values with expressions (`${{ matrix.node }}`), `lts/*`,
/// `stable` or `latest` name no version and are left out.
pub(crate) fn ci_versions(text: &str) -> Vec<(Tool, String, String, Vec<Version>)> {
    let mut out: Vec<(Tool, String, String, Vec<Version>)> = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    let mut add = |tool: Tool, key: &str, values: Vec<String>| {
        let versions: Vec<Version> = values.iter().filter_map(|v| ci_value(tool, v)).collect();
        if versions.is_empty() {
            return;
        }
        let raw = values.join(", ");
        match out.iter_mut().find(|(t, k, _, _)| *t == tool && k == key) {
            Some((_, _, r, vs)) => {
                for v in versions {
                    if !vs.contains(&v) {
                        vs.push(v);
                        r.push_str(", ");
                        r.push_str(&v.to_string());
                    }
                }
            }
            None => out.push((tool, key.to_owned(), raw, versions)),
        }
    };
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim_start().trim_start_matches("- ").trim_start();
        if t.starts_with('#') {
            continue;
        }
        if let Some(at) = t.find("image:") {
            let image = t[at + 6..].trim().trim_matches(|c| c == '"' || c == '\'');
            for (tool, prefixes) in CI_IMAGES {
                for p in prefixes.iter() {
                    let tag = image.strip_prefix(p).or_else(|| image.split_once(&format!("/{p}")).map(|(_, t)| t));
                    if let Some(tag) = tag {
                        add(
                            *tool,
                            &format!("{} image", tool.name()),
                            vec![tag.split('-').next().unwrap_or(tag).to_owned()],
                        );
                    }
                }
            }
        }
        let Some((key, value)) = t.split_once(':') else { continue };
        let key = key.trim().trim_matches(|c| c == '"' || c == '\'');
        let Some((tool, _)) = CI_KEYS.iter().find(|(_, keys)| keys.contains(&key)) else { continue };
        let value = value.trim();
        let value = value.split(" #").next().unwrap_or(value).trim();
        if value.is_empty() {
            // A block list below the key: `- 14` items indented deeper.
            let indent = line.len() - line.trim_start().len();
            let mut items = Vec::new();
            for next in &lines[i + 1..] {
                let n = next.trim_start();
                if n.is_empty() || n.starts_with('#') {
                    continue;
                }
                let ni = next.len() - n.len();
                match n.strip_prefix("- ") {
                    Some(item) if ni >= indent => items.push(item.trim().to_owned()),
                    _ => break,
                }
            }
            add(*tool, key, items);
        } else if let Some(list) = value.strip_prefix('[').and_then(|v| v.strip_suffix(']')) {
            add(*tool, key, list.split(',').map(|s| s.trim().to_owned()).collect());
        } else {
            add(*tool, key, vec![value.to_owned()]);
        }
    }
    out
}

/// One CI value as a version: `16`, `'16.x'`, `v18`, `openjdk11`, `1.21.x`, `temurin@17`.
fn ci_value(tool: Tool, v: &str) -> Option<Version> {
    let v = v.trim().trim_matches(|c| c == '"' || c == '\'').trim();
    if v.contains("${") || v.contains("{{") || v.is_empty() {
        return None;
    }
    let v = v.rsplit('@').next().unwrap_or(v);
    Version::parse(tool, v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(list: &[(&str, &str)]) -> Vec<VersionRequest> {
        let map: std::collections::BTreeMap<String, String> =
            list.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        let paths: Vec<String> = map.keys().cloned().collect();
        read_requests(&|p| map.get(p).cloned(), &paths)
    }

    fn said(rs: &[VersionRequest]) -> Vec<(String, String)> {
        rs.iter().map(|r| (r.source.clone(), format!("{:?}", r.want))).collect()
    }

    #[test]
    fn a_pom_asks_for_its_language_level_with_properties_resolved() {
        let pom = "<project><properties><maven.compiler.source>1.6</maven.compiler.source>\
            <maven.compiler.target>${jdk}</maven.compiler.target><jdk>1.6</jdk></properties><build><plugins>\
            <plugin><artifactId>maven-compiler-plugin</artifactId><configuration><release>${nowhere}</release>\
            <source>${jdk}</source></configuration></plugin></plugins></build></project>";
        let got = said(&files(&[("pom.xml", pom)]));
        let level6 = format!("{:?}", Want::Level(Version { major: 6, minor: 0 }));
        assert_eq!(
            got,
            [
                ("pom.xml maven.compiler.source".to_owned(), level6.clone()),
                ("pom.xml maven.compiler.target".to_owned(), level6.clone()),
                ("pom.xml maven-compiler-plugin source".to_owned(), level6),
            ]
        );
    }

    #[test]
    fn node_versions_from_package_json_nvmrc_and_tool_versions() {
        let got = files(&[
            ("package.json", r#"{"engines": {"node": ">= 12 < 17"}}"#),
            (".nvmrc", "v14.17.0\n"),
            (".node-version", "lts/gallium\n"),
            (".tool-versions", "nodejs 16.13.0\njava temurin-17.0.2+8\nruby 3.1\n"),
            ("package-lock.json", r#"{"name": "x", "lockfileVersion": 3}"#),
        ]);
        let mut s = said(&got);
        let lock = s.remove(1);
        assert_eq!(
            lock,
            (
                "package-lock.json lockfileVersion".into(),
                format!("{:?}", Want::AtLeast(Version { major: 16, minor: 0 }))
            )
        );
        assert_eq!(s[0], ("package.json engines.node".into(), format!("{:?}", Want::Range(">= 12 < 17".into()))));
        assert_eq!(s[1], (".nvmrc".into(), format!("{:?}", Want::Exact(Version { major: 14, minor: 17 }))));
        assert_eq!(s[2].0, ".tool-versions nodejs");
        assert_eq!(
            s[3],
            (".tool-versions java".into(), format!("{:?}", Want::AtLeast(Version { major: 17, minor: 0 })))
        );
        assert_eq!(s.len(), 4, "lts names and ruby are left out: {s:?}");
    }

    #[test]
    fn go_rust_and_cmake_minimums() {
        let got = said(&files(&[
            ("go.mod", "module x\n\ngo 1.21\n\ntoolchain go1.22.3\n"),
            ("Cargo.toml", "[package]\nrust-version = \"1.70\"\n"),
            ("rust-toolchain.toml", "[toolchain]\nchannel = \"1.75.0\"\n"),
            ("CMakeLists.txt", "project(x)\ncmake_minimum_required(VERSION 3.5...3.28)\n"),
        ]));
        let at = |a, b| format!("{:?}", Want::AtLeast(Version { major: a, minor: b }));
        assert!(got.contains(&("go.mod go".into(), at(1, 21))), "{got:?}");
        assert!(got.contains(&("go.mod toolchain".into(), at(1, 22))), "{got:?}");
        assert!(got.contains(&("Cargo.toml rust-version".into(), at(1, 70))), "{got:?}");
        assert!(got.contains(&("rust-toolchain.toml channel".into(), at(1, 75))), "{got:?}");
        assert!(got.contains(&("CMakeLists.txt cmake_minimum_required".into(), at(3, 5))), "{got:?}");
    }

    #[test]
    fn ci_matrices_of_github_travis_appveyor_and_circleci() {
        let workflow = "jobs:\n  test:\n    strategy:\n      matrix:\n        node-version: [10.x, 12.x, '14']\n        java: [ 8, 11 ]\n\
            \x20   steps:\n      - uses: actions/setup-node@v4\n        with:\n          node-version: ${{ matrix.node-version }}\n\
            \x20     - uses: actions/setup-go@v5\n        with:\n          go-version: '1.21'\n      - uses: dtolnay/rust-toolchain@stable\n\
            \x20       with:\n          toolchain: stable\n";
        let travis = "language: node_js\nnode_js:\n  - \"6\"\n  - '8'\n  - node\njdk:\n  - oraclejdk8\n  - openjdk11\n";
        let appveyor = "environment:\n  matrix:\n    - nodejs_version: \"10\"\n    - nodejs_version: \"12\"\n";
        let circle = "jobs:\n  build:\n    docker:\n      - image: cimg/openjdk:17.0\n      - image: circleci/node:12-browsers\n";
        let got = files(&[
            (".github/workflows/ci.yml", workflow),
            (".travis.yml", travis),
            ("appveyor.yml", appveyor),
            (".circleci/config.yml", circle),
        ]);
        let tested = |source: &str| -> Vec<String> {
            got.iter()
                .filter(|r| r.source == source)
                .flat_map(|r| match &r.want {
                    Want::Tested(vs) => vs.iter().map(|v| v.to_string()).collect(),
                    _ => vec![],
                })
                .collect()
        };
        assert_eq!(tested(".github/workflows/ci.yml node-version"), ["10", "12", "14"]);
        assert_eq!(tested(".github/workflows/ci.yml java"), ["8", "11"]);
        assert_eq!(tested(".github/workflows/ci.yml go-version"), ["1.21"]);
        assert!(tested(".github/workflows/ci.yml toolchain").is_empty(), "stable names no version");
        assert_eq!(tested(".travis.yml node_js"), ["6", "8"]);
        assert_eq!(tested(".travis.yml jdk"), ["8", "11"]);
        assert_eq!(tested("appveyor.yml nodejs_version"), ["10", "12"]);
        assert_eq!(tested(".circleci/config.yml java image"), ["17"]);
        assert_eq!(tested(".circleci/config.yml node image"), ["12"]);
    }
}
