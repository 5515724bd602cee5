#!/usr/bin/env bash
# Checks a `swe-forge export --format harbor` folder with Harbor's own code (`harbor` from PyPI),
# which needs Python >= 3.12 and `docker compose` v2: both come from Debian trixie, in a runner
# image made once from swe-forge's trixie base (python3, docker-cli, docker-compose, a venv with
# harbor==$HARBOR_VERSION; this machine's CA bundle is mounted for pip, never copied in). The
# runner talks to this machine's engine through its socket.
#
#   bash scripts/harbor-check.sh DATASET_DIR WORK_DIR
#
# 1. Harbor's loader (`harbor.models.task.task.Task`) on every task folder: prints
#    `harbor: loader accepted N of N task folders`.
# 2. `harbor run -a oracle` (solution/solve.sh, the gold patch), `harbor run -a nop` (no change)
#    and a forged solution (below) on the docker environment: prints `harbor: oracle reward 1 on
#    N of N`, `harbor: nop reward 1 on 0 of N`, `harbor: forged reward 1 on 0 of N` when the export
#    is right, and each task's reward.
#
# Harbor's docker environment enforces `network_mode = "no-network"` with an egress-control
# sidecar built from gogost/gost and a kernel probe on an alpine image, neither of which can be
# pulled here; it refuses such tasks otherwise. The runs therefore use a copy of the dataset
# (WORK_DIR/dataset) whose task.toml files say `public` and whose environment/ holds a
# docker-compose.yaml giving the main service `network_mode: none`: the containers still have no
# network. Everything else is the export as written. Images are built with the classic builder
# (DOCKER_BUILDKIT=0: this engine has no buildx, and it resolves the content-id pin of the
# Dockerfile). Exits 2 when the runner cannot be made (pip or apt refused), 1 when a check fails.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dataset="$(cd "${1:?usage: harbor-check.sh DATASET_DIR WORK_DIR}" && pwd)"
mkdir -p "${2:?usage: harbor-check.sh DATASET_DIR WORK_DIR}"
work="$(cd "$2" && pwd)"
bin="${SWE_FORGE_BIN:-$here/../target/debug/swe-forge}"
HARBOR_VERSION="${HARBOR_VERSION:-0.26.0}"
bundle="${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}"

setup='set -eu
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends python3 python3-venv docker-cli docker-compose git ca-certificates >/dev/null
python3 -m venv /opt/harbor
pip_cert=; [ -f /run/swe-forge-ca.crt ] && pip_cert=/run/swe-forge-ca.crt
PIP_CERT=$pip_cert /opt/harbor/bin/pip install -q --prefer-binary --disable-pip-version-check "harbor==$1"
docker compose version >/dev/null
apt-get clean
rm -rf /var/lib/apt/lists/* /root/.cache'
base="$("$bin" images bootstrap -q)"
tag="swe-forge/harbor-runner:$(printf '%s\n%s\n%s\n' "$base" "$HARBOR_VERSION" "$setup" | sha256sum | cut -c1-12)"
if ! docker image inspect "$tag" >/dev/null 2>&1; then
  echo "harbor: making the runner image $tag (harbor==$HARBOR_VERSION on $base)" >&2
  name="swe-forge-harbor-setup-$$"
  mounts=()
  [ -f "$bundle" ] && mounts=(-v "$bundle:/run/swe-forge-ca.crt:ro")
  if ! docker run --name "$name" "${mounts[@]}" "$base" bash -c "$setup" setup "$HARBOR_VERSION" >"$work/runner-setup.log" 2>&1; then
    tail -20 "$work/runner-setup.log" >&2
    docker rm -f "$name" >/dev/null 2>&1 || true
    echo "harbor: the runner image could not be made (apt or pip refused)" >&2
    exit 2
  fi
  # The base's labels would make the runner pass for a base image (`images bootstrap` finds the
  # base by them): the runner gets its own role.
  docker commit --change 'CMD ["bash"]' \
    --change 'LABEL dev.swe-forge.role=harbor-runner dev.swe-forge.rootfs-sha256= dev.swe-forge.suite=' \
    "$name" "$tag" >/dev/null
  docker rm -f "$name" >/dev/null
fi

tasks=()
for d in "$dataset"/*/; do [ -f "$d/task.toml" ] && tasks+=("$(basename "$d")"); done
n=${#tasks[@]}
[ "$n" -gt 0 ] || { echo "harbor: no task folder in $dataset" >&2; exit 1; }

# Harbor builds each task's environment (and removes its tag when done); the images its builds
# leave untagged are removed when the check ends, however it ends.
dangling_before="$(docker images -q --filter dangling=true | sort -u)"
remove_left_images() {
  comm -13 <(printf '%s\n' "$dangling_before") <(docker images -q --filter dangling=true | sort -u) |
    xargs -r docker rmi >/dev/null 2>&1 || true
}
trap remove_left_images EXIT

# The same paths inside the runner as here: Harbor hands them to the engine for its bind mounts.
runner() {
  docker run --rm -i -v /var/run/docker.sock:/var/run/docker.sock -v "$dataset:$dataset:ro" -v "$work:$work" \
    -w "$work" -e HOME="$work/home" -e DOCKER_BUILDKIT=0 -e COLUMNS=160 -e PYTHONUNBUFFERED=1 "$tag" "$@"
}
mkdir -p "$work/home"

failed=0
runner /opt/harbor/bin/python - "$dataset" <<'EOF' || failed=1
import pathlib, sys
from harbor.models.task.task import Task
dirs = sorted(d for d in pathlib.Path(sys.argv[1]).iterdir() if (d / "task.toml").is_file())
ok = 0
for d in dirs:
    try:
        t = Task(d)
        assert t.instruction.strip(), "empty instruction"
        ok += 1
    except Exception as e:
        print(f"harbor: loader refused {d.name}: {e!r}")
print(f"harbor: loader accepted {ok} of {len(dirs)} task folders")
sys.exit(0 if ok == len(dirs) else 1)
EOF

rm -rf "$work/dataset" "$work/jobs"
cp -r "$dataset" "$work/dataset"
for t in "${tasks[@]}"; do
  sed -i 's/^network_mode = "no-network"$/network_mode = "public"/' "$work/dataset/$t/task.toml"
  printf 'services:\n  main:\n    network_mode: none\n' >"$work/dataset/$t/environment/docker-compose.yaml"
done

# A forged grade, run after the oracle: the agent's "solution" leaves the code alone and replaces the
# image's /swe-forge/run-tests with a script that replays the oracle's passing log. A verifier in
# the agent's container would read that log; the task's separate verifier never sees it (only the
# diff of /testbed crosses over), so every forged task must score 0.
forge_dataset() {
  rm -rf "$work/forged"
  cp -r "$work/dataset" "$work/forged"
  for t in "${tasks[@]}"; do
    log=$(find "$work/jobs/oracle" -path "*/${t}__*/verifier/run.log" -print -quit)
    [ -n "$log" ] && cp "$log" "$work/forged/$t/solution/gold.log"
    cat >"$work/forged/$t/solution/solve.sh" <<'SOLVE'
#!/bin/bash
cp /solution/gold.log /tmp/gold.log 2>/dev/null || true
printf '#!/bin/bash\ncat /tmp/gold.log\nexit 0\n' > /swe-forge/run-tests
SOLVE
  done
}

for agent in oracle nop forged; do
  path="$work/dataset" name="$agent"
  if [ "$agent" = forged ]; then forge_dataset; path="$work/forged" agent=oracle; fi
  if ! runner /opt/harbor/bin/harbor run -p "$path" -a "$agent" -e docker -o "$work/jobs/$name" \
    -n "${HARBOR_CONCURRENCY:-2}" -y -q >"$work/$agent.log" 2>&1; then
    tail -30 "$work/$agent.log" >&2
    echo "harbor: harbor run -a $agent failed" >&2
    failed=1
    continue
  fi
  ones=0
  for t in "${tasks[@]}"; do
    reward=$(find "$work/jobs/$name" -path "*/${t}__*/verifier/reward.txt" -print -quit 2>/dev/null | xargs -r cat)
    echo "harbor: $name $t reward ${reward:-none}"
    [ "${reward:-}" = 1 ] && ones=$((ones + 1))
  done
  echo "harbor: $name reward 1 on $ones of $n"
done
exit "$failed"
