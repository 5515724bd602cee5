//! `swe-forge regrade`: validated records re-derived from their kept logs, no container run.
//! Records are read, re-graded and written one at a time: memory does not grow with the dataset
//! (the output file is put in place at the end, so an error leaves the previous one). A record
//! whose kept log is not the one its run wrote (size or sha256), or cannot be read (a FIFO, a
//! folder, unreadable), is written as it was, and said.

use anyhow::{Context, Result};

use swe_forge_validate::RegradeError;

use crate::cli::RegradeArgs;
use crate::records::open_records;
use crate::validation::SummaryTable;

pub fn regrade_command(args: RegradeArgs) -> Result<()> {
    let to_stdout = args.out.as_os_str() == "-";
    crate::exit::output_to(&args.out);
    let context = crate::exporting::jsonl_context(&args.out);
    let mut out = swe_forge_export::JsonlWriter::create(&args.out).with_context(|| context.clone())?;
    // The table goes to stdout as the records come, unless the records themselves go there; its
    // header with the first row, so that a run failing before any says nothing on stdout.
    let mut table: Option<SummaryTable> = None;
    let (mut total, mut changed, mut edited, mut unreadable) = (0usize, 0usize, 0usize, 0usize);
    for r in open_records(&args.records)? {
        let r = r?;
        let new = match swe_forge_validate::regrade(&r, &args.work_dir) {
            // An edited or unreadable log is that instance's: it keeps its verdict, and the
            // others are graded.
            Err(e @ (RegradeError::EditedLog { .. } | RegradeError::UnreadableLog { .. })) => {
                let count = if matches!(e, RegradeError::EditedLog { .. }) { &mut edited } else { &mut unreadable };
                *count += 1;
                eprintln!("  {}: left as it was", crate::terminal::clean(&e.to_string()));
                r.clone()
            }
            other => other?,
        };
        if new.status() != r.status() || new.fixed_tests != r.fixed_tests || new.p2p_tests != r.p2p_tests {
            changed += 1;
            // Said as it is found: the list of changes is never held.
            let line = format!(
                "{}: {:?} -> {:?}, FAIL_TO_PASS {} -> {}, PASS_TO_PASS {} -> {}",
                r.instance_id,
                r.status(),
                new.status(),
                r.fixed_tests.len(),
                new.fixed_tests.len(),
                r.p2p_tests.len(),
                new.p2p_tests.len()
            );
            eprintln!("  {}", crate::terminal::clean(&line));
        }
        out.write(&new).with_context(|| context.clone())?;
        if !to_stdout && !args.json {
            table.get_or_insert_with(SummaryTable::start).row(&new);
        }
        total += 1;
    }
    out.finish().with_context(|| context.clone())?;
    if !to_stdout && !args.json {
        table.unwrap_or_else(SummaryTable::start).end();
    }
    if args.json {
        let value = serde_json::json!({
            "records": total,
            "changed": changed,
            "left_as_they_were": edited + unreadable,
            "edited_logs": edited,
            "unreadable_logs": unreadable,
            "out": args.out.display().to_string(),
        });
        outln!("{value}");
        return Ok(());
    }
    eprintln!("re-graded {total} records without running a container; {changed} changed");
    if edited > 0 {
        eprintln!(
            "{edited} left as they were: a kept log is not the one its run wrote (its size or sha256 is not the record's)"
        );
    }
    if unreadable > 0 {
        eprintln!("{unreadable} left as they were: a kept log cannot be read (not a regular file, or unreadable)");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn records(path: &std::path::Path) -> Vec<swe_forge_core::Instance> {
        std::fs::read_to_string(path).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    }

    /// A kept fix log edited after its run (every test now fails) would turn an accepted
    /// instance rejected: it is left as it was, and the others are re-graded.
    #[test]
    fn an_edited_log_leaves_its_instance_as_it_was() {
        let tmp = tempfile::tempdir().unwrap();
        let (input, work) = (tmp.path().join("in.jsonl"), tmp.path().join("work"));
        crate::synthetic::write_synthetic(&input, 3, Some(&work)).unwrap();
        let before = records(&input);
        let regrade = |name: &str| {
            let out = tmp.path().join(name);
            regrade_command(RegradeArgs {
                records: input.clone(),
                work_dir: work.clone(),
                out: out.clone(),
                json: false,
            })
            .unwrap();
            records(&out)
        };
        let same = regrade("same.jsonl");
        assert!(same.iter().zip(&before).all(|(a, b)| a.status() == b.status() && a.fixed_tests == b.fixed_tests));
        let fix_log = work.join("logs").join(&before[1].instance_id).join("fix.log");
        let text = std::fs::read_to_string(&fix_log).unwrap();
        std::fs::write(&fix_log, text.replace(" ... ok", " ... FAILED")).unwrap();
        let edited = regrade("edited.jsonl");
        assert!(edited[1] == before[1], "the instance of the edited log is left as it was");
        assert!(edited[0] == same[0] && edited[2] == same[2], "the others are re-graded");
        let e = swe_forge_validate::regrade(&before[1], &work).unwrap_err();
        assert!(matches!(e, swe_forge_validate::RegradeError::EditedLog { .. }), "{e}");
        assert!(
            e.to_string().contains("fix.log is not the one its run wrote (1131 bytes, the run's log 1039 bytes)"),
            "{e}"
        );
    }

    /// A kept log that is a FIFO (or a folder) is that instance's: it is left as it was, said to
    /// be no regular file (not "missing"), and the others are re-graded (issue #60).
    #[test]
    fn a_kept_log_that_is_no_regular_file_leaves_its_instance_as_it_was() {
        let tmp = tempfile::tempdir().unwrap();
        let (input, work) = (tmp.path().join("in.jsonl"), tmp.path().join("work"));
        crate::synthetic::write_synthetic(&input, 3, Some(&work)).unwrap();
        let before = records(&input);
        let out = tmp.path().join("out.jsonl");
        let regrade = || {
            regrade_command(RegradeArgs {
                records: input.clone(),
                work_dir: work.clone(),
                out: out.clone(),
                json: false,
            })
            .unwrap();
            records(&out)
        };
        let same = regrade();
        let logs = work.join("logs");
        let fix_log = logs.join(&before[1].instance_id).join("fix.log");
        std::fs::remove_file(&fix_log).unwrap();
        let o = std::process::Command::new("mkfifo").arg(&fix_log).output().unwrap();
        assert!(o.status.success());
        let test_log = logs.join(&before[2].instance_id).join("test.log");
        std::fs::remove_file(&test_log).unwrap();
        std::fs::create_dir(&test_log).unwrap();
        let after = regrade();
        assert!(after[1] == before[1] && after[2] == before[2], "the instances of the bad logs are left as they were");
        assert!(after[0] == same[0], "the other is re-graded");
        let e = swe_forge_validate::regrade(&before[1], &work).unwrap_err();
        assert!(e.to_string().ends_with("fix.log cannot be read: not a regular file but a FIFO"), "{e}");
        let e = swe_forge_validate::regrade(&before[2], &work).unwrap_err();
        assert!(e.to_string().ends_with("test.log cannot be read: not a regular file but a folder"), "{e}");
    }
}
