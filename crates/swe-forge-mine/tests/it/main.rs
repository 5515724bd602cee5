//! Integration tests of the miner: local mirrors built with git, and GitHub mode against a local
//! server that replays recorded responses. One test binary (see STYLE.md).

mod support;

mod bench;
mod github;
mod mirror;
