//! The Dockerfile text of a toolchain image: a toolchain with a recipe's extra packages, suites
//! and variables ([`effective_toolchain`]), and the `docker build` input for it
//! ([`toolchain_dockerfile`]). Text only: building it, and the tag it gets, belong to
//! `swe-forge-validate`.

use crate::{Recipe, Toolchain};

/// The toolchain with a recipe's extra packages, suites and variables.
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

/// `v` as one shell word: as is when it has no character a shell treats specially, else in
/// double quotes.
pub fn shell_quote(v: &str) -> String {
    if v.chars().all(|c| c.is_ascii_alphanumeric() || "-_./:=@,+".contains(c)) {
        v.to_owned()
    } else {
        format!("\"{}\"", v.replace('\\', "\\\\").replace('"', "\\\""))
    }
}
