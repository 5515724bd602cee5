//! Layout variants of a fix patch: the same change laid out as another author (or a model)
//! might lay it out, which a correct fix must survive. Validation grades each through
//! evaluation's own path; a listed test that passes under the gold patch and not under a
//! variant depends on where the fix puts its lines (a doctest named by its line, say) and is
//! left out of the lists.
//!
//! - [`LayoutVariant::BlankLine`]: a blank line added before the first change of each code file
//!   the fix touches, so that every line after it moves down by one.
//! - [`LayoutVariant::OffsetHunks`]: every hunk header of those files names lines a few lines
//!   off, so that `git apply` places the hunks by their context (`Hunk #1 succeeded at 12
//!   (offset -3 lines)`), as it does for a patch made against a slightly different tree.
//!
//! Pure text over core's diff reader ([`crate::file_diffs`], [`crate::diff_lines`]); files that
//! are not code (by the caller's rule), deleted files and binary diffs are kept byte for byte.

use crate::{DiffLine, diff_lines, file_diffs};

/// How far [`LayoutVariant::OffsetHunks`] moves each hunk's header.
pub const HUNK_OFFSET: u64 = 3;

/// A layout variant of a fix patch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LayoutVariant {
    /// A blank line before the first change of each code file.
    BlankLine,
    /// Hunk headers [`HUNK_OFFSET`] lines off.
    OffsetHunks,
}

impl LayoutVariant {
    /// Every variant, in the order validation grades them.
    pub const ALL: [LayoutVariant; 2] = [LayoutVariant::BlankLine, LayoutVariant::OffsetHunks];

    /// The name in records and logs.
    pub fn as_str(self) -> &'static str {
        match self {
            LayoutVariant::BlankLine => "blank_line",
            LayoutVariant::OffsetHunks => "offset_hunks",
        }
    }

    /// `diff` laid out as this variant, changing only the files `code` keeps; None when no such
    /// file has a hunk to change (the variant would be the gold patch itself).
    pub fn apply(self, diff: &str, code: &dyn Fn(&str) -> bool) -> Option<String> {
        match self {
            LayoutVariant::BlankLine => with_blank_line(diff, code),
            LayoutVariant::OffsetHunks => with_offset_hunks(diff, code, HUNK_OFFSET),
        }
    }
}

/// The numbers of a hunk header `@@ -a,b +c,d @@ rest` (an omitted count is 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Header<'a> {
    old_start: u64,
    old_count: u64,
    new_start: u64,
    new_count: u64,
    /// Everything after the second `@@` (the function git names), with the line ending.
    rest: &'a str,
}

impl<'a> Header<'a> {
    fn parse(line: &'a str) -> Option<Header<'a>> {
        let body = line.strip_prefix("@@ -")?;
        let close = body.find(" @@")?;
        let (ranges, rest) = (&body[..close], &body[close + 3..]);
        let (old, new) = ranges.split_once(" +")?;
        let range = |r: &str| -> Option<(u64, u64)> {
            match r.split_once(',') {
                Some((s, c)) => Some((s.parse().ok()?, c.parse().ok()?)),
                None => Some((r.parse().ok()?, 1)),
            }
        };
        let ((old_start, old_count), (new_start, new_count)) = (range(old)?, range(new)?);
        Some(Header { old_start, old_count, new_start, new_count, rest })
    }

    fn write(&self, out: &mut String) {
        out.push_str(&format!(
            "@@ -{},{} +{},{} @@{}",
            self.old_start, self.old_count, self.new_start, self.new_count, self.rest
        ));
    }
}

/// Whether a file's diff deletes it or holds no text hunk (a binary diff, a mode change).
fn kept_as_is(text: &str) -> bool {
    let head = text.lines().take_while(|l| !l.starts_with("@@"));
    let mut deleted = false;
    for l in head {
        deleted |= l.starts_with("deleted file mode") || l == "+++ /dev/null";
    }
    deleted || !text.lines().any(|l| l.starts_with("@@ "))
}

/// Rewrites each code file's diff with `edit` (the file's text, its hunk starts' offsets);
/// None when no file changed.
fn rewrite(diff: &str, code: &dyn Fn(&str) -> bool, edit: &dyn Fn(&str, &[usize]) -> Option<String>) -> Option<String> {
    let files = file_diffs(diff);
    let before = diff.len() - files.iter().map(|f| f.text.len()).sum::<usize>();
    let mut out = diff[..before].to_owned();
    let mut changed = false;
    for f in &files {
        let starts: Vec<usize> =
            diff_lines(f.text).filter(|(_, l)| matches!(l, DiffLine::HunkStart(_))).map(|(at, _)| at).collect();
        match (code(&f.path) && !kept_as_is(f.text)).then(|| edit(f.text, &starts)).flatten() {
            Some(text) => {
                changed = true;
                out.push_str(&text);
            }
            None => out.push_str(f.text),
        }
    }
    changed.then_some(out)
}

/// The hunk starting at `starts[i]` of `text`.
fn hunk<'a>(text: &'a str, starts: &[usize], i: usize) -> &'a str {
    &text[starts[i]..starts.get(i + 1).copied().unwrap_or(text.len())]
}

/// `hunk` split into its header line (with its ending) and its body.
fn split_header(hunk: &str) -> (&str, &str) {
    hunk.split_at(hunk.find('\n').map_or(hunk.len(), |i| i + 1))
}

/// [`LayoutVariant::BlankLine`].
fn with_blank_line(diff: &str, code: &dyn Fn(&str) -> bool) -> Option<String> {
    rewrite(diff, code, &|text, starts| {
        let first = *starts.first()?;
        let mut out = text[..first].to_owned();
        for i in 0..starts.len() {
            let (line, body) = split_header(hunk(text, starts, i));
            let mut h = Header::parse(line)?;
            if i == 0 {
                h.new_count += 1;
                h.write(&mut out);
                let lines: Vec<&str> = body.split_inclusive('\n').collect();
                let mut at = lines.iter().position(|l| l.starts_with('+') || l.starts_with('-'))?;
                // Not inside a line continuation (a C macro's `\`): a blank line would end it.
                let continued = |l: &str| l.trim_end_matches(['\r', '\n']).ends_with('\\');
                while at > 0 && continued(lines[at - 1]) {
                    at -= 1;
                }
                if at == 0 && lines.first().is_some_and(|l| continued(l)) {
                    return None;
                }
                // With the ending of the line it goes before.
                for (k, l) in lines.iter().enumerate() {
                    if k == at {
                        out.push_str(if l.ends_with("\r\n") { "+\r\n" } else { "+\n" });
                    }
                    out.push_str(l);
                }
            } else {
                h.new_start += 1;
                h.write(&mut out);
                out.push_str(body);
            }
        }
        Some(out)
    })
}

/// [`LayoutVariant::OffsetHunks`]: every header of a hunk that changes an existing file's lines
/// names them `offset` lines further down (a hunk starting at line 0, a new file's, stays).
fn with_offset_hunks(diff: &str, code: &dyn Fn(&str) -> bool, offset: u64) -> Option<String> {
    rewrite(diff, code, &|text, starts| {
        let first = *starts.first()?;
        let mut out = text[..first].to_owned();
        let mut moved = false;
        for i in 0..starts.len() {
            let (line, body) = split_header(hunk(text, starts, i));
            let mut h = Header::parse(line)?;
            if h.old_start > 0 {
                h.old_start += offset;
                h.new_start += offset;
                moved = true;
            }
            h.write(&mut out);
            out.push_str(body);
        }
        moved.then_some(out)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIX: &str = "diff --git a/src/map.rs b/src/map.rs\nindex 1..2 100644\n--- a/src/map.rs\n+++ b/src/map.rs\n@@ -10,3 +10,4 @@ impl Map {\n     fn a() {}\n+    fn b() {}\n \n }\n@@ -20 +21,2 @@\n-x\n+y\n+z\ndiff --git a/README.md b/README.md\n--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@\n-old\n+new\ndiff --git a/src/new.rs b/src/new.rs\nnew file mode 100644\n--- /dev/null\n+++ b/src/new.rs\n@@ -0,0 +1 @@\n+pub fn n() {}\ndiff --git a/src/gone.rs b/src/gone.rs\ndeleted file mode 100644\n--- a/src/gone.rs\n+++ /dev/null\n@@ -1 +0,0 @@\n-fn g() {}\n";

    fn rust(path: &str) -> bool {
        path.ends_with(".rs")
    }

    #[test]
    fn a_blank_line_goes_before_the_first_change_of_each_code_file() {
        let v = LayoutVariant::BlankLine.apply(FIX, &rust).unwrap();
        let expected = FIX
            .replace(
                "@@ -10,3 +10,4 @@ impl Map {\n     fn a() {}\n+",
                "@@ -10,3 +10,5 @@ impl Map {\n     fn a() {}\n+\n+",
            )
            .replace("@@ -20 +21,2 @@", "@@ -20,1 +22,2 @@")
            .replace("@@ -0,0 +1 @@\n+pub", "@@ -0,0 +1,2 @@\n+\n+pub");
        assert_eq!(v, expected);
        // The README is not code and the deleted file has nothing to move: both as they were.
        assert!(v.contains("@@ -1 +1 @@\n-old\n+new\n") && v.contains("@@ -1 +0,0 @@\n-fn g() {}\n"));
        // The hunks still read as long as their headers say.
        assert_eq!(crate::PatchShape::of(&v).added, crate::PatchShape::of(FIX).added + 2);
    }

    #[test]
    fn offset_hunks_name_lines_a_few_lines_off() {
        let v = LayoutVariant::OffsetHunks.apply(FIX, &rust).unwrap();
        assert!(v.contains("@@ -13,3 +13,4 @@ impl Map {\n") && v.contains("@@ -23,1 +24,2 @@\n"), "{v}");
        // A new file's hunk starts at 0: the file is kept as it was, as is the README.
        assert!(v.contains("@@ -0,0 +1 @@\n+pub fn n") && v.contains("@@ -1 +1 @@\n-old"));
    }

    #[test]
    fn the_blank_line_never_goes_inside_a_line_continuation() {
        let diff = "diff --git a/m.h b/m.h\n--- a/m.h\n+++ b/m.h\n@@ -1,3 +1,3 @@\n int a;\n #define TWICE(x) \\\n-  (x + x)\n+  ((x) + (x))\n";
        let v = LayoutVariant::BlankLine.apply(diff, &|_| true).unwrap();
        assert!(v.ends_with("@@ -1,3 +1,4 @@\n int a;\n+\n #define TWICE(x) \\\n-  (x + x)\n+  ((x) + (x))\n"), "{v}");
        // A continuation from the hunk's first line on may have begun above it: the file stays.
        let from_top = "diff --git a/m.h b/m.h\n--- a/m.h\n+++ b/m.h\n@@ -5,2 +5,2 @@\n   x + \\\n-  y\n+  z\n";
        assert_eq!(LayoutVariant::BlankLine.apply(from_top, &|_| true), None);
    }

    #[test]
    fn no_code_file_means_no_variant() {
        assert_eq!(LayoutVariant::BlankLine.apply(FIX, &|_| false), None);
        assert_eq!(LayoutVariant::OffsetHunks.apply(FIX, &|p| p == "src/new.rs"), None);
        assert_eq!(LayoutVariant::BlankLine.apply("", &rust), None);
        let crlf = "diff --git a/a.c b/a.c\n--- a/a.c\n+++ b/a.c\n@@ -1,2 +1,2 @@\n a\r\n-b\r\n+c\r\n";
        assert_eq!(
            LayoutVariant::BlankLine.apply(crlf, &|_| true).unwrap(),
            "diff --git a/a.c b/a.c\n--- a/a.c\n+++ b/a.c\n@@ -1,2 +1,3 @@\n a\r\n+\r\n-b\r\n+c\r\n"
        );
    }
}
