//! Files as every swe-forge command writes and reads them.
//!
//! - [`Output`]: the one writer of output files. A regular file (or a new one) is written to an
//!   unpredictable temporary file created with `O_EXCL` in its folder and renamed over it, so a
//!   reader or a crash sees the old file or the complete new one; a symlink is never replaced
//!   (its target is written, atomically when the target is a regular file); devices, FIFOs and
//!   `-` (stdout) are written through. [`Batch`] renames the outputs of one run together;
//!   [`remove_pending_temps`] is what a signal handler calls. [`write_file`] and [`write_with`]
//!   write a whole file through it (the one atomic file writer: no crate wraps `Output` again).
//! - [`same_file`]: whether two paths, existing or not, end at one file (two outputs of a command,
//!   or an output and its input, must not).
//! - [`read_tree`] and [`read_capped`]: result folders and logs read without following symlinks
//!   out of the tree or into loops, without blocking on FIFOs, and with at most [`READ_CAP`]
//!   bytes of each file in memory (head and tail kept).
//! - [`Spool`]: bytes kept in an unnamed temporary file and read back by place, for commands that
//!   stream records and write them out again in another order.
//!
//! Knows nothing of records or formats.

mod error;
mod output;
mod same;
mod spool;
mod tree;

pub use error::OutputError;
pub use output::{Batch, Output, PendingDir, remove_after_commit, remove_pending_temps, write_file, write_with};
pub use same::same_file;
pub use spool::{Slot, Spool};
pub use tree::{Capped, READ_CAP, Skipped, Tree, read_capped, read_file_capped, read_tree};

#[cfg(test)]
mod tests;
