//! The one writer of output files.
//!
//! Where the bytes go depends on what the path names, decided when the output is created:
//!
//! - `-`: stdout.
//! - A device, FIFO or socket (after following symlinks): written through, never replaced, so
//!   `--out /dev/null` or a FIFO works and root never turns `/dev/null` into a regular file.
//! - A regular file reached through `/dev` or `/proc` (`/dev/stdout` redirected to a file):
//!   appended through the link, as a shell would.
//! - Anything else (a regular file, a new file, or a symlink to either): an unpredictable
//!   temporary file `.<name>.pid<pid>.XXXXXX.tmp` created with `O_EXCL` next to the real
//!   destination (the symlink's final target, never the symlink), flushed, synced and renamed
//!   over it. The symlink stays a symlink; the file keeps the mode of the one it replaces.
//!   Temporary files of the same destination whose writer process is gone (killed with `-9`,
//!   which no handler sees) are removed when the next one is made.
//!
//! Temporary files are removed when an output is dropped without being committed (an error),
//! and by [`remove_pending_temps`], which the binary calls on SIGINT and SIGTERM. A [`Batch`]
//! keeps the outputs committed on its thread and renames them all at the end, under the lock
//! that [`remove_pending_temps`] takes: a signal sees either none or all of them renamed.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};

use tempfile::NamedTempFile;

use crate::OutputError;

/// Temporary files of outputs not renamed into place yet, in the whole process.
static PENDING: Mutex<BTreeSet<PathBuf>> = Mutex::new(BTreeSet::new());
/// Set once [`remove_pending_temps`] ran: no new temporary file is made after it.
static CLOSED: AtomicBool = AtomicBool::new(false);

fn pending() -> MutexGuard<'static, BTreeSet<PathBuf>> {
    PENDING.lock().unwrap_or_else(|e| e.into_inner())
}

/// Removes every temporary file of an output not committed yet, and every [`PendingDir`], and
/// refuses new ones; for a signal handler about to exit. Waits for a [`Batch`] being renamed to
/// finish. Returns how many files and folders it removed.
pub fn remove_pending_temps() -> usize {
    let mut set = pending();
    CLOSED.store(true, Ordering::SeqCst);
    let dirs = std::mem::take(&mut *PENDING_DIRS.lock().unwrap_or_else(|e| e.into_inner()));
    let files = std::mem::take(&mut *set).into_iter().filter(|p| std::fs::remove_file(p).is_ok()).count();
    files + dirs.into_iter().filter(|d| std::fs::remove_dir_all(d).is_ok()).count()
}

/// Staging folders being written (a folder output, renamed into place at the end).
static PENDING_DIRS: Mutex<BTreeSet<PathBuf>> = Mutex::new(BTreeSet::new());

/// A staging folder that [`remove_pending_temps`] removes on a signal, until this is dropped
/// (when the folder has been renamed into place, or removed by its owner).
pub struct PendingDir(PathBuf);

impl PendingDir {
    /// Registers `path`; refused once [`remove_pending_temps`] ran.
    pub fn register(path: &Path) -> io::Result<PendingDir> {
        let _files = pending();
        if CLOSED.load(Ordering::SeqCst) {
            return Err(io::Error::new(io::ErrorKind::Interrupted, "stopping: no new output folders"));
        }
        PENDING_DIRS.lock().unwrap_or_else(|e| e.into_inner()).insert(path.to_owned());
        Ok(PendingDir(path.to_owned()))
    }
}

impl Drop for PendingDir {
    fn drop(&mut self) {
        PENDING_DIRS.lock().unwrap_or_else(|e| e.into_inner()).remove(&self.0);
    }
}

/// An output file being written; see the module docs for where its bytes go. Nothing is in
/// place until [`Output::commit`].
pub struct Output {
    path: PathBuf,
    target: Target,
}

enum Target {
    Stdout(io::Stdout),
    Through(File),
    Temp(Temp),
}

/// A committed output's temporary file, closed, waiting for its rename: removed (and forgotten by
/// the registry) when dropped before.
struct Closed {
    path: PathBuf,
    temp: Option<tempfile::TempPath>,
    dest: PathBuf,
}

impl Drop for Closed {
    fn drop(&mut self) {
        if let Some(temp) = self.temp.take() {
            pending().remove(&temp.to_path_buf());
            // TempPath's own drop removes the file.
        }
    }
}

/// A temporary file and the path it is renamed to; forgotten by the registry when dropped.
struct Temp {
    file: Option<NamedTempFile>,
    dest: PathBuf,
}

impl Drop for Temp {
    fn drop(&mut self) {
        if let Some(file) = self.file.take() {
            pending().remove(file.path());
            // NamedTempFile's own drop removes the file.
        }
    }
}

impl Output {
    /// Prepares the output `path` (see the module docs). Creates no file at `path` itself.
    pub fn create(path: impl AsRef<Path>) -> Result<Output, OutputError> {
        let path = path.as_ref();
        let err = |action| move |source| OutputError { action, path: path.to_owned(), source };
        if path.as_os_str() == "-" {
            return Ok(Output { path: path.to_owned(), target: Target::Stdout(io::stdout()) });
        }
        let target = match std::fs::metadata(path) {
            Ok(m) if m.is_dir() => {
                return Err(err("writing")(io::Error::new(io::ErrorKind::IsADirectory, "a folder, not a file")));
            }
            Ok(m) if !m.is_file() => {
                Target::Through(OpenOptions::new().write(true).open(path).map_err(err("opening"))?)
            }
            Ok(m) => {
                let dest = if is_symlink(path) {
                    std::fs::canonicalize(path).map_err(err("resolving"))?
                } else {
                    path.to_owned()
                };
                if dest.starts_with("/proc") || dest.starts_with("/dev") {
                    Target::Through(OpenOptions::new().append(true).open(path).map_err(err("opening"))?)
                } else {
                    Target::Temp(temp_for(&dest, Some(m.permissions())).map_err(err("creating a temporary file for"))?)
                }
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                let dest =
                    if is_symlink(path) { link_target(path).map_err(err("resolving"))? } else { path.to_owned() };
                Target::Temp(temp_for(&dest, None).map_err(err("creating a temporary file for"))?)
            }
            Err(e) => return Err(err("reading")(e)),
        };
        Ok(Output { path: path.to_owned(), target })
    }

    /// The path given to [`Output::create`].
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Puts the output in place: flushes it and, for a temporary file, syncs and renames it over
    /// the destination. Inside a [`Batch`] the rename waits for [`Batch::commit`].
    pub fn commit(mut self) -> Result<(), OutputError> {
        self.flush_and_sync()?;
        // Stdout, devices and FIFOs are written through: nothing to rename.
        let Target::Temp(mut temp) = self.target else { return Ok(()) };
        // Closed now: a batch of thousands of outputs holds their names, not open files.
        let closed = Closed {
            path: self.path,
            temp: Some(temp.file.take().expect("a temporary file until renamed").into_temp_path()),
            dest: std::mem::take(&mut temp.dest),
        };
        let batched = BATCH.with(|b| match b.borrow_mut().as_mut() {
            Some(pending) => {
                pending.outputs.push(closed);
                None
            }
            None => Some(closed),
        });
        match batched {
            Some(one) => rename_all(vec![one]),
            None => Ok(()),
        }
    }

    fn flush_and_sync(&mut self) -> Result<(), OutputError> {
        let path = self.path.clone();
        let err = |action| move |source| OutputError { action, path, source };
        match &mut self.target {
            Target::Stdout(s) => s.flush().map_err(err("writing")),
            // Devices and FIFOs cannot be synced; what was written is theirs.
            Target::Through(f) => f.flush().map_err(err("writing")),
            Target::Temp(t) => {
                let file = t.file.as_mut().expect("a temporary file until renamed");
                file.flush().and_then(|()| file.as_file().sync_all()).map_err(err("writing"))
            }
        }
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.target {
            Target::Stdout(s) => s.write(buf),
            Target::Through(f) => f.write(buf),
            Target::Temp(t) => t.file.as_mut().expect("a temporary file until renamed").write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.target {
            Target::Stdout(s) => s.flush(),
            Target::Through(f) => f.flush(),
            Target::Temp(t) => t.file.as_mut().expect("a temporary file until renamed").flush(),
        }
    }
}

thread_local! {
    static BATCH: RefCell<Option<Pending>> = const { RefCell::new(None) };
}

/// What a [`Batch`] does at its commit: the outputs to rename, then the files to remove.
#[derive(Default)]
struct Pending {
    outputs: Vec<Closed>,
    removals: Vec<PathBuf>,
}

/// The outputs of one run, renamed into place together: between [`Batch::begin`] and
/// [`Batch::commit`], [`Output::commit`] on this thread writes and syncs its temporary file but
/// leaves the rename to [`Batch::commit`], which renames them all in a row while holding the
/// lock [`remove_pending_temps`] takes, then removes the files [`remove_after_commit`] was given
/// (stale outputs the new ones replace). A batch dropped without commit (an error) removes every
/// temporary file and removes nothing: the previous outputs all stay. A batch begun while
/// another is open on the thread joins it: its outputs and removals wait for the outer one's
/// commit, and its own commit and drop do nothing.
pub struct Batch {
    /// Whether this batch joined one begun before it on the thread.
    joined: bool,
    /// A batch belongs to the thread that began it.
    _thread: std::marker::PhantomData<*const ()>,
}

impl Batch {
    /// Starts collecting this thread's committed outputs (or joins the batch already open).
    pub fn begin() -> Batch {
        let joined = BATCH.with(|b| {
            let mut b = b.borrow_mut();
            let joined = b.is_some();
            b.get_or_insert_with(Pending::default);
            joined
        });
        Batch { joined, _thread: std::marker::PhantomData }
    }

    /// Renames every collected output into place, then removes the files given to
    /// [`remove_after_commit`]; for a joined batch, nothing until the outer one commits.
    pub fn commit(self) -> Result<(), OutputError> {
        if self.joined {
            return Ok(());
        }
        let pending = BATCH.with(|b| b.borrow_mut().take()).unwrap_or_default();
        // A file the batch has just written is never removed, whatever it was given.
        let written: BTreeSet<PathBuf> =
            pending.outputs.iter().flat_map(|o| [o.path.clone(), o.dest.clone()]).collect();
        rename_all(pending.outputs)?;
        for path in pending.removals.into_iter().filter(|p| !written.contains(p)) {
            match std::fs::remove_file(&path) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => {
                    return Err(OutputError { action: "removing the stale output", path, source: e });
                }
                _ => {}
            }
        }
        Ok(())
    }
}

impl Drop for Batch {
    fn drop(&mut self) {
        if !self.joined {
            let pending = BATCH.with(|b| b.borrow_mut().take());
            drop(pending);
        }
    }
}

/// Removes `path` once the batch open on this thread has put its outputs in place, or now when
/// none is open: a stale output the new ones replace (a split file no record goes to any more)
/// goes only after they exist, and stays when the batch is dropped.
pub fn remove_after_commit(path: &Path) -> Result<(), OutputError> {
    let queued = BATCH.with(|b| match b.borrow_mut().as_mut() {
        Some(pending) => {
            pending.removals.push(path.to_owned());
            true
        }
        None => false,
    });
    match queued {
        true => Ok(()),
        false => match std::fs::remove_file(path) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => {
                Err(OutputError { action: "removing the stale output", path: path.to_owned(), source: e })
            }
            _ => Ok(()),
        },
    }
}

/// Renames the temporary files of `outputs` over their destinations, one after the other,
/// holding the registry's lock, then syncs their folders.
fn rename_all(outputs: Vec<Closed>) -> Result<(), OutputError> {
    let mut renames: Vec<(PathBuf, tempfile::TempPath, PathBuf)> = Vec::new();
    for mut o in outputs {
        let temp = o.temp.take().expect("a temporary file until renamed");
        renames.push((std::mem::take(&mut o.path), temp, std::mem::take(&mut o.dest)));
    }
    let mut dirs: BTreeSet<PathBuf> = BTreeSet::new();
    {
        let mut set = pending();
        let mut result = Ok(());
        for (path, file, dest) in renames {
            set.remove(&file.to_path_buf());
            if result.is_err() {
                continue; // dropped: removed
            }
            match file.persist(&dest) {
                Ok(_) => {
                    dirs.insert(parent(&dest).to_owned());
                }
                Err(e) => result = Err(OutputError { action: "renaming into place", path, source: e.error }),
            }
        }
        result?;
    }
    // Make the renames durable; best effort, folders cannot be opened everywhere.
    for d in dirs {
        if let Ok(f) = File::open(&d) {
            let _ = f.sync_all();
        }
    }
    Ok(())
}

fn is_symlink(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

/// The path a dangling symlink leads to, following a chain of links (at most 40, as the kernel).
fn link_target(path: &Path) -> io::Result<PathBuf> {
    let mut current = path.to_owned();
    for _ in 0..40 {
        match std::fs::read_link(&current) {
            Ok(next) => current = parent(&current).join(next),
            Err(e) if e.kind() == io::ErrorKind::InvalidInput || e.kind() == io::ErrorKind::NotFound => {
                return Ok(current);
            }
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::other("too many levels of symbolic links"))
}

fn parent(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// A registered temporary file next to `dest`, with `dest`'s mode when it exists (0666 less
/// the umask otherwise).
fn temp_for(dest: &Path, permissions: Option<std::fs::Permissions>) -> io::Result<Temp> {
    let stem = match dest.file_name() {
        Some(name) => format!(".{}.", name.to_string_lossy()),
        None => ".swe-forge-output.".to_owned(),
    };
    remove_stale_temps(parent(dest), &stem);
    let prefix = format!("{stem}pid{}.", std::process::id());
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // tempfile creates files 0600; the final file should get the usual mode.
        builder.permissions(permissions.unwrap_or_else(|| std::fs::Permissions::from_mode(0o666)));
    }
    #[cfg(not(unix))]
    let _ = permissions;
    let mut set = pending();
    if CLOSED.load(Ordering::SeqCst) {
        return Err(io::Error::new(io::ErrorKind::Interrupted, "stopping: no new output files"));
    }
    let file = builder.tempfile_in(parent(dest))?;
    set.insert(file.path().to_owned());
    Ok(Temp { file: Some(file), dest: dest.to_owned() })
}

/// Removes the temporary files in `dir` named `<stem>pid<pid>.<random>.tmp` whose process `pid`
/// is gone (as `/proc` tells: without `/proc`, none is), left by a writer killed before it could
/// remove them; returns how many. Those of this process, of a live process, or without a pid
/// (made by a version before pids were in the names) stay. Best effort: a file that cannot be
/// removed stays.
pub(crate) fn remove_stale_temps(dir: &Path, stem: &str) -> usize {
    if !Path::new("/proc/self").exists() {
        return 0;
    }
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    let me = std::process::id();
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| stale_pid(n, stem)) else { continue };
        let gone = pid != me && !Path::new("/proc").join(pid.to_string()).exists();
        if gone && entry.file_type().is_ok_and(|t| t.is_file()) && std::fs::remove_file(entry.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// The writer's pid in a temporary file's name `<stem>pid<pid>.<random>.tmp`, where `<random>`
/// holds no dot (so another output's `<stem>x.pid<pid>...` is not taken for one of this stem).
fn stale_pid(name: &str, stem: &str) -> Option<u32> {
    let rest = name.strip_prefix(stem)?.strip_prefix("pid")?.strip_suffix(".tmp")?;
    let (pid, random) = rest.split_once('.')?;
    let plain = !random.is_empty() && random.chars().all(|c| c.is_ascii_alphanumeric());
    (plain && !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit())).then(|| pid.parse().ok()).flatten()
}

/// Writes `path` with whatever `body` writes to the buffered writer it is given, then commits it
/// (see [`Output`] for where the bytes go). The one atomic file writer every crate writes its
/// files through.
///
/// When `body` fails its error is returned, the temporary file is removed and `path` is left
/// untouched.
pub fn write_with<E, F>(path: impl AsRef<Path>, body: F) -> Result<(), E>
where
    E: From<OutputError>,
    F: FnOnce(&mut io::BufWriter<&mut Output>) -> Result<(), E>,
{
    let path = path.as_ref();
    let mut out = Output::create(path)?;
    {
        let mut writer = io::BufWriter::new(&mut out);
        body(&mut writer)?;
        writer.flush().map_err(|source| OutputError { action: "writing", path: path.to_owned(), source })?;
    }
    Ok(out.commit()?)
}

/// Writes `bytes` to `path`, atomically: [`write_with`] of one buffer.
pub fn write_file(path: impl AsRef<Path>, bytes: impl AsRef<[u8]>) -> Result<(), OutputError> {
    let (path, bytes) = (path.as_ref(), bytes.as_ref());
    write_with(path, |w| {
        w.write_all(bytes).map_err(|source| OutputError { action: "writing", path: path.to_owned(), source })
    })
}
