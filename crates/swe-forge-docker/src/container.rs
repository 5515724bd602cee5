//! One run of a script in a fresh container: files copied in before start, stdout and stderr
//! merged inside the container (so lines are never split), a wall-clock timeout after which
//! the container is killed, and the log kept (head and tail when it exceeds the cap).

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use bollard::models::{ContainerConfig, ContainerCreateBody, HostConfig, HostConfigLogConfig, NetworkCreateRequest};
use bollard::query_parameters::{
    AttachContainerOptions, CommitContainerOptions, CreateContainerOptions, DownloadFromContainerOptions,
    KillContainerOptions, ListNetworksOptions, RemoveContainerOptions, UploadToContainerOptions, WaitContainerOptions,
};
use futures_util::StreamExt;
use sha2::{Digest, Sha256};

use crate::{DockerError, Engine, LABEL_ROLE};

/// Resolver options of runs without the network (see `create`).
pub const ISOLATED_DNS_OPTIONS: &[&str] = &["timeout:1", "attempts:1"];

/// The internal network test runs are attached to when they may not reach the network.
pub const ISOLATED_NETWORK: &str = "swe-forge-isolated";

/// Where the extra CA bundle appears inside a container that is allowed to reach the network.
pub const CA_BUNDLE_PATH: &str = "/run/swe-forge/ca-bundle.crt";

/// Extra CA certificates (a TLS-intercepting proxy, a corporate CA) for steps that fetch
/// dependencies. The bundle is copied into the container for the duration of one script and
/// deleted before it ends, so no committed layer (and no published image) carries it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaBundle(pub PathBuf);

impl CaBundle {
    /// Variables that make common toolchains trust the bundle.
    pub fn env() -> Vec<String> {
        [
            "SWE_FORGE_CA_BUNDLE",
            "SSL_CERT_FILE",
            "CURL_CA_BUNDLE",
            "GIT_SSL_CAINFO",
            "CARGO_HTTP_CAINFO",
            "NODE_EXTRA_CA_CERTS",
            "REQUESTS_CA_BUNDLE",
        ]
        .iter()
        .map(|k| format!("{k}={CA_BUNDLE_PATH}"))
        .collect()
    }
}

/// What to run and under which limits.
#[derive(Debug, Clone)]
pub struct RunSpec {
    /// Image to start from.
    pub image: String,
    /// A bash script; its stdout and stderr are merged before anything reads them.
    pub script: String,
    /// Files to place in the container before it starts (absolute path, content).
    pub files: Vec<(String, Vec<u8>)>,
    /// Wall-clock limit; the container is killed when it is exceeded.
    pub timeout: Duration,
    /// Whether the container may reach the network (test runs may not).
    pub network: bool,
    /// Memory limit in bytes.
    pub memory_bytes: Option<i64>,
    /// Limit on the number of processes.
    pub pids_limit: Option<i64>,
    /// CPU limit, in CPUs (1.5 = one and a half cores).
    pub cpus: Option<f64>,
    /// User the script runs as (root when absent).
    pub user: Option<String>,
    /// Extra environment variables, `K=V`.
    pub env: Vec<String>,
    /// Extra CA bundle to mount (only honoured with `network`).
    pub ca_bundle: Option<CaBundle>,
    /// Bytes of log kept; beyond that the first and last halves are kept.
    pub max_log_bytes: usize,
    /// A folder of the container whose regular files are copied out after the script ends.
    pub collect: Option<String>,
    /// The run expected after this one with these limits: a container for it is started ahead
    /// while this one runs (`warm.rs`).
    pub next: Next,
}

/// The run expected after a run with the same limits, for the container started ahead of it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Next {
    /// Another run of the same image (the runs of one instance come one after another).
    #[default]
    Same,
    /// A run of this image (an evaluation's next prediction).
    Image(String),
    /// No run: none is started ahead (an instance's last run, the last prediction).
    Nothing,
}

impl RunSpec {
    /// A spec with default limits: no network, 30 minutes, 64 MiB of log.
    pub fn new(image: impl Into<String>, script: impl Into<String>) -> RunSpec {
        RunSpec {
            image: image.into(),
            script: script.into(),
            files: Vec::new(),
            timeout: Duration::from_secs(30 * 60),
            network: false,
            memory_bytes: None,
            pids_limit: None,
            cpus: None,
            user: None,
            env: Vec::new(),
            ca_bundle: None,
            max_log_bytes: 64 << 20,
            collect: None,
            next: Next::Same,
        }
    }
}

/// What a run produced.
#[derive(Debug, Clone)]
pub struct RunOutput {
    /// Exit code of the script; None when it was killed for the timeout.
    pub exit_code: Option<i64>,
    /// Killed for exceeding the timeout.
    pub timed_out: bool,
    /// Killed by the kernel for exceeding the memory limit.
    pub oom_killed: bool,
    /// The merged log (head and tail when truncated).
    pub log: Vec<u8>,
    /// Whether part of the middle of the log was dropped.
    pub log_truncated: bool,
    /// Size of the whole log.
    pub log_bytes: u64,
    /// sha256 of the whole log.
    pub log_sha256: String,
    /// Wall time from start to exit.
    pub duration: Duration,
    /// Files copied out of `RunSpec::collect`: path relative to that folder, content.
    pub files: Vec<(String, Vec<u8>)>,
    /// The machine that ran it: None on the local engine, the node's id on a swarm.
    pub node: Option<String>,
    /// Where the time of the run went, step by step (the local engine's runs; zero on a swarm).
    pub stages: RunStages,
}

/// Wall time of each step of a run on the local engine: what `swe-forge bench runs` reports as
/// the fixed cost of a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunStages {
    /// Finding (or making) the internal network.
    pub network: Duration,
    /// Creating the container.
    pub create: Duration,
    /// Copying the files into it.
    pub copy_in: Duration,
    /// The engine starting it (until the start call answered).
    pub start: Duration,
    /// From started to the end of its log: the script, and the engine's work around it.
    pub run: Duration,
    /// After the log ended: the exit code and whether the memory limit killed anything.
    pub exit: Duration,
    /// Copying the result files out (at the same time as the end of `exit`).
    pub copy_out: Duration,
    /// Removing the container, as far as the run waited for it (zero when it is removed in the
    /// background).
    pub remove: Duration,
}

impl RunStages {
    /// Every step, in order, with its name.
    pub fn named(&self) -> [(&'static str, Duration); 8] {
        [
            ("network", self.network),
            ("create", self.create),
            ("copy in", self.copy_in),
            ("start", self.start),
            ("run", self.run),
            ("exit", self.exit),
            ("copy out", self.copy_out),
            ("remove", self.remove),
        ]
    }

    /// The sum of the steps.
    pub fn total(&self) -> Duration {
        self.named().iter().map(|(_, d)| *d).sum()
    }
}

impl Engine {
    /// Runs `spec` in a fresh container and removes the container afterwards.
    pub async fn run(&self, spec: &RunSpec) -> Result<RunOutput, DockerError> {
        let mut stages = RunStages::default();
        let nonce = crate::end_frame::nonce();
        let id = self.create(spec, &mut stages, Some(&nonce)).await?;
        let out = self.start_and_collect(&id, spec, &mut stages, Some(&nonce), Start::Engine).await;
        let removing = Instant::now();
        self.remove_container(&id).await;
        stages.remove = removing.elapsed();
        out.map(|out| RunOutput { stages, ..out })
    }

    /// Runs `spec` as [`Engine::run`] does, but removes the container in the background: the
    /// result comes back as soon as it is read, and [`Engine::settle`] waits for the removals
    /// still under way. A process killed before that leaves the container to the cleanup of its
    /// run label (`docs/reliability.md`), as a container of a run under way would be.
    pub async fn run_removing_later(&self, spec: &RunSpec) -> Result<RunOutput, DockerError> {
        let mut stages = RunStages::default();
        let nonce = crate::end_frame::nonce();
        let prestart = self.prestarting();
        let mut lost = false;
        let mut ran = None;
        // A container started ahead (`warm.rs`): the run's command goes in on its stdin.
        if let Some(id) = if prestart { self.take_warm(spec).await } else { None } {
            match self.run_in_warm(&id, spec, &mut stages, &nonce).await {
                // It was not there to take the command (it exited, the engine restarted): the
                // run has not begun; a fresh container runs it.
                Err(DockerError::WarmLost { container, message }) => {
                    tracing::debug!(%container, %message, "a container started ahead was lost; starting a fresh one");
                    self.remove_later(id);
                    stages = RunStages::default();
                    lost = true;
                }
                out => ran = Some((id, out)),
            }
        }
        let (id, out) = match ran {
            Some(ran) => ran,
            None => {
                let id = self.create(spec, &mut stages, Some(&nonce)).await?;
                let start = if prestart && !lost { Start::EngineThenPrestart } else { Start::Engine };
                let out = self.start_and_collect(&id, spec, &mut stages, Some(&nonce), start).await;
                (id, out)
            }
        };
        self.remove_later(id);
        out.map(|out| RunOutput { stages, ..out })
    }

    /// Removes container `id` in the background ([`Engine::settle`] waits for it).
    pub(crate) fn remove_later(&self, id: String) {
        let engine = self.clone();
        let removal = tokio::spawn(async move { engine.remove_container(&id).await });
        let mut removals = self.shared.removals.lock().unwrap_or_else(|e| e.into_inner());
        removals.retain(|r| !r.is_finished());
        removals.push(removal);
    }

    /// Waits until the containers [`Engine::run_removing_later`] left to remove are removed.
    pub async fn settle(&self) {
        self.drain_warm().await;
        loop {
            let pending = std::mem::take(&mut *self.shared.removals.lock().unwrap_or_else(|e| e.into_inner()));
            if pending.is_empty() {
                return;
            }
            for removal in pending {
                let _ = removal.await;
            }
        }
    }

    /// Runs `spec` and, when the script exits 0, commits the container as `tag`, keeping the
    /// configuration (env, cmd, workdir, user) of the image it started from, so that nothing
    /// of the run's own settings (CA bundle variables, mounts) reaches the new image.
    pub async fn run_and_commit(
        &self,
        spec: &RunSpec,
        tag: &str,
        labels: &HashMap<String, String>,
    ) -> Result<(RunOutput, Option<String>), DockerError> {
        let mut stages = RunStages::default();
        // The engine says when the setup ended (the container must have stopped before the commit).
        let id = self.create(spec, &mut stages, None).await?;
        let result = async {
            let out = self.start_and_collect(&id, spec, &mut stages, None, Start::Engine).await?;
            if out.exit_code != Some(0) {
                return Ok((out, None));
            }
            let parent =
                self.docker.inspect_image(&spec.image).await.map_err(DockerError::api("inspect image", &spec.image))?;
            let pc = parent.config.unwrap_or_default();
            let mut all_labels = pc.labels.clone().unwrap_or_default();
            all_labels.extend(labels.clone());
            // Which run made it, under a label of its own: the container labels (run, host,
            // job) the engine would merge in from the committed container are blanked, or every
            // container anyone later makes from the image would pass for one of that run's, and
            // a sweep for the containers of runs that are gone would remove it (SWE-bench's
            // harness, a user's `docker run`).
            all_labels.insert(crate::LABEL_BUILT_BY.to_owned(), crate::run_id().to_owned());
            for label in [crate::LABEL_RUN, crate::LABEL_RUN_HOST, crate::LABEL_JOB] {
                all_labels.insert(label.to_owned(), String::new());
            }
            let config = ContainerConfig {
                user: pc.user,
                env: pc.env,
                cmd: pc.cmd,
                working_dir: pc.working_dir,
                // An empty (not absent) entrypoint: `docker commit` would otherwise take ours.
                entrypoint: Some(pc.entrypoint.unwrap_or_default()),
                labels: Some(all_labels),
                ..Default::default()
            };
            let (repo, t) = tag.rsplit_once(':').unwrap_or((tag, "latest"));
            let opts = CommitContainerOptions {
                container: Some(id.clone()),
                repo: Some(repo.to_owned()),
                tag: Some(t.to_owned()),
                pause: true,
                ..Default::default()
            };
            let committed =
                self.docker.commit_container(opts, config).await.map_err(DockerError::api("commit", tag))?;
            Ok((out, Some(committed.id)))
        }
        .await;
        self.remove_container(&id).await;
        result
    }

    /// Creates the run's container and puts its files in place. With a `nonce`, the container
    /// tells the end of the run itself (`end_frame.rs`) and small files travel in its command.
    async fn create(&self, spec: &RunSpec, stages: &mut RunStages, nonce: Option<&str>) -> Result<String, DockerError> {
        let (script, mut files) = full_script(spec)?;
        let cmd = match nonce {
            Some(nonce) => {
                let inline = crate::end_frame::inline(&files, spec.user.as_deref());
                let cmd = crate::end_frame::command(&script, inline.then_some(&files), spec.collect.as_deref(), nonce);
                if inline {
                    files.clear();
                }
                cmd
            }
            None => vec![script],
        };
        let id = self.create_container(spec, cmd, spec.env.clone(), false, stages).await?;
        let step = Instant::now();
        if !files.is_empty() {
            let bytes = crate::end_frame::tar_of(&files);
            let opts = UploadToContainerOptions { path: "/".to_owned(), ..Default::default() };
            if let Err(e) = self.docker.upload_to_container(&id, Some(opts), bollard::body_full(bytes.into())).await {
                self.remove_container(&id).await;
                return Err(DockerError::api("copy files into container", &id)(e));
            }
        }
        stages.copy_in = step.elapsed();
        Ok(id)
    }

    /// Creates a container of `spec.image` running `cmd` (after `/bin/bash -c`) with `env`, under
    /// the spec's limits, on the spec's network; `stdin` keeps its standard input open (a container
    /// started ahead of its run reads the run's command there). Fills the `network` and `create`
    /// steps.
    pub(crate) async fn create_container(
        &self,
        spec: &RunSpec,
        cmd: Vec<String>,
        env: Vec<String>,
        stdin: bool,
        stages: &mut RunStages,
    ) -> Result<String, DockerError> {
        let step = Instant::now();
        let network = if spec.network { "bridge".to_owned() } else { self.isolated_network().await? };
        stages.network = step.elapsed();
        // Without the network, a lookup of an outside name can only fail: fail it after one try of
        // one second, not glibc's default two tries of five (tests that need the internet wait
        // ten seconds each otherwise).
        let dns_options = (!spec.network).then(|| ISOLATED_DNS_OPTIONS.iter().map(|o| (*o).to_owned()).collect());
        let host_config = HostConfig {
            network_mode: Some(network),
            dns_options,
            memory: spec.memory_bytes,
            memory_swap: spec.memory_bytes,
            pids_limit: spec.pids_limit,
            nano_cpus: spec.cpus.map(|c| (c * 1e9) as i64),
            init: Some(true),
            // The engine keeps nothing of the output: the run reads it from its attach (bounded
            // by `max_log_bytes` on our side), so a test that prints gigabytes leaves no
            // gigabyte log file on the engine's disk. (json-file's `max-size` would rotate the
            // file under `docker logs --follow`, which loses output in Docker 20.10.)
            log_config: Some(HostConfigLogConfig { typ: Some("none".to_owned()), config: None }),
            ..Default::default()
        };
        // Our own entrypoint overrides whatever the image has; `run_and_commit` resets it, and
        // no container env of ours exists for `docker commit` to carry over.
        let body = ContainerCreateBody {
            image: Some(spec.image.clone()),
            entrypoint: Some(vec!["/bin/bash".to_owned(), "-c".to_owned()]),
            cmd: Some(cmd),
            env: Some(env),
            user: spec.user.clone(),
            open_stdin: stdin.then_some(true),
            attach_stdin: stdin.then_some(true),
            labels: Some(
                [(LABEL_ROLE.to_owned(), "run".to_owned())]
                    .into_iter()
                    .chain(crate::run_label::container_labels())
                    .collect(),
            ),
            host_config: Some(host_config.clone()),
            ..Default::default()
        };
        let step = Instant::now();
        let created = match self.docker.create_container(None::<CreateContainerOptions>, body.clone()).await {
            // The network found earlier was removed since (`docker network prune`): find or
            // make it again, once.
            Err(bollard::errors::Error::DockerResponseServerError { status_code: 404, ref message })
                if !spec.network && message.contains("network") =>
            {
                self.forget_isolated_network();
                let network = self.isolated_network().await?;
                let body = ContainerCreateBody {
                    host_config: Some(HostConfig { network_mode: Some(network), ..host_config }),
                    ..body
                };
                self.docker.create_container(None::<CreateContainerOptions>, body).await
            }
            other => other,
        }
        .map_err(DockerError::api("create container", &spec.image))?;
        stages.create = step.elapsed();
        Ok(created.id)
    }

    /// Starts container `id` (`start` says how), reads its output until the script ends or
    /// `spec.timeout` passes (then kills it), and collects what the run gave: the exit code, the
    /// end frame's news (`nonce` names a frame to expect on stderr), the files. Fills the
    /// `start`, `run`, `exit` and `copy_out` steps.
    pub(crate) async fn start_and_collect(
        &self,
        id: &str,
        spec: &RunSpec,
        stages: &mut RunStages,
        nonce: Option<&str>,
        start: Start,
    ) -> Result<RunOutput, DockerError> {
        // A run that could have had a container started ahead has one started for the next run
        // of its kind, once its own has begun.
        let prestart_after = !matches!(start, Start::Engine);
        let warm = matches!(start, Start::Payload(_));
        let started = Instant::now();
        let mut attached = self.attach_and_start(id, start).await?;
        stages.start = started.elapsed();
        if prestart_after {
            self.prestart_for(spec);
        }

        let step = Instant::now();
        let mut sink = LogSink::new(spec.max_log_bytes);
        // With a frame, stderr carries only the frame (the script's stderr is merged into stdout).
        let mut frame = Vec::new();
        let output = (&mut sink, nonce.is_some().then_some(&mut frame));
        let timed_out = self.read_output(id, spec.timeout, &mut attached.output, output).await?;
        stages.run = step.elapsed();
        let step = Instant::now();
        if warm {
            command_taken(id, &mut frame)?;
        }
        let end = match (timed_out, nonce) {
            (false, Some(nonce)) => crate::end_frame::read(&frame, nonce),
            _ => None,
        };
        drop(frame);
        let exit_code = match &end {
            Some(end) => Some(end.exit_code),
            None => self.exit_code(id).await?,
        };
        let duration = started.elapsed();
        let (oom_killed, files) = self.ask_stopped(id, spec, end, step, stages).await?;
        let (log, log_truncated, log_bytes, log_sha256) = sink.finish();
        Ok(RunOutput {
            exit_code: if timed_out { None } else { exit_code },
            timed_out,
            oom_killed,
            log,
            log_truncated,
            log_bytes,
            log_sha256,
            duration,
            files,
            node: None,
            stages: *stages,
        })
    }

    /// Starts container `id` as `start` says, with its output coming through an attach made
    /// before it starts (its log driver is `none`: the engine keeps no copy). A warm container's
    /// attach also gives it its command, and is held until the run ends.
    async fn attach_and_start(
        &self,
        id: &str,
        start: Start,
    ) -> Result<bollard::container::AttachContainerResults, DockerError> {
        match start {
            Start::Engine | Start::EngineThenPrestart => {
                let opts = AttachContainerOptions { stdout: true, stderr: true, stream: true, ..Default::default() };
                let attached = self
                    .docker
                    .attach_container(id, Some(opts))
                    .await
                    .map_err(DockerError::api("attach to container", id))?;
                self.docker.start_container(id, None).await.map_err(DockerError::api("start container", id))?;
                Ok(attached)
            }
            Start::Payload(payload) => self.deliver(id, &payload).await,
        }
    }

    /// Reads the output of container `id` from `logs` until it ends: into the log sink, and
    /// stderr into the frame (at most [`FRAME_CAP`] bytes) when a frame is expected. After
    /// `timeout` the container is killed; says whether that happened.
    async fn read_output<L>(
        &self,
        id: &str,
        timeout: Duration,
        logs: &mut L,
        (sink, mut frame): (&mut LogSink, Option<&mut Vec<u8>>),
    ) -> Result<bool, DockerError>
    where
        L: futures_util::Stream<Item = Result<bollard::container::LogOutput, bollard::errors::Error>> + Unpin,
    {
        let collect = async {
            // An attach the engine registered only after the container ended never ends (a warm
            // container that died before its run took it, an attach that lost the race with a
            // very short run): until the first output arrives, whether the container still runs
            // is asked now and then, and reading stops one check after it ended (output on its
            // way when it ended still arrives).
            let mut seen = false;
            let mut ended = false;
            let mut check = tokio::time::interval_at(tokio::time::Instant::now() + ALIVE_CHECK, ALIVE_CHECK);
            loop {
                let item = if seen {
                    logs.next().await
                } else {
                    tokio::select! {
                        item = logs.next() => item,
                        _ = check.tick() => {
                            if ended {
                                break;
                            }
                            ended = !self.running(id).await?;
                            continue;
                        }
                    }
                };
                let Some(item) = item else { break };
                seen = true;
                match (item, frame.as_deref_mut()) {
                    (Ok(bollard::container::LogOutput::StdErr { message }), Some(frame)) => {
                        if frame.len() < FRAME_CAP {
                            frame.extend_from_slice(&message);
                        }
                    }
                    (Ok(chunk), _) => sink.push(&chunk.into_bytes()),
                    (Err(e), _) => return Err(DockerError::api("read output", id)(e)),
                }
            }
            Ok(())
        };
        match tokio::time::timeout(timeout, collect).await {
            Ok(r) => r.map(|()| false),
            Err(_) => {
                let _ = self.docker.kill_container(id, None::<KillContainerOptions>).await;
                Ok(true)
            }
        }
    }

    /// The exit code of container `id` once it stops, as the engine reports it (None when the
    /// wait gives nothing).
    async fn exit_code(&self, id: &str) -> Result<Option<i64>, DockerError> {
        let mut wait = self.docker.wait_container(id, None::<WaitContainerOptions>);
        match wait.next().await {
            None => Ok(None),
            Some(Ok(w)) => Ok(Some(w.status_code)),
            Some(Err(bollard::errors::Error::DockerContainerWaitError { code, .. })) => Ok(Some(code)),
            Some(Err(e)) => Err(DockerError::api("wait for container", id)(e)),
        }
    }

    /// What the end frame `end` did not say, asked of the stopped container `id`, both at the
    /// same time: whether the memory limit killed anything, and the files under `spec.collect`.
    /// Fills the `exit` step (counted from `step`) and the `copy_out` step.
    async fn ask_stopped(
        &self,
        id: &str,
        spec: &RunSpec,
        end: Option<crate::end_frame::End>,
        step: Instant,
        stages: &mut RunStages,
    ) -> Result<(bool, Files), DockerError> {
        let known_oom = end.as_ref().and_then(|e| e.oom_killed);
        let known_files = end.and_then(|e| e.files);
        let inspect = async {
            let oom = match known_oom {
                Some(oom) => Ok(oom),
                None => self
                    .docker
                    .inspect_container(id, None)
                    .await
                    .map(|c| c.state.and_then(|s| s.oom_killed).unwrap_or(false))
                    .map_err(DockerError::api("inspect container", id)),
            };
            (oom, step.elapsed())
        };
        let download = async {
            let step = Instant::now();
            let files = match (known_files, &spec.collect) {
                (Some(files), _) => Ok(files),
                (None, Some(dir)) => self.download_files(id, dir).await,
                (None, None) => Ok(Vec::new()),
            };
            (files, step.elapsed())
        };
        let ((oom_killed, exit), (files, copy_out)) = tokio::join!(inspect, download);
        stages.exit = exit;
        stages.copy_out = copy_out;
        Ok((oom_killed?, files?))
    }

    /// Whether container `id` is running (or about to: created, restarting).
    async fn running(&self, id: &str) -> Result<bool, DockerError> {
        use bollard::models::ContainerStateStatusEnum as S;
        let c = self.docker.inspect_container(id, None).await.map_err(DockerError::api("inspect container", id))?;
        let status = c.state.and_then(|s| s.status);
        Ok(!matches!(status, Some(S::EXITED | S::DEAD | S::REMOVING)))
    }

    /// Regular files under `dir` of a (stopped) container; a missing folder gives none. At most
    /// 256 MiB are read.
    async fn download_files(&self, id: &str, dir: &str) -> Result<Vec<(String, Vec<u8>)>, DockerError> {
        let opts = DownloadFromContainerOptions { path: dir.to_owned() };
        let mut stream = self.docker.download_from_container(id, Some(opts));
        let mut tar_bytes = Vec::new();
        while let Some(chunk) = stream.next().await {
            match chunk {
                Ok(b) => {
                    tar_bytes.extend_from_slice(&b);
                    if tar_bytes.len() > 256 << 20 {
                        break;
                    }
                }
                Err(bollard::errors::Error::DockerResponseServerError { status_code: 404, .. }) => {
                    return Ok(Vec::new());
                }
                Err(e) => return Err(DockerError::api("copy results out of container", id)(e)),
            }
        }
        Ok(files_of_tar(&tar_bytes))
    }

    /// An internal bridge network: containers on it have an interface and resolve `localhost`
    /// like anywhere else (tools bind local servers), but reach nothing outside. `--network none`
    /// leaves only loopback, and glibc then fails `localhost` lookups made with AI_ADDRCONFIG.
    /// Found once per engine (and again when a run finds it gone).
    async fn isolated_network(&self) -> Result<String, DockerError> {
        if let Some(id) = self.shared.isolated_network.lock().unwrap_or_else(|e| e.into_inner()).clone() {
            return Ok(id);
        }
        let id = self.find_or_make_isolated_network().await?;
        *self.shared.isolated_network.lock().unwrap_or_else(|e| e.into_inner()) = Some(id.clone());
        Ok(id)
    }

    fn forget_isolated_network(&self) {
        *self.shared.isolated_network.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }

    async fn find_or_make_isolated_network(&self) -> Result<String, DockerError> {
        if let Some(id) = self.find_isolated_network().await? {
            return Ok(id);
        }
        let _lock = crate::lock::lock("network-isolated").await?;
        if let Some(id) = self.find_isolated_network().await? {
            return Ok(id);
        }
        let req = NetworkCreateRequest {
            name: ISOLATED_NETWORK.to_owned(),
            internal: Some(true),
            labels: Some(HashMap::from([(LABEL_ROLE.to_owned(), "network".to_owned())])),
            ..Default::default()
        };
        let created =
            self.docker.create_network(req).await.map_err(DockerError::api("create network", ISOLATED_NETWORK))?;
        Ok(created.id)
    }

    /// Id of the oldest network named [`ISOLATED_NETWORK`] (names are not unique in Docker).
    async fn find_isolated_network(&self) -> Result<Option<String>, DockerError> {
        let filters = HashMap::from([("name".to_owned(), vec![ISOLATED_NETWORK.to_owned()])]);
        let mut found = self
            .docker
            .list_networks(Some(ListNetworksOptions { filters: Some(filters) }))
            .await
            .map_err(DockerError::api("list networks", ISOLATED_NETWORK))?;
        found.retain(|n| n.name.as_deref() == Some(ISOLATED_NETWORK) && n.internal == Some(true));
        found.sort_by(|a, b| a.created.cmp(&b.created).then(a.id.cmp(&b.id)));
        // Duplicates (made by racing processes before the lock existed) make the name ambiguous
        // for the engine: keep the oldest.
        for extra in found.iter().skip(1).filter_map(|n| n.id.as_deref()) {
            let _ = self.docker.remove_network(extra).await;
        }
        Ok(found.into_iter().find_map(|n| n.id))
    }

    /// Removes container `id`. When the engine does not answer (it is restarting), the removal is
    /// tried again for up to [`REMOVE_PATIENCE`]: a container that outlived a restart would
    /// otherwise stay behind, since the run that made it goes on with a new one.
    pub(crate) async fn remove_container(&self, id: &str) {
        let deadline = Instant::now() + REMOVE_PATIENCE;
        let mut delay = Duration::from_millis(250);
        loop {
            let opts = RemoveContainerOptions { force: true, v: true, ..Default::default() };
            match self.docker.remove_container(id, Some(opts)).await {
                Ok(()) => return,
                // Gone already, or being removed by the engine.
                Err(bollard::errors::Error::DockerResponseServerError { status_code: 404 | 409, .. }) => return,
                // The engine answered with an error: trying again would get the same answer.
                Err(e @ bollard::errors::Error::DockerResponseServerError { .. }) => {
                    tracing::warn!(container = id, error = %e, "could not remove container");
                    return;
                }
                Err(e) if Instant::now() >= deadline => {
                    tracing::warn!(container = id, error = %e, "could not remove container: the engine did not answer");
                    return;
                }
                Err(_) => {
                    tokio::time::sleep(delay).await;
                    delay = (delay * 2).min(Duration::from_secs(4));
                }
            }
        }
    }
}

/// How a run's container begins.
pub(crate) enum Start {
    /// The engine starts it.
    Engine,
    /// The engine starts it, then another is started ahead for the next run of its kind.
    EngineThenPrestart,
    /// It was started ahead and waits for its command: these bytes on its stdin.
    Payload(Vec<u8>),
}

/// Checks that a container started ahead said on its stderr (`frame`) that the command came, and
/// takes that line off the frame; a run without it never began (the container was gone, or it
/// gave up waiting).
fn command_taken(id: &str, frame: &mut Vec<u8>) -> Result<(), DockerError> {
    let taken = format!("{}\n", crate::end_frame::TAKEN);
    if !frame.starts_with(taken.as_bytes()) {
        let message = if frame.starts_with(crate::end_frame::UNUSED.as_bytes()) {
            "it stopped waiting"
        } else {
            "it ended without taking the command"
        };
        return Err(DockerError::WarmLost { container: id.to_owned(), message: message.to_owned() });
    }
    frame.drain(..taken.len());
    Ok(())
}

/// How often a run that printed nothing yet checks that its container still runs.
const ALIVE_CHECK: Duration = Duration::from_secs(2);

/// Most bytes of a run's stderr kept for its end frame: the results cap and room for the header.
const FRAME_CAP: usize = (256 << 20) + (64 << 10);

/// How long a container's removal waits for an engine that does not answer.
const REMOVE_PATIENCE: Duration = Duration::from_secs(90);

/// Files as (path, content).
pub(crate) type Files = Vec<(String, Vec<u8>)>;

/// The script a run executes (stdout and stderr merged, the CA bundle's variables when it is
/// given) and the files placed before it starts (the caller's, plus the bundle).
pub(crate) fn full_script(spec: &RunSpec) -> Result<(String, Files), DockerError> {
    let mut files = spec.files.clone();
    let mut script = String::from("exec 2>&1\n");
    if let (true, Some(ca)) = (spec.network, &spec.ca_bundle) {
        // Copied in, used, and deleted before the script ends: a layer committed from this
        // container never holds it, and the variables live only in this shell.
        let pem = std::fs::read(&ca.0).map_err(DockerError::io(format!("reading CA bundle {}", ca.0.display())))?;
        files.push((CA_BUNDLE_PATH.to_owned(), pem));
        script.push_str("trap 'rm -rf /run/swe-forge' EXIT\n");
        for var in CaBundle::env() {
            script.push_str(&format!("export {var}\n"));
        }
    }
    script.push_str(&spec.script);
    Ok((script, files))
}

/// The regular files of a tar archive of one folder, paths relative to that folder (its own
/// name, or `.`, is the first component of every path), sorted. A damaged archive gives what
/// could be read.
pub(crate) fn files_of_tar(tar_bytes: &[u8]) -> Files {
    let mut out = Vec::new();
    let mut archive = tar::Archive::new(tar_bytes);
    let Ok(entries) = archive.entries() else { return out };
    for entry in entries.flatten() {
        let mut entry = entry;
        if entry.header().entry_type() != tar::EntryType::Regular {
            continue;
        }
        let path = entry.path().map(|p| p.to_string_lossy().into_owned()).unwrap_or_default();
        // The archive's top folder is the collected folder itself.
        let rel = path.split_once('/').map(|(_, r)| r.to_owned()).unwrap_or(path);
        let mut content = Vec::new();
        if std::io::Read::read_to_end(&mut entry, &mut content).is_ok() {
            out.push((rel, content));
        }
    }
    out.sort();
    out
}

/// The log as [`LogSink`] keeps it, from the bytes another process kept of it: the whole log
/// when `total` fits `cap`, otherwise its first `cap / 2` bytes followed by its last bytes.
pub(crate) fn kept_log(kept: &[u8], total: u64, cap: usize) -> (Vec<u8>, bool) {
    let cap = cap.max(2);
    if total <= cap as u64 || kept.len() as u64 >= total {
        return (kept.to_vec(), false);
    }
    let head = (cap / 2).min(kept.len());
    let mut log = kept[..head].to_vec();
    log.extend_from_slice(
        format!("\n[swe-forge: {} bytes of log dropped here]\n", total - kept.len() as u64).as_bytes(),
    );
    log.extend_from_slice(&kept[head..]);
    (log, true)
}

/// Keeps the first and the last halves of a log beyond `cap` bytes, and hashes all of it.
pub(crate) struct LogSink {
    cap: usize,
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total: u64,
    hasher: Sha256,
}

impl LogSink {
    pub(crate) fn new(cap: usize) -> LogSink {
        LogSink { cap: cap.max(2), head: Vec::new(), tail: VecDeque::new(), total: 0, hasher: Sha256::new() }
    }

    pub(crate) fn push(&mut self, bytes: &[u8]) {
        self.hasher.update(bytes);
        self.total += bytes.len() as u64;
        let head_cap = self.cap / 2;
        let take = head_cap.saturating_sub(self.head.len()).min(bytes.len());
        self.head.extend_from_slice(&bytes[..take]);
        let rest = &bytes[take..];
        let tail_cap = self.cap - head_cap;
        self.tail.extend(rest);
        let excess = self.tail.len().saturating_sub(tail_cap);
        self.tail.drain(..excess);
    }

    pub(crate) fn finish(self) -> (Vec<u8>, bool, u64, String) {
        let truncated = self.total > (self.head.len() + self.tail.len()) as u64;
        let mut log = self.head;
        if truncated {
            log.extend_from_slice(
                format!(
                    "\n[swe-forge: {} bytes of log dropped here]\n",
                    self.total - (log.len() + self.tail.len()) as u64
                )
                .as_bytes(),
            );
        }
        log.extend(self.tail);
        (log, truncated, self.total, crate::base::hex(&self.hasher.finalize()))
    }
}

#[cfg(test)]
mod tests {
    use super::LogSink;

    #[test]
    fn log_sink_keeps_head_and_tail() {
        let mut s = LogSink::new(10);
        for chunk in [b"0123".as_slice(), b"456789", b"abcdefghij"] {
            s.push(chunk);
        }
        let (log, truncated, total, sha) = s.finish();
        assert!(truncated);
        assert_eq!(total, 20);
        let text = String::from_utf8(log).unwrap();
        assert!(text.starts_with("01234\n[swe-forge: 10 bytes of log dropped here]\n"), "{text}");
        assert!(text.ends_with("fghij"));
        assert_eq!(sha.len(), 64);
        let mut small = LogSink::new(100);
        small.push(b"hello");
        assert_eq!(small.finish().0, b"hello");
    }
}
