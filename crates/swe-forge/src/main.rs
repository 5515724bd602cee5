//! The `swe-forge` binary: parses the command line, resolves settings, runs a command and
//! turns library errors into messages and exit codes (`exit::Exit`: 0 success, 1 failure, 2 usage,
//! 130 stopped by SIGINT or SIGTERM, 141 stdout closed by its reader).

// The binary is the one crate that owns stdout (libraries warn on printing).
#![allow(clippy::print_stdout)]

#[macro_use]
mod exit;
mod cli;
mod commands;
mod decisions;
mod engine;
mod exporting;
mod interrupt;
mod records;
mod reporter;
mod resumable;
mod settings;
mod ship;
mod synthetic;
mod terminal;
mod validation;
mod written;

use std::process::ExitCode;

use clap::Parser;

use crate::exit::Exit;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    if cli.global.quiet {
        reporter::set_quiet();
    }
    let filter = tracing_subscriber::EnvFilter::try_from_env("SWE_FORGE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(log_filter(cli.global.verbose, cli.global.quiet)));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(terminal::stderr_colour(cli.global.color))
        .init();
    tracing::debug!(command = ?std::env::args().skip(1).find(|a| !a.starts_with('-')), version = env!("SWE_FORGE_VERSION"), "starting");
    match commands::dispatch(cli) {
        Ok(()) => Exit::Success.into(),
        Err(e) => {
            let exit = Exit::of_error(&e);
            // A stop by a signal said what was cleaned up; a closed stdout has no reader to tell.
            if !matches!(exit, Exit::Interrupted | Exit::BrokenPipe) {
                // Causes may quote API answers, names and records: no control characters, and no
                // input line of megabytes (a parser's error quotes the line).
                for line in error_lines(&e) {
                    eprintln!("{line}");
                }
            }
            exit.into()
        }
    }
}

/// The lines that report `e`: `error: ` and its message, then `  caused by: ` and each cause the
/// message above it does not already quote. An error that puts its source's text in its own
/// message (`writing out.jsonl: No space left on device (os error 28)`) and gives it as its
/// source too would otherwise say the cause twice.
fn error_lines(e: &anyhow::Error) -> Vec<String> {
    let mut lines = vec![format!("error: {}", terminal::clean_error(&e.to_string()))];
    let mut above = e.to_string();
    for cause in e.chain().skip(1) {
        let text = cause.to_string();
        if text.is_empty() || !above.contains(&text) {
            lines.push(format!("  caused by: {}", terminal::clean_error(&text)));
        }
        above = text;
    }
    lines
}

/// The log filter of `-v` (count), `-q` and neither: warnings and errors of every crate by
/// default; `-v` adds swe-forge's own debug lines (its crates are `swe_forge*`), `-vv` every
/// crate's (the Docker client's, hyper's, ...), `-vvv` trace; `-q` errors only.
fn log_filter(verbose: u8, quiet: bool) -> &'static str {
    match (verbose, quiet) {
        (_, true) => "error",
        (0, _) => "warn",
        (1, _) => "warn,swe_forge=debug",
        (2, _) => "debug",
        _ => "trace",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A disk-full error wrapped with its cause in the message and as its source says the cause
    /// once (issue #60: `caused by:` repeated it); a context above it still gets its cause line.
    #[test]
    fn an_error_says_its_cause_once() {
        /// As the libraries' thiserror errors do: `#[error("writing {path}: {source}")]`.
        #[derive(Debug)]
        struct Write {
            path: String,
            source: std::io::Error,
        }
        impl std::fmt::Display for Write {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "writing {}: {}", self.path, self.source)
            }
        }
        impl std::error::Error for Write {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.source)
            }
        }
        let full = std::io::Error::from_raw_os_error(28);
        let cause = full.to_string();
        let e = anyhow::Error::new(Write { path: "out.jsonl".into(), source: full }).context("exporting the dataset");
        let lines = error_lines(&e);
        assert_eq!(
            lines,
            ["error: exporting the dataset".to_owned(), format!("  caused by: writing out.jsonl: {cause}")],
            "{lines:#?}"
        );
        let plain = anyhow::Error::new(std::io::Error::from_raw_os_error(28)).context("writing out.jsonl");
        assert_eq!(error_lines(&plain), ["error: writing out.jsonl".to_owned(), format!("  caused by: {cause}")]);
    }
}
