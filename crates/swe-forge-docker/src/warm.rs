//! Containers started ahead of the test runs that will use them. Starting a container is most of
//! a short run's fixed cost (the engine sets up its namespaces, cgroup and network: 0.5 s on an
//! idle machine, more under load), and the runs of one instance come one after another on the
//! same image with the same limits. So when a run begins, another container of its kind (image,
//! user, network, limits) is created and started in the background: it waits, doing nothing, for
//! a command on its standard input. The next run of that kind attaches, writes its command (the
//! same wrapper, script, files and environment a fresh container gets, `end_frame::payload`) and
//! goes on exactly as a fresh container's run does; the container then runs nothing of its own.
//! A run that says none comes after it ([`crate::Next::Nothing`]: an instance's last run, the last
//! prediction) starts none: about a fifth of the containers the tests started were such spares.
//!
//! A waiting container that is not used is removed: by [`crate::Engine::settle`], when more than
//! [`MAX_WARM`] wait, when it waited longer than [`MAX_AGE`], and (it exits by itself after
//! [`crate::end_frame::WAIT_SECS`]) by the cleanup of its run's label when the process died.

use std::time::{Duration, Instant};

use bollard::query_parameters::{AttachContainerOptions, UploadToContainerOptions};
use tokio::io::AsyncWriteExt;

use crate::container::{Start, full_script};
use crate::{DockerError, Engine, Next, RunOutput, RunSpec, RunStages};

/// Most containers waiting at once.
pub(crate) const MAX_WARM: usize = 4;

/// A waiting container older than this is not used (removed instead): it would exit by itself
/// soon after.
pub(crate) const MAX_AGE: Duration = Duration::from_secs(600);

/// A container started ahead of the run that will use it.
pub(crate) struct Warm {
    key: String,
    since: Instant,
    id: tokio::task::JoinHandle<Result<String, DockerError>>,
}

/// What two runs must share to use the same kind of container: everything of the container but
/// its command and environment (those travel on stdin).
fn key(spec: &RunSpec) -> String {
    format!(
        "{}\u{0}{:?}\u{0}{}\u{0}{:?}\u{0}{:?}\u{0}{:?}",
        spec.image, spec.user, spec.network, spec.memory_bytes, spec.pids_limit, spec.cpus
    )
}

impl Engine {
    /// Whether test runs ([`Engine::run_removing_later`], [`crate::Backend::run`]) use containers
    /// started ahead (the default). `swe-forge bench runs` compares both.
    pub fn set_prestart(&self, on: bool) {
        self.shared.no_prestart.store(!on, std::sync::atomic::Ordering::Relaxed);
    }

    pub(crate) fn prestarting(&self) -> bool {
        !self.shared.no_prestart.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// A waiting container for `spec`'s kind, taken out of the pool (waiting for its start when
    /// that is still under way). None when there is none, or it could not be started.
    pub(crate) async fn take_warm(&self, spec: &RunSpec) -> Option<String> {
        let key = key(spec);
        let (taken, expired) = {
            let mut pool = self.shared.warm.lock().unwrap_or_else(|e| e.into_inner());
            let (expired, kept): (Vec<Warm>, Vec<Warm>) =
                std::mem::take(&mut *pool).into_iter().partition(|w| w.since.elapsed() > MAX_AGE);
            *pool = kept;
            let taken = pool.iter().position(|w| w.key == key).map(|i| pool.remove(i));
            (taken, expired)
        };
        for w in expired {
            self.discard(w);
        }
        match taken?.id.await {
            Ok(Ok(id)) => Some(id),
            _ => None,
        }
    }

    /// Starts a container of `spec`'s kind in the background for the next run of that kind (of
    /// the image `spec.next` names, when it names one; none when it says no run comes).
    pub(crate) fn prestart_for(&self, spec: &RunSpec) {
        let image = match &spec.next {
            Next::Same => &spec.image,
            Next::Image(image) => image,
            Next::Nothing => return,
        };
        let mut light = RunSpec::new(image, "");
        light.network = spec.network;
        light.memory_bytes = spec.memory_bytes;
        light.pids_limit = spec.pids_limit;
        light.cpus = spec.cpus;
        light.user.clone_from(&spec.user);
        let engine = self.clone();
        let warm = Warm {
            key: key(&light),
            since: Instant::now(),
            id: tokio::spawn(async move { engine.start_warm(&light).await }),
        };
        let surplus = {
            let mut pool = self.shared.warm.lock().unwrap_or_else(|e| e.into_inner());
            pool.push(warm);
            let n = pool.len().saturating_sub(MAX_WARM);
            pool.drain(..n).collect::<Vec<_>>()
        };
        for w in surplus {
            self.discard(w);
        }
    }

    /// Removes the waiting containers of `image` in the background: no run of it is coming (its
    /// instance is done). Without this one would wait until [`MAX_AGE`] or the command's end.
    pub fn done_with(&self, image: &str) {
        let prefix = format!("{image}\u{0}");
        let done: Vec<Warm> = {
            let mut pool = self.shared.warm.lock().unwrap_or_else(|e| e.into_inner());
            let (done, kept): (Vec<Warm>, Vec<Warm>) =
                std::mem::take(&mut *pool).into_iter().partition(|w| w.key.starts_with(&prefix));
            *pool = kept;
            done
        };
        for w in done {
            self.discard(w);
        }
    }

    /// Removes the waiting containers (what [`Engine::settle`] does first).
    pub(crate) async fn drain_warm(&self) {
        let pool = std::mem::take(&mut *self.shared.warm.lock().unwrap_or_else(|e| e.into_inner()));
        for w in pool {
            if let Ok(Ok(id)) = w.id.await {
                self.remove_later(id);
            }
        }
    }

    /// Removes a waiting container in the background, once its start has ended.
    fn discard(&self, w: Warm) {
        let engine = self.clone();
        let removal = tokio::spawn(async move {
            if let Ok(Ok(id)) = w.id.await {
                engine.remove_container(&id).await;
            }
        });
        self.shared.removals.lock().unwrap_or_else(|e| e.into_inner()).push(removal);
    }

    async fn start_warm(&self, spec: &RunSpec) -> Result<String, DockerError> {
        let mut stages = RunStages::default();
        let cmd = vec![crate::end_frame::waiter(), "swe-forge".to_owned()];
        let id = self.create_container(spec, cmd, Vec::new(), true, &mut stages).await?;
        if let Err(e) = self.docker.start_container(&id, None).await {
            self.remove_container(&id).await;
            return Err(DockerError::api("start container", &id)(e));
        }
        Ok(id)
    }

    /// Runs `spec` in the waiting container `id`: its files put in place (the small ones travel in
    /// the command, as for a fresh container), then its command written to the container's stdin.
    /// [`DockerError::WarmLost`] when the container was not there to take it (it exited, the
    /// engine restarted): the caller runs `spec` in a fresh container instead.
    pub(crate) async fn run_in_warm(
        &self,
        id: &str,
        spec: &RunSpec,
        stages: &mut RunStages,
        nonce: &str,
    ) -> Result<RunOutput, DockerError> {
        let (script, mut files) = full_script(spec)?;
        let inline = crate::end_frame::inline(&files, spec.user.as_deref());
        let cmd = crate::end_frame::command(&script, inline.then_some(&files), spec.collect.as_deref(), nonce);
        if inline {
            files.clear();
        }
        let step = Instant::now();
        if !files.is_empty() {
            let bytes = crate::end_frame::tar_of(&files);
            let opts = UploadToContainerOptions { path: "/".to_owned(), ..Default::default() };
            self.docker
                .upload_to_container(id, Some(opts), bollard::body_full(bytes.into()))
                .await
                .map_err(|e| DockerError::WarmLost { container: id.to_owned(), message: e.to_string() })?;
        }
        stages.copy_in = step.elapsed();
        let payload = crate::end_frame::payload(&cmd, &spec.env);
        self.start_and_collect(id, spec, stages, Some(nonce), Start::Payload(payload)).await
    }

    /// Attaches to the waiting container's stdin and writes `payload`; the attach is kept until
    /// the run ends.
    pub(crate) async fn deliver(
        &self,
        id: &str,
        payload: &[u8],
    ) -> Result<bollard::container::AttachContainerResults, DockerError> {
        let lost = |message: String| DockerError::WarmLost { container: id.to_owned(), message };
        // No detach sequence can occur in the payload (it never holds a NUL byte).
        let opts = AttachContainerOptions {
            stdin: true,
            stdout: true,
            stderr: true,
            stream: true,
            detach_keys: Some("ctrl-@".to_owned()),
            ..Default::default()
        };
        let mut attached = self.docker.attach_container(id, Some(opts)).await.map_err(|e| lost(e.to_string()))?;
        attached.input.write_all(payload).await.map_err(|e| lost(e.to_string()))?;
        attached.input.flush().await.map_err(|e| lost(e.to_string()))?;
        Ok(attached)
    }
}
