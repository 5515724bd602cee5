//! Checks that a patch stays inside the repository before anything applies it: no absolute
//! paths, no `..` components, nothing under `.git/`, and no symlink that points outside.

use swe_forge_core::{DiffLine, diff_lines};

/// Why a patch is refused, or None when it is safe. Binary hunks are allowed (git applies them).
/// Lines are read by core's diff reader: a hunk is as long as its header says, so an added line
/// `++ /x` is text, never a path, and a header after the hunk is always checked.
pub fn unsafe_patch_reason(patch: &str) -> Option<String> {
    let mut new_symlink = false;
    let mut current = String::new();
    for (_, line) in diff_lines(patch) {
        match line {
            DiffLine::FileStart(line) | DiffLine::Header(line) => {
                if let Some(rest) = line.strip_prefix("diff --git ") {
                    new_symlink = false;
                    current = rest.rsplit(' ').next().unwrap_or("").trim_start_matches("b/").to_owned();
                    for path in rest.split(' ') {
                        if let Some(why) = bad_path(path.trim_start_matches("a/").trim_start_matches("b/")) {
                            return Some(format!("{why}: {path}"));
                        }
                    }
                } else if let Some(why) = header_problem(line) {
                    return Some(why);
                } else if line.starts_with("new file mode 120000") || line.starts_with("new mode 120000") {
                    new_symlink = true;
                }
            }
            DiffLine::Added(target) if new_symlink => {
                if target.starts_with('/') {
                    return Some(format!("symlink to an absolute path: {target}"));
                }
                if escapes(&current, target) {
                    return Some(format!("symlink pointing outside the repository: {target}"));
                }
            }
            _ => {}
        }
    }
    None
}

/// What is wrong with the path of a `---`, `+++`, `rename` or `copy` header line, if anything.
fn header_problem(line: &str) -> Option<String> {
    let path = ["--- ", "+++ ", "rename from ", "rename to ", "copy from ", "copy to "]
        .iter()
        .find_map(|p| line.strip_prefix(p))?;
    let path = path.split('\t').next().unwrap_or(path);
    if path == "/dev/null" {
        return None;
    }
    if path.starts_with('/') {
        return Some(format!("absolute path: {path}"));
    }
    let stripped = path.strip_prefix("a/").or_else(|| path.strip_prefix("b/")).unwrap_or(path);
    bad_path(stripped).map(|why| format!("{why}: {path}"))
}

fn bad_path(path: &str) -> Option<&'static str> {
    if path.starts_with('/') {
        return Some("absolute path");
    }
    let parts: Vec<&str> = path.split('/').collect();
    if parts.contains(&"..") {
        return Some("path leaves the repository");
    }
    if parts.contains(&".git") {
        return Some("path inside .git");
    }
    None
}

/// Whether `target`, resolved from the folder of the link at `link`, climbs above the root.
fn escapes(link: &str, target: &str) -> bool {
    let mut depth = link.split('/').filter(|p| !p.is_empty()).count() as i64 - 1;
    for part in target.split('/') {
        match part {
            ".." => depth -= 1,
            "" | "." => {}
            _ => depth += 1,
        }
        if depth < 0 {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    fn check(p: &str) -> Option<String> {
        super::unsafe_patch_reason(p)
    }

    #[test]
    fn ordinary_patches_pass() {
        let p = "diff --git a/src/x.go b/src/x.go\nindex 1..2 100644\n--- a/src/x.go\n+++ b/src/x.go\n@@ -1 +1 @@\n-a\n+b\n";
        assert_eq!(check(p), None);
        let new = "diff --git a/t/new.txt b/t/new.txt\nnew file mode 100644\n--- /dev/null\n+++ b/t/new.txt\n@@ -0,0 +1 @@\n+--- not a header\n";
        assert_eq!(check(new), None);
        let bin = "diff --git a/img.png b/img.png\nnew file mode 100644\nindex 0000000..1111111\nGIT binary patch\nliteral 3\nKcmZ>Y%4g0\n\nliteral 0\nHcmV?d00001\n\n";
        assert_eq!(check(bin), None);
        let inner_link = "diff --git a/docs/l b/docs/l\nnew file mode 120000\n--- /dev/null\n+++ b/docs/l\n@@ -0,0 +1 @@\n+../src/readme.md\n\\ No newline at end of file\n";
        assert_eq!(check(inner_link), None);
    }

    #[test]
    fn escaping_patches_are_refused() {
        let dotdot = "diff --git a/../etc/passwd b/../etc/passwd\n--- a/../etc/passwd\n+++ b/../etc/passwd\n@@ -1 +1 @@\n-a\n+b\n";
        assert!(check(dotdot).unwrap().contains("leaves the repository"));
        let abs = "--- /etc/passwd\n+++ /etc/passwd\n@@ -1 +1 @@\n-a\n+b\n";
        assert!(check(abs).unwrap().contains("absolute path"));
        let git = "diff --git a/.git/hooks/pre-commit b/.git/hooks/pre-commit\nnew file mode 100755\n--- /dev/null\n+++ b/.git/hooks/pre-commit\n@@ -0,0 +1 @@\n+echo pwned\n";
        assert!(check(git).unwrap().contains(".git"));
        let link = "diff --git a/l b/l\nnew file mode 120000\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+../../../../etc/shadow\n";
        assert!(check(link).unwrap().contains("symlink pointing outside"));
        let abs_link =
            "diff --git a/l b/l\nnew file mode 120000\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+/etc/shadow\n";
        assert!(check(abs_link).unwrap().contains("absolute"));
        let rename = "diff --git a/x b/x\nsimilarity index 100%\nrename from x\nrename to ../x\n";
        assert!(check(rename).is_some());
    }

    #[test]
    fn hunk_lines_are_text_and_headers_after_a_hunk_are_paths() {
        // A markdown file gains the line `++ /etc/passwd`: it is text, not a path.
        let text =
            "diff --git a/n.md b/n.md\n--- a/n.md\n+++ b/n.md\n@@ -1,2 +1,2 @@\n a\n-- /etc/passwd\n+++ /etc/passwd\n";
        assert_eq!(check(text), None);
        // Once a hunk has all its lines, what follows is a header again, and is checked.
        let after = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n--- a/../y\n+++ b/../y\n@@ -1 +1 @@\n-a\n+b\n";
        assert!(check(after).unwrap().contains("leaves the repository"), "{after}");
    }
}
