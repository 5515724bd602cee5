//! The one reader of unified diffs: lines classified by following each hunk's line counts
//! ([`diff_lines`]), a diff cut into per-file pieces ([`file_diffs`]) with the path each is about,
//! and a diff's shape: files, hunks, added and removed lines, every path it names
//! ([`PatchShape`]), its hunks ([`patch_hunks`]) and the diff with one of them left out
//! ([`without_hunk`]). Pure text; never applies a patch or reads a repository. Used by mining (the
//! test/fix split), the pipeline filters, curation (difficulty features, duplicate detection),
//! evaluation (the files a test patch owns) and the git crate (the patch safety check, hunks moved
//! to where they match) and validation's hunk runs, so that all of them read the same lines.

use std::collections::BTreeSet;

/// One line of a unified diff.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffLine<'a> {
    /// The first line of one file's diff: `diff --git a/x b/y`, or the `--- x` line that starts a
    /// file in a plain unified diff without git headers.
    FileStart(&'a str),
    /// Any other line outside hunks: `index ..`, `--- a/x`, `+++ b/x`, `rename from x`, mode lines,
    /// binary markers, text before the first file.
    Header(&'a str),
    /// `@@ -a,b +c,d @@ context`.
    HunkStart(&'a str),
    /// An added line, without its `+`.
    Added(&'a str),
    /// A removed line, without its `-`.
    Removed(&'a str),
    /// A context line, without its leading space.
    Context(&'a str),
    /// `\ No newline at end of file`.
    NoNewline,
}

/// Iterator of [`DiffLine`]s with the byte offset where each line starts.
#[derive(Debug, Clone)]
pub struct DiffLines<'a> {
    text: &'a str,
    pos: usize,
    hunk: Hunk,
    /// The current file was opened by a `diff --git` line and has had no hunk yet: its `---`
    /// line is a header, not the start of another file.
    git_headers: bool,
}

/// Where the reader is relative to hunks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hunk {
    Outside,
    /// Inside a hunk with this many old and new lines left.
    Counted(u64, u64),
    /// Inside a hunk whose header gave no counts: it lasts until a line that cannot be in one.
    Uncounted,
}

/// Reads `diff` line by line. A hunk lasts as long as its `@@ -a,b +c,d @@` header says, so an
/// added line `++x` or a removed line `--- x` inside it is never taken for a file header.
pub fn diff_lines(diff: &str) -> DiffLines<'_> {
    DiffLines { text: diff, pos: 0, hunk: Hunk::Outside, git_headers: false }
}

impl<'a> Iterator for DiffLines<'a> {
    type Item = (usize, DiffLine<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        if self.pos >= self.text.len() {
            return None;
        }
        let start = self.pos;
        let rest = &self.text[start..];
        let end = rest.find('\n').map_or(rest.len(), |i| i + 1);
        self.pos += end;
        let line = rest[..end].strip_suffix('\n').unwrap_or(&rest[..end]);
        let line = line.strip_suffix('\r').unwrap_or(line);
        Some((start, self.classify(line)))
    }
}

impl<'a> DiffLines<'a> {
    fn classify(&mut self, line: &'a str) -> DiffLine<'a> {
        let first = line.as_bytes().first().copied();
        match self.hunk {
            Hunk::Counted(old, new) => {
                let (kind, old, new) = match first {
                    Some(b'+') => (DiffLine::Added(&line[1..]), old, new.saturating_sub(1)),
                    Some(b'-') => (DiffLine::Removed(&line[1..]), old.saturating_sub(1), new),
                    Some(b' ') => (DiffLine::Context(&line[1..]), old.saturating_sub(1), new.saturating_sub(1)),
                    None => (DiffLine::Context(""), old.saturating_sub(1), new.saturating_sub(1)),
                    Some(b'\\') => return DiffLine::NoNewline,
                    // A line no hunk can hold: the hunk was shorter than its header said.
                    _ => return self.outside(line),
                };
                self.hunk = if old == 0 && new == 0 { Hunk::Outside } else { Hunk::Counted(old, new) };
                kind
            }
            Hunk::Uncounted => match first {
                Some(b'+') if !line.starts_with("+++ ") => DiffLine::Added(&line[1..]),
                Some(b'-') if !line.starts_with("--- ") => DiffLine::Removed(&line[1..]),
                Some(b' ') => DiffLine::Context(&line[1..]),
                None => DiffLine::Context(""),
                Some(b'\\') => DiffLine::NoNewline,
                _ => self.outside(line),
            },
            Hunk::Outside => self.outside(line),
        }
    }

    fn outside(&mut self, line: &'a str) -> DiffLine<'a> {
        self.hunk = Hunk::Outside;
        if line.starts_with("diff --git ") {
            self.git_headers = true;
            DiffLine::FileStart(line)
        } else if line.starts_with("@@") {
            self.git_headers = false;
            self.hunk = hunk_counts(line)
                .map_or(Hunk::Uncounted, |(o, n)| if o == 0 && n == 0 { Hunk::Outside } else { Hunk::Counted(o, n) });
            DiffLine::HunkStart(line)
        } else if line.starts_with('\\') {
            DiffLine::NoNewline
        } else if line.starts_with("--- ") && !self.git_headers {
            DiffLine::FileStart(line)
        } else {
            DiffLine::Header(line)
        }
    }
}

/// The old and new line counts of a hunk header `@@ -a[,b] +c[,d] @@` (a missing count is 1).
fn hunk_counts(line: &str) -> Option<(u64, u64)> {
    let mut parts = line.strip_prefix("@@ ")?.split(' ');
    let count = |range: &str, sign: char| -> Option<u64> {
        let range = range.strip_prefix(sign)?;
        match range.split_once(',') {
            Some((_, n)) => n.parse().ok(),
            None => range.parse::<u64>().ok().map(|_| 1),
        }
    };
    let old = count(parts.next()?, '-')?;
    let new = count(parts.next()?, '+')?;
    (parts.next()? == "@@").then_some((old, new))
}

/// One file's part of a unified diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDiff<'a> {
    /// Path after the change (the old path for a deletion).
    pub path: String,
    /// The text of this file's diff, from its first line to the next file's.
    pub text: &'a str,
}

/// Cuts a unified diff into per-file pieces; every byte from the first file on belongs to exactly
/// one piece, and text before the first file is dropped.
pub fn file_diffs(diff: &str) -> Vec<FileDiff<'_>> {
    let starts: Vec<usize> =
        diff_lines(diff).filter(|(_, l)| matches!(l, DiffLine::FileStart(_))).map(|(at, _)| at).collect();
    starts
        .iter()
        .enumerate()
        .map(|(i, &at)| {
            let text = &diff[at..starts.get(i + 1).copied().unwrap_or(diff.len())];
            FileDiff { path: file_path(text), text }
        })
        .collect()
}

/// The path one file's diff is about: `+++ b/...` unless the file is deleted, then `--- a/...`;
/// `rename to` / `copy to` for pure renames and copies; the `diff --git` header as a last resort.
fn file_path(text: &str) -> String {
    let (mut minus, mut plus, mut rename_to) = (None, None, None);
    for (_, line) in diff_lines(text) {
        let line = match line {
            DiffLine::Header(line) | DiffLine::FileStart(line) => line,
            DiffLine::HunkStart(_) => break,
            _ => continue,
        };
        if line.starts_with("GIT binary patch") {
            break;
        }
        if let Some(p) = line.strip_prefix("+++ ") {
            plus = Some(p);
        } else if let Some(p) = line.strip_prefix("--- ") {
            minus = Some(p);
        } else if let Some(p) = line.strip_prefix("rename to ").or_else(|| line.strip_prefix("copy to ")) {
            rename_to = Some(p);
        }
    }
    let clean = |p: &str, prefix: &str| -> Option<String> {
        let p = p.split('\t').next().unwrap_or(p).trim_matches('"');
        if p == "/dev/null" { None } else { Some(p.strip_prefix(prefix).unwrap_or(p).to_owned()) }
    };
    if let Some(p) = plus.and_then(|p| clean(p, "b/")) {
        return p;
    }
    if let Some(p) = rename_to {
        return p.trim_matches('"').to_owned();
    }
    if let Some(p) = minus.and_then(|p| clean(p, "a/")) {
        return p;
    }
    diff_git_path(text.lines().next().unwrap_or_default().trim_start_matches("diff --git "))
}

/// The shape of one unified diff (`git diff` / GitHub `.diff` format).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PatchShape {
    /// Paths of the changed files (the new path; the old one for a deletion), in diff order.
    pub files: Vec<String>,
    /// Number of `@@` hunks.
    pub hunks: u64,
    /// Lines starting with `+` inside hunks.
    pub added: u64,
    /// Lines starting with `-` inside hunks.
    pub removed: u64,
    /// Every path the diff names, old and new (renames, deletions), each once, in diff order.
    pub touched: Vec<String>,
}

impl PatchShape {
    /// Reads a diff. Anything that is not a diff (empty text, prose) gives an empty shape.
    pub fn of(diff: &str) -> PatchShape {
        let mut shape = PatchShape::default();
        for file in file_diffs(diff) {
            shape.touch(&file.path);
            for (_, line) in diff_lines(file.text) {
                match line {
                    DiffLine::HunkStart(_) => shape.hunks += 1,
                    DiffLine::Added(_) => shape.added += 1,
                    DiffLine::Removed(_) => shape.removed += 1,
                    DiffLine::FileStart(l) | DiffLine::Header(l) => {
                        if let Some(path) =
                            ["--- a/", "rename from ", "copy from ", "+++ b/"].iter().find_map(|p| l.strip_prefix(p))
                        {
                            shape.touch(path.split('\t').next().unwrap_or(path).trim_matches('"'));
                        }
                    }
                    DiffLine::Context(_) | DiffLine::NoNewline => {}
                }
            }
            shape.files.push(file.path);
        }
        shape
    }

    fn touch(&mut self, path: &str) {
        if !self.touched.iter().any(|p| p == path) {
            self.touched.push(path.to_owned());
        }
    }

    /// Added plus removed lines.
    pub fn changed_lines(&self) -> u64 {
        self.added + self.removed
    }

    /// Number of distinct parent directories of the changed files (the root counts as one).
    pub fn directories(&self) -> u64 {
        self.files.iter().map(|f| f.rsplit_once('/').map_or("", |(d, _)| d)).collect::<BTreeSet<_>>().len() as u64
    }

    /// Number of distinct top-level entries (first path component; files at the root count as one).
    pub fn top_dirs(&self) -> u64 {
        self.files.iter().map(|f| f.split_once('/').map_or("", |(d, _)| d)).collect::<BTreeSet<_>>().len() as u64
    }
}

/// One hunk of a unified diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchHunk {
    /// The file it changes ([`FileDiff::path`]).
    pub file: String,
    /// Its `@@ -a,b +c,d @@ context` line.
    pub header: String,
}

impl PatchHunk {
    /// `file @@ -a,b +c,d @@ context`, as records name a hunk.
    pub fn name(&self) -> String {
        format!("{} {}", self.file, self.header)
    }
}

/// The hunks of `diff`, in diff order (the order [`without_hunk`] counts them in).
pub fn patch_hunks(diff: &str) -> Vec<PatchHunk> {
    let mut hunks = Vec::new();
    for f in file_diffs(diff) {
        for (_, line) in diff_lines(f.text) {
            if let DiffLine::HunkStart(h) = line {
                hunks.push(PatchHunk { file: f.path.clone(), header: h.to_owned() });
            }
        }
    }
    hunks
}

/// `diff` without its hunk `index` (counted as [`patch_hunks`] counts), or None when it has no
/// such hunk. The later hunks of the same file start where the old file's lines now land (their
/// `+c` moved by what the left-out hunk added or removed); a file whose only hunk it was is left
/// out whole, headers and all (a new file is then not created, a rename not made). Every other
/// byte stays as it was.
pub fn without_hunk(diff: &str, index: usize) -> Option<String> {
    let files = file_diffs(diff);
    // Every byte from the first file on is in one piece: what comes before is the rest.
    let before = diff.len() - files.iter().map(|f| f.text.len()).sum::<usize>();
    let mut out = diff[..before].to_owned();
    let (mut seen, mut found) = (0, false);
    for f in &files {
        let starts: Vec<usize> =
            diff_lines(f.text).filter(|(_, l)| matches!(l, DiffLine::HunkStart(_))).map(|(at, _)| at).collect();
        let local = index.checked_sub(seen).filter(|i| *i < starts.len());
        seen += starts.len();
        let Some(local) = local else {
            out.push_str(f.text);
            continue;
        };
        found = true;
        if starts.len() == 1 {
            continue;
        }
        let hunk = |i: usize| &f.text[starts[i]..starts.get(i + 1).copied().unwrap_or(f.text.len())];
        let delta = hunk(local).lines().next().and_then(hunk_counts).map_or(0, |(old, new)| new as i64 - old as i64);
        out.push_str(&f.text[..starts[0]]);
        for i in 0..starts.len() {
            match i.cmp(&local) {
                std::cmp::Ordering::Less => out.push_str(hunk(i)),
                std::cmp::Ordering::Equal => {}
                std::cmp::Ordering::Greater => out.push_str(&shift_new_start(hunk(i), delta)),
            }
        }
    }
    found.then_some(out)
}

/// One file's diff cut in two by hunk: the hunks `take` says yes to, and the others, each half a
/// diff of that file (its headers, then its hunks) that applies alone to the old file: a hunk's
/// new start `c` is moved back by what the earlier hunks of the other half added or removed.
/// A half with no hunk is empty. `take` is asked once per hunk, with the hunk's text (its header
/// line first). A diff with no hunk (a rename, a binary file) is all in the second half.
pub fn partition_hunks(file: &str, mut take: impl FnMut(&str) -> bool) -> (String, String) {
    let starts: Vec<usize> =
        diff_lines(file).filter(|(_, l)| matches!(l, DiffLine::HunkStart(_))).map(|(at, _)| at).collect();
    let Some(&first) = starts.first() else {
        return (String::new(), file.to_owned());
    };
    let hunk = |i: usize| &file[starts[i]..starts.get(i + 1).copied().unwrap_or(file.len())];
    let mut halves = [String::new(), String::new()];
    // What each half's hunks so far added minus what they removed.
    let mut deltas = [0i64, 0];
    for i in 0..starts.len() {
        let text = hunk(i);
        let side = usize::from(!take(text));
        let delta = text.lines().next().and_then(hunk_counts).map_or(0, |(old, new)| new as i64 - old as i64);
        if halves[side].is_empty() {
            halves[side].push_str(&file[..first]);
        }
        halves[side].push_str(&shift_new_start(text, deltas[1 - side]));
        deltas[side] += delta;
    }
    let [taken, rest] = halves;
    (taken, rest)
}

/// `hunk` with the new start `c` of its `@@ -a,b +c,d @@` line moved back by `delta`; a header
/// without a new start is kept as it is.
fn shift_new_start(hunk: &str, delta: i64) -> String {
    let (line, rest) = hunk.split_at(hunk.find('\n').unwrap_or(hunk.len()));
    let shifted = line.find(" +").and_then(|at| {
        let from = at + 2;
        let digits = line[from..].bytes().take_while(u8::is_ascii_digit).count();
        let start: i64 = line[from..from + digits].parse().ok()?;
        Some(format!("{}{}{}", &line[..from], (start - delta).max(0), &line[from + digits..]))
    });
    format!("{}{rest}", shifted.as_deref().unwrap_or(line))
}

/// The `b/` path of a `diff --git a/X b/Y` line (quoted paths are unquoted naively).
fn diff_git_path(rest: &str) -> String {
    let rest = rest.trim_end();
    if let Some(i) = rest.rfind(" b/") {
        return rest[i + 3..].trim_matches('"').to_owned();
    }
    if let Some(i) = rest.rfind(" \"b/") {
        return rest[i + 4..].trim_end_matches('"').to_owned();
    }
    rest.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_cut_by_hunk_gives_two_diffs_that_each_apply_to_the_old_file() {
        let file = "diff --git a/src/a.rs b/src/a.rs\nindex 1..2 100644\n--- a/src/a.rs\n+++ b/src/a.rs\n@@ -1,2 +1,3 @@\n a\n+b\n c\n@@ -10,2 +11,4 @@ mod tests {\n x\n+y\n+z\n w\n@@ -20,3 +23,2 @@\n p\n-q\n r\n";
        let (tests, rest) = partition_hunks(file, |h| h.contains("mod tests"));
        let headers = "diff --git a/src/a.rs b/src/a.rs\nindex 1..2 100644\n--- a/src/a.rs\n+++ b/src/a.rs\n";
        // Alone on the old file, the second hunk starts where it did: the first added nothing here.
        assert_eq!(tests, format!("{headers}@@ -10,2 +10,4 @@ mod tests {{\n x\n+y\n+z\n w\n"));
        // The third hunk is no longer behind the two lines the test hunk added.
        assert_eq!(rest, format!("{headers}@@ -1,2 +1,3 @@\n a\n+b\n c\n@@ -20,3 +21,2 @@\n p\n-q\n r\n"));
        let (none, all) = partition_hunks(file, |_| false);
        assert_eq!((none.as_str(), all.as_str()), ("", file));
        let rename = "diff --git a/a.go b/b.go\nsimilarity index 100%\nrename from a.go\nrename to b.go\n";
        assert_eq!(partition_hunks(rename, |_| true), (String::new(), rename.to_owned()));
    }

    #[test]
    fn counts_files_hunks_and_lines() {
        let diff = "diff --git a/src/a.rs b/src/a.rs\nindex 1..2 100644\n--- a/src/a.rs\n+++ b/src/a.rs\n@@ -1,3 +1,3 @@\n a\n-b\n+c\n+d\n@@ -10 +11 @@\n--x\n++y\ndiff --git a/README b/README\n--- a/README\n+++ b/README\n@@ -1 +1 @@\n-old\n+new\n\\ No newline at end of file\ndiff --git a/src/deep/b.rs b/src/deep/b.rs\nnew file mode 100644\n--- /dev/null\n+++ b/src/deep/b.rs\n@@ -0,0 +1 @@\n+fn main() {}\n";
        let s = PatchShape::of(diff);
        assert_eq!(s.files, ["src/a.rs", "README", "src/deep/b.rs"]);
        assert_eq!((s.hunks, s.added, s.removed), (4, 5, 3));
        assert_eq!((s.directories(), s.top_dirs()), (3, 2));
        assert_eq!(s.touched, s.files);
        let rename = "diff --git a/t/old.go b/t/new.go\nsimilarity index 90%\nrename from t/old.go\nrename to t/new.go\n--- a/t/old.go\n+++ b/t/new.go\n@@ -1 +1 @@\n-a\n+b\n";
        assert_eq!(PatchShape::of(rename).touched, ["t/new.go", "t/old.go"]);
    }

    #[test]
    fn hunks_last_as_long_as_their_counts() {
        // Inside a hunk, `--- x` is a removed line and `+++ y` an added one, not file headers.
        let diff = "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n--- x\n+++ y\n c\n\\ No newline at end of file\ndiff --git a/y b/y\n--- a/y\n+++ b/y\n@@ -3 +3,2 @@\n-a\n+b\n+\n";
        let kinds: Vec<DiffLine> = diff_lines(diff).map(|(_, l)| l).collect();
        assert_eq!(
            kinds,
            [
                DiffLine::FileStart("diff --git a/x b/x"),
                DiffLine::Header("--- a/x"),
                DiffLine::Header("+++ b/x"),
                DiffLine::HunkStart("@@ -1,2 +1,2 @@"),
                DiffLine::Removed("-- x"),
                DiffLine::Added("++ y"),
                DiffLine::Context("c"),
                DiffLine::NoNewline,
                DiffLine::FileStart("diff --git a/y b/y"),
                DiffLine::Header("--- a/y"),
                DiffLine::Header("+++ b/y"),
                DiffLine::HunkStart("@@ -3 +3,2 @@"),
                DiffLine::Removed("a"),
                DiffLine::Added("b"),
                DiffLine::Added(""),
            ]
        );
        let files = file_diffs(diff);
        assert_eq!(files.iter().map(|f| f.path.as_str()).collect::<Vec<_>>(), ["x", "y"]);
        assert_eq!(files.iter().map(|f| f.text).collect::<String>(), diff, "every byte in one piece");
        assert_eq!(PatchShape::of(diff).changed_lines(), 5);
    }

    #[test]
    fn paths_of_deletions_renames_binaries_and_plain_diffs() {
        let deleted = "diff --git a/old_test.go b/old_test.go\ndeleted file mode 100644\n--- a/old_test.go\n+++ /dev/null\n@@ -1 +0,0 @@\n-package x\n";
        let renamed = "diff --git a/a.go b/b_test.go\nsimilarity index 100%\nrename from a.go\nrename to b_test.go\n";
        let binary = "diff --git a/testdata/img.png b/testdata/img.png\nindex 1..2 100644\nBinary files a/testdata/img.png and b/testdata/img.png differ\n";
        let plain = "--- a/x.c\t2020-01-01\n+++ b/x.c\t2020-01-02\n@@ -1 +1 @@\n-a\n+b\n--- a/y.c\n+++ b/y.c\n@@ -1 +1 @@\n-a\n+b\n";
        let all = format!("preamble\n{deleted}{renamed}{binary}");
        let paths: Vec<String> = file_diffs(&all).into_iter().map(|f| f.path).collect();
        assert_eq!(paths, ["old_test.go", "b_test.go", "testdata/img.png"]);
        let plain_paths: Vec<String> = file_diffs(plain).into_iter().map(|f| f.path).collect();
        assert_eq!(plain_paths, ["x.c", "y.c"]);
        assert_eq!(PatchShape::of(plain).changed_lines(), 4);
        // A header without counts: the hunk lasts until a line no hunk can hold.
        let uncounted = "diff --git a/z b/z\n@@ weird @@\n+a\n-b\nrename from q\n";
        assert_eq!(PatchShape::of(uncounted).changed_lines(), 2);
        assert_eq!(PatchShape::of(uncounted).touched, ["z", "q"]);
    }

    #[test]
    fn not_a_diff_is_empty() {
        assert_eq!(PatchShape::of(""), PatchShape::default());
        assert_eq!(PatchShape::of("+ hello\n- world\n").changed_lines(), 0);
        let plain = "--- a/x.c\n+++ b/x.c\n@@ -1 +1 @@\n-a\n+b\n";
        assert_eq!(PatchShape::of(plain).files, ["x.c"]);
        assert_eq!(PatchShape::of(plain).touched, ["x.c"]);
    }

    #[test]
    fn hunks_are_named_by_file_and_header() {
        let hunks = patch_hunks(TWO_FILES);
        let names: Vec<String> = hunks.iter().map(PatchHunk::name).collect();
        assert_eq!(
            names,
            [
                "stack.go @@ -20,7 +20,7 @@ func (s *Stack[T]) Pop() (T, error) {",
                "stack.go @@ -30,2 +30,3 @@ func (s *Stack[T]) Pop() (T, error) {",
                "stack.go @@ -40 +41 @@ func (s *Stack[T]) Len() int {",
                "doc.go @@ -0,0 +1,2 @@",
            ]
        );
        assert!(patch_hunks("").is_empty() && patch_hunks("not a diff\n").is_empty());
    }

    const TWO_FILES: &str = "From the PR\ndiff --git a/stack.go b/stack.go\nindex 1..2 100644\n--- a/stack.go\n+++ b/stack.go\n@@ -20,7 +20,7 @@ func (s *Stack[T]) Pop() (T, error) {\n a\n-b\n+c\n@@ -30,2 +30,3 @@ func (s *Stack[T]) Pop() (T, error) {\n d\n+e\n f\n@@ -40 +41 @@ func (s *Stack[T]) Len() int {\n-g\n+h\n\\ No newline at end of file\ndiff --git a/doc.go b/doc.go\nnew file mode 100644\n--- /dev/null\n+++ b/doc.go\n@@ -0,0 +1,2 @@\n+// Package x.\n+package x\n";

    #[test]
    fn a_hunk_left_out_moves_the_later_hunks_of_its_file_and_nothing_else() {
        // The second hunk added a line: the third now starts a line earlier in the new file.
        let without = without_hunk(TWO_FILES, 1).unwrap();
        assert_eq!(
            without,
            TWO_FILES
                .replace("@@ -30,2 +30,3 @@ func (s *Stack[T]) Pop() (T, error) {\n d\n+e\n f\n", "")
                .replace("@@ -40 +41 @@", "@@ -40 +40 @@")
        );
        assert_eq!(
            patch_hunks(&without).iter().map(|h| h.header.as_str()).collect::<Vec<_>>(),
            [
                "@@ -20,7 +20,7 @@ func (s *Stack[T]) Pop() (T, error) {",
                "@@ -40 +40 @@ func (s *Stack[T]) Len() int {",
                "@@ -0,0 +1,2 @@"
            ]
        );
        // A hunk that adds as many lines as it removes moves nothing; the last one moves nothing.
        assert_eq!(
            without_hunk(TWO_FILES, 0).unwrap(),
            TWO_FILES.replace("@@ -20,7 +20,7 @@ func (s *Stack[T]) Pop() (T, error) {\n a\n-b\n+c\n", "")
        );
        let last_of_stack = without_hunk(TWO_FILES, 2).unwrap();
        assert!(last_of_stack.ends_with(" f\ndiff --git a/doc.go b/doc.go\nnew file mode 100644\n--- /dev/null\n+++ b/doc.go\n@@ -0,0 +1,2 @@\n+// Package x.\n+package x\n"), "{last_of_stack}");
        // Every hunk once: each diff has the others, in order.
        let all = patch_hunks(TWO_FILES);
        for i in 0..all.len() {
            let rest: Vec<String> =
                patch_hunks(&without_hunk(TWO_FILES, i).unwrap()).into_iter().map(|h| h.file).collect();
            let expect: Vec<String> =
                all.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, h)| h.file.clone()).collect();
            assert_eq!(rest, expect, "hunk {i}");
        }
    }

    #[test]
    fn a_files_only_hunk_takes_the_file_with_it() {
        // The new file's one hunk: the file is not created at all (no headers left behind).
        assert_eq!(without_hunk(TWO_FILES, 3).unwrap(), TWO_FILES[..TWO_FILES.find("diff --git a/doc.go").unwrap()]);
        let one = "diff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -1 +1 @@\n-x\n+y\n";
        assert_eq!(without_hunk(one, 0).as_deref(), Some(""));
        assert_eq!(without_hunk(one, 1), None);
        assert_eq!(without_hunk("", 0), None);
        // A header without a new start stays as it is.
        assert_eq!(shift_new_start("@@ weird @@\n+a\n", 3), "@@ weird @@\n+a\n");
        assert_eq!(shift_new_start("@@ -5 +9 @@ f\n-a\n", -2), "@@ -5 +11 @@ f\n-a\n");
    }
}
