//! The toolchain version of an instance: what the repository asks for at its base commit (build
//! files and CI configuration, read by `detect.rs` into [`VersionRequest`]s), the versions this
//! machine can install (`recipes/releases.toml`, data), the choice between them ([`choose`]), and
//! the bounded search when a setup fails in a way that names the toolchain ([`classify_failure`],
//! [`next_candidate`]). Pure: never runs a container or reads a repository.

use std::collections::BTreeMap;

use serde::Deserialize;
use swe_forge_core::Day;

use crate::RecipeError;

/// A toolchain family whose version is chosen per instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Tool {
    /// The JDK (`maven.compiler.source`, `java-version`).
    Java,
    /// Node.js (`engines.node`, `.nvmrc`, `node-version`).
    Node,
    /// Go (`go.mod`'s `go` and `toolchain`, `go-version`).
    Go,
    /// rustc (`rust-version`, `rust-toolchain`).
    Rust,
    /// CMake (`cmake_minimum_required`); recorded, not chosen.
    Cmake,
    /// The C library (and compiler) under C and C++ code: changed only by the search.
    C,
}

impl Tool {
    /// The family's name, as in releases.toml.
    pub fn name(self) -> &'static str {
        match self {
            Tool::Java => "java",
            Tool::Node => "node",
            Tool::Go => "go",
            Tool::Rust => "rust",
            Tool::Cmake => "cmake",
            Tool::C => "c",
        }
    }
}

/// What a request says about the versions that fit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Want {
    /// This version (`.nvmrc`): the nearest version at or above it.
    Exact(Version),
    /// This version or newer (`go.mod`, `rust-version`).
    AtLeast(Version),
    /// A language level (Java source/target/release): a JDK at least this new that still
    /// compiles it.
    Level(Version),
    /// A semver range (`engines.node`: `>=12 <17`, `^14 || ^16`).
    Range(String),
    /// Versions the project's CI ran (a matrix): preferred among those that fit.
    Tested(Vec<Version>),
}

/// One version a repository asks for, and where it says so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionRequest {
    /// The family asked for.
    pub tool: Tool,
    /// Where: `pom.xml maven.compiler.source`, `.github/workflows/ci.yml node-version`.
    pub source: String,
    /// The text as written (`1.6`, `>=14`, `[10, 12, 14]`).
    pub raw: String,
    /// What it means.
    pub want: Want,
}

/// `major.minor` (Java `1.8` is 8; a missing minor is 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version {
    /// Major.
    pub major: u32,
    /// Minor.
    pub minor: u32,
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.minor == 0 { write!(f, "{}", self.major) } else { write!(f, "{}.{}", self.major, self.minor) }
    }
}

impl Version {
    /// Reads `16`, `v16.20.2`, `1.8`, `18.x`, `go1.22.3`, `openjdk11`, `'1.21'` (Java's `1.x` is x).
    pub fn parse(tool: Tool, text: &str) -> Option<Version> {
        let t = text.trim().trim_matches(|c| c == '"' || c == '\'').trim();
        let start = t.find(|c: char| c.is_ascii_digit())?;
        // Names around the number: `go1.22`, `openjdk11`, `v16`; not words like `lts/hydrogen`.
        let prefix = &t[..start];
        if !prefix.is_empty()
            && !["v", "go", "jdk", "openjdk", "oraclejdk", "java"].contains(&prefix.to_lowercase().as_str())
        {
            return None;
        }
        let mut parts = t[start..].split(['.', '-', '_', '+']);
        let major: u32 = parts.next()?.parse().ok()?;
        let minor: u32 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
        if tool == Tool::Java && major == 1 && minor > 0 {
            return Some(Version { major: minor, minor: 0 });
        }
        Some(Version { major, minor })
    }

    fn full(tool: Tool, text: &str) -> Option<(u32, u32, u32)> {
        let v = Version::parse(tool, text)?;
        let patch = text
            .trim()
            .trim_start_matches(|c: char| !c.is_ascii_digit())
            .split('.')
            .nth(2)
            .and_then(|p| p.parse().ok())
            .unwrap_or(0);
        Some((v.major, v.minor, patch))
    }
}

/// One version of a family this machine can install (a `[[<family>]]` entry of releases.toml).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Release {
    /// The version (`16`, `1.24`, `8`).
    pub version: String,
    /// The toolchain (table of toolchains.toml) that holds it.
    pub toolchain: String,
    /// From this day on (YYYY-MM-DD) it was the version of its time.
    pub current_from: String,
    /// Java: the oldest language level its compiler accepts.
    #[serde(default)]
    pub accepts_from: Option<String>,
    /// Variables of a template toolchain (`fetch`): the image is then `<family><version>`.
    #[serde(default)]
    pub vars: BTreeMap<String, String>,
}

impl Release {
    /// The name of its toolchain image: the toolchain's, or `<family><version>` for a template.
    pub fn toolchain_name(&self, tool: Tool) -> String {
        if self.vars.is_empty() { self.toolchain.clone() } else { format!("{}{}", tool.name(), self.version) }
    }

    /// Whether it was already the version of its time on `day` (`current_from` is checked by
    /// `Releases::parse`).
    fn current_on(&self, day: Day) -> bool {
        Day::parse(&self.current_from).is_some_and(|from| from <= day)
    }

    fn v(&self, tool: Tool) -> Version {
        Version::parse(tool, &self.version).unwrap_or(Version { major: 0, minor: 0 })
    }

    /// The exact version, for ranges: `NODE_VERSION`, else the version itself.
    fn exact(&self, tool: Tool) -> (u32, u32, u32) {
        let text = self.vars.get("NODE_VERSION").map(String::as_str).unwrap_or(&self.version);
        Version::full(tool, text).unwrap_or((0, 0, 0))
    }
}

/// Toolchain versions tried per instance by default when a setup fails in a way that names the
/// toolchain, the first choice included: as many as the longest search (C's, after `-Werror`)
/// makes.
pub const DEFAULT_TOOLCHAIN_ATTEMPTS: u32 = 5;

/// Every family's installable versions, oldest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Releases(pub BTreeMap<Tool, Vec<Release>>);

const RELEASES: &str = include_str!("../recipes/releases.toml");

impl Releases {
    /// The built-in data (`recipes/releases.toml`).
    pub fn builtin() -> Releases {
        Releases::parse(RELEASES).expect("recipes/releases.toml is checked by its tests")
    }

    /// Reads releases.toml text.
    pub fn parse(text: &str) -> Result<Releases, RecipeError> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct File {
            #[serde(default)]
            java: Vec<Release>,
            #[serde(default)]
            node: Vec<Release>,
            #[serde(default)]
            go: Vec<Release>,
            #[serde(default)]
            rust: Vec<Release>,
            #[serde(default)]
            c: Vec<Release>,
        }
        let f: File = toml::from_str(text)?;
        let mut all = BTreeMap::new();
        for (tool, mut list) in
            [(Tool::Java, f.java), (Tool::Node, f.node), (Tool::Go, f.go), (Tool::Rust, f.rust), (Tool::C, f.c)]
        {
            for r in &list {
                if Version::parse(tool, &r.version).is_none() {
                    return Err(RecipeError::ReleaseVersion { family: tool.name(), version: r.version.clone() });
                }
                if Day::parse(&r.current_from).is_none() {
                    return Err(RecipeError::ReleaseDay {
                        family: tool.name(),
                        version: r.version.clone(),
                        current_from: r.current_from.clone(),
                    });
                }
            }
            list.sort_by_key(|r| r.v(tool));
            all.insert(tool, list);
        }
        Ok(Releases(all))
    }

    /// The family whose releases include toolchain `name` (a recipe's default), and that release.
    pub fn family_of(&self, toolchain: &str) -> Option<(Tool, &Release)> {
        self.0
            .iter()
            .find_map(|(tool, list)| list.iter().find(|r| r.toolchain_name(*tool) == toolchain).map(|r| (*tool, r)))
    }

    /// The release whose image is named `name` (`node16`), for templates.
    pub fn template_named(&self, name: &str) -> Option<&Release> {
        self.0
            .iter()
            .find_map(|(tool, list)| list.iter().find(|r| !r.vars.is_empty() && r.toolchain_name(*tool) == name))
    }
}

/// Why a version was chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    /// The family.
    pub tool: Tool,
    /// The release taken.
    pub release: Release,
    /// In words: which requests decided it.
    pub reason: String,
}

/// The version of `tool` for a commit made on `day` (YYYY-MM-DD) asking for `requests`: of the
/// versions every request admits, one the CI tested when there is one; otherwise the nearest to
/// an exact request; otherwise the newest current on `day` (the oldest when none was yet), never
/// newer than `default` (the recipe's toolchain, the version every recent commit gets) unless a
/// request needs it. When no version admits every request, the requests that admit none are left
/// out (and said so).
pub fn choose(releases: &Releases, tool: Tool, requests: &[VersionRequest], day: Day, default: &str) -> Option<Choice> {
    let list = releases.0.get(&tool)?;
    if tool == Tool::C {
        // Old C code mostly builds on today's C library: the default, unless the setup says not.
        let release = list.iter().find(|r| r.toolchain_name(tool) == default)?.clone();
        let reason = "the C library of the base image; an older one only when a setup fails on the newer".into();
        return Some(Choice { tool, release, reason });
    }
    if list.is_empty() {
        return None;
    }
    let requests: Vec<&VersionRequest> = requests.iter().filter(|r| r.tool == tool).collect();
    let mut notes = Vec::new();
    let mut binding: Vec<&VersionRequest> = Vec::new();
    for r in requests.iter().filter(|r| !matches!(r.want, Want::Tested(_))) {
        if list.iter().any(|c| admits(tool, r, c)) {
            binding.push(r);
        } else {
            notes.push(format!("no version here fits {} = {}", r.source, r.raw));
        }
    }
    let mut pool: Vec<&Release> = list.iter().filter(|c| binding.iter().all(|r| admits(tool, r, c))).collect();
    if pool.is_empty() {
        // Requests that contradict each other: the first one wins.
        notes.push("the requests contradict each other; the first one decides".into());
        binding.truncate(1);
        pool = list.iter().filter(|c| binding.iter().all(|r| admits(tool, r, c))).collect();
    }
    let said = |rs: &[&VersionRequest]| rs.iter().map(|r| format!("{} = {}", r.source, r.raw)).collect::<Vec<_>>();
    let current = |c: &&&Release| c.current_on(day);
    let tested: Vec<&VersionRequest> = requests.iter().copied().filter(|r| matches!(r.want, Want::Tested(_))).collect();
    let in_ci: Vec<&Release> = pool
        .iter()
        .copied()
        .filter(|c| {
            tested.iter().any(|r| match &r.want {
                Want::Tested(vs) => vs.iter().any(|v| same_version(tool, *v, c.v(tool))),
                _ => false,
            })
        })
        .collect();
    let exact = binding.iter().find_map(|r| match r.want {
        Want::Exact(v) => Some(v),
        _ => None,
    });
    let (release, mut reason) = if !in_ci.is_empty() {
        let pick = in_ci.iter().rev().find(current).or(in_ci.first()).copied()?;
        let mut why = said(&tested);
        why.extend(said(&binding));
        (pick, format!("tested by the project's CI: {}", why.join(", ")))
    } else if let Some(v) = exact {
        let pick = pool.iter().find(|c| c.v(tool) >= v).or(pool.last()).copied()?;
        (pick, format!("asked for: {}", said(&binding).join(", ")))
    } else {
        let cap = list.iter().find(|r| r.toolchain_name(tool) == default).map(|r| r.v(tool));
        let capped: Vec<&Release> = pool.iter().copied().filter(|c| cap.is_none_or(|m| c.v(tool) <= m)).collect();
        let pool = if capped.is_empty() { &pool } else { &capped };
        let pick = pool.iter().rev().find(current).or(pool.first()).copied()?;
        let when = if pick.current_on(day) {
            format!("the version current on {day}")
        } else {
            format!("the oldest version here (none was current on {day})")
        };
        if binding.is_empty() {
            (pick, format!("nothing pins a version: {when}"))
        } else {
            (pick, format!("{when} among those that fit {}", said(&binding).join(", ")))
        }
    };
    if !notes.is_empty() {
        reason.push_str(&format!(" ({})", notes.join("; ")));
    }
    Some(Choice { tool, release: release.clone(), reason })
}

/// The versions of `tool` the project's CI tested (its matrices: [`Want::Tested`] requests), for
/// the search's order ([`next_candidate`]).
pub fn tested_versions(requests: &[VersionRequest], tool: Tool) -> Vec<Version> {
    requests
        .iter()
        .filter(|r| r.tool == tool)
        .filter_map(|r| match &r.want {
            Want::Tested(vs) => Some(vs.iter().copied()),
            _ => None,
        })
        .flatten()
        .collect()
}

fn same_version(tool: Tool, asked: Version, have: Version) -> bool {
    match tool {
        // Go and Rust minors are releases of their own.
        Tool::Go | Tool::Rust => asked.major == have.major && asked.minor == have.minor,
        _ => asked.major == have.major,
    }
}

/// Whether release `c` fits request `r`.
fn admits(tool: Tool, r: &VersionRequest, c: &Release) -> bool {
    let have = c.v(tool);
    match &r.want {
        Want::Exact(v) => have.major >= v.major,
        Want::AtLeast(v) => have >= *v,
        Want::Level(v) => {
            let oldest = c.accepts_from.as_deref().and_then(|a| Version::parse(tool, a));
            have.major >= v.major && oldest.is_none_or(|o| v.major >= o.major)
        }
        Want::Range(range) => semver_range_admits(range, c.exact(tool)),
        Want::Tested(_) => true,
    }
}

/// Whether `v` satisfies an npm semver range (`||` of space-separated comparators; `^`, `~`,
/// `x` wildcards, hyphen ranges). A range it cannot read admits everything.
pub fn semver_range_admits(range: &str, v: (u32, u32, u32)) -> bool {
    let range = range.trim();
    if range.is_empty() || range == "*" {
        return true;
    }
    range.split("||").any(|alt| {
        let alt = alt.trim();
        if let Some((lo, hi)) = alt.split_once(" - ") {
            return comparator(&format!(">={}", lo.trim()), v) != Some(false)
                && comparator(&format!("<={}", hi.trim()), v) != Some(false);
        }
        // `>= 12` is `>=12`.
        let mut tokens: Vec<String> = Vec::new();
        for t in alt.split_whitespace() {
            match tokens.last_mut() {
                Some(last) if ["<", "<=", ">", ">=", "=", "^", "~"].contains(&last.as_str()) => last.push_str(t),
                _ => tokens.push(t.to_owned()),
            }
        }
        tokens.iter().all(|t| comparator(t, v) != Some(false))
    })
}

/// One comparator; None when it cannot be read.
fn comparator(t: &str, v: (u32, u32, u32)) -> Option<bool> {
    let (op, rest) = ["<=", ">=", "<", ">", "=", "^", "~"]
        .iter()
        .find_map(|op| t.strip_prefix(op).map(|r| (*op, r)))
        .unwrap_or(("", t));
    let rest = rest.trim().trim_start_matches('v');
    let parts: Vec<Option<u32>> = rest.split('.').map(|p| p.parse().ok()).collect();
    let major = (*parts.first()?)?;
    let minor = parts.get(1).copied().flatten();
    let patch = parts.get(2).copied().flatten();
    let lo = (major, minor.unwrap_or(0), patch.unwrap_or(0));
    // The first version past a partial one (`14` -> 15.0.0, `14.2` -> 14.3.0).
    let next_partial = match (minor, patch) {
        (None, _) => (major + 1, 0, 0),
        (Some(m), None) => (major, m + 1, 0),
        (Some(m), Some(p)) => (major, m, p + 1),
    };
    Some(match op {
        ">=" => v >= lo,
        ">" => v >= next_partial,
        "<" => v < lo,
        "<=" => v < next_partial,
        "^" => v >= lo && v < if major > 0 { (major + 1, 0, 0) } else { (0, lo.1 + 1, 0) },
        "~" => v >= lo && v < if minor.is_some() { (major, lo.1 + 1, 0) } else { (major + 1, 0, 0) },
        _ => v >= lo && v < next_partial,
    })
}

/// Which way a failure points: the toolchain was too new, too old, or it is not said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// An older version may work (a removed source level, a removed API).
    TooNew,
    /// A newer version may work (a release the compiler does not know, an engines minimum).
    TooOld,
    /// The toolchain is named but not which way.
    Unknown,
    /// Too new for the project's language level (Java's `-source 8` warnings made errors by
    /// `-Werror` on a newer JDK): the version of that level first.
    Level(u32),
    /// The compiler ran out of thread stack (javac's `StackOverflowError` on a long file): the
    /// same version with a bigger stack ([`bigger_stack_env`]), then another version.
    Stack,
}

/// The start of the line a [`Direction::Stack`] sign records (a search's attempt): after one,
/// the compiler runs with a bigger thread stack ([`raised_stack`]).
pub const COMPILER_STACK: &str = "java.lang.StackOverflowError in javac";

/// The thread stack javac gets after a [`Direction::Stack`] failure.
pub const BIGGER_STACK: &str = "-Xss64m";

/// Whether a search raised the compiler's thread stack: one of its attempts failed with a
/// [`Direction::Stack`] sign (its recorded line; attempts are read back from records).
pub fn raised_stack<'a>(attempt_errors: impl IntoIterator<Item = &'a str>) -> bool {
    attempt_errors.into_iter().any(|e| e.starts_with(COMPILER_STACK))
}

/// The variables that give `tool`'s compiler a bigger thread stack over a toolchain's `env`:
/// Maven's JVM (`MAVEN_OPTS`), where maven-compiler-plugin runs javac unless it forks, and Ant's
/// (`ANT_OPTS`), where `<javac>` runs unless `fork="yes"`. A forked javac takes only `-J-Xss`
/// from the build file: not reached.
pub fn bigger_stack_env(tool: Tool, env: &BTreeMap<String, String>) -> Vec<(String, String)> {
    if tool != Tool::Java {
        return Vec::new();
    }
    ["MAVEN_OPTS", "ANT_OPTS"]
        .iter()
        .map(|k| {
            let v = env.get(*k).map(|v| format!("{v} {BIGGER_STACK}")).unwrap_or_else(|| BIGGER_STACK.to_owned());
            ((*k).to_owned(), v)
        })
        .collect()
}

/// A failure that names the toolchain: which family, which way, and the line that says so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolchainSign {
    /// The family it names.
    pub tool: Tool,
    /// Which way to look.
    pub direction: Direction,
    /// The line of the log.
    pub line: String,
}

/// Signs in a setup log that the toolchain's version is to blame, each with the family it names
/// and which way it points; the first sign found decides.
const SIGNS: &[(Tool, Direction, &str)] = &[
    (Tool::Java, Direction::TooNew, "is no longer supported. Use "),
    (Tool::Java, Direction::TooNew, "Unsupported class file major version"),
    (Tool::Java, Direction::TooNew, "java.lang.NoClassDefFoundError: javax/xml/bind"),
    (Tool::Java, Direction::TooNew, "java.lang.reflect.InaccessibleObjectException"),
    (Tool::Java, Direction::TooNew, "package sun.misc does not exist"),
    // An annotation processor reaching into javac's internals (Lombok before 1.18.30 on JDK 21).
    (Tool::Java, Direction::TooNew, "java.lang.NoSuchFieldError: Class com.sun.tools.javac."),
    // javac of a compiler plugin older than the JDK (Error Prone's bundled javac 9-dev, a
    // `javac-with-errorprone` compiler of 2015-2018) reading the JDK's own classes: `bad class
    // file: /modules/java.base/...`, then `class file has wrong version 55.0, should be 52.0`. The
    // JDK is too new for the plugin; the same words about a jar's class say the opposite (below).
    (Tool::Java, Direction::TooNew, "bad class file: /modules/"),
    (Tool::Java, Direction::TooOld, "invalid target release:"),
    (Tool::Java, Direction::TooOld, "invalid source release:"),
    (Tool::Java, Direction::TooOld, "error: release version "),
    (Tool::Java, Direction::TooOld, "has been compiled by a more recent version of the Java Runtime"),
    (Tool::Java, Direction::TooOld, "class file has wrong version"),
    (Tool::Node, Direction::TooOld, "The engine \"node\" is incompatible with this module"),
    (Tool::Node, Direction::Unknown, "EBADENGINE"),
    (Tool::Node, Direction::TooNew, "digital envelope routines::unsupported"),
    (Tool::Node, Direction::TooNew, "gyp ERR! build error"),
    (Tool::Node, Direction::TooOld, "SyntaxError: Unexpected token '?'"),
    (Tool::Node, Direction::TooOld, "SyntaxError: Unexpected token '.'"),
    (Tool::Node, Direction::TooOld, "ERR_UNKNOWN_BUILTIN_MODULE"),
    (Tool::Go, Direction::TooOld, "requires go >= "),
    (Tool::Go, Direction::TooOld, "note: module requires Go "),
    (Tool::Rust, Direction::TooOld, "or newer, while the currently active rustc version is"),
    (Tool::Rust, Direction::TooOld, "feature `edition2024` is required"),
    // cargo 1.80 and later: `rustc 1.85.1 is not supported by the following package:`.
    (Tool::Rust, Direction::TooOld, "is not supported by the following package"),
    // rustc 1.80's `unexpected_cfgs` lint made an error by the crate's `deny(warnings)`: a
    // rustc before the lint builds it, as the project's CI of its time did.
    (Tool::Rust, Direction::TooNew, "error: unexpected `cfg` condition name"),
    // glibc 2.34 made MINSIGSTKSZ and SIGSTKSZ run-time values (sysconf).
    (Tool::C, Direction::TooNew, "MINSIGSTKSZ"),
    (Tool::C, Direction::TooNew, "sigStackSize"),
    (Tool::C, Direction::TooNew, "altStackMem"),
    // libstdc++ 13 asserts that an allocator rebinds to itself (nlohmann/json before 3.11.3).
    (Tool::C, Direction::TooNew, "rebind_alloc<A::value_type> must be A"),
    // Newer libstdc++ headers include less on the way (<limits> from GCC 11, <cstdint> from 13):
    // GCC's hint, or a name of std:: not found at all.
    (Tool::C, Direction::TooNew, "this is probably fixable by adding '#include <"),
    (Tool::C, Direction::TooNew, "is not a member of 'std'"),
    // GCC 11 compiles C++17 by default, which removed these.
    (Tool::C, Direction::TooNew, "ISO C++17 does not allow dynamic exception specifications"),
    (Tool::C, Direction::TooNew, "'auto_ptr' in namespace 'std' does not name a template type"),
    // A warning the project turned into an error (`-Werror`) that a compiler newer than the
    // project's has (GCC 13's `-Wself-move`, GCC 9's `-Wredundant-move`): GCC's, then clang's.
    (Tool::C, Direction::TooNew, "[-Werror="),
    (Tool::C, Direction::TooNew, "[-Werror,-W"),
    // A Python 2 script run by the build or the tests (jsoncpp's `runjsontests.py` of 2014) on
    // today's Python 3: bullseye's toolchains have Python 2 as `python2` and `python`.
    (Tool::C, Direction::TooNew, "SyntaxError: Missing parentheses in call to 'print'"),
    (Tool::C, Direction::TooNew, "SyntaxError: multiple exception types must be parenthesized"),
];

/// The warnings GCC 14 made errors by default (`error: ... [-Wincompatible-pointer-types]`).
const GCC14_ERRORS: [&str; 6] = [
    "[-Wincompatible-pointer-types]",
    "[-Wimplicit-function-declaration]",
    "[-Wint-conversion]",
    "[-Wimplicit-int]",
    "[-Wreturn-mismatch]",
    "[-Wdeclaration-missing-parameter-type]",
];

/// javac's warnings about a language level older than the JDK (`warning: [options] ...`):
/// `bootstrap class path not set in conjunction with -source 8`, `source value 8 is obsolete and
/// will be removed in a future release`, `system modules path not set in conjunction with -source
/// 11`. Each is followed by the level.
const LEVEL_WARNINGS: [&str; 4] =
    ["in conjunction with -source ", "source value ", "target value ", "in conjunction with --release "];

/// The level a javac warning about an old language level names, when the warning was made an
/// error: the line is an error (`[ERROR] ...`, `error: ...`) or javac said `warnings found and
/// -Werror specified` (`-Werror`, `<failOnWarning>`).
fn level_made_error(line: &str, log: &str) -> Option<u32> {
    let at = LEVEL_WARNINGS.iter().find_map(|w| line.find(w).map(|i| i + w.len()))?;
    let number: String = line[at..].chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
    let level = Version::parse(Tool::Java, &number)?.major;
    let value_warning = !line.contains("in conjunction with");
    if value_warning && !line.contains("obsolete") {
        return None;
    }
    let error = line.contains("[ERROR]") || line.contains("error:") || log.contains("-Werror specified");
    error.then_some(level)
}

/// A `java.lang.StackOverflowError` thrown inside javac: on its line or the 40 after it a frame of
/// javac (`at com.sun.tools.javac.`), or javac's own report (`An exception has occurred in the
/// compiler`) in the log. The recorded line starts with [`COMPILER_STACK`].
fn compiler_stack(lines: &[&str], i: usize, log: &str) -> Option<String> {
    if !lines[i].contains("java.lang.StackOverflowError") {
        return None;
    }
    let frame = lines[i..].iter().take(41).find(|l| l.contains("at com.sun.tools.javac."));
    let said = log.lines().find(|l| l.contains("An exception has occurred in the compiler"));
    let why = frame.or(said.as_ref())?;
    Some(format!("{COMPILER_STACK}: {}", why.trim()).chars().take(300).collect())
}

/// The first sign in `log` that the setup failed because of the toolchain's version, if any.
/// GCC quotes with ‘ ’ under a UTF-8 locale: read as ASCII quotes, as the signs are written.
pub fn classify_failure(log: &str) -> Option<ToolchainSign> {
    let all: Vec<&str> = log.lines().collect();
    for (i, line) in all.iter().copied().enumerate() {
        if let Some(level) = level_made_error(line, log) {
            let line = line.trim().chars().take(300).collect();
            return Some(ToolchainSign { tool: Tool::Java, direction: Direction::Level(level), line });
        }
        if let Some(line) = compiler_stack(&all, i, log) {
            return Some(ToolchainSign { tool: Tool::Java, direction: Direction::Stack, line });
        }
        let ascii;
        let line = if line.contains(['\u{2018}', '\u{2019}']) {
            ascii = line.replace(['\u{2018}', '\u{2019}'], "'");
            ascii.as_str()
        } else {
            line
        };
        // C that compilers before GCC 14 accepted with a warning, which GCC 14 refuses (its
        // "permerrors": C of 2016 passing `free` where a typed destructor is expected).
        if line.contains("error: ") && GCC14_ERRORS.iter().any(|w| line.contains(w)) {
            return Some(ToolchainSign {
                tool: Tool::C,
                direction: Direction::TooNew,
                line: line.trim().chars().take(300).collect(),
            });
        }
        // A feature a dependency cargo resolved uses that this rustc has not stabilised yet
        // (`let` chains of 1.88 in a crate released after the commit): a newer rustc builds it.
        if line.starts_with("error[E0658]")
            && all[i + 1..]
                .iter()
                .take(3)
                .any(|l| l.contains("/.cargo/registry/src/") || l.contains("/.cargo/git/checkouts/"))
        {
            return Some(ToolchainSign {
                tool: Tool::Rust,
                direction: Direction::TooOld,
                line: line.trim().chars().take(300).collect(),
            });
        }
        for (tool, direction, needle) in SIGNS {
            if line.contains(needle) {
                let mut direction = *direction;
                if *tool == Tool::Node && direction == Direction::Unknown {
                    // npm's `required: { node: '>=18' }` says which way.
                    if log.contains("required: { node: '>") || log.contains("required: { node: '^") {
                        direction = Direction::TooOld;
                    }
                }
                return Some(ToolchainSign { tool: *tool, direction, line: line.trim().chars().take(300).collect() });
            }
        }
    }
    None
}

/// The next release to try after `tried` (in the order tried; the last one failed with `sign`):
/// the nearest untried release beyond the last one in the direction the sign points; when it
/// does not say, the untried release nearest the first choice (the older on a tie). A language
/// level's sign ([`Direction::Level`]) takes, of the untried releases older than the last that
/// still compile the level (none: the search ends), the level's own first, then those the CI
/// tested (`tested`: its matrix), then the rest, each nearest the level first. After a compiler's stack overflow
/// ([`Direction::Stack`]) a release the CI tested comes first, nearest the first choice.
pub fn next_candidate<'a>(
    releases: &'a Releases,
    tool: Tool,
    tried: &[String],
    direction: Direction,
    tested: &[Version],
) -> Option<&'a Release> {
    let list = releases.0.get(&tool)?;
    let anchor = match direction {
        Direction::Unknown | Direction::Stack => tried.first()?,
        _ => tried.last()?,
    };
    let at = list.iter().position(|r| &r.toolchain_name(tool) == anchor)?;
    let untried = |r: &&Release| !tried.contains(&r.toolchain_name(tool));
    let in_ci = |r: &Release| tested.iter().any(|v| same_version(tool, *v, r.v(tool)));
    let mut older = list[..at].iter().rev().filter(untried);
    let mut newer = list[at + 1..].iter().filter(untried);
    let nearest = |a: Option<&'a Release>, b: Option<&'a Release>| match (a, b) {
        (Some(a), Some(b)) => Some(if at - index_of(list, a) <= index_of(list, b) - at { a } else { b }),
        (a, b) => a.or(b),
    };
    match direction {
        Direction::TooNew => older.next(),
        Direction::TooOld => newer.next(),
        Direction::Unknown => nearest(older.next(), newer.next()),
        Direction::Stack => {
            let ci = nearest(older.clone().find(|r| in_ci(r)), newer.clone().find(|r| in_ci(r)));
            ci.or_else(|| nearest(older.next(), newer.next()))
        }
        Direction::Level(level) => {
            let fits = |r: &&Release| {
                let v = r.v(tool).major;
                let oldest = r.accepts_from.as_deref().and_then(|a| Version::parse(tool, a)).map_or(0, |o| o.major);
                v >= level && oldest <= level
            };
            let rank = |r: &&Release| (r.v(tool).major != level, !in_ci(r), r.v(tool).major.abs_diff(level));
            older.filter(fits).min_by_key(rank)
        }
    }
}

fn index_of(list: &[Release], r: &Release) -> usize {
    list.iter().position(|x| x == r).unwrap_or(0)
}

#[cfg(test)]
#[path = "toolchoice_tests.rs"]
mod tests;
