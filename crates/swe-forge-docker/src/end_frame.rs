//! The end of a test run on the local engine, told by the container itself: a wrapper runs the
//! script, then writes its exit code, the cgroup's OOM-kill counter and a tar of the results
//! folder to the container's stderr (the script's own stderr goes to stdout, merged with it).
//! Reading them from the log stream saves the engine's wait, inspect and archive calls after
//! the end, which cost more than the rest of a short run; small files travel the same way, in
//! the command, instead of an archive upload before the start.
//!
//! Whatever the frame does not say (it is missing: the container was killed; the image has no
//! `tar`; the cgroup has no counter) is asked of the engine as before, so the outcome is the same.

use sha2::{Digest, Sha256};

use crate::container::{Files, files_of_tar};
use crate::swarm::base64_encode;

/// Largest total size of the files given in the command instead of uploaded (the base64 of
/// them is one argument, and Linux limits one argument to 128 KiB).
pub(crate) const INLINE_FILES_MAX: usize = 64 << 10;

/// Most bytes of results read back (as for the engine's archive).
const RESULTS_CAP: u64 = 256 << 20;

/// What the frame said.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct End {
    /// The script's exit code.
    pub(crate) exit_code: i64,
    /// Whether the memory limit killed anything; None when the cgroup has no counter.
    pub(crate) oom_killed: Option<bool>,
    /// The result files; None when they could not be packed (no `tar`), to be copied out.
    pub(crate) files: Option<Files>,
}

/// A run's nonce: the frame's first line must carry it.
pub(crate) fn nonce() -> String {
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let seed = format!("{}-{n}-{:?}", crate::run_id(), std::time::SystemTime::now());
    crate::base::hex(&Sha256::digest(seed.as_bytes()))[..24].to_owned()
}

/// The container's command (after `/bin/bash -c`): the wrapper, `$0`, the script as `$1`, and
/// the files as `$2` (base64 of a tar, empty when they are uploaded instead).
pub(crate) fn command(script: &str, inline_files: Option<&Files>, collect: Option<&str>, nonce: &str) -> Vec<String> {
    let tar = inline_files.map(|f| base64_encode(&tar_of(f))).unwrap_or_default();
    vec![wrapper(collect, nonce), "swe-forge".to_owned(), script.to_owned(), tar]
}

/// Whether `files` go in the command: small enough, and written as root (the engine's upload
/// writes as root whatever the container's user, so a run as another user uploads them).
pub(crate) fn inline(files: &Files, user: Option<&str>) -> bool {
    !files.is_empty()
        && user.is_none_or(|u| u.is_empty() || u == "root" || u == "0")
        && files.iter().map(|(p, c)| p.len() + c.len() + 1024).sum::<usize>() <= INLINE_FILES_MAX
}

/// The files as the engine's upload writes them: mode 0644, owner root, modification time 0.
pub(crate) fn tar_of(files: &Files) -> Vec<u8> {
    let mut tar = tar::Builder::new(Vec::new());
    for (path, content) in files {
        let mut h = tar::Header::new_gnu();
        h.set_size(content.len() as u64);
        h.set_mode(0o644);
        h.set_mtime(0);
        // Writing to a Vec does not fail.
        let _ = tar.append_data(&mut h, path.trim_start_matches('/'), content.as_slice());
    }
    tar.into_inner().unwrap_or_default()
}

fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// fd 3 keeps the container's stderr for the frame; the script runs in its own bash (as it did
/// as the container's command: same `$0`, `SHLVL`, environment and stdin) without fd 3.
fn wrapper(collect: Option<&str>, nonce: &str) -> String {
    let results = match collect {
        Some(dir) => format!(
            r#"if [ ! -d {d} ]; then r=none; elif command -v tar >/dev/null; then r=tar; else r=unknown; fi
printf 'swe-forge-end %s exit=%s oom_kill=%s results=%s\n' {nonce} "$code" "$oom" "$r" >&3
if [ "$r" = tar ]; then tar -C {d} -cf - . 2>/dev/null | head -c {RESULTS_CAP} >&3; fi"#,
            d = quote(dir)
        ),
        None => format!(r#"printf 'swe-forge-end %s exit=%s oom_kill=%s results=none\n' {nonce} "$code" "$oom" >&3"#),
    };
    format!(
        r#"exec 3>&2 2>&1
if [ -n "$2" ] && ! err=$(printf %s "$2" | base64 -d | tar -xf - -C / 2>&1); then
  echo "swe-forge: could not put the run's files in place: $err"
  exit 125
fi
SHLVL=0 /bin/bash -c "$1" 3>&- </dev/null
code=$?
oom=
for f in /sys/fs/cgroup/memory/memory.oom_control /sys/fs/cgroup/memory.events; do
  if [ -r "$f" ]; then
    while read -r k v; do if [ "$k" = oom_kill ]; then oom=$v; fi; done < "$f"
    break
  fi
done
{results}
exit $code
"#
    )
}

/// How long a container started ahead waits for its command before it exits (`warm.rs`).
pub(crate) const WAIT_SECS: u64 = 900;

/// What such a container writes to its stderr when it gives up waiting (or its stdin closes).
pub(crate) const UNUSED: &str = "swe-forge-unused";

/// What it writes to its stderr, on a line, when the command came (before the end frame): a run
/// whose stderr does not begin with it never ran (the container was gone before).
pub(crate) const TAKEN: &str = "swe-forge-taken";

/// The command of a container started ahead (after `/bin/bash -c`, with `$0`): it reads a line
/// of four byte counts from stdin, then the wrapper, the script, the files (the three arguments
/// of [`command`]) and the run's environment as `export` lines, in one `head -c` (which reads
/// no byte beyond its count; a sentinel keeps trailing newlines), cuts them apart by bytes (`C`
/// locale, in a function so that the locale of the run is untouched), sets the environment and
/// becomes the wrapper, as a fresh container's command would be.
pub(crate) fn waiter() -> String {
    format!(
        r#"IFS=' ' read -r -t {WAIT_SECS} a b c d || {{ echo {UNUSED} >&2; exit 199; }}
echo {TAKEN} >&2
p=$(head -c $((a + b + c + d)); printf x)
cut() {{ local LC_ALL=C; w=${{p:0:a}}; s=${{p:a:b}}; t=${{p:a+b:c}}; e=${{p:a+b+c:d}}; }}
cut; unset p
eval "$e"
exec /bin/bash -c "$w" swe-forge "$s" "$t"
"#
    )
}

/// What a container started ahead is given on stdin for a run: [`command`]'s wrapper, script
/// and files, and `env` (`K=V`) as `export` lines.
pub(crate) fn payload(command: &[String], env: &[String]) -> Vec<u8> {
    let part = |i: usize| command.get(i).map(String::as_str).unwrap_or_default();
    let exports: String = env
        .iter()
        .map(|kv| match kv.split_once('=') {
            Some((k, v)) => format!(
                "export {k}={}
",
                quote(v)
            ),
            None => format!(
                "export {kv}
"
            ),
        })
        .collect();
    let parts = [part(0), part(2), part(3), exports.as_str()];
    let mut out = format!(
        "{} {} {} {}
",
        parts[0].len(),
        parts[1].len(),
        parts[2].len(),
        parts[3].len()
    )
    .into_bytes();
    for p in parts {
        out.extend_from_slice(p.as_bytes());
    }
    out
}

/// The frame in the bytes of the container's stderr, when it is there and complete.
pub(crate) fn read(stderr: &[u8], nonce: &str) -> Option<End> {
    let newline = stderr.iter().position(|b| *b == b'\n')?;
    let header = std::str::from_utf8(&stderr[..newline]).ok()?;
    let mut words = header.split(' ');
    if words.next()? != "swe-forge-end" || words.next()? != nonce {
        return None;
    }
    let mut end = End::default();
    let mut results = None;
    for word in words {
        let (k, v) = word.split_once('=')?;
        match k {
            "exit" => end.exit_code = v.parse().ok()?,
            "oom_kill" => end.oom_killed = v.parse::<u64>().ok().map(|n| n > 0),
            "results" => results = Some(v),
            _ => {}
        }
    }
    end.files = match results? {
        "none" => Some(Vec::new()),
        "tar" => Some(files_of_tar(&stderr[newline + 1..])),
        _ => None,
    };
    Some(end)
}

#[cfg(test)]
mod tests {
    use super::{End, inline, read};

    #[test]
    fn a_frame_with_its_nonce_is_read_and_any_other_is_not() {
        let mut tar = tar::Builder::new(Vec::new());
        let mut h = tar::Header::new_gnu();
        h.set_size(2);
        tar.append_data(&mut h, "./r.txt", b"ok".as_slice()).unwrap();
        let mut bytes = b"swe-forge-end n1 exit=3 oom_kill=1 results=tar\n".to_vec();
        bytes.extend(tar.into_inner().unwrap());
        let end = read(&bytes, "n1").unwrap();
        assert_eq!(
            end,
            End { exit_code: 3, oom_killed: Some(true), files: Some(vec![("r.txt".into(), b"ok".to_vec())]) }
        );
        assert_eq!(read(&bytes, "n2"), None);
        let end = read(b"swe-forge-end n1 exit=0 oom_kill= results=unknown\n", "n1").unwrap();
        assert_eq!(end, End { exit_code: 0, oom_killed: None, files: None });
        assert_eq!(read(b"swe-forge-end n1 exit=0 oom_kill=0 results=none\n", "n1").unwrap().files, Some(vec![]));
        // Cut before the end of its first line (the container was killed while writing it).
        assert_eq!(read(b"swe-forge-end n1 exit=0 oom_kil", "n1"), None);
        assert_eq!(read(b"", "n1"), None);
    }

    #[test]
    fn only_small_files_written_as_root_go_in_the_command() {
        let small = vec![("/a".to_owned(), vec![0; 100])];
        assert!(inline(&small, None));
        assert!(inline(&small, Some("root")));
        assert!(!inline(&small, Some("tester")));
        assert!(!inline(&vec![("/a".to_owned(), vec![0; 70 << 10])], None));
        assert!(!inline(&Vec::new(), None));
    }
}
