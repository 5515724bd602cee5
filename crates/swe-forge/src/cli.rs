//! Command-line types (clap). Nothing here does work; `commands` resolves these into settings.

use std::path::PathBuf;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Args, Parser, Subcommand};
use swe_forge_logparse::Naming;

/// swe-forge turns merged pull requests into validated benchmark instances
/// (Multi-SWE-bench record format), each with a reproducible Docker image.
#[derive(Debug, Parser)]
#[command(
    name = "swe-forge",
    version = env!("SWE_FORGE_VERSION"),
    about,
    long_about = None,
    after_help = top_help()
)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

/// Options of every command.
#[derive(Debug, Args)]
pub struct Global {
    /// Print debug logs: `-v` swe-forge's own, `-vv` every library's too (the Docker client's,
    /// hyper's, ...), `-vvv` trace (or set SWE_FORGE_LOG, e.g. `swe_forge_docker=debug`).
    #[arg(long, short, global = true, help_heading = "Global options", action = clap::ArgAction::Count, conflicts_with = "quiet")]
    pub verbose: u8,
    /// Print only results and errors: no progress bars, no per-instance lines.
    #[arg(long, short, global = true, help_heading = "Global options")]
    pub quiet: bool,
    /// When log lines carry colour: `auto` (on a terminal, unless NO_COLOR is set), `always`,
    /// `never`.
    #[arg(long, global = true, help_heading = "Global options", value_enum, default_value_t = crate::terminal::ColorWhen::Auto)]
    pub color: crate::terminal::ColorWhen,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Validate candidate records: build each instance image, run the tests three times,
    /// derive FAIL_TO_PASS / PASS_TO_PASS and apply the keep rules.
    #[command(
        after_help = "Example:\n  swe-forge validate --records candidates.jsonl --repos repos/ -o validated.jsonl --jobs 2"
    )]
    #[command(display_order = 3)]
    Validate(ValidateArgs),
    /// Export validated records to JSONL and Parquet.
    #[command(
        after_help = "Example:\n  swe-forge export --records validated.jsonl --jsonl out.jsonl --parquet out.parquet --format swebench"
    )]
    #[command(display_order = 8)]
    Export(ExportArgs),
    /// Run the stages a pipeline file names (sources, filters, overrides, outputs).
    #[command(after_help = "Example:\n  swe-forge run pipelines/demo.toml")]
    #[command(display_order = 10)]
    Run(RunArgs),
    /// Run pipelines/demo.toml over the bundled fixture repositories.
    #[command(after_help = "Example:\n  swe-forge demo")]
    #[command(display_order = 1)]
    Demo(DemoArgs),
    /// Mine merged pull requests into candidate records, from GitHub or from a local mirror.
    #[command(
        after_help = "Examples:\n  swe-forge mine --mirror mirrors/org/repo -o candidates.jsonl --since 2024-01-01 --issues-export issues.json\n  swe-forge mine --github-repo org/name --repos repos/ -o candidates.jsonl   # GITHUB_TOKEN set"
    )]
    #[command(display_order = 2)]
    Mine(MineArgs),
    /// Parse a test log or results directory into per-test statuses (JSON lines on stdout).
    #[command(after_help = "Example:\n  swe-forge parse work/logs/org__repo-1/fix.log")]
    #[command(display_order = 13)]
    Parse(ParseArgs),
    /// Re-validate published records (test lists included) under a profile and report, instance by
    /// instance, whether their FAIL_TO_PASS and PASS_TO_PASS lists hold, and why not.
    #[command(
        after_help = "Example:\n  swe-forge revalidate --records published.jsonl --repos mirrors/ --profile msb -o audit/"
    )]
    #[command(display_order = 11)]
    Revalidate(RevalidateArgs),
    /// Evaluate predictions (a model's patches, or `gold`) on a validated dataset: each patch
    /// applied in its instance's image, the test files put back to the test patch's version,
    /// the tests run; resolved when every FAIL_TO_PASS and PASS_TO_PASS test passes.
    #[command(display_order = 9)]
    Evaluate(Box<EvaluateArgs>),
    /// Re-derive statuses, categories and verdicts of validated records from their kept logs,
    /// with this build's parsers, without running any container.
    #[command(
        after_help = "Example:\n  swe-forge regrade --records validated.jsonl --work-dir validated.work -o regraded.jsonl"
    )]
    #[command(display_order = 12)]
    Regrade(RegradeArgs),
    /// Serve the review page for a dataset on 127.0.0.1 (questionnaire, diffs, tests, logs).
    #[command(after_help = "Example:\n  swe-forge review --dataset validated.jsonl --work-dir validated.work")]
    #[command(display_order = 4)]
    Review(crate::commands::review::ReviewArgs),
    /// Put difficulty labels, review decisions and duplicate marks on records; write splits.
    #[command(after_help = "Example:\n  swe-forge curate --dataset validated.jsonl -o curated.jsonl --splits splits/")]
    #[command(display_order = 5)]
    Curate(crate::commands::curate::CurateArgs),
    /// Write a dataset card (README.md with counts, funnel, distributions and SVG plots).
    #[command(after_help = "Example:\n  swe-forge report --dataset curated.jsonl -o card/")]
    #[command(display_order = 6)]
    Report(crate::commands::report::ReportArgs),
    /// Write a dataset folder for the Hugging Face Hub: Parquet files under data/ (each instance
    /// once) and README.md (front matter naming the configurations' files, license, tags, size;
    /// then the dataset card).
    #[command(after_help = "Example:\n  swe-forge publish --dataset curated.jsonl -o hub/ --license mit")]
    #[command(display_order = 7)]
    Publish(crate::commands::publish::PublishArgs),
    /// Benchmarks whose results are written down in docs/benchmarks/.
    #[command(
        subcommand,
        after_help = "Examples:\n  swe-forge bench overhead pipelines/demo.toml --repeat 3\n  swe-forge bench runs --repeat 10 --script-ms 1000\n  swe-forge bench scale --sizes 1000,10000"
    )]
    #[command(display_order = 15)]
    Bench(BenchCommand),
    /// Manage swe-forge's Docker images.
    #[command(
        subcommand,
        after_help = "Examples:\n  swe-forge images list\n  swe-forge images prune --keep validated.jsonl --dry-run\n  swe-forge images push --records validated.jsonl --registry localhost:5000"
    )]
    #[command(display_order = 14)]
    Images(ImagesCommand),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell) to stdout.
    #[command(
        after_help = "Example:\n  swe-forge completions bash > ~/.local/share/bash-completion/completions/swe-forge"
    )]
    #[command(display_order = 16)]
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
}

/// The engine options of every command that validates: where and how containers run, and how
/// validation gathers its results.
#[derive(Debug, Args, Clone)]
pub struct EngineArgs {
    /// Instances validated at once.
    #[arg(long, short = 'j', value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub jobs: Option<usize>,
    #[command(flatten)]
    pub runner: RunnerArgs,
    #[command(flatten)]
    pub validation: ValidationArgs,
}

/// Limits and engine options shared by commands that run containers.
#[derive(Debug, Args, Clone)]
pub struct RunnerArgs {
    /// Timeout of each test run, in seconds.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout: Option<u64>,
    /// Memory limit of each container, in MiB (at least 64), or `none` for no limit [default:
    /// 8192, or half of this machine's memory when that is less].
    #[arg(long, value_parser = memory_mb, value_name = "MIB|none")]
    pub memory_mb: Option<MemoryMb>,
    /// Extra CA certificates (PEM bundle) for setup steps that reach the network; mounted, never
    /// copied into an image.
    #[arg(long, env = "SWE_FORGE_CA_BUNDLE")]
    pub ca_bundle: Option<PathBuf>,
    /// Extra runs of every phase; tests whose outcome differs are reported as flaky and left
    /// out of FAIL_TO_PASS / PASS_TO_PASS.
    #[arg(long)]
    pub reruns: Option<u32>,
    /// Limit on the number of processes in each container (a fork bomb ends as `pids_limit`).
    #[arg(long, value_parser = clap::value_parser!(i64).range(1..))]
    pub pids_limit: Option<i64>,
    /// CPUs each container may use (e.g. 1.5).
    #[arg(long, value_parser = positive_cpus)]
    pub cpus: Option<f64>,
    /// Where test runs happen: `local` (this engine) or `swarm` (a Docker Swarm job per run, on
    /// any node; images are built here and pushed to --registry, which every node pulls from).
    #[arg(long, value_parser = ["local", "swarm"])]
    pub backend: Option<String>,
    /// The swarm manager's API for `--backend swarm` (`unix:///path` or `tcp://HOST:PORT`;
    /// default: the engine swe-forge talks to, DOCKER_HOST).
    #[arg(long)]
    pub swarm_manager: Option<String>,
    /// The registry the swarm's nodes pull from, HOST:PORT (`--backend swarm`).
    #[arg(long)]
    pub registry: Option<String>,
}

/// How validation gathers results: the toolchain search and evidence runs (not evaluation's).
#[derive(Debug, Args, Clone)]
pub struct ValidationArgs {
    /// Toolchain versions tried per instance (the first choice included) when its setup fails in
    /// a way that names the toolchain, e.g. "Source option 6 is no longer supported" (default 5;
    /// 1: no search).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub toolchain_attempts: Option<u32>,
    /// Runs of the gold patch through evaluation's own path for every accepted instance, followed
    /// by two negative controls (an empty patch, the test patch alone); the record's
    /// `swe_forge.evidence` (default 3; 0: no evidence, `curate --require-evidence` then drops
    /// the instance).
    #[arg(long, env = "SWE_FORGE_EVIDENCE_RUNS")]
    pub evidence_runs: Option<u32>,
    /// Runs of an accepted instance's fix patch with one hunk left out, at most this many (fix
    /// patches of two hunks or more): a hunk without which every FAIL_TO_PASS test still passes is
    /// listed in `swe_forge.quality.hunks` and raises `untested_hunks` (default 4; 0: none).
    #[arg(long, env = "SWE_FORGE_HUNK_RUNS")]
    pub hunk_runs: Option<u32>,
    /// Layout variants of an accepted instance's gold patch graded through evaluation (a blank
    /// line before the first change of each code file; its hunks placed a few lines off): a
    /// listed test that passes with the gold patch and not under a variant leaves the lists
    /// (`swe_forge.labels.unstable`), and an instance left without FAIL_TO_PASS is rejected
    /// `unstable_tests` (default 2, both; 0: none).
    #[arg(long, env = "SWE_FORGE_LAYOUT_VARIANTS", value_parser = clap::value_parser!(u32).range(0..=2))]
    pub layout_variants: Option<u32>,
}

#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Candidate records (JSONL, Multi-SWE-bench format).
    #[arg(long, visible_alias = "dataset")]
    pub records: PathBuf,
    /// Folder of local clones: <repos>/<org>/<repo> (or <org>__<repo>).
    #[arg(long)]
    pub repos: PathBuf,
    /// Where to write every validated record (accepted and rejected), JSONL.
    #[arg(long, short)]
    pub out: PathBuf,
    /// Where run logs and the state store (state.sqlite) go (default: the pipeline's `[validate]
    /// work_dir`, else next to --out); the flag beats the pipeline file.
    #[arg(long)]
    pub work_dir: Option<PathBuf>,
    /// Re-validate instances the state store already has results for.
    #[arg(long)]
    pub fresh: bool,
    /// A pipeline file whose `[overrides]` and `[validate]` settings apply.
    #[arg(long)]
    pub pipeline: Option<PathBuf>,
    /// Print the summary as one JSON object on stdout (records, accepted, the funnel, and per
    /// instance its id, status, FAIL_TO_PASS and PASS_TO_PASS counts and rejection reasons)
    /// instead of a table and the funnel. With `-o -` the records go to stdout and the summary,
    /// JSON or not, to stderr.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub engine: EngineArgs,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Exit codes:\n  0    every prediction was evaluated and the reports written, whatever the outcomes (resolved,\n       unresolved, tampered, error, ...: read summary.json)\n  1    the evaluation could not run: unreadable dataset or predictions, duplicate ids, no prediction\n       naming an instance of the dataset, no engine, a state store or report that cannot be written\n  2    usage error (unknown flag, missing argument)\n  130  stopped by SIGINT or SIGTERM (finished results are kept in state.sqlite; run again to resume)\n\nExample:\n  swe-forge evaluate --dataset validated.jsonl --predictions gold --repos data/repos --out eval/"
)]
pub struct EvaluateArgs {
    /// The dataset: validated records (JSONL); only accepted ones are evaluated.
    #[arg(long, visible_alias = "records")]
    pub dataset: PathBuf,
    /// Predictions: SWE-bench's format (`instance_id`, `model_name_or_path`, `model_patch`) or
    /// Multi-SWE-bench's (`org`, `repo`, `number`, `fix_patch`), JSONL or a JSON list; `gold`
    /// takes each record's own fix patch.
    #[arg(long)]
    pub predictions: PathBuf,
    /// Folder of local clones: <repos>/<org>/<repo>, to resolve the recipe as validation did and to
    /// build missing images. Without it (or without an instance's clone), the instance image runs
    /// by its own contract (/swe-forge/run-tests), pulled from the registry the record names when
    /// it is not here.
    #[arg(long)]
    pub repos: Option<PathBuf>,
    /// Output folder: summary.{json,md}, evaluations.jsonl, logs/<model>/<id>/ (the model's name
    /// with every byte outside A-Za-z0-9.- written %XX: `org/m_1` is `org%2Fm%5F1`), state.sqlite.
    #[arg(long, short)]
    pub out: PathBuf,
    /// Evaluate again predictions the state store already has results for.
    #[arg(long)]
    pub fresh: bool,
    /// The pipeline file the dataset was validated with (its overrides and limits apply).
    #[arg(long)]
    pub pipeline: Option<PathBuf>,
    /// A profile (built-in `msb` or `default`, or a file): its recipe overrides apply after the
    /// pipeline's, and its naming is the one the records' lists are read in (without one:
    /// canonical ids for swe-forge's records, Multi-SWE-bench's names for published ones).
    #[arg(long)]
    pub profile: Option<String>,
    /// Predictions evaluated at once.
    #[arg(long, short = 'j', value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub jobs: Option<usize>,
    /// Print the summary as one JSON object on stdout (summary.json's, with `out` and whether the
    /// run was stopped) instead of a sentence.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub engine: RunnerArgs,
}

#[derive(Debug, Args)]
pub struct RegradeArgs {
    /// Validated records (JSONL).
    #[arg(long, visible_alias = "dataset")]
    pub records: PathBuf,
    /// The work folder of the validation that made them (holds logs/<instance_id>/).
    #[arg(long)]
    pub work_dir: PathBuf,
    /// Where to write the re-graded records (JSONL; `-` is stdout, which then carries only them).
    #[arg(long, short)]
    pub out: PathBuf,
    /// Print the summary as one JSON object (records, changed, left as they were, the output) on
    /// stdout instead of the table and lines; on stderr when the records go to stdout.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Validated records (JSONL, or an instances Parquet table swe-forge wrote).
    #[arg(long, visible_alias = "dataset")]
    pub records: PathBuf,
    /// The output, as every other command names it: a `.parquet` file is --parquet, a folder with
    /// `--format harbor` is --dir, anything else (`-` is stdout) is --jsonl.
    #[arg(long, short, value_name = "PATH")]
    pub out: Option<PathBuf>,
    /// JSONL output of the accepted instances (in --format).
    #[arg(long)]
    pub jsonl: Option<PathBuf>,
    /// Parquet output, one row per accepted instance (in --format).
    #[arg(long)]
    pub parquet: Option<PathBuf>,
    /// What --jsonl and --parquet hold: the full records, or SWE-bench's fields plus the image;
    /// `harbor` writes Harbor task folders into --dir instead.
    #[arg(long, value_enum, default_value_t = ExportFormat::Records)]
    pub format: ExportFormat,
    /// The folder of a `--format harbor` export: one task folder per instance
    /// (`schemas/harbor.md`). A folder an earlier Harbor export wrote is replaced; any other
    /// existing folder must be empty.
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// Test names in the exported test maps and lists: swe-forge's canonical ids, or
    /// Multi-SWE-bench's (derived from the parsed runs kept under --work-dir).
    #[arg(long, value_parser = export_naming(), default_value_t = Naming::Canonical)]
    pub naming: Naming,
    /// Where validation kept its runs (`<work-dir>/logs/<instance_id>/`), for --naming msb.
    /// Default: the records path with the extension `.work`, as validate makes it.
    #[arg(long)]
    pub work_dir: Option<PathBuf>,
    /// Parquet output, one row per (accepted instance, test).
    #[arg(long)]
    pub tests_parquet: Option<PathBuf>,
    /// Export rejected and unvalidated records too, and those a review decision drops or holds
    /// back (marked with it).
    #[arg(long)]
    pub all: bool,
    /// The review decisions to apply: a record a decision drops or holds back (`drop`,
    /// `needs_work`) is not exported, unless --all.
    #[command(flatten)]
    pub store: crate::decisions::StoreArgs,
    /// Print the summary as one JSON object (records read, exported, skipped by cause, the
    /// outputs) on stdout instead of a line on stderr; on stderr when the records go to stdout.
    #[arg(long)]
    pub json: bool,
}

/// The shape of exported instances.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    /// swe-forge's records (Multi-SWE-bench's format plus `swe_forge`); Parquet: the instances table.
    Records,
    /// SWE-bench's fields (FAIL_TO_PASS / PASS_TO_PASS as JSON strings) plus the image reference.
    Swebench,
    /// Harbor task folders (instruction.md, task.toml, environment/, tests/, solution/) in --dir.
    Harbor,
}

/// The test names an export may be in: [`Naming::Canonical`] or [`Naming::Msb`] by their written
/// names (`auto` picks per record, which a comparison does and an export does not).
pub(crate) fn export_naming() -> impl TypedValueParser<Value = Naming> {
    PossibleValuesParser::new([
        PossibleValue::new(Naming::Canonical.as_str())
            .help("swe-forge's canonical ids (`gostack::TestPopEmptyReturnsError`)"),
        PossibleValue::new(Naming::Msb.as_str())
            .help("Multi-SWE-bench's names (`TestPopEmptyReturnsError`), categories derived again in them"),
    ])
    .try_map(|name| name.parse::<Naming>())
}

/// `--drop-flag`: a quality flag by its written name (`no_issue_text`, ...).
pub(crate) fn quality_flag() -> impl TypedValueParser<Value = swe_forge_core::QualityFlag> {
    PossibleValuesParser::new(
        swe_forge_core::QualityFlag::ALL.map(|f| PossibleValue::new(f.as_str()).help(f.meaning())),
    )
    .try_map(|name| name.parse::<swe_forge_core::QualityFlag>())
}

/// Which quality flags leave an instance out of what a command keeps (curate, publish).
#[derive(Debug, Clone, Args)]
pub struct FlagArgs {
    /// Leave out every instance that raises this quality flag (`swe_forge.quality.flags`;
    /// repeatable), e.g. `no_issue_text`: nothing for a solver to read.
    #[arg(long = "drop-flag", value_name = "FLAG", value_parser = quality_flag())]
    pub drop_flags: Vec<swe_forge_core::QualityFlag>,
}

impl FlagArgs {
    /// Whether `r` raises a flag to drop.
    pub fn drops(&self, r: &swe_forge_core::Instance) -> bool {
        swe_forge_curate::quality_flags(r).iter().any(|f| self.drop_flags.contains(f))
    }
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The pipeline file (TOML), e.g. pipelines/demo.toml.
    pub pipeline: PathBuf,
    /// Start over: validate every instance again instead of resuming from the state store.
    #[arg(long)]
    pub fresh: bool,
    /// Print the summary as one JSON object on stdout (records, accepted, the funnel, and per
    /// instance its id, status, FAIL_TO_PASS and PASS_TO_PASS counts and rejection reasons)
    /// instead of a table and the funnel.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub engine: EngineArgs,
}

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Start over: validate every instance again instead of resuming from the state store
    /// (as `--fresh` does for every command).
    #[arg(long)]
    pub fresh: bool,
    /// Resume from the state store (the default; kept for older scripts).
    #[arg(long, hide = true)]
    pub resume: bool,
    /// Print the summary as one JSON object on stdout (records, accepted, the funnel, and per
    /// instance its id, status, FAIL_TO_PASS and PASS_TO_PASS counts and rejection reasons)
    /// instead of a table and the funnel.
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    pub engine: EngineArgs,
}

#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Harness overhead: validates a pipeline's instances from scratch (images reused) and
    /// reports wall time minus the time spent inside the test commands, as a share of the latter.
    #[command(after_help = "Example:\n  swe-forge bench overhead pipelines/demo.toml --repeat 3")]
    Overhead {
        /// The pipeline file (e.g. pipelines/demo.toml).
        pipeline: PathBuf,
        /// Repeat the measurement this many times.
        #[arg(long, default_value_t = 3)]
        repeat: u32,
        /// Print one JSON object on stdout (the pipeline and, per repeat, its instances, runs,
        /// `wall_ms`, `test_commands_ms`, `overhead_ms` and `overhead_percent`) instead of the table.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        engine: EngineArgs,
    },
    /// The fixed cost of a test run: runs of a script that does nothing but wait `--script-ms`,
    /// set up as test runs are (no network, limits, a file copied in, the results folder copied
    /// out), step by step: the wall time beyond the script's own.
    #[command(after_help = "Example:\n  swe-forge bench runs --repeat 10 --script-ms 1000")]
    Runs {
        /// Image to run (the base image of the default suite when absent; bootstrapped if missing).
        #[arg(long)]
        image: Option<String>,
        /// Runs of each kind.
        #[arg(long, default_value_t = 20)]
        repeat: u32,
        /// How long the script takes (a test command takes seconds; a container started ahead
        /// for the next run is started while it runs).
        #[arg(long, default_value_t = 0)]
        script_ms: u64,
        /// Print one JSON object on stdout (the image, `script_ms`, `repeat`, per kind of removal
        /// the wall time beyond the script, median and p90, and each step's median, in ms; then
        /// `settle_ms`) instead of the table.
        #[arg(long)]
        json: bool,
    },
    /// Commands at scale: synthetic datasets of each size (about 6 KB a record: patches, an issue,
    /// a few dozen tests per list, three runs with their kept logs) through a child `swe-forge`
    /// running each command named; the child's wall time and peak memory per command and size.
    #[command(
        after_help = "Example:\n  swe-forge bench scale --sizes 1000,10000,100000 --command export,curate,report"
    )]
    Scale {
        /// Dataset sizes, in records.
        #[arg(long, value_delimiter = ',', default_values_t = [1000usize, 10_000, 100_000])]
        sizes: Vec<usize>,
        /// The swe-forge binary measured (this one when absent), e.g. an earlier build to
        /// compare with.
        #[arg(long)]
        binary: Option<PathBuf>,
        /// The commands measured, comma-separated: `export` (to JSONL and both Parquet tables),
        /// `curate` (labels and duplicates, every record written to JSONL), `report` (the dataset
        /// card), `publish` (the Hub folder: every configuration's Parquet files and the card),
        /// `regrade` (every record re-graded from its three kept logs, written to JSONL).
        #[arg(long, value_enum, value_delimiter = ',', default_values_t = [ScaleCommand::Export])]
        command: Vec<ScaleCommand>,
        /// Print one JSON object on stdout (per command and size: `command`, `records`,
        /// `input_bytes`, `wall_ms`, `peak_rss_bytes`) instead of the table.
        #[arg(long)]
        json: bool,
    },
}

/// What `swe-forge bench scale` measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ScaleCommand {
    /// `swe-forge export`.
    Export,
    /// `swe-forge curate`.
    Curate,
    /// `swe-forge report`.
    Report,
    /// `swe-forge publish`.
    Publish,
    /// `swe-forge regrade`.
    Regrade,
}

impl ScaleCommand {
    /// The subcommand's name.
    pub fn name(self) -> &'static str {
        match self {
            ScaleCommand::Export => "export",
            ScaleCommand::Curate => "curate",
            ScaleCommand::Report => "report",
            ScaleCommand::Publish => "publish",
            ScaleCommand::Regrade => "regrade",
        }
    }
}

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// Validated records (JSONL) whose images to rebuild.
    #[arg(long, visible_alias = "dataset")]
    pub records: PathBuf,
    /// Folder of local clones, as for validate.
    #[arg(long)]
    pub repos: PathBuf,
    /// Only these instances (repeatable); all records with an image otherwise.
    #[arg(long = "instance")]
    pub instances: Vec<String>,
    /// A pipeline file whose overrides were used to validate them.
    #[arg(long)]
    pub pipeline: Option<PathBuf>,
    /// Print one JSON object on stdout (`records`, `identical`, `differ`, `failed`, and per
    /// instance its id, `outcome`, `files`, the `volatile`, `added`, `removed` and `changed`
    /// files or the `error`) instead of a line per image.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub engine: EngineArgs,
}

#[derive(Debug, Subcommand)]
pub enum ImagesCommand {
    /// Bootstrap the Debian base image with debootstrap (done on demand by validate, too).
    #[command(after_help = "Example:\n  swe-forge images bootstrap")]
    Bootstrap,
    /// List swe-forge's images.
    #[command(after_help = "Example:\n  swe-forge images list --json")]
    List {
        /// One JSON array on stdout: each image's role, tag, repository (for environment and
        /// instance images) and size in bytes.
        #[arg(long)]
        json: bool,
    },
    /// Bytes each instance image adds on top of its environment, and each environment on top of
    /// its toolchain: on disk, as uncompressed layer tars and gzip-compressed as a registry push
    /// sends them, with build times (Markdown tables, medians last).
    #[command(after_help = "Example:\n  swe-forge images sizes --records validated.jsonl")]
    Sizes {
        /// Validated records (JSONL).
        #[arg(long, visible_alias = "dataset")]
        records: PathBuf,
        /// Print one JSON object on stdout instead of the tables: `instances` (id, language,
        /// environment image and commit, `disk_bytes`, `layers`, `tar_bytes`, `gzip_bytes`,
        /// `build_ms`), `environments` (the same, with the toolchain image and the instances on
        /// it), `median` and `median_with_environment_share` (bytes, with the `count` of instances).
        #[arg(long)]
        json: bool,
    },
    /// Rebuild instance images from scratch (no build cache) and say whether each came out the
    /// same and, if not, which files differ.
    #[command(
        after_help = "Example:\n  swe-forge images verify --records validated.jsonl --repos repos/ --instance org__repo-1"
    )]
    Verify(Box<VerifyArgs>),
    /// Remove the containers of swe-forge runs whose process is gone (killed with SIGKILL, or the
    /// machine rebooted), found by their `dev.swe-forge.run` label; live runs' stay.
    #[command(after_help = "Example:\n  swe-forge images cleanup --dry-run")]
    Cleanup {
        /// Only say what would be removed.
        #[arg(long)]
        dry_run: bool,
        /// Print one JSON object on stdout (`dry_run`, `containers_removed`, and the `containers`:
        /// id, run, image, state) instead of a line per container.
        #[arg(long)]
        json: bool,
    },
    /// Remove the instance and repository-environment images no kept record uses (its instance
    /// image, its environment and that environment's source layer), among the repositories the
    /// kept records cover (all repositories with --all-repositories); toolchains and the base stay.
    /// Containers left by killed runs go first (as `images cleanup`).
    #[command(after_help = "Example:\n  swe-forge images prune --keep validated.jsonl --dry-run")]
    Prune {
        /// Records whose images stay (JSONL; repeatable), e.g. a validated dataset.
        #[arg(long, required = true)]
        keep: Vec<PathBuf>,
        /// Also remove images of repositories no kept record covers.
        #[arg(long)]
        all_repositories: bool,
        /// Only say what would be removed.
        #[arg(long)]
        dry_run: bool,
        /// Print one JSON object on stdout (`dry_run`, the containers as `images cleanup --json`
        /// has them, `images` removed with their role and tag, `images_removed`, `images_kept`,
        /// `repositories`, null with --all-repositories) instead of a line per image.
        #[arg(long)]
        json: bool,
    },
    /// Push the base, toolchain, environment and instance images the records name to a registry
    /// (each once; layers the registry holds are not uploaded again) and write the records with
    /// the pushed references (`swe_forge.registry_image`, `swe_forge.registry_images`).
    #[command(
        after_help = "Example:\n  swe-forge images push --records validated.jsonl --registry localhost:5000 --tag-style msb"
    )]
    Push {
        /// Records (JSONL), e.g. a validated dataset.
        #[arg(long, visible_alias = "dataset")]
        records: PathBuf,
        /// `HOST:PORT` of the registry.
        #[arg(long)]
        registry: String,
        /// `msb`: also name each instance image `mswebench/<org>_m_<repo>:pr-<N>`, as
        /// Multi-SWE-bench does, locally and in the registry.
        #[arg(long, value_enum, default_value = "forge")]
        tag_style: crate::ship::TagStyle,
        /// Where the records go [default: `<records>.pushed.jsonl` beside them].
        #[arg(long, short)]
        out: Option<PathBuf>,
        /// Print one JSON object on stdout (`registry`, `out`, `pushed`, `bytes_pushed`, and per
        /// image its name, `layers_pushed`, `layers_existing`, `bytes_pushed`, `reference`)
        /// instead of the table; on stderr when `-o -` puts the records on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Pull the images the records name (their `registry_images`) and give them their local
    /// names back, so that validate and evaluate find them.
    #[command(after_help = "Example:\n  swe-forge images pull --records validated.pushed.jsonl")]
    Pull {
        /// Records (JSONL) written by `images push`.
        #[arg(long, visible_alias = "dataset")]
        records: PathBuf,
        /// `HOST:PORT` to pull from instead of the records' registry.
        #[arg(long)]
        registry: Option<String>,
        /// Print one JSON object on stdout (`ready`, and per image its name, `reference`, local
        /// `id` and whether it was `pulled` or here already) instead of a line per pulled image.
        #[arg(long)]
        json: bool,
    },
    /// Save every image the records name, with all their layers, into one tar archive.
    #[command(after_help = "Example:\n  swe-forge images save --records validated.jsonl --out images.tar")]
    Save {
        /// Records (JSONL).
        #[arg(long, visible_alias = "dataset")]
        records: PathBuf,
        /// The archive to write.
        #[arg(long, short)]
        out: PathBuf,
        /// Print one JSON object on stdout (`out`, the `images` saved, `size_bytes` of the
        /// archive) instead of a line per image.
        #[arg(long)]
        json: bool,
    },
    /// Load an archive written by `images save`.
    #[command(after_help = "Example:\n  swe-forge images load images.tar")]
    Load {
        /// The archive.
        archive: PathBuf,
    },
}

#[derive(Debug, Args)]
pub struct MineArgs {
    /// GitHub repositories, `owner/name` (repeatable); with --mirror, the mirror's name. (Not a
    /// folder: that is --repos, as in every command.)
    #[arg(long = "github-repo", alias = "repo", value_name = "OWNER/NAME")]
    pub github_repos: Vec<String>,
    /// Mine a local git repository (refs/pull/*, merge and squash commits) instead of GitHub.
    #[arg(long, conflicts_with = "pipeline")]
    pub mirror: Option<PathBuf>,
    /// First day (YYYY-MM-DD, or YYYY-MM-DDTHH:MM:SSZ) of the merge window.
    #[arg(long, value_parser = window_bound)]
    pub since: Option<String>,
    /// Last day of the merge window (inclusive).
    #[arg(long, value_parser = window_bound)]
    pub until: Option<String>,
    /// Candidate records (JSONL); also the progress file of a resumed mine.
    #[arg(long, short, required_unless_present = "pipeline")]
    pub out: Option<PathBuf>,
    /// Funnel report (JSON; a Markdown table goes next to it). Default: <out>.funnel.json.
    #[arg(long)]
    pub funnel: Option<PathBuf>,
    /// A pipeline file with a [mine] section (repositories, windows, filters); candidates go to its
    /// source.records.
    #[arg(long, conflicts_with_all = ["github_repos", "mirror"])]
    pub pipeline: Option<PathBuf>,
    /// Start over instead of resuming from <out> and its progress journal.
    #[arg(long)]
    pub fresh: bool,
    /// Base branch of the mirror (default: its HEAD, else main or master).
    #[arg(long, requires = "mirror")]
    pub branch: Option<String>,
    /// Mirror mode: drop refs/pull/N/head refs that no merge or squash commit proves merged.
    #[arg(long)]
    pub merged_only: bool,
    /// Mirror mode: a saved GitHub export holding the texts of issues and pull requests (git has
    /// none): the output of `gh api --paginate 'repos/OWNER/NAME/issues?state=all'`, REST items as
    /// JSON lines, or GH Archive event files (`.json.gz` too); repeatable. Each candidate gets its
    /// pull request's title and body and the texts of the issues it closes; one with no text at
    /// all raises the quality flag `no_issue_text`.
    #[arg(long = "issues-export", value_name = "PATH")]
    pub issues_exports: Vec<PathBuf>,
    /// Whether a PR must close an issue (default: required on GitHub, optional for a mirror).
    #[arg(long, value_enum)]
    pub issue_links: Option<IssueLinks>,
    /// Drop PRs that change more files than this.
    #[arg(long)]
    pub max_files: Option<usize>,
    /// Drop PRs whose fix patch changes more lines than this.
    #[arg(long)]
    pub max_fix_lines: Option<usize>,
    /// Files holding GitHub tokens, one per line (repeatable); GITHUB_TOKEN may hold several,
    /// comma separated. Tokens are rotated when one is rate limited.
    #[arg(long = "token-file")]
    pub token_files: Vec<PathBuf>,
    /// GitHub API root.
    #[arg(long, env = "SWE_FORGE_GITHUB_API", default_value = "https://api.github.com")]
    pub api_url: String,
    /// On-disk HTTP cache (ETags) for GitHub answers. Default: <out>.cache next to the output.
    #[arg(long)]
    pub cache_dir: Option<PathBuf>,
    /// Folder of local clones (<repos>/<org>/<repo>) to take PR diffs from instead of the API.
    #[arg(long = "repos", alias = "repos-dir", value_name = "DIR")]
    pub repos_dir: Option<PathBuf>,
    /// PRs per GraphQL listing page (at most 100).
    #[arg(long, default_value_t = 50)]
    pub page_size: u32,
    /// Longest wait for a rate limit to reset, in seconds, before giving up.
    #[arg(long, default_value_t = 3600)]
    pub max_wait: u64,
    /// Print the summary as one JSON object on stdout (the output files, candidates and how many
    /// have no issue text, each repository's funnel, GitHub requests) instead of the funnel table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum IssueLinks {
    /// Drop PRs that close no issue.
    Required,
    /// Keep them (their records have no resolved issues).
    Optional,
}

#[derive(Debug, Args)]
pub struct RevalidateArgs {
    /// Published records (JSONL, Multi-SWE-bench format, test lists included).
    #[arg(long, visible_alias = "dataset")]
    pub records: PathBuf,
    /// Folder of local clones: <repos>/<org>/<repo> (or <org>__<repo>).
    #[arg(long)]
    pub repos: PathBuf,
    /// `msb` (Multi-SWE-bench's commands and naming), `default` (swe-forge's recipes), or a
    /// profile file (pipelines/profiles/*.toml).
    #[arg(long, default_value = "default")]
    pub profile: String,
    /// Output folder: state.sqlite (resume), revalidated.jsonl, rederived.jsonl, agreement.json,
    /// agreement.md, environments.md.
    #[arg(long, short)]
    pub out: PathBuf,
    /// A pipeline file whose `[overrides]`, `[filters]` and `[validate]` settings apply.
    #[arg(long)]
    pub pipeline: Option<PathBuf>,
    /// Only this instance id (repeatable).
    #[arg(long = "instance")]
    pub instances: Vec<String>,
    /// Where run logs go (default: <out>/work).
    #[arg(long)]
    pub work_dir: Option<PathBuf>,
    /// Re-validate the selected instances (all, or those given with --instance) even when
    /// <out>/state.sqlite has them (after changing an override); the new results replace the
    /// earlier ones (which stay in revalidated.jsonl, before them).
    #[arg(long)]
    pub fresh: bool,
    /// Run nothing: write the reports from <out>/state.sqlite; instances not re-validated yet
    /// are listed as pending.
    #[arg(long)]
    pub report_only: bool,
    /// The agreement.json of another profile's run over the same records: environments.md puts
    /// its FAIL_TO_PASS / PASS_TO_PASS agreement beside this run's (repeatable).
    #[arg(long = "compare")]
    pub compare: Vec<PathBuf>,
    /// Print the summary as one JSON object on stdout (`out`, `profile`, `records`, `overall`:
    /// agreement.json's tally, and per instance its id, `outcome` (agrees, differs, not_run,
    /// pending), FAIL_TO_PASS and PASS_TO_PASS sizes published and ours with whether they are
    /// exact, cause; `stopped`) instead of the table.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub engine: EngineArgs,
}

#[derive(Debug, Args)]
pub struct ParseArgs {
    /// A test log, one result file, or a results directory (JUnit XML files, automake .trs files).
    pub path: PathBuf,
    /// The format, e.g. go-test-json, cargo-test, junit-xml, maven-surefire, jest, gtest (detected
    /// when omitted).
    #[arg(long, short)]
    pub framework: Option<swe_forge_logparse::Framework>,
    /// One line per Multi-SWE-bench name (Java class, bare Go name, ...) with its rolled-up status.
    #[arg(long)]
    pub msb: bool,
    /// The repository (`owner/name`) the log comes from: Multi-SWE-bench names follow its
    /// handler (Go subtests by their parent, ctest targets lower-cased, for those of
    /// pipelines/naming/msb.toml); without it, full Go subtest names and ctest targets as
    /// printed, as most handlers keep them.
    #[arg(long = "github-repo", alias = "repo", value_name = "OWNER/NAME")]
    pub repo: Option<String>,
    /// The test command's exit code: warn when the parsed results contradict it.
    #[arg(long, allow_negative_numbers = true)]
    pub exit_code: Option<i64>,
}

/// The keep rule's settings (review and curate share them).
#[derive(Debug, Clone, clap::Args)]
pub struct KeepArgs {
    /// Lowest issue clarity (0-3) that keeps an instance.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u8).range(0..=3))]
    pub min_clarity: u8,
    /// Lowest test adequacy (0-3) that keeps an instance.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u8).range(0..=3))]
    pub min_adequacy: u8,
    /// Keep instances a reviewer flagged with a severe problem.
    #[arg(long)]
    pub allow_severe: bool,
}

impl KeepArgs {
    pub fn rule(&self) -> swe_forge_curate::KeepRule {
        swe_forge_curate::KeepRule {
            allow_severe: self.allow_severe,
            min_clarity: self.min_clarity,
            min_adequacy: self.min_adequacy,
        }
    }
}

/// The top command's `--help` after the options: the exit codes and an example.
fn top_help() -> String {
    format!(
        "{}\nExample:\n  swe-forge run pipelines/demo.toml        # or: swe-forge <COMMAND> --help",
        crate::exit::Exit::help()
    )
}

/// `--since`, `--until`: a real day or a UTC second, as the mining window reads them.
fn window_bound(s: &str) -> Result<String, String> {
    swe_forge_mine::parse_time(s, false).map(|_| s.to_owned()).map_err(|e| e.to_string())
}

/// `--dedup-threshold` and other shares: a number from 0 to 1 (`NaN` is none).
pub fn unit_share(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if (0.0..=1.0).contains(&x) => Ok(x),
        _ => Err(format!("{s:?} is not a number from 0 to 1 (e.g. 0.8)")),
    }
}

/// `--memory-mb`: a limit in MiB, or none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryMb(pub Option<u64>);

/// `--memory-mb`: `none`, or a number of MiB of at least [`swe_forge_config::MIN_MEMORY_MB`].
fn memory_mb(s: &str) -> Result<MemoryMb, String> {
    if s == "none" {
        return Ok(MemoryMb(None));
    }
    match s.parse::<u64>() {
        Ok(m) if m >= swe_forge_config::MIN_MEMORY_MB => Ok(MemoryMb(Some(m))),
        _ => Err(format!(
            "{s:?} is not `none` or a number of MiB of at least {} (less and no test run gets far)",
            swe_forge_config::MIN_MEMORY_MB
        )),
    }
}

/// `--cpus`: a finite number above 0.
fn positive_cpus(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(c) if c.is_finite() && c > 0.0 => Ok(c),
        _ => Err(format!("{s:?} is not a number of CPUs above 0 (e.g. 1.5)")),
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::Cli;

    fn help(path: &[&str]) -> String {
        let mut cmd = Cli::command();
        let mut sub = &mut cmd;
        for name in path {
            sub = sub.find_subcommand_mut(name).unwrap_or_else(|| panic!("no subcommand {name}"));
        }
        sub.render_long_help().to_string()
    }

    /// A command's help shows the global flags under a heading of their own, after its own.
    #[test]
    fn global_flags_are_apart_from_a_commands_own() {
        let mut cmd = Cli::command();
        cmd.build();
        let text = cmd.find_subcommand_mut("validate").unwrap().render_long_help().to_string();
        let own = text.find("Options:").expect("its own options");
        let global = text.find("Global options:").expect("a heading of their own");
        assert!(own < global, "{text}");
        assert!(text[global..].contains("--quiet") && !text[own..global].contains("--quiet"), "{text}");
    }

    /// `swe-forge --help` lists the commands in the order a user runs them (issue #58): mine,
    /// validate, review, curate, report, publish, export, evaluate; tools after.
    #[test]
    fn commands_are_listed_in_workflow_order() {
        let text = help(&[]);
        let listed: Vec<&str> = text
            .lines()
            .skip_while(|l| !l.starts_with("Commands:"))
            .skip(1)
            .take_while(|l| l.starts_with("  "))
            .filter_map(|l| l.split_whitespace().next())
            .collect();
        let workflow = ["demo", "mine", "validate", "review", "curate", "report", "publish", "export", "evaluate"];
        assert_eq!(listed[..workflow.len()], workflow, "{listed:?}");
    }

    /// Each command's help speaks of what it does: evaluation evaluates predictions and has no
    /// flags of validation's toolchain search or evidence; nothing speaks of a "progress file".
    #[test]
    fn help_texts_say_what_each_command_does() {
        let evaluate = help(&["evaluate"]);
        assert!(evaluate.contains("Predictions evaluated at once"), "{evaluate}");
        for flag in ["--evidence-runs", "--hunk-runs", "--toolchain-attempts", "Instances validated at once"] {
            assert!(!evaluate.contains(flag), "evaluate --help lists {flag}");
        }
        assert!(evaluate.contains("--reruns"), "evaluation reruns each prediction");
        let validate = help(&["validate"]);
        for flag in ["--evidence-runs", "--hunk-runs", "--toolchain-attempts", "Instances validated at once", "--json"]
        {
            assert!(validate.contains(flag), "validate --help lacks {flag}");
        }
        for path in [&["run"][..], &["demo"], &["validate"], &["evaluate"]] {
            assert!(!help(path).contains("progress file"), "{path:?}");
        }
        assert!(help(&["run"]).contains("resuming from the state store"));
        for path in ["curate", "mine", "report", "publish", "evaluate", "export", "regrade", "revalidate"] {
            assert!(help(&[path]).contains("--json"), "{path} --help lacks --json");
        }
        for sub in ["list", "sizes", "verify", "cleanup", "prune", "push", "pull", "save"] {
            assert!(help(&["images", sub]).contains("--json"), "images {sub} --help lacks --json");
        }
        for sub in ["overhead", "runs", "scale"] {
            assert!(help(&["bench", sub]).contains("--json"), "bench {sub} --help lacks --json");
        }
        for path in ["curate", "publish"] {
            assert!(help(&[path]).contains("--drop-flag <FLAG>") && help(&[path]).contains("no_issue_text"), "{path}");
        }
        assert!(help(&["mine"]).contains("--issues-export <PATH>"));
        assert!(help(&[]).contains("--color <COLOR>"));
    }

    #[test]
    fn the_memory_limit_has_a_default_shown_in_help_and_none_is_no_limit() {
        for path in [&["validate"][..], &["evaluate"], &["run"]] {
            let h = help(path);
            assert!(h.contains("--memory-mb <MIB|none>") && h.contains("[default: 8192, or half"), "{h}");
        }
        assert_eq!(super::memory_mb("none"), Ok(super::MemoryMb(None)));
        assert_eq!(super::memory_mb("64"), Ok(super::MemoryMb(Some(64))));
        for bad in ["0", "63", "-1", "lots", ""] {
            assert!(super::memory_mb(bad).is_err(), "{bad}");
        }
    }
}
