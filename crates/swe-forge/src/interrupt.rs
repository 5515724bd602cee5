//! Ctrl-C (SIGINT) and SIGTERM: the async runtime every command runs on stops the command's
//! work, removes the containers of this run and exits with 130; a second signal during the
//! cleanup exits at once.
//!
//! Stopping is dropping the command's future. Its state store writes are synchronous (one
//! SQLite transaction, no await inside) and happen while the future is polled on this thread,
//! so the future is never dropped in the middle of one: the last transaction is finished or was
//! never begun. Containers are not tied to futures: they are found by this run's label
//! (`swe_forge_docker::LABEL_RUN`) and force-removed, running or exited.
//!
//! Commands that never await (export, curate, parse, ...) run through [`Runtime::run_sync`]: a
//! signal removes the temporary files of the outputs they have not put in place yet
//! (`swe_forge_fs::remove_pending_temps`) and exits with 130, leaving every previous output as it
//! was.

use std::future::Future;
use std::time::{Duration, Instant};

use anyhow::Result;
use swe_forge_docker::Engine;
use tokio::signal::unix::{SignalKind, signal};

/// Exit code of a command stopped by SIGINT or SIGTERM (128 + SIGINT, as shells report it).
const EXIT_INTERRUPTED: u8 = crate::exit::Exit::Interrupted as u8;

/// The error a stopped command ends with; `main` turns it into `Exit::Interrupted`.
#[derive(Debug)]
pub struct Interrupted(&'static str);

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "interrupted by {}", self.0)
    }
}

impl std::error::Error for Interrupted {}

/// Longest the cleanup may take before the process exits anyway.
const CLEANUP_LIMIT: Duration = Duration::from_secs(60);

/// A multi-threaded tokio runtime whose `block_on` honours SIGINT and SIGTERM.
pub struct Runtime {
    inner: Option<tokio::runtime::Runtime>,
    interrupted: std::cell::Cell<bool>,
}

impl Runtime {
    /// A multi-threaded runtime with every driver enabled.
    pub fn new() -> Result<Runtime> {
        let inner = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
        Ok(Runtime { inner: Some(inner), interrupted: std::cell::Cell::new(false) })
    }

    /// Runs `work` to its end, or until SIGINT or SIGTERM: then drops it, removes this run's
    /// containers, says what was removed and returns [`Interrupted`].
    pub fn block_on<F: Future<Output = Result<()>>>(&self, work: F) -> Result<()> {
        let runtime = self.inner.as_ref().expect("the runtime lives until dropped");
        let result = runtime.block_on(async {
            let mut sigint = signal(SignalKind::interrupt())?;
            let mut sigterm = signal(SignalKind::terminate())?;
            let mut work = Box::pin(work);
            let name = tokio::select! {
                r = &mut work => return r,
                _ = sigint.recv() => "SIGINT",
                _ = sigterm.recv() => "SIGTERM",
            };
            let started = Instant::now();
            // Between two polls: no state store transaction is under way (see the module docs).
            drop(work);
            swe_forge_fs::remove_pending_temps();
            eprintln!("\n{name}: stopping, removing this run's containers (press Ctrl-C again to exit at once)");
            let second = tokio::spawn(async move {
                tokio::select! {
                    _ = sigint.recv() => {}
                    _ = sigterm.recv() => {}
                }
                eprintln!("second signal: exiting without finishing the cleanup");
                std::process::exit(i32::from(EXIT_INTERRUPTED));
            });
            match tokio::time::timeout(CLEANUP_LIMIT, remove_run_containers(started)).await {
                Ok(Ok(message)) => eprintln!("{message}"),
                Ok(Err(e)) => eprintln!("could not remove this run's containers: {e:#}"),
                Err(_) => eprintln!("gave up removing this run's containers after {} s", CLEANUP_LIMIT.as_secs()),
            }
            second.abort();
            Err(Interrupted(name).into())
        });
        if result.as_ref().is_err_and(|e| e.is::<Interrupted>()) {
            self.interrupted.set(true);
        }
        result
    }
}

impl Runtime {
    /// Runs `work`, a command that never awaits, on this thread. On SIGINT or SIGTERM the
    /// temporary files of its unfinished outputs are removed and the process exits with 130 at
    /// once (a batch being renamed is finished first).
    pub fn run_sync(&self, work: impl FnOnce() -> Result<()>) -> Result<()> {
        let runtime = self.inner.as_ref().expect("the runtime lives until dropped");
        // Registered here, before the work starts, so no signal finds the default action.
        let (mut sigint, mut sigterm) = {
            let _context = runtime.enter();
            (signal(SignalKind::interrupt())?, signal(SignalKind::terminate())?)
        };
        let watcher = runtime.spawn(async move {
            let name = tokio::select! {
                _ = sigint.recv() => "SIGINT",
                _ = sigterm.recv() => "SIGTERM",
            };
            let removed = swe_forge_fs::remove_pending_temps();
            eprintln!(
                "\n{name}: stopped; removed {removed} unfinished output file(s), earlier outputs left as they were"
            );
            std::process::exit(i32::from(EXIT_INTERRUPTED));
        });
        let result = work();
        watcher.abort();
        result
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        // After an interruption, blocking tasks (a build lock another process holds, debootstrap)
        // may never end: do not wait for them.
        if let Some(rt) = self.inner.take().filter(|_| self.interrupted.get()) {
            rt.shutdown_background();
        }
    }
}

/// Removes this run's containers and says which.
async fn remove_run_containers(started: Instant) -> Result<String> {
    if !swe_forge_docker::run_created_containers() {
        return Ok("no container was started".to_owned());
    }
    let engine = Engine::connect().await?;
    let removed = engine.remove_run_containers().await?;
    let jobs = swe_forge_docker::remove_run_services(&engine).await;
    let mut message = format!(
        "removed {} container(s) of run {} in {} ms",
        removed.len(),
        swe_forge_docker::run_id(),
        started.elapsed().as_millis()
    );
    if jobs > 0 {
        message.push_str(&format!(" and {jobs} swarm job(s)"));
    }
    for c in &removed {
        message.push_str(&format!("\n  {} {} ({})", c.id, c.image, c.state));
    }
    Ok(message)
}
