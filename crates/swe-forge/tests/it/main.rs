//! End-to-end tests of the `swe-forge` binary: fixture consistency, the demo pipeline on a
//! real Docker engine, and the errors a user sees for bad input. One test binary (see
//! STYLE.md); the Docker engine must answer (`bash scripts/test.sh` starts one).

mod browser;
mod support;

mod architecture;
// Named to sort early: libtest starts tests in name order, and this one (several minutes, mostly
// waiting on pushes, pulls and the swarm) then runs beside the others instead of alone at the end.
// `scripts/test.sh` runs it (and the demo's) in a process of its own, beside the others' two threads.
mod backend_swarm;
mod bad_input;
mod breaker;
mod curate;
mod decisions;
mod environments;
mod evaluate;
mod evaluate_integrity;
mod export;
mod first_runs;
mod fixtures;
mod interrupt;
mod java_builds;
mod karma;
mod labels;
mod layers;
mod layout;
mod mine;
mod outputs;
mod package_managers;
mod parse;
mod pipeline;
mod prune;
mod publish;
mod quality_runs;
mod refusals;
mod registry;
mod revalidate;
mod review;
mod robustness;
mod summaries;
mod swarm_lab;
mod toolchains;
