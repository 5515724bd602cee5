//! The `swe-forge` binary: parses the command line, resolves settings, runs a command and
//! turns library errors into messages and exit codes (0 success, 1 failure, 2 usage, 130 stopped by SIGINT or SIGTERM).

// The binary is the one crate that owns stdout (libraries warn on printing).
#![allow(clippy::print_stdout)]

mod cli;
mod commands;
mod engine;
mod exporting;
mod interrupt;
mod records;
mod reporter;
mod settings;
mod ship;
mod terminal;
mod validation;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    quiet_on_broken_pipe();
    let cli = cli::Cli::parse();
    let level = match (cli.global.verbose, cli.global.quiet) {
        (true, _) => "debug",
        (_, true) => "error",
        _ => "warn",
    };
    if cli.global.quiet {
        reporter::set_quiet();
    }
    let filter = tracing_subscriber::EnvFilter::try_from_env("SWE_FORGE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(level));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(terminal::stderr_colour())
        .init();
    match commands::dispatch(cli) {
        Ok(()) => ExitCode::SUCCESS,
        // What was cleaned up is said already.
        Err(e) if e.is::<interrupt::Interrupted>() => ExitCode::from(interrupt::EXIT_INTERRUPTED),
        Err(e) => {
            // Causes may quote API answers, names and records: no control characters.
            eprintln!("error: {}", terminal::clean(&e.to_string()));
            for cause in e.chain().skip(1) {
                eprintln!("  caused by: {}", terminal::clean(&cause.to_string()));
            }
            ExitCode::from(1)
        }
    }
}

/// Output piped into a reader that stopped (`swe-forge parse LOG | head`) ends the process
/// quietly with 141, as `cat` would, instead of a panic message: printing panics on a closed
/// stdout. Every other panic goes to the default hook.
fn quiet_on_broken_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or_default();
        if message.contains("Broken pipe") {
            std::process::exit(141);
        }
        default(info);
    }));
}
