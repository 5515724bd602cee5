//! The build options a project's CI passes when it builds to test: CMake `-D<NAME>=<value>`
//! cache options (`-DFOO_BUILD_TESTS=ON`, which a project whose tests are off by default needs),
//! Meson's `-D<name>=<value>` project options (`-Dbuild_tests=true`), `./configure` feature
//! switches (`--enable-x`, `--without-y`) and Maven profiles (`-Pci`), read
//! from the jobs of GitHub workflows, Travis, CircleCI and GitLab CI (`cijobs.rs`).
//!
//! One coherent job gives them, never a union of jobs (two jobs may pass options the project
//! declares mutually exclusive, or a GPU job a language the image lacks): among the jobs that
//! configure with the tool and run the tests, the plainest (`recipes/ci-jobs.toml`: no GPU,
//! sanitizer, coverage, cross or analysis words, the default compiler, fewest options;
//! [`chosen`]). A recipe that takes them (`ci_build_flags = true`) appends them to its own
//! configure step ([`crate::Recipe::add_ci_flags`]); a setup that fails with signs of them
//! ([`option_failure`]) is tried with fewer ([`option_sets`]): the next-plainest job's, the
//! test switches alone, none. The provenance names the job, the options and each attempt.
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
    /// `meson setup ...`: `-D<option>=<value>`.
    Meson,
}

/// Every tool, in the order their jobs are listed.
pub const FLAG_TOOLS: [FlagTool; 4] = [FlagTool::Cmake, FlagTool::Configure, FlagTool::Maven, FlagTool::Meson];

impl FlagTool {
    /// How the flags are named in the provenance (`cmake -D`, `configure`, `mvn -P`).
    pub fn label(self) -> &'static str {
        match self {
            FlagTool::Cmake => "cmake -D",
            FlagTool::Configure => "configure",
            FlagTool::Maven => "mvn -P",
            FlagTool::Meson => "meson -D",
        }
    }

    /// The command it is (`cmake`, `./configure`, `mvn`).
    pub fn command(self) -> &'static str {
        match self {
            FlagTool::Cmake => "cmake",
            FlagTool::Configure => "./configure",
            FlagTool::Maven => "mvn",
            FlagTool::Meson => "meson setup",
        }
    }
}

/// The flags one CI job passes to one build tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CiFlags {
    /// Where they were read (`.github/workflows/ci.yml`).
    pub source: String,
    /// The job (`test`, `build (cc=gcc)`: id and matrix entry, `cijobs.rs`); empty for a CI file
    /// read as one job (Travis, CircleCI, GitLab).
    pub job: String,
    /// The tool they are for.
    pub tool: FlagTool,
    /// The flags, as the tool takes them (`-DJSON_BuildTests=ON`, `--enable-tests`, `-Pci`), in
    /// the job's order, each name once; empty for a job that configures with none.
    pub flags: Vec<String>,
    /// Whether the job runs the tests (`ctest`, `make check`, `mvn test`, a test binary).
    pub runs_tests: bool,
    /// The words of `ci-jobs.toml` that make it less plain (`cuda`, `clang*`), each once.
    pub marks: Vec<String>,
    /// How many of `marks` are of `not_plain` (the others are of `not_default`).
    pub not_plain: usize,
}

impl CiFlags {
    /// How the provenance names the job: `.github/workflows/ci.yml job test`, or the file.
    pub fn job_label(&self) -> String {
        if self.job.is_empty() { self.source.clone() } else { format!("{} job {}", self.source, self.job) }
    }

    /// Plainer first: a job that runs the tests, fewer `not_plain` words, fewer `not_default`
    /// words, fewer options.
    fn rank(&self) -> (bool, usize, usize, usize) {
        (!self.runs_tests, self.not_plain, self.marks.len() - self.not_plain, self.flags.len())
    }
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

/// The build flags of every CI job of a commit that configures with a tool (`cijobs.rs`), per
/// tool the plainest job first ([`CiFlags::rank`], then file and job order). `read` returns a
/// file's text at the commit, `paths` lists every path of its tree.
pub fn ci_flags(read: &dyn Fn(&str) -> Option<String>, paths: &[String]) -> Vec<CiFlags> {
    let mut out = Vec::new();
    for job in crate::cijobs::ci_jobs(read, paths) {
        let commands: Vec<&String> = job.commands.iter().filter(|c| !crate::cipackages::other_platform(c)).collect();
        let runs_tests = commands.iter().any(|c| runs_tests(c));
        for tool in FLAG_TOOLS {
            let calls: Vec<Vec<&str>> = commands.iter().flat_map(|c| invocations(&words(c), tool)).collect();
            if calls.is_empty() {
                continue;
            }
            let flags = merge(calls.iter().flat_map(|args| flags_of(args.clone(), tool)));
            let said: Vec<&str> = std::iter::once(job.identity.as_str())
                .chain(calls.iter().flatten().copied())
                .chain(crate::cipackages::other_platform(&job.identity).then_some("windows"))
                .collect();
            let (marks, not_plain) = marks(&said);
            out.push(CiFlags {
                source: job.source.clone(),
                job: job.name.clone(),
                tool,
                flags,
                runs_tests,
                marks,
                not_plain,
            });
        }
    }
    out.sort_by_key(|f| (f.tool, f.rank()));
    out
}

/// The job whose options a recipe configuring with `tool` takes: the plainest.
pub fn chosen(found: &[CiFlags], tool: FlagTool) -> Option<&CiFlags> {
    found.iter().find(|f| f.tool == tool)
}

/// The flags of the job chosen for `tool` ([`chosen`]).
pub fn flags_for(found: &[CiFlags], tool: FlagTool) -> Vec<String> {
    chosen(found, tool).map(|f| f.flags.clone()).unwrap_or_default()
}

/// Why the job of [`chosen`] was: how many there were and what the others had.
pub fn choice_reason(found: &[CiFlags], tool: FlagTool) -> String {
    let jobs: Vec<&CiFlags> = found.iter().filter(|f| f.tool == tool).collect();
    let Some(first) = jobs.first() else { return String::new() };
    let testing = jobs.iter().filter(|j| j.runs_tests).count();
    let mut reason = if first.runs_tests {
        format!("the plainest of {testing} CI jobs that configure with {} and run the tests", tool.command())
    } else {
        format!("the plainest of {} CI jobs that configure with {} (none runs the tests)", jobs.len(), tool.command())
    };
    let others: Vec<String> =
        jobs[1..].iter().take(6).map(|j| format!("{} ({})", j.job_label(), j.why_not())).collect();
    if !others.is_empty() {
        reason.push_str(&format!("; passed over: {}", others.join("; ")));
    }
    reason
}

impl CiFlags {
    fn why_not(&self) -> String {
        let mut why = Vec::new();
        if !self.runs_tests {
            why.push("runs no tests".to_owned());
        }
        if !self.marks.is_empty() {
            why.push(self.marks.join(", "));
        }
        why.push(format!("{} options", self.flags.len()));
        why.join(", ")
    }
}

/// A set of the CI's build options to configure with: one job's, or fewer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CiOptionSet {
    /// The tool they are for.
    pub tool: FlagTool,
    /// Where they come from (`.github/workflows/ci.yml job test`, `the test switches of ...`,
    /// `none`).
    pub label: String,
    /// The options, as the tool takes them.
    pub flags: Vec<String>,
}

/// The option sets a recipe configuring with `tool` tries, in order, each after the one before
/// failed with signs of its options ([`option_failure`]): the plainest job's, the next-plainest
/// job's of the same kind (running the tests as it does, no more `not_plain` words), only the
/// switches of the first that turn tests on (`ci-jobs.toml` `test_switch`), none. Each set
/// differs from those before it; at most four.
pub fn option_sets(found: &[CiFlags], tool: FlagTool) -> Vec<CiOptionSet> {
    let jobs: Vec<&CiFlags> = found.iter().filter(|f| f.tool == tool).collect();
    let Some(first) = jobs.first() else { return Vec::new() };
    let mut sets = vec![CiOptionSet { tool, label: first.job_label(), flags: first.flags.clone() }];
    let mut push = |set: CiOptionSet| {
        if !sets.iter().any(|s| s.flags == set.flags) {
            sets.push(set);
        }
    };
    if let Some(next) = jobs[1..]
        .iter()
        .find(|j| j.runs_tests == first.runs_tests && j.not_plain <= first.not_plain && j.flags != first.flags)
    {
        push(CiOptionSet { tool, label: next.job_label(), flags: next.flags.clone() });
    }
    let switches = &data().test_switch;
    let tests: Vec<String> = first
        .flags
        .iter()
        .filter(|f| {
            let name = key(f).to_ascii_uppercase();
            switches.iter().any(|w| name.contains(w.as_str()))
        })
        .cloned()
        .collect();
    push(CiOptionSet { tool, label: format!("the test switches of {}", first.job_label()), flags: tests });
    push(CiOptionSet { tool, label: "none (the recipe's own options)".into(), flags: Vec::new() });
    sets
}

/// The first line of a failed setup's `log` that shows its configure step refused the options
/// it was given (`ci-jobs.toml` `option_failure`), with the line after it when it ends in `:`
/// (CMake puts the message of an error there).
pub fn option_failure(log: &str) -> Option<String> {
    let lines: Vec<&str> = log.lines().collect();
    let at = lines.iter().position(|l| data().option_failure.iter().any(|s| l.contains(s.as_str())))?;
    let mut line = lines[at].trim().to_owned();
    if line.ends_with(':')
        && let Some(next) = lines.get(at + 1).map(|l| l.trim()).filter(|l| !l.is_empty())
    {
        line.push(' ');
        line.push_str(next);
    }
    Some(line.chars().take(300).collect())
}

/// `ci-jobs.toml`, read.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct JobData {
    not_plain: Vec<String>,
    not_default: Vec<String>,
    option_failure: Vec<String>,
    test_switch: Vec<String>,
}

fn data() -> &'static JobData {
    static DATA: std::sync::OnceLock<JobData> = std::sync::OnceLock::new();
    DATA.get_or_init(|| toml::from_str(include_str!("../recipes/ci-jobs.toml")).expect("recipes/ci-jobs.toml reads"))
}

/// The words of `ci-jobs.toml` among `said` (an option turned off left out), `not_plain` ones
/// first, each once; and how many are `not_plain`.
fn marks(said: &[&str]) -> (Vec<String>, usize) {
    let off = |w: &str| {
        let value = w.rsplit_once('=').map(|(_, v)| v.to_ascii_uppercase());
        w.starts_with("--disable-")
            || w.starts_with("--without-")
            || w.starts_with("-D") && value.is_some_and(|v| matches!(v.as_str(), "OFF" | "FALSE" | "NO" | "0"))
    };
    let words: Vec<String> = said
        .iter()
        .flat_map(|s| s.split_whitespace())
        .filter(|w| !off(w))
        .flat_map(|w| w.split(|c: char| !c.is_ascii_alphanumeric()))
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
        .collect();
    let hit = |pattern: &str| match pattern.strip_suffix('*') {
        Some(prefix) => words.iter().any(|w| w.starts_with(prefix)),
        None => words.iter().any(|w| w == pattern),
    };
    let d = data();
    let mut out: Vec<String> = d.not_plain.iter().filter(|p| hit(p)).cloned().collect();
    let not_plain = out.len();
    out.extend(d.not_default.iter().filter(|p| hit(p)).cloned());
    (out, not_plain)
}

/// Whether a command runs tests: `ctest`, `make`/`ninja` with a `test` or `check` target,
/// `cmake --build ... --target test`, `meson test`, `mvn` with `test`, `verify`, `package` or
/// `install`, or a program whose file name speaks of tests run by its path (`./build/unit_tests`).
fn runs_tests(command: &str) -> bool {
    let w = words(command);
    let op = |a: &str| matches!(a, ";" | "&&" | "||" | "|" | "&");
    w.iter().enumerate().any(|(i, word)| {
        let base = word.rsplit('/').next().unwrap_or(word);
        let args = || w[i + 1..].iter().take_while(|a| !op(a));
        let target = |a: &&str| matches!(*a, "test" | "tests" | "check");
        match base {
            "ctest" => true,
            "make" | "gmake" | "ninja" => args().any(target),
            "meson" => w.get(i + 1) == Some(&"test"),
            "mvn" | "mvnw" => args().any(|a| matches!(*a, "test" | "verify" | "package" | "install")),
            "cmake" => args().collect::<Vec<_>>().windows(2).any(|p| *p[0] == "--target" && target(p[1])),
            _ => {
                let command_position = i == 0 || op(w[i - 1]) || matches!(w[i - 1], "sudo" | "time" | "exec");
                command_position
                    && (word.starts_with("./") || word.contains('/'))
                    && !word.starts_with('-')
                    && base.to_ascii_lowercase().contains("test")
            }
        }
    })
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
        for c in crate::cijobs::commands(&text).iter().filter(|c| !crate::cipackages::other_platform(c)) {
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
        FlagTool::Meson => w == "meson" || w.ends_with("/meson"),
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
        // Meson configures with `setup`, `configure` or (before 0.64) a build folder as the
        // first word; its other commands (`compile`, `test`, `install`, ...) take no options.
        if tool == FlagTool::Meson && args.first().is_some_and(|a| MESON_COMMANDS.contains(a)) {
            continue;
        }
        out.push(args);
    }
    out
}

/// Meson's commands that do not configure (`meson compile`, `meson test`, ...).
const MESON_COMMANDS: &[&str] = &[
    "compile",
    "test",
    "install",
    "dist",
    "introspect",
    "init",
    "wrap",
    "subprojects",
    "rewrite",
    "devenv",
    "env2mfile",
    "format",
    "fmt",
    "help",
    "--version",
    "-v",
];

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
            FlagTool::Meson => {
                let def = match a.strip_prefix("-D") {
                    Some("") => it.next().unwrap_or_default(),
                    Some(d) => d,
                    None => continue,
                };
                let Some((name, value)) = def.split_once('=') else { continue };
                let value = value.trim_matches(|c| c == '"' || c == '\'');
                // A subproject's option (`sub:opt`) and built-in ones that name the machine
                // (`prefix`, `libdir`, `*_args`, `*_link_args`) are left out.
                let bare = name.replace('-', "_");
                let machine = ["prefix", "libdir", "bindir", "includedir", "buildtype", "backend"].contains(&name)
                    || name.ends_with("_args");
                if plain_name(&bare) && !machine && !left_out(&bare) && plain_value(value) {
                    out.push(format!("-D{name}={value}"));
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

/// The flags of one job's calls in order, each key once: the first value wins, except that a
/// CMake option whose name speaks of tests is on when any call turns it on.
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
    fn meson_options_of_the_setup_step_and_none_of_its_other_commands() {
        let wf = "jobs:\n  linux:\n    steps:\n      - run: CXX=c++ meson setup build --buildtype=${{ matrix.type }} -Ddevel=true -Db_lto=false -D build_tests=true -Dprefix=/usr -Dcpp_args=-O0 -Dsub:opt=1\n      - run: meson compile -C build -Dx=1\n      - run: meson test -C build --verbose\n";
        let got = read_one(".github/workflows/ci.yaml", wf);
        let meson = got.iter().find(|f| f.tool == FlagTool::Meson).expect("a meson job");
        assert_eq!(meson.flags, ["-Ddevel=true", "-Dbuild_tests=true"], "LTO, machine and subproject options left out");
        assert!(meson.runs_tests);
        // Before 0.64 the build folder came first: `meson build -Dtests=true`.
        let old = read_one(".travis.yml", "script:\n  - meson build -Dtests=true\n  - ninja -C build test\n");
        assert_eq!(flags_for(&old, FlagTool::Meson), ["-Dtests=true"]);
        let sets = option_sets(&got, FlagTool::Meson);
        let labels: Vec<&[String]> = sets.iter().map(|s| s.flags.as_slice()).collect();
        assert_eq!(labels, [&meson.flags[..], &["-Dbuild_tests=true".to_owned()][..], &[][..]]);
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

    /// A C++ library's workflow: one matrix job whose entries pass one of two options its
    /// CMakeLists declares mutually exclusive, or enable CUDA; a job that builds the docs; one
    /// on Windows.
    const MATRIX_WORKFLOW: &str = r#"
name: CI
on: [push, pull_request]
jobs:
  build:
    name: ${{ matrix.name }}
    runs-on: ${{ matrix.os }}
    strategy:
      fail-fast: false
      matrix:
        include:
          - name: cuda
            os: ubuntu-22.04
            flags: "-DP_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=75"
          - name: precompiled headers
            os: ubuntu-latest
            flags: -DP_PRECOMPILE=ON
          - name: single file
            os: ubuntu-latest
            flags: -DP_SINGLE_FILE=ON
          - { name: msvc, os: windows-latest, flags: -DP_STATIC=ON }
    steps:
      - uses: actions/checkout@v4
      - name: Configure
        run: >
          cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
          -DP_BUILD_TESTS=ON ${{ matrix.flags }}
      - run: cmake --build build --parallel
      - name: Test
        working-directory: build
        run: ctest --output-on-failure
  docs:
    runs-on: ubuntu-latest
    steps:
      - run: cmake -S . -B build -DP_BUILD_DOCS=ON && cmake --build build --target docs
"#;

    #[test]
    fn one_job_is_chosen_the_plainest_that_runs_the_tests_never_a_union() {
        let got = read_one(".github/workflows/ci.yml", MATRIX_WORKFLOW);
        let jobs: Vec<(&str, &[String])> = got.iter().map(|f| (f.job.as_str(), f.flags.as_slice())).collect();
        assert_eq!(jobs.len(), 5, "four matrix entries and the docs job: {jobs:#?}");
        let first = chosen(&got, FlagTool::Cmake).unwrap();
        assert_eq!(
            first.job_label(),
            ".github/workflows/ci.yml job build (name=precompiled headers, os=ubuntu-latest, flags=-DP_PRECOMPILE=ON)"
        );
        assert_eq!(flags_for(&got, FlagTool::Cmake), ["-DP_BUILD_TESTS=ON", "-DP_PRECOMPILE=ON"]);
        let cuda = got.iter().find(|f| f.job.contains("cuda")).unwrap();
        assert_eq!(cuda.marks, ["cuda*"]);
        let windows = got.iter().find(|f| f.job.contains("msvc")).unwrap();
        assert_eq!(windows.marks, ["windows", "msvc"]);
        let docs = got.iter().find(|f| f.job == "docs").unwrap();
        assert!(!docs.runs_tests && docs.marks == ["docs"], "{docs:?}");
        let order: Vec<&str> = got.iter().map(|f| f.job.split(" (").next().unwrap()).collect();
        assert_eq!(order, ["build", "build", "build", "build", "docs"]);
        assert!(got[1].job.contains("single file") && got[4].job == "docs", "{order:?}");
        let reason = choice_reason(&got, FlagTool::Cmake);
        assert!(
            reason.starts_with("the plainest of 4 CI jobs that configure with cmake and run the tests; passed over: ")
        );
        assert!(reason.contains("docs (runs no tests, docs, 1 options)"), "{reason}");
    }

    #[test]
    fn a_plain_job_that_only_turns_the_tests_on_beats_the_sanitizer_coverage_and_clang_jobs() {
        let wf = r#"
jobs:
  sanitizers:
    runs-on: ubuntu-latest
    steps:
      - run: cmake -B b -DFOO_BUILD_TESTS=ON -DFOO_SANITIZE=address -DCMAKE_CXX_FLAGS=-fsanitize=address
      - run: cmake --build b && ctest --test-dir b
  coverage:
    runs-on: ubuntu-latest
    steps:
      - run: cmake -B b -DFOO_BUILD_TESTS=ON -DFOO_COVERAGE=ON
      - run: cmake --build b && cd b && ctest
  compilers:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        cxx: [clang++-15]
    steps:
      - run: CXX=${{ matrix.cxx }} cmake -B b -DFOO_BUILD_TESTS=ON
      - run: cmake --build b && ./b/tests/foo_tests
  build-only:
    runs-on: ubuntu-latest
    steps:
      - run: cmake -B b && cmake --build b
  linux:
    runs-on: ubuntu-latest
    steps:
      - run: |
          cmake -B build -DFOO_BUILD_TESTS=ON
          cmake --build build
          make -C build test
"#;
        let got = read_one(".github/workflows/ci.yml", wf);
        let order: Vec<&str> = got.iter().map(|f| f.job.as_str()).collect();
        assert_eq!(order, ["linux", "compilers (cxx=clang++-15)", "coverage", "sanitizers", "build-only"]);
        assert_eq!(flags_for(&got, FlagTool::Cmake), ["-DFOO_BUILD_TESTS=ON"]);
        assert!(got.iter().take(4).all(|f| f.runs_tests), "ctest, make test and a test binary run the tests");
        assert_eq!(got[1].marks, ["clang*"]);
        assert_eq!(got[3].marks, ["sanitize*", "fsanitize*"], "a left-out option still marks its job");
        assert_eq!(
            option_sets(&got, FlagTool::Cmake).iter().map(|s| s.label.as_str()).collect::<Vec<_>>(),
            [".github/workflows/ci.yml job linux", "none (the recipe's own options)"],
            "the next jobs pass the same options; the test switch is all the first has"
        );
    }

    #[test]
    fn options_that_fail_are_tried_fewer_next_plainest_job_then_test_switches_then_none() {
        let got = read_one(".github/workflows/ci.yml", MATRIX_WORKFLOW);
        let sets = option_sets(&got, FlagTool::Cmake);
        let shown: Vec<(String, Vec<String>)> = sets.iter().map(|s| (s.label.clone(), s.flags.clone())).collect();
        let job = |entry: &str| format!(".github/workflows/ci.yml job build ({entry})");
        assert_eq!(
            shown,
            [
                (
                    job("name=precompiled headers, os=ubuntu-latest, flags=-DP_PRECOMPILE=ON"),
                    vec!["-DP_BUILD_TESTS=ON".to_owned(), "-DP_PRECOMPILE=ON".to_owned()]
                ),
                (
                    job("name=single file, os=ubuntu-latest, flags=-DP_SINGLE_FILE=ON"),
                    vec!["-DP_BUILD_TESTS=ON".to_owned(), "-DP_SINGLE_FILE=ON".to_owned()]
                ),
                (format!("the test switches of {}", sets[0].label), vec!["-DP_BUILD_TESTS=ON".to_owned()]),
                ("none (the recipe's own options)".to_owned(), vec![]),
            ],
            "never the CUDA or Windows job's"
        );
        assert!(option_sets(&got, FlagTool::Maven).is_empty());
        // The lines that send a setup to the next set, and what it records of them.
        let fatal = "-- Configuring\nCMake Error at CMakeLists.txt:9 (message):\n  P_PRECOMPILE and P_SINGLE_FILE are mutually exclusive\n\n-- Configuring incomplete, errors occurred!\n";
        assert_eq!(
            option_failure(fatal).as_deref(),
            Some("CMake Error at CMakeLists.txt:9 (message): P_PRECOMPILE and P_SINGLE_FILE are mutually exclusive")
        );
        let cuda = "-- The CUDA compiler identification is unknown\nCMake Error at /usr/share/cmake-3.25/Modules/CMakeDetermineCUDACompiler.cmake:603 (message):\n  Failed to find nvcc.\n";
        assert!(option_failure(cuda).unwrap().ends_with("(message): Failed to find nvcc."));
        assert_eq!(option_failure("src/a.cpp:3:1: error: expected ';'\nninja: build stopped\n"), None);
    }
}
