//! Environments keyed by the dependency fingerprint, on the real engine: instances of a fixture
//! repository whose build files change between two bases (autotools: `configure.ac` gains a
//! config header, the class of change that made automake stop with "required file 'config.h.in'
//! not found" on a warm environment; Rust: `Cargo.toml` gains a dependency) each get an
//! environment of their own fingerprint, and when the cap leaves them on an older environment
//! their FAIL_TO_PASS / PASS_TO_PASS lists are still those of a clean build at their own base.

use std::collections::BTreeSet;
use std::path::Path;

use swe_forge_core::{Instance, Provenance, ValidationStatus};

use crate::environments::{in_image, validate};
use crate::support::{make_repos, read_records, root};

/// Commits `files` (path, content) on the checked-out branch of `repo` at `date`; its sha.
fn commit(repo: &Path, date: &str, files: &[(&str, &str)], message: &str) -> String {
    let git = |args: &[&str]| swe_forge_test_support::git_at(repo, date, args);
    for (path, content) in files {
        let p = repo.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
        git(&["add", path]);
    }
    git(&["commit", "-q", "-m", message]);
    git(&["rev-parse", "HEAD"])
}

/// `fixture` again as PR `number`, from base commit `sha` (same patches).
fn at(fixture: &Instance, number: u64, sha: &str) -> Instance {
    let mut i = fixture.clone();
    i.number = number;
    i.instance_id = format!("{}__{}-{number}", i.org, i.repo);
    i.base.sha = sha.to_owned();
    i
}

fn lists(r: &Instance) -> (BTreeSet<String>, BTreeSet<String>) {
    (r.f2p_tests.keys().cloned().collect(), r.p2p_tests.keys().cloned().collect())
}

fn prov(r: &Instance) -> Provenance {
    r.swe_forge.clone().unwrap().provenance.unwrap_or_else(|| panic!("{}: {:?}", r.instance_id, r.swe_forge))
}

/// A pipeline with `body` as the repository's override.
fn pipeline(dir: &Path, repo: &str, body: &str) -> std::path::PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let p = dir.join("pipeline.toml");
    std::fs::write(
        &p,
        format!(
            "name = \"layers\"\n[source]\nrecords = \"-\"\nrepos = \"-\"\n[output]\nvalidated = \"-\"\n\
             [overrides.\"{repo}\"]\n{body}\n"
        ),
    )
    .unwrap();
    p
}

/// Validates `old` and `new` (whose base changes build files) three ways: environments by
/// fingerprint (each its own), a cap of one environment (`new` on `old`'s environment, refreshed)
/// and each at its own base (the clean build); every list is the clean build's.
fn check(repos: &Path, dir: &Path, repo: &str, old: &Instance, new: &Instance) -> Vec<Instance> {
    let accepted = |runs: &[Instance]| {
        for r in runs {
            assert_eq!(r.status(), ValidationStatus::Accepted, "{}: {:?}", r.instance_id, r.swe_forge);
        }
    };
    // The records of a run in the order old, new.
    let run = |records: &[&Instance], name: &str, pipeline: Option<&Path>| {
        let mut done = validate(records, repos, &dir.join(name), pipeline);
        done.sort_by_key(|r| r.instance_id != old.instance_id);
        accepted(&done);
        done
    };
    let keyed = run(&[old, new], "keyed", None);
    accepted(&keyed);
    let (p_old, p_new) = (prov(&keyed[0]), prov(&keyed[1]));
    assert_eq!(p_old.env_commit, old.base.sha);
    assert_eq!(p_new.env_commit, new.base.sha, "another fingerprint, another environment");
    assert_ne!(p_old.fingerprint, p_new.fingerprint);
    assert_eq!(p_old.fingerprint.len(), 16, "{p_old:?}");
    assert_eq!(p_new.env_fingerprint, p_new.fingerprint);
    assert_ne!(p_old.env_image, p_new.env_image);

    let capped = run(&[old, new], "capped", Some(&pipeline(&dir.join("cap"), repo, "max_environments = 1")));
    let c_new = prov(&capped[1]);
    assert_eq!(c_new.env_commit, old.base.sha, "over the cap: the nearest older environment");
    assert_eq!(c_new.env_image, p_old.env_image);
    assert_eq!(
        (c_new.fingerprint.as_str(), c_new.env_fingerprint.as_str()),
        (p_new.fingerprint.as_str(), p_old.fingerprint.as_str())
    );

    let own_commit = format!("env_commit = \"{}\"", new.base.sha);
    let own = run(&[new], "own", Some(&pipeline(&dir.join("base"), repo, &own_commit)));
    assert_eq!(prov(&own[0]).env_commit, new.base.sha);
    assert!(!lists(&own[0]).0.is_empty(), "the clean build has FAIL_TO_PASS tests: {:?}", own[0].swe_forge);
    assert_eq!(lists(&keyed[1]), lists(&own[0]), "keyed by fingerprint");
    assert_eq!(lists(&capped[1]), lists(&own[0]), "on the older environment, refreshed");
    assert_eq!(lists(&capped[0]), lists(&keyed[0]));
    capped
}

#[test]
fn instances_whose_build_files_change_get_the_lists_of_a_clean_build() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = make_repos(tmp.path());
    let fixtures = read_records(&root().join("data/fixtures/instances.jsonl"));
    let get = |id: &str| fixtures.iter().find(|r| r.instance_id == id).unwrap();

    // Autotools: configure.ac gains a config header after the environment's commit. On the
    // environment's generated files make re-runs automake, which wants config.h.in.
    let cstr = get("forge-fixtures__cstr-9");
    let dir = repos.join("forge-fixtures/cstr");
    let configure = std::fs::read_to_string(dir.join("configure.ac")).unwrap();
    let with_header = configure.replace("AC_CONFIG_FILES", "AC_CONFIG_HEADERS([config.h])\nAC_CONFIG_FILES");
    assert_ne!(with_header, configure);
    let later = commit(&dir, "2024-02-01T00:00:00Z", &[("configure.ac", &with_header)], "A config header");
    let cstr10 = at(cstr, 10, &later);
    let capped = check(&repos, &tmp.path().join("cstr"), "forge-fixtures/cstr", cstr, &cstr10);
    // The refreshed layer configured from the new configure.ac: the header exists.
    let image = capped[1].swe_forge.clone().unwrap().image.unwrap();
    let (out, code) = in_image(
        &image,
        "cd /testbed && ls config.h config.h.in && git status --porcelain --untracked-files=no | wc -l",
    );
    assert_eq!(code, Some(0), "{out}");
    assert!(out.ends_with("\n0"), "the work tree is clean against the base: {out}");

    // Rust: Cargo.toml gains a (path) dependency after the environment's commit.
    let ringq = get("forge-fixtures__ringq-7");
    let dir = repos.join("forge-fixtures/ringq");
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    let with_dep = manifest.replace("[dependencies]", "[dependencies]\nringq-units = { path = \"units\" }");
    assert_ne!(with_dep, manifest);
    let later = commit(
        &dir,
        "2024-02-01T00:00:00Z",
        &[
            ("Cargo.toml", &with_dep),
            ("units/Cargo.toml", "[package]\nname = \"ringq-units\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"),
            (
                "units/src/lib.rs",
                "//! Default sizes.\n\n/// The capacity of a small queue.\npub const SMALL: usize = 4;\n",
            ),
        ],
        "A units crate",
    );
    let ringq8 = at(ringq, 8, &later);
    check(&repos, &tmp.path().join("ringq"), "forge-fixtures/ringq", ringq, &ringq8);
}

/// Validates `first` and `second` (a later base with the same dependency fingerprint) together,
/// and `second` again on an environment at its own base (the clean build). Asserts that all are
/// accepted, that `second` took `first`'s environment, and that its lists are the clean build's.
/// Returns the two records of the shared run (`first`, `second`) and that run's log folder.
fn on_one_environment(
    repos: &Path,
    work: &Path,
    repo: &str,
    first: &Instance,
    second: &Instance,
) -> (Vec<Instance>, std::path::PathBuf) {
    let accepted = |r: &Instance| {
        assert_eq!(r.status(), ValidationStatus::Accepted, "{}: {:?}", r.instance_id, r.swe_forge);
    };
    let mut keyed = validate(&[first, second], repos, &work.join("keyed"), None);
    keyed.sort_by_key(|r| r.instance_id != first.instance_id);
    keyed.iter().for_each(accepted);
    let (p_first, p_second) = (prov(&keyed[0]), prov(&keyed[1]));
    assert_eq!(p_second.fingerprint, p_first.fingerprint, "no build file changed");
    assert_eq!(
        (p_second.env_commit.as_str(), p_second.env_image.as_str()),
        (first.base.sha.as_str(), p_first.env_image.as_str())
    );
    let own_commit = format!("env_commit = \"{}\"", second.base.sha);
    let own = validate(&[second], repos, &work.join("own"), Some(&pipeline(&work.join("base"), repo, &own_commit)));
    accepted(&own[0]);
    assert_eq!(prov(&own[0]).env_commit, second.base.sha);
    assert_eq!(lists(&keyed[1]), lists(&own[0]), "the lists of a clean build at its own base");
    (keyed, work.join("keyed/validated.work/logs"))
}

/// A Go repository with a module dependency (fetched from the module proxy by the setup): the
/// environment keeps the extracted module and its `.ziphash`, not its zip; a later instance with
/// the same go.mod/go.sum fetches nothing in its layer; the runs (GOPROXY=off) build and test
/// against the extracted module, and the lists are those of a clean build at the later base.
#[test]
fn a_go_environment_keeps_no_module_zips_and_a_layer_of_its_fingerprint_fetches_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = tmp.path().join("repos");
    let dir = repos.join("forge-fixtures/gomods");
    // Bases of their own on every run of this test, so that the environment and the layer are
    // built (and logged) anew.
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    let go_mod = "module github.com/forge-fixtures/gomods\n\ngo 1.15\n\nrequire github.com/google/uuid v1.1.1\n";
    let go_sum = "github.com/google/uuid v1.1.1 h1:Gkbcsh/GbpXz7lPftLA3P6TYMwjCLYm83jiFQZF/3gY=\n\
                  github.com/google/uuid v1.1.1/go.mod h1:TIyPZe4MgqvfeYDBFedMoGGpEw/LqOeaOT+nhxU+yHo=\n";
    let id = |note: &str| {
        format!(
            "package gomods\n\nimport \"github.com/google/uuid\"\n\n// ID is a fresh identifier ({note}).\n\
             func ID() string {{ return uuid.New().String() }}\n"
        )
    };
    let sum = |body: &str| format!("package gomods\n\n// Sum adds.\nfunc Sum(a, b int) int {{ return {body} }}\n");
    let id_test = "package gomods\n\nimport \"testing\"\n\nfunc TestID(t *testing.T) {\n\tif len(ID()) != 36 {\n\t\tt.Fatal(ID())\n\t}\n}\n";
    let sum_test = "package gomods\n\nimport \"testing\"\n\nfunc TestSum(t *testing.T) {\n\tif Sum(2, 3) != 5 {\n\t\tt.Fatal(Sum(2, 3))\n\t}\n}\n";
    let fx = crate::toolchains::fixture(
        &dir,
        "2021-06-01T00:00:00Z",
        &[
            ("go.mod", go_mod),
            ("go.sum", go_sum),
            ("id.go", &id(&format!("{nanos}"))),
            ("id_test.go", id_test),
            ("sum.go", &sum("a - b")),
        ],
        &[("sum_test.go", sum_test)],
        &[("sum.go", &sum("a + b"))],
    );
    let first = crate::toolchains::instance("forge-fixtures", "gomods", 1, fx);
    let later = commit(&dir, "2021-07-01T00:00:00Z", &[("id.go", &id(&format!("{nanos}, later")))], "Later");
    let second = at(&first, 2, &later);

    let (keyed, logs) = on_one_environment(&repos, &tmp.path().join("work"), "forge-fixtures/gomods", &first, &second);
    for r in &keyed {
        let pkg = "github.com/forge-fixtures/gomods::";
        assert_eq!(r.f2p_tests.keys().collect::<Vec<_>>(), [&format!("{pkg}TestSum")]);
        assert_eq!(r.p2p_tests.keys().collect::<Vec<_>>(), [&format!("{pkg}TestID")]);
    }
    let fetch = "swe-forge: fetching the modules of the build list";
    let env_setup = std::fs::read_to_string(logs.join("forge-fixtures__gomods-1/env-setup.log")).unwrap();
    assert!(env_setup.contains(fetch), "{env_setup}");
    let layer_setup = std::fs::read_to_string(logs.join("forge-fixtures__gomods-2/setup.log")).unwrap();
    assert!(!layer_setup.contains(fetch), "the layer fetched the modules again: {layer_setup}");
    let image = keyed[1].swe_forge.as_ref().unwrap().image.as_deref().unwrap();
    let (files, code) = in_image(
        image,
        "cd \"$(go env GOMODCACHE)\" && find cache/download -name '*.zip' | wc -l \
         && find cache/download -name '*.ziphash' | wc -l && ls -d github.com/google/uuid@v1.1.1",
    );
    assert_eq!(code, Some(0), "{files}");
    assert_eq!(files.lines().collect::<Vec<_>>(), ["0", "1", "github.com/google/uuid@v1.1.1"]);
}

/// The files of the top layer of `image` (paths without the leading `/`), read from `docker save`.
fn top_layer_files(image: &str, dir: &Path) -> Vec<String> {
    let tar = dir.join("image.tar");
    let sh = |script: &str| {
        let out = std::process::Command::new("bash").args(["-c", script]).output().unwrap();
        assert!(out.status.success(), "{script}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    sh(&format!("docker save -o {} {image}", tar.display()));
    let manifest: serde_json::Value =
        serde_json::from_str(&sh(&format!("tar -xOf {} manifest.json", tar.display()))).unwrap();
    let top = manifest[0]["Layers"].as_array().unwrap().last().unwrap().as_str().unwrap().to_owned();
    let files = sh(&format!("tar -xOf {} {top} | tar -t", tar.display()));
    std::fs::remove_file(&tar).unwrap();
    files.lines().map(str::to_owned).collect()
}

const MODS_POM: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>dev.forge</groupId>
  <artifactId>mods</artifactId>
  <version>0.1.0</version>
  <packaging>pom</packaging>
  <modules>
    <module>a</module>
    <module>b</module>
  </modules>
  <properties>
    <maven.compiler.release>17</maven.compiler.release>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
  <dependencies>
    <dependency>
      <groupId>junit</groupId>
      <artifactId>junit</artifactId>
      <version>4.13.2</version>
      <scope>test</scope>
    </dependency>
  </dependencies>
  <build>
    <pluginManagement>
      <plugins>
        <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-compiler-plugin</artifactId><version>3.13.0</version></plugin>
        <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-resources-plugin</artifactId><version>3.3.1</version></plugin>
        <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-surefire-plugin</artifactId><version>3.5.2</version></plugin>
      </plugins>
    </pluginManagement>
  </build>
</project>
"#;

fn module_pom(name: &str) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<project xmlns=\"http://maven.apache.org/POM/4.0.0\">\n  \
         <modelVersion>4.0.0</modelVersion>\n  <parent><groupId>dev.forge</groupId><artifactId>mods</artifactId>\
         <version>0.1.0</version></parent>\n  <artifactId>{name}</artifactId>\n</project>\n"
    )
}

const TWICE_TEST: &str = "package dev.forge.b;\n\nimport static org.junit.Assert.assertEquals;\n\nimport org.junit.Test;\n\npublic class TwiceTest {\n    @Test\n    public void doubles() {\n        assertEquals(8, Twice.of(4));\n    }\n}\n";

/// A Maven build of two modules, `a` and `b`; a later instance whose base changes `b` only (code
/// and a new test class, no build file) is on the environment of its own fingerprint, and its
/// layer builds only its own code (the recipe's `layer_setup`: compile, no warm-up run of the
/// suite, which the environment's setup made): the layer holds `b`'s build products and none of
/// `a`'s (Maven finds `a` up to date: its sources keep the tree's time, its classes are newer),
/// and the lists are those of a clean build at its base, the new test class among them.
#[test]
fn a_maven_layer_holds_the_build_products_of_the_changed_module_only() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = tmp.path().join("repos");
    let dir = repos.join("forge-fixtures/jmods");
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    let shout = "package dev.forge.a;\n\npublic final class Shout {\n    private Shout() {}\n\n    public static String of(String s) {\n        return s.toUpperCase() + \"!\";\n    }\n}\n";
    let shout_test = "package dev.forge.a;\n\nimport static org.junit.Assert.assertEquals;\n\nimport org.junit.Test;\n\npublic class ShoutTest {\n    @Test\n    public void shouts() {\n        assertEquals(\"HI!\", Shout.of(\"hi\"));\n    }\n}\n";
    let half = |body: &str| {
        format!(
            "package dev.forge.b;\n\npublic final class Half {{\n    private Half() {{}}\n\n    public static int of(int x) {{\n        return {body};\n    }}\n}}\n"
        )
    };
    let half_test = "package dev.forge.b;\n\nimport static org.junit.Assert.assertEquals;\n\nimport org.junit.Test;\n\npublic class HalfTest {\n    @Test\n    public void halves() {\n        assertEquals(2, Half.of(4));\n    }\n}\n";
    let twice = |note: &str| {
        format!(
            "package dev.forge.b;\n\n/** Doubles ({note}). */\npublic final class Twice {{\n    private Twice() {{}}\n\n    public static int of(int x) {{\n        return 2 * x;\n    }}\n}}\n"
        )
    };
    let fx = crate::toolchains::fixture(
        &dir,
        "2024-03-01T00:00:00Z",
        &[
            ("pom.xml", MODS_POM),
            ("a/pom.xml", &module_pom("a")),
            ("a/src/main/java/dev/forge/a/Shout.java", shout),
            ("a/src/test/java/dev/forge/a/ShoutTest.java", shout_test),
            ("b/pom.xml", &module_pom("b")),
            ("b/src/main/java/dev/forge/b/Half.java", &half("x / 2 + 1")),
            ("b/src/main/java/dev/forge/b/Twice.java", &twice(&format!("{nanos}"))),
        ],
        &[("b/src/test/java/dev/forge/b/HalfTest.java", half_test)],
        &[("b/src/main/java/dev/forge/b/Half.java", &half("x / 2"))],
    );
    let first = crate::toolchains::instance("forge-fixtures", "jmods", 1, fx);
    let later = commit(
        &dir,
        "2024-04-01T00:00:00Z",
        &[
            ("b/src/main/java/dev/forge/b/Twice.java", &twice(&format!("{nanos}, later"))),
            ("b/src/test/java/dev/forge/b/TwiceTest.java", TWICE_TEST),
        ],
        "Later",
    );
    let second = at(&first, 2, &later);

    let (keyed, logs) = on_one_environment(&repos, &tmp.path().join("work"), "forge-fixtures/jmods", &first, &second);
    for r in &keyed {
        assert!(r.f2p_tests.keys().any(|t| t.contains("HalfTest")), "{:?}", r.f2p_tests);
        assert!(r.p2p_tests.keys().any(|t| t.contains("ShoutTest")), "{:?}", r.p2p_tests);
    }
    assert!(keyed[1].p2p_tests.keys().any(|t| t.contains("TwiceTest")), "{:?}", keyed[1].p2p_tests);
    let layer_setup = std::fs::read_to_string(logs.join("forge-fixtures__jmods-2/setup.log")).unwrap();
    assert!(layer_setup.contains("BUILD SUCCESS"), "{layer_setup}");
    assert!(!layer_setup.contains("Tests run:"), "the layer ran the suite: {layer_setup}");
    let image = keyed[1].swe_forge.as_ref().unwrap().image.as_deref().unwrap();
    let files = top_layer_files(image, tmp.path());
    assert!(files.iter().any(|f| f.starts_with("testbed/b/target/classes/dev/forge/b/")), "{files:#?}");
    // The compiler plugin rewrites its list of input files in every module (a few bytes, the same
    // list); no class of `a` is compiled again.
    let of_a: Vec<&String> = files
        .iter()
        .filter(|f| f.starts_with("testbed/a/target/") && !f.ends_with('/') && !f.contains("/maven-status/"))
        .collect();
    assert!(of_a.is_empty(), "the unchanged module's build products are in the layer: {of_a:#?}");
}
