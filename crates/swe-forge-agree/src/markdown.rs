//! Markdown for people: the agreement report ([`agreement_markdown`]) and the environments table
//! of one or more reports over the same instances ([`environments_markdown`]). Long test lists
//! are cut to a few names; the JSON report has all of them.

use std::collections::BTreeMap;
use std::fmt::Write;

use swe_forge_core::MarkdownTable;

use crate::{AgreementReport, ImageFacts, InstanceAgreement, ListComparison, Outcome, Tally};

/// Names of differing tests shown per list before eliding the rest.
const SHOWN: usize = 8;

/// The agreement report as Markdown: summary tables, one row per instance, then the tests that
/// differ with their causes.
pub fn agreement_markdown(report: &AgreementReport) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# Agreement with the published test lists: profile `{}`\n", report.profile);
    let _ = writeln!(
        s,
        "Lists compared in `{}` naming. FAIL_TO_PASS = f2p + s2p + n2p; an instance agrees when FAIL_TO_PASS and \
         PASS_TO_PASS are both exact. J = Jaccard similarity. Runs are passed/failed/skipped, published → ours.\n",
        report.naming
    );
    if !report.commands.is_empty() {
        let mut table = MarkdownTable::new(["language or recipe", "test command of the profile"]);
        for (k, v) in &report.commands {
            table.row([k.clone(), format!("`{}`", code(v))]);
        }
        let _ = writeln!(s, "{table}");
    }
    let o = &report.overall;
    let _ = writeln!(
        s,
        "**{} of {} compared instances agree exactly** ({} of {} instances ran; {} images built).\n",
        o.exact_both, o.compared, o.compared, o.instances, o.images_built
    );
    s.push_str("## Summary\n\n");
    s.push_str(&summary_table(report).to_string());
    s.push_str("\n## Instances\n\n");
    s.push_str(&instances_table(report).to_string());
    s.push_str("\n## Differences\n");
    for r in report.instances.iter().filter(|r| !r.agrees && r.outcome != Outcome::Pending) {
        let _ = writeln!(s, "\n### {}\n", r.instance_id);
        if let Some(cmd) = &r.test_command {
            let _ = writeln!(s, "Test command: `{}`\n", cell(cmd));
        }
        for rej in &r.rejections {
            let _ = writeln!(s, "- rejected: {}", cell(rej));
        }
        for c in &r.causes {
            let what = if c.tests > 0 { format!("{} test(s)", c.tests) } else { "the instance".to_owned() };
            let _ = writeln!(s, "- cause `{}` ({what}): {}; e.g. {}", c.cause, c.cause.describe(), quoted(&c.examples));
        }
        for (label, cmp) in [("FAIL_TO_PASS", &r.fail_to_pass), ("PASS_TO_PASS", &r.pass_to_pass)] {
            let Some(cmp) = cmp.as_ref().filter(|c| !c.exact) else { continue };
            if !cmp.only_published.is_empty() {
                let _ = writeln!(
                    s,
                    "- {label} only published ({}): {}",
                    cmp.only_published.len(),
                    quoted(&cmp.only_published)
                );
            }
            if !cmp.only_ours.is_empty() {
                let _ = writeln!(s, "- {label} only ours ({}): {}", cmp.only_ours.len(), quoted(&cmp.only_ours));
            }
        }
    }
    s
}

/// The environments table: per instance, whether its image was built (or why not), build time,
/// unique bytes, and for each report whether FAIL_TO_PASS and PASS_TO_PASS equal the published
/// lists. Rows follow the first report; image facts come from the first report that has them.
pub fn environments_markdown(reports: &[&AgreementReport]) -> String {
    let mut s = String::new();
    let Some(first) = reports.first() else { return s };
    // How many instances each environment image serves (an instance counts once, whichever report
    // knows its environment).
    let mut sharing: BTreeMap<&str, usize> = BTreeMap::new();
    for row in &first.instances {
        let env = reports
            .iter()
            .filter_map(|r| r.instances.iter().find(|x| x.instance_id == row.instance_id))
            .find_map(|r| r.image.environment.as_deref());
        if let Some(env) = env {
            *sharing.entry(env).or_default() += 1;
        }
    }
    let mut headers: Vec<String> =
        ["instance", "language", "image", "build time", "instance adds", "environment adds (instances on it)"]
            .map(str::to_owned)
            .into();
    for r in reports {
        headers.push(format!("FAIL_TO_PASS = published ({})", r.profile));
        headers.push(format!("PASS_TO_PASS = published ({})", r.profile));
    }
    let mut table = MarkdownTable::new(headers).right(3..6);
    for row in &first.instances {
        let rows: Vec<Option<&InstanceAgreement>> =
            reports.iter().map(|r| r.instances.iter().find(|x| x.instance_id == row.instance_id)).collect();
        let facts = rows.iter().flatten().map(|r| &r.image);
        let built = rows.iter().flatten().find(|r| r.image.image.is_some());
        let image = match (built, row.outcome) {
            (Some(_), _) => "built".to_owned(),
            (None, Outcome::Pending) => "not attempted".to_owned(),
            (None, _) => format!("not built: {}", row.cause.map(|c| c.as_str()).unwrap_or("unknown")),
        };
        let build = facts.clone().find_map(|f| f.build_ms).map(duration).unwrap_or_else(|| "–".to_owned());
        let bytes = facts.clone().find_map(|f| f.unique_bytes).map(mib).unwrap_or_else(|| "–".to_owned());
        let env = match facts.clone().find(|f| f.environment.is_some()) {
            Some(f) => format!(
                "{} ({})",
                f.environment_bytes.map(mib).unwrap_or_else(|| "?".to_owned()),
                f.environment.as_deref().and_then(|e| sharing.get(e)).copied().unwrap_or(1)
            ),
            None if facts.clone().any(|f| f.unique_bytes.is_some()) => "none (built before environments)".to_owned(),
            None => "–".to_owned(),
        };
        let mut cells = vec![row.instance_id.clone(), row.language.clone(), image, build, bytes, env];
        for r in rows {
            let yes_no = |c: &Option<ListComparison>| match c {
                Some(c) if c.exact => "yes".to_owned(),
                Some(c) => format!("no (J {:.2})", c.jaccard),
                None => "–".to_owned(),
            };
            match r {
                Some(r) if r.outcome == Outcome::Compared => {
                    cells.extend([yes_no(&r.fail_to_pass), yes_no(&r.pass_to_pass)]);
                }
                _ => cells.extend(["–".to_owned(), "–".to_owned()]),
            }
        }
        table.row(cells);
    }
    s.push_str(&table.to_string());
    // Medians over the instances built on an environment: what one adds, and with its share.
    let mut alone: Vec<f64> = Vec::new();
    let mut shared: Vec<f64> = Vec::new();
    for row in &first.instances {
        let facts = reports.iter().filter_map(|r| r.instances.iter().find(|x| x.instance_id == row.instance_id));
        let facts: Vec<&ImageFacts> = facts.map(|r| &r.image).collect();
        let own = facts.iter().find_map(|f| f.unique_bytes);
        let env = facts.iter().find(|f| f.environment.is_some());
        if let (Some(own), Some(env)) = (own, env) {
            let n = env.environment.as_deref().and_then(|e| sharing.get(e)).copied().unwrap_or(1).max(1);
            alone.push(own as f64);
            shared.push(own as f64 + env.environment_bytes.unwrap_or(0) as f64 / n as f64);
        }
    }
    if !alone.is_empty() {
        let _ = writeln!(
            s,
            "\nOver the {} instances built on a repository environment: median bytes an instance adds {}, \
             with its share of its environment {}.",
            alone.len(),
            mib(median(&mut alone) as u64),
            mib(median(&mut shared) as u64)
        );
    }
    s
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 }
}

/// The summary table: all instances, then per language and per repository.
fn summary_table(report: &AgreementReport) -> MarkdownTable {
    let mut summary = MarkdownTable::new([
        "group",
        "instances",
        "images built",
        "compared",
        "exact f2p",
        "exact FAIL_TO_PASS",
        "exact PASS_TO_PASS",
        "both exact",
        "mean J FAIL_TO_PASS",
        "mean J PASS_TO_PASS",
        "causes (instances)",
    ])
    .right(1..10);
    summary.row(tally_row("**all**", &report.overall));
    for (k, t) in &report.by_language {
        summary.row(tally_row(&format!("language `{k}`"), t));
    }
    for (k, t) in &report.by_repo {
        summary.row(tally_row(&format!("repo `{k}`"), t));
    }
    summary
}

/// The instances table: one row per instance.
fn instances_table(report: &AgreementReport) -> MarkdownTable {
    let mut instances = MarkdownTable::new([
        "instance",
        "language",
        "outcome",
        "f2p",
        "FAIL_TO_PASS pub/ours (J)",
        "PASS_TO_PASS pub/ours (J)",
        "run",
        "test",
        "fix",
        "cause",
    ]);
    for r in &report.instances {
        instances.row(instance_row(r));
    }
    instances
}

/// The summary table's cells of one group.
fn tally_row(label: &str, t: &Tally) -> [String; 11] {
    let causes: Vec<String> = t.causes.iter().map(|(c, n)| format!("{c} {n}")).collect();
    [
        label.to_owned(),
        t.instances.to_string(),
        t.images_built.to_string(),
        t.compared.to_string(),
        t.exact_f2p.to_string(),
        t.exact_fail_to_pass.to_string(),
        t.exact_pass_to_pass.to_string(),
        t.exact_both.to_string(),
        format!("{:.2}", t.mean_jaccard_fail_to_pass),
        format!("{:.2}", t.mean_jaccard_pass_to_pass),
        if causes.is_empty() { "–".to_owned() } else { causes.join(", ") },
    ]
}

/// The instances table's cells of one instance.
fn instance_row(r: &InstanceAgreement) -> [String; 10] {
    let cmp = |c: &Option<ListComparison>| match c {
        Some(c) => format!("{}{}/{} ({:.2})", if c.exact { "✓ " } else { "✗ " }, c.published, c.ours, c.jaccard),
        None => "–".to_owned(),
    };
    let strict = match &r.f2p {
        Some(c) if c.exact => "✓".to_owned(),
        Some(_) => "✗".to_owned(),
        None => "–".to_owned(),
    };
    let outcome = match (r.outcome, r.agrees) {
        (Outcome::Compared, true) => "agrees",
        (Outcome::Compared, false) => "differs",
        (Outcome::NotRun, _) => "not run",
        (Outcome::Pending, _) => "pending",
    };
    let runs: Vec<String> = r
        .runs
        .iter()
        .map(|rc| {
            let p = rc.published;
            match rc.ours {
                Some(o) => format!("{}/{}/{} → {}/{}/{}", p.passed, p.failed, p.skipped, o.passed, o.failed, o.skipped),
                None => format!("{}/{}/{} → –", p.passed, p.failed, p.skipped),
            }
        })
        .collect();
    let run = |i: usize| runs.get(i).cloned().unwrap_or_else(|| "–".to_owned());
    let cause = r.cause.map(|c| format!("`{c}`")).unwrap_or_else(|| "–".to_owned());
    [
        r.instance_id.clone(),
        r.language.clone(),
        outcome.to_owned(),
        strict,
        cmp(&r.fail_to_pass),
        cmp(&r.pass_to_pass),
        run(0),
        run(1),
        run(2),
        cause,
    ]
}

/// Up to [`SHOWN`] names in backticks, with a count of the rest.
fn quoted(names: &[String]) -> String {
    let mut out: Vec<String> = names.iter().take(SHOWN).map(|n| format!("`{}`", cell(n))).collect();
    if names.len() > SHOWN {
        out.push(format!("and {} more", names.len() - SHOWN));
    }
    out.join(", ")
}

/// Text safe inside a table cell and backticks, outside a [`MarkdownTable`] (which escapes `|`
/// and line breaks itself).
fn cell(text: &str) -> String {
    code(text).replace('|', "\\|").replace('\n', " ")
}

/// Text safe inside backticks: a backtick would end them.
fn code(text: &str) -> String {
    text.replace('`', "'")
}

fn duration(ms: u64) -> String {
    let secs = ms / 1000;
    if secs >= 60 { format!("{} min {:02} s", secs / 60, secs % 60) } else { format!("{secs} s") }
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use swe_forge_logparse::Naming;

    use crate::{Cause, CauseCount, ImageFacts};

    fn row(id: &str, exact: bool) -> InstanceAgreement {
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let cmp = ListComparison::new(&names(&["a", "b|c"]), &names(if exact { &["a", "b|c"] } else { &["a"] }));
        InstanceAgreement {
            instance_id: id.into(),
            repo: "o/r".into(),
            language: "go".into(),
            naming: Naming::Msb,
            outcome: Outcome::Compared,
            status: swe_forge_core::ValidationStatus::Accepted,
            rejections: vec![],
            test_command: Some("go test -v ./...".into()),
            f2p: Some(cmp.clone()),
            fail_to_pass: Some(cmp.clone()),
            pass_to_pass: Some(ListComparison::new(&names(&[]), &names(&[]))),
            runs: vec![],
            agrees: exact,
            cause: (!exact).then_some(Cause::DifferentTestCommand),
            causes: if exact {
                vec![]
            } else {
                vec![CauseCount { cause: Cause::DifferentTestCommand, tests: 1, examples: names(&["b|c"]) }]
            },
            image: ImageFacts {
                image: Some("img".into()),
                build_ms: Some(95_000),
                unique_bytes: Some(3 << 20),
                environment: Some("env".into()),
                environment_bytes: Some(40 << 20),
            },
        }
    }

    #[test]
    fn agreement_markdown_has_summary_rows_and_differences() {
        let mut rows = vec![row("o__r-1", true), row("o__r-2", false)];
        rows[1].runs = vec![crate::RunCounts {
            phase: swe_forge_core::Phase::Run,
            published: crate::Counts { passed: 3, failed: 1, skipped: 0 },
            ours: None,
        }];
        rows[0].runs = rows[1].runs.clone();
        let report = AgreementReport::new("msb", Naming::Msb, rows.clone());
        let md = agreement_markdown(&report);
        assert!(md.contains("**1 of 2 compared instances agree exactly**"), "{md}");
        assert!(
            md.contains("\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n"),
            "numbers to the right: {md}"
        );
        let mut with_commands = report.clone();
        with_commands.commands.insert("go|x".into(), "go test `a|b`".into());
        let commands = agreement_markdown(&with_commands);
        assert!(commands.contains("\n| go\\|x | `go test 'a\\|b'` |\n"), "cells are escaped once: {commands}");
        assert!(
            md.contains("| **all** | 2 | 2 | 2 | 1 | 1 | 2 | 1 | 0.75 | 1.00 | different_test_command 1 |"),
            "{md}"
        );
        assert!(md.contains("### o__r-2"), "{md}");
        assert!(!md.contains("### o__r-1"), "agreeing instances list no differences");
        assert!(md.contains("`b\\|c`"), "pipes are escaped in cells: {md}");
        let env = environments_markdown(&[&report, &AgreementReport::new("default", Naming::Msb, rows.clone())]);
        assert!(
            env.contains("| o__r-1 | go | built | 1 min 35 s | 3.0 MiB | 40.0 MiB (2) | yes | yes | yes | yes |"),
            "{env}"
        );
        assert!(
            env.contains("| o__r-2 | go | built | 1 min 35 s | 3.0 MiB | 40.0 MiB (2) | no (J 0.50) | yes |"),
            "{env}"
        );
        // Both on one 40 MiB environment: 3 MiB each alone, 3 + 40 / 2 with their share.
        assert!(
            env.contains("median bytes an instance adds 3.0 MiB, with its share of its environment 23.0 MiB"),
            "{env}"
        );
        // An instance the first report has no image facts for counts on the environment another
        // report knows.
        let bare = AgreementReport::new("default", Naming::Msb, rows_without_env(rows.clone()));
        let env = environments_markdown(&[&bare, &report]);
        assert!(env.contains("| 40.0 MiB (2) |"), "{env}");
        // Built before environments: measured over the toolchain, and said so.
        let mut old = rows_without_env(rows);
        old.truncate(1);
        let env = environments_markdown(&[&AgreementReport::new("default", Naming::Msb, old)]);
        assert!(env.contains("| 3.0 MiB | none (built before environments) |"), "{env}");
        assert!(!env.contains("median"), "{env}");
    }

    fn rows_without_env(mut rows: Vec<InstanceAgreement>) -> Vec<InstanceAgreement> {
        for r in &mut rows {
            r.image.environment = None;
            r.image.environment_bytes = None;
        }
        rows
    }
}
