//! The run label: every container this process creates carries [`LABEL_RUN`] with this
//! process's run id, so that an interrupted run can remove its own containers and a later process
//! can find those of runs that were killed outright. An image committed from one names the run in
//! [`LABEL_BUILT_BY`] instead, and carries the container labels blank: a container that anyone
//! else makes from it (SWE-bench's harness, a user's `docker run`) inherits the image's labels,
//! and must never pass for a container of a run that is gone.
//!
//! A run id is `<pid>-<start>-<boot>`: the process id, its start time in clock ticks since boot
//! (`/proc/<pid>/stat`) and the first 8 characters of the kernel's boot id. Whether the process
//! of an id is gone is decided from `/proc` on the machine that made it ([`LABEL_RUN_HOST`]);
//! where that cannot be told (another host, no `/proc`), the run counts as alive and its
//! containers are left alone.

use std::collections::HashMap;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use bollard::query_parameters::{ListContainersOptions, RemoveContainerOptions};

use crate::{DockerError, Engine};

/// Label naming the run (process) that created a container (blank on images, see the module).
pub const LABEL_RUN: &str = "dev.swe-forge.run";

/// The roles ([`crate::LABEL_ROLE`]) of the containers swe-forge makes: test and setup runs,
/// and the containers files are read from. Images have others.
const CONTAINER_ROLES: [&str; 2] = ["run", "inspect"];

/// Label naming the run (process) that committed an image; never on containers.
pub const LABEL_BUILT_BY: &str = "dev.swe-forge.built-by";

/// Label naming the host whose process created a container (containers only, never images).
pub const LABEL_RUN_HOST: &str = "dev.swe-forge.run-host";

/// Label naming the job a container belongs to (a digest of the work's state store path, set
/// by the caller with [`set_job`]): a run started again on the same job removes what a killed
/// run of that job left ([`Engine::remove_orphan_containers_of_job`]).
pub const LABEL_JOB: &str = "dev.swe-forge.job";

static JOB: OnceLock<String> = OnceLock::new();

/// Names this process's job, once, before its first container; later calls are ignored.
pub fn set_job(job: &str) {
    let _ = JOB.set(job.to_owned());
}

/// This process's run id, made once.
pub fn run_id() -> &'static str {
    static ID: OnceLock<String> = OnceLock::new();
    ID.get_or_init(|| {
        let pid = std::process::id();
        let start = start_ticks(pid).unwrap_or_else(|| {
            // No /proc: unique enough, never judged gone (see `process_gone`).
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0) as u64
        });
        format!("{pid}-{start}-{}", boot_id().unwrap_or_else(|| "noboot".to_owned()))
    })
}

/// This machine's host name, as put on containers.
pub fn host_name() -> &'static str {
    static HOST: OnceLock<String> = OnceLock::new();
    HOST.get_or_init(|| {
        std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| h.trim().to_owned())
            .ok()
            .filter(|h| !h.is_empty())
            .unwrap_or_else(|| "unknown".to_owned())
    })
}

/// Whether this process has created a container (so an interrupted run knows whether to look).
pub fn run_created_containers() -> bool {
    CREATED.load(Ordering::Relaxed)
}

static CREATED: AtomicBool = AtomicBool::new(false);

/// The labels every container of this run carries (besides its role); called for each one
/// created.
pub(crate) fn container_labels() -> Vec<(String, String)> {
    CREATED.store(true, Ordering::Relaxed);
    let mut labels =
        vec![(LABEL_RUN.to_owned(), run_id().to_owned()), (LABEL_RUN_HOST.to_owned(), host_name().to_owned())];
    if let Some(job) = JOB.get() {
        labels.push((LABEL_JOB.to_owned(), job.clone()));
    }
    labels
}

/// Start time of process `pid` in clock ticks since boot (field 22 of `/proc/<pid>/stat`).
fn start_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces: count after the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

fn boot_id() -> Option<String> {
    let id = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    let short: String = id.trim().chars().filter(|c| *c != '-').take(8).collect();
    (short.len() == 8).then_some(short)
}

/// Whether the process of run `id`, made on `host`, is certainly gone: same host, and either
/// the machine booted since or no process of that pid started at that time exists.
pub fn process_gone(id: &str, host: &str) -> bool {
    if host != host_name() {
        return false;
    }
    let mut parts = id.splitn(3, '-');
    let (Some(pid), Some(start), Some(boot)) = (parts.next(), parts.next(), parts.next()) else { return false };
    let (Ok(pid), Ok(start)) = (pid.parse::<u32>(), start.parse::<u64>()) else { return false };
    let Some(now_boot) = boot_id() else { return false };
    if boot != now_boot {
        return true;
    }
    start_ticks(pid) != Some(start)
}

/// A container removed (or, dry, found) by a cleanup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeftoverContainer {
    /// Container id (short).
    pub id: String,
    /// The image it ran.
    pub image: String,
    /// `running`, `exited`, `created`, ...
    pub state: String,
    /// The run it belongs to.
    pub run: String,
}

impl Engine {
    /// Stops and removes every container of this process's run, running or not. Repeats until
    /// the engine lists none (a create that was under way when the caller's work was dropped
    /// shows up a moment later). Returns what was removed.
    pub async fn remove_run_containers(&self) -> Result<Vec<LeftoverContainer>, DockerError> {
        let mut removed: Vec<LeftoverContainer> = Vec::new();
        let mut quiet_rounds = 0;
        for _ in 0..20 {
            let found = self.containers_labelled(&format!("{LABEL_RUN}={}", run_id())).await?;
            if found.is_empty() {
                quiet_rounds += 1;
                if quiet_rounds == 2 {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(300)).await;
                continue;
            }
            quiet_rounds = 0;
            for c in found {
                self.force_remove(&c.id).await?;
                if !removed.iter().any(|r| r.id == c.id) {
                    removed.push(c.leftover);
                }
            }
            // A removal the engine had under way already (409) needs a moment to finish.
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Ok(removed)
    }

    /// Removes (or, `dry_run`, only lists) the containers of swe-forge runs whose process is
    /// gone (killed with SIGKILL, or the machine rebooted). Containers of live runs and of
    /// other hosts are left alone.
    pub async fn remove_orphan_containers(&self, dry_run: bool) -> Result<Vec<LeftoverContainer>, DockerError> {
        let mut out = Vec::new();
        for c in self.containers_labelled(LABEL_RUN).await? {
            if !process_gone(&c.run, &c.host) {
                continue;
            }
            if !dry_run {
                self.force_remove(&c.id).await?;
            }
            out.push(c.leftover);
        }
        Ok(out)
    }

    /// [`Engine::remove_orphan_containers`] restricted to containers of `job` (see [`set_job`]):
    /// what killed runs of the same work left, whatever other work does meanwhile.
    pub async fn remove_orphan_containers_of_job(&self, job: &str) -> Result<Vec<LeftoverContainer>, DockerError> {
        let mut out = Vec::new();
        for c in self.containers_labelled(&format!("{LABEL_JOB}={job}")).await? {
            if !process_gone(&c.run, &c.host) {
                continue;
            }
            self.force_remove(&c.id).await?;
            out.push(c.leftover);
        }
        Ok(out)
    }

    async fn containers_labelled(&self, filter: &str) -> Result<Vec<Labelled>, DockerError> {
        let filters = HashMap::from([("label".to_owned(), vec![filter.to_owned()])]);
        let opts = ListContainersOptions { all: true, filters: Some(filters), ..Default::default() };
        let list =
            self.docker.list_containers(Some(opts)).await.map_err(DockerError::api("list containers", filter))?;
        Ok(list
            .into_iter()
            .filter_map(|c| {
                let labels = c.labels.unwrap_or_default();
                // Only the roles our containers have: a container made by someone else from an
                // image committed before images blanked the run labels inherits them, with
                // the image's role (`instance`, `environment`).
                if !CONTAINER_ROLES.contains(&labels.get(crate::LABEL_ROLE).map(String::as_str).unwrap_or_default()) {
                    return None;
                }
                let id: String = c.id?.chars().take(12).collect();
                let run = labels.get(LABEL_RUN).cloned().unwrap_or_default();
                let leftover = LeftoverContainer {
                    id: id.clone(),
                    image: c.image.unwrap_or_default(),
                    state: c.state.map(|s| s.to_string()).unwrap_or_default(),
                    run: run.clone(),
                };
                Some(Labelled { id, run, host: labels.get(LABEL_RUN_HOST).cloned().unwrap_or_default(), leftover })
            })
            .collect())
    }

    /// Kills and removes a container; one already gone (or being removed) is not an error.
    async fn force_remove(&self, id: &str) -> Result<(), DockerError> {
        let opts = RemoveContainerOptions { force: true, v: true, ..Default::default() };
        match self.docker.remove_container(id, Some(opts)).await {
            Ok(()) | Err(bollard::errors::Error::DockerResponseServerError { status_code: 404 | 409, .. }) => Ok(()),
            Err(e) => Err(DockerError::api("remove container", id)(e)),
        }
    }
}

struct Labelled {
    id: String,
    run: String,
    host: String,
    leftover: LeftoverContainer,
}

#[cfg(test)]
mod tests {
    use super::{host_name, process_gone, run_id};

    #[test]
    fn this_run_is_alive_and_made_up_runs_are_gone() {
        let id = run_id();
        assert_eq!(id.split('-').count(), 3, "{id}");
        assert!(!process_gone(id, host_name()), "{id}");
        let parts: Vec<&str> = id.split('-').collect();
        let (pid, start, boot) = (parts[0], parts[1], parts[2]);
        assert!(process_gone(&format!("{pid}-1-{boot}"), host_name()), "another start time");
        assert!(process_gone(&format!("{pid}-{start}-00000000"), host_name()), "another boot");
        assert!(!process_gone(&format!("{pid}-1-{boot}"), "another-host"), "other hosts are never judged");
        assert!(!process_gone("garbage", host_name()));
    }
}
