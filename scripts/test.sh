#!/usr/bin/env bash
# The test command: makes sure a Docker engine answers (installing and starting Debian's docker.io
# when needed), then runs formatting, lints and every test of the workspace. The Docker-backed
# tests are not optional: they fail when no engine answers.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-docker.sh
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo test --workspace --locked "$@"
