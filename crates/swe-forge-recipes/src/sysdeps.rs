//! What a failed build says the environment lacks, and which Debian package provides it: a
//! header (`fatal error: cmocka.h: No such file or directory`), a library (`cannot find -lfoo`), a
//! CMake package or find module (`Could not find a package configuration file provided by "Foo"`,
//! `Could NOT find Foo (missing: ...)` under a `CMake Error`), a pkg-config module (`No package
//! 'foo' found`) or a command (`foo: command not found`) ([`missing_dependency`]); the lines of a
//! Debian suite's `Contents-<arch>` index that may provide it ([`contents_pattern`], a `grep -E`
//! pattern for the stream of the index) and the package among them ([`pick_package`]: the file
//! where the compiler, linker or tool looks first, a `-dev` package before others).
//!
//! Text only: fetching the index and searching it belong to `swe-forge-validate`.

/// What kind of thing a build found missing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MissingKind {
    /// A header the compiler could not find (`cmocka.h`, `libxml/parser.h`).
    Header,
    /// A library the linker could not find (`foo` of `-lfoo`).
    Library,
    /// A CMake package configuration (`Foo` of `FooConfig.cmake`, `foo-config.cmake`).
    CmakePackage,
    /// What a CMake find module found missing (`ZLIB` of `Could NOT find ZLIB`): looked up as a
    /// pkg-config module, a library or a header of that name.
    CmakeModule,
    /// A pkg-config module (`foo.pc`).
    PkgConfig,
    /// A command the shell could not find.
    Command,
}

impl MissingKind {
    /// The word the provenance and rejections name it by.
    pub fn label(self) -> &'static str {
        match self {
            MissingKind::Header => "header",
            MissingKind::Library => "library",
            MissingKind::CmakePackage => "CMake package",
            MissingKind::CmakeModule => "CMake module",
            MissingKind::PkgConfig => "pkg-config module",
            MissingKind::Command => "command",
        }
    }
}

/// One missing thing, with the log line that shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Missing {
    /// Its kind.
    pub kind: MissingKind,
    /// Its name as the build wrote it.
    pub name: String,
    /// The line (trimmed, at most 300 characters).
    pub line: String,
}

impl Missing {
    /// `header cmocka.h`, `library -lfoo`, ...
    pub fn thing(&self) -> String {
        match self.kind {
            MissingKind::Library => format!("library -l{}", self.name),
            k => format!("{} {}", k.label(), self.name),
        }
    }
}

/// The first line of `log` that shows a missing system dependency. CMake's messages count only
/// under a `CMake Error` (an optional package's warning or status line does not stop the build).
pub fn missing_dependency(log: &str) -> Option<Missing> {
    let mut cmake_error = false;
    for raw in log.lines() {
        let line = raw.trim();
        if line.starts_with("CMake Error") {
            cmake_error = true;
        } else if line.starts_with("CMake Warning") || line.starts_with("-- ") {
            cmake_error = false;
        }
        let found = |kind, name: &str| {
            let ok = !name.is_empty() && name.len() < 200 && !name.contains(char::is_whitespace);
            ok.then(|| Missing { kind, name: name.to_owned(), line: line.chars().take(300).collect() })
        };
        let hit = if let Some(name) = between(line, "fatal error: ", ": No such file or directory") {
            found(MissingKind::Header, name)
        } else if let Some(name) = between(line, "fatal error: '", "' file not found") {
            found(MissingKind::Header, name)
        } else if let Some(rest) = line.split_once("cannot find -l").map(|(_, r)| r) {
            found(MissingKind::Library, rest.split([':', ' ']).next().unwrap_or_default())
        } else if let Some(name) = between(line, "No package '", "' found") {
            found(MissingKind::PkgConfig, name)
        } else if let Some(name) = between(line, "Dependency \"", "\" not found") {
            found(MissingKind::PkgConfig, name)
        } else if let Some(name) = between(line, "package configuration file provided by \"", "\"") {
            if cmake_error { found(MissingKind::CmakePackage, name) } else { None }
        } else if let Some(name) = between(line, "Could NOT find ", " ") {
            if cmake_error { found(MissingKind::CmakeModule, name) } else { None }
        } else {
            command_not_found(line).and_then(|name| found(MissingKind::Command, name))
        };
        if let Some(m) = hit.filter(|m| m.kind != MissingKind::Header || looks_like_header(&m.name)) {
            return Some(m);
        }
    }
    None
}

/// The text between the first `start` and the `end` after it.
fn between<'a>(line: &'a str, start: &str, end: &str) -> Option<&'a str> {
    let (_, rest) = line.split_once(start)?;
    rest.split_once(end).map(|(name, _)| name)
}

/// A header's name: a relative path of a file with an extension (`.h`, `.hpp`, `.hh`, none for
/// C++'s own), not a source of the project's (`src/foo.c`).
fn looks_like_header(name: &str) -> bool {
    !name.starts_with(['/', '.']) && !name.ends_with(".c") && !name.ends_with(".cc") && !name.ends_with(".cpp")
}

/// bash's `foo: command not found` and dash's `sh: 1: foo: not found`: the command, when it is a
/// bare name (a script of the project's own, `./autogen.sh`, is not a package's).
fn command_not_found(line: &str) -> Option<&str> {
    let name = if let Some(head) = line.strip_suffix(": command not found") {
        head.rsplit(": ").next()?
    } else {
        let head = line.strip_suffix(": not found")?;
        let mut parts = head.rsplitn(3, ": ");
        let name = parts.next()?;
        let number = parts.next()?;
        if !number.chars().all(|c| c.is_ascii_digit()) {
            return None;
        }
        name
    };
    name.chars().all(|c| c.is_ascii_alphanumeric() || "._+-".contains(c)).then_some(name)
}

/// The file names (last path component, lower case for CMake's) the index is searched for.
fn file_names(m: &Missing) -> Vec<String> {
    let base = m.name.rsplit('/').next().unwrap_or(&m.name).to_owned();
    let lower = m.name.to_lowercase();
    match m.kind {
        MissingKind::Header | MissingKind::Command => vec![base],
        MissingKind::Library => vec![format!("lib{}.so", m.name), format!("lib{}.a", m.name)],
        MissingKind::PkgConfig => vec![format!("{}.pc", m.name)],
        MissingKind::CmakePackage => vec![format!("{lower}config.cmake"), format!("{lower}-config.cmake")],
        MissingKind::CmakeModule => {
            vec![format!("{lower}.pc"), format!("lib{lower}.pc"), format!("lib{lower}.so"), format!("{lower}.h")]
        }
    }
}

/// A `grep -E` pattern (with `-i` when [`MissingKind::CmakePackage`] or [`MissingKind::CmakeModule`]:
/// `ZLIB` is `zlib.pc`) for the index lines whose file has one of the names `m` may go by; the
/// lines it keeps go to [`pick_package`], which decides.
pub fn contents_pattern(m: &Missing) -> String {
    let names: Vec<String> = file_names(m).iter().map(|n| regex_escape(n)).collect();
    format!("(^|/)({})[[:space:]]", names.join("|"))
}

/// Whether the index search for `m` ignores case.
pub fn contents_ignore_case(m: &Missing) -> bool {
    matches!(m.kind, MissingKind::CmakePackage | MissingKind::CmakeModule)
}

fn regex_escape(s: &str) -> String {
    s.chars().fold(String::new(), |mut out, c| {
        if "\\.^$|?*+()[]{}".contains(c) {
            out.push('\\');
        }
        out.push(c);
        out
    })
}

/// Library folders of amd64 Debian.
const LIB_DIRS: [&str; 3] = ["usr/lib/x86_64-linux-gnu/", "usr/lib/", "lib/x86_64-linux-gnu/"];

/// How well the index path `path` provides `m` (0 best), or None when it does not: where the
/// compiler, linker, pkg-config, CMake or the shell look.
fn rank(m: &Missing, path: &str) -> Option<u8> {
    let lower = path.to_lowercase();
    let in_lib = |name: &str| LIB_DIRS.iter().any(|d| path.strip_prefix(d) == Some(name));
    let pc_dirs = ["usr/lib/x86_64-linux-gnu/pkgconfig/", "usr/lib/pkgconfig/", "usr/share/pkgconfig/"];
    let in_pc = |name: &str| pc_dirs.iter().any(|d| lower.strip_prefix(d) == Some(name));
    match m.kind {
        MissingKind::Header => {
            let rest = path.strip_prefix("usr/include/")?;
            if rest == m.name {
                Some(0)
            } else if rest.strip_prefix("x86_64-linux-gnu/") == Some(&m.name) {
                Some(1)
            } else {
                // One folder deeper (`libxml2/libxml/parser.h`), as `pkg-config --cflags` adds.
                let (dir, under) = rest.split_once('/')?;
                (under == m.name && !dir.contains("x86_64")).then_some(2)
            }
        }
        MissingKind::Library => {
            if in_lib(&format!("lib{}.so", m.name)) {
                Some(0)
            } else {
                in_lib(&format!("lib{}.a", m.name)).then_some(1)
            }
        }
        MissingKind::PkgConfig => in_pc(&format!("{}.pc", m.name)).then_some(0),
        MissingKind::CmakePackage => {
            let file = lower.rsplit('/').next()?;
            let n = m.name.to_lowercase();
            let named = file == format!("{n}config.cmake") || file == format!("{n}-config.cmake");
            (named && lower.contains("/cmake/") && lower.starts_with("usr/")).then_some(0)
        }
        MissingKind::CmakeModule => {
            let n = m.name.to_lowercase();
            if in_pc(&format!("{n}.pc")) || in_pc(&format!("lib{n}.pc")) {
                Some(0)
            } else if LIB_DIRS.iter().any(|d| lower.strip_prefix(d) == Some(&format!("lib{n}.so"))) {
                Some(1)
            } else {
                (lower == format!("usr/include/{n}.h")).then_some(2)
            }
        }
        MissingKind::Command => ["usr/bin/", "bin/", "usr/sbin/", "sbin/"]
            .iter()
            .any(|d| path.strip_prefix(d) == Some(&m.name))
            .then_some(0),
    }
}

/// Packages that install for another architecture or system, never the native build's.
fn foreign(package: &str) -> bool {
    ["-cross", "mingw", "android", "lib32", "libx32", "-i386"].iter().any(|w| package.contains(w))
}

/// The package of `lines` (lines of a `Contents-<arch>` index: a path, then
/// `section/package[,section/package...]`) that provides `m`, with the path it provides it by:
/// the best-placed path ([`rank`]), then a `-dev` package for what builds need (not for a
/// command), then the shorter name, then by name. None when no line provides it.
pub fn pick_package(m: &Missing, lines: &str) -> Option<(String, String)> {
    let mut best: Option<((u8, bool, usize, String), String)> = None;
    for line in lines.lines() {
        let Some((path, location)) = line.trim_end().rsplit_once(char::is_whitespace) else { continue };
        let path = path.trim_end();
        let Some(r) = rank(m, path) else { continue };
        for package in location.split(',').map(|p| p.rsplit('/').next().unwrap_or(p).trim()) {
            if package.is_empty() || foreign(package) {
                continue;
            }
            let not_dev = m.kind != MissingKind::Command && !package.ends_with("-dev");
            let key = (r, not_dev, package.len(), package.to_owned());
            if best.as_ref().is_none_or(|(k, _)| key < *k) {
                best = Some((key, path.to_owned()));
            }
        }
    }
    best.map(|((_, _, _, package), path)| (package, path))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines of trixie's `main/Contents-amd64.gz`, as the mirror served them.
    const EXCERPT: &str = include_str!("contents-trixie-excerpt.txt");

    fn missing(log: &str) -> (MissingKind, String) {
        let m = missing_dependency(log).unwrap_or_else(|| panic!("nothing read from {log:?}"));
        (m.kind, m.name)
    }

    #[test]
    fn the_build_logs_name_what_is_missing() {
        use MissingKind::*;
        let gcc = "[3/8] Building C object CMakeFiles/t.dir/tests/t.c.o\nFAILED: CMakeFiles/t.dir/tests/t.c.o\n/repo/tests/t.c:5:10: fatal error: cmocka.h: No such file or directory\n    5 | #include <cmocka.h>\n";
        assert_eq!(missing(gcc), (Header, "cmocka.h".into()));
        assert_eq!(
            missing("t.c:1:10: fatal error: 'libxml/parser.h' file not found"),
            (Header, "libxml/parser.h".into())
        );
        assert_eq!(missing("/usr/bin/ld: cannot find -lcmocka: No such file or directory"), (Library, "cmocka".into()));
        assert_eq!(missing("/usr/bin/ld: cannot find -lz\ncollect2: error"), (Library, "z".into()));
        assert_eq!(
            missing(
                "checking for CHECK... no\nconfigure: error: Package requirements (check >= 0.9.4) were not met:\n\nNo package 'check' found\n"
            ),
            (PkgConfig, "check".into())
        );
        assert_eq!(
            missing("meson.build:3:0: ERROR: Dependency \"zlib\" not found, tried pkgconfig"),
            (PkgConfig, "zlib".into())
        );
        let config = "CMake Error at CMakeLists.txt:4 (find_package):\n  By not providing \"Findcmocka.cmake\" in CMAKE_MODULE_PATH this project has\n  asked CMake to find a package configuration file provided by \"cmocka\", but\n  CMake did not find one.\n\n  Could not find a package configuration file provided by \"cmocka\" with any\n";
        assert_eq!(missing(config), (CmakePackage, "cmocka".into()));
        let module = "CMake Error at /usr/share/cmake-3.31/Modules/FindPackageHandleStandardArgs.cmake:233 (message):\n  Could NOT find ZLIB (missing: ZLIB_LIBRARY ZLIB_INCLUDE_DIR)\n";
        assert_eq!(missing(module), (CmakeModule, "ZLIB".into()));
        assert_eq!(missing("./gen.sh: line 3: xxd: command not found"), (Command, "xxd".into()));
        assert_eq!(
            missing("/bin/sh: 1: gperf: not found\nmake: *** [Makefile:4: x] Error 127"),
            (Command, "gperf".into())
        );
        // An optional package's status line or warning stops nothing; the error after it is read.
        let optional = "-- Could NOT find Doxygen (missing: DOXYGEN_EXECUTABLE)\nCMake Warning at CMakeLists.txt:9 (find_package):\n  Could not find a package configuration file provided by \"Foo\" with any\nsrc/a.c:1:10: fatal error: zstd.h: No such file or directory\n";
        assert_eq!(missing(optional), (Header, "zstd.h".into()));
        for nothing in ["./autogen.sh: command not found", "error: src/x.c: No such file or directory", "all good"] {
            assert_eq!(missing_dependency(nothing), None, "{nothing}");
        }
    }

    /// The package the excerpt of trixie's index gives for the thing `log` names.
    fn package(log: &str) -> Option<(String, String)> {
        let m = missing_dependency(log).unwrap();
        let pattern = contents_pattern(&m);
        // The lines a `grep -E` of the pattern keeps (the file name at the end of the path).
        let names = file_names(&m);
        let ic = contents_ignore_case(&m);
        let kept: Vec<&str> = EXCERPT
            .lines()
            .filter(|l| {
                let path = l.split_whitespace().next().unwrap_or_default();
                let file = path.rsplit('/').next().unwrap_or(path);
                names.iter().any(|n| if ic { n.eq_ignore_ascii_case(file) } else { n == file })
            })
            .collect();
        assert!(pattern.starts_with("(^|/)(") && pattern.ends_with(")[[:space:]]"), "{pattern}");
        pick_package(&m, &kept.join("\n"))
    }

    fn pkg(log: &str) -> Option<String> {
        package(log).map(|(p, _)| p)
    }

    #[test]
    fn the_contents_index_gives_the_package_where_the_build_looks() {
        assert_eq!(
            package("t.c:1:10: fatal error: cmocka.h: No such file or directory"),
            Some(("libcmocka-dev".into(), "usr/include/cmocka.h".into()))
        );
        // Poco's and cc65's zlib.h are not where `#include <zlib.h>` looks.
        assert_eq!(pkg("t.c:1:10: fatal error: zlib.h: No such file or directory").as_deref(), Some("zlib1g-dev"));
        // check.h of check, not liblzma's lzma/check.h or abseil's.
        assert_eq!(pkg("t.c:1:10: fatal error: check.h: No such file or directory").as_deref(), Some("check"));
        assert_eq!(
            pkg("t.c:1:10: fatal error: openssl/ssl.h: No such file or directory").as_deref(),
            Some("libssl-dev")
        );
        // In the multiarch folder; two packages provide it, the first by name is taken.
        assert_eq!(
            pkg("t.c:1:10: fatal error: curl/curl.h: No such file or directory").as_deref(),
            Some("libcurl4-gnutls-dev")
        );
        // The -dev package's libcmocka.so, not the runtime's libcmocka.so.0; not genwqe's or lib32's libz.so.
        assert_eq!(pkg("/usr/bin/ld: cannot find -lcmocka").as_deref(), Some("libcmocka-dev"));
        assert_eq!(pkg("/usr/bin/ld: cannot find -lz").as_deref(), Some("zlib1g-dev"));
        assert_eq!(pkg("/usr/bin/ld: cannot find -lssl").as_deref(), Some("libssl-dev"));
        assert_eq!(pkg("No package 'cmocka' found").as_deref(), Some("libcmocka-dev"));
        let config = |name: &str| {
            format!(
                "CMake Error at CMakeLists.txt:4 (find_package):\n  Could not find a package configuration file provided by \"{name}\" with any\n"
            )
        };
        assert_eq!(pkg(&config("cmocka")).as_deref(), Some("libcmocka-dev"));
        assert_eq!(pkg(&config("GTest")).as_deref(), Some("libgtest-dev"));
        let module =
            |name: &str| format!("CMake Error at x.cmake:1 (message):\n  Could NOT find {name} (missing: X)\n");
        assert_eq!(pkg(&module("ZLIB")).as_deref(), Some("zlib1g-dev"));
        assert_eq!(pkg(&module("OpenSSL")).as_deref(), Some("libssl-dev"));
        assert_eq!(pkg(&module("CURL")).as_deref(), Some("libcurl4-gnutls-dev"));
        assert_eq!(pkg("sh: 1: gperf: not found").as_deref(), Some("gperf"));
        assert_eq!(pkg("./gen.sh: line 3: xxd: command not found").as_deref(), Some("xxd"));
        // Nothing in the index provides it.
        assert_eq!(pkg("t.c:1:10: fatal error: no_such_thing.h: No such file or directory"), None);
    }

    #[test]
    fn the_pattern_escapes_the_names_it_searches_for() {
        let m = Missing { kind: MissingKind::Header, name: "c++/x.h".into(), line: String::new() };
        assert_eq!(contents_pattern(&m), "(^|/)(x\\.h)[[:space:]]");
        let m = Missing { kind: MissingKind::Library, name: "stdc++".into(), line: String::new() };
        assert_eq!(contents_pattern(&m), "(^|/)(libstdc\\+\\+\\.so|libstdc\\+\\+\\.a)[[:space:]]");
        assert_eq!(m.thing(), "library -lstdc++");
    }
}
