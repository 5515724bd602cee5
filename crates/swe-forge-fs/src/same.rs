//! Whether two paths name one file, also when neither exists yet: a command refuses an output
//! that is its input or another of its outputs.

use std::path::{Component, Path, PathBuf};

/// Whether `a` and `b` are one file: the same device and inode when both exist, else the same
/// place once resolved (see [`resolved`]). `-` (stdin or stdout) is only the same as `-`.
pub fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    if a.as_os_str() == "-" || b.as_os_str() == "-" {
        return a == b;
    }
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => resolved(a).is_some_and(|x| resolved(b).is_some_and(|y| x == y)),
    }
}

/// Where a path that may not exist yet points: its longest existing ancestor with symlinks
/// resolved, then the rest with `.` and `..` taken as written (`d/../s.out` is `s.out`). A
/// dangling symlink on the way is followed to where it points (at most 40 links, as the
/// kernel), since writing through it creates its target.
fn resolved(p: &Path) -> Option<PathBuf> {
    let mut path = std::path::absolute(p).ok()?;
    for _ in 0..40 {
        let parts: Vec<Component<'_>> = path.components().collect();
        let (mut out, i) = (0..=parts.len())
            .rev()
            .find_map(|i| std::fs::canonicalize(parts[..i].iter().collect::<PathBuf>()).ok().map(|real| (real, i)))?;
        // The first part that does not resolve may be a symlink to nowhere: follow it.
        if let Some(Component::Normal(name)) = parts.get(i)
            && let Ok(target) = std::fs::read_link(out.join(name))
        {
            let mut next = out.join(target);
            next.extend(&parts[i + 1..]);
            path = std::path::absolute(next).ok()?;
            continue;
        }
        for part in &parts[i..] {
            match part {
                Component::CurDir => {}
                Component::ParentDir => {
                    out.pop();
                }
                other => out.push(other),
            }
        }
        return Some(out);
    }
    None
}
