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

# The suite in tiers, cheapest first: a tier that fails stops the run, so that a formatting slip or
# a broken unit test is reported in minutes, not after the Docker tests. Each tier's time is
# printed at the end (also when one fails). Arguments are passed to every `cargo test` (e.g. a
# test name filter after `--`).
tiers=()
# Clippy lints while the tests are built: `cargo clippy` is rustc with Clippy's lint passes run
# through `RUSTC_WORKSPACE_WRAPPER` (the workspace's crates only) in check mode; the same driver as
# the wrapper of every build below lints the workspace's crates and compiles them too, so the
# lints cost no second pass over the workspace and its dependencies (docs/benchmarks/test-suite.md).
# The same variables for every `cargo` call of this script: a change would rebuild the workspace.
clippy_driver=$(rustup which clippy-driver 2>/dev/null || command -v clippy-driver || true)
if [ -z "$clippy_driver" ]; then
  echo "test.sh: clippy-driver not found: run \`rustup component add clippy\`" >&2
  exit 1
fi
export RUSTC_WORKSPACE_WRAPPER=$clippy_driver
# The arguments of `cargo clippy -- -D warnings`, in cargo-clippy's own encoding.
export CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"
# Containers there before the run; any other one still there at the end was left by a test (or by
# the engine failing to remove it, a "dead" one) and is reported with what made it.
containers_before=$(docker ps -aq --no-trunc | sort)
report() {
  local rc=$?
  # A tier that failed beside the engine-restart test still waits for it: the engine it restarts
  # must be up again when the script ends.
  wait_restart || true
  echo
  echo "test.sh: tier times (wall clock)"
  for t in "${tiers[@]}"; do echo "  $t"; done
  local left
  left=$(comm -13 <(echo "$containers_before") <(docker ps -aq --no-trunc | sort))
  if [ -n "$left" ]; then
    echo "test.sh: warning: containers the tests left behind:"
    for c in $left; do
      docker inspect --format '  {{.ID}} {{.State.Status}} image={{.Config.Image}} labels={{.Config.Labels}} cmd={{.Path}} {{join .Args " "}} error={{.State.Error}}' "$c" | tr '\n' ' ' | cut -c1-400
    done
  fi
  [ "$rc" -eq 0 ] && echo "test.sh: every tier passed" || echo "test.sh: stopped with exit code $rc"
}
trap report EXIT
tier() {
  local name=$1 start=$SECONDS
  shift
  echo "test.sh: tier $name"
  if "$@"; then
    tiers+=("$(printf '%-8s %5ss  ok' "$name" $((SECONDS - start)))")
  else
    local rc=$?
    tiers+=("$(printf '%-8s %5ss  FAILED' "$name" $((SECONDS - start)))")
    return $rc
  fi
}
# Integration test binaries print one line per finished test; the seconds since their tier began
# in front of each line show where the time goes.
# `timed TAG CMD...`: the tag tells apart the lines of two binaries running at once.
tier_t0=$SECONDS
timed() {
  local tag=$1
  shift
  "$@" 2>&1 | while IFS= read -r line; do printf '[%4ds %s] %s\n' $((SECONDS - tier_t0)) "$tag" "$line"; done
}
# The engine-restart test stops and starts the engine, so no other Docker test may run beside it.
# It runs in the background while the other targets compile and the unit tests run (they need no
# engine), so that its waits (its test command's sleep, the engine's restart; on an empty engine
# also the downloads of the base image and the Go toolchain) are filled by the compilers' work. Its
# binary (and the swe-forge binary it drives) is built first.
# The test writes the file `SWE_FORGE_TEST_RESTARTED` names once the engine is up again after its
# restart: the other Docker tests may start then, beside the rest of its validation.
restart_pid=""
restart_secs=$(mktemp)
restart_log=$(mktemp)
restarted=$(mktemp -u)
start_restart() {
  cargo test --workspace --locked --test engine_restart --no-run "$@" || return $?
  tier_t0=$SECONDS
  # The job writes down its own time: it may end long before the engine tier waits for it.
  {
    local rc=0
    SWE_FORGE_TEST_RESTARTED=$restarted \
      timed restart cargo test --workspace --locked --no-fail-fast --test engine_restart "$@" |
      tee "$restart_log" || rc=$?
    echo $((SECONDS - tier_t0)) >"$restart_secs"
    exit "$rc"
  } &
  restart_pid=$!
  # Its cargo holds the build folder's lock until the test binary starts: the build that comes
  # next waits for that, not the other way round (which held the test back 40 s).
  while kill -0 "$restart_pid" 2>/dev/null && ! grep -q ' Running ' "$restart_log"; do sleep 0.2; done
}
# Waits until the engine-restart test has restarted the engine and the engine answers again (or
# the test ended, whatever its outcome: `wait_restart` reports that).
wait_restarted() {
  [ -n "$restart_pid" ] || return 0
  while [ ! -e "$restarted" ] && kill -0 "$restart_pid" 2>/dev/null; do sleep 1; done
  rm -f "$restarted"
}
# Waits for the engine-restart test and adds its line to the tier times (its wall clock overlaps
# the tiers it ran beside).
wait_restart() {
  [ -n "$restart_pid" ] || return 0
  local rc=0 word=ok pid=$restart_pid
  restart_pid=""
  wait "$pid" || { rc=$?; word=FAILED; }
  tiers+=("$(printf '%-8s %5ss  %s (beside the other tiers)' restart "$(cat "$restart_secs")" "$word")")
  rm -f "$restart_secs" "$restart_log"
  return "$rc"
}
# The integration tier, once the engine-restart test has restarted the engine: the `it` suites (two
# tests at a time) run beside the other integration test binaries that need the engine, then
# beside three long tests: their mostly one-core or waiting work fills the core `it` leaves
# idle, instead of running after it. Every run selects the whole workspace, as the build does, so
# that no dependency is built again with other features. Every test runs; the tier fails if one
# fails.
engine_tier() {
  local rc=0 it_rc=0
  cargo test --workspace --locked --test '*' --no-run "$@" || return $?
  wait_restarted
  tier_t0=$SECONDS
  # Three long `it` tests that wait a good part of their time run one after the other as a third
  # stream, after the other binaries, instead of holding one of the `it` threads: the swarm test
  # (its own three engines, a registry, pushes and pulls), the shared environment's (npm installs)
  # and the demo's (its pipeline, then SWE-bench's harness and Harbor's runs on the engine). With a
  # name filter, `it` runs everything the filter selects.
  local skip=() long=(backend_swarm:: environments::instances_of_a_repository_share_ pipeline::demo_pipeline_)
  [ $# -eq 0 ] && skip=(-- --skip "${long[0]}" --skip "${long[1]}" --skip "${long[2]}")
  timed it cargo test --workspace --locked --no-fail-fast --test it "$@" "${skip[@]}" &
  local it_pid=$!
  timed crates cargo test --workspace --locked --no-fail-fast "${engine_tests[@]}" "$@" || rc=$?
  if [ $# -eq 0 ]; then
    timed long cargo test --workspace --locked --no-fail-fast --test it -- "${long[@]}" --test-threads 1 || rc=$?
  fi
  wait "$it_pid" || it_rc=$?
  [ "$rc" -eq 0 ] && rc=$it_rc
  wait_restart || rc=$?
  return "$rc"
}

# The integration test binaries, by whether they need the engine: those of the Docker crate and of
# the crates that depend on it do; the others (record round trips, log parsers) run in the unit
# tier, beside the engine-restart test's waits. `it` and `engine_restart` run on their own below;
# a name two crates share runs where the engine is (cargo selects a test binary by name only).
engine_tests=() free_tests=()
while read -r kind name; do
  case $kind in engine) engine_tests+=(--test "$name") ;; free) free_tests+=(--test "$name") ;; esac
done < <(cargo metadata --no-deps --format-version 1 --locked | python3 -c '
import json, sys
m = json.load(sys.stdin)
engine, free = set(), set()
for p in m["packages"]:
    needs = p["name"] == "swe-forge-docker" or any(d["name"] == "swe-forge-docker" for d in p["dependencies"])
    for t in p["targets"]:
        if "test" in t["kind"]:
            (engine if needs else free).add(t["name"])
free -= engine
for n in sorted(engine - {"it", "engine_restart"}):
    print("engine", n)
for n in sorted(free):
    print("free", n)')
[ ${#engine_tests[@]} -gt 0 ] && [ ${#free_tests[@]} -gt 0 ] || { echo "test.sh: no test binaries found" >&2; exit 1; }

# Formatting first (seconds), then the engine-restart test's build and start, then the build of
# every other target (tests, benches, examples), linted by Clippy as it is compiled.
static_tier() {
  cargo fmt --all -- --check || return $?
  start_restart "$@" || return $?
  cargo test --workspace --locked --all-targets --no-run "$@"
}
tier static static_tier "$@"
# Unit tests of every crate and of the binary, and the integration tests that need no engine (no
# toolchain inside a container either).
tier unit cargo test --workspace --locked --no-fail-fast --lib --bins "${free_tests[@]}" "$@"
# The integration tests that need the engine: the real Docker engine, toolchains, browser, registry.
tier engine engine_tier "$@"
tier doc cargo test --workspace --locked --doc "$@"
