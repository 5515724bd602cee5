//! The package manager of a JavaScript repository and the version of it to install: the one
//! package.json's `packageManager` names, else the one its committed lockfile is of (yarn 1 or
//! Yarn 2 and later by the lockfile's `__metadata` and `.yarnrc.yml`, pnpm by `lockfileVersion`),
//! else npm without a lockfile. Which version writes which lockfile format is data
//! (`recipes/package-managers.toml`); the install itself is shell (`recipes/js-deps.sh`), put
//! before the setup and prefetch of the recipes that take it ([`crate::Recipe::use_package_manager`]).

use std::collections::BTreeMap;

use serde::Deserialize;

const DATA: &str = include_str!("../recipes/package-managers.toml");

/// The shell functions the JavaScript recipes' setup (`js_deps`) and prefetch (`js_prefetch`) call.
pub const JS_DEPS_SH: &str = include_str!("../recipes/js-deps.sh");

/// Put after [`JS_DEPS_SH`] in the prefetch only: its `js_prefetch`, with lifecycle scripts off
/// (the patch's manifests are in place and the network is there).
pub const JS_PREFETCH_SH: &str = include_str!("../recipes/js-prefetch.sh");

/// One manager of `package-managers.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Manager {
    lockfiles: Vec<String>,
    #[serde(default)]
    package: Option<String>,
    #[serde(default)]
    default: Option<String>,
    #[serde(default)]
    formats: BTreeMap<String, String>,
}

fn managers() -> BTreeMap<String, Manager> {
    toml::from_str(DATA).expect("package-managers.toml is valid")
}

/// The package manager chosen for a repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageManager {
    /// `npm`, `yarn` (yarn 1), `yarn-berry` (Yarn 2 and later) or `pnpm`.
    pub kind: String,
    /// What installs it from the npm registry (`yarn@1.22.22`, `@yarnpkg/cli-dist@3.6.0`,
    /// `pnpm@8`); None for the toolchain's own npm.
    pub package: Option<String>,
    /// Why this one: the file and what it says.
    pub reason: String,
    /// The sources read and what each says (`yarn.lock` -> `yarn lockfile v1`), for the
    /// provenance's `requested_versions`.
    pub requests: Vec<(String, String)>,
}

impl PackageManager {
    /// The command a manager runs the project's `test` script with.
    pub fn command(&self) -> &'static str {
        match self.kind.as_str() {
            "yarn" | "yarn-berry" => "yarn",
            "pnpm" => "pnpm",
            _ => "npm",
        }
    }

    /// `name@version` as the provenance says it (`yarn@1.22.22`, `yarn@3.6.0`, `npm`).
    pub fn label(&self) -> String {
        match &self.package {
            Some(p) => format!("{}@{}", self.command(), p.rsplit_once('@').map_or(p.as_str(), |(_, v)| v)),
            None => "npm (the toolchain's)".into(),
        }
    }
}

/// The package manager of a tree whose files `read` returns (None: absent).
pub fn package_manager(read: &dyn Fn(&str) -> Option<String>) -> PackageManager {
    let all = managers();
    let package_of =
        |kind: &str, version: &str| all.get(kind).and_then(|m| m.package.as_ref()).map(|p| format!("{p}@{version}"));
    let mut requests = Vec::new();
    let pkg: serde_json::Value = read("package.json").and_then(|t| serde_json::from_str(&t).ok()).unwrap_or_default();
    let yarn_lock = read("yarn.lock");
    let berry = yarn_lock.as_deref().and_then(berry_format);
    let yarnrc = read(".yarnrc.yml").is_some();
    if let Some(named) = pkg.get("packageManager").and_then(|v| v.as_str()) {
        requests.push(("package.json packageManager".to_owned(), named.to_owned()));
        let (name, version) = named.split_once('@').unwrap_or((named, ""));
        let version = version.split('+').next().unwrap_or_default();
        let major: u32 = version.split('.').next().and_then(|m| m.parse().ok()).unwrap_or(0);
        let kind = match name {
            "yarn" if major >= 2 => Some("yarn-berry"),
            "yarn" | "pnpm" => Some(name),
            "npm" => Some("npm"),
            _ => None,
        };
        if let Some(kind) = kind {
            let version =
                if version.is_empty() { all[kind].default.clone().unwrap_or_default() } else { version.to_owned() };
            let package = if kind == "npm" { None } else { package_of(kind, &version) };
            return PackageManager {
                kind: kind.to_owned(),
                package,
                reason: format!("package.json packageManager = {named}"),
                requests,
            };
        }
    }
    // The lockfiles committed, in the data's order of preference.
    for (kind, m) in [("npm", &all["npm"]), ("pnpm", &all["pnpm"]), ("yarn", &all["yarn"])] {
        let Some((file, text)) = m.lockfiles.iter().find_map(|f| read(f).map(|t| (f.clone(), t))) else { continue };
        let (kind, format) = match kind {
            "yarn" if berry.is_some() || yarnrc => {
                ("yarn-berry", berry.clone().map(|v| (format!("__metadata version {v}"), v)))
            }
            "yarn" => ("yarn", Some(("yarn lockfile v1".to_owned(), String::new()))),
            _ => (kind, lockfile_version(&text).map(|v| (format!("lockfileVersion {v}"), v))),
        };
        let m = &all[kind];
        if let Some((said, _)) = &format {
            requests.push((file.clone(), said.clone()));
        }
        let version = format.as_ref().and_then(|(_, v)| m.formats.get(v)).or(m.default.as_ref());
        let package = version.and_then(|v| package_of(kind, v));
        let said = format.map(|(s, _)| format!(" ({s})")).unwrap_or_default();
        return PackageManager { kind: kind.to_owned(), package, reason: format!("{file}{said}"), requests };
    }
    PackageManager { kind: "npm".into(), package: None, reason: "no lockfile".into(), requests }
}

/// The `__metadata` version of a Yarn 2+ lockfile (`__metadata:\n  version: 6`).
fn berry_format(lock: &str) -> Option<String> {
    let mut in_meta = false;
    for line in lock.lines() {
        if line.starts_with("__metadata:") {
            in_meta = true;
        } else if in_meta && !line.starts_with(' ') {
            break;
        } else if in_meta && let Some(v) = line.trim().strip_prefix("version:") {
            return Some(v.trim().trim_matches('"').to_owned());
        }
    }
    in_meta.then(String::new)
}

/// The `lockfileVersion` of a package-lock.json (a number) or pnpm-lock.yaml (`'6.0'`, `5.4`).
fn lockfile_version(text: &str) -> Option<String> {
    if let Ok(json) = serde_json::from_str::<serde_json::Value>(text) {
        return json.get("lockfileVersion").map(|v| v.to_string().trim_matches('"').to_owned());
    }
    text.lines().find_map(|l| {
        let v = l.strip_prefix("lockfileVersion:")?.trim().trim_matches(['\'', '"']);
        // pnpm 5 to 7 wrote a number (`5.4`), pnpm 8 a string (`'6.0'`): one form for the data.
        Some(if v.contains('.') { v.to_owned() } else { format!("{v}.0") })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pm(files: &[(&str, &str)]) -> PackageManager {
        let files: BTreeMap<String, String> = files.iter().map(|(p, t)| ((*p).to_owned(), (*t).to_owned())).collect();
        package_manager(&|p: &str| files.get(p).cloned())
    }

    #[test]
    fn the_package_manager_field_decides_then_the_lockfile() {
        let m = pm(&[("package.json", r#"{"packageManager": "yarn@3.6.0+sha256.abc"}"#), ("yarn.lock", "x")]);
        assert_eq!((m.kind.as_str(), m.package.as_deref()), ("yarn-berry", Some("@yarnpkg/cli-dist@3.6.0")));
        assert_eq!((m.label(), m.command()), ("yarn@3.6.0".to_owned(), "yarn"));
        assert_eq!(m.requests, [("package.json packageManager".to_owned(), "yarn@3.6.0+sha256.abc".to_owned())]);
        let m = pm(&[("package.json", r#"{"packageManager": "yarn@1.22.19"}"#)]);
        assert_eq!((m.kind.as_str(), m.package.as_deref()), ("yarn", Some("yarn@1.22.19")));
        let m = pm(&[("package.json", r#"{"packageManager": "pnpm@8.6.0"}"#)]);
        assert_eq!((m.kind.as_str(), m.package.as_deref(), m.command()), ("pnpm", Some("pnpm@8.6.0"), "pnpm"));
        let m = pm(&[("package.json", r#"{"packageManager": "npm@9.8.1"}"#), ("yarn.lock", "x")]);
        assert_eq!((m.kind.as_str(), m.package), ("npm", None));
        // A name this project does not know: the lockfile decides.
        let m = pm(&[("package.json", r#"{"packageManager": "bun@1.0.0"}"#), ("yarn.lock", "# yarn lockfile v1\n")]);
        assert_eq!((m.kind.as_str(), m.package.as_deref()), ("yarn", Some("yarn@1.22.22")));
    }

    #[test]
    fn a_lockfile_names_the_manager_and_its_format_the_version() {
        let m = pm(&[("package.json", "{}"), ("yarn.lock", "# yarn lockfile v1\n\nms@^2.0.0:\n  version \"2.0.0\"\n")]);
        assert_eq!(
            (m.kind.as_str(), m.package.as_deref(), m.reason.as_str()),
            ("yarn", Some("yarn@1.22.22"), "yarn.lock (yarn lockfile v1)")
        );
        assert_eq!(m.requests, [("yarn.lock".to_owned(), "yarn lockfile v1".to_owned())]);
        let berry = "# This file is generated by running \"yarn install\"\n\n__metadata:\n  version: 6\n  cacheKey: 8\n\n\"ms@npm:^2.0.0\":\n  version: 2.1.3\n";
        let m = pm(&[("yarn.lock", berry)]);
        assert_eq!((m.kind.as_str(), m.package.as_deref()), ("yarn-berry", Some("@yarnpkg/cli-dist@3")));
        assert_eq!(m.reason, "yarn.lock (__metadata version 6)");
        let m = pm(&[("yarn.lock", "# yarn lockfile v1\n"), (".yarnrc.yml", "nodeLinker: pnp\n")]);
        assert_eq!((m.kind.as_str(), m.package.as_deref()), ("yarn-berry", Some("@yarnpkg/cli-dist@4")));
        let m = pm(&[("pnpm-lock.yaml", "lockfileVersion: 5.4\n")]);
        assert_eq!((m.package.as_deref(), m.reason.as_str()), (Some("pnpm@7"), "pnpm-lock.yaml (lockfileVersion 5.4)"));
        let m = pm(&[("pnpm-lock.yaml", "lockfileVersion: '6.0'\n")]);
        assert_eq!(m.package.as_deref(), Some("pnpm@8"));
        let m = pm(&[("pnpm-lock.yaml", "lockfileVersion: '9.0'\n")]);
        assert_eq!(m.package.as_deref(), Some("pnpm@9"));
        // npm's lockfile wins over a yarn.lock beside it (npm reads a yarn.lock too).
        let m = pm(&[("package-lock.json", "{\"lockfileVersion\": 2}"), ("yarn.lock", "# yarn lockfile v1\n")]);
        assert_eq!((m.kind.as_str(), m.reason.as_str()), ("npm", "package-lock.json (lockfileVersion 2)"));
        let m = pm(&[("package.json", "{}")]);
        assert_eq!((m.kind.as_str(), m.reason.as_str(), m.command()), ("npm", "no lockfile", "npm"));
    }

    #[test]
    fn every_format_names_a_version_of_a_manager_with_a_package() {
        for (kind, m) in managers() {
            assert!(!m.lockfiles.is_empty(), "{kind}");
            assert_eq!(m.package.is_some(), kind != "npm", "{kind}");
            assert_eq!(m.default.is_some(), kind != "npm", "{kind}");
        }
    }

    /// The setup's `js_deps` as a recipe runs it, by bash in a git tree, with stand-ins for npm,
    /// yarn and pnpm that log their arguments and fail as `fail` says: the commands each manager
    /// runs, and the notes of every fallback.
    fn install(pm: &PackageManager, lockfile: Option<&str>, fail: &str) -> (String, String) {
        let (log, notes, _) = install_env(pm, lockfile, fail);
        (log, notes)
    }

    /// As [`install`], with the download switches each manager saw, one line per call.
    fn install_env(pm: &PackageManager, lockfile: Option<&str>, fail: &str) -> (String, String, String) {
        run_steps(pm, lockfile, fail, false)
    }

    /// The recipe's setup (or its prefetch) run as [`install`] says: the managers' calls, the
    /// notes, and the download and script switches each manager saw, one line per call.
    fn run_steps(pm: &PackageManager, lockfile: Option<&str>, fail: &str, prefetch: bool) -> (String, String, String) {
        run_steps_saying(pm, lockfile, fail, prefetch, "npm error code ERESOLVE")
    }

    /// As [`run_steps`], the failing calls printing `message`.
    fn run_steps_saying(
        pm: &PackageManager,
        lockfile: Option<&str>,
        fail: &str,
        prefetch: bool,
        message: &str,
    ) -> (String, String, String) {
        let tmp = tempfile::tempdir().unwrap();
        let (bin, repo) = (tmp.path().join("bin"), tmp.path().join("repo"));
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::create_dir_all(&repo).unwrap();
        for tool in ["npm", "yarn", "pnpm"] {
            let stub = format!(
                "#!/bin/sh\necho \"{tool} $*\" >> {log}\necho \"$CYPRESS_INSTALL_BINARY $ELECTRON_SKIP_BINARY_DOWNLOAD $PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD $PUPPETEER_SKIP_DOWNLOAD\" >> {log}.env\necho \"{tool} scripts: ${{npm_config_ignore_scripts:-}} ${{YARN_ENABLE_SCRIPTS:-}}\" >> {log}.scripts\n[ \"$1\" = --version ] && exit 1\ncase \"{tool} $*\" in {fail}) echo '{message}'; exit 1;; esac\nexit 0\n",
                log = tmp.path().join("log").display()
            );
            std::fs::write(bin.join(tool), stub).unwrap();
        }
        std::process::Command::new("chmod").arg("-R").arg("+x").arg(&bin).status().unwrap();
        swe_forge_test_support::git(&repo, &["init", "-q"]);
        std::fs::write(repo.join("package.json"), "{}").unwrap();
        if let Some(l) = lockfile {
            std::fs::write(repo.join(l), "x").unwrap();
        }
        swe_forge_test_support::git(&repo, &["add", "-A"]);
        let mut recipe = crate::Recipe::named("js-npm").unwrap();
        recipe.use_package_manager(pm);
        let notes = tmp.path().join("notes");
        let steps = if prefetch { &recipe.prefetch } else { &recipe.setup };
        let script =
            format!("set -e\n{}\n", steps.join("\n")).replace(crate::SETUP_NOTES, &notes.display().to_string());
        let script = script.replace("rm -rf /root/.npm", "true").replace("mkdir -p /swe-forge", "true");
        let out = std::process::Command::new("bash")
            .arg("-c")
            .arg(&script)
            .current_dir(&repo)
            .env("PATH", format!("{}:{}", bin.display(), std::env::var("PATH").unwrap()))
            .env("SWE_FORGE_COMMIT_TIME", "2021-05-01T00:00:00Z")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let read = |p: &std::path::Path| std::fs::read_to_string(p).unwrap_or_default();
        let switches = if prefetch { "log.scripts" } else { "log.env" };
        (read(&tmp.path().join("log")), read(&notes), read(&tmp.path().join(switches)))
    }

    /// The prefetch installs with the patch's manifests in place and the network: no lifecycle
    /// script runs, whatever the manager; the setup's install (the base's own code) is as it was.
    #[test]
    fn the_prefetch_runs_no_lifecycle_script() {
        let cases = [
            (
                pm(&[("package-lock.json", "{\"lockfileVersion\": 3}")]),
                Some("package-lock.json"),
                "npm install --no-audit --no-fund --no-save --ignore-scripts",
            ),
            (
                pm(&[("yarn.lock", "# yarn lockfile v1\n")]),
                Some("yarn.lock"),
                "yarn install --pure-lockfile --ignore-engines --ignore-scripts",
            ),
            (
                pm(&[("yarn.lock", "__metadata:\n  version: 8\n")]),
                Some("yarn.lock"),
                "yarn install --no-immutable --mode=skip-build",
            ),
            (
                pm(&[("pnpm-lock.yaml", "lockfileVersion: '9.0'\n")]),
                Some("pnpm-lock.yaml"),
                "pnpm install --no-frozen-lockfile --ignore-scripts",
            ),
        ];
        for (pm, lockfile, install) in cases {
            let (log, _, scripts) = run_steps(&pm, lockfile, "nothing", true);
            assert!(log.lines().any(|l| l.starts_with(install)), "{}: {log}", pm.kind);
            let calls: Vec<&str> =
                scripts.lines().filter(|l| !l.starts_with("npm scripts") || pm.kind == "npm").collect();
            assert!(
                !calls.is_empty() && calls.iter().all(|l| l.ends_with("scripts: true false")),
                "{}: {scripts}",
                pm.kind
            );
            let (setup, _, _) = run_steps(&pm, lockfile, "nothing", false);
            assert!(!setup.contains("ignore-scripts") && !setup.contains("skip-build"), "the base's install: {setup}");
        }
    }

    #[test]
    fn installs_fetch_no_browser_or_app_binaries() {
        for (pm, lockfile) in [(pm(&[("yarn.lock", "# yarn lockfile v1\n")]), Some("yarn.lock")), (pm(&[]), None)] {
            let (log, _, env) = install_env(&pm, lockfile, "nothing");
            assert!(!env.is_empty() && env.lines().all(|l| l == "0 1 1 true"), "{log}{env}");
        }
    }

    #[test]
    fn each_manager_installs_from_its_lockfile_and_every_fallback_is_noted() {
        let yarn = pm(&[("yarn.lock", "# yarn lockfile v1\n")]);
        let (log, notes) = install(&yarn, Some("yarn.lock"), "nothing");
        assert_eq!(
            log,
            "yarn --version\nnpm install -g --force --no-audit --no-fund yarn@1.22.22\nyarn install --frozen-lockfile --ignore-engines --non-interactive --network-timeout 600000\n"
        );
        assert_eq!(notes, "");
        let (log, notes) = install(&yarn, Some("yarn.lock"), "\"yarn install --frozen-lockfile\"*");
        assert!(
            log.ends_with("yarn install --pure-lockfile --ignore-engines --non-interactive --network-timeout 600000\n"),
            "{log}"
        );
        assert!(notes.starts_with("yarn install --frozen-lockfile failed"), "{notes}");
        let pnpm = pm(&[("pnpm-lock.yaml", "lockfileVersion: '6.0'\n")]);
        let (log, _) = install(&pnpm, Some("pnpm-lock.yaml"), "nothing");
        assert!(
            log.contains(
                "npm install -g --force --no-audit --no-fund pnpm@8\npnpm install --frozen-lockfile --store-dir"
            ),
            "{log}"
        );
        // npm: `npm ci`, again with --legacy-peer-deps when it stops at ERESOLVE.
        let npm = pm(&[("package-lock.json", "{\"lockfileVersion\": 3}")]);
        let (log, notes) = install(&npm, Some("package-lock.json"), "\"npm ci\"");
        assert_eq!(log, "npm ci\nnpm ci --legacy-peer-deps\n");
        assert_eq!(
            notes,
            "npm ci stopped at ERESOLVE (a peer range); retried with --legacy-peer-deps, npm's own advice\n"
        );
        // No lockfile: as of the commit's time first, then as of today, each noted.
        let none = pm(&[("package.json", "{}")]);
        let (log, notes) = install(&none, None, "\"npm install --before=\"*");
        assert_eq!(
            log,
            "npm install --before=2021-05-01T00:00:00Z\nnpm install --before=2021-05-01T00:00:00Z --legacy-peer-deps\nnpm install\n"
        );
        assert_eq!(notes.lines().count(), 2, "{notes}");
        assert!(notes.ends_with("npm install --before=2021-05-01T00:00:00Z failed; resolved as of today\n"), "{notes}");
        // A dependency's install script that fails (PhantomJS fetching its binary from a host out
        // of reach): again with lifecycle scripts off, noted.
        let npm6 = "npm ERR! Failed at the phantomjs@1.9.7-1 install script.";
        let (log, notes, _) = run_steps_saying(&npm, Some("package-lock.json"), "\"npm ci\"", false, npm6);
        assert_eq!(log, "npm ci\nnpm ci --ignore-scripts\n");
        assert!(notes.starts_with("npm ci: the install script of phantomjs@1.9.7-1 failed;"), "{notes}");
        let npm10 = "npm error path /testbed/node_modules/puppeteer";
        let (log, _, _) = run_steps_saying(&npm, Some("package-lock.json"), "\"npm ci\"", false, npm10);
        assert_eq!(log, "npm ci\nnpm ci --ignore-scripts\n");
    }
}
