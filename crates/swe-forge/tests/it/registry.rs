//! Shipping instances: `swe-forge images push | pull | save | load` against a real registry
//! (Debian's `docker-registry`, started by the test on a free loopback port, which the engine
//! trusts over plain HTTP), and the contract inside every instance image
//! (`docker run IMAGE /swe-forge/run-tests`). The fixture repository is copied under an org of
//! its own, so the instance and environment images are this test's only, and removed at the end.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use swe_forge_core::{Instance, ValidationStatus};

use crate::environments::validate;
use crate::support::{make_repos, read_records, root, swe_forge, text};

/// A registry of its own: config and storage in a temporary folder, stopped (and the folder
/// removed) when dropped, whatever happened.
pub(crate) struct Registry {
    child: Child,
    pub(crate) addr: String,
    dir: tempfile::TempDir,
}

impl Registry {
    pub(crate) fn start() -> Registry {
        let dir = tempfile::tempdir().unwrap();
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let addr = format!("127.0.0.1:{port}");
        let storage = dir.path().join("storage");
        std::fs::create_dir_all(&storage).unwrap();
        let config = dir.path().join("config.yml");
        std::fs::write(
            &config,
            format!(
                "version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: {}\n  delete:\n    enabled: true\nhttp:\n  addr: {addr}\n",
                storage.display()
            ),
        )
        .unwrap();
        let log = std::fs::File::create(dir.path().join("registry.log")).unwrap();
        let child = Command::new("docker-registry")
            .arg("serve")
            .arg(&config)
            .stdout(Stdio::from(log.try_clone().unwrap()))
            .stderr(Stdio::from(log))
            .spawn()
            .expect("docker-registry runs (Debian's docker-registry package; scripts/test.sh installs it)");
        let registry = Registry { child, addr, dir };
        let started = Instant::now();
        while !registry.answers() {
            assert!(started.elapsed() < Duration::from_secs(30), "the registry did not answer: {}", registry.log());
            std::thread::sleep(Duration::from_millis(100));
        }
        registry
    }

    /// The folder of its configuration and storage.
    pub(crate) fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The registry's process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `GET /v2/` answers 200.
    fn answers(&self) -> bool {
        let Ok(mut s) = TcpStream::connect(&self.addr) else { return false };
        let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
        if s.write_all(format!("GET /v2/ HTTP/1.0\r\nHost: {}\r\n\r\n", self.addr).as_bytes()).is_err() {
            return false;
        }
        let mut head = [0u8; 12];
        s.read_exact(&mut head).is_ok() && head.ends_with(b"200")
    }

    pub(crate) fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("registry.log")).unwrap_or_default()
    }

    /// Bytes the registry stores (compressed layers, manifests).
    pub(crate) fn stored_bytes(&self) -> u64 {
        fn walk(p: &Path) -> u64 {
            std::fs::read_dir(p)
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| match e.metadata() {
                    Ok(m) if m.is_dir() => walk(&e.path()),
                    Ok(m) => m.len(),
                    Err(_) => 0,
                })
                .sum()
        }
        walk(&self.dir.path().join("storage"))
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Removes the test's images when dropped: every instance and environment image of the test's
/// repository (`images prune` with records that name none), then whatever image still has a
/// name of that repository (the Multi-SWE-bench name, a registry's), newest first.
struct Images {
    scope: PathBuf,
}

impl Drop for Images {
    fn drop(&mut self) {
        let o = swe_forge(&["images", "prune", "--keep", self.scope.to_str().unwrap()]);
        if !o.status.success() {
            eprintln!("cleaning up: {}", text(&o));
        }
        for id in leftovers() {
            docker(&["rmi", "-f", &id]);
        }
    }
}

/// Ids of the images with a name or digest of the test's repository, newest first.
fn leftovers() -> Vec<String> {
    let o = docker(&["images", "--digests", "--format", "{{.Repository}} {{.ID}}"]);
    let mut ids: Vec<String> = Vec::new();
    for line in String::from_utf8_lossy(&o.stdout).lines() {
        if let Some((repo, id)) = line.split_once(' ')
            && repo.contains("registry-fixtures")
            && !ids.iter().any(|i| i == id)
        {
            ids.push(id.to_owned());
        }
    }
    ids
}

fn docker(args: &[&str]) -> std::process::Output {
    Command::new("docker").args(args).output().unwrap()
}

fn image_id(image: &str) -> Option<String> {
    let o = docker(&["image", "inspect", "--format", "{{.Id}}", image]);
    o.status.success().then(|| String::from_utf8_lossy(&o.stdout).trim().to_owned())
}

fn ok(args: &[&str]) -> String {
    let o = swe_forge(args);
    assert!(o.status.success(), "swe-forge {args:?}: {}", text(&o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn instances_go_through_a_registry_and_an_archive_and_run_by_their_contract() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = make_repos(tmp.path());
    std::fs::create_dir_all(repos.join("registry-fixtures")).unwrap();
    let cp = Command::new("cp")
        .arg("-r")
        .arg(repos.join("forge-fixtures/gostack"))
        .arg(repos.join("registry-fixtures/gostack"))
        .output()
        .unwrap();
    assert!(cp.status.success(), "{}", text(&cp));
    let fixtures = read_records(&root().join("data/fixtures/instances.jsonl"));
    let mut record = fixtures.iter().find(|r| r.instance_id == "forge-fixtures__gostack-1").unwrap().clone();
    record.org = "registry-fixtures".into();
    record.instance_id = record.expected_id();
    let scope = tmp.path().join("scope.jsonl");
    swe_forge_core::write_jsonl(std::fs::File::create(&scope).unwrap(), [&record]).unwrap();
    let msb = "mswebench/registry-fixtures_m_gostack:pr-1".to_owned();
    let _images = Images { scope: scope.clone() };
    // A clean slate: what an interrupted run of this test left goes first.
    drop(Images { scope: scope.clone() });

    let done = validate(&[&record], &repos, &tmp.path().join("v"), None);
    let meta = done[0].swe_forge.clone().unwrap();
    assert_eq!(meta.status, ValidationStatus::Accepted, "{meta:?}");
    let image = meta.image.clone().unwrap();
    let provenance = meta.provenance.clone().unwrap();
    let (env, source) = (provenance.env_image.clone(), image_id(&image).unwrap());
    let env_id = image_id(&env).unwrap();
    assert_eq!(meta.image_id.as_deref(), Some(source.as_str()));

    // The contract: the image runs its tests by itself, with the patches a harness puts in.
    let json = docker(&["run", "--rm", &image, "cat", "/swe-forge/instance.json"]);
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(doc["instance_id"], record.instance_id);
    assert_eq!(doc["parser"], "go-test-json");
    assert_eq!(doc["test_command"], meta.test_command.clone().unwrap());
    let patches = tmp.path().join("patches");
    std::fs::create_dir_all(&patches).unwrap();
    std::fs::write(patches.join("test.patch"), &record.test_patch).unwrap();
    std::fs::write(patches.join("fix.patch"), &record.fix_patch).unwrap();
    let run = |mounts: &[&str]| {
        let mut args = vec!["run".to_owned(), "--rm".to_owned(), "--network".to_owned(), "none".to_owned()];
        for m in mounts {
            args.push("-v".into());
            args.push(format!("{}:/swe-forge/{m}:ro", patches.join(m).display()));
        }
        args.extend([image.clone(), "/swe-forge/run-tests".into()]);
        let o = Command::new("docker").args(&args).output().unwrap();
        (o.status.code(), String::from_utf8_lossy(&o.stdout).into_owned())
    };
    let (code, log) = run(&[]);
    assert!(log.contains("swe-forge: test command exited with 0\n"), "{log}");
    assert_eq!(code, Some(0), "{log}");
    assert!(!log.contains("TestPopEmptyReturnsError"), "the run phase has no test patch: {log}");
    let (code, log) = run(&["test.patch"]);
    assert_ne!(code, Some(0), "{log}");
    let reports = |action: &str| {
        log.lines().any(|l| {
            l.contains(&format!("\"Action\":\"{action}\"")) && l.contains("\"Test\":\"TestPopEmptyReturnsError\"")
        })
    };
    assert!(reports("fail"), "{log}");
    let (code, log) = run(&["test.patch", "fix.patch"]);
    assert_eq!(code, Some(0), "{log}");
    let passes =
        log.lines().any(|l| l.contains("\"Action\":\"pass\"") && l.contains("\"Test\":\"TestPopEmptyReturnsError\""));
    assert!(passes, "{log}");

    // Push, Multi-SWE-bench names too. Then again: every layer is in the registry already.
    let registry = Registry::start();
    let validated = tmp.path().join("v/validated.jsonl");
    let before = registry.stored_bytes();
    let table = ok(&[
        "images",
        "push",
        "--records",
        validated.to_str().unwrap(),
        "--registry",
        &registry.addr,
        "--tag-style",
        "msb",
    ]);
    let stored = registry.stored_bytes() - before;
    eprintln!("first push, {stored} bytes stored by the registry (compressed):\n{table}");
    let pushed_path = tmp.path().join("v/validated.pushed.jsonl");
    let pushed: Vec<Instance> = read_records(&pushed_path);
    let pm = pushed[0].swe_forge.clone().unwrap();
    let reference = pm.registry_image.clone().unwrap();
    let prefix = format!("{}/{}@sha256:", registry.addr, image.split(':').next().unwrap());
    assert!(reference.starts_with(&prefix), "{reference}");
    let names: Vec<&str> = pm.registry_images.keys().map(String::as_str).collect();
    for name in [&image, &env, &provenance.toolchain_image, &provenance.base_image, &msb] {
        assert!(names.contains(&name.as_str()), "{name} not in {names:?}");
    }
    assert_eq!(pm.registry_images[&msb].split('@').nth(1), reference.split('@').nth(1), "one manifest, two names");
    assert_eq!(image_id(&msb).as_deref(), Some(source.as_str()), "the msb name is kept locally");
    assert!(image_id(&format!("{}/{image}", registry.addr)).is_none(), "registry names are not left behind");
    // The records round-trip with the new fields; Multi-SWE-bench fields are untouched.
    let line = std::fs::read_to_string(&pushed_path).unwrap();
    let again: Instance = serde_json::from_str(line.lines().next().unwrap()).unwrap();
    assert_eq!(serde_json::to_value(&again).unwrap(), serde_json::to_value(&pushed[0]).unwrap());
    assert_eq!(pushed[0].fix_patch, done[0].fix_patch);
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root().join("schemas/instance.schema.json")).unwrap()).unwrap();
    let value: serde_json::Value = serde_json::from_str(line.lines().next().unwrap()).unwrap();
    let errors: Vec<String> =
        jsonschema::validator_for(&schema).unwrap().iter_errors(&value).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
    let twice = ok(&["images", "push", "--records", validated.to_str().unwrap(), "--registry", &registry.addr]);
    for row in twice.lines().skip(2) {
        assert_eq!(row.split('|').nth(2).map(str::trim), Some("0"), "nothing is uploaded again: {twice}");
    }

    // Gone locally, pulled back with the same ids.
    let remove = || {
        for name in [&msb, &image, &env] {
            docker(&["rmi", "-f", name]);
        }
        assert!(image_id(&image).is_none() && image_id(&env).is_none());
    };
    // Evaluate, here with the repository; then on a "machine" with neither the images nor the
    // repository: it pulls the instance image the record names and runs it by its contract,
    // and writes the same summary.
    let evaluate = |records: &Path, out: &str, repos: Option<&Path>| {
        let out = tmp.path().join(out);
        let mut args = vec!["evaluate", "--dataset", records.to_str().unwrap(), "--predictions", "gold"];
        args.extend(["--out", out.to_str().unwrap()]);
        if let Some(r) = repos {
            args.extend(["--repos", r.to_str().unwrap()]);
        }
        let text = ok(&args);
        assert!(text.contains("1 of 1 predictions resolved"), "{text}");
        std::fs::read_to_string(out.join("summary.json")).unwrap()
    };
    let here = evaluate(&validated, "eval-here", Some(&repos));
    remove();
    let elsewhere = evaluate(&pushed_path, "eval-elsewhere", None);
    assert_eq!(here, elsewhere);
    assert_eq!(image_id(&image).as_deref(), Some(source.as_str()), "evaluate pulled the instance image");
    remove();
    // A record whose instance image id is not what the registry holds: refused, left unnamed.
    let mut lying = pushed[0].clone();
    lying.swe_forge.as_mut().unwrap().image_id = Some(format!("sha256:{}", "0".repeat(64)));
    let lying_path = tmp.path().join("lying.jsonl");
    swe_forge_core::write_jsonl(std::fs::File::create(&lying_path).unwrap(), [&lying]).unwrap();
    let refused = swe_forge(&["images", "pull", "--records", lying_path.to_str().unwrap()]);
    assert!(!refused.status.success() && text(&refused).contains("not the expected"), "{}", text(&refused));
    assert!(image_id(&image).is_none());
    ok(&["images", "pull", "--records", pushed_path.to_str().unwrap()]);
    assert_eq!(image_id(&image).as_deref(), Some(source.as_str()));
    assert_eq!(image_id(&env).as_deref(), Some(env_id.as_str()));
    let names = docker(&["images", "--digests", "--format", "{{.Repository}}"]);
    assert!(!String::from_utf8_lossy(&names.stdout).contains(&registry.addr), "only local names stay");
    drop(registry);

    // One archive, loaded back.
    let archive = tmp.path().join("images.tar");
    let listed =
        ok(&["images", "save", "--records", pushed_path.to_str().unwrap(), "--out", archive.to_str().unwrap()]);
    assert_eq!(listed.lines().count(), 4, "{listed}");
    eprintln!("archive: {} bytes", std::fs::metadata(&archive).unwrap().len());
    remove();
    let loaded = ok(&["images", "load", archive.to_str().unwrap()]);
    assert!(loaded.lines().any(|l| l == image), "{loaded}");
    assert_eq!(image_id(&image).as_deref(), Some(source.as_str()));
    assert_eq!(image_id(&env).as_deref(), Some(env_id.as_str()));
    let (code, log) = run(&["test.patch", "fix.patch"]);
    assert_eq!(code, Some(0), "the loaded image runs: {log}");
}
