"""Checks that swe-forge names a log's tests as a Multi-SWE-bench handler does, on real logs.

usage: python msb_names_check.py ORG/REPO HANDLER_MODULE SWE_FORGE FRAMEWORK LOG...
       python msb_names_check.py --table SWE_FORGE [REPO_ROOT]

The handlers come from PyPI multi-swe-bench 1.1.2, imported at run time: set MSB_PATH to the
folder holding its `multi_swe_bench` package (an unpacked wheel; its dependencies
dataclasses_json and unidiff installed), or have it installed.

For each log, the `parse_log` of the handler module (multi_swe_bench.harness.repos.<module>) and
`swe-forge parse --msb --github-repo ORG/REPO -f FRAMEWORK` are run on the same bytes; the names
and statuses must be the same. Prints one line per log and exits 1 on a difference. The
handler's configure-check "tests" (CMake's `-- Performing Test X - Success`, which
catchorg/Catch2's handler counts) are listed apart: swe-forge does not count a configure check
as a test.

`--table` runs every case of CASES (one naming rule of one language, a repository following it,
its handler and a real log of the fixtures) and prints the Markdown table of
docs/benchmarks/msb-handlers.md: names both sides give with the same status, names only the
handler gives, only swe-forge gives, and names whose status differs.
"""

import importlib
import json
import os
import subprocess
import sys
import types
from pathlib import Path

if os.environ.get("MSB_PATH"):
    sys.path.insert(0, os.environ["MSB_PATH"])

from msb_parse import parse_log_of  # noqa: E402

TD = "crates/swe-forge-logparse/test_data"
# (language, rule, repository, handler module, framework, log under the repository root)
CASES = [
    ("JavaScript", "jest `<file>:<title>` (default)", "iamkun/dayjs", "javascript.iamkun.dayjs", "jest", f"{TD}/jest/verbose.log"),
    ("JavaScript", "jest `<file>:<title>` (default)", "anuraghazra/github-readme-stats",
     "javascript.anuraghazra.github_readme_stats", "jest", f"{TD}/jest/verbose.log"),
    ("TypeScript", "jest `<file>:<title>` (default)", "darkreader/darkreader", "typescript.darkreader.darkreader", "jest",
     f"{TD}/jest/verbose.log"),
    ("JavaScript", "jest title (`[jest] leaf_title_repos`)", "Kong/insomnia", "javascript.Kong.insomnia", "jest",
     f"{TD}/jest/verbose.log"),
    ("JavaScript", "jest title (`[jest] leaf_title_repos`)", "facebook/react", "javascript.facebook.react", "jest",
     f"{TD}/jest/verbose.log"),
    ("TypeScript", "jest title (`[jest] leaf_title_repos`)", "reduxjs/redux", "typescript.reduxjs.redux", "jest",
     f"{TD}/jest/verbose.log"),
    ("TypeScript", "jest full title (`[jest] full_title_repos`)", "canonical/maas-ui",
     "typescript.canonical.maas_ui_4111_to_1899", "jest", f"{TD}/jest/verbose.log"),
    ("JavaScript", "mocha title (default)", "axios/axios", "javascript.axios.axios", "mocha", f"{TD}/mocha/spec.log"),
    ("TypeScript", "mocha title (default)", "payloadcms/payload", "typescript.payloadcms.payload", "mocha",
     f"{TD}/mocha/spec.log"),
    ("JavaScript", "mocha path (`[mocha] path_repos`)", "Automattic/mongoose", "javascript.Automattic.mongoose", "mocha",
     f"{TD}/mocha/spec.log"),
    ("TypeScript", "mocha full title (`[mocha] full_title_repos`)", "Hacker0x01/react-datepicker",
     "typescript.Hacker0x01.react_datepicker_2996_to_1656", "mocha", f"{TD}/mocha/spec.log"),
    ("JavaScript", "mocha JSON `fullTitle` (default)", "expressjs/express", "javascript.expressjs.express", "mocha-json",
     f"{TD}/mocha-json/report.log"),
    ("TypeScript", "mocha JSON `<file>:<fullTitle>` (`[mocha_json] file_title_repos`)", "mui/material-ui",
     "typescript.mui.material_ui", "mocha-json", f"{TD}/mocha-json/report.log"),
    ("Java", "Maven class (default)", "alibaba/fastjson2", "java.alibaba.fastjson2", "maven-surefire",
     f"{TD}/maven-surefire/junit5_mixed.log"),
    ("Java", "Maven class (default)", "fasterxml/jackson-core", "java.fasterxml.jackson_core", "maven-surefire",
     f"{TD}/maven-surefire/surefire2_junit4.log"),
    ("Java", "Maven class (default)", "apache/dubbo", "java.apache.dubbo", "maven-surefire",
     f"{TD}/maven-surefire/rerun_flaky.log"),
    ("Rust", "cargo `module::test` (default)", "BurntSushi/ripgrep", "rust.BurntSushi.ripgrep", "cargo-test",
     f"{TD}/cargo-test/no_fail_fast.log"),
    ("Rust", "cargo `module::test` (default)", "tokio-rs/tokio", "rust.tokio_rs.tokio", "cargo-test",
     f"{TD}/cargo-test/workspace_same_target_name.log"),
    ("Rust", "cargo `module::test` (default)", "clap-rs/clap", "rust.clap_rs.clap", "cargo-test",
     f"{TD}/cargo-test/nocapture_split_status.log"),
]


def handler_names(module, text, repo="o/r"):
    org, name = repo.split("/")
    parse = parse_log_of(module)
    # The handler's own class, for handlers calling their other methods (express's
    # `parse_json_log`); `pr` is a record number above any real one.
    cls = next(c for c in vars(importlib.import_module(f"multi_swe_bench.harness.repos.{module}")).values()
               if isinstance(c, type) and c.__dict__.get("parse_log") is parse)
    this = cls.__new__(cls)
    this.__dict__["_pr"] = types.SimpleNamespace(number=10**9, org=org, repo=name)
    result = parse(this, text)
    theirs = {n: "PASS" for n in result.passed_tests}
    theirs.update({n: "FAIL" for n in result.failed_tests})
    theirs.update({n: "SKIP" for n in result.skipped_tests})
    return theirs


def our_names(forge, repo, framework, path):
    out = subprocess.run(
        [forge, "parse", "--msb", "--github-repo", repo, "-f", framework, str(path)],
        capture_output=True, text=True, check=True,
    ).stdout
    return {row["msb"]: row["status"] for row in map(json.loads, out.splitlines())}


def table(forge, root):
    print("| language | rule | repository | handler | log | same | handler only | swe-forge only | status differs |")
    print("|---|---|---|---|---|---:|---:|---:|---:|")
    for lang, rule, repo, module, framework, log in CASES:
        path = Path(root) / log
        text = path.read_text(encoding="utf-8", errors="replace")
        try:
            theirs = handler_names(module, text, repo)
        except Exception as e:  # noqa: BLE001 - the handler's own error is the result
            print(f"| {lang} | {rule} | {repo} | `{module}` | `{log.removeprefix(TD + '/')}` | handler error: "
                  f"{type(e).__name__} | | | |")
            continue
        ours = our_names(forge, repo, framework, path)
        same = sum(n in ours and ours[n] == s for n, s in theirs.items())
        differs = sum(n in ours and ours[n] != s for n, s in theirs.items())
        print(f"| {lang} | {rule} | {repo} | `{module}` | `{log.removeprefix(TD + '/')}` | {same} | "
              f"{len(set(theirs) - set(ours))} | {len(set(ours) - set(theirs))} | {differs} |")


def main():
    if sys.argv[1] == "--table":
        table(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else ".")
        return
    repo, module, forge, framework, *logs = sys.argv[1:]
    bad = 0
    for path in logs:
        text = open(path, encoding="utf-8", errors="replace").read()
        theirs = handler_names(module, text, repo)
        ours = our_names(forge, repo, framework, path)
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
