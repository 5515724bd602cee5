#!/usr/bin/env bash
# Reads what `swe-forge export` wrote with the Python readers dataset users have: pandas on
# pyarrow 15 and on the current pyarrow, polars, duckdb, Hugging Face `datasets` 2.19 and current,
# and (when they install) the `swebench` (4.1.0 and 5.0.2) and `multi-swe-bench` packages. Each reader set lives in
# its own virtual environment with pinned versions from PyPI, made once and reused by every
# checkout of the machine (the unpinned `current` set is made anew when a week old). They are
# kept in $SWE_FORGE_PYTHON_VENVS, else ${XDG_CACHE_HOME:-~/.cache}/swe-forge/python-readers;
# one process makes a given set at a time (a lock file beside it), the others wait and reuse it.
#
#   bash scripts/python-readers.sh EXPORT_DIR
#   bash scripts/python-readers.sh --run-evaluation WORK_DIR DATASET.jsonl...
#
# The second form makes only the swebench5 set and runs SWE-bench 5's own harness
# (`run_evaluation`, gold and a wrong patch) on swe-forge's SWE-bench rows and their local
# instance images (scripts/swebench_run_evaluation.py); it exits 2 when pip cannot install it.
#
# EXPORT_DIR holds the files the `export::python_readers_read_every_export` test writes (records.jsonl,
# instances.parquet, tests.parquet, swebench.jsonl, swebench.parquet, and hub/: a folder `publish` wrote); see
# scripts/python_readers.py. The harness set also compares `swe-forge parse --msb` (the binary in
# $SWE_FORGE_BIN, else target/debug/swe-forge) with Multi-SWE-bench's parse_log on the logs of
# crates/swe-forge-logparse/test_data. Exits non-zero when any
# reader fails; only the harness packages (swebench, multi-swe-bench) may be skipped, and only
# when pip cannot install them.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mode=readers
if [ "${1:-}" = "--run-evaluation" ]; then
  mode=run-evaluation
  shift
  [ $# -ge 2 ] || { echo "usage: python-readers.sh --run-evaluation WORK_DIR DATASET.jsonl..." >&2; exit 64; }
fi
if [ "$mode" = readers ]; then
  export_dir="$(cd "${1:?usage: python-readers.sh EXPORT_DIR}" && pwd)"
fi
venvs="${SWE_FORGE_PYTHON_VENVS:-${XDG_CACHE_HOME:-$HOME/.cache}/swe-forge/python-readers}"
mkdir -p "$venvs"
python="${PYTHON:-python3}"

# A TLS-intercepting proxy: pip and requests trust the system bundle.
bundle="${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}"
if [ -f "$bundle" ]; then
  export PIP_CERT="${PIP_CERT:-$bundle}" REQUESTS_CA_BUNDLE="${REQUESTS_CA_BUNDLE:-$bundle}"
fi
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1

# name|requirements. A venv is remade when its requirement line changes. The harness packages are
# pinned exactly: swebench 4.1.0 (make_test_spec builds the eval script from its own spec table)
# and 5.0.2, the current release (make_test_spec reads the row's own eval_script, log_parser,
# eval_type and image), each in its own venv; multi-swe-bench 1.1.2.
sets=(
  "pyarrow15|pyarrow==15.* pandas==2.1.* numpy<2"
  "datasets219|datasets==2.19.* pyarrow==16.* numpy<2 pandas<2.3"
  "current|pyarrow pandas polars duckdb datasets"
  "harness|swebench==4.1.0 multi-swe-bench==1.1.2"
  "swebench5|swebench==5.0.2"
)

# Makes venv $1 with requirements $2 unless it exists with exactly those (and, unpinned, is less
# than a week old); returns 1 when pip fails. Under the set's lock: a second process waits.
ensure_venv() {
  local dir="$venvs/$1" reqs="$2"
  exec {lock}>"$dir.lock"
  flock "$lock"
  if [ -f "$dir/.requirements" ] && [ "$(cat "$dir/.requirements")" = "$reqs" ] &&
    { [[ "$reqs" == *==* ]] || [ -z "$(find "$dir/.requirements" -mtime +7)" ]; }; then
    flock -u "$lock"
    return 0
  fi
  rm -rf "$dir"
  "$python" -m venv "$dir"
  # shellcheck disable=SC2086 # the requirement line is a word list
  if ! "$dir/bin/pip" install --quiet --prefer-binary $reqs >"$dir.pip.log" 2>&1; then
    tail -20 "$dir.pip.log" >&2
    rm -rf "$dir"
    flock -u "$lock"
    return 1
  fi
  echo "$reqs" >"$dir/.requirements"
  flock -u "$lock"
}

if [ "$mode" = run-evaluation ]; then
  for set in "${sets[@]}"; do
    if [ "${set%%|*}" = swebench5 ]; then
      ensure_venv swebench5 "${set#*|}" || { echo "python-readers: swebench5: pip could not install '${set#*|}'" >&2; exit 2; }
    fi
  done
  exec "$venvs/swebench5/bin/python" "$here/swebench_run_evaluation.py" "$@"
fi

# Make the environments side by side (mostly downloads), then run the readers one set at a time.
for set in "${sets[@]}"; do
  name="${set%%|*}"
  (ensure_venv "$name" "${set#*|}" && touch "$venvs/$name.ready" || rm -f "$venvs/$name.ready") &
done
wait

failed=0
for set in "${sets[@]}"; do
  name="${set%%|*}"
  reqs="${set#*|}"
  if [ ! -f "$venvs/$name.ready" ]; then
    if [ "$name" = harness ] || [ "$name" = swebench5 ]; then
      echo "python-readers: $name: pip could not install '$reqs'; harness checks skipped" >&2
      continue
    fi
    echo "python-readers: $name: pip could not install '$reqs'" >&2
    failed=1
    continue
  fi
  echo "== $name: $("$venvs/$name/bin/python" -m pip freeze 2>/dev/null |
    grep -iE '^(pyarrow|pandas|polars|duckdb|datasets|swebench|multi.swe.bench)==' | tr '\n' ' ')"
  if ! "$venvs/$name/bin/python" "$here/python_readers.py" "$name" "$export_dir"; then
    echo "python-readers: $name: a reader failed" >&2
    failed=1
  fi
done
exit "$failed"
