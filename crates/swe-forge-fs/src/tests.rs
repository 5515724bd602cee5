//! Outputs and tree reads against real files, symlinks, FIFOs and devices.

use std::io::{Read, Write};
use std::os::unix::fs::{FileTypeExt, PermissionsExt, symlink};
use std::path::Path;
use std::process::Command;

use crate::{Batch, Output, READ_CAP, read_capped, read_tree};

fn write(path: &Path, text: &str) -> Result<(), crate::OutputError> {
    let mut out = Output::create(path)?;
    out.write_all(text.as_bytes()).unwrap();
    out.commit()
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

fn mkfifo(path: &Path) {
    assert!(Command::new("mkfifo").arg(path).status().unwrap().success());
}

#[test]
fn a_file_is_replaced_whole_and_keeps_its_mode() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("out.jsonl");
    write(&p, "new file\n").unwrap();
    assert_eq!(std::fs::read_to_string(&p).unwrap(), "new file\n");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
    write(&p, "second\n").unwrap();
    assert_eq!(std::fs::read_to_string(&p).unwrap(), "second\n");
    assert_eq!(std::fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o640);
    assert_eq!(names(dir.path()), ["out.jsonl"], "no temporary file left");
}

#[test]
fn an_output_dropped_before_commit_leaves_the_old_file_and_no_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("out.jsonl");
    std::fs::write(&p, "old\n").unwrap();
    let mut out = Output::create(&p).unwrap();
    out.write_all(b"half of the ne").unwrap();
    assert_eq!(names(dir.path()).len(), 2, "the temporary file exists while writing");
    let tmp = names(dir.path()).into_iter().find(|n| n != "out.jsonl").unwrap();
    assert!(
        tmp.starts_with(".out.jsonl.") && tmp.ends_with(".tmp") && tmp.len() > ".out.jsonl..tmp".len() + 4,
        "{tmp}"
    );
    drop(out);
    assert_eq!(std::fs::read_to_string(&p).unwrap(), "old\n");
    assert_eq!(names(dir.path()), ["out.jsonl"]);
}

#[test]
fn a_symlink_stays_a_symlink_and_its_target_is_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real");
    std::fs::create_dir(&real).unwrap();
    std::fs::write(real.join("data.jsonl"), "old\n").unwrap();
    let link = dir.path().join("link.jsonl");
    symlink("real/data.jsonl", &link).unwrap();
    write(&link, "new\n").unwrap();
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert_eq!(std::fs::read_link(&link).unwrap(), Path::new("real/data.jsonl"));
    assert_eq!(std::fs::read_to_string(real.join("data.jsonl")).unwrap(), "new\n");
    assert_eq!(names(&real), ["data.jsonl"], "the temporary file was made next to the target");
    // A dangling symlink: its target is created, the link kept.
    let dangling = dir.path().join("dangling.jsonl");
    symlink("real/later.jsonl", &dangling).unwrap();
    write(&dangling, "created\n").unwrap();
    assert!(std::fs::symlink_metadata(&dangling).unwrap().file_type().is_symlink());
    assert_eq!(std::fs::read_to_string(real.join("later.jsonl")).unwrap(), "created\n");
}

#[test]
fn a_fifo_and_a_device_are_written_through() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    mkfifo(&fifo);
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut s = String::new();
            std::fs::File::open(fifo).unwrap().read_to_string(&mut s).unwrap();
            s
        })
    };
    write(&fifo, "through the pipe\n").unwrap();
    assert_eq!(reader.join().unwrap(), "through the pipe\n");
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo(), "still a FIFO");
    assert_eq!(names(dir.path()), ["pipe"]);
    // /dev/null stays a device, even for root; and through a symlink to it.
    write(Path::new("/dev/null"), "nothing\n").unwrap();
    assert!(std::fs::metadata("/dev/null").unwrap().file_type().is_char_device());
    let link = dir.path().join("null");
    symlink("/dev/null", &link).unwrap();
    write(&link, "nothing\n").unwrap();
    assert_eq!(std::fs::read_link(&link).unwrap(), Path::new("/dev/null"));
}

#[test]
fn a_batch_renames_all_its_outputs_or_none() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.jsonl"), dir.path().join("b.parquet"));
    std::fs::write(&a, "old a").unwrap();
    std::fs::write(&b, "old b").unwrap();
    {
        let _batch = Batch::begin();
        write(&a, "new a").unwrap();
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "old a", "not renamed before the batch commits");
        // The second output fails (its folder is a file): the batch is dropped.
        assert!(write(&a.join("x"), "never").is_err());
    }
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "old a");
    assert_eq!(std::fs::read_to_string(&b).unwrap(), "old b");
    assert_eq!(names(dir.path()), ["a.jsonl", "b.parquet"]);
    let batch = Batch::begin();
    write(&a, "new a").unwrap();
    write(&b, "new b").unwrap();
    assert_eq!(std::fs::read_to_string(&b).unwrap(), "old b");
    batch.commit().unwrap();
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "new a");
    assert_eq!(std::fs::read_to_string(&b).unwrap(), "new b");
    assert_eq!(names(dir.path()), ["a.jsonl", "b.parquet"]);
}

/// A batch begun inside another joins it (before, it threw the outer batch's outputs away), and
/// a stale file given to `remove_after_commit` goes only once the new files are in place: a
/// batch dropped before its commit leaves every old file.
#[test]
fn a_nested_batch_joins_the_outer_one_and_stale_files_go_after_the_commit() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, stale) = (dir.path().join("a"), dir.path().join("b"), dir.path().join("stale"));
    for p in [&a, &b, &stale] {
        std::fs::write(p, "old").unwrap();
    }
    {
        let _outer = Batch::begin();
        write(&a, "new a").unwrap();
        let inner = Batch::begin();
        write(&b, "new b").unwrap();
        crate::remove_after_commit(&stale).unwrap();
        // The file being written is never removed, whatever the caller asks.
        crate::remove_after_commit(&b).unwrap();
        inner.commit().unwrap();
        assert_eq!(std::fs::read_to_string(&b).unwrap(), "old", "the inner commit waits for the outer one");
        assert!(stale.exists(), "nothing removed before the outer commit");
    }
    assert_eq!(names(dir.path()), ["a", "b", "stale"], "a dropped batch leaves the old files, no temporary file");
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "old");
    let outer = Batch::begin();
    write(&a, "new a").unwrap();
    let inner = Batch::begin();
    write(&b, "new b").unwrap();
    crate::remove_after_commit(&stale).unwrap();
    crate::remove_after_commit(&b).unwrap();
    inner.commit().unwrap();
    outer.commit().unwrap();
    assert_eq!(names(dir.path()), ["a", "b"]);
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "new a");
    assert_eq!(std::fs::read_to_string(&b).unwrap(), "new b");
    // With no batch open the removal is at once.
    crate::remove_after_commit(&a).unwrap();
    crate::remove_after_commit(&dir.path().join("never-there")).unwrap();
    assert_eq!(names(dir.path()), ["b"]);
}

/// Two spellings of one file are one file, existing or not; a dangling symlink is the file it
/// will create (`export --jsonl a --parquet link`, `link` -> `a`, lost the JSONL).
#[test]
fn same_file_sees_through_spellings_and_dangling_symlinks() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("sub")).unwrap();
    let same = crate::same_file;
    assert!(same(&d.join("new"), &d.join("sub/../new")));
    assert!(!same(&d.join("new"), &d.join("other")));
    symlink(d.join("a"), d.join("link")).unwrap();
    assert!(same(&d.join("a"), &d.join("link")), "a dangling symlink to a is a");
    symlink("a", d.join("relative")).unwrap();
    symlink("relative", d.join("chain")).unwrap();
    assert!(same(&d.join("chain"), &d.join("a")), "a chain of relative links");
    symlink("sub", d.join("dirlink")).unwrap();
    assert!(same(&d.join("dirlink/x"), &d.join("sub/x")));
    symlink(d.join("nowhere/deeper"), d.join("deep")).unwrap();
    assert!(same(&d.join("deep"), &d.join("nowhere/x/../deeper")));
    symlink("loop", d.join("loop")).unwrap();
    assert!(!same(&d.join("loop"), &d.join("a")), "a loop resolves to nothing");
    std::fs::write(d.join("a"), "x").unwrap();
    assert!(same(&d.join("a"), &d.join("chain")));
    assert!(same(Path::new("-"), Path::new("-")) && !same(Path::new("-"), &d.join("a")));
}

/// A batch holds the names of its outputs, not open files: a thousand outputs (a split file per
/// repository, say) fit under the usual limit of 1,024 descriptors.
#[test]
fn a_batch_of_a_thousand_outputs_holds_no_open_file() {
    let dir = tempfile::tempdir().unwrap();
    // Only descriptors on this test's folder count: other tests of this binary run beside it and
    // may hold hundreds (the thousand-folders-deep read does).
    let open = || {
        std::fs::read_dir("/proc/self/fd")
            .unwrap()
            .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
            .filter(|target| target.starts_with(dir.path()))
            .count()
    };
    let before = open();
    let batch = Batch::begin();
    for i in 0..1000 {
        write(&dir.path().join(format!("{i}.jsonl")), "x\n").unwrap();
    }
    assert_eq!(open(), before, "descriptors open on the outputs' folder");
    assert_eq!(names(dir.path()).iter().filter(|n| n.ends_with(".tmp")).count(), 1000);
    batch.commit().unwrap();
    assert_eq!(names(dir.path()).len(), 1000);
    assert!(names(dir.path()).iter().all(|n| n.ends_with(".jsonl")));
    assert_eq!(std::fs::read_to_string(dir.path().join("999.jsonl")).unwrap(), "x\n");
}

#[test]
fn a_tree_read_skips_what_is_not_a_file_of_the_tree() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("results");
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::write(root.join("sub/a.xml"), "a").unwrap();
    std::fs::write(dir.path().join("outside.xml"), "outside").unwrap();
    symlink("/dev/zero", root.join("zero.xml")).unwrap();
    symlink("../outside.xml", root.join("out.xml")).unwrap();
    symlink("sub/a.xml", root.join("inside.xml")).unwrap();
    symlink("..", root.join("sub/loop")).unwrap();
    symlink(dir.path(), root.join("up")).unwrap();
    mkfifo(&root.join("fifo.xml"));
    let tree = read_tree(&root, READ_CAP).unwrap();
    let files: Vec<(&str, &[u8])> = tree.files.iter().map(|(p, b)| (p.as_str(), b.as_slice())).collect();
    assert_eq!(files, [("inside.xml", b"a".as_slice()), ("sub/a.xml", b"a")]);
    let skipped: Vec<String> = tree.skipped.iter().map(ToString::to_string).collect();
    assert_eq!(
        skipped,
        [
            "fifo.xml: not a regular file",
            "out.xml: symlink out of the tree",
            "sub/loop: folder already read (symlink loop)",
            "up: symlink out of the tree",
            "zero.xml: symlink out of the tree",
        ]
    );
    assert_eq!(read_tree(&dir.path().join("absent"), READ_CAP).unwrap(), Default::default());
}

#[test]
fn reads_keep_head_and_tail_and_stop_on_endless_files() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("big.log");
    std::fs::write(&p, format!("{}{}", "h".repeat(1000), "t".repeat(1000))).unwrap();
    let c = read_capped(&p, 100).unwrap();
    assert!(c.truncated);
    assert_eq!(c.total, 2000);
    let text = String::from_utf8(c.bytes).unwrap();
    assert_eq!(text, format!("{}\n[swe-forge: 1900 bytes dropped here]\n{}", "h".repeat(50), "t".repeat(50)));
    let c = read_capped(Path::new("/dev/zero"), 1000).unwrap();
    assert!(c.truncated);
    assert!(c.bytes.len() < 1100);
    let c = read_capped(&p, 5000).unwrap();
    assert!(!c.truncated);
    assert_eq!(c.bytes.len(), 2000);
}

#[test]
fn a_file_nested_a_thousand_folders_deep_is_read_and_a_deep_loop_once() {
    let dir = tempfile::tempdir().unwrap();
    let rel = vec!["a"; 1000];
    let deep = rel.iter().fold(dir.path().to_owned(), |p, a| p.join(a));
    std::fs::create_dir_all(&deep).unwrap();
    std::fs::write(deep.join("r.xml"), "<x/>").unwrap();
    // A loop at the bottom back to the top: read once, said so.
    symlink(dir.path(), deep.join("up")).unwrap();
    let tree = read_tree(dir.path(), READ_CAP).unwrap();
    let file = format!("{}/r.xml", rel.join("/"));
    assert_eq!(tree.files, [(file, b"<x/>".to_vec())]);
    assert_eq!(tree.skipped.len(), 1, "{:?}", tree.skipped.iter().map(|s| &s.why).collect::<Vec<_>>());
    assert_eq!(tree.skipped[0].why, "folder already read (symlink loop)");
}

/// A writer killed with `-9` leaves its temporary file: the next write of the same output removes
/// it once its process is gone, and leaves those of live writers, of other outputs and of older
/// versions (no pid in the name) alone.
#[test]
fn temporaries_of_a_dead_writer_go_at_the_next_write() {
    let dir = tempfile::tempdir().unwrap();
    let mut dead = Command::new("true").spawn().unwrap();
    let dead_pid = dead.id();
    dead.wait().unwrap();
    let mut live = Command::new("sleep").arg("30").spawn().unwrap();
    let stale = format!(".out.jsonl.pid{dead_pid}.AbC123.tmp");
    let kept = [
        format!(".out.jsonl.pid{}.XyZ789.tmp", live.id()),
        ".out.jsonl.Qw3rty.tmp".to_owned(),
        format!(".other.jsonl.pid{dead_pid}.AbC123.tmp"),
        format!(".out.jsonl.x.pid{dead_pid}.AbC123.tmp"),
    ];
    for n in kept.iter().chain([&stale]) {
        std::fs::write(dir.path().join(n), "partial").unwrap();
    }
    write(&dir.path().join("out.jsonl"), "whole\n").unwrap();
    let mut want: Vec<String> = kept.to_vec();
    want.push("out.jsonl".to_owned());
    want.sort();
    assert_eq!(names(dir.path()), want);
    live.kill().unwrap();
    live.wait().unwrap();
    // Its writer gone too, the live one's file goes at the next write.
    write(&dir.path().join("out.jsonl"), "again\n").unwrap();
    assert_eq!(names(dir.path()).len(), 4, "{:?}", names(dir.path()));
    assert!(crate::output::remove_stale_temps(dir.path(), ".out.jsonl.") == 0);
    // This process's own temporary file carries its pid, and stays while it writes.
    let out = Output::create(dir.path().join("out.jsonl")).unwrap();
    let own = format!(".out.jsonl.pid{}.", std::process::id());
    assert!(names(dir.path()).iter().any(|n| n.starts_with(&own)), "{:?}", names(dir.path()));
    assert_eq!(crate::output::remove_stale_temps(dir.path(), ".out.jsonl."), 0);
    drop(out);
}
