//! Test runs as Docker Swarm jobs: one `replicated-job` service per run (one task, no restart),
//! placed by the swarm on any node, under the limits a local run has (CPUs, memory, processes,
//! the timeout) and without the network (an internal overlay network).
//!
//! The image is pushed once to the registry every node pulls from and named by digest. The
//! script and the files of the run travel as swarm configs. The task runs a small wrapper
//! ([`wrapper`]) that writes the script's merged output to a file, enforces the timeout with
//! `timeout -s KILL`, reads the container's OOM-kill counter, and then prints one framed block
//! on its stdout: a header (exit code, timeout, OOM kills, duration, size and sha256 of the whole
//! log), the log (head and tail beyond the cap) and a tar of the results folder, both in base64.
//! The coordinator reads it back with `docker service logs`: base64 lines survive the log
//! driver whatever bytes the tests print, and nothing the script prints can be taken for the
//! frame (its output is inside the frame, counted by the header). A frame that is missing,
//! incomplete, or whose log does not match its digest, a task the swarm shut down, rejected or
//! lost with its node (down or drained), is an engine error ([`DockerError::Swarm`]): the caller
//! retries it, never reads it as a test result.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bollard::models::{
    ConfigSpec, NetworkAttachmentConfig, NetworkCreateRequest, ServiceSpec, ServiceSpecMode,
    ServiceSpecModeReplicatedJob, TaskSpec, TaskSpecContainerSpec, TaskSpecContainerSpecConfigs,
    TaskSpecContainerSpecDnsConfig, TaskSpecContainerSpecFile1, TaskSpecResources, TaskSpecRestartPolicy,
    TaskSpecRestartPolicyConditionEnum, TaskState,
};
use bollard::query_parameters::{ListNetworksOptions, ListTasksOptions, LogsOptions};
use futures_util::StreamExt;
use sha2::{Digest, Sha256};
use tokio::sync::OnceCell;

use crate::container::{ISOLATED_DNS_OPTIONS, ISOLATED_NETWORK, files_of_tar, full_script, kept_log};
use crate::{DockerError, Engine, LABEL_ROLE, RunOutput, RunSpec};

/// Largest piece of a file one swarm config carries (the engine refuses configs over 500 KiB).
const CONFIG_PART: usize = 400 << 10;

/// Where the wrapper, the script and pieces of large files are mounted in a task.
const INPUT_DIR: &str = "/run/swe-forge-in";

/// Bytes of the results folder's tar sent back, as a local run copies at most.
const RESULTS_CAP: u64 = 256 << 20;

/// How long a task may wait for a node and its image before the run counts as lost.
const START_TIMEOUT: Duration = Duration::from_secs(3600);

/// Past the run's own timeout, how long the coordinator waits for the task to end.
const END_GRACE: Duration = Duration::from_secs(120);

/// Where runs go on a swarm, and how images get there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SwarmSpec {
    /// A manager's API: `unix:///path`, or `tcp://HOST:PORT`.
    pub manager: String,
    /// The registry every node pulls from, `HOST:PORT` (images are pushed there from the
    /// coordinator's engine).
    pub registry: String,
}

/// A swarm to run tests on: the manager's API, the coordinator's engine (which holds the
/// images and pushes them) and the registry between them.
pub struct Swarm {
    manager: Engine,
    local: Engine,
    registry: String,
    pushed: Mutex<HashMap<String, Arc<OnceCell<String>>>>,
    network: OnceCell<String>,
    serial: AtomicU64,
    cleanups: Mutex<Vec<tokio::task::JoinHandle<()>>>,
}

/// How one task ended, as the coordinator saw it.
enum Ended {
    /// The task's container exited by itself (COMPLETE or FAILED).
    Exited,
    /// The run is lost: why.
    Lost(String),
}

impl Swarm {
    /// Connects to the manager and checks it is one (the swarm is active and this node manages it).
    pub async fn connect(spec: &SwarmSpec, local: Engine) -> Result<Swarm, DockerError> {
        let manager = Engine::connect_to(&spec.manager).await?;
        let info = manager.docker.info().await.map_err(DockerError::api("info", &spec.manager))?;
        let is_manager = info.swarm.as_ref().and_then(|s| s.control_available).unwrap_or(false);
        if !is_manager {
            return Err(DockerError::Swarm {
                op: "connect",
                message: format!(
                    "the engine at {} is not a swarm manager (docker swarm init, or point the backend at a manager)",
                    spec.manager
                ),
            });
        }
        {
            let mut managers = MANAGERS.lock().unwrap_or_else(|e| e.into_inner());
            if !managers.contains(&spec.manager) {
                managers.push(spec.manager.clone());
            }
        }
        let swarm = Swarm {
            manager,
            local,
            registry: spec.registry.trim_end_matches('/').to_owned(),
            pushed: Mutex::new(HashMap::new()),
            network: OnceCell::new(),
            serial: AtomicU64::new(0),
            cleanups: Mutex::new(Vec::new()),
        };
        let gone = swarm.remove_orphan_services().await;
        if gone > 0 {
            tracing::info!(services = gone, "removed swarm jobs left by killed runs");
        }
        Ok(swarm)
    }

    /// The manager's engine.
    pub fn manager(&self) -> &Engine {
        &self.manager
    }

    /// Runs `spec` as a swarm job and removes the job (its service and configs) afterwards.
    pub async fn run(&self, spec: &RunSpec) -> Result<RunOutput, DockerError> {
        let image = self.image_in_registry(&spec.image).await?;
        let network = if spec.network { None } else { Some(self.isolated_network().await?) };
        let n = self.serial.fetch_add(1, Ordering::Relaxed);
        let name = format!("swe-forge-{}-{n}", crate::run_id().split('-').take(2).collect::<Vec<_>>().join("-"));
        let nonce = format!("{:x}", Sha256::digest(format!("{name}-{:?}", Instant::now()).as_bytes()));
        let nonce = &nonce[..32];
        let (script, files) = full_script(spec)?;
        let mut mounts = vec![(format!("{INPUT_DIR}/script"), script.into_bytes())];
        let mut assemble = String::new();
        for (i, (path, content)) in files.into_iter().enumerate() {
            if content.len() <= CONFIG_PART {
                mounts.push((path, content));
                continue;
            }
            // Too large for one config: in pieces, put together by the wrapper.
            let mut parts = Vec::new();
            for (k, chunk) in content.chunks(CONFIG_PART).enumerate() {
                let part = format!("{INPUT_DIR}/file{i}.{k}");
                parts.push(part.clone());
                mounts.push((part, chunk.to_vec()));
            }
            let dir = path.rsplit_once('/').map(|(d, _)| d).filter(|d| !d.is_empty()).unwrap_or("/");
            assemble.push_str(&format!("mkdir -p {} && cat {} > {}\n", quote(dir), parts.join(" "), quote(&path)));
        }
        mounts.push((format!("{INPUT_DIR}/wrapper"), wrapper(spec, nonce, &assemble).into_bytes()));
        let mut configs = Vec::new();
        let result = async {
            let mut refs = Vec::new();
            for (k, (path, content)) in mounts.iter().enumerate() {
                let config_name = format!("{name}-{k}");
                let created = self
                    .manager
                    .docker
                    .create_config(ConfigSpec {
                        name: Some(config_name.clone()),
                        labels: Some(labels()),
                        data: Some(base64_encode(content)),
                        ..Default::default()
                    })
                    .await
                    .map_err(DockerError::api("create config", &config_name))?;
                configs.push(created.id.clone());
                refs.push(TaskSpecContainerSpecConfigs {
                    file: Some(TaskSpecContainerSpecFile1 {
                        name: Some(path.clone()),
                        uid: Some("0".to_owned()),
                        gid: Some("0".to_owned()),
                        mode: Some(0o444),
                    }),
                    config_id: Some(created.id),
                    config_name: Some(config_name),
                    ..Default::default()
                });
            }
            self.run_service(spec, &name, &image, network, refs, nonce).await
        }
        .await;
        let _ = self.manager.docker.delete_service(&name).await;
        // A config is in use until the service's task is gone: removed in the background, a few
        // tries, so the run's result does not wait for it ([`Swarm::settle`] waits; a process
        // killed before leaves them to the next one's orphan cleanup).
        let docker = self.manager.docker.clone();
        let cleanup = tokio::spawn(async move {
            for id in configs {
                for _ in 0..40 {
                    if docker.delete_config(&id).await.is_ok() {
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(250)).await;
                }
            }
        });
        self.cleanups.lock().unwrap_or_else(|e| e.into_inner()).push(cleanup);
        result
    }

    /// Waits for the background removal of finished runs' configs.
    pub async fn settle(&self) {
        loop {
            let pending: Vec<_> = std::mem::take(&mut *self.cleanups.lock().unwrap_or_else(|e| e.into_inner()));
            if pending.is_empty() {
                return;
            }
            for p in pending {
                let _ = p.await;
            }
        }
    }

    async fn run_service(
        &self,
        spec: &RunSpec,
        name: &str,
        image: &str,
        network: Option<String>,
        configs: Vec<TaskSpecContainerSpecConfigs>,
        nonce: &str,
    ) -> Result<RunOutput, DockerError> {
        let dns_config = network.is_some().then(|| TaskSpecContainerSpecDnsConfig {
            options: Some(ISOLATED_DNS_OPTIONS.iter().map(|o| (*o).to_owned()).collect()),
            ..Default::default()
        });
        let service = ServiceSpec {
            name: Some(name.to_owned()),
            labels: Some(labels()),
            mode: Some(ServiceSpecMode {
                replicated_job: Some(ServiceSpecModeReplicatedJob {
                    max_concurrent: Some(1),
                    total_completions: Some(1),
                }),
                ..Default::default()
            }),
            task_template: Some(TaskSpec {
                container_spec: Some(TaskSpecContainerSpec {
                    image: Some(image.to_owned()),
                    labels: Some(labels()),
                    command: Some(vec!["/bin/bash".to_owned(), format!("{INPUT_DIR}/wrapper")]),
                    env: Some(spec.env.clone()),
                    user: spec.user.clone(),
                    dns_config,
                    configs: Some(configs),
                    init: Some(true),
                    ..Default::default()
                }),
                resources: Some(TaskSpecResources {
                    limits: Some(bollard::models::Limit {
                        nano_cpus: spec.cpus.map(|c| (c * 1e9) as i64),
                        memory_bytes: spec.memory_bytes,
                        pids: spec.pids_limit,
                    }),
                    ..Default::default()
                }),
                restart_policy: Some(TaskSpecRestartPolicy {
                    condition: Some(TaskSpecRestartPolicyConditionEnum::NONE),
                    max_attempts: Some(0),
                    ..Default::default()
                }),
                networks: network.map(|n| vec![NetworkAttachmentConfig { target: Some(n), ..Default::default() }]),
                ..Default::default()
            }),
            ..Default::default()
        };
        self.manager.docker.create_service(service, None).await.map_err(DockerError::api("create service", name))?;
        let (ended, node) = self.wait(name, spec.timeout).await?;
        if let Ended::Lost(why) = ended {
            return Err(DockerError::Swarm { op: "run", message: format!("{name}: {why}") });
        }
        // The task's output, read from its node through the manager; read again when the end
        // of the frame has not arrived yet.
        let mut last = String::new();
        for attempt in 0..5 {
            if attempt > 0 {
                tokio::time::sleep(Duration::from_millis(500 << attempt)).await;
            }
            let text = self.service_logs(name, spec.max_log_bytes).await?;
            match read_frame(&text, nonce, spec.max_log_bytes) {
                Ok(mut out) => {
                    out.node = node;
                    return Ok(out);
                }
                Err(why) => last = why.to_string(),
            }
        }
        Err(DockerError::Swarm { op: "read output", message: format!("{name}: {last}") })
    }

    /// Polls the service's task until it ends or is lost: its node down or drained, the swarm
    /// shutting it down, or no end in time.
    async fn wait(&self, name: &str, timeout: Duration) -> Result<(Ended, Option<String>), DockerError> {
        let created = Instant::now();
        let mut running_since: Option<Instant> = None;
        let mut node_checked = Instant::now();
        let mut node: Option<String> = None;
        loop {
            // Often at first (short runs end soon), then less so (many runs poll one manager).
            let pause = match created.elapsed().as_secs() {
                0..5 => 100,
                5..60 => 250,
                _ => 1000,
            };
            tokio::time::sleep(Duration::from_millis(pause)).await;
            let filters = HashMap::from([("service".to_owned(), vec![name.to_owned()])]);
            let tasks = self
                .manager
                .docker
                .list_tasks(Some(ListTasksOptions { filters: Some(filters) }))
                .await
                .map_err(DockerError::api("list tasks", name))?;
            let Some(task) = tasks.into_iter().max_by_key(|t| t.created_at.clone().map(|d| d.to_string())) else {
                if created.elapsed() > START_TIMEOUT {
                    return Ok((Ended::Lost("no task was ever made for the job".to_owned()), node));
                }
                continue;
            };
            node = task.node_id.clone().filter(|n| !n.is_empty()).or(node);
            let status = task.status.unwrap_or_default();
            let state = status.state.unwrap_or(TaskState::NEW);
            let err = status.err.unwrap_or_default();
            match state {
                TaskState::COMPLETE | TaskState::FAILED => return Ok((Ended::Exited, node)),
                TaskState::SHUTDOWN | TaskState::REJECTED | TaskState::ORPHANED | TaskState::REMOVE => {
                    return Ok((Ended::Lost(format!("the swarm ended the task as {state}: {err}")), node));
                }
                TaskState::RUNNING => {
                    let since = *running_since.get_or_insert_with(Instant::now);
                    if since.elapsed() > timeout + END_GRACE {
                        return Ok((
                            Ended::Lost(format!("the task did not end {} s after its timeout", END_GRACE.as_secs())),
                            node,
                        ));
                    }
                }
                _ if created.elapsed() > START_TIMEOUT => {
                    return Ok((
                        Ended::Lost(format!("the task did not start in {} s ({state})", START_TIMEOUT.as_secs())),
                        node,
                    ));
                }
                _ => {}
            }
            // A node that went down or is drained takes its task with it: lost, to be run again.
            if let Some(id) = &node
                && node_checked.elapsed() > Duration::from_secs(1)
            {
                node_checked = Instant::now();
                if let Some(why) = self.node_unfit(id).await {
                    return Ok((Ended::Lost(why), node));
                }
            }
        }
    }

    /// Why the node `id` can no longer finish a task (down, disconnected, drained), if it cannot.
    async fn node_unfit(&self, id: &str) -> Option<String> {
        let n = match self.manager.docker.inspect_node(id).await {
            Ok(n) => n,
            Err(e) => return Some(format!("node {id} is gone: {e}")),
        };
        let state = n.status.and_then(|s| s.state).map(|s| s.to_string()).unwrap_or_default();
        let availability = n.spec.and_then(|s| s.availability).map(|a| a.to_string()).unwrap_or_default();
        if state == "down" || state == "disconnected" {
            return Some(format!("node {id} running the task is {state}"));
        }
        if availability == "drain" {
            return Some(format!("node {id} running the task is drained"));
        }
        None
    }

    /// The service's output, as text (the wrapper prints ASCII only), at most what a frame of a
    /// run with this log cap can take.
    async fn service_logs(&self, name: &str, max_log_bytes: usize) -> Result<String, DockerError> {
        let opts = LogsOptions { stdout: true, stderr: true, follow: false, ..Default::default() };
        let mut stream = self.manager.docker.service_logs(name, Some(opts));
        let cap = (max_log_bytes as u64 + RESULTS_CAP) / 3 * 4 + (8 << 20);
        let mut bytes = Vec::new();
        while let Some(item) = stream.next().await {
            let chunk = item.map_err(DockerError::api("service logs", name))?.into_bytes();
            bytes.extend_from_slice(&chunk);
            if bytes.len() as u64 > cap {
                return Err(DockerError::Swarm {
                    op: "read output",
                    message: format!("{name}: more than {cap} bytes of output"),
                });
            }
        }
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// `image` pushed to the registry once per process, named by digest.
    async fn image_in_registry(&self, image: &str) -> Result<String, DockerError> {
        let id =
            self.local.image_id(image).await?.ok_or_else(|| DockerError::ImageMissing { image: image.to_owned() })?;
        let cell = self.pushed.lock().unwrap_or_else(|e| e.into_inner()).entry(id.clone()).or_default().clone();
        cell.get_or_try_init(|| async {
            let name = registry_name(image, &id);
            let reference = format!("{}/{}", self.registry, name);
            self.local.tag(&id, &reference).await?;
            let pushed = self.local.push(&reference).await;
            let _ = self.local.untag(&reference).await;
            let report = pushed?;
            let (repo, _) = crate::split_reference(&reference);
            Ok::<_, DockerError>(format!("{repo}@{}", report.digest))
        })
        .await
        .cloned()
    }

    /// The swarm's internal overlay network (made once): no way out, as local runs have.
    async fn isolated_network(&self) -> Result<String, DockerError> {
        self.network
            .get_or_try_init(|| async {
                let filters = HashMap::from([("name".to_owned(), vec![ISOLATED_NETWORK.to_owned()])]);
                let found = self
                    .manager
                    .docker
                    .list_networks(Some(ListNetworksOptions { filters: Some(filters) }))
                    .await
                    .map_err(DockerError::api("list networks", ISOLATED_NETWORK))?;
                if let Some(id) = found
                    .into_iter()
                    .filter(|n| {
                        n.name.as_deref() == Some(ISOLATED_NETWORK)
                            && n.internal == Some(true)
                            && n.driver.as_deref() == Some("overlay")
                    })
                    .find_map(|n| n.id)
                {
                    return Ok(id);
                }
                let req = NetworkCreateRequest {
                    name: ISOLATED_NETWORK.to_owned(),
                    driver: Some("overlay".to_owned()),
                    internal: Some(true),
                    labels: Some(HashMap::from([(LABEL_ROLE.to_owned(), "network".to_owned())])),
                    ..Default::default()
                };
                let created = self
                    .manager
                    .docker
                    .create_network(req)
                    .await
                    .map_err(DockerError::api("create network", ISOLATED_NETWORK))?;
                Ok(created.id)
            })
            .await
            .cloned()
    }

    /// Removes the services and configs this process made (an interrupted run).
    pub async fn remove_run_services(&self) -> usize {
        self.remove_services_where(&format!("{}={}", crate::LABEL_RUN, crate::run_id()), |_| true).await
    }

    /// Removes the jobs of runs whose process is gone (killed outright: no chance to clean up),
    /// made from this host; returns how many services went.
    pub async fn remove_orphan_services(&self) -> usize {
        self.remove_services_where(crate::LABEL_RUN, |labels| {
            let run = labels.get(crate::LABEL_RUN).map(String::as_str).unwrap_or_default();
            let host = labels.get(crate::LABEL_RUN_HOST).map(String::as_str).unwrap_or_default();
            run != crate::run_id() && crate::process_gone(run, host)
        })
        .await
    }

    async fn remove_services_where(&self, label: &str, keep: impl Fn(&HashMap<String, String>) -> bool) -> usize {
        let filters = HashMap::from([("label".to_owned(), vec![label.to_owned()])]);
        let mut removed = 0;
        if let Ok(services) = self
            .manager
            .docker
            .list_services(Some(bollard::query_parameters::ListServicesOptions {
                filters: Some(filters.clone()),
                ..Default::default()
            }))
            .await
        {
            let chosen = services
                .into_iter()
                .filter(|s| keep(&s.spec.as_ref().and_then(|spec| spec.labels.clone()).unwrap_or_default()));
            for s in chosen.filter_map(|s| s.id) {
                if self.manager.docker.delete_service(&s).await.is_ok() {
                    removed += 1;
                }
            }
        }
        if let Ok(configs) = self
            .manager
            .docker
            .list_configs(Some(bollard::query_parameters::ListConfigsOptions { filters: Some(filters) }))
            .await
        {
            let chosen = configs
                .into_iter()
                .filter(|c| keep(&c.spec.as_ref().and_then(|spec| spec.labels.clone()).unwrap_or_default()));
            for c in chosen.filter_map(|c| c.id) {
                let _ = self.manager.docker.delete_config(&c).await;
            }
        }
        removed
    }
}

/// The swarm managers this process has sent runs to.
static MANAGERS: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Removes the jobs (services and configs) this process made on every swarm it used, as the
/// binary does on SIGINT/SIGTERM; returns how many services went.
pub async fn remove_run_services(local: &Engine) -> usize {
    let managers = MANAGERS.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let mut removed = 0;
    for m in managers {
        let spec = SwarmSpec { manager: m, registry: String::new() };
        if let Ok(swarm) = Swarm::connect(&spec, local.clone()).await {
            removed += swarm.remove_run_services().await;
        }
    }
    removed
}

/// The name `image` (a tag, or an id `id`) gets in the swarm's registry: its own, without the
/// registry it may already name (`HOST:PORT/path:tag` from a pull); an id becomes
/// `swe-forge/run:<id>`.
fn registry_name(image: &str, id: &str) -> String {
    if image.starts_with("sha256:") || image.contains('@') || !image.contains(':') && !image.contains('/') {
        return format!("swe-forge/run:{}", id.trim_start_matches("sha256:"));
    }
    match image.split_once('/') {
        Some((first, rest)) if first.contains('.') || first.contains(':') || first == "localhost" => rest.to_owned(),
        _ => image.to_owned(),
    }
}

/// Labels of every service, task container and config of this run.
fn labels() -> HashMap<String, String> {
    [(LABEL_ROLE.to_owned(), "run".to_owned())].into_iter().chain(crate::run_label::container_labels()).collect()
}

fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// The task's command: put large files together, run the script under the timeout with its
/// output in a file, then print the frame (see the module's documentation).
fn wrapper(spec: &RunSpec, nonce: &str, assemble: &str) -> String {
    let timeout = spec.timeout.as_secs().max(1);
    let cap = spec.max_log_bytes.max(2);
    let head = cap / 2;
    let tail = cap - head;
    let collect = spec.collect.as_deref().map(quote).unwrap_or_default();
    format!(
        r#"w=$(mktemp -d /tmp/swe-forge-run.XXXXXX) || exit 0
{assemble}start=$(date +%s%N)
timeout -s KILL {timeout} /bin/bash {INPUT_DIR}/script > "$w/log" 2>&1 < /dev/null
code=$?
end=$(date +%s%N)
kill -KILL -1 2>/dev/null
ms=$(( (end - start) / 1000000 ))
timed=0
if [ "$code" = 137 ] && [ "$ms" -ge $(( {timeout} * 1000 )) ]; then timed=1; fi
oom=0
for f in /sys/fs/cgroup/memory/memory.oom_control /sys/fs/cgroup/memory.events; do
  if [ -r "$f" ]; then oom=$(sed -n 's/^oom_kill //p' "$f"); break; fi
done
size=$(stat -c %s "$w/log")
sha=$(sha256sum < "$w/log" | cut -d' ' -f1)
echo "swe-forge-frame-begin {nonce}"
echo "exit=$code timed_out=$timed oom_kill=${{oom:-0}} duration_ms=$ms log_bytes=$size log_sha256=$sha"
echo "log:"
if [ "$size" -le {cap} ]; then base64 "$w/log"; else {{ head -c {head} "$w/log"; tail -c {tail} "$w/log"; }} | base64; fi
echo "results:"
if [ -n {collect:?} ] && [ -d {collect} ]; then tar -C {collect} -cf - . 2>/dev/null | head -c {RESULTS_CAP} | base64; fi
echo "swe-forge-frame-end {nonce}"
rm -rf "$w"
exit 0
"#
    )
}

/// What is wrong with a run's output frame.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
enum FrameError {
    #[error("no output frame")]
    Missing,
    #[error("the output frame is incomplete")]
    Incomplete,
    #[error("no frame header")]
    NoHeader,
    #[error("no {0} in the frame header")]
    NoField(&'static str),
    #[error("no {0} section")]
    NoSection(&'static str),
    #[error("the {0} section is not base64")]
    NotBase64(&'static str),
    #[error("the log has {kept} bytes, the frame says {said}")]
    LogSize { kept: u64, said: u64 },
    #[error("the log does not match its sha256")]
    LogDigest,
}

/// The run's output from the task's stdout; `Err` says what is wrong with the frame.
fn read_frame(text: &str, nonce: &str, cap: usize) -> Result<RunOutput, FrameError> {
    let begin = format!("swe-forge-frame-begin {nonce}");
    let end = format!("swe-forge-frame-end {nonce}");
    let start = text.find(&begin).ok_or(FrameError::Missing)?;
    let body = &text[start + begin.len()..];
    let stop = body.find(&end).ok_or(FrameError::Incomplete)?;
    let body = &body[..stop];
    let (header, rest) = body.trim_start().split_once('\n').ok_or(FrameError::NoHeader)?;
    let fields: HashMap<&str, &str> = header.split_whitespace().filter_map(|f| f.split_once('=')).collect();
    let num = |k: &'static str| fields.get(k).and_then(|v| v.parse::<i64>().ok()).ok_or(FrameError::NoField(k));
    let code = num("exit")?;
    let timed_out = num("timed_out")? == 1;
    let oom_kills = num("oom_kill").unwrap_or(0);
    let duration_ms = num("duration_ms")?;
    let log_bytes = num("log_bytes")? as u64;
    let log_sha256 = fields.get("log_sha256").ok_or(FrameError::NoField("log_sha256"))?.to_string();
    let rest = rest.strip_prefix("log:").ok_or(FrameError::NoSection("log"))?;
    let (log_b64, results_b64) = rest.split_once("results:").ok_or(FrameError::NoSection("results"))?;
    let kept = base64_decode(log_b64).ok_or(FrameError::NotBase64("log"))?;
    if kept.len() as u64 > log_bytes || (log_bytes <= cap as u64 && kept.len() as u64 != log_bytes) {
        return Err(FrameError::LogSize { kept: kept.len() as u64, said: log_bytes });
    }
    if kept.len() as u64 == log_bytes {
        let sha = crate::base::hex(&Sha256::digest(&kept));
        if sha != log_sha256 {
            return Err(FrameError::LogDigest);
        }
    }
    let (log, log_truncated) = kept_log(&kept, log_bytes, cap);
    let tar = base64_decode(results_b64).ok_or(FrameError::NotBase64("results"))?;
    let files = if tar.is_empty() { Vec::new() } else { files_of_tar(&tar) };
    Ok(RunOutput {
        exit_code: if timed_out { None } else { Some(code) },
        timed_out,
        oom_killed: oom_kills > 0,
        log,
        log_truncated,
        log_bytes,
        log_sha256,
        duration: Duration::from_millis(duration_ms.max(0) as u64),
        files,
        node: None,
        stages: crate::container::RunStages::default(),
    })
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 with padding.
pub(crate) fn base64_encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(B64[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Standard base64, whitespace ignored; None on any other byte outside the alphabet.
pub(crate) fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    let mut acc = 0u32;
    let mut bits = 0;
    for c in text.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            b'=' | b'\n' | b'\r' | b' ' | b'\t' => continue,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_keep_their_name_in_the_registry_without_another_registry() {
        assert_eq!(registry_name("swe-forge/o__r:pr-1-ab", "sha256:1"), "swe-forge/o__r:pr-1-ab");
        assert_eq!(registry_name("10.0.0.1:5000/swe-forge/o__r:pr-1", "sha256:1"), "swe-forge/o__r:pr-1");
        assert_eq!(registry_name("registry.example/mswebench/x:pr-2", "sha256:1"), "mswebench/x:pr-2");
        assert_eq!(registry_name("sha256:abc", "sha256:abc"), "swe-forge/run:abc");
        assert_eq!(registry_name("h:5000/x@sha256:ff", "sha256:abc"), "swe-forge/run:abc");
    }

    #[test]
    fn base64_round_trips() {
        for n in 0..70 {
            let bytes: Vec<u8> = (0..n).map(|i| (i * 37 + 11) as u8).collect();
            let text = base64_encode(&bytes);
            assert_eq!(text.len() % 4, 0);
            assert_eq!(base64_decode(&text).unwrap(), bytes);
        }
        assert_eq!(base64_encode(b"hello"), "aGVsbG8=");
        assert_eq!(base64_decode("aGVs\nbG8=\n").unwrap(), b"hello");
        assert!(base64_decode("a*b").is_none());
    }

    #[test]
    fn a_frame_is_read_back_and_a_broken_one_refused() {
        let log = b"line one\n\x00\xffbinary\n";
        let sha = crate::base::hex(&Sha256::digest(log));
        let mut tar = tar::Builder::new(Vec::new());
        let mut h = tar::Header::new_gnu();
        h.set_size(3);
        h.set_mode(0o644);
        tar.append_data(&mut h, "./report.xml", b"<x>".as_slice()).unwrap();
        let tar = tar.into_inner().unwrap();
        let frame = |sha: &str| {
            format!(
                "noise\nswe-forge-frame-begin n1\nexit=3 timed_out=0 oom_kill=1 duration_ms=1500 log_bytes={} log_sha256={sha}\nlog:\n{}\nresults:\n{}\nswe-forge-frame-end n1\n",
                log.len(),
                base64_encode(log),
                base64_encode(&tar)
            )
        };
        let out = read_frame(&frame(&sha), "n1", 1 << 20).unwrap();
        assert_eq!(out.exit_code, Some(3));
        assert!(out.oom_killed && !out.timed_out && !out.log_truncated);
        assert_eq!(out.log, log);
        assert_eq!(out.duration, Duration::from_millis(1500));
        assert_eq!(out.files, vec![("report.xml".to_owned(), b"<x>".to_vec())]);
        assert_eq!(read_frame(&frame(&"0".repeat(64)), "n1", 1 << 20).unwrap_err(), FrameError::LogDigest);
        assert_eq!(read_frame(&frame(&sha), "n2", 1 << 20).unwrap_err(), FrameError::Missing);
        let cut = frame(&sha);
        assert_eq!(read_frame(&cut[..cut.len() - 30], "n1", 1 << 20).unwrap_err(), FrameError::Incomplete);
        // The swarm error names what is wrong in words.
        assert_eq!(FrameError::NoField("exit").to_string(), "no exit in the frame header");
        assert_eq!(FrameError::NotBase64("log").to_string(), "the log section is not base64");
    }

    #[test]
    fn a_long_log_is_kept_as_the_local_engine_keeps_it() {
        let log: Vec<u8> = (0..100u8).collect();
        let mut sink = crate::container::LogSink::new(10);
        sink.push(&log);
        let (local, truncated, total, _) = sink.finish();
        let mut kept = log[..5].to_vec();
        kept.extend_from_slice(&log[95..]);
        let (swarm, cut) = kept_log(&kept, total, 10);
        assert!(truncated && cut);
        assert_eq!(swarm, local);
    }
}
