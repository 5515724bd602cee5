"""Times Multi-SWE-bench's own log parsers (PyPI multi-swe-bench 1.1.2) on the logs that
`cargo bench -p swe-forge-logparse` generated, for docs/benchmarks/logparse.md.

usage: python msb_parse.py LOG_DIR

Each parser is the `parse_log` method of the repository handler Multi-SWE-bench uses for
that framework; it is called as Multi-SWE-bench calls it, on the whole log as one string
(read and decoded first, as its harness does; the read is timed separately).
"""

import importlib
import inspect
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


def main():
    log_dir = Path(sys.argv[1])
    this = types.SimpleNamespace(pr=types.SimpleNamespace(number=10**9, org="o", repo="r"))
    print("| framework | MSB parser | log MB | read s | parse s | MB/s | passed+failed+skipped |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for framework, module_name in PARSERS.items():
        path = log_dir / f"{framework}.log"
        parse_log = parse_log_of(module_name)
        start = time.perf_counter()
        text = path.read_bytes().decode("utf-8", errors="replace")
        read = time.perf_counter() - start
        start = time.perf_counter()
        try:
            result = parse_log(this, text)
            found = result.passed_count + result.failed_count + result.skipped_count
        except Exception as e:  # noqa: BLE001 - report and go on
            found = f"error: {type(e).__name__}: {e}"[:60]
        parse = time.perf_counter() - start
        mb = path.stat().st_size / 1e6
        print(f"| {framework} | {module_name} | {mb:.0f} | {read:.2f} | {parse:.2f} | {mb / parse:.1f} | {found} |")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
