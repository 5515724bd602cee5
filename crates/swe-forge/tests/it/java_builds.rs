//! Java builds that fail on the first toolchain and how the search recovers, on the real engine:
//! a Maven project with `-source 8` and `-Xlint:all -Werror` on today's JDK (javac's warnings
//! about the old level become errors) gets the JDK of its level next, both attempts in the
//! provenance. And a Java project of the time before Maven, built with Ant alone.

use crate::environments::validate_with;
use crate::toolchains::{accepted, choice, fixture, instance};

const CHEAP: &[&str] = &["--evidence-runs", "0", "--hunk-runs", "0", "--layout-variants", "0"];

#[test]
fn warnings_of_an_old_source_level_made_errors_send_the_search_to_the_jdk_of_that_level() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = tmp.path().join("repos");
    let j = crate::support::java_fixture("werror", "8", "4.12");
    let werror = "  <build>\n    <plugins>\n      <plugin>\n        <artifactId>maven-compiler-plugin</artifactId>\n        <configuration>\n          <compilerArgs>\n            <arg>-Xlint:all</arg>\n            <arg>-Werror</arg>\n          </compilerArgs>\n        </configuration>\n      </plugin>\n    </plugins>\n  </build>\n</project>\n";
    let pom = j.pom.replace("</project>\n", werror);
    // The CI's matrix names JDK 8 to 21: the first choice is its newest of the commit's time.
    let ci = "on: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    strategy:\n      matrix:\n        java: [8, 11, 17, 21]\n    steps:\n      - uses: actions/setup-java@v4\n        with:\n          java-version: ${{ matrix.java }}\n      - run: mvn -B test\n";
    let fx = fixture(
        &repos.join("forge-fixtures/werror"),
        "2024-01-01T00:00:00Z",
        &[
            ("pom.xml", &pom),
            (".github/workflows/ci.yml", ci),
            ("src/main/java/fixtures/Half.java", &j.half_base),
            ("src/test/java/fixtures/JavaVersionTest.java", j.version_test),
        ],
        &[("src/test/java/fixtures/HalfTest.java", j.half_test)],
        &[("src/main/java/fixtures/Half.java", &j.half_fixed)],
    );
    let inst = instance("forge-fixtures", "werror", 7, fx);
    let out = validate_with(&[&inst], &repos, &tmp.path().join("out"), None, CHEAP);
    let r = &out[0];
    accepted(r);
    assert!(r.p2p_tests.keys().any(|k| k.contains("JavaVersionTest")), "ran on Java 8: {:?}", r.p2p_tests.keys());
    assert!(r.f2p_tests.keys().any(|k| k.contains("HalfTest")), "{:?}", r.f2p_tests.keys());
    let c = choice(r);
    assert_eq!((c.version.as_str(), c.toolchain.as_str()), ("8", "java8"), "{c:?}");
    let tried: Vec<&str> = c.attempts.iter().map(|a| a.toolchain.as_str()).collect();
    assert_eq!(tried, ["java"], "JDK 21 then straight to 8, past 17 and 11: {c:?}");
    let line = &c.attempts[0].error;
    assert!(line.contains("-source 8") || line.contains("value 8 is obsolete"), "{line}");
}

/// An Ant project of 2012: build.xml with compile and test targets, a `<junit>` task with the XML
/// formatter, source 1.6; JUnit from Ant's own class path (a project of the time would commit
/// lib/junit.jar; the recipe puts Debian's on Ant's class path for those that expected it there).
#[test]
fn a_java_project_with_only_an_ant_build_file_is_built_and_tested_with_ant() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = tmp.path().join("repos");
    let j = crate::support::java_fixture("ant", "1.6", "4.12");
    let build = r#"<?xml version="1.0"?>
<project name="halves" default="jar" basedir=".">
  <property name="javac.level" value="1.6"/>
  <property name="build" value="build"/>
  <target name="compile">
    <mkdir dir="${build}/classes"/>
    <javac srcdir="src" destdir="${build}/classes" source="${javac.level}" target="${javac.level}" includeantruntime="false"/>
  </target>
  <target name="unit" depends="compile">
    <mkdir dir="${build}/test-classes"/>
    <mkdir dir="${build}/reports"/>
    <javac srcdir="test" destdir="${build}/test-classes" source="${javac.level}" target="${javac.level}" classpath="${build}/classes"/>
    <junit printsummary="yes" fork="yes">
      <classpath>
        <pathelement location="${build}/classes"/>
        <pathelement location="${build}/test-classes"/>
      </classpath>
      <formatter type="xml"/>
      <batchtest todir="${build}/reports"><fileset dir="test" includes="**/*Test.java"/></batchtest>
    </junit>
  </target>
</project>
"#;
    let fx = fixture(
        &repos.join("forge-fixtures/anthalves"),
        "2012-06-01T00:00:00Z",
        &[
            ("build.xml", build),
            (".gitignore", "build/\n"),
            ("src/fixtures/Half.java", &j.half_base),
            ("test/fixtures/JavaVersionTest.java", j.version_test),
        ],
        &[("test/fixtures/HalfTest.java", j.half_test)],
        &[("src/fixtures/Half.java", &j.half_fixed)],
    );
    let inst = instance("forge-fixtures", "anthalves", 9, fx);
    let out = validate_with(&[&inst], &repos, &tmp.path().join("out"), None, CHEAP);
    let r = &out[0];
    accepted(r);
    assert_eq!(r.lang.as_deref(), Some("java"));
    let f2p: Vec<&String> = r.f2p_tests.keys().collect();
    assert!(f2p.len() == 1 && f2p[0].contains("HalfTest") && f2p[0].contains("halves"), "per method: {f2p:?}");
    assert!(r.p2p_tests.keys().any(|k| k.contains("runsOnTheTargetedJava")), "on Java 8: {:?}", r.p2p_tests.keys());
    let c = choice(r);
    assert_eq!(c.toolchain, "java8", "{c:?}");
    assert!(c.reason.contains("build.xml javac source = 1.6"), "{c:?}");
    let m = r.swe_forge.as_ref().unwrap();
    assert!(m.test_command.as_deref().unwrap_or_default().starts_with("ant -noinput"), "{:?}", m.test_command);
    let prov = m.provenance.as_ref().unwrap();
    assert!(prov.test_command_notes.iter().any(|n| n.contains("build.xml target `unit`")), "{prov:?}");
}
