//! The Debian packages a project's CI installs before it builds (`gperf`, `libzstd1-dev`): Travis
//! `addons: apt: packages:` (the file's own, else the first Linux job's) and `apt-get install` /
//! `apt install` lines of Travis, GitHub workflows, CircleCI and GitLab CI. Line-based, like
//! `requests.rs`: what it cannot read it leaves out.
//!
//! Toolchains and cross-compilers are never taken from here (the toolchain choice owns them), and
//! a name the image's suite does not have is skipped when the image is built (the CI ran on
//! Ubuntu, whose names differ now and then): see `toolchain_dockerfile`.

/// Packages one CI file installs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CiPackages {
    /// Where they were read (`.travis.yml addons.apt.packages`, `.github/workflows/ci.yml apt-get install`).
    pub source: String,
    /// Package names, in the file's order, without duplicates.
    pub packages: Vec<String>,
}

/// CI files that can install Debian packages, in path order.
pub(crate) fn ci_files(paths: &[String]) -> Vec<&str> {
    let mut ci: Vec<&str> = paths
        .iter()
        .map(String::as_str)
        .filter(|p| {
            (p.starts_with(".github/workflows/") && (p.ends_with(".yml") || p.ends_with(".yaml")))
                || [".travis.yml", ".circleci/config.yml", ".gitlab-ci.yml"].contains(p)
        })
        .collect();
    ci.sort_unstable();
    ci
}

/// Every package the CI files of a commit install. `read` returns a file's text at the commit,
/// `paths` lists every path of its tree.
pub fn ci_packages(read: &dyn Fn(&str) -> Option<String>, paths: &[String]) -> Vec<CiPackages> {
    let mut out = Vec::new();
    for path in ci_files(paths) {
        let Some(text) = read(path) else { continue };
        if path == ".travis.yml" {
            let addons = travis_addons(&text);
            if !addons.is_empty() {
                out.push(CiPackages { source: format!("{path} addons.apt.packages"), packages: addons });
            }
        }
        let installed = install_lines(&text);
        if !installed.is_empty() {
            out.push(CiPackages { source: format!("{path} apt-get install"), packages: installed });
        }
    }
    out
}

/// All the packages of `found`, each once, in order.
pub fn all_packages(found: &[CiPackages]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for p in found.iter().flat_map(|c| &c.packages) {
        if !out.contains(p) {
            out.push(p.clone());
        }
    }
    out
}

/// Words that mark a CI job or line as another platform than the native Linux build.
const OTHER_PLATFORM: &[&str] =
    &["osx", "macos", "windows", "m32", "i386", "i686", "arm", "arm64", "armhf", "aarch64", "s390x", "ppc64le"];

/// Whether `text` names another platform than native Linux (a word of [`OTHER_PLATFORM`], or
/// MinGW or multilib anywhere in a word).
pub(crate) fn other_platform(text: &str) -> bool {
    let lower = text.to_lowercase();
    lower.split(|c: char| !c.is_ascii_alphanumeric() && c != '-').any(|word| {
        word.contains("mingw") || word.contains("multilib") || word.split('-').any(|w| OTHER_PLATFORM.contains(&w))
    })
}

/// Travis `addons: apt: packages:` (or the older `addons: apt_packages:`): the file's top-level
/// list; when it has none, the first job of `matrix/jobs: include:` with a list and no sign of
/// another platform.
fn travis_addons(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut blocks: Vec<(usize, Vec<String>)> = Vec::new(); // (indent of `addons:`, packages)
    let mut i = 0;
    while i < lines.len() {
        let (indent, body) = split_indent(lines[i]);
        let key = body.trim_start_matches("- ");
        if key.starts_with("addons:") {
            let addons_indent = indent + (body.len() - key.len());
            let (packages, end) = addon_packages(&lines, i + 1, addons_indent);
            if !packages.is_empty() {
                blocks.push((addons_indent, packages));
            }
            i = end.max(i + 1);
        } else {
            i += 1;
        }
    }
    if let Some((_, p)) = blocks.iter().find(|(indent, _)| *indent == 0) {
        return filter(p.iter().map(String::as_str));
    }
    // A job's list: the job is the `- ` item the `addons:` belongs to.
    for (n, line) in lines.iter().enumerate() {
        let (indent, body) = split_indent(line);
        if !body.starts_with("- ") {
            continue;
        }
        let job: Vec<&str> = std::iter::once(*line)
            .chain(lines[n + 1..].iter().copied().take_while(|l| l.trim().is_empty() || split_indent(l).0 > indent))
            .collect();
        if !job.iter().any(|l| l.contains("addons:")) || other_platform(&job.join("\n")) {
            continue;
        }
        let p = travis_addons_in_job(&job);
        if !p.is_empty() {
            return p;
        }
    }
    Vec::new()
}

fn travis_addons_in_job(job: &[&str]) -> Vec<String> {
    for (i, line) in job.iter().enumerate() {
        let (indent, body) = split_indent(line);
        let key = body.trim_start_matches("- ");
        if key.starts_with("addons:") {
            let (packages, _) = addon_packages(job, i + 1, indent + (body.len() - key.len()));
            return filter(packages.iter().map(String::as_str));
        }
    }
    Vec::new()
}

/// The packages under an `addons:` key whose own indentation is `indent`, from line `start`; and
/// the first line past the block.
fn addon_packages(lines: &[&str], start: usize, indent: usize) -> (Vec<String>, usize) {
    let mut out = Vec::new();
    let mut in_list: Option<usize> = None; // indentation of the `packages:` key
    let mut i = start;
    while i < lines.len() {
        let line = lines[i];
        let (ind, body) = split_indent(line);
        if body.is_empty() || body.starts_with('#') {
            i += 1;
            continue;
        }
        if ind <= indent {
            break;
        }
        if let Some(k) = in_list {
            if ind > k || (ind == k && body.starts_with("- ")) {
                if let Some(item) = body.strip_prefix("- ") {
                    out.push(unquote(strip_comment(item)).to_owned());
                }
                i += 1;
                continue;
            }
            in_list = None;
        }
        let (key, value) = body.split_once(':').map(|(k, v)| (k.trim(), v.trim())).unwrap_or((body, ""));
        if key == "packages" || key == "apt_packages" {
            let value = strip_comment(value);
            if let Some(flow) = value.strip_prefix('[').and_then(|v| v.strip_suffix(']')) {
                out.extend(flow.split(',').map(|s| unquote(s.trim()).to_owned()).filter(|s| !s.is_empty()));
            } else if !value.is_empty() {
                out.push(unquote(value).to_owned());
            } else {
                in_list = Some(ind);
            }
        }
        i += 1;
    }
    (out, i)
}

/// Packages named by `apt-get install` / `apt install` commands anywhere in `text` (a `\`
/// continues a command on the next line), except on lines that name another platform.
fn install_lines(text: &str) -> Vec<String> {
    let mut commands: Vec<String> = Vec::new();
    let mut pending: Option<String> = None;
    for line in text.lines() {
        let t = strip_comment(line.trim().trim_start_matches("- ").trim_start_matches("run:").trim());
        let t = t.trim_matches(|c| c == '"' || c == '\'');
        match pending.take() {
            Some(mut cmd) => {
                cmd.push(' ');
                cmd.push_str(t.trim_end_matches('\\'));
                if t.ends_with('\\') { pending = Some(cmd) } else { commands.push(cmd) }
            }
            None if t.contains("apt-get ") || t.contains("apt ") => {
                let cmd = t.trim_end_matches('\\').to_owned();
                if t.ends_with('\\') { pending = Some(cmd) } else { commands.push(cmd) }
            }
            None => {}
        }
    }
    commands.extend(pending);
    let mut names = Vec::new();
    for cmd in &commands {
        if other_platform(cmd) {
            continue;
        }
        for part in cmd.split(['&', ';', '|']) {
            let words: Vec<&str> = part.split_whitespace().collect();
            let Some(at) = words.windows(2).position(|w| matches!(w[0], "apt-get" | "apt") && w[1] == "install") else {
                // `apt-get -y install x`: options before the verb.
                let Some(apt) = words.iter().position(|w| matches!(*w, "apt-get" | "apt")) else { continue };
                let Some(verb) = words[apt..].iter().position(|w| *w == "install") else { continue };
                if words[apt + 1..apt + verb].iter().all(|w| w.starts_with('-')) {
                    names.extend(words[apt + verb + 1..].iter().copied());
                }
                continue;
            };
            names.extend(words[at + 2..].iter().copied());
        }
    }
    filter(names.into_iter())
}

/// Prefixes of packages the toolchain choice owns (compilers, runtimes, build tools), or that
/// belong to another platform: never installed from a CI file.
#[rustfmt::skip]
const NOT_FROM_CI: &[&str] = &[
    // Compilers, runtimes and build tools.
    "gcc", "g++", "cpp-", "clang", "llvm", "lld", "libc++", "libclang", "openjdk", "default-jdk", "default-jre",
    "oracle-java", "nodejs", "npm", "yarn", "golang", "gccgo", "rustc", "cargo", "maven", "gradle", "cmake",
    // Other platforms, and the machine's own business.
    "lib32", "libx32", "mingw", "wine", "qemu", "crossbuild", "docker", "sudo",
    // Documentation tools (a manual's build, not the tests'); plantuml and texlive pull in a JDK
    // and gigabytes.
    "doxygen", "graphviz", "plantuml", "texlive", "pandoc", "asciidoc", "sphinx", "mkdocs", "latex",
];

/// Package names only: options, variables, versions (`=1.2`) and architectures (`:i386`) are
/// dropped, and so are the toolchain's own packages; each name once.
fn filter<'a>(names: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for n in names {
        let n = unquote(n);
        if n.contains(':') || n.starts_with('-') {
            continue;
        }
        let n = n.split('=').next().unwrap_or_default();
        let valid = n.len() >= 2
            && n.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
            && n.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "+-.".contains(c));
        if !valid || NOT_FROM_CI.iter().any(|p| n.starts_with(p)) || n.contains("mingw") || n.contains("multilib") {
            continue;
        }
        if !out.iter().any(|o| o == n) {
            out.push(n.to_owned());
        }
    }
    out
}

fn split_indent(line: &str) -> (usize, &str) {
    let body = line.trim_start();
    (line.len() - body.len(), body.trim_end())
}

fn strip_comment(s: &str) -> &str {
    match s.find(" #") {
        Some(i) => s[..i].trim_end(),
        None if s.starts_with('#') => "",
        None => s,
    }
}

fn unquote(s: &str) -> &str {
    s.trim().trim_matches(|c| c == '"' || c == '\'')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(files: &[(&str, &str)]) -> Vec<CiPackages> {
        let map: std::collections::HashMap<String, String> =
            files.iter().map(|(p, t)| ((*p).to_owned(), (*t).to_owned())).collect();
        let paths: Vec<String> = map.keys().cloned().collect();
        ci_packages(&|p| map.get(p).cloned(), &paths)
    }

    #[test]
    fn travis_top_level_addons_win_over_the_jobs_lists() {
        let travis = "language: c\n\naddons:\n    apt:\n        packages:\n            - gperf\n            - elfutils\n            - zlib1g-dev\n\nmatrix:\n    include:\n        - os: linux\n          compiler: gcc\n          env: CFLAGS=\"-m32\"\n          addons:\n              apt:\n                  packages:\n                      - gcc-multilib\n                      - lib32z1-dev\n        - os: linux\n          addons:\n              apt:\n                  packages:\n                      - clang    # scan-build\n                      - gperf\n";
        let got = found(&[(".travis.yml", travis)]);
        assert_eq!(
            got,
            [CiPackages {
                source: ".travis.yml addons.apt.packages".into(),
                packages: vec!["gperf".into(), "elfutils".into(), "zlib1g-dev".into()]
            }]
        );
    }

    #[test]
    fn travis_without_top_level_addons_takes_the_first_native_linux_job() {
        let travis = "language: cpp\ndist: xenial\n\nmatrix:\n  include:\n\n  # Job 0: mac\n  - os: osx\n    addons:\n      apt:\n        packages:\n        - nothing-for-mac\n\n  # Job 1: Linux native GCC\n  - os: linux\n    compiler: gcc\n    env: V=1\n    addons:\n      apt:\n        packages:\n        - elfutils\n        - libzstd1-dev\n        - libb2-dev\n\n  - os: linux\n    addons:\n      apt:\n        packages:\n        - gcc-multilib\n";
        let got = found(&[(".travis.yml", travis)]);
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0].packages, ["elfutils", "libzstd1-dev", "libb2-dev"]);
    }

    #[test]
    fn flow_lists_and_the_old_apt_packages_key() {
        let travis = "addons:\n  apt_packages: [gperf, 'libcunit1-dev']\n";
        assert_eq!(found(&[(".travis.yml", travis)])[0].packages, ["gperf", "libcunit1-dev"]);
        let travis = "addons:\n  apt:\n    packages: [\"libev-dev\"]\n";
        assert_eq!(found(&[(".travis.yml", travis)])[0].packages, ["libev-dev"]);
    }

    #[test]
    fn install_commands_of_workflows_with_options_continuations_and_chains() {
        let wf = "jobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: sudo apt-get update && sudo apt-get install -y --no-install-recommends libzstd-dev gperf\n      - run: |\n          sudo apt-get -qq install \\\n            libb2-dev \\\n            asciidoc \\\n            valgrind\n      - run: sudo apt install -y clang-9 libfoo-dev=1.2 $EXTRA bar:amd64\n      - run: sudo apt-get install gcc-multilib libonly32-dev\n  mingw:\n    steps:\n      - run: sudo apt-get install -y mingw-w64 wine64\n";
        let got = found(&[(".github/workflows/ci.yml", wf)]);
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0].source, ".github/workflows/ci.yml apt-get install");
        assert_eq!(got[0].packages, ["libzstd-dev", "gperf", "libb2-dev", "valgrind", "libfoo-dev"]);
        // A documentation workflow's packages (nlohmann/json's plantuml) are not the build's.
        let docs = "jobs:\n  docs:\n    steps:\n      - run: sudo apt-get install -y plantuml\n";
        assert!(found(&[(".github/workflows/publish_documentation.yml", docs)]).is_empty());
        let commented = "steps:\n#        sudo apt-get install -y intel-basekit\n      - run: sudo apt-get install -y doxygen liblz4-dev\n";
        assert_eq!(found(&[(".github/workflows/ci.yml", commented)])[0].packages, ["liblz4-dev"]);
    }

    #[test]
    fn files_without_packages_give_nothing_and_all_packages_merges_in_order() {
        assert!(
            found(&[(".travis.yml", "language: go\ngo:\n  - 1.6\n"), ("README.md", "apt-get install x")]).is_empty()
        );
        let a = CiPackages { source: "a".into(), packages: vec!["x".into(), "y".into()] };
        let b = CiPackages { source: "b".into(), packages: vec!["y".into(), "z".into()] };
        assert_eq!(all_packages(&[a, b]), ["x", "y", "z"]);
    }
}
