//! Debian packages standing in for what a C or C++ build fetches from a host out of reach: an
//! empty submodule folder, or a CMake `FetchContent_Declare` (`recipes/stand-ins.toml`, data about
//! the ecosystem). [`stand_ins_for`] matches a tree's declarations and missing submodules against
//! that data; [`crate::Recipe::use_stand_ins`] installs the packages and points the build at them.

use std::sync::OnceLock;

use serde::Deserialize;

/// One upstream and the Debian packages that ship it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StandIn {
    /// How it is named in notes (`GoogleTest`).
    pub name: String,
    /// Parts of its URLs (`github.com/google/googletest`), compared without case.
    pub upstreams: Vec<String>,
    /// The Debian packages that ship it.
    pub packages: Vec<String>,
    /// A folder the packages install holding the upstream's own source tree.
    #[serde(default)]
    pub source: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    stand_in: Vec<StandIn>,
}

/// The built-in table (`recipes/stand-ins.toml`).
pub fn stand_in_table() -> &'static [StandIn] {
    static TABLE: OnceLock<Vec<StandIn>> = OnceLock::new();
    TABLE.get_or_init(|| {
        toml::from_str::<File>(include_str!("../recipes/stand-ins.toml"))
            .expect("recipes/stand-ins.toml is valid (unit-tested)")
            .stand_in
    })
}

/// The entry whose upstream `url` is (`https://github.com/google/googletest.git`,
/// `git@github.com:google/googletest`, `https://github.com/google/googletest/archive/v1.14.zip`).
pub fn stand_in_for_url(url: &str) -> Option<&'static StandIn> {
    let url = url.to_ascii_lowercase().replace("github.com:", "github.com/");
    stand_in_table().iter().find(|s| {
        s.upstreams.iter().any(|u| {
            let u = u.to_ascii_lowercase();
            url.match_indices(&u).any(|(i, _)| {
                let rest = &url[i + u.len()..];
                rest.is_empty() || rest.starts_with(['/', '.', '#', '?'])
            })
        })
    })
}

/// A `FetchContent_Declare(<name> ... <url> ...)` of a CMake file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchDeclaration {
    /// The content name as declared (`googletest`).
    pub name: String,
    /// Its `GIT_REPOSITORY` or `URL`.
    pub url: String,
}

/// Every `FetchContent_Declare` of `cmake` (a CMake file's text) with a `GIT_REPOSITORY` or
/// `URL`; commented lines are skipped.
pub fn fetch_declarations(cmake: &str) -> Vec<FetchDeclaration> {
    let text: String =
        cmake.lines().map(|l| l.split_once('#').map_or(l, |(code, _)| code)).collect::<Vec<_>>().join("\n");
    let lower = text.to_ascii_lowercase();
    let mut out = Vec::new();
    for (i, _) in lower.match_indices("fetchcontent_declare") {
        let rest = &text[i + "fetchcontent_declare".len()..];
        let Some(open) = rest.trim_start().strip_prefix('(') else { continue };
        let body = open.split(')').next().unwrap_or_default();
        let words: Vec<&str> = body.split_whitespace().map(|w| w.trim_matches('"')).collect();
        let Some(name) = words.first().filter(|n| !n.is_empty()) else { continue };
        let url = words.windows(2).find(|w| matches!(w[0], "GIT_REPOSITORY" | "URL")).map(|w| w[1].to_owned());
        if let Some(url) = url {
            out.push(FetchDeclaration { name: (*name).to_owned(), url });
        }
    }
    out
}

/// What stands in for the dependencies of one tree.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StandIns {
    /// Declarations with a stand-in, and it.
    pub fetches: Vec<(FetchDeclaration, &'static StandIn)>,
    /// Missing submodules (path in the tree) with a stand-in that has a source tree, and it.
    pub submodules: Vec<(String, &'static StandIn)>,
    /// Submodules a patch adds (its `.gitmodules` lines), filled before each test run.
    pub patch_submodules: Vec<(String, &'static StandIn)>,
}

impl StandIns {
    /// Whether nothing stands in.
    pub fn is_empty(&self) -> bool {
        self.fetches.is_empty() && self.submodules.is_empty() && self.patch_submodules.is_empty()
    }
}

/// The stand-ins of a tree whose CMake files are `cmake_files` (their texts), whose submodules
/// without a local copy are `missing` and to which a patch adds the submodules `added` (`(path,
/// url)` each).
pub fn stand_ins_for(cmake_files: &[String], missing: &[(String, String)], added: &[(String, String)]) -> StandIns {
    let mut out = StandIns::default();
    for decl in cmake_files.iter().flat_map(|t| fetch_declarations(t)) {
        if let Some(s) = stand_in_for_url(&decl.url)
            && !out.fetches.iter().any(|(d, _)| d.name.eq_ignore_ascii_case(&decl.name))
        {
            out.fetches.push((decl, s));
        }
    }
    for (path, url) in missing {
        if let Some(s) = stand_in_for_url(url).filter(|s| s.source.is_some()) {
            out.submodules.push((path.clone(), s));
        }
    }
    for (path, url) in added {
        if let Some(s) = stand_in_for_url(url).filter(|s| s.source.is_some())
            && !out.submodules.iter().any(|(p, _)| p == path)
        {
            out.patch_submodules.push((path.clone(), s));
        }
    }
    out
}

/// The submodules the patches add (`(path, url)`): the `path = ` and `url = ` lines each adds to
/// `.gitmodules`, in order.
pub fn patch_submodules(patches: &[&str]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for patch in patches {
        let mut in_gitmodules = false;
        let mut path: Option<String> = None;
        for line in patch.lines() {
            if let Some(rest) = line.strip_prefix("diff --git ") {
                in_gitmodules = rest.ends_with(" b/.gitmodules");
                continue;
            }
            let Some(added) = line.strip_prefix('+').filter(|_| in_gitmodules && !line.starts_with("+++")) else {
                continue;
            };
            let (key, value) = match added.split_once('=') {
                Some((k, v)) => (k.trim(), v.trim()),
                None => continue,
            };
            match key {
                "path" => path = Some(value.to_owned()),
                "url" => {
                    if let Some(p) = path.take() {
                        out.push((p, value.to_owned()));
                    }
                }
                _ => {}
            }
        }
    }
    out
}

/// The CMake cache options that point `fetches` at their stand-ins.
pub(crate) fn cmake_options(fetches: &[(FetchDeclaration, &StandIn)]) -> Vec<String> {
    let mut out = Vec::new();
    for (decl, s) in fetches {
        let opt = match &s.source {
            Some(src) => format!("-DFETCHCONTENT_SOURCE_DIR_{}={src}", decl.name.to_ascii_uppercase()),
            None => "-DFETCHCONTENT_TRY_FIND_PACKAGE_MODE=ALWAYS".to_owned(),
        };
        if !out.contains(&opt) {
            out.push(opt);
        }
    }
    out
}

/// The setup step that fills each empty submodule folder of `submodules` from its stand-in's
/// source tree (a folder that is not empty, or a source the suite did not install, is left).
pub(crate) fn submodule_step(submodules: &[(String, &StandIn)]) -> Option<String> {
    let lines: Vec<String> = submodules
        .iter()
        .filter_map(|(path, s)| {
            let src = s.source.as_deref()?;
            let (p, q) = (crate::shell_quote(path), crate::shell_quote(src));
            Some(format!(
                "if [ -d {q} ] && [ -z \"$(ls -A {p} 2>/dev/null)\" ]; then mkdir -p {p} && cp -a {q}/. {p}/ && echo \"swe-forge: submodule {path}: Debian's {} stands in ({src})\"; fi",
                s.name
            ))
        })
        .collect();
    (!lines.is_empty()).then(|| lines.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_loads_and_urls_match_by_upstream_not_by_prefix() {
        assert!(stand_in_table().len() >= 5);
        let g = |u: &str| stand_in_for_url(u).map(|s| s.name.as_str());
        assert_eq!(g("https://github.com/google/googletest.git"), Some("GoogleTest"));
        assert_eq!(g("git@github.com:google/googletest"), Some("GoogleTest"));
        assert_eq!(g("https://github.com/google/googletest/archive/refs/tags/v1.14.0.zip"), Some("GoogleTest"));
        assert_eq!(g("https://github.com/catchorg/Catch2.git"), Some("Catch2"));
        assert_eq!(g("https://github.com/google/googletest-extras.git"), None, "another repository");
        assert_eq!(g("https://github.com/forge/lib.git"), None);
    }

    #[test]
    fn declarations_are_read_with_their_url_and_comments_are_skipped() {
        let cmake = "include(FetchContent)\nFetchContent_Declare(\n  googletest\n  URL https://github.com/google/googletest/archive/v1.14.zip\n)\n\
# FetchContent_Declare(old GIT_REPOSITORY https://github.com/google/benchmark.git)\n\
FetchContent_Declare(Catch2 GIT_REPOSITORY \"https://github.com/catchorg/Catch2.git\" GIT_TAG v3.4.0)\n\
FetchContent_Declare(local SOURCE_DIR ${CMAKE_SOURCE_DIR}/x)\n";
        let d = fetch_declarations(cmake);
        let got: Vec<(&str, &str)> = d.iter().map(|d| (d.name.as_str(), d.url.as_str())).collect();
        assert_eq!(
            got,
            [
                ("googletest", "https://github.com/google/googletest/archive/v1.14.zip"),
                ("Catch2", "https://github.com/catchorg/Catch2.git")
            ]
        );
        let s = stand_ins_for(&[cmake.to_owned()], &[], &[]);
        assert_eq!(
            cmake_options(&s.fetches),
            ["-DFETCHCONTENT_SOURCE_DIR_GOOGLETEST=/usr/src/googletest", "-DFETCHCONTENT_TRY_FIND_PACKAGE_MODE=ALWAYS"]
        );
    }

    #[test]
    fn only_submodules_with_a_source_tree_are_filled() {
        let missing = [
            ("extern/gtest".to_owned(), "https://github.com/google/googletest".to_owned()),
            ("extern/catch".to_owned(), "https://github.com/catchorg/Catch2".to_owned()),
            ("extern/own".to_owned(), "https://github.com/forge/own".to_owned()),
        ];
        let s = stand_ins_for(&[], &missing, &[]);
        assert_eq!(s.submodules.iter().map(|(p, _)| p.as_str()).collect::<Vec<_>>(), ["extern/gtest"]);
        let step = submodule_step(&s.submodules).unwrap();
        assert!(step.contains("cp -a /usr/src/googletest/. extern/gtest/"), "{step}");
        assert!(step.starts_with("if [ -d /usr/src/googletest ] && [ -z \"$(ls -A extern/gtest"), "{step}");
    }

    #[test]
    fn a_submodule_a_patch_adds_is_filled_before_each_run() {
        let fix = "diff --git a/.gitmodules b/.gitmodules\nnew file mode 100644\n--- /dev/null\n+++ b/.gitmodules\n@@ -0,0 +1,3 @@\n\
+[submodule \"extern/gtest\"]\n+\tpath = extern/gtest\n+\turl = https://github.com/google/googletest.git\n\
diff --git a/extern/gtest b/extern/gtest\nnew file mode 160000\n--- /dev/null\n+++ b/extern/gtest\n@@ -0,0 +1 @@\n+Subproject commit 0123\n";
        let added = patch_submodules(&[fix, "diff --git a/x.c b/x.c\n+path = no\n"]);
        assert_eq!(added, [("extern/gtest".to_owned(), "https://github.com/google/googletest.git".to_owned())]);
        let s = stand_ins_for(&[], &[], &added);
        assert_eq!(s.patch_submodules.len(), 1);
        let mut r = crate::Recipe::named("c-cmake").unwrap();
        r.ci_apt_packages = true;
        let notes = r.use_stand_ins(&s);
        assert!(r.pre_test.iter().any(|c| c.contains("cp -a /usr/src/googletest/. extern/gtest/")), "{:?}", r.pre_test);
        assert!(r.ci_packages.contains(&"googletest".to_owned()));
        assert!(notes[0].contains("the submodule extern/gtest a patch adds"), "{notes:?}");
    }
}
