//! `swe-forge regrade`: validated records re-derived from their kept logs, no container run.
//! Records are read, re-graded and written one at a time: memory does not grow with the dataset
//! (the output file is put in place at the end, so an error leaves the previous one).

use anyhow::{Context, Result};

use crate::cli::RegradeArgs;
use crate::records::open_records;
use crate::validation::SummaryTable;

pub fn regrade_command(args: RegradeArgs) -> Result<()> {
    let to_stdout = args.out.as_os_str() == "-";
    crate::exit::output_to(&args.out);
    let context = crate::exporting::jsonl_context(&args.out);
    let mut out = swe_forge_export::JsonlWriter::create(&args.out).with_context(|| context.clone())?;
    // The table goes to stdout as the records come, unless the records themselves go there.
    let mut table = (!to_stdout).then(SummaryTable::start);
    let (mut total, mut changed) = (0usize, 0usize);
    for r in open_records(&args.records)? {
        let r = r?;
        let new = swe_forge_validate::regrade(&r, &args.work_dir)?;
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
        if let Some(t) = &mut table {
            t.row(&new);
        }
        total += 1;
    }
    out.finish().with_context(|| context.clone())?;
    if let Some(t) = table {
        t.end();
    }
    eprintln!("re-graded {total} records without running a container; {changed} changed");
    Ok(())
}
