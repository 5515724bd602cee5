"""Checks that swe-forge names a log's tests as a Multi-SWE-bench handler does, on real logs.

usage: python msb_names_check.py ORG/REPO HANDLER_MODULE SWE_FORGE FRAMEWORK LOG...

For each log, the `parse_log` of the handler module (multi_swe_bench.harness.repos.<module>, from
PyPI multi-swe-bench 1.1.2) and `swe-forge parse --msb --github-repo ORG/REPO -f FRAMEWORK` are
run on the same bytes; the names and statuses must be the same. Prints one line per log and exits
1 on a difference. The handler's configure-check "tests" (CMake's `-- Performing Test X -
Success`, which catchorg/Catch2's handler counts) are listed apart: swe-forge does not count a
configure check as a test.
"""

import json
import subprocess
import sys

from msb_parse import parse_log_of


def main():
    repo, module, forge, framework, *logs = sys.argv[1:]
    parse = parse_log_of(module)
    bad = 0
    for path in logs:
        text = open(path, encoding="utf-8", errors="replace").read()
        result = parse(None, text)
        theirs = {n: "PASS" for n in result.passed_tests}
        theirs.update({n: "FAIL" for n in result.failed_tests})
        theirs.update({n: "SKIP" for n in result.skipped_tests})
        out = subprocess.run(
            [forge, "parse", "--msb", "--github-repo", repo, "-f", framework, path],
            capture_output=True, text=True, check=True,
        ).stdout
        ours = {}
        for line in out.splitlines():
            row = json.loads(line)
            ours[row["msb"]] = row["status"]
        checks = {n for n in theirs if n not in ours and f"-- performing test {n}" in text.lower()}
        handler = {n: s for n, s in theirs.items() if n not in checks}
        same = handler == ours
        bad += not same
        print(f"{path}: {'same' if same else 'DIFFERENT'}: {len(ours)} tests "
              f"({sum(s == 'PASS' for s in ours.values())} pass, {sum(s == 'FAIL' for s in ours.values())} fail); "
              f"handler's configure checks left out: {len(checks)}")
        if not same:
            for n in sorted(set(handler) | set(ours)):
                if handler.get(n) != ours.get(n):
                    print(f"  {n}: handler {handler.get(n)}, swe-forge {ours.get(n)}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
