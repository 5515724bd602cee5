//! Definitions on one line of source, per language (Go, Rust, Java, JavaScript/TypeScript, C,
//! C++), read with patterns rather than parsers: what a line of a diff defines, with its kind.

use std::sync::OnceLock;

use regex::Regex;

/// The languages whose definitions are read, by file extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    Go,
    Rust,
    Java,
    Js,
    C,
}

impl Lang {
    /// The language of `path`, by its extension (C and C++ share their patterns).
    pub fn of(path: &str) -> Option<Lang> {
        let ext = path.rsplit_once('.').map(|(_, e)| e)?;
        Some(match ext {
            "go" => Lang::Go,
            "rs" => Lang::Rust,
            "java" | "kt" | "scala" | "groovy" => Lang::Java,
            "js" | "jsx" | "mjs" | "cjs" | "ts" | "tsx" | "mts" | "cts" | "vue" | "svelte" => Lang::Js,
            "c" | "h" | "cc" | "cpp" | "cxx" | "c++" | "hpp" | "hh" | "hxx" | "inl" | "ipp" => Lang::C,
            _ => return None,
        })
    }
}

/// Words that patterns may catch but that name nothing.
const KEYWORDS: &[&str] = &[
    "if",
    "else",
    "for",
    "while",
    "switch",
    "case",
    "return",
    "catch",
    "function",
    "new",
    "delete",
    "throw",
    "sizeof",
    "typeof",
    "await",
    "yield",
    "do",
    "try",
    "goto",
    "break",
    "continue",
    "default",
    "static",
    "const",
    "constructor",
    "main",
    "init",
    "super",
    "this",
    "self",
    "Self",
    "var",
    "let",
    "void",
    "int",
    "char",
    "bool",
    "public",
    "private",
    "protected",
    "import",
    "export",
    "package",
    "struct",
    "class",
    "enum",
    "union",
    "type",
];

type Pattern = (&'static str, &'static str);

const GO: &[Pattern] = &[
    (r"^func\s+\([^)]*\)\s*(\w+)", "method"),
    (r"^func\s+(\w+)", "function"),
    (r"^type\s+(\w+)", "type"),
    (r"^\t(\w+)\s+(?:struct|interface)\s*\{", "type"),
    (r"^(?:var|const)\s+(\w+)", "constant"),
    (r"^\t([A-Z]\w*)(?:\s+[\w.*\[\]]+)?\s*=[^=]", "constant"),
    (r"^\t([A-Z]\w*)\s+[\w.*\[\]]+(?:\s+`[^`]*`)?\s*(?://.*)?$", "field"),
];

const RUST: &[Pattern] = &[
    (r#"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:(?:async|const|unsafe|extern\s+"C")\s+)*fn\s+(\w+)"#, "function"),
    (r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:struct|enum|trait|type|union)\s+(\w+)", "type"),
    (r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:const|static)\s+(?:mut\s+)?(\w+)\s*:", "constant"),
    (r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)", "module"),
    (r"^\s*macro_rules!\s*(\w+)", "function"),
    (r"^\s+pub(?:\([^)]*\))?\s+(\w+)\s*:", "field"),
];

const JAVA: &[Pattern] = &[
    (r"\b(?:class|interface|enum|record|@interface|object)\s+(\w+)", "type"),
    (r"^\s*(?:(?:public|protected|private|static|final)\s+)+[\w.<>\[\]]+\s+([A-Z][A-Z0-9_]+)\s*=", "constant"),
    (
        r"^\s*(?:(?:public|protected|private|static|final|abstract|synchronized|default|native)\s+)+(?:<[^>]*>\s*)?[\w.<>\[\]?, ]+?\s+(\w+)\s*\(",
        "method",
    ),
    (r"^\s*(?:override\s+|private\s+|internal\s+)*fun\s+(?:<[^>]*>\s*)?(?:\w+\.)?(\w+)\s*\(", "function"),
];

const JS: &[Pattern] = &[
    (r"^\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?function\s*\*?\s*(\w+)", "function"),
    (r"^\s*(?:export\s+)?(?:default\s+)?(?:abstract\s+)?class\s+(\w+)", "type"),
    (r"^\s*(?:export\s+)?(?:declare\s+)?(?:interface|type|enum)\s+(\w+)", "type"),
    (
        r"^\s*(?:export\s+)?(?:const|let|var)\s+(\w+)\s*(?::[^=]+)?=\s*(?:async\s+)?(?:function\b|\([^)]*\)\s*=>|\w+\s*=>)",
        "function",
    ),
    (r"^\s*(?:export\s+)?(?:const|let|var)\s+([A-Z][A-Z0-9_]+)\s*(?::[^=]+)?=", "constant"),
    (r"^\s*(?:module\.)?exports\.(\w+)\s*=", "function"),
    (
        r"^\s+(?:(?:public|private|protected|static|async|readonly|get|set|override)\s+)*(#?\w+)\s*(?:<[^>]*>)?\s*\([^)]*\)\s*(?::\s*[^{=]+)?\{\s*$",
        "method",
    ),
    (r"^\s+(\w+)\s*:\s*(?:async\s+)?(?:function\b|\([^)]*\)\s*=>)", "method"),
];

const C: &[Pattern] = &[
    (r"^\s*#\s*define\s+(\w+)", "constant"),
    (r"^\s*(?:typedef\s+)?(?:struct|union|enum(?:\s+class)?|class)\s+(\w+)\s*(?:final\s*)?(?:\{|:[^:]|$)", "type"),
    (r"^\}\s*(\w+)\s*;", "type"),
    (r"^\s*using\s+(\w+)\s*=", "type"),
    (r"^[A-Za-z_][\w\s*&:<>,]*?[\s*&]+(?:\w+::)*(~?\w+)\s*\([^;=]*(?:\)\s*(?:const\s*)?(?:\{\s*)?)?$", "function"),
    (r"^[A-Za-z_][\w\s*&:<>,]*?[\s*&]+(\w+)\s*\([^;=]*\)\s*(?:const\s*)?;", "function"),
    (
        r"^\s+(?:(?:virtual|static|inline|explicit|constexpr)\s+)*[A-Za-z_][\w:<>,*&\s]*?[\s*&]+(~?\w+)\s*\([^;{=]*\)\s*(?:const\s*)?(?:noexcept\s*)?(?:override\s*)?(?:;|\{)",
        "method",
    ),
];

fn compiled(lang: Lang) -> &'static [(Regex, &'static str)] {
    static SETS: OnceLock<Vec<Vec<(Regex, &'static str)>>> = OnceLock::new();
    let sets = SETS.get_or_init(|| {
        [GO, RUST, JAVA, JS, C]
            .iter()
            .map(|set| set.iter().map(|(re, kind)| (Regex::new(re).expect("a valid pattern"), *kind)).collect())
            .collect()
    });
    let i = match lang {
        Lang::Go => 0,
        Lang::Rust => 1,
        Lang::Java => 2,
        Lang::Js => 3,
        Lang::C => 4,
    };
    &sets[i]
}

/// What `line` of a file in `lang` defines: `(name, kind)` pairs, the first pattern that matches
/// giving the kind. Lines that begin with a keyword that calls or returns (`return f(x)`) and
/// C++ stream lines define nothing.
pub fn definitions(lang: Lang, line: &str) -> Vec<(String, &'static str)> {
    let first = line.split(|c: char| !(c.is_alphanumeric() || c == '_')).find(|w| !w.is_empty()).unwrap_or("");
    if ["return", "else", "throw", "delete", "case", "goto", "await", "yield"].contains(&first)
        || (lang == Lang::C && (line.contains("<<") || line.contains(">>")))
    {
        return Vec::new();
    }
    let mut out: Vec<(String, &'static str)> = Vec::new();
    for (re, kind) in compiled(lang) {
        if let Some(name) = re.captures(line).and_then(|c| c.get(1)) {
            let name = name.as_str().trim_start_matches('#');
            if name.len() >= 3 && !KEYWORDS.contains(&name) && !out.iter().any(|(n, _)| n == name) {
                out.push((name.to_owned(), kind));
            }
        }
    }
    out
}
