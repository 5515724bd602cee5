//! The build options a project's CI passes when it builds to test: CMake `-D<NAME>=<value>`
//! cache options (`-DFOO_BUILD_TESTS=ON`, which a project whose tests are off by default needs),
//! `./configure` feature switches (`--enable-x`, `--without-y`) and Maven profiles (`-Pci`), read
//! from GitHub workflows, Travis, CircleCI and GitLab CI line by line, like `cipackages.rs`.
//! A recipe that takes them (`ci_build_flags = true`) appends them to its own configure step
//! ([`crate::Recipe::add_ci_flags`]); the provenance records each with the file it came from.
//!
//! The same commands also say what the CI fetches at test time that no setup here fetches: the
//! repositories it clones ([`ci_clones`]; toml11's Travis job clones toml-lang/toml's examples
//! into the build folder its tests read), recorded in the provenance as evidence.
//!
//! Left out on purpose: what names the machine rather than the project (compilers, toolchain
//! files, install prefixes, `CMAKE_*` variables, hosts), what changes how tests behave rather
//! than whether they build (sanitizers, coverage, valgrind, `-Werror`), values taken from a
//! CI matrix or variable (`${{ matrix.std }}`, `$FLAGS`), lines that name another platform, and
//! Maven profiles that release, sign, publish or document.

/// The build tool a set of flags is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FlagTool {
    /// `cmake -S . -B build ...`: `-D<NAME>=<value>` options.
    Cmake,
    /// `./configure ...`: `--enable-*`, `--disable-*`, `--with-*`, `--without-*`.
    Configure,
    /// `mvn ...`: `-P<profile>[,<profile>]`.
    Maven,
}

impl FlagTool {
    /// How the flags are named in the provenance (`cmake -D`, `configure`, `mvn -P`).
    pub fn label(self) -> &'static str {
        match self {
            FlagTool::Cmake => "cmake -D",
            FlagTool::Configure => "configure",
            FlagTool::Maven => "mvn -P",
        }
    }
}

/// The flags one CI file passes to one build tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CiFlags {
    /// Where they were read (`.github/workflows/ci.yml`).
    pub source: String,
    /// The tool they are for.
    pub tool: FlagTool,
    /// The flags, as the tool takes them (`-DJSON_BuildTests=ON`, `--enable-tests`, `-Pci`), in
    /// the file's order, each name once.
    pub flags: Vec<String>,
}

/// Words in an option's name that mark it as changing how tests behave, or as needing tools a
/// toolchain image does not have, rather than switching the tests' build on.
const LEFT_OUT_WORDS: &[&str] = &[
    "SANITIZ",
    "ASAN",
    "UBSAN",
    "TSAN",
    "MSAN",
    "LSAN",
    "COVERAGE",
    "GCOV",
    "LCOV",
    "COVERALLS",
    "VALGRIND",
    "MEMCHECK",
    "FUZZ",
    "WERROR",
    "WARNINGS_AS_ERRORS",
    "WARNING_AS_ERROR",
    "CLANG_TIDY",
    "CLANGTIDY",
    "CPPCHECK",
    "IWYU",
    "CCACHE",
    "LTO",
    "PROFIL",
];

/// Maven profiles that release, sign, publish, document or measure.
const LEFT_OUT_PROFILES: &[&str] =
    &["release", "sign", "gpg", "deploy", "publish", "javadoc", "doc", "site", "sonar", "coverage", "jacoco", "dist"];

/// Every set of build flags the CI files of a commit pass. `read` returns a file's text at the
/// commit, `paths` lists every path of its tree.
pub fn ci_flags(read: &dyn Fn(&str) -> Option<String>, paths: &[String]) -> Vec<CiFlags> {
    let mut out = Vec::new();
    for path in crate::cipackages::ci_files(paths) {
        let Some(text) = read(path) else { continue };
        let commands = commands(&text);
        for tool in [FlagTool::Cmake, FlagTool::Configure, FlagTool::Maven] {
            let flags = merge(commands.iter().filter(|c| !crate::cipackages::other_platform(c)).flat_map(|c| {
                let words = words(c);
                invocations(&words, tool).into_iter().flat_map(|args| flags_of(args, tool)).collect::<Vec<_>>()
            }));
            if !flags.is_empty() {
                out.push(CiFlags { source: path.to_owned(), tool, flags });
            }
        }
    }
    out
}

/// The repositories one CI file clones (`git clone [options] <url> [dir]`), in the file's order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CiClone {
    /// Where they were read (`.travis.yml`).
    pub source: String,
    /// The URLs, each once.
    pub urls: Vec<String>,
}

/// Every repository the CI files of a commit clone in their commands (not the `actions/checkout`
/// of the repository itself, which is no command): `git clone` with a URL written out (no
/// variable), on lines that do not name another platform.
pub fn ci_clones(read: &dyn Fn(&str) -> Option<String>, paths: &[String]) -> Vec<CiClone> {
    // Options of `git clone` that take a value as the next word.
    const WITH_VALUE: &[&str] =
        &["-b", "--branch", "-o", "--origin", "--depth", "-c", "--config", "-j", "--jobs", "--reference", "-u"];
    let mut out = Vec::new();
    for path in crate::cipackages::ci_files(paths) {
        let Some(text) = read(path) else { continue };
        let mut urls: Vec<String> = Vec::new();
        for c in commands(&text).iter().filter(|c| !crate::cipackages::other_platform(c)) {
            let words = words(c);
            for i in 0..words.len() {
                if words[i] != "git" || words.get(i + 1) != Some(&"clone") {
                    continue;
                }
                let mut args = words[i + 2..].iter().take_while(|a| !matches!(**a, ";" | "&&" | "||" | "|" | "&"));
                while let Some(a) = args.next() {
                    if WITH_VALUE.contains(a) {
                        args.next();
                        continue;
                    }
                    if a.starts_with('-') {
                        continue;
                    }
                    let url = a.trim_matches(|c| c == '"' || c == '\'');
                    if (url.contains("://") || url.starts_with("git@"))
                        && !url.contains('$')
                        && !urls.iter().any(|u| u == url)
                    {
                        urls.push(url.to_owned());
                    }
                    break;
                }
            }
        }
        if !urls.is_empty() {
            out.push(CiClone { source: path.to_owned(), urls });
        }
    }
    out
}

/// The flags of `found` for `tool`, each name once (the first file's value wins), in order.
pub fn flags_for(found: &[CiFlags], tool: FlagTool) -> Vec<String> {
    merge(found.iter().filter(|f| f.tool == tool).flat_map(|f| f.flags.iter().cloned()))
}

/// The shell commands of a CI file: YAML list markers and `run:` keys stripped, a `\` at the end
/// of a line continuing the command on the next one.
fn commands(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut pending: Option<String> = None;
    for line in text.lines() {
        let t = line.trim().trim_start_matches("- ").trim_start_matches("run:").trim();
        let t = match t.find(" #") {
            Some(i) => &t[..i],
            None if t.starts_with('#') => "",
            None => t,
        };
        let t = t.trim().trim_matches(|c| c == '"' || c == '\'');
        let (body, continues) = match t.strip_suffix('\\') {
            Some(b) => (b.trim_end(), true),
            None => (t, false),
        };
        let cmd = match pending.take() {
            Some(mut c) => {
                c.push(' ');
                c.push_str(body);
                c
            }
            None => body.to_owned(),
        };
        if continues { pending = Some(cmd) } else { out.push(cmd) }
    }
    out.extend(pending);
    out
}

/// A command split into words, shell operators as words of their own.
fn words(command: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for w in command.split_whitespace() {
        let mut rest = w;
        while !rest.is_empty() {
            match rest.find([';', '&', '|']) {
                Some(0) => {
                    let n = rest.chars().take_while(|c| matches!(c, ';' | '&' | '|')).count();
                    out.push(&rest[..n]);
                    rest = &rest[n..];
                }
                Some(i) => {
                    out.push(&rest[..i]);
                    rest = &rest[i..];
                }
                None => {
                    out.push(rest);
                    rest = "";
                }
            }
        }
    }
    out
}

/// The arguments of each call of `tool` among `words`, up to the next shell operator. A CMake
/// call that builds, installs or runs a script (`--build`, `--install`, `-E`, `-P`) is no
/// configure step and gives none.
fn invocations<'a>(words: &[&'a str], tool: FlagTool) -> Vec<Vec<&'a str>> {
    let is_call = |w: &str| match tool {
        FlagTool::Cmake => w == "cmake" || w.ends_with("/cmake"),
        FlagTool::Configure => w == "./configure" || w.ends_with("/configure") || w == "configure",
        FlagTool::Maven => ["mvn", "./mvnw", "mvnw"].contains(&w),
    };
    let mut out = Vec::new();
    for (i, w) in words.iter().enumerate() {
        // `sh configure`, `bash ./configure`; a bare `configure` only after a shell.
        let called = is_call(w) && (*w != "configure" || i > 0 && ["sh", "bash"].contains(&words[i - 1]));
        if !called {
            continue;
        }
        let args: Vec<&str> =
            words[i + 1..].iter().copied().take_while(|a| !matches!(*a, ";" | "&&" | "||" | "|" | "&")).collect();
        if tool == FlagTool::Cmake && args.iter().any(|a| matches!(*a, "--build" | "--install" | "-E" | "-P")) {
            continue;
        }
        out.push(args);
    }
    out
}

/// The flags among one call's arguments that a recipe takes.
fn flags_of(args: Vec<&str>, tool: FlagTool) -> Vec<String> {
    let mut out = Vec::new();
    let mut it = args.into_iter().peekable();
    while let Some(a) = it.next() {
        match tool {
            FlagTool::Cmake => {
                let def = match a.strip_prefix("-D") {
                    Some("") => it.next().unwrap_or_default(),
                    Some(d) => d,
                    None => continue,
                };
                let Some((typed, value)) = def.split_once('=') else { continue };
                let (name, ty) = typed.split_once(':').unwrap_or((typed, "BOOL")); // `-DX:BOOL=ON`
                let value = value.trim_matches(|c| c == '"' || c == '\'');
                if plain_name(name)
                    && plain_name(ty)
                    && !name.starts_with("CMAKE_")
                    && !left_out(name)
                    && plain_value(value)
                {
                    out.push(format!("-D{typed}={value}"));
                }
            }
            FlagTool::Configure => {
                let (switch, value) = a.split_once('=').unwrap_or((a, ""));
                let Some(feature) =
                    ["--enable-", "--disable-", "--with-", "--without-"].iter().find_map(|p| switch.strip_prefix(p))
                else {
                    continue;
                };
                let name = feature.to_ascii_uppercase().replace('-', "_");
                if plain_name(&name) && !left_out(&name) && (value.is_empty() || plain_value(value)) {
                    out.push(a.to_owned());
                }
            }
            FlagTool::Maven => {
                let list = match a.strip_prefix("-P") {
                    Some("") => it.next().unwrap_or_default(),
                    Some(l) => l,
                    None => continue,
                };
                for p in list.split(',') {
                    let bare = p.trim_start_matches(['!', '-']);
                    let lower = bare.to_ascii_lowercase();
                    let ok = !bare.is_empty()
                        && bare.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
                        && !LEFT_OUT_PROFILES.iter().any(|w| lower.contains(w));
                    if ok {
                        out.push(format!("-P{p}"));
                    }
                }
            }
        }
    }
    out
}

/// A CMake or feature name: letters, digits and `_`.
fn plain_name(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A value written out in the file (no variable, matrix value, path or quoting left).
fn plain_value(value: &str) -> bool {
    !value.is_empty()
        && !value.starts_with('/')
        && value.chars().all(|c| c.is_ascii_alphanumeric() || "._+-,".contains(c))
}

fn left_out(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    LEFT_OUT_WORDS.iter().any(|w| upper.contains(w))
}

/// The key a flag sets: `-DX` of `-DX=ON`, `--enable-x`/`--disable-x` both `x`, a profile itself.
fn key(flag: &str) -> String {
    let f = flag.split_once('=').map_or(flag, |(k, _)| k);
    let f = if f.starts_with("-D") { f.split_once(':').map_or(f, |(n, _)| n) } else { f };
    let f = ["--enable-", "--disable-", "--with-", "--without-"].iter().find_map(|p| f.strip_prefix(p)).unwrap_or(f);
    f.to_owned()
}

/// Flags in order, each key once: the first value wins, except that a CMake option whose name
/// speaks of tests is on when any call turns it on (the test job's value, not a packaging job's).
fn merge(flags: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for f in flags {
        match out.iter().position(|o| key(o) == key(&f)) {
            None => out.push(f),
            Some(i) => {
                let on = |v: &str| {
                    v.rsplit_once('=')
                        .is_some_and(|(_, v)| matches!(v.to_ascii_uppercase().as_str(), "ON" | "TRUE" | "YES" | "1"))
                };
                if key(&f).to_ascii_uppercase().contains("TEST") && on(&f) && !on(&out[i]) {
                    out[i] = f;
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_repositories_a_ci_clones_are_read_with_their_file() {
        let travis = "script:\n- mkdir build\n- cd build\n- git clone https://github.com/toml-lang/toml.git\n\
                      - git clone --depth 1 -b v1.0 https://github.com/a/b.git data && make\n\
                      - git clone https://github.com/toml-lang/toml.git\n- git clone $REPO_URL\n- git status\n";
        let read = move |p: &str| (p == ".travis.yml").then(|| travis.to_owned());
        let found = ci_clones(&read, &[".travis.yml".to_owned()]);
        assert_eq!(
            found,
            [CiClone {
                source: ".travis.yml".into(),
                urls: vec!["https://github.com/toml-lang/toml.git".into(), "https://github.com/a/b.git".into()]
            }]
        );
        let none = |p: &str| (p == ".travis.yml").then(|| "script:\n- git clone-ish\n- make\n".to_owned());
        assert_eq!(ci_clones(&none, &[".travis.yml".to_owned()]), []);
    }

    fn read_one(path: &'static str, text: &'static str) -> Vec<CiFlags> {
        let read = move |p: &str| (p == path).then(|| text.to_owned());
        ci_flags(&read, &[path.to_owned()])
    }

    #[test]
    fn cmake_options_of_a_workflows_configure_step() {
        let wf = r#"
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - name: configure
        run: cmake -S . -B build -DCMAKE_BUILD_TYPE=Debug -DDOCTEST_WITH_TESTS=ON -DCMAKE_CXX_STANDARD=${{ matrix.std }} -DJSON_BuildTests=On
      - run: cmake --build build -j 4 -DIGNORED=ON
      - run: |
          mkdir b && cd b && cmake .. \
            -D MYLIB_ENABLE_TESTING=ON \
            -DMYLIB_SANITIZE=address -DENABLE_COVERAGE=ON -DOPT:BOOL=OFF -DPATH=/usr/local # a comment
      - run: ctest --test-dir build
"#;
        let got = read_one(".github/workflows/ci.yml", wf);
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!((got[0].source.as_str(), got[0].tool), (".github/workflows/ci.yml", FlagTool::Cmake));
        assert_eq!(
            got[0].flags,
            ["-DDOCTEST_WITH_TESTS=ON", "-DJSON_BuildTests=On", "-DMYLIB_ENABLE_TESTING=ON", "-DOPT:BOOL=OFF"],
            "CMAKE_*, a matrix value, sanitizers, coverage and a path are left out; `-D NAME` and `\\` continuations read"
        );
    }

    #[test]
    fn a_test_option_is_on_when_any_job_turns_it_on_other_options_keep_the_first_value() {
        let travis =
            "script:\n  - cmake -DFOO_TESTS=OFF -DFOO_SHARED=ON ..\n  - cmake -DFOO_TESTS=ON -DFOO_SHARED=OFF ..\n";
        let got = read_one(".travis.yml", travis);
        assert_eq!(got[0].flags, ["-DFOO_TESTS=ON", "-DFOO_SHARED=ON"]);
    }

    #[test]
    fn configure_switches_and_maven_profiles() {
        let wf = "steps:\n  - run: ./autogen.sh && ./configure --enable-tests --disable-docs --with-zlib --prefix=/usr --enable-gcov --with-ssl=$SSL\n  - run: make check\n  - run: mvn -B -Pci,release verify && mvn -P strict test\n";
        let got = read_one(".github/workflows/build.yaml", wf);
        let of = |tool| got.iter().find(|f| f.tool == tool).map(|f| f.flags.clone()).unwrap_or_default();
        assert_eq!(of(FlagTool::Configure), ["--enable-tests", "--disable-docs", "--with-zlib"]);
        assert_eq!(of(FlagTool::Maven), ["-Pci", "-Pstrict"], "release profiles are left out");
        assert!(of(FlagTool::Cmake).is_empty());
    }

    #[test]
    fn other_platforms_and_non_ci_files_give_nothing() {
        let wf = "steps:\n  - run: cmake -S . -B build -DWIN32_TESTS=ON -G \"Visual Studio 17\" -A x64 windows\n";
        assert!(read_one(".github/workflows/win.yml", wf).is_empty());
        let read = |_: &str| Some("run: cmake -DFOO_TESTS=ON ..".to_owned());
        assert!(ci_flags(&read, &["docs/build.md".to_owned()]).is_empty());
    }

    #[test]
    fn flags_of_several_files_merge_first_file_first() {
        let found = vec![
            CiFlags { source: "a".into(), tool: FlagTool::Cmake, flags: vec!["-DX=1".into(), "-DY_TESTS=OFF".into()] },
            CiFlags { source: "b".into(), tool: FlagTool::Cmake, flags: vec!["-DX=2".into(), "-DY_TESTS=ON".into()] },
            CiFlags { source: "b".into(), tool: FlagTool::Configure, flags: vec!["--enable-x".into()] },
        ];
        assert_eq!(flags_for(&found, FlagTool::Cmake), ["-DX=1", "-DY_TESTS=ON"]);
        assert_eq!(flags_for(&found, FlagTool::Configure), ["--enable-x"]);
    }
}
