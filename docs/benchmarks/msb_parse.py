"""Times Multi-SWE-bench's own log parsers (PyPI multi-swe-bench 1.1.2) on the logs that
`cargo bench -p swe-forge-logparse` generated, for docs/benchmarks/logparse.md.

usage: python msb_parse.py LOG_DIR

Each parser is the `parse_log` method of the repository handler Multi-SWE-bench uses for
that framework, called as Multi-SWE-bench calls it: on the whole log as one string (read and
decoded first, as its harness does; the read is timed separately). Times are CPU seconds of
the parsing thread, best of three (wall seconds beside them). Each parser runs in its own
process so that the peak resident memory of that process can be reported.
"""

import importlib
import inspect
import resource
import subprocess
import sys
import time
import types
from pathlib import Path

# framework -> handler module (multi_swe_bench.harness.repos.<...>) whose parse_log is used.
PARSERS = {
    "go-test": "golang.cli.cli",
    "cargo-test": "rust.BurntSushi.ripgrep",
    "maven-surefire": "java.alibaba.fastjson2",
    "jest": "javascript.anuraghazra.github_readme_stats",
    "mocha": "javascript.axios.axios",
    "vitest": "javascript.sveltejs.svelte",
    "gtest": "cpp.yhirose.cpp_httplib",
    "ctest": "cpp.fmtlib.fmt",
    "automake": "c.jqlang.jq",
}


def parse_log_of(module_name):
    module = importlib.import_module(f"multi_swe_bench.harness.repos.{module_name}")
    for _, cls in inspect.getmembers(module, inspect.isclass):
        if cls.__module__ == module.__name__ and "parse_log" in cls.__dict__:
            return cls.__dict__["parse_log"]
    raise SystemExit(f"no parse_log in {module_name}")


def run_one(log_dir, framework):
    module_name = PARSERS[framework]
    path = log_dir / f"{framework}.log"
    parse_log = parse_log_of(module_name)
    this = types.SimpleNamespace(pr=types.SimpleNamespace(number=10**9, org="o", repo="r"))
    start = time.perf_counter()
    text = path.read_bytes().decode("utf-8", errors="replace")
    read = time.perf_counter() - start
    best = best_wall = None
    for _ in range(3):
        start, start_cpu = time.perf_counter(), time.thread_time()
        try:
            result = parse_log(this, text)
            found = result.passed_count + result.failed_count + result.skipped_count
        except Exception as e:  # noqa: BLE001 - report and go on
            found = f"error: {type(e).__name__}: {e}"[:60]
        took, took_wall = time.thread_time() - start_cpu, time.perf_counter() - start
        best = took if best is None else min(best, took)
        best_wall = took_wall if best_wall is None else min(best_wall, took_wall)
    mb = path.stat().st_size / 1e6
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"| {framework} | {module_name} | {mb:.0f} | {read:.2f} | {best:.2f} | {mb / best:.1f} | {best_wall:.2f} "
        f"| {found} | {peak:.0f} |"
    )


def main():
    log_dir = Path(sys.argv[1])
    if len(sys.argv) > 2:
        run_one(log_dir, sys.argv[2])
        return
    print("| framework | MSB parser | log MB | read s | CPU s | MB/s (CPU) | wall s | tests | peak RSS MiB |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    sys.stdout.flush()
    for framework in PARSERS:
        subprocess.run([sys.executable, __file__, str(log_dir), framework], check=True)


if __name__ == "__main__":
    main()
