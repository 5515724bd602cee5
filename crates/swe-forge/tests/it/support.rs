//! Helpers: paths of the repository, running the binary, fixture repositories in a tempdir.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// Runs the binary. Validations gather no evidence (`SWE_FORGE_EVIDENCE_RUNS=0`: seven more runs
/// per accepted instance) and run no hunk (`SWE_FORGE_HUNK_RUNS=0`: up to four more) unless a test
/// asks for them with `--evidence-runs` and `--hunk-runs`.
pub fn swe_forge(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_swe-forge"))
        .args(args)
        .env("SWE_FORGE_NO_PROGRESS", "1")
        .env("SWE_FORGE_EVIDENCE_RUNS", "0")
        .env("SWE_FORGE_HUNK_RUNS", "0")
        .output()
        .expect("the binary runs")
}

pub fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

/// Makes the fixture repositories in `dir` with the project's own script.
pub fn make_repos(dir: &Path) -> PathBuf {
    let repos = dir.join("repos");
    let out = Command::new("bash").arg(root().join("data/fixtures/make-repos.sh")).arg(&repos).output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    repos
}

pub fn read_records(path: &Path) -> Vec<swe_forge_core::Instance> {
    swe_forge_core::read_jsonl(std::fs::read(path).unwrap().as_slice()).unwrap()
}

/// The instances of a folder `publish` wrote: the rows of every file under `data/instances/`
/// (each instance is in one), by path, then in each file's order.
pub fn published_rows(hub: &Path) -> Vec<swe_forge_core::Instance> {
    fn files(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                files(&path, out);
            } else if path.extension().is_some_and(|e| e == "parquet") {
                out.push(path);
            }
        }
    }
    let mut paths = Vec::new();
    files(&hub.join("data/instances"), &mut paths);
    paths.sort();
    paths.iter().flat_map(|p| swe_forge_export::read_records(p).unwrap()).collect()
}

/// The files of a small Maven project: `Half.of` (wrong at the base, right after the fix), the
/// test patch's `HalfTest`, and `JavaVersionTest`, which passes only on Java 8, as tests that
/// depend on the JDK (collection interfaces, old Mockito) effectively do.
pub struct JavaFixture {
    pub pom: String,
    pub half_base: String,
    pub half_fixed: String,
    pub version_test: &'static str,
    pub half_test: &'static str,
}

/// [`JavaFixture`] for `artifact`, compiled at source/target `level` against JUnit `junit`.
pub fn java_fixture(artifact: &str, level: &str, junit: &str) -> JavaFixture {
    let pom = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>dev.swe-forge.fixtures</groupId>
  <artifactId>{artifact}</artifactId>
  <version>1.0</version>
  <properties>
    <maven.compiler.source>{level}</maven.compiler.source>
    <maven.compiler.target>{level}</maven.compiler.target>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
  <dependencies>
    <dependency>
      <groupId>junit</groupId>
      <artifactId>junit</artifactId>
      <version>{junit}</version>
      <scope>test</scope>
    </dependency>
  </dependencies>
</project>
"#
    );
    let half = |body: &str| {
        format!(
            "package fixtures;\n\npublic class Half {{\n    public static int of(int x) {{\n        return {body};\n    }}\n}}\n"
        )
    };
    JavaFixture {
        pom,
        half_base: half("x / 2 + 1"),
        half_fixed: half("x / 2"),
        version_test: "package fixtures;\n\nimport static org.junit.Assert.assertEquals;\n\nimport org.junit.Test;\n\npublic class JavaVersionTest {\n    @Test\n    public void runsOnTheTargetedJava() {\n        assertEquals(\"1.8\", System.getProperty(\"java.specification.version\"));\n    }\n}\n",
        half_test: "package fixtures;\n\nimport static org.junit.Assert.assertEquals;\n\nimport org.junit.Test;\n\npublic class HalfTest {\n    @Test\n    public void halves() {\n        assertEquals(2, Half.of(4));\n    }\n}\n",
    }
}
