//! The `swe-forge` binary: parses the command line, resolves settings, runs a command and
//! turns library errors into messages and exit codes (0 success, 1 failure, 2 usage, 130 stopped by SIGINT or SIGTERM).

// The binary is the one crate that owns stdout (libraries warn on printing).
#![allow(clippy::print_stdout)]

mod cli;
mod commands;
mod interrupt;
mod pipeline;
mod reporter;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    let filter = tracing_subscriber::EnvFilter::try_from_env("SWE_FORGE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(if cli.global.verbose { "debug" } else { "warn" }));
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).init();
    match commands::dispatch(cli) {
        Ok(()) => ExitCode::SUCCESS,
        // What was cleaned up is said already.
        Err(e) if e.is::<interrupt::Interrupted>() => ExitCode::from(interrupt::EXIT_INTERRUPTED),
        Err(e) => {
            eprintln!("error: {e}");
            for cause in e.chain().skip(1) {
                eprintln!("  caused by: {cause}");
            }
            ExitCode::from(1)
        }
    }
}
