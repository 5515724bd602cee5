#!/usr/bin/env bash
# Makes a Docker engine answer on this machine: installs Debian's docker.io and debootstrap when
# missing, starts dockerd in the background when no engine answers, and waits for it.
# Needs root (or sudo). Safe to run again: it does nothing when everything is already there.
set -euo pipefail
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

need=()
command -v dockerd >/dev/null 2>&1 || need+=(docker.io)
command -v debootstrap >/dev/null 2>&1 || need+=(debootstrap)
if [ ${#need[@]} -gt 0 ]; then
  echo "setup-docker: installing ${need[*]}" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi

if docker info >/dev/null 2>&1; then
  exit 0
fi
# A dockerd that is still shutting down holds the pid file: wait for it to go.
for _ in $(seq 1 30); do
  pgrep -x dockerd >/dev/null 2>&1 || break
  docker info >/dev/null 2>&1 && exit 0
  sleep 1
done
if ! pgrep -x dockerd >/dev/null 2>&1; then
  $SUDO rm -f /var/run/docker.pid
fi
log=${SWE_FORGE_DOCKERD_LOG:-/tmp/swe-forge-dockerd.log}
echo "setup-docker: starting dockerd (log: $log)" >&2
# Every container start re-executes dockerd's binary (its network setup: `set-ipv6`,
# `setup-resolver`), which inherits this environment: a lazier garbage collector (Go's GOGC, 100
# by default) spends less of each start, and of dockerd's own time, collecting. 8-10 % less CPU
# on container-heavy tests for some more memory (docs/benchmarks/test-suite.md).
gogc=${SWE_FORGE_DOCKERD_GOGC:-400}
$SUDO sh -c "GOGC='$gogc' nohup dockerd >'$log' 2>&1 &"
for _ in $(seq 1 60); do
  if docker info >/dev/null 2>&1; then
    echo "setup-docker: engine ready ($(docker version --format '{{.Server.Version}} API {{.Server.APIVersion}}'))" >&2
    exit 0
  fi
  sleep 1
done
echo "setup-docker: dockerd did not come up within 60 s; its log follows" >&2
tail -n 30 "$log" >&2
exit 1
