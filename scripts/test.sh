#!/usr/bin/env bash
# The test command: makes sure a Docker engine answers (installing and starting Debian's docker.io
# when needed), Chromium (for the review page's browser test), docker-registry (for the registry
# and swarm tests) and iproute2 (for the swarm test) are there, then runs formatting, lints and
# every test of the workspace. The Docker-backed tests are not optional: they fail when no engine
# answers.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-docker.sh
# The review page's end-to-end test drives Debian's headless Chromium.
if ! command -v chromium >/dev/null 2>&1; then
  S=""; [ "$(id -u)" -eq 0 ] || S=sudo
  $S apt-get update -qq && DEBIAN_FRONTEND=noninteractive $S apt-get install -y -qq chromium >/dev/null
fi
# The registry tests start Debian's docker-registry themselves (a free loopback port, a temporary
# folder); only the binary is needed, no service.
if ! command -v docker-registry >/dev/null 2>&1; then
  S=""; [ "$(id -u)" -eq 0 ] || S=sudo
  $S apt-get update -qq && DEBIAN_FRONTEND=noninteractive $S apt-get install -y -qq docker-registry >/dev/null
fi
# The swarm test makes its nodes with `ip netns` and `nsenter` (iproute2, util-linux) and runs
# each as another dockerd (docker.io, installed above); it needs root.
if ! command -v ip >/dev/null 2>&1 || ! command -v nsenter >/dev/null 2>&1; then
  S=""; [ "$(id -u)" -eq 0 ] || S=sudo
  $S apt-get update -qq && DEBIAN_FRONTEND=noninteractive $S apt-get install -y -qq iproute2 util-linux >/dev/null
fi
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo test --workspace --locked --no-fail-fast "$@"
