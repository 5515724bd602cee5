//! The jobs of a project's CI, each as it runs: a GitHub workflow job once per entry of its
//! matrix (`${{ matrix.flags }}` replaced by the entry's value), with its id, name, runner and
//! the commands of its `run:` steps; a Travis, CircleCI or GitLab file as one job of all its
//! commands (so is a workflow in which no job is read). `ciflags.rs` reads the build options of each and chooses one job.
//!
//! Workflows are read with a small reader of the YAML they are written in (block mappings and
//! lists, flow `[a, b]` and `{k: v}`, `|` and `>` blocks, quotes, comments); anchors, tags and
//! multi-document files are read as plain text. A matrix is expanded as GitHub does: the
//! product of its axes, less `exclude`, each `include` entry added to the combinations whose
//! axis values it keeps or made one of its own; a value that is a mapping gives dotted keys
//! (`config.cc`). At most [`MAX_ENTRIES`] entries a job.

/// Entries of one job's matrix read at most.
pub const MAX_ENTRIES: usize = 64;

/// Nesting read at most; deeper values are read as text.
const MAX_DEPTH: usize = 48;

/// One CI job as it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CiJob {
    /// The file (`.github/workflows/ci.yml`).
    pub source: String,
    /// Job id and matrix entry (`test`, `build (cc=clang, flags=-DX=ON)`); empty for a file read
    /// as one job.
    pub name: String,
    /// What names it: id, `name:`, runner and matrix entry (keys and values), as one text.
    pub identity: String,
    /// Its shell commands, `\` continuations joined, matrix values put in.
    pub commands: Vec<String>,
}

/// Every job of the CI files of a commit, in file and job order.
pub fn ci_jobs(read: &dyn Fn(&str) -> Option<String>, paths: &[String]) -> Vec<CiJob> {
    let mut out = Vec::new();
    for path in crate::cipackages::ci_files(paths) {
        let Some(text) = read(path) else { continue };
        let jobs = if path.starts_with(".github/workflows/") { workflow_jobs(path, &text) } else { Vec::new() };
        if !jobs.is_empty() {
            out.extend(jobs);
        } else {
            let commands = commands(&text);
            out.push(CiJob { source: path.to_owned(), name: String::new(), identity: String::new(), commands });
        }
    }
    out
}

/// The jobs of one workflow file, each matrix entry a job.
fn workflow_jobs(path: &str, text: &str) -> Vec<CiJob> {
    let doc = parse(text);
    let Some(Y::Map(jobs)) = doc.get("jobs") else { return Vec::new() };
    let mut out = Vec::new();
    for (id, job) in jobs {
        let scalar = |key: &str| job.get(key).map(Y::text).unwrap_or_default();
        let (name, runs_on) = (scalar("name"), scalar("runs-on"));
        let runs: Vec<String> = match job.get("steps") {
            Some(Y::List(steps)) => steps.iter().filter_map(|s| s.get("run")).map(Y::text).collect(),
            _ => Vec::new(),
        };
        let entries = job.get("strategy").and_then(|s| s.get("matrix")).map(matrix_entries).unwrap_or_default();
        let entries = if entries.is_empty() { vec![Vec::new()] } else { entries };
        for entry in &entries {
            let put = |s: &str| substitute(s, entry);
            let shown: Vec<String> = entry.iter().map(|(k, v)| format!("{k}={}", short(v))).collect();
            let name_of = if shown.is_empty() { id.clone() } else { format!("{id} ({})", shown.join(", ")) };
            let mut identity = vec![id.clone(), put(&name), put(&runs_on)];
            identity.extend(entry.iter().map(|(k, v)| format!("{k} {v}")));
            out.push(CiJob {
                source: path.to_owned(),
                name: name_of,
                identity: identity.join(" "),
                commands: runs.iter().flat_map(|r| commands(&put(r))).collect(),
            });
        }
    }
    out
}

fn short(v: &str) -> String {
    if v.chars().count() <= 60 { v.to_owned() } else { format!("{}...", v.chars().take(57).collect::<String>()) }
}

/// `text` with each `${{ matrix.<key> }}` the entry has replaced by its value.
fn substitute(text: &str, entry: &[(String, String)]) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("${{") {
        out.push_str(&rest[..i]);
        let Some(end) = rest[i..].find("}}") else {
            rest = &rest[i..];
            break;
        };
        let expr = rest[i + 3..i + end].trim();
        match expr.strip_prefix("matrix.").and_then(|k| entry.iter().find(|(key, _)| key == k)) {
            Some((_, v)) => out.push_str(v),
            None => out.push_str(&rest[i..i + end + 2]),
        }
        rest = &rest[i + end + 2..];
    }
    out.push_str(rest);
    out
}

/// The shell commands of a CI text: YAML list markers and `run:` keys stripped, a `\` at the end
/// of a line continuing the command on the next one.
pub(crate) fn commands(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut pending: Option<String> = None;
    for line in text.lines() {
        let t = line.trim().trim_start_matches("- ").trim_start_matches("run:").trim();
        let t = match t.find(" #") {
            Some(i) => &t[..i],
            None if t.starts_with('#') => "",
            None => t,
        };
        let t = t.trim().trim_matches(|c| c == '"' || c == '\'');
        let (body, continues) = match t.strip_suffix('\\') {
            Some(b) => (b.trim_end(), true),
            None => (t, false),
        };
        let cmd = match pending.take() {
            Some(mut c) => {
                c.push(' ');
                c.push_str(body);
                c
            }
            None => body.to_owned(),
        };
        if continues { pending = Some(cmd) } else { out.push(cmd) }
    }
    out.extend(pending);
    out
}

/// The entries of a matrix, each as `(key, value)` pairs in order (dotted keys for mappings).
fn matrix_entries(matrix: &Y) -> Vec<Vec<(String, String)>> {
    let Y::Map(items) = matrix else { return Vec::new() };
    let mut combos: Vec<Vec<(String, String)>> = vec![Vec::new()];
    let mut axes = false;
    for (key, values) in items.iter().filter(|(k, _)| k != "include" && k != "exclude") {
        let values: Vec<&Y> = match values {
            Y::List(l) => l.iter().collect(),
            Y::Str(s) if s.contains("${{") => continue,
            other => vec![other],
        };
        axes = true;
        let mut next = Vec::new();
        for c in &combos {
            for v in &values {
                let mut c = c.clone();
                flatten(key, v, &mut c);
                next.push(c);
                if next.len() >= MAX_ENTRIES {
                    break;
                }
            }
        }
        combos = next;
    }
    if !axes {
        combos.clear();
    }
    let entries = |key: &str| match matrix.get(key) {
        Some(Y::List(l)) => l
            .iter()
            .map(|e| {
                let mut pairs = Vec::new();
                if let Y::Map(m) = e {
                    m.iter().for_each(|(k, v)| flatten(k, v, &mut pairs));
                }
                pairs
            })
            .collect(),
        _ => Vec::new(),
    };
    for ex in entries("exclude") {
        combos.retain(|c| !ex.iter().all(|p| c.contains(p)));
    }
    let original = combos.len();
    let original_keys: Vec<String> =
        combos.first().map(|c| c.iter().map(|(k, _)| k.clone()).collect()).unwrap_or_default();
    for inc in entries("include") {
        let mut matched = false;
        for c in combos.iter_mut().take(original) {
            let keeps =
                inc.iter().all(|(k, v)| !original_keys.contains(k) || c.iter().any(|(ck, cv)| ck == k && cv == v));
            if keeps {
                matched = true;
                for (k, v) in &inc {
                    match c.iter_mut().find(|(ck, _)| ck == k) {
                        Some(slot) if !original_keys.contains(k) => slot.1.clone_from(v),
                        Some(_) => {}
                        None => c.push((k.clone(), v.clone())),
                    }
                }
            }
        }
        if !matched && combos.len() < MAX_ENTRIES {
            combos.push(inc);
        }
    }
    combos
}

/// `value` under `key` as pairs: a scalar as itself, a mapping's scalars under `key.sub`.
fn flatten(key: &str, value: &Y, out: &mut Vec<(String, String)>) {
    match value {
        Y::Map(m) => m.iter().for_each(|(k, v)| flatten(&format!("{key}.{k}"), v, out)),
        other => out.push((key.to_owned(), other.text())),
    }
}

/// A YAML value as read here.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Y {
    Str(String),
    List(Vec<Y>),
    Map(Vec<(String, Y)>),
}

impl Y {
    fn get(&self, key: &str) -> Option<&Y> {
        match self {
            Y::Map(m) => m.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// A scalar's text; a list's items joined with spaces; a mapping's values alike.
    fn text(&self) -> String {
        match self {
            Y::Str(s) => s.clone(),
            Y::List(l) => l.iter().map(Y::text).collect::<Vec<_>>().join(" "),
            Y::Map(m) => m.iter().map(|(_, v)| v.text()).collect::<Vec<_>>().join(" "),
        }
    }
}

/// One line of YAML: its indentation and its text (comment and trailing blanks removed).
struct Line {
    indent: usize,
    text: String,
}

/// The document of a YAML text (an empty mapping when it has none).
fn parse(text: &str) -> Y {
    let lines: Vec<Line> = text
        .lines()
        .filter_map(|l| {
            let body = l.trim_start_matches(' ');
            let indent = l.len() - body.len();
            let body = without_comment(body).trim_end();
            (!body.is_empty() && body != "---" && body != "...").then(|| Line { indent, text: body.to_owned() })
        })
        .collect();
    let mut r = Reader { lines, raw: text.lines().map(str::to_owned).collect(), at: 0 };
    if r.lines.is_empty() {
        return Y::Map(Vec::new());
    }
    let indent = r.lines[0].indent;
    r.block(indent, 0)
}

/// `line` up to a ` #` comment outside quotes.
fn without_comment(line: &str) -> &str {
    if line.starts_with('#') {
        return "";
    }
    let (mut single, mut double) = (false, false);
    let mut prev = ' ';
    for (i, c) in line.char_indices() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '#' if !single && !double && (prev == ' ' || prev == '\t') => return &line[..i],
            _ => {}
        }
        prev = c;
    }
    line
}

struct Reader {
    lines: Vec<Line>,
    /// The text's lines as written, for block scalars (whose `#` is no comment).
    raw: Vec<String>,
    at: usize,
}

impl Reader {
    fn block(&mut self, indent: usize, depth: usize) -> Y {
        match self.lines.get(self.at) {
            Some(l) if l.text == "-" || l.text.starts_with("- ") => self.list(indent.max(l.indent), depth),
            Some(l) => self.map(indent.max(l.indent), depth),
            None => Y::Str(String::new()),
        }
    }

    fn list(&mut self, indent: usize, depth: usize) -> Y {
        let mut items = Vec::new();
        while let Some(l) = self.lines.get(self.at) {
            if l.indent != indent || !(l.text == "-" || l.text.starts_with("- ")) {
                break;
            }
            let rest = l.text[1..].trim_start().to_owned();
            let column = indent + l.text.len() - rest.len();
            if rest.is_empty() {
                self.at += 1;
                items.push(self.nested(indent, depth));
            } else if map_key(&rest).is_some() {
                self.lines[self.at] = Line { indent: column, text: rest };
                items.push(self.map(column, depth + 1));
            } else {
                items.push(self.value(&rest, indent, depth));
            }
        }
        Y::List(items)
    }

    /// The value below a key or list marker with nothing after it, at `indent`.
    fn nested(&mut self, indent: usize, depth: usize) -> Y {
        match self.lines.get(self.at) {
            _ if depth >= MAX_DEPTH => Y::Str(String::new()),
            Some(n) if n.indent > indent => {
                let i = n.indent;
                self.block(i, depth + 1)
            }
            Some(n) if n.indent == indent && (n.text == "-" || n.text.starts_with("- ")) => {
                self.list(indent, depth + 1)
            }
            _ => Y::Str(String::new()),
        }
    }

    fn map(&mut self, indent: usize, depth: usize) -> Y {
        let mut entries = Vec::new();
        while let Some(l) = self.lines.get(self.at) {
            if l.indent != indent || l.text.starts_with("- ") || l.text == "-" {
                break;
            }
            let Some((key, rest)) = map_key(&l.text) else {
                self.at += 1;
                continue;
            };
            let (key, rest) = (key.to_owned(), rest.to_owned());
            if rest.is_empty() {
                self.at += 1;
                let v = self.nested(indent, depth);
                entries.push((key, v));
            } else {
                let v = self.value(&rest, indent, depth);
                entries.push((key, v));
            }
        }
        Y::Map(entries)
    }

    /// The value written after a key or list marker on the current line (which it consumes, with
    /// the lines a block scalar, a flow collection or a plain scalar goes on over).
    fn value(&mut self, rest: &str, indent: usize, depth: usize) -> Y {
        let start = self.at;
        self.at += 1;
        if rest.starts_with('|') || rest.starts_with('>') {
            let folded = rest.starts_with('>');
            let mut body: Vec<String> = Vec::new();
            while self.lines.get(self.at).is_some_and(|n| n.indent > indent) {
                self.at += 1;
            }
            // The raw lines between this one and the next read line, blank lines kept.
            let first_raw = self.raw_index(start) + 1;
            let end_raw = self.lines.get(self.at).map_or(self.raw.len(), |_| self.raw_index(self.at));
            let raw = &self.raw[first_raw.min(end_raw)..end_raw];
            let cut = raw.iter().filter(|l| !l.trim().is_empty()).map(|l| l.len() - l.trim_start().len()).min();
            for l in raw {
                body.push(l.get(cut.unwrap_or(0)..).unwrap_or("").trim_end().to_owned());
            }
            return Y::Str(body.join(if folded { " " } else { "\n" }).trim().to_owned());
        }
        let mut text = rest.to_owned();
        if rest.starts_with('[') || rest.starts_with('{') {
            while !balanced(&text) && self.lines.get(self.at).is_some_and(|n| n.indent > indent) {
                text.push(' ');
                text.push_str(&self.lines[self.at].text);
                self.at += 1;
            }
            return flow(&mut text.chars().peekable(), depth);
        }
        while self.lines.get(self.at).is_some_and(|n| n.indent > indent) {
            text.push(' ');
            text.push_str(self.lines[self.at].text.trim());
            self.at += 1;
        }
        Y::Str(unquote(&text))
    }

    /// Where the read line `i` is among the raw lines.
    fn raw_index(&self, i: usize) -> usize {
        // Read lines keep their order; the n-th read line is the n-th non-blank, non-comment raw
        // line, except that a list item's line may have been rewritten: count from the start.
        let mut seen = 0;
        for (r, l) in self.raw.iter().enumerate() {
            let body = l.trim_start_matches(' ');
            let body = without_comment(body).trim_end();
            if !body.is_empty() && body != "---" && body != "..." {
                if seen == i {
                    return r;
                }
                seen += 1;
            }
        }
        self.raw.len()
    }
}

/// `key: rest` of a mapping line (`rest` empty for `key:`), quotes taken off the key.
fn map_key(text: &str) -> Option<(&str, &str)> {
    if text.starts_with(['[', '{', '|', '>', '"', '\'']) && !text.starts_with(['"', '\'']) {
        return None;
    }
    let (key, rest) = match text.find(": ") {
        Some(i) => (&text[..i], text[i + 2..].trim()),
        None => (text.strip_suffix(':')?, ""),
    };
    let key = key.trim().trim_matches(|c| c == '"' || c == '\'');
    (!key.is_empty() && !key.contains("${{") && !key.starts_with("- ")).then_some((key, rest))
}

fn balanced(text: &str) -> bool {
    let mut depth = 0i32;
    for c in text.chars() {
        match c {
            '[' | '{' => depth += 1,
            ']' | '}' => depth -= 1,
            _ => {}
        }
    }
    depth <= 0
}

fn unquote(text: &str) -> String {
    let t = text.trim();
    let quoted = t.len() >= 2 && (t.starts_with('"') && t.ends_with('"') || t.starts_with('\'') && t.ends_with('\''));
    if quoted { t[1..t.len() - 1].to_owned() } else { t.to_owned() }
}

/// A flow collection (`[a, b]`, `{k: v}`) or scalar, read from `chars`.
fn flow(chars: &mut std::iter::Peekable<std::str::Chars<'_>>, depth: usize) -> Y {
    while chars.peek().is_some_and(|c| c.is_whitespace()) {
        chars.next();
    }
    match chars.peek() {
        Some('[') if depth < MAX_DEPTH => {
            chars.next();
            let mut items = Vec::new();
            loop {
                while chars.peek().is_some_and(|c| c.is_whitespace() || *c == ',') {
                    chars.next();
                }
                match chars.peek() {
                    None => break,
                    Some(']') => {
                        chars.next();
                        break;
                    }
                    _ => items.push(flow(chars, depth + 1)),
                }
            }
            Y::List(items)
        }
        Some('{') if depth < MAX_DEPTH => {
            chars.next();
            let mut entries = Vec::new();
            loop {
                while chars.peek().is_some_and(|c| c.is_whitespace() || *c == ',') {
                    chars.next();
                }
                match chars.peek() {
                    None => break,
                    Some('}') => {
                        chars.next();
                        break;
                    }
                    _ => {
                        let key = flow_scalar(chars, true);
                        if chars.peek() == Some(&':') {
                            chars.next();
                        }
                        let value = match chars.peek() {
                            Some(',' | '}') | None => Y::Str(String::new()),
                            _ => flow(chars, depth + 1),
                        };
                        entries.push((key, value));
                    }
                }
            }
            Y::Map(entries)
        }
        _ => Y::Str(flow_scalar(chars, false)),
    }
}

/// A scalar in a flow collection: quoted, or up to `,`, `]`, `}` (and `:` for a key), with
/// `${{ ... }}` read whole.
fn flow_scalar(chars: &mut std::iter::Peekable<std::str::Chars<'_>>, key: bool) -> String {
    while chars.peek().is_some_and(|c| c.is_whitespace()) {
        chars.next();
    }
    let mut out = String::new();
    if let Some(q @ ('"' | '\'')) = chars.peek().copied() {
        chars.next();
        for c in chars.by_ref() {
            if c == q {
                break;
            }
            out.push(c);
        }
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        return out;
    }
    let mut braces = 0usize;
    while let Some(&c) = chars.peek() {
        if braces == 0 && (matches!(c, ',' | ']' | '}') || key && c == ':') {
            break;
        }
        if c == '{' && (out.ends_with('$') || braces > 0) {
            braces += 1;
        } else if c == '}' && braces > 0 {
            braces -= 1;
        }
        out.push(c);
        chars.next();
    }
    out.trim().to_owned()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn as_map(pairs: &[(String, String)]) -> BTreeMap<&str, &str> {
        pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
    }

    #[test]
    fn the_yaml_a_workflow_is_written_in() {
        let doc = parse(
            "on: [push]\njobs:\n  test: # the tests\n    name: \"Linux # gcc\"\n    runs-on: ${{ matrix.os }}\n    strategy:\n      matrix:\n        os: [ubuntu-latest, 'windows-latest']\n        config:\n          - {name: a, flags: \"-DX=ON\"}\n          - name: b\n            flags: -DY=ON\n    steps:\n      - uses: actions/checkout@v4\n      - run: |\n          cmake -S . -B build \\\n            -DZ=ON # comment\n\n          ctest\n      - run: >\n          echo a\n          b\n",
        );
        let job = doc.get("jobs").unwrap().get("test").unwrap();
        assert_eq!(job.get("name"), Some(&Y::Str("Linux # gcc".into())));
        let matrix = job.get("strategy").unwrap().get("matrix").unwrap();
        assert_eq!(matrix.get("os").unwrap().text(), "ubuntu-latest windows-latest");
        let Some(Y::List(steps)) = job.get("steps") else { panic!("{job:?}") };
        assert_eq!(steps[1].get("run").unwrap().text(), "cmake -S . -B build \\\n  -DZ=ON # comment\n\nctest");
        assert_eq!(steps[2].get("run").unwrap().text(), "echo a b");
        let entries = matrix_entries(matrix);
        assert_eq!(entries.len(), 4);
        assert_eq!(
            as_map(&entries[1]),
            BTreeMap::from([("os", "ubuntu-latest"), ("config.name", "b"), ("config.flags", "-DY=ON")])
        );
    }

    #[test]
    fn matrix_include_and_exclude_as_github_reads_them() {
        let doc = parse(
            "m:\n  cc: [gcc, clang]\n  std: [11, 17]\n  exclude:\n    - cc: clang\n      std: 11\n  include:\n    - cc: gcc\n      extra: -DA=ON\n    - cc: icc\n      std: 17\n",
        );
        let entries = matrix_entries(doc.get("m").unwrap());
        let shown: Vec<String> =
            entries.iter().map(|e| e.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(",")).collect();
        assert_eq!(
            shown,
            ["cc=gcc,std=11,extra=-DA=ON", "cc=gcc,std=17,extra=-DA=ON", "cc=clang,std=17", "cc=icc,std=17"]
        );
        let only_include = parse("m:\n  include:\n    - name: a\n    - name: b\n");
        assert_eq!(matrix_entries(only_include.get("m").unwrap()).len(), 2);
        assert!(matrix_entries(&parse("m: ${{ fromJson(x) }}\n").get("m").cloned().unwrap()).is_empty());
    }

    #[test]
    fn each_matrix_entry_is_a_job_of_its_own_with_its_values_put_in() {
        let wf = "jobs:\n  build:\n    runs-on: ubuntu-latest\n    strategy:\n      matrix:\n        include:\n          - name: plain\n            flags: -DP_TESTS=ON\n          - name: gpu\n            flags: -DP_CUDA=ON\n    steps:\n      - run: cmake -B b ${{ matrix.flags }} ${{ matrix.unknown }}\n      - run: ctest --test-dir b\n  lint:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo hi\n";
        let read = |_: &str| Some(wf.to_owned());
        let jobs = ci_jobs(&read, &[".github/workflows/ci.yml".to_owned(), ".travis.yml".to_owned()]);
        let names: Vec<&str> = jobs.iter().map(|j| j.name.as_str()).collect();
        assert_eq!(
            names,
            ["build (name=plain, flags=-DP_TESTS=ON)", "build (name=gpu, flags=-DP_CUDA=ON)", "lint", ""]
        );
        assert_eq!(jobs[1].commands[0], "cmake -B b -DP_CUDA=ON ${{ matrix.unknown }}");
        assert!(jobs[1].identity.contains("gpu"));
        assert_eq!(jobs[3].source, ".travis.yml");
    }

    #[test]
    fn any_text_reads_without_panic() {
        for text in ["- - -\n  - :\n", "a: [b, {c: ${{ x }}\n", "a: |\n", ": :\n  - x: {\n", "\t- x\n  a:\n- b"] {
            let _ = parse(text);
            let _ = workflow_jobs("w.yml", &format!("jobs:\n  j:\n    steps:\n{text}"));
        }
    }
}
