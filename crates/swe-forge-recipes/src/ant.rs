//! Ant's `build.xml`, read for the `java-ant` recipe: the target that runs the tests (by name, or
//! the one with a `<junit>` task) and the Java language levels its `<javac>` tasks and Ant's
//! `ant.build.javac.*` properties ask for, each `${property}` resolved from the file's own
//! `<property name value>` lines. A plain text scan, as the pom reader: no entities, no imports.

use std::collections::BTreeMap;

/// Target names that run the tests, in the order preferred; after them the first target with a
/// `<junit>` or `<junitlauncher>` task, then `check` (often a style check).
const TEST_TARGETS: [&str; 3] = ["test", "tests", "junit"];

/// The target of `build` that runs the tests, and why it was taken.
pub fn ant_test_target(build: &str) -> Option<(String, &'static str)> {
    let targets = targets(build);
    if let Some((name, _)) = TEST_TARGETS.iter().find_map(|t| targets.iter().find(|(n, _)| n == t)) {
        return Some((name.clone(), "its name"));
    }
    if let Some((name, _)) = targets.iter().find(|(_, body)| body.contains("<junit") || body.contains("<junitlauncher"))
    {
        return Some((name.clone(), "the target with a <junit> task"));
    }
    targets.iter().find(|(n, _)| n == "check").map(|(n, _)| (n.clone(), "its name"))
}

/// Every `<target name="...">` of `build` with the text up to its `</target>`.
fn targets(build: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = build;
    while let Some(i) = rest.find("<target") {
        rest = &rest[i + "<target".len()..];
        let tag_end = rest.find('>').unwrap_or(rest.len());
        let tag = &rest[..tag_end];
        let body_end = if tag.ends_with('/') { tag_end } else { rest.find("</target>").unwrap_or(rest.len()) };
        if let Some(name) = attr(tag, "name") {
            out.push((name, rest[..body_end].to_owned()));
        }
    }
    out
}

/// The value of attribute `name` in the text of a start tag (either quote).
fn attr(tag: &str, name: &str) -> Option<String> {
    let mut from = 0;
    while let Some(i) = tag[from..].find(name) {
        let at = from + i;
        from = at + name.len();
        let before_ok = at == 0 || tag[..at].ends_with(char::is_whitespace);
        let after = tag[from..].trim_start();
        let Some(after) = after.strip_prefix('=').map(str::trim_start).filter(|_| before_ok) else { continue };
        let quote = after.chars().next().filter(|c| *c == '"' || *c == '\'')?;
        let value = &after[1..];
        return value.find(quote).map(|end| value[..end].to_owned());
    }
    None
}

/// Every `<property name="x" value="y"/>` of `build`, the first of a name winning (as in Ant).
fn properties(build: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for tag in start_tags(build, "property") {
        if let (Some(n), Some(v)) = (attr(tag, "name"), attr(tag, "value")) {
            out.entry(n).or_insert(v);
        }
    }
    out
}

fn start_tags<'a>(text: &'a str, element: &str) -> Vec<&'a str> {
    let open = format!("<{element}");
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find(&open) {
        rest = &rest[i + open.len()..];
        if rest.starts_with(char::is_whitespace) || rest.starts_with('/') || rest.starts_with('>') {
            out.push(&rest[..rest.find('>').unwrap_or(rest.len())]);
        }
    }
    out
}

/// The language levels `build` asks for, by source (`build.xml javac source`,
/// `build.xml ant.build.javac.target`), as written after `${property}` is resolved.
pub fn ant_levels(build: &str) -> Vec<(String, String)> {
    let props = properties(build);
    let resolve = |v: String| match v.strip_prefix("${").and_then(|r| r.strip_suffix('}')) {
        Some(name) => props.get(name).filter(|r| !r.contains("${")).cloned(),
        None => Some(v),
    };
    let mut out: Vec<(String, String)> = Vec::new();
    for key in ["ant.build.javac.release", "ant.build.javac.source", "ant.build.javac.target"] {
        if let Some(v) = props.get(key) {
            out.push((format!("build.xml {key}"), v.clone()));
        }
    }
    for tag in start_tags(build, "javac") {
        for a in ["release", "source", "target"] {
            let source = format!("build.xml javac {a}");
            if let Some(v) = attr(tag, a).and_then(resolve).filter(|v| !v.is_empty())
                && !out.iter().any(|(s, _)| *s == source)
            {
                out.push((source, v));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const BUILD: &str = r#"<?xml version="1.0"?>
<project name="lib" default="jar" basedir=".">
  <property name="javac.source" value="1.5"/>
  <property name='build' value='build'/>
  <target name="compile">
    <javac srcdir="src" destdir="${build}/classes" source="${javac.source}" target="1.5" debug="on"/>
  </target>
  <target name="unit" depends="compile" description="runs the tests">
    <junit printsummary="yes" fork="yes">
      <formatter type="xml"/>
      <batchtest todir="${build}/reports"><fileset dir="test"/></batchtest>
    </junit>
  </target>
  <target name="check"/>
</project>
"#;

    #[test]
    fn the_test_target_by_name_else_the_one_with_a_junit_task() {
        assert_eq!(ant_test_target(BUILD), Some(("unit".to_owned(), "the target with a <junit> task")));
        let named = BUILD.replace("name=\"compile\"", "name=\"tests\"");
        assert_eq!(ant_test_target(&named), Some(("tests".to_owned(), "its name")));
        let plain = "<project><target name=\"jar\"/><target name=\"check\"><echo/></target></project>";
        assert_eq!(ant_test_target(plain).unwrap().0, "check");
        assert_eq!(ant_test_target("<project><target name=\"jar\"><jar/></target></project>"), None);
        // `<targetfile>` and attributes named like others are not targets and names.
        assert_eq!(attr(r#" depends="x" name="y""#, "name").as_deref(), Some("y"));
        assert_eq!(attr(r#" classname="y""#, "name"), None);
    }

    #[test]
    fn levels_of_javac_tasks_and_ant_properties_with_properties_resolved() {
        assert_eq!(
            ant_levels(BUILD),
            [("build.xml javac source".to_owned(), "1.5".to_owned()), ("build.xml javac target".into(), "1.5".into())]
        );
        let props = "<project><property name=\"ant.build.javac.source\" value=\"1.6\"/><javac source=\"${nowhere}\"/></project>";
        assert_eq!(ant_levels(props), [("build.xml ant.build.javac.source".to_owned(), "1.6".to_owned())]);
    }
}
