//! A real Docker Swarm on this machine, made by the test: one manager and workers, each another
//! `dockerd` in a network namespace of its own (so nothing they do, `docker_gwbridge`, overlay
//! networks, the swarm's ports, touches the main engine's network), joined by veth pairs to a
//! bridge in a further namespace. The nodes pull from a registry on the host's loopback: in each
//! node's namespace a forwarder listens on the same `127.0.0.1:PORT` and passes the connection
//! to the host's, so one image reference works everywhere and every engine trusts it over plain
//! HTTP. Everything is undone when the lab is dropped, whatever happened: engines stopped
//! (processes killed when they do not stop), mounts under their folders detached, namespaces
//! (and with them the veths and the bridge) deleted, folders removed. The engines' data roots are a
//! tmpfs when the machine has 8 GiB of memory available, a temporary folder on disk otherwise.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::registry::Registry;

/// One engine of the lab.
pub(crate) struct Node {
    pub name: String,
    pub ns: String,
    pub addr: String,
    pub sock: PathBuf,
    exec_root: PathBuf,
    child: Option<Child>,
    pub killed: bool,
}

impl Node {
    /// `unix://` address of its API.
    pub fn host(&self) -> String {
        format!("unix://{}", self.sock.display())
    }

    /// `docker -H <this node> args...`.
    pub fn docker(&self, args: &[&str]) -> Output {
        Command::new("docker").arg("-H").arg(self.host()).args(args).output().expect("docker runs")
    }
}

pub(crate) struct Lab {
    prefix: String,
    run_dir: PathBuf,
    data: Option<tempfile::TempDir>,
    pub nodes: Vec<Node>,
    namespaces: Vec<String>,
    pub registry: Registry,
    stop: Arc<AtomicBool>,
}

fn run(cmd: &str, args: &[&str]) -> Output {
    Command::new(cmd).args(args).output().unwrap_or_else(|e| panic!("{cmd} runs: {e}"))
}

fn must(cmd: &str, args: &[&str]) -> String {
    let o = run(cmd, args);
    assert!(
        o.status.success(),
        "{cmd} {args:?}: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).trim().to_owned()
}

impl Lab {
    /// A manager (drained: it schedules, runs nothing) and `workers` workers.
    pub fn start(workers: usize) -> Lab {
        sweep_dead_labs();
        // Unique per lab on this machine (two labs of one test process have their own number).
        static LABS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = LABS.fetch_add(1, Ordering::Relaxed) % 10;
        let prefix = format!("swl{n}{}", std::process::id() % 100_000);
        let run_dir = PathBuf::from(format!("/run/{prefix}"));
        std::fs::create_dir_all(&run_dir).unwrap();
        let data = tempfile::tempdir().unwrap();
        // The engines' data roots in memory when the machine has it to spare: no disk taken, and
        // nothing to delete file by file at the end (pulled toolchains are gigabytes).
        if mem_available_gib() >= 8 {
            must("mount", &["-t", "tmpfs", "-o", "size=5g,mode=0700", "swe-forge-lab", data.path().to_str().unwrap()]);
        }
        // What a later test needs to undo this lab if this process is killed outright.
        std::fs::write(run_dir.join("owner"), std::process::id().to_string()).unwrap();
        std::fs::write(run_dir.join("data"), data.path().as_os_str().as_encoded_bytes()).unwrap();
        let mut lab = Lab {
            prefix: prefix.clone(),
            run_dir,
            data: Some(data),
            nodes: Vec::new(),
            namespaces: Vec::new(),
            registry: Registry::start(),
            stop: Arc::new(AtomicBool::new(false)),
        };
        std::fs::write(lab.run_dir.join("registry"), lab.registry.pid().to_string()).unwrap();
        std::fs::write(lab.run_dir.join("registry-dir"), lab.registry.dir().as_os_str().as_encoded_bytes()).unwrap();
        let hub = format!("{prefix}-hub");
        must("ip", &["netns", "add", &hub]);
        lab.namespaces.push(hub.clone());
        must("ip", &["netns", "exec", &hub, "ip", "link", "set", "lo", "up"]);
        must("ip", &["netns", "exec", &hub, "ip", "link", "add", "br0", "type", "bridge"]);
        must("ip", &["netns", "exec", &hub, "ip", "link", "set", "br0", "up"]);
        for i in 0..=workers {
            lab.add_node(i, &hub);
        }
        for n in &lab.nodes {
            let started = Instant::now();
            while !n.docker(&["version"]).status.success() {
                assert!(
                    started.elapsed() < Duration::from_secs(90),
                    "engine {} did not start: {}",
                    n.name,
                    lab.engine_log(n)
                );
                std::thread::sleep(Duration::from_millis(200));
            }
        }
        let m = &lab.nodes[0];
        let listen = format!("{}:2377", m.addr);
        let o = m.docker(&[
            "swarm",
            "init",
            "--advertise-addr",
            &m.addr,
            "--listen-addr",
            &listen,
            "--data-path-addr",
            &m.addr,
        ]);
        assert!(o.status.success(), "swarm init: {}", String::from_utf8_lossy(&o.stderr));
        let token =
            String::from_utf8_lossy(&m.docker(&["swarm", "join-token", "-q", "worker"]).stdout).trim().to_owned();
        for n in &lab.nodes[1..] {
            let listen = format!("{}:2377", n.addr);
            let o = n.docker(&[
                "swarm",
                "join",
                "--token",
                &token,
                "--advertise-addr",
                &n.addr,
                "--listen-addr",
                &listen,
                "--data-path-addr",
                &n.addr,
                &format!("{}:2377", m.addr),
            ]);
            assert!(o.status.success(), "swarm join of {}: {}", n.name, String::from_utf8_lossy(&o.stderr));
        }
        let id =
            String::from_utf8_lossy(&m.docker(&["info", "--format", "{{.Swarm.NodeID}}"]).stdout).trim().to_owned();
        let o = m.docker(&["node", "update", "--availability", "drain", &id]);
        assert!(o.status.success(), "draining the manager: {}", String::from_utf8_lossy(&o.stderr));
        lab
    }

    fn add_node(&mut self, i: usize, hub: &str) {
        let name = if i == 0 { "manager".to_owned() } else { format!("worker{i}") };
        let ns = format!("{}-n{i}", self.prefix);
        let addr = format!("10.99.0.{}", 11 + i);
        must("ip", &["netns", "add", &ns]);
        self.namespaces.push(ns.clone());
        must("ip", &["netns", "exec", &ns, "ip", "link", "set", "lo", "up"]);
        let veth = format!("{}v{i}", self.prefix);
        must("ip", &["link", "add", &veth, "type", "veth", "peer", "name", "eth0", "netns", &ns]);
        must("ip", &["link", "set", &veth, "netns", hub]);
        must("ip", &["netns", "exec", hub, "ip", "link", "set", &veth, "master", "br0", "up"]);
        must("ip", &["netns", "exec", &ns, "ip", "addr", "add", &format!("{addr}/24"), "dev", "eth0"]);
        must("ip", &["netns", "exec", &ns, "ip", "link", "set", "eth0", "up"]);
        self.forward_registry(&ns);
        let data = self.data.as_ref().unwrap().path().join(&name);
        let exec_root = self.run_dir.join(format!("n{i}"));
        let sock = self.run_dir.join(format!("n{i}.sock"));
        std::fs::create_dir_all(&data).unwrap();
        let log = std::fs::File::create(data.join("dockerd.log")).unwrap();
        // `nsenter --net` changes the network namespace only: `ip netns exec` would also give a
        // fresh /sys, without the cgroup mounts dockerd needs.
        let child = Command::new("nsenter")
            .arg(format!("--net=/run/netns/{ns}"))
            .arg("dockerd")
            .arg("--data-root")
            .arg(data.join("root"))
            .arg("--exec-root")
            .arg(&exec_root)
            .arg("-H")
            .arg(format!("unix://{}", sock.display()))
            .arg("--pidfile")
            .arg(self.run_dir.join(format!("n{i}.pid")))
            .args(["--bridge=none", "--iptables=false", "--ip-masq=false", "--ip6tables=false"])
            .arg(format!("--containerd-namespace={}-n{i}", self.prefix))
            .arg(format!("--containerd-plugins-namespace={}-n{i}-plugins", self.prefix))
            .arg(format!("--label=swe-forge-lab-node={name}"))
            .stdout(Stdio::from(log.try_clone().unwrap()))
            .stderr(Stdio::from(log))
            .spawn()
            .expect("nsenter and dockerd run (util-linux, docker.io)");
        self.nodes.push(Node { name, ns, addr, sock, exec_root, child: Some(child), killed: false });
    }

    fn engine_log(&self, n: &Node) -> String {
        let path = self.data.as_ref().unwrap().path().join(&n.name).join("dockerd.log");
        let text = std::fs::read_to_string(path).unwrap_or_default();
        text.lines().rev().take(20).collect::<Vec<_>>().into_iter().rev().collect::<Vec<_>>().join("\n")
    }

    /// In namespace `ns`, `127.0.0.1:<registry port>` leads to the host's registry.
    fn forward_registry(&self, ns: &str) {
        let port: u16 = self.registry.addr.rsplit_once(':').unwrap().1.parse().unwrap();
        let ns_file = std::fs::File::open(format!("/run/netns/{ns}")).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        // A thread entering the namespace makes its listener there, then leaves it: sockets stay
        // in the namespace they were made in.
        std::thread::spawn(move || {
            use std::os::fd::AsRawFd;
            let home = std::fs::File::open("/proc/thread-self/ns/net").unwrap();
            // SAFETY: setns on this thread only, with namespace files held open.
            assert_eq!(unsafe { libc::setns(ns_file.as_raw_fd(), libc::CLONE_NEWNET) }, 0, "setns");
            let listener = TcpListener::bind(("127.0.0.1", port));
            assert_eq!(unsafe { libc::setns(home.as_raw_fd(), libc::CLONE_NEWNET) }, 0, "setns back");
            tx.send(listener).unwrap();
        })
        .join()
        .unwrap();
        let listener = rx.recv().unwrap().expect("a listener in the node's namespace");
        listener.set_nonblocking(true).unwrap();
        let stop = self.stop.clone();
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((inside, _)) => {
                        let _ = inside.set_nonblocking(false);
                        if let Ok(outside) = TcpStream::connect(("127.0.0.1", port)) {
                            pipe(inside, outside);
                        }
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(20)),
                }
            }
        });
    }

    pub fn manager(&self) -> &Node {
        &self.nodes[0]
    }

    pub fn workers(&self) -> &[Node] {
        &self.nodes[1..]
    }

    /// The node dies: its engine, containerd, shims and containers are killed at once
    /// (SIGKILL), as when a machine loses power.
    pub fn kill_node(&mut self, i: usize) {
        let containers: Vec<String> =
            String::from_utf8_lossy(&self.nodes[i].docker(&["ps", "-q", "--no-trunc"]).stdout)
                .lines()
                .map(str::to_owned)
                .collect();
        kill_namespace_processes(&self.nodes[i].ns);
        for id in &containers {
            kill_container_processes(id);
        }
        if let Some(mut c) = self.nodes[i].child.take() {
            let _ = c.wait();
        }
        self.nodes[i].killed = true;
    }

    /// The swarm's id of node `i`.
    pub fn node_id(&self, i: usize) -> String {
        let o = self.nodes[i].docker(&["info", "--format", "{{.Swarm.NodeID}}"]);
        String::from_utf8_lossy(&o.stdout).trim().to_owned()
    }

    /// Images each worker holds (repositories).
    pub fn images_of(&self, n: &Node) -> Vec<String> {
        String::from_utf8_lossy(&n.docker(&["images", "--format", "{{.Repository}}"]).stdout)
            .lines()
            .map(str::to_owned)
            .collect()
    }
}

/// Both directions of a connection, each on a thread of its own.
fn pipe(a: TcpStream, b: TcpStream) {
    for (mut from, mut to) in [(a.try_clone().unwrap(), b.try_clone().unwrap()), (b, a)] {
        std::thread::spawn(move || {
            let mut buf = vec![0u8; 64 << 10];
            loop {
                match from.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        if to.write_all(&buf[..n]).is_err() {
                            break;
                        }
                    }
                }
            }
            let _ = to.shutdown(std::net::Shutdown::Write);
        });
    }
}

/// SIGKILL to every process whose network namespace is `ns` (the node's engine, containerd and
/// shims; never anything of the host's).
fn kill_namespace_processes(ns: &str) {
    let Ok(target) = std::fs::metadata(format!("/run/netns/{ns}")) else { return };
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else { continue };
        let Ok(m) = std::fs::metadata(entry.path().join("ns/net")) else { continue };
        if m.ino() == target.ino() && m.dev() == target.dev() {
            // SAFETY: a plain kill(2) of a process found in the lab's namespace.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
}

/// SIGKILL to the processes of container `id`, found by its cgroup (v1 or v2, cgroupfs driver).
fn kill_container_processes(id: &str) {
    for dir in [
        format!("/sys/fs/cgroup/pids/docker/{id}"),
        format!("/sys/fs/cgroup/memory/docker/{id}"),
        format!("/sys/fs/cgroup/docker/{id}"),
        format!("/sys/fs/cgroup/system.slice/docker-{id}.scope"),
    ] {
        let Ok(procs) = std::fs::read_to_string(Path::new(&dir).join("cgroup.procs")) else { continue };
        for pid in procs.lines().filter_map(|l| l.trim().parse::<i32>().ok()) {
            // SAFETY: a plain kill(2) of a process of the lab's container.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
}

/// Undoes the labs of test processes that were killed outright (no Drop ran): their engines and
/// everything in their namespaces killed, mounts detached, namespaces and folders removed. Only
/// labs whose owner file names a process that no longer exists are touched.
fn sweep_dead_labs() {
    let Ok(entries) = std::fs::read_dir("/run") else { return };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.strip_prefix("swl").is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())) {
            continue;
        }
        let Ok(owner) = std::fs::read_to_string(e.path().join("owner")) else { continue };
        if Path::new(&format!("/proc/{}", owner.trim())).exists() {
            continue;
        }
        let listed = String::from_utf8_lossy(&run("ip", &["netns", "list"]).stdout).into_owned();
        let namespaces: Vec<String> = listed
            .lines()
            .filter_map(|l| l.split_whitespace().next())
            .filter(|n| n.starts_with(&format!("{name}-")))
            .map(str::to_owned)
            .collect();
        for ns in &namespaces {
            kill_namespace_processes(ns);
        }
        // The lab's registry, if it is still the process the lab started (its parent is gone).
        if let Ok(pid) = std::fs::read_to_string(e.path().join("registry"))
            && let Ok(pid) = pid.trim().parse::<i32>()
            && std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| c.starts_with(b"docker-registry\0"))
        {
            // SAFETY: a plain kill(2) of the dead lab's registry.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        std::thread::sleep(Duration::from_millis(300));
        let data = std::fs::read_to_string(e.path().join("data")).ok().map(PathBuf::from);
        for dir in [Some(e.path()), data.clone()].into_iter().flatten() {
            detach_mounts(&dir);
        }
        for ns in &namespaces {
            let _ = run("ip", &["netns", "del", ns]);
        }
        if let Some(d) = data {
            let _ = std::fs::remove_dir_all(d);
        }
        if let Ok(d) = std::fs::read_to_string(e.path().join("registry-dir")) {
            let _ = std::fs::remove_dir_all(d);
        }
        let _ = std::fs::remove_dir_all(e.path());
    }
}

/// `MemAvailable` of /proc/meminfo, in GiB (0 when unknown).
fn mem_available_gib() -> u64 {
    let text = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let kib = text
        .lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .unwrap_or(0);
    kib >> 20
}

fn detach_mounts(dir: &Path) {
    for m in mounts_under(dir) {
        let c = std::ffi::CString::new(m).unwrap();
        // SAFETY: detaching a mount under a lab's own folders.
        unsafe { libc::umount2(c.as_ptr(), libc::MNT_DETACH) };
    }
}

/// Mount points under `dir`, deepest first.
fn mounts_under(dir: &Path) -> Vec<String> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let prefix = dir.to_string_lossy().into_owned();
    let mut found: Vec<String> = text
        .lines()
        .filter_map(|l| l.split(' ').nth(4))
        .filter(|p| *p == prefix || p.starts_with(&format!("{prefix}/")))
        .map(str::to_owned)
        .collect();
    found.sort_by_key(|p| std::cmp::Reverse(p.len()));
    found
}

impl Drop for Lab {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Engines first: each stops its containers; one that does not stop in time is killed
        // with everything in its namespace.
        for n in &mut self.nodes {
            let Some(mut child) = n.child.take() else { continue };
            // SAFETY: SIGTERM to the engine this lab started.
            unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
            let started = Instant::now();
            while child.try_wait().ok().flatten().is_none() && started.elapsed() < Duration::from_secs(20) {
                std::thread::sleep(Duration::from_millis(100));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        std::thread::sleep(Duration::from_millis(300));
        for n in &self.nodes {
            kill_namespace_processes(&n.ns);
        }
        let data = self.data.as_ref().map(|d| d.path().to_owned());
        for dir in [Some(self.run_dir.clone()), data].into_iter().flatten() {
            detach_mounts(&dir);
        }
        for ns in self.namespaces.iter().rev() {
            let _ = run("ip", &["netns", "del", ns]);
        }
        for n in &self.nodes {
            let _ = std::fs::remove_dir_all(&n.exec_root);
        }
        let _ = std::fs::remove_dir_all(&self.run_dir);
        drop(self.data.take());
    }
}

/// What the main engine looked like: `docker0`'s addresses and its networks.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct MainEngine {
    docker0: Vec<String>,
    networks: Vec<String>,
}

impl MainEngine {
    pub fn now() -> MainEngine {
        let addr = String::from_utf8_lossy(&run("ip", &["-o", "-4", "addr", "show", "docker0"]).stdout).into_owned();
        let docker0 =
            addr.split_whitespace().skip_while(|w| *w != "inet").nth(1).map(str::to_owned).into_iter().collect();
        let nets =
            String::from_utf8_lossy(&run("docker", &["network", "ls", "--format", "{{.Name}} {{.Driver}}"]).stdout)
                .into_owned();
        let mut networks: Vec<String> = nets.lines().map(str::to_owned).collect();
        networks.sort();
        MainEngine { docker0, networks }
    }

    /// The main engine is as it was, has no swarm bridge, and its containers still reach the
    /// network and resolve names.
    pub fn assert_untouched(&self, base_image: &str) {
        let now = MainEngine::now();
        assert_eq!(now.docker0, self.docker0, "the main engine's docker0 changed: {now:?}");
        assert!(!now.docker0.is_empty(), "docker0 has no address");
        assert!(!now.networks.iter().any(|n| n.starts_with("docker_gwbridge") || n.starts_with("ingress ")), "{now:?}");
        let o = run("docker", &["run", "--rm", "--network", "bridge", base_image, "getent", "hosts", "deb.debian.org"]);
        assert!(
            o.status.success(),
            "a container of the main engine cannot resolve names: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}
