//! `swe-forge parse`: one test log, result file or results directory -> per-test statuses as
//! JSON lines on stdout (`{"id":…,"msb":…,"status":…}`), warnings on stderr. For debugging
//! recipes: what would validation see in this log? Multi-SWE-bench names follow the handler of
//! `--repo` where handlers differ (Go subtests), full names without it.

use std::fs::File;
use std::io::{self, BufWriter, Cursor, Read, Write};
use std::path::Path;

use anyhow::{Context, Result, bail};
use serde::Serialize;
use swe_forge_core::TestStatus;
use swe_forge_fs::{READ_CAP, read_capped, read_tree};
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
        parsed.name_as(framework, MsbNaming::builtin()?.repository(org, name));
    }
    for w in &parsed.warnings {
        eprintln!("warning: {}", crate::terminal::clean(&w.to_string()));
    }
    if let Some(problem) = exit_code_consistent(&parsed, args.exit_code) {
        eprintln!("warning: {}", crate::terminal::clean(&problem.to_string()));
    }
    let count = |s: TestStatus| parsed.tests.values().filter(|v| **v == s).count();
    eprintln!(
        "{} tests with the {framework} parser: {} passed, {} failed, {} skipped",
        parsed.tests.len(),
        count(TestStatus::Pass),
        count(TestStatus::Fail),
        count(TestStatus::Skip)
    );
    // A reader that went away (`| head`) ends the process with 141 (`crate::exit`).
    write_lines(&parsed, args.msb).context("writing to stdout")
}

/// One line of `parse`'s output: a test's canonical id, its Multi-SWE-bench name (null when the
/// parser gives none) and its status.
#[derive(Serialize)]
struct ParsedTest<'a> {
    id: &'a str,
    msb: Option<&'a str>,
    status: TestStatus,
}

/// One line of `parse --msb`: a Multi-SWE-bench name and the status its tests roll up to.
#[derive(Serialize)]
struct MsbTest<'a> {
    msb: &'a str,
    status: TestStatus,
}

fn write_lines(parsed: &ParsedLog, msb: bool) -> io::Result<()> {
    let mut out = BufWriter::new(io::stdout().lock());
    if msb {
        for (name, status) in msb_rollup(parsed) {
            json_line(&mut out, &MsbTest { msb: &name, status })?;
        }
    } else {
        for (id, status) in &parsed.tests {
            json_line(
                &mut out,
                &ParsedTest { id, msb: parsed.msb_names.get(id).map(String::as_str), status: *status },
            )?;
        }
    }
    out.flush()
}

fn json_line(out: &mut impl Write, value: &impl Serialize) -> io::Result<()> {
    serde_json::to_writer(&mut *out, value)?;
    writeln!(out)
}

fn parse_file(path: &Path, framework: Option<Framework>) -> Result<(Framework, ParsedLog)> {
    let mut file = File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let meta = file.metadata().with_context(|| format!("reading {}", path.display()))?;
    // A file longer than the cap is read as head and tail; a FIFO or device up to the cap.
    let (mut reader, cut): (Box<dyn Read>, Option<u64>) = if meta.is_file() && meta.len() <= READ_CAP {
        (Box::new(file), None)
    } else if meta.is_file() {
        let capped = read_capped(path, READ_CAP).with_context(|| format!("reading {}", path.display()))?;
        (Box::new(Cursor::new(capped.bytes)), Some(capped.total))
    } else {
        let mut head = Vec::new();
        (&mut file).take(READ_CAP).read_to_end(&mut head).with_context(|| format!("reading {}", path.display()))?;
        let more = head.len() as u64 == READ_CAP;
        (Box::new(Cursor::new(head)), more.then_some(READ_CAP))
    };
    let mut prefix = Vec::new();
    let framework = match framework {
        Some(f) => f,
        None => {
            (&mut reader)
                .take(DETECT_PREFIX)
                .read_to_end(&mut prefix)
                .with_context(|| format!("reading {}", path.display()))?;
            match detect(&prefix) {
                Some(f) => f,
                None => bail!("{}: no known test output format found; name one with --framework", path.display()),
            }
        }
    };
    let mut parsed = parse_reader(framework, Cursor::new(prefix).chain(reader));
    if let Some(total) = cut {
        parsed.warnings.push(format!(
            "{}: read {} MiB of {}: its head and tail when it is a file, its start otherwise",
            path.display(),
            READ_CAP >> 20,
            if meta.is_file() { format!("{total} bytes") } else { "an endless or unsized stream".to_owned() }
        ));
    }
    Ok((framework, parsed))
}

fn has_extension(rel: &str, ext: &str) -> bool {
    rel.rsplit_once('.').is_some_and(|(_, e)| e.eq_ignore_ascii_case(ext))
}

/// The files of a results folder: symlinks out of it, loops, FIFOs and devices left out, each
/// file read up to the cap (`swe_forge_fs::read_tree`), with a warning for each.
fn parse_dir(dir: &Path, framework: Option<Framework>) -> Result<(Framework, ParsedLog)> {
    let tree = read_tree(dir, READ_CAP).with_context(|| format!("reading {}", dir.display()))?;
    let framework = match framework {
        Some(f) => f,
        None => {
            if tree.files.iter().any(|(rel, _)| has_extension(rel, "trs")) {
                Framework::Automake
            } else if let Some((rel, bytes)) = tree.files.iter().find(|(rel, _)| has_extension(rel, "xml")) {
                detect(bytes).with_context(|| format!("{}/{rel}: not a known XML report", dir.display()))?
            } else {
                bail!("{}: no .xml or .trs result files found; name the format with --framework", dir.display());
            }
        }
    };
    let mut parsed = parse_files(framework, &tree.files);
    parsed.warnings.extend(tree.skipped.iter().map(|s| format!("{}/{s}", dir.display())));
    Ok((framework, parsed))
}
