//! Multi-SWE-bench naming rules of the JavaScript and TypeScript handlers that differ by
//! repository (`pipelines/naming/msb.toml`, `[jest]`, `[mocha]`, `[mocha_json]`): a jest test by its
//! leaf title or its full title instead of `<file>:<title>`, a mocha test by its full title or
//! its describe path instead of its title, a mocha JSON test by `<file>:<fullTitle>`. Each name
//! is derived from the canonical id, so a parse named under one rule is renamed under another
//! the same way.

use crate::{Framework, ParsedLog};

/// The separator of the parts of a canonical jest or mocha id.
const SEP: &str = " > ";

/// How a repository's Multi-SWE-bench handler names a jest test.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum JestNames {
    /// `<file>:<title>` (the title without its `describe`s), and `<file>` for the file's
    /// `PASS`/`FAIL` line: dayjs's, github-readme-stats's and darkreader's handlers, and every
    /// repository without a rule.
    #[default]
    FileTitle,
    /// The title alone (`deep pass`), files as `<file>`: the handlers matching `✓ (.+)` on
    /// any line (Kong/insomnia, facebook/react and 24 more).
    Title,
    /// Every enclosing `describe` and the title joined by spaces (`math nested block deep
    /// pass`), files as `<file>`.
    FullTitle,
}

/// How a repository's Multi-SWE-bench handler names a mocha test (spec reporter).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum MochaNames {
    /// The title as the handler's regex takes it from the line (axios's and most handlers).
    #[default]
    Title,
    /// Every enclosing `describe` and the title joined by spaces.
    FullTitle,
    /// Every enclosing `describe` and the title joined by ` > ` (the canonical id).
    Path,
}

/// How a repository's Multi-SWE-bench handler names a test of mocha's JSON reporter.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum MochaJsonNames {
    /// `fullTitle` (express's handler, and every repository without a rule).
    #[default]
    FullTitle,
    /// `<file>:<fullTitle>`, the file as the reporter printed it (mui/material-ui's handler).
    FileFullTitle,
}

impl JestNames {
    /// The Multi-SWE-bench name of the jest test with canonical id `id` (`<file> > <describe…>
    /// > <title>`, or `<file>`) under this rule.
    pub fn name(self, id: &str) -> String {
        let Some((file, rest)) = id.split_once(SEP) else { return id.to_owned() };
        let leaf = rest.rsplit(SEP).next().unwrap_or(rest);
        match self {
            JestNames::FileTitle => format!("{file}:{leaf}"),
            JestNames::Title => leaf.to_owned(),
            JestNames::FullTitle => rest.split(SEP).collect::<Vec<_>>().join(" "),
        }
    }
}

impl MochaNames {
    /// The Multi-SWE-bench name of the mocha test with canonical id `id` (`<describe…> >
    /// <title>`) under this rule; None for [`MochaNames::Title`], whose name the parser took
    /// from the raw line (the id has lost what its regex keeps).
    pub fn name(self, id: &str) -> Option<String> {
        match self {
            MochaNames::Title => None,
            MochaNames::FullTitle => Some(id.split(SEP).collect::<Vec<_>>().join(" ")),
            MochaNames::Path => Some(id.to_owned()),
        }
    }
}

impl MochaJsonNames {
    /// The Multi-SWE-bench name of the mocha JSON test with canonical id `id` (`<file> >
    /// <describe…> > <title>`) whose `fullTitle` is `full_title`, under this rule.
    pub fn name(self, id: &str, full_title: &str) -> String {
        match (self, id.split_once(SEP)) {
            (MochaJsonNames::FileFullTitle, Some((file, _))) if !file.is_empty() => format!("{file}:{full_title}"),
            _ => full_title.to_owned(),
        }
    }
}

impl ParsedLog {
    /// Names the tests of a `framework` parse by the JavaScript rules: jest's (`jest`,
    /// `jest-json`) by `jest`, mocha's spec reporter's (`mocha`) by `mocha`, mocha's JSON
    /// reporter's (`mocha-json`) by `mocha_json`. Other frameworks' names are left as they are.
    pub fn name_js_tests(
        &mut self,
        framework: Framework,
        jest: JestNames,
        mocha: MochaNames,
        mocha_json: MochaJsonNames,
    ) {
        match framework {
            Framework::Jest | Framework::JestJson => {
                for (id, name) in &mut self.msb_names {
                    // The default leaves the parser's names (a kept parse may be older), except
                    // those another rule gave.
                    let renamed = || [JestNames::Title, JestNames::FullTitle].iter().any(|r| r.name(id) == *name);
                    if jest != JestNames::FileTitle || renamed() {
                        *name = jest.name(id);
                    }
                }
            }
            Framework::Mocha => {
                for (id, name) in &mut self.msb_names {
                    match mocha.name(id) {
                        Some(named) => *name = named,
                        // Back from another rule: the title of the id (what the parser took
                        // from the raw line is lost).
                        None if id.contains(SEP) && (name == id || *name == id.replace(SEP, " ")) => {
                            *name = id.rsplit(SEP).next().unwrap_or(id).to_owned();
                        }
                        None => {}
                    }
                }
            }
            Framework::MochaJson => {
                for (id, name) in &mut self.msb_names {
                    let Some((file, _)) = id.split_once(SEP) else { continue };
                    let full = name.strip_prefix(file).and_then(|n| n.strip_prefix(':')).unwrap_or(name).to_owned();
                    *name = mocha_json.name(id, &full);
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{msb_rollup, parse};

    #[test]
    fn jest_names_by_rule_from_the_ids() {
        let id = "tests/math.test.js > math > nested block > deep pass";
        assert_eq!(JestNames::FileTitle.name(id), "tests/math.test.js:deep pass");
        assert_eq!(JestNames::Title.name(id), "deep pass");
        assert_eq!(JestNames::FullTitle.name(id), "math nested block deep pass");
        for rule in [JestNames::FileTitle, JestNames::Title, JestNames::FullTitle] {
            assert_eq!(rule.name("tests/a.test.js"), "tests/a.test.js", "{rule:?}: a file keeps its path");
        }
    }

    #[test]
    fn the_built_in_rules_name_insomnia_s_jest_tests_by_title_and_mui_s_mocha_tests_with_the_file() {
        let naming = crate::MsbNaming::builtin().unwrap();
        let insomnia = naming.repository("Kong", "insomnia");
        assert_eq!(insomnia.jest, JestNames::Title);
        assert_eq!(naming.repository("iamkun", "dayjs").jest, JestNames::FileTitle, "dayjs's handler: `file:title`");
        assert_eq!(naming.repository("Automattic", "mongoose").mocha, MochaNames::Path);
        assert_eq!(naming.repository("axios", "axios").mocha, MochaNames::Title);
        assert_eq!(naming.repository("mui", "material-ui").mocha_json, MochaJsonNames::FileFullTitle);
        assert_eq!(naming.repository("expressjs", "express").mocha_json, MochaJsonNames::FullTitle);
        let log = "PASS tests/a.test.js\n  math\n    nested\n      \u{2713} adds (3 ms)\n  \u{2713} top\n";
        let mut p = parse(Framework::Jest, log.as_bytes());
        assert_eq!(
            msb_rollup(&p).into_keys().collect::<Vec<_>>(),
            ["tests/a.test.js", "tests/a.test.js:adds", "tests/a.test.js:top"]
        );
        p.name_as(Framework::Jest, insomnia);
        assert_eq!(msb_rollup(&p).into_keys().collect::<Vec<_>>(), ["adds", "tests/a.test.js", "top"]);
        p.name_as(Framework::Jest, crate::RepoNaming::default());
        assert_eq!(
            msb_rollup(&p).into_keys().collect::<Vec<_>>(),
            ["tests/a.test.js", "tests/a.test.js:adds", "tests/a.test.js:top"]
        );
    }

    #[test]
    fn mocha_names_by_rule_and_back() {
        let log = "\n  Array\n    ✔ has length\n    #indexOf()\n      ✔ returns -1 when absent\n      1) fails (text)\n\n  \
                   2 passing (5ms)\n  1 failing\n";
        let mut p = parse(Framework::Mocha, log.as_bytes());
        let default = p.clone();
        let names = |p: &ParsedLog| msb_rollup(p).into_keys().collect::<Vec<_>>();
        assert_eq!(names(&p), ["fails", "has length", "returns -1 when absent"], "the handlers' regex drops `(text)`");
        p.name_js_tests(Framework::Mocha, JestNames::Title, MochaNames::FullTitle, MochaJsonNames::FullTitle);
        assert_eq!(
            names(&p),
            ["Array #indexOf() fails (text)", "Array #indexOf() returns -1 when absent", "Array has length"]
        );
        p.name_js_tests(Framework::Mocha, JestNames::Title, MochaNames::Path, MochaJsonNames::FullTitle);
        assert_eq!(
            names(&p),
            ["Array > #indexOf() > fails (text)", "Array > #indexOf() > returns -1 when absent", "Array > has length"]
        );
        let path = p.clone();
        p.name_js_tests(Framework::Jest, JestNames::FileTitle, MochaNames::FullTitle, MochaJsonNames::FullTitle);
        assert_eq!(p, path, "the jest default leaves names as they are");
        p.name_js_tests(Framework::Mocha, JestNames::FileTitle, MochaNames::Title, MochaJsonNames::FullTitle);
        assert_eq!(
            names(&p),
            ["fails (text)", "has length", "returns -1 when absent"],
            "back to titles (from the ids)"
        );
        assert_eq!(p.tests, default.tests, "canonical ids never change");
    }

    #[test]
    fn mocha_json_names_get_the_file_and_lose_it_again() {
        let log = r#"{"stats":{"tests":2},"failures":[{"title":"t2","fullTitle":"S t2","file":"/w/a.js","err":{}}],
 "passes":[{"title":"t1","fullTitle":"S t1","file":"/w/a.js","err":{}}]}"#;
        let mut p = parse(Framework::MochaJson, log.as_bytes());
        let names = |p: &ParsedLog| msb_rollup(p).into_keys().collect::<Vec<_>>();
        assert_eq!(names(&p), ["S t1", "S t2"]);
        p.name_js_tests(Framework::MochaJson, JestNames::FileTitle, MochaNames::Title, MochaJsonNames::FileFullTitle);
        assert_eq!(names(&p), ["/w/a.js:S t1", "/w/a.js:S t2"]);
        let once = p.clone();
        p.name_js_tests(Framework::MochaJson, JestNames::FileTitle, MochaNames::Title, MochaJsonNames::FileFullTitle);
        assert_eq!(p, once, "applying a rule twice changes nothing");
        p.name_js_tests(Framework::MochaJson, JestNames::FileTitle, MochaNames::Title, MochaJsonNames::FullTitle);
        assert_eq!(names(&p), ["S t1", "S t2"]);
    }
}
