//! `swe-forge parse`: one test log, result file or results directory -> per-test statuses as
//! JSON lines on stdout (`{"id":…,"msb":…,"status":…}`), warnings on stderr. For debugging
//! recipes: what would validation see in this log? Multi-SWE-bench names follow the handler of
//! `--repo` where handlers differ (Go subtests), full names without it.

use std::fs::File;
use std::io::{self, BufWriter, Cursor, Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde_json::json;
use swe_forge_core::TestStatus;
use swe_forge_logparse::{
    Framework, MsbNaming, ParsedLog, detect, exit_code_consistent, msb_rollup, parse_files, parse_reader,
};

use crate::cli::ParseArgs;

/// How much of a log detection reads.
const DETECT_PREFIX: u64 = 16 << 20;

pub fn parse_command(args: ParseArgs) -> Result<()> {
    let meta = std::fs::metadata(&args.path).with_context(|| format!("reading {}", args.path.display()))?;
    let (framework, mut parsed) =
        if meta.is_dir() { parse_dir(&args.path, args.framework)? } else { parse_file(&args.path, args.framework)? };
    if let Some(repo) = &args.repo {
        let Some((org, name)) = repo.split_once('/') else { bail!("--repo {repo}: give it as owner/name") };
        parsed.name_go_subtests(framework, MsbNaming::builtin()?.go_subtests(org, name));
    }
    for w in &parsed.warnings {
        eprintln!("warning: {w}");
    }
    if let Some(problem) = exit_code_consistent(&parsed, args.exit_code) {
        eprintln!("warning: {problem}");
    }
    let count = |s: TestStatus| parsed.tests.values().filter(|v| **v == s).count();
    eprintln!(
        "{} tests with the {framework} parser: {} passed, {} failed, {} skipped",
        parsed.tests.len(),
        count(TestStatus::Pass),
        count(TestStatus::Fail),
        count(TestStatus::Skip)
    );
    match write_lines(&parsed, args.msb) {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other.context("writing to stdout"),
    }
}

fn write_lines(parsed: &ParsedLog, msb: bool) -> io::Result<()> {
    let mut out = BufWriter::new(io::stdout().lock());
    if msb {
        for (name, status) in msb_rollup(parsed) {
            writeln!(out, "{}", json!({ "msb": name, "status": status }))?;
        }
    } else {
        for (id, status) in &parsed.tests {
            writeln!(out, "{}", json!({ "id": id, "msb": parsed.msb_names.get(id), "status": status }))?;
        }
    }
    out.flush()
}

fn parse_file(path: &Path, framework: Option<Framework>) -> Result<(Framework, ParsedLog)> {
    let mut file = File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let mut prefix = Vec::new();
    let framework = match framework {
        Some(f) => f,
        None => {
            (&mut file)
                .take(DETECT_PREFIX)
                .read_to_end(&mut prefix)
                .with_context(|| format!("reading {}", path.display()))?;
            match detect(&prefix) {
                Some(f) => f,
                None => bail!("{}: no known test output format found; name one with --framework", path.display()),
            }
        }
    };
    Ok((framework, parse_reader(framework, Cursor::new(prefix).chain(file))))
}

/// Every file under `dir`, with its path relative to `dir` (`/`-separated), in path order.
fn files_under(dir: &Path) -> Result<Vec<(String, PathBuf)>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).with_context(|| format!("listing {}", d.display()))? {
            let path = entry?.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel = path.strip_prefix(dir).unwrap_or(&path).to_string_lossy().replace('\\', "/");
                out.push((rel, path));
            }
        }
    }
    out.sort();
    Ok(out)
}

fn has_extension(rel: &str, ext: &str) -> bool {
    rel.rsplit_once('.').is_some_and(|(_, e)| e.eq_ignore_ascii_case(ext))
}

fn parse_dir(dir: &Path, framework: Option<Framework>) -> Result<(Framework, ParsedLog)> {
    let all = files_under(dir)?;
    let framework = match framework {
        Some(f) => f,
        None => {
            if all.iter().any(|(rel, _)| has_extension(rel, "trs")) {
                Framework::Automake
            } else if let Some((rel, path)) = all.iter().find(|(rel, _)| has_extension(rel, "xml")) {
                let head = read_prefix(path)?;
                detect(&head).with_context(|| format!("{}/{rel}: not a known XML report", dir.display()))?
            } else {
                bail!("{}: no .xml or .trs result files found; name the format with --framework", dir.display());
            }
        }
    };
    let mut files = Vec::new();
    for (rel, path) in all {
        if framework.result_file_extension().is_none_or(|ext| has_extension(&rel, ext)) {
            let bytes = std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
            files.push((rel, bytes));
        }
    }
    Ok((framework, parse_files(framework, &files)))
}

fn read_prefix(path: &Path) -> Result<Vec<u8>> {
    let mut head = Vec::new();
    File::open(path)
        .and_then(|f| f.take(DETECT_PREFIX).read_to_end(&mut head))
        .with_context(|| format!("reading {}", path.display()))?;
    Ok(head)
}
