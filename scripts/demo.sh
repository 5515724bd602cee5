#!/usr/bin/env bash
# The demo: makes sure a Docker engine answers, builds swe-forge and runs `swe-forge demo`, which
# validates the bundled fixtures (pipelines/demo.toml) and writes data/out/demo.jsonl and
# data/out/demo.parquet.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-docker.sh
cargo build --locked -p swe-forge --quiet
exec "${CARGO_TARGET_DIR:-target}/debug/swe-forge" demo "$@"
