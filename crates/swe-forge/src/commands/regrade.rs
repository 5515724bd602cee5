//! `swe-forge regrade`: validated records re-derived from their kept logs, no container run.

use anyhow::Result;
use swe_forge_core::Instance;

use crate::cli::RegradeArgs;
use crate::records::{read_records, write_records};
use crate::validation::print_summary;

pub fn regrade_command(args: RegradeArgs) -> Result<()> {
    let records = read_records(&args.records)?;
    let mut out: Vec<Instance> = Vec::with_capacity(records.len());
    let mut changed = Vec::new();
    for r in &records {
        let new = swe_forge_validate::regrade(r, &args.work_dir)?;
        if new.status() != r.status() || new.fixed_tests != r.fixed_tests || new.p2p_tests != r.p2p_tests {
            changed.push(format!(
                "{}: {:?} -> {:?}, FAIL_TO_PASS {} -> {}, PASS_TO_PASS {} -> {}",
                r.instance_id,
                r.status(),
                new.status(),
                r.fixed_tests.len(),
                new.fixed_tests.len(),
                r.p2p_tests.len(),
                new.p2p_tests.len()
            ));
        }
        out.push(new);
    }
    write_records(&args.out, &out)?;
    if args.out.as_os_str() != "-" {
        print_summary(&out);
    }
    eprintln!("re-graded {} records without running a container; {} changed", out.len(), changed.len());
    for c in changed {
        eprintln!("  {}", crate::terminal::clean(&c.to_string()));
    }
    Ok(())
}
