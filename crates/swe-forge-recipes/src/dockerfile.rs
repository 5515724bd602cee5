//! The Dockerfile text of a toolchain image: a toolchain with a recipe's extra packages, suites
//! and variables ([`effective_toolchain`]), and the `docker build` input for it
//! ([`toolchain_dockerfile`]). Text only: building it, and the tag it gets, belong to
//! `swe-forge-validate`.

use crate::{Recipe, Toolchain};

/// The toolchain with a recipe's extra packages, suites and variables; the CI's packages and
/// those a failed build was found to need (`system_packages`) go into one layer over the
/// toolchain's own, whose layers an image without them shares.
pub fn effective_toolchain(mut t: Toolchain, recipe: &Recipe) -> Toolchain {
    for s in &recipe.apt_suites {
        if !t.apt_suites.contains(s) {
            t.apt_suites.push(s.clone());
        }
    }
    for p in &recipe.extra_packages {
        if !t.packages.contains(p) {
            t.packages.push(p.clone());
        }
    }
    for p in recipe.ci_packages.iter().chain(&recipe.system_packages) {
        if !t.ci_packages.contains(p) && !t.packages.contains(p) {
            t.ci_packages.push(p.clone());
        }
    }
    t.env.extend(recipe.env.clone());
    t
}

/// Dockerfile of a toolchain image.
pub fn toolchain_dockerfile(base: &str, t: &Toolchain) -> String {
    let mut df = format!("FROM {base}\nENV DEBIAN_FRONTEND=noninteractive\n");
    if !t.apt_suites.is_empty() {
        // The base image's own mirror; the suites are pinned below the base suite (priority 100)
        // so that only packages asked for as `name/suite` come from them. A development suite's
        // Release file may be past its Valid-Until on a mirror that lags: not checked for these.
        let lines: Vec<String> = t
            .apt_suites
            .iter()
            .map(|s| format!("echo \"deb [check-valid-until=no] $m {s} main\" >> /etc/apt/sources.list.d/swe-forge-suites.list \\\n && printf 'Package: *\\nPin: release n={s}\\nPin-Priority: 100\\n\\n' >> /etc/apt/preferences.d/swe-forge-suites"))
            .collect();
        df.push_str(&format!(
            "RUN m=$(sed -n 's/^deb \\([^ ]*\\) .*/\\1/p' /etc/apt/sources.list | head -1) \\\n && [ -n \"$m\" ] \\\n && {}\n",
            lines.join(" \\\n && ")
        ));
    }
    df.push_str(&apt_install(&t.packages));
    if !t.more_packages.is_empty() {
        df.push_str(&apt_install(&t.more_packages));
    }
    if !t.ci_packages.is_empty() {
        df.push_str(&apt_install_available(&t.ci_packages));
    }
    for (k, v) in &t.env {
        df.push_str(&format!("ENV {k}={}\n", shell_quote(v)));
    }
    if !t.warm.is_empty() {
        df.push_str(&format!("RUN {}\n", t.warm.join(" \\\n && ")));
    }
    df
}

/// A `RUN` that installs `packages` and leaves no apt list, log or cache in the layer.
fn apt_install(packages: &[String]) -> String {
    format!(
        "RUN apt-get update \\\n && apt-get install -y --no-install-recommends {} \\\n && apt-get clean && rm -rf /var/lib/apt/lists/* /var/log/apt /var/log/dpkg.log /var/log/alternatives.log /var/cache/ldconfig/aux-cache\n",
        packages.join(" ")
    )
}

/// Where a toolchain image lists the CI packages it installed (their names in its suite).
pub const CI_PACKAGES_FILE: &str = "/etc/swe-forge-ci-packages";

/// A `RUN` that installs those of `packages` the suite has, and lists them in
/// [`CI_PACKAGES_FILE`]. A CI ran on Ubuntu of its day, whose names differ now and then: a `lib<name><version>-dev` the suite lacks is tried as
/// `lib<name>-dev` (`libzstd1-dev`, `libssl1.0-dev`; `libboost1.54-all-dev` as `libboost-all-dev`), a PPA's Boost (`boost1.70`, toml11's CI) as
/// `libboost-all-dev` (not tried by its own name, which apt reads as a pattern), and a name apt
/// still cannot install is
/// named in the build log and skipped.
fn apt_install_available(packages: &[String]) -> String {
    let can = "apt-get install -s -y --no-install-recommends \"$1\" >/dev/null 2>&1";
    format!(
        "RUN apt-get update \\\n && can() {{ {can}; }} \\\n && ok= \\\n && for p in {}; do \\\n      alt=$(echo \"$p\" | sed -n -e 's/^\\(lib[a-z][a-z0-9+.-]*[a-z+]\\)[0-9][0-9.]*-dev$/\\1-dev/p' -e 's/^\\(lib[a-z][a-z0-9+]*[a-z+]\\)[0-9][0-9.]*\\(-[a-z][a-z0-9-]*\\)-dev$/\\1\\2-dev/p' -e 's/^boost[0-9][0-9.]*$/libboost-all-dev/p'); \\\n      if case \"$p\" in boost[0-9]*) false;; esac && can \"$p\"; then ok=\"$ok $p\"; \\\n      elif [ -n \"$alt\" ] && can \"$alt\"; then echo \"swe-forge: the CI's package $p is $alt in this suite\"; ok=\"$ok $alt\"; \\\n      else echo \"swe-forge: the CI's package $p cannot be installed from this suite: skipped\"; fi; \\\n    done \\\n && if [ -n \"$ok\" ]; then apt-get install -y --no-install-recommends $ok; fi \\\n && echo $ok > {CI_PACKAGES_FILE} \\\n && apt-get clean && rm -rf /var/lib/apt/lists/* /var/log/apt /var/log/dpkg.log /var/log/alternatives.log /var/cache/ldconfig/aux-cache\n",
        packages.join(" ")
    )
}

/// `v` as one shell word: as is when it has no character a shell treats specially, else in
/// double quotes.
pub fn shell_quote(v: &str) -> String {
    if v.chars().all(|c| c.is_ascii_alphanumeric() || "-_./:=@,+".contains(c)) {
        v.to_owned()
    } else {
        format!("\"{}\"", v.replace('\\', "\\\\").replace('"', "\\\""))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_ci_packages(packages: &[&str]) -> Toolchain {
        let mut recipe = Recipe::named("c-cmake").unwrap();
        assert!(recipe.ci_apt_packages, "the C-family recipes install their CI's packages");
        recipe.ci_packages = packages.iter().map(|p| (*p).to_owned()).collect();
        effective_toolchain(Toolchain::named(&recipe.toolchain).unwrap(), &recipe)
    }

    #[test]
    fn ci_packages_get_a_layer_of_their_own_after_the_toolchains_packages() {
        let plain = toolchain_dockerfile("base", &with_ci_packages(&[]));
        let t = with_ci_packages(&["gperf", "cmake", "libzstd1-dev"]);
        assert_eq!(t.ci_packages, ["gperf", "libzstd1-dev"], "a package the toolchain has is not asked for twice");
        let df = toolchain_dockerfile("base", &t);
        assert!(df.starts_with(plain.split("\nENV ").next().unwrap()), "the toolchain's own layers come first:\n{df}");
        assert!(df.contains("for p in gperf libzstd1-dev; do"), "{df}");
        assert!(!plain.contains("the CI's package"), "{plain}");
    }

    /// The install line of a CI's packages, run by `sh` with a stand-in `apt-get` that knows
    /// `known` (and reports what it installs): what it prints, and the list it leaves.
    fn install_with(packages: &[&str], known: &[&str]) -> (String, String) {
        let t = with_ci_packages(packages);
        let df = toolchain_dockerfile("base", &t);
        let run = df.split("\nRUN ").find(|r| r.contains("the CI's package")).unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let list = tmp.path().join("installed");
        let run = run.split(" \\\n && apt-get clean").next().unwrap().replace("\\\n", " ");
        let run = run.replace(CI_PACKAGES_FILE, &list.display().to_string());
        let fake = tmp.path().join("apt-get");
        std::fs::write(
            &fake,
            format!(
                "#!/bin/sh\n[ \"$1\" = update ] && exit 0\nif [ \"$2\" = -s ]; then case \"$5\" in {}) exit 0;; *) exit 100;; esac; fi\nshift 3; echo \"installed $*\"\n",
                known.join("|")
            ),
        )
        .unwrap();
        std::process::Command::new("chmod").arg("+x").arg(&fake).status().unwrap();
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(&run)
            .env("PATH", format!("{}:{}", tmp.path().display(), std::env::var("PATH").unwrap()))
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        (String::from_utf8(out.stdout).unwrap(), std::fs::read_to_string(&list).unwrap())
    }

    #[test]
    fn a_ci_package_the_suite_lacks_is_tried_without_its_version_then_skipped() {
        let (out, list) = install_with(
            &["gperf", "libzstd1-dev", "libssl1.0-dev", "libb2-dev", "xenial-only-tool"],
            &["gperf", "libzstd-dev", "libssl-dev", "libb2-dev"],
        );
        assert!(out.contains("the CI's package libzstd1-dev is libzstd-dev in this suite"), "{out}");
        assert!(
            out.contains("the CI's package xenial-only-tool cannot be installed from this suite: skipped"),
            "{out}"
        );
        assert!(out.ends_with("installed gperf libzstd-dev libssl-dev libb2-dev\n"), "{out}");
        assert_eq!(list, "gperf libzstd-dev libssl-dev libb2-dev\n", "the image lists what it installed");
        // A version in the middle of the name (Ubuntu's `libboost1.54-all-dev`, cereal's CI).
        let (out, list) = install_with(&["libboost1.54-all-dev"], &["libboost-all-dev"]);
        assert!(out.contains("the CI's package libboost1.54-all-dev is libboost-all-dev in this suite"), "{out}");
        assert_eq!(list, "libboost-all-dev\n");
        let (none, list) = install_with(&["xenial-only-tool"], &["gperf"]);
        assert_eq!(list, "\n");
        assert!(!none.lines().any(|l| l.starts_with("installed")), "nothing to install runs no install: {none}");
    }
}
