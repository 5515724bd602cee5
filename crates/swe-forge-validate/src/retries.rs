//! What validation does after a first build or first runs fail in a way another environment
//! fixes, each step a [`BuildAttempt`] in the provenance (`build_attempts`):
//!
//! - a **missing system dependency** (a header, library, CMake package, pkg-config module or
//!   command that the setup's log, or the log of every phase's first run, names:
//!   [`swe_forge_recipes::missing_dependency`]) is looked up in the `Contents-amd64` index of the
//!   image's Debian suite, downloaded once from the base image's mirror into an image of its own
//!   (`swe-forge/contents`) and searched as a stream inside it, without network; the package
//!   is installed in the layer of the CI's packages and the build starts again, at most
//!   [`MAX_SYSTEM_PACKAGES`] times; when no package provides it the instance is rejected
//!   `image_build_failed`, `missing system dependency: <thing>`;
//! - a recipe's **fallback** whose sign the failed setup's log shows (CMake's Makefile generator
//!   for a Ninja that knows no rule for an `ExternalProject`'s byproduct) is taken once;
//! - runs that reported **no test in any phase** try the tree's next build system
//!   ([`swe_forge_recipes::Detection::build_systems`]: a CMake file that builds the library
//!   only, autotools whose `make check` runs the tests).
//!
//! A record's attempts are applied again when it is validated again, evaluated or rebuilt
//! ([`apply_attempts`]), so its image is made the same way.

use std::collections::HashMap;

use swe_forge_core::{BuildAttempt, Instance, PhaseStatuses, RejectReason, Rejection};
use swe_forge_docker::{BuildContext, DockerError, LABEL_ROLE, RunSpec};
use swe_forge_recipes::{Missing, Recipe, Toolchain, contents_ignore_case, contents_pattern, pick_package};

use crate::grading::grade::GradeInput;
use crate::images::short_hash;
use crate::validator::{Prepared, Validator};

/// System packages one instance may be given, one found after another.
pub(crate) const MAX_SYSTEM_PACKAGES: usize = 3;

/// Where the index lies in its image.
const CONTENTS_FILE: &str = "/swe-forge-contents.gz";

/// The Dockerfile of the index image over `base`: the `main/Contents-amd64.gz` of the suite of
/// the base's first `deb` line, from its mirror.
fn contents_dockerfile(base: &str) -> String {
    format!(
        "FROM {base}\nRUN m=$(sed -n 's/^deb \\([^ ]*\\) .*/\\1/p' /etc/apt/sources.list | head -1) \\\n && s=$(sed -n 's/^deb [^ ]* \\([^ ]*\\) .*/\\1/p' /etc/apt/sources.list | head -1) \\\n && [ -n \"$m\" ] && [ -n \"$s\" ] \\\n && /usr/lib/apt/apt-helper download-file \"$m/dists/$s/main/Contents-amd64.gz\" {CONTENTS_FILE} \\\n && rm -rf /var/lib/apt/lists/* /var/log/apt\n"
    )
}

/// The script that streams the index through `grep` for the lines that may provide `m`.
fn lookup_script(m: &Missing) -> String {
    let case = if contents_ignore_case(m) { " -i" } else { "" };
    let pattern = contents_pattern(m).replace('\'', "'\\''");
    format!("zcat {CONTENTS_FILE} | grep -E{case} -e '{pattern}' | head -n 2000; true")
}

/// The attempts a record's provenance lists (none for a record not validated yet).
pub(crate) fn recorded_attempts(inst: &Instance) -> Vec<BuildAttempt> {
    inst.swe_forge.as_ref().and_then(|m| m.provenance.as_ref()).map(|p| p.build_attempts.clone()).unwrap_or_default()
}

/// The build system `attempts` moved to last, if any.
pub(crate) fn chosen_build_system(attempts: &[BuildAttempt]) -> Option<&str> {
    attempts.iter().rev().find(|a| a.kind == BuildAttempt::BUILD_SYSTEM).map(|a| a.action.as_str())
}

/// `recipe` as `attempts` left it: the fallbacks taken, the system packages installed.
pub(crate) fn apply_attempts(recipe: &mut Recipe, attempts: &[BuildAttempt]) {
    for a in attempts {
        match a.kind.as_str() {
            BuildAttempt::FALLBACK => {
                recipe.take_fallback(&a.action);
            }
            BuildAttempt::TEST_USER if recipe.test_user.is_none() => {
                recipe.test_user = Some(a.action.clone());
            }
            BuildAttempt::SYSTEM_PACKAGE if !recipe.system_packages.contains(&a.action) => {
                recipe.system_packages.push(a.action.clone());
            }
            _ => {}
        }
    }
}

/// The fallback of `recipe` whose sign the failed setup's `detail` shows, as an attempt.
pub(crate) fn fallback_attempt(recipe: &Recipe, detail: &str) -> Option<BuildAttempt> {
    let f = recipe.fallback_for(detail)?;
    let line = detail.lines().find(|l| l.contains(&f.sign)).unwrap_or_default();
    Some(BuildAttempt {
        kind: BuildAttempt::FALLBACK.into(),
        action: f.name.clone(),
        found: f.sign.clone(),
        line: line.trim().chars().take(300).collect(),
        log: "setup".into(),
        source: format!("recipe {}", recipe.name),
    })
}

/// The unprivileged user the runs move to after a base run refused root (`line`), unless
/// `attempts` did so already.
pub(crate) fn test_user_attempt(line: &str, attempts: &[BuildAttempt]) -> Option<BuildAttempt> {
    (!attempts.iter().any(|a| a.kind == BuildAttempt::TEST_USER)).then(|| BuildAttempt {
        kind: BuildAttempt::TEST_USER.into(),
        action: TEST_USER.into(),
        found: "the suite refuses to run as root".into(),
        line: line.to_owned(),
        log: "run".into(),
        source: "the base run's output".into(),
    })
}

/// The user [`test_user_attempt`] runs the tests as (made in the instance image, owner of the
/// repository).
const TEST_USER: &str = "swe-forge";

/// The build system of `systems` (the tree's, in detection's order) after `current` that
/// `attempts` did not try; none when `current` is not one of them (an override's recipe).
pub(crate) fn next_build_system<'a>(
    systems: &'a [String],
    current: &str,
    attempts: &[BuildAttempt],
) -> Option<&'a str> {
    let at = systems.iter().position(|s| s == current)?;
    let tried = |s: &str| attempts.iter().any(|a| a.kind == BuildAttempt::BUILD_SYSTEM && a.action == s);
    systems[at + 1..].iter().map(String::as_str).find(|s| !tried(s))
}

impl Validator {
    /// After a failed setup (`detail`): the attempt that may build, if any (the recipe's fallback
    /// whose sign it shows, else the package that provides what it lacks); the rejection when
    /// nothing provides what it lacks.
    pub(crate) async fn retry_after_setup(
        &self,
        detail: &str,
        recipe: &Recipe,
        toolchain: &Toolchain,
        attempts: &[BuildAttempt],
    ) -> Result<Option<BuildAttempt>, Rejection> {
        if let Some(a) = fallback_attempt(recipe, detail) {
            return Ok(Some(a));
        }
        let Some(m) = swe_forge_recipes::missing_dependency(detail) else { return Ok(None) };
        self.system_package_attempt(&m, "setup", recipe, toolchain, attempts).await.map_err(|mut r| {
            if r.reason == RejectReason::ImageBuildFailed {
                r.detail = format!("{}\n\n{detail}", r.detail);
            }
            r
        })
    }

    /// After runs that reported no test in any phase (else nothing): adds the attempt that may run
    /// some to `attempts` (true): the package that provides what the first run of every phase
    /// lacks alike, else the tree's next build system, unless an override named the recipe. The
    /// rejection when nothing provides what they lack.
    pub(crate) async fn retry_after_runs(
        &self,
        inst: &Instance,
        prepared: &Prepared,
        (runs, missing, input): (&[Vec<PhaseStatuses>; 3], &[Option<Missing>; 3], &GradeInput),
        attempts: &mut Vec<BuildAttempt>,
    ) -> Result<bool, Rejection> {
        if !runs.iter().all(|p| p.iter().all(|t| t.is_empty())) {
            return Ok(false);
        }
        let next = self.attempt_after_runs(inst, prepared, missing, input, attempts).await?;
        Ok(next.map(|a| attempts.push(a)).is_some())
    }

    /// The attempt [`Validator::retry_after_runs`] adds, if any.
    async fn attempt_after_runs(
        &self,
        inst: &Instance,
        prepared: &Prepared,
        missing: &[Option<Missing>; 3],
        input: &GradeInput,
        attempts: &[BuildAttempt],
    ) -> Result<Option<BuildAttempt>, Rejection> {
        let same = |x: &Option<Missing>, m: &Missing| x.as_ref().is_some_and(|x| x.kind == m.kind && x.name == m.name);
        if let Some(m) = missing[0].as_ref().filter(|m| missing.iter().all(|x| same(x, m))) {
            let (recipe, toolchain) = (&prepared.recipe, &prepared.toolchain);
            if let Some(a) = self.system_package_attempt(m, "run, test, fix", recipe, toolchain, attempts).await? {
                self.reporter
                    .note(&format!("{}: no test ran; {} installed for {}", inst.instance_id, a.action, a.found));
                return Ok(Some(a));
            }
        }
        let forced =
            self.settings.overrides.get(&format!("{}/{}", inst.org, inst.repo)).and_then(|o| o.forced_recipe(inst));
        let systems = &prepared.detection.build_systems;
        let Some(next) = next_build_system(systems, &prepared.recipe.name, attempts).filter(|_| forced.is_none())
        else {
            return Ok(None);
        };
        self.reporter.note(&format!("{}: no test ran with {}; trying {next}", inst.instance_id, prepared.recipe.name));
        let line =
            input.facts.iter().find_map(|f| f.why_no_test()).unwrap_or_else(|| "no per-test result in any run".into());
        Ok(Some(BuildAttempt {
            kind: BuildAttempt::BUILD_SYSTEM.into(),
            action: next.to_owned(),
            found: format!("no test in any phase with {}", prepared.recipe.name),
            line,
            log: "run, test, fix".into(),
            source: format!("the tree's build systems: {}", systems.join(", ")),
        }))
    }

    /// The image holding the index of the suite of the base image `suite` names (the pipeline's
    /// when None), downloaded once.
    async fn contents_image(&self, suite: Option<&str>) -> Result<String, DockerError> {
        let base = self.base_image(suite).await?;
        let dockerfile = contents_dockerfile(&base);
        let tag = format!("swe-forge/contents:{}", short_hash(&[&dockerfile]));
        let cell = self.once_cell(&tag);
        cell.get_or_try_init(|| async {
            if self.engine.image_id(&tag).await?.is_none() {
                self.reporter.note(&format!("downloading the Debian Contents index into {tag}"));
            }
            let labels = HashMap::from([(LABEL_ROLE.to_owned(), "toolchain".to_owned())]);
            let context = || BuildContext::new().finish(&dockerfile);
            self.engine.build_once(&tag, context, &labels, &mut |l| tracing::debug!(target: "build", "{l}")).await?;
            Ok::<_, DockerError>(tag.clone())
        })
        .await
        .cloned()
    }

    /// The package of the suite of `toolchain` that provides `m`, with the path it provides it by.
    async fn providing_package(
        &self,
        toolchain: &Toolchain,
        m: &Missing,
    ) -> Result<Option<(String, String)>, DockerError> {
        let image = self.contents_image(toolchain.base_suite.as_deref()).await?;
        let out = self.engine.run(&RunSpec::new(&image, lookup_script(m))).await?;
        Ok(pick_package(m, &String::from_utf8_lossy(&out.log)))
    }

    /// The attempt that installs the package providing `m` (read from the `log` named so), or
    /// None when no more may be installed or the package is installed already (the build lacks
    /// something else); the rejection when no package of the suite provides it.
    pub(crate) async fn system_package_attempt(
        &self,
        m: &Missing,
        log: &str,
        recipe: &Recipe,
        toolchain: &Toolchain,
        attempts: &[BuildAttempt],
    ) -> Result<Option<BuildAttempt>, Rejection> {
        if !recipe.ci_apt_packages
            || attempts.iter().filter(|a| a.kind == BuildAttempt::SYSTEM_PACKAGE).count() >= MAX_SYSTEM_PACKAGES
        {
            return Ok(None);
        }
        let suite = toolchain.base_suite.clone().unwrap_or_else(|| self.settings.base.suite.clone());
        let found = self.providing_package(toolchain, m).await.map_err(|e| {
            Rejection::new(RejectReason::Infrastructure, format!("searching the Contents index of {suite}: {e}"))
        })?;
        let Some((package, path)) = found else {
            return Err(Rejection::new(
                RejectReason::ImageBuildFailed,
                format!(
                    "missing system dependency: {}: no package of Debian {suite} provides it (`{}`, {log} log)",
                    m.thing(),
                    m.line
                ),
            ));
        };
        let have = recipe.system_packages.contains(&package)
            || toolchain.packages.contains(&package)
            || toolchain.ci_packages.contains(&package);
        Ok((!have).then(|| BuildAttempt {
            kind: BuildAttempt::SYSTEM_PACKAGE.into(),
            action: package,
            found: m.thing(),
            line: m.line.clone(),
            log: log.to_owned(),
            source: format!("{path} in Debian {suite}'s Contents-amd64"),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_index_is_fetched_from_the_bases_mirror_and_searched_as_a_stream() {
        let df = contents_dockerfile("swe-forge/base:trixie-1");
        assert!(df.starts_with("FROM swe-forge/base:trixie-1\n"), "{df}");
        assert!(df.contains("\"$m/dists/$s/main/Contents-amd64.gz\" /swe-forge-contents.gz"), "{df}");
        let m = swe_forge_recipes::missing_dependency("t.c:1:10: fatal error: cmocka.h: No such file or directory")
            .unwrap();
        assert_eq!(
            lookup_script(&m),
            "zcat /swe-forge-contents.gz | grep -E -e '(^|/)(cmocka\\.h)[[:space:]]' | head -n 2000; true"
        );
    }

    fn attempt(kind: &str, action: &str) -> BuildAttempt {
        BuildAttempt { kind: kind.into(), action: action.into(), ..BuildAttempt::default() }
    }

    #[test]
    fn a_records_attempts_make_the_recipe_again() {
        let mut r = Recipe::named("c-cmake").unwrap();
        let attempts = [
            attempt(BuildAttempt::SYSTEM_PACKAGE, "libcmocka-dev"),
            attempt(BuildAttempt::FALLBACK, "Unix Makefiles"),
            attempt(BuildAttempt::SYSTEM_PACKAGE, "libcmocka-dev"),
        ];
        apply_attempts(&mut r, &attempts);
        assert_eq!(r.system_packages, ["libcmocka-dev"]);
        assert!(r.setup[0].contains("-G \"Unix Makefiles\""), "{}", r.setup[0]);
        assert_eq!(chosen_build_system(&attempts), None);
        let systems = vec!["c-cmake".to_owned(), "c-meson".to_owned(), "c-autotools".to_owned()];
        assert_eq!(next_build_system(&systems, "c-cmake", &[]), Some("c-meson"));
        let moved = [attempt(BuildAttempt::BUILD_SYSTEM, "c-meson")];
        assert_eq!(chosen_build_system(&moved), Some("c-meson"));
        assert_eq!(next_build_system(&systems, "c-meson", &moved), Some("c-autotools"));
        assert_eq!(next_build_system(&systems, "c-autotools", &moved), None);
        // A recipe an override named is not one of the tree's: no other is tried.
        assert_eq!(next_build_system(&systems, "c-make", &[]), None);
        let detail = "setup exited with Some(1):\nninja: error: 'x/lib/libgmock.a', needed by 'y', missing and no known rule to make it\n";
        let a = fallback_attempt(&Recipe::named("c-cmake").unwrap(), detail).unwrap();
        assert_eq!((a.action.as_str(), a.log.as_str()), ("Unix Makefiles", "setup"));
        assert!(a.line.starts_with("ninja: error: 'x/lib/libgmock.a'"), "{}", a.line);
        assert_eq!(fallback_attempt(&Recipe::named("c-autotools").unwrap(), detail), None);
    }
}
