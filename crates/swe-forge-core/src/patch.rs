//! Reading a unified diff for its shape: files, hunks, added and removed lines, directories.
//! Pure text; never applies a patch or reads a repository. Used by curation (difficulty features)
//! and evaluation (the files a test patch owns).

use std::collections::BTreeSet;

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
        let mut in_hunk = false;
        for line in diff.lines() {
            if let Some(rest) = line.strip_prefix("diff --git ") {
                in_hunk = false;
                let path = diff_git_path(rest);
                shape.touch(&path);
                shape.files.push(path);
            } else if line.starts_with("@@") {
                in_hunk = true;
                shape.hunks += 1;
            } else if in_hunk {
                match line.as_bytes().first() {
                    Some(b'+') => shape.added += 1,
                    Some(b'-') => shape.removed += 1,
                    Some(b' ') | Some(b'\\') | None => {}
                    // Anything else ends the hunk (a header line of the next file without `diff --git`).
                    _ => in_hunk = false,
                }
            } else if let Some(path) = line.strip_prefix("+++ b/")
                && shape.files.is_empty()
            {
                // A plain unified diff without `diff --git` lines.
                shape.touch(path);
                shape.files.push(path.to_owned());
            } else if let Some(path) =
                ["--- a/", "rename from ", "copy from ", "+++ b/"].iter().find_map(|p| line.strip_prefix(p))
            {
                shape.touch(path.split('\t').next().unwrap_or(path).trim_matches('"'));
            }
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
    fn not_a_diff_is_empty() {
        assert_eq!(PatchShape::of(""), PatchShape::default());
        assert_eq!(PatchShape::of("+ hello\n- world\n").changed_lines(), 0);
        let plain = "--- a/x.c\n+++ b/x.c\n@@ -1 +1 @@\n-a\n+b\n";
        assert_eq!(PatchShape::of(plain).files, ["x.c"]);
        assert_eq!(PatchShape::of(plain).touched, ["x.c"]);
    }
}
