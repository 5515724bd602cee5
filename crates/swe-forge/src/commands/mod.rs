//! One module per command; `dispatch` builds the async runtime and hands off.

mod bench;
pub(crate) mod curate;
mod evaluate;
mod export;
mod images;
mod mine;
mod parse;
pub(crate) mod publish;
mod regrade;
pub(crate) mod report;
mod revalidate;
pub(crate) mod review;
mod run;
mod validate;

use anyhow::Result;

use crate::cli::{Cli, Command};

pub fn dispatch(cli: Cli) -> Result<()> {
    // SIGINT and SIGTERM stop the command and remove this run's containers and unfinished
    // output files (`crate::interrupt`).
    let runtime = crate::interrupt::Runtime::new()?;
    match cli.command {
        Command::Validate(args) => runtime.block_on(validate::validate_command(args)),
        Command::Export(args) => runtime.run_sync(|| export::export_command(args)),
        Command::Run(args) => runtime.block_on(run::run_command(&args.pipeline, args.fresh, &args.engine, args.json)),
        Command::Demo(args) => runtime.block_on(run::demo_command(args)),
        Command::Mine(args) => runtime.block_on(mine::mine_command(args)),
        Command::Parse(args) => runtime.run_sync(|| parse::parse_command(args)),
        Command::Revalidate(args) => runtime.block_on(revalidate::revalidate_command(args)),
        Command::Evaluate(args) => runtime.block_on(evaluate::evaluate_command(*args)),
        Command::Regrade(args) => runtime.run_sync(|| regrade::regrade_command(args)),
        Command::Review(args) => review::review_command(args),
        Command::Curate(args) => runtime.run_sync(|| curate::curate_command(args)),
        Command::Report(args) => runtime.run_sync(|| report::report_command(args)),
        Command::Publish(args) => runtime.run_sync(|| publish::publish_command(args)),
        Command::Bench(cmd) => runtime.block_on(bench::bench_command(cmd)),
        Command::Images(cmd) => runtime.block_on(images::images_command(cmd)),
        Command::Completions { shell } => {
            use clap::CommandFactory;
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "swe-forge", &mut script);
            crate::exit::print_bytes(&script);
            Ok(())
        }
    }
}
