//! How the process ends: [`Exit`], the one list of exit codes (shown by `swe-forge --help` and in
//! the README), what an error means for it, and the writes to stdout every command makes
//! ([`outln!`]), which end the process with [`Exit::BrokenPipe`] when the reader went away.

use std::io::{self, Write};
use std::process::ExitCode;

/// The exit codes of `swe-forge`, every command alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Exit {
    /// The command did what it was asked (for `evaluate`: whatever the outcomes).
    Success = 0,
    /// The command could not do it; `error:` and its causes say why.
    Failure = 1,
    /// The command line is wrong: an unknown flag, a missing argument, flags that do not go together.
    Usage = 2,
    /// Stopped by SIGINT or SIGTERM (128 + 2); what was finished is kept, run again to resume.
    Interrupted = 130,
    /// Stdout was closed by its reader (`swe-forge parse LOG | head`; 128 + SIGPIPE 13), as `cat` ends.
    BrokenPipe = 141,
}

impl Exit {
    /// Every exit code, in order.
    pub const ALL: [Exit; 5] = [Exit::Success, Exit::Failure, Exit::Usage, Exit::Interrupted, Exit::BrokenPipe];

    /// The number the process exits with.
    pub fn code(self) -> u8 {
        self as u8
    }

    /// What the code means, one line.
    pub fn meaning(self) -> &'static str {
        match self {
            Exit::Success => "success",
            Exit::Failure => "failure (the error and its causes are printed)",
            Exit::Usage => "usage error (unknown flag, missing argument, flags that do not go together)",
            Exit::Interrupted => "stopped by SIGINT or SIGTERM (finished work is kept; run again to resume)",
            Exit::BrokenPipe => "stdout closed by its reader (broken pipe, e.g. `| head`)",
        }
    }

    /// The `Exit codes:` section of the top command's `--help`.
    pub fn help() -> String {
        let mut text = String::from("Exit codes:\n");
        for exit in Exit::ALL {
            text.push_str(&format!("  {:<4} {}\n", exit.code(), exit.meaning()));
        }
        text
    }

    /// What an error a command ended with means: a signal's stop, a closed stdout found anywhere
    /// in its causes (by its `io::ErrorKind`), a usage error, or a failure.
    pub fn of_error(e: &anyhow::Error) -> Exit {
        if e.is::<crate::interrupt::Interrupted>() {
            return Exit::Interrupted;
        }
        if e.chain().any(|c| c.downcast_ref::<io::Error>().is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)) {
            return Exit::BrokenPipe;
        }
        if e.is::<Usage>() {
            return Exit::Usage;
        }
        Exit::Failure
    }
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> ExitCode {
        ExitCode::from(exit.code())
    }
}

/// A usage error a command finds after clap has parsed the line (flags that do not go together
/// in a way clap cannot express): exit code 2, as clap's own.
#[derive(Debug)]
pub struct Usage(pub String);

impl std::fmt::Display for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Usage {}

/// Whether the command writes its data (records) to stdout: then [`outln!`]'s lines go to stderr.
static DATA_ON_STDOUT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Takes note of an output of the command: when it is stdout (`-`, `/dev/stdout`), stdout carries
/// data only from then on, and the summaries [`outln!`] prints go to stderr.
pub fn output_to(path: &std::path::Path) {
    let stdout = path.as_os_str() == "-"
        || ["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"].iter().any(|s| path.as_os_str() == *s);
    if stdout {
        DATA_ON_STDOUT.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Writes one line to stdout (to stderr when stdout carries the data, [`output_to`]); a reader
/// that went away ends the process with [`Exit::BrokenPipe`] at once (nothing more can be said),
/// any other write error with [`Exit::Failure`].
pub fn print_line(args: std::fmt::Arguments<'_>) {
    if DATA_ON_STDOUT.load(std::sync::atomic::Ordering::Relaxed) {
        let mut err = io::stderr().lock();
        // Nothing better to do when stderr is gone.
        let _ = err.write_fmt(args).and_then(|()| err.write_all(b"\n"));
        return;
    }
    let mut out = io::stdout().lock();
    if let Err(e) = out.write_fmt(args).and_then(|()| out.write_all(b"\n")) {
        end_on_write_error(&e);
    }
}

/// Writes `bytes` to stdout and flushes, with [`print_line`]'s ending on errors.
pub fn print_bytes(bytes: &[u8]) {
    let mut out = io::stdout().lock();
    if let Err(e) = out.write_all(bytes).and_then(|()| out.flush()) {
        end_on_write_error(&e);
    }
}

fn end_on_write_error(e: &io::Error) -> ! {
    let exit = if e.kind() == io::ErrorKind::BrokenPipe {
        Exit::BrokenPipe
    } else {
        eprintln!("error: writing to stdout: {e}");
        Exit::Failure
    };
    std::process::exit(i32::from(exit.code()))
}

/// `println!` for the binary's results on stdout, through [`print_line`]: a closed stdout ends the
/// process with 141 (by `io::ErrorKind`), never a panic.
macro_rules! outln {
    () => {
        $crate::exit::print_line(format_args!(""))
    };
    ($($arg:tt)*) => {
        $crate::exit::print_line(format_args!($($arg)*))
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_is_listed_once_in_the_help() {
        let help = Exit::help();
        let codes: Vec<u8> = Exit::ALL.iter().map(|e| e.code()).collect();
        assert_eq!(codes, [0, 1, 2, 130, 141]);
        for exit in Exit::ALL {
            assert_eq!(help.matches(&format!("  {:<4} ", exit.code())).count(), 1, "{help}");
        }
    }

    #[test]
    fn an_error_s_exit_code_is_told_by_its_type_and_its_causes() {
        let pipe = anyhow::Error::new(io::Error::from(io::ErrorKind::BrokenPipe)).context("writing records to stdout");
        assert_eq!(Exit::of_error(&pipe), Exit::BrokenPipe);
        let other = anyhow::Error::new(io::Error::from(io::ErrorKind::PermissionDenied)).context("writing");
        assert_eq!(Exit::of_error(&other), Exit::Failure);
        assert_eq!(Exit::of_error(&anyhow::Error::new(Usage("--x needs --y".into()))), Exit::Usage);
        assert_eq!(Exit::of_error(&anyhow::anyhow!("no engine")), Exit::Failure);
    }
}
