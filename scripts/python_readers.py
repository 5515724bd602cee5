"""Reads swe-forge's exports with the readers of one virtual environment and checks them
against the JSONL records; the harness set also checks `swe-forge parse --msb` names against
Multi-SWE-bench's own parse_log on the logs of crates/swe-forge-logparse/test_data (the
swe-forge binary is $SWE_FORGE_BIN, else target/debug/swe-forge). Run by
scripts/python-readers.sh as

    python python_readers.py SET EXPORT_DIR

SET names the reader set (pyarrow15, datasets219, current, harness, swebench5). EXPORT_DIR holds
records.jsonl (the source of truth), instances.parquet (the same records), tests.parquet,
swebench.jsonl and swebench.parquet (SWE-bench rows of the same records), and msb.jsonl (Go
records exported with `--naming msb` from the runs kept in msb-work/logs/, and
msb-swebench.jsonl, the same as SWE-bench rows). Every check that
fails is printed; the exit status is 1 when any failed.
"""

import datetime
import json
import os
import sys
import tempfile

SET, DIR = sys.argv[1], sys.argv[2]
FAILURES = []

MAPS = ["fixed_tests", "p2p_tests", "f2p_tests", "s2p_tests", "n2p_tests"]
RESULTS = ["run_result", "test_patch_result", "fix_patch_result"]
OPTIONAL = ["hints", "tag", "number_interval", "lang"]
# The flat columns of the `swe_forge` block (table layout 3), derived like the four before them.
FLAT = ["difficulty", "evidence_complete", "image", "image_id", "image_digest", "warnings", "quality_flags",
        "created_at", "merged_at"]
DERIVED = ["status", "rejection_reasons", "FAIL_TO_PASS", "PASS_TO_PASS", *FLAT]


def path(name):
    return os.path.join(DIR, name)


def jsonl(name):
    with open(path(name), encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def plain(v):
    """numpy arrays and scalars (pandas) as Python lists and numbers, recursively."""
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    if type(v).__module__ == "numpy":
        return plain(v.tolist()) if hasattr(v, "tolist") else v
    if isinstance(v, float) and v != v:
        return None  # pandas 3 reads a null string as NaN; no column here is a float
    return v


def record_of(row):
    """The record an instances-table row stands for (see schemas/parquet.md)."""
    row = plain(dict(row))
    rec = {}
    for k, v in row.items():
        if k in DERIVED:
            continue
        if k in MAPS:
            v = {e["name"]: {"run": e["run"], "test": e["test"], "fix": e["fix"]} for e in v}
        elif k == "swe_forge":
            if v is None:
                continue
            v = json.loads(v)
        elif k in OPTIONAL and v is None:
            continue
        rec[k] = v
    return rec


def check(what, fn):
    try:
        fn()
        print(f"  ok   {what}")
    except Exception as e:  # noqa: BLE001 - every failure is reported, then the script fails
        FAILURES.append(what)
        print(f"  FAIL {what}: {type(e).__name__}: {e}")


EXPECTED = jsonl("records.jsonl")
SWEBENCH = jsonl("swebench.jsonl")


def same_records(rows, reader):
    rows = list(rows)
    assert len(rows) == len(EXPECTED), f"{len(rows)} rows, {len(EXPECTED)} records"
    for row, want in zip(rows, EXPECTED):
        got = record_of(row)
        if got != want:
            diff = sorted(k for k in set(got) | set(want) if got.get(k) != want.get(k))
            raise AssertionError(f"{reader}: {want['instance_id']} differs in {diff}")


def published_records():
    """The records `publish` ships of records.jsonl: the accepted ones."""
    return [r for r in EXPECTED if (r.get("swe_forge") or {}).get("status") == "accepted"]


def same_published(rows, lang):
    """The rows of a configuration of the folder `publish` wrote (hub/, see the export test):
    those of the accepted records (of language `lang`), each once."""
    got = sorted((record_of(row) for row in rows), key=lambda r: r["instance_id"])
    want = sorted((r for r in published_records() if lang is None or r.get("lang") == lang),
                  key=lambda r: r["instance_id"])
    assert want, "no accepted record to compare with"
    assert [r["instance_id"] for r in got] == [r["instance_id"] for r in want], f"{len(got)} rows, {len(want)} records"
    for g, w in zip(got, want):
        if g != w:
            raise AssertionError(f"{w['instance_id']} differs in {sorted(k for k in set(g) | set(w) if g.get(k) != w.get(k))}")


def evidence_complete(ev):
    """`Evidence::complete` of swe-forge-core: every gold run resolved, both controls held."""
    if not ev or ev.get("gold_runs", 0) == 0 or ev.get("gold_resolved") != ev["gold_runs"]:
        return False
    controls = ev.get("controls", [])
    return all(any(c["name"] == n and not c["resolved"] and not c.get("f2p_passed") for c in controls)
               for n in ("empty_patch", "test_patch_alone"))


def flat_of(rec):
    """The flat columns of a record's row (schemas/parquet.md)."""
    m = rec.get("swe_forge") or {}
    registry = m.get("registry_image")
    return {
        "difficulty": (m.get("difficulty") or {}).get("label"),
        "evidence_complete": evidence_complete(m.get("evidence")),
        "image": m.get("image"),
        "image_id": m.get("image_id"),
        "image_digest": registry.rsplit("@", 1)[1] if registry and "@" in registry else None,
        "warnings": m.get("warnings", []),
        "quality_flags": [],
        "created_at": m.get("created_at"),
        "merged_at": m.get("merged_at"),
    }


def same_flat(rows):
    rows = [plain(dict(r)) for r in rows]
    assert len(rows) == len(EXPECTED), f"{len(rows)} rows"
    for row, want in zip(rows, EXPECTED):
        got = {k: row[k] for k in FLAT}
        assert got == flat_of(want), f"{want['instance_id']}: {got} != {flat_of(want)}"
    assert any(flat_of(r)["evidence_complete"] for r in EXPECTED), "no record with complete evidence"


def tests_rows(rows):
    rows = [plain(dict(r)) for r in rows]
    want = 0
    for r in EXPECTED:
        want += len(set().union(*(r.get(m, {}).keys() for m in MAPS)))
    assert len(rows) == want, f"{len(rows)} test rows, expected {want}"
    assert all(r["category"] in ("p2p", "f2p", "s2p", "n2p") for r in rows)


def instant(v):
    """An ISO 8601 time, or the datetime pyarrow's JSON reader made of one, as naive UTC."""
    if isinstance(v, str):
        v = datetime.datetime.fromisoformat(v.replace("Z", "+00:00"))
    if v is not None and v.tzinfo is not None:
        v = v.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    return v


def same_swebench(rows, reader, json_dates=False):
    """json_dates: the reader infers timestamps from JSON strings (pyarrow's JSON reader, under
    `datasets`), so `created_at` is compared as an instant there."""
    rows = [plain(dict(r)) for r in rows]
    if json_dates:
        rows = [{**r, "created_at": instant(r["created_at"])} for r in rows]
    assert len(rows) == len(SWEBENCH) == len(EXPECTED), f"{len(rows)} rows"
    for row, want, rec in zip(rows, SWEBENCH, EXPECTED):
        if json_dates:
            want = {**want, "created_at": instant(want["created_at"])}
        diff = sorted(k for k in set(row) | set(want) if row.get(k) != want.get(k))
        assert not diff, f"{reader}: {want['instance_id']} differs in {diff}: {[row.get(k) for k in diff]}"
        f2p, p2p = json.loads(row["FAIL_TO_PASS"]), json.loads(row["PASS_TO_PASS"])
        assert isinstance(f2p, list) and all(isinstance(t, str) for t in f2p)
        assert isinstance(p2p, list) and all(isinstance(t, str) for t in p2p)
        assert f2p == sorted(rec["fixed_tests"]) and p2p == sorted(rec["p2p_tests"])
        assert row["repo"] == f"{rec['org']}/{rec['repo']}" and row["patch"] == rec["fix_patch"]


def pandas_readers():
    import pandas as pd
    import pyarrow.parquet as pq

    v = f"pandas {pd.__version__}, pyarrow {__import__('pyarrow').__version__}"
    check(f"pandas.read_parquet instances ({v})",
          lambda: same_records(pd.read_parquet(path("instances.parquet")).to_dict("records"), "pandas"))
    check(f"pyarrow read_table instances ({v})",
          lambda: same_records(pq.read_table(path("instances.parquet")).to_pylist(), "pyarrow"))
    check(f"pandas.read_parquet tests ({v})",
          lambda: tests_rows(pd.read_parquet(path("tests.parquet")).to_dict("records")))
    check(f"pandas.read_parquet swebench ({v})",
          lambda: same_swebench(pd.read_parquet(path("swebench.parquet")).to_dict("records"), "pandas"))
    check(f"pandas.read_json swebench ({v})",
          lambda: same_swebench(pd.read_json(path("swebench.jsonl"), lines=True, dtype=False, convert_dates=False)
                                .astype(object).where(lambda d: d.notna(), None).to_dict("records"), "pandas"))


def datasets_readers():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    cache = tempfile.mkdtemp(prefix="hf-cache-")
    import datasets

    v = f"datasets {datasets.__version__}, pyarrow {__import__('pyarrow').__version__}"

    def load(name, kind="parquet"):
        return datasets.load_dataset(kind, data_files=path(name), split="train", cache_dir=cache)

    check(f"datasets.load_dataset parquet instances ({v})", lambda: same_records(load("instances.parquet"), "datasets"))
    check(f"datasets.load_dataset parquet instances, flat columns ({v})", lambda: same_flat(load("instances.parquet")))
    check(f"datasets.Dataset.from_parquet instances ({v})",
          lambda: same_records(datasets.Dataset.from_parquet(path("instances.parquet"), cache_dir=cache), "datasets"))
    check(f"datasets.load_dataset parquet tests ({v})", lambda: tests_rows(load("tests.parquet")))
    check(f"datasets.load_dataset parquet swebench ({v})",
          lambda: same_swebench(load("swebench.parquet"), "datasets"))
    check(f"datasets.load_dataset json swebench ({v})",
          lambda: same_swebench(load("swebench.jsonl", "json"), "datasets", json_dates=True))
    if os.path.isdir(path("hub")):
        check(f"datasets.load_dataset of the publish folder, split test ({v})",
              lambda: same_published(datasets.load_dataset(path("hub"), split="test", cache_dir=cache), None))
        for lang in sorted({r.get("lang") for r in published_records()}):
            check(f"datasets.load_dataset of the publish folder, lang_{lang} split test ({v})",
                  lambda lang=lang: same_published(
                      datasets.load_dataset(path("hub"), f"lang_{lang}", split="test", cache_dir=cache), lang))


def polars_readers():
    import polars as pl

    v = f"polars {pl.__version__}"
    check(f"polars.read_parquet instances ({v})",
          lambda: same_records(pl.read_parquet(path("instances.parquet")).to_dicts(), "polars"))
    check(f"polars.read_parquet tests ({v})", lambda: tests_rows(pl.read_parquet(path("tests.parquet")).to_dicts()))
    check(f"polars.read_parquet swebench ({v})",
          lambda: same_swebench(pl.read_parquet(path("swebench.parquet")).to_dicts(), "polars"))


def duckdb_readers():
    import duckdb

    v = f"duckdb {duckdb.__version__}"

    def rows(name):
        rel = duckdb.sql(f"SELECT * FROM read_parquet('{path(name)}')")
        return [dict(zip(rel.columns, r)) for r in rel.fetchall()]

    check(f"duckdb read_parquet instances ({v})", lambda: same_records(rows("instances.parquet"), "duckdb"))
    check(f"duckdb read_parquet tests ({v})", lambda: tests_rows(rows("tests.parquet")))
    check(f"duckdb flat columns of instances ({v})", lambda: same_flat(rows("instances.parquet")))

    def filtered():
        got = [r[0] for r in duckdb.sql(
            f"SELECT instance_id FROM read_parquet('{path('instances.parquet')}') "
            "WHERE evidence_complete AND difficulty IS NOT NULL AND created_at < '2025' ORDER BY instance_id").fetchall()]
        want = sorted(r["instance_id"] for r in EXPECTED
                      if flat_of(r)["evidence_complete"] and flat_of(r)["difficulty"]
                      and (flat_of(r)["created_at"] or "9") < "2025")
        assert got == want and got, f"{got} != {want}"

    check(f"duckdb filters on flat columns without json_extract ({v})", filtered)
    check(f"duckdb read_parquet swebench ({v})", lambda: same_swebench(rows("swebench.parquet"), "duckdb"))


def swebench_harness():
    """SWE-bench 4.x's make_test_spec accepts every row whose language it knows. Our repositories
    are not in its spec table, so each is registered with the spec of a repository of the same
    language (what a user adding a repository does); the row's own fields are used as they are."""
    from importlib.metadata import version

    v = f"swebench {version('swebench')}"
    exts = {".go": "go", ".rs": "rs", ".java": "java", ".js": "js", ".ts": "ts", ".c": "c", ".cpp": "cpp"}

    def ext_of(row, by_ext):
        for line in row["test_patch"].splitlines():
            if line.startswith("diff --git "):
                name = line.split(" b/")[-1]
                for suffix, ext in exts.items():
                    if name.endswith(suffix) and ext in by_ext:
                        return ext
        return None

    def run():
        from swebench.harness.constants import MAP_REPO_TO_EXT, MAP_REPO_VERSION_TO_SPECS
        from swebench.harness.test_spec.test_spec import make_test_spec

        by_ext = {}
        for repo, ext in MAP_REPO_TO_EXT.items():
            if repo in MAP_REPO_VERSION_TO_SPECS and ext not in by_ext:
                by_ext[ext] = next(iter(MAP_REPO_VERSION_TO_SPECS[repo].values()))
        accepted = 0
        for row in SWEBENCH:
            ext = ext_of(row, by_ext)
            if ext is None:
                continue
            if row["repo"] not in MAP_REPO_VERSION_TO_SPECS:
                MAP_REPO_TO_EXT[row["repo"]] = ext
                MAP_REPO_VERSION_TO_SPECS[row["repo"]] = {}
            MAP_REPO_VERSION_TO_SPECS[row["repo"]].setdefault(row["version"], by_ext[ext])
            spec = make_test_spec(row)
            assert spec.instance_id == row["instance_id"]
            assert spec.FAIL_TO_PASS == json.loads(row["FAIL_TO_PASS"])
            assert spec.PASS_TO_PASS == json.loads(row["PASS_TO_PASS"])
            accepted += 1
        assert accepted > 0, f"no row in a language swebench knows ({sorted(by_ext)})"
        print(f"       make_test_spec accepted {accepted} of {len(SWEBENCH)} rows")

    check(f"swebench make_test_spec on swebench.jsonl rows ({v})", run)


def heredoc(script, path):
    """The text the eval script's heredoc writes to `path` (`cat > PATH <<'DELIM'`)."""
    head = script.index(f"cat > {path} <<'")
    delim = script[head:].split("<<'", 1)[1].split("'", 1)[0]
    body = script.index("\n", head) + 1
    end = script.index(f"\n{delim}\n", body - 1)
    return script[body:end + 1]


def swebench5_harness():
    """SWE-bench 5 (the current release) reads the rows from both files with its own loader, and
    its make_test_spec takes each row's own image, eval_script, log_parser and eval_type. Its
    grading resolves every row of the `--naming msb` export on the log its eval script prints
    for the fix run validation kept: the run's log behind `| `, then the eval script's own
    results script (perl, with the row's names table) on it."""
    from importlib.metadata import version

    v = f"swebench {version('swebench')}"

    def specs():
        import subprocess

        from swebench.harness.log_parsers import PARSER_REGISTRY
        from swebench.harness.utils import load_swebench_dataset, make_test_spec

        for name in ("swebench.jsonl", "swebench.parquet"):
            rows = [dict(r) for r in load_swebench_dataset(path(name))]
            assert len(rows) == len(SWEBENCH), f"{name}: {len(rows)} rows"
            for row, want in zip(rows, SWEBENCH):
                spec = make_test_spec(row)
                assert spec.instance_id == want["instance_id"] and spec.image == want["image"]
                assert spec.FAIL_TO_PASS == json.loads(want["FAIL_TO_PASS"])
                assert spec.PASS_TO_PASS == json.loads(want["PASS_TO_PASS"])
                assert spec.eval_type == "pass_and_fail"
                assert spec.log_parser == "" or spec.log_parser in PARSER_REGISTRY, spec.log_parser
                if want["image"] is None:
                    assert want["eval_script"] == "", want["instance_id"]
                    continue
                script = spec.eval_script
                start, run, results, end = (script.index(m) for m in (
                    ">>>>> Start Test Output", "/swe-forge/run-tests > ", "perl /tmp/swe-forge-results.pl",
                    ">>>>> End Test Output"))
                assert start < run < results < end, script
                assert "SWEBENCH_TEST_EXIT_CODE=$?" in script[results:end], "the test exit code is recorded"
                assert want["test_patch"] in script
                subprocess.run(["bash", "-n", "-c", script], check=True)
        print(f"       load_swebench_dataset and make_test_spec on {len(SWEBENCH)} rows of each file")

    def grading():
        import subprocess

        from swebench.harness.grading import get_eval_report
        from swebench.harness.utils import make_test_spec

        rows = jsonl("msb-swebench.jsonl")
        assert rows and all(r["log_parser"] == "parse_log_jest_json" for r in rows), rows
        for row in rows:
            spec = make_test_spec(row)
            tmp = tempfile.mkdtemp()
            files = {}
            for name in ("results.pl", "names.tsv"):
                files[name] = os.path.join(tmp, name)
                with open(files[name], "w", encoding="utf-8") as f:
                    f.write(heredoc(row["eval_script"], f"/tmp/swe-forge-{name}"))
            import shlex

            call = next(line for line in row["eval_script"].splitlines()
                        if line.startswith("perl /tmp/swe-forge-results.pl "))
            parser, results_parser = shlex.split(call)[4:6]
            fix_log = path(f"msb-work/logs/{row['instance_id']}/fix.log")
            with open(fix_log, encoding="utf-8") as f:
                shown = "".join(f"| {line}" for line in f)
            results = subprocess.run(["perl", files["results.pl"], fix_log, os.path.join(tmp, "none"),
                                      parser, results_parser, files["names.tsv"]],
                                     check=True, capture_output=True, text=True).stdout
            assert results, f"{row['instance_id']}: no results"
            log = os.path.join(tmp, "test_output.txt")
            with open(log, "w", encoding="utf-8") as f:
                f.write(f"+ : '>>>>> Start Test Output'\n{shown}{results}+ : '>>>>> End Test Output'\n")
            gold = {"instance_id": row["instance_id"], "model_name_or_path": "gold", "model_patch": row["patch"]}
            report = get_eval_report(spec, gold, log, include_tests_status=True)[row["instance_id"]]
            assert report["resolved"], f"{row['instance_id']}: {report}"
        print(f"       get_eval_report resolved {len(rows)} of {len(rows)} --naming msb rows on their fix runs")

    check(f"swebench make_test_spec on swebench.jsonl and swebench.parquet rows ({v})", specs)
    check(f"swebench grading of the --naming msb rows with their own log_parser ({v})", grading)


def msb_harness():
    from importlib.metadata import version

    v = f"multi-swe-bench {version('multi-swe-bench')}"

    def run():
        from multi_swe_bench.harness.dataset import Dataset

        with open(path("records.jsonl"), encoding="utf-8") as f:
            lines = [line for line in f if line.strip()]
        for line in lines:
            ds, rec = Dataset.from_json(line), json.loads(line)
            assert (ds.org, ds.repo, ds.number) == (rec["org"], rec["repo"], rec["number"])
            assert set(ds.fixed_tests) == set(rec["fixed_tests"]) and set(ds.p2p_tests) == set(rec["p2p_tests"])
            assert ds.fix_patch_result.passed_count == rec["fix_patch_result"]["passed_count"]
        print(f"       Dataset.from_json loaded {len(lines)} records")

    check(f"multi-swe-bench Dataset.from_json on records.jsonl ({v})", run)


# Multi-SWE-bench test names: `swe-forge parse --msb --repo ORG/REPO` (what `export --naming msb`
# writes for a record of that repository) against the `parse_log` of that repository's handler
# (multi_swe_bench.harness.repos.<module>; docs/benchmarks/msb_parse.py), on the real logs of
# crates/swe-forge-logparse/test_data/<framework>/. Go has two: cli/cli's keeps subtest names
# whole, grpc-go's names a subtest by its parent (pipelines/naming/msb.toml lists it).
MSB_PARSERS = {
    "go-test": (("golang.cli.cli", "cli/cli"), ("golang.grpc.grpc_go", "grpc/grpc-go")),
    "cargo-test": (("rust.BurntSushi.ripgrep", "BurntSushi/ripgrep"),),
    "maven-surefire": (("java.alibaba.fastjson2", "alibaba/fastjson2"),),
    "jest": (("javascript.anuraghazra.github_readme_stats", "anuraghazra/github-readme-stats"),),
    "mocha": (("javascript.axios.axios", "axios/axios"),),
    "vitest": (("javascript.sveltejs.svelte", "sveltejs/svelte"),),
    "gtest": (("cpp.yhirose.cpp_httplib", "yhirose/cpp-httplib"),),
    "ctest": (("cpp.fmtlib.fmt", "fmtlib/fmt"),),
    "automake": (("c.jqlang.jq", "jqlang/jq"),),
}
TEST_DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "crates", "swe-forge-logparse", "test_data")

# Logs that are not compared: derived from a capture (CRLF, injected bytes, cuts, added colour)
# or hand-written (test_data/README.md). The comparison is about names Multi-SWE-bench would see
# in real logs. Results directories (automake/trs_files) are not logs, which these handlers take.
MSB_NOT_COMPARED = {
    "go-test/ansi", "go-test/crlf", "go-test/non_utf8", "go-test/truncated",
    "cargo-test/crlf", "cargo-test/non_utf8", "cargo-test/truncated",
    "cargo-test/old_cargo_format", "cargo-test/nocapture_glued_lines",
    "jest/crlf", "jest/non_utf8", "gtest/crlf", "gtest/truncated", "ctest/non_utf8",
}

# Expected differences, each from a Multi-SWE-bench parser bug or a choice of ours: (logs, status,
# side, names, reason). `logs` is a glob over `<framework>/<case>`, `status` PASS/FAIL/SKIP or *,
# `side` says who alone reports the name with that status (`ours`: `swe-forge parse --msb`,
# `msb`: Multi-SWE-bench's parse_log), `names` a regular expression the whole name matches. A
# difference no row explains fails the check, and so does a row that explains nothing.
MSB_EXPECTED = [
    ("go-test/*", "FAIL", "msb", r"example\.com/\S+",
     "MSB bug: `FAIL:?\\s?(.+?)\\s` also takes the package of a `FAIL pkg` summary line as a test"),
    ("go-test/*", "SKIP", "ours", r"TestSkip|TestSub/skipped",
     "MSB bug: cli/cli records a SKIP only when the test already failed"),
    ("go-test/*", "raises", "msb", r"ValueError: Passed tests and failed tests should not have common .*",
     "MSB bug: grpc-go's handler adds a passing subtest's parent to passed after the parent failed"),
    ("go-test/crash_panic_timeout", "FAIL", "ours", r"TestHangs",
     "killed by -timeout: no `--- FAIL` line; we read the test from the panic's running-tests list"),
    ("go-test/timeout_subtests", "FAIL", "ours", r"Test(/SocketHangs|/Quick)?",
     "killed by -timeout, no `--- FAIL` line: Test/SocketHangs hung, Test/Quick's result waited for its parent's; "
     "we fail them (grpc-go: under their parent's name)"),
    ("cargo-test/ansi", "*", "ours", r".*",
     "`--color always`: colour codes before ok/FAILED/ignored defeat ripgrep's `test (\\S+) ... ok` regexes"),
    ("cargo-test/hung_killed", "FAIL", "ours", r"deadlocks",
     "killed by the rust recipe's watchdog: no result line; we fail the test libtest said "
     "`has been running for over 60 seconds`"),
    ("cargo-test/nocapture_split_status", "*", "ours", r"tests::(fails|nested::deep_test)",
     "--nocapture: the test's output splits `test x ...` from its status, ripgrep's regexes want one line"),
    ("maven-surefire/junit5_mixed", "FAIL", "ours", r"com\.example\.CalcTest",
     "@Nested: Surefire counts the outer class's methods under CalcTest$Inner; we see CalcTest's own failures"),
    ("maven-surefire/junit5_mixed", "SKIP", "msb", r"com\.example\.CalcTest",
     "MSB bug: fastjson2's handler takes `Tests run: 0` (skipped == run == 0) as a skipped class"),
    ("jest/default_reporter", "FAIL", "ours", r"tests/math\.test\.js:.+",
     "default reporter: no ✓/✕ lines; we name failing tests from the `●` failure headings"),
    ("jest/verbose", "SKIP", "ours", r"tests/math\.test\.js:(skipped one|write more)",
     "github_readme_stats' handler has no pattern for skipped (○) or todo (✎) tests"),
    ("mocha/spec", "SKIP", "ours", r"is (pending|skipped)",
     "axios' handler has no pattern for pending tests"),
    ("mocha/spec", "FAIL", "msb", r'Array|"before all" hook for .+',
     "MSB bug: `^\\d+\\) ` also takes a failing hook and each failure summary's first line (outer describe)"),
    ("vitest/ansi", "*", "ours", r".*", "colour codes before ✓/× defeat svelte's `^✓ ` regexes"),
    ("vitest/*", "SKIP", "ours", r"calc\.test\.ts > calc > (skipped|todo) one",
     "svelte's handler has no pattern for skipped or todo tests"),
    ("vitest/*", "FAIL", "ours", r"sub/broken\.test\.ts",
     "a file that fails to load has no × line; we fail the file"),
    ("gtest/*", "SKIP", "ours", r"MathTest\.(DISABLED_NotYet|SkipsAtRuntime)",
     "cpp_httplib's handler has no pattern for disabled or skipped tests"),
    ("gtest/*", "FAIL", "ours", r"Small/ParamTest\.IsSmall/2",
     "MSB bug: `[  FAILED  ] X, where GetParam() = 3 (0 ms)` does not fit `(\\S+?)( \\(.+\\))?$`"),
    ("gtest/ansi", "*", "ours", r".*",
     "MSB bug: its colour pattern wants `\\x1b[0m` after `[ OK ]`; gtest 1.12 writes `\\x1b[m`"),
    ("gtest/under_ctest_parallel_verbose", "*", "ours", r".*",
     "ctest -V prefixes each line with `N: `; cpp_httplib's regexes are anchored at `[`"),
    ("ctest/*", "FAIL", "ours", r"gtest_all|catch_all|prints_output",
     "MSB bug: fmt's `\\*+Failed$` wants the line to end at Failed; ctest writes the time after it"),
    # ***Exception, ***Timeout, ***Not Run and skipped tests: no handler matches them, and
    # swe-forge gives them no Multi-SWE-bench name either (ctest.rs), so they agree.
    ("ctest/parallel_output_on_failure", "PASS", "msb", r"fake",
     "MSB bug: a test's own output line shaped like a ctest result counts as a test"),
    ("automake/ansi", "*", "ours", r".*", "AM_COLOR_TESTS: colour codes before PASS:/FAIL: defeat jq's regexes"),
    ("automake/make_check", "FAIL", "ours", r"tests/(hard-error|xpass)\.sh",
     "jq's handler has no pattern for ERROR or XPASS results"),
    ("automake/make_check", "PASS", "ours", r"tests/xfail\.sh",
     "jq's handler has no pattern for XFAIL (an expected failure)"),
    ("automake/make_check", "FAIL", "ours", r"tests/tap\.t",
     "TAP driver lines carry `N - description` after the script; jq's `^FAIL: (\\S+)$` wants the script alone"),
]


def msb_parse_log(module_name):
    import importlib
    import inspect

    module = importlib.import_module(f"multi_swe_bench.harness.repos.{module_name}")
    for _, cls in inspect.getmembers(module, inspect.isclass):
        if cls.__module__ == module.__name__ and "parse_log" in cls.__dict__:
            return cls.__dict__["parse_log"]
    raise AssertionError(f"no parse_log in {module_name}")


def swe_forge_bin():
    """The swe-forge binary: $SWE_FORGE_BIN (the Rust test passes its own), else target/debug's."""
    here = os.path.dirname(os.path.abspath(__file__))
    return os.environ.get("SWE_FORGE_BIN") or os.path.join(here, "..", "target", "debug", "swe-forge")


def ours_msb(framework, repo, log):
    import subprocess

    out = subprocess.run([swe_forge_bin(), "parse", "--msb", "--repo", repo, "-f", framework, log],
                         capture_output=True, text=True, check=True).stdout
    sets = {"PASS": set(), "FAIL": set(), "SKIP": set()}
    for line in out.splitlines():
        row = json.loads(line)
        sets[row["status"]].add(row["msb"])
    return sets


def msb_differences(framework, repo, case, parse_log):
    """(status, side, name) for every name only one side reports with that status; a parse_log
    that raises is one difference (status "raises", the message as name)."""
    import types

    log = os.path.join(TEST_DATA, framework, f"{case}.log")
    ours = ours_msb(framework, repo, log)
    with open(log, "rb") as f:
        text = f.read().decode("utf-8", errors="replace")  # as Multi-SWE-bench's harness reads a log
    this = types.SimpleNamespace(pr=types.SimpleNamespace(number=10**9, org="o", repo="r"))
    try:
        r = parse_log(this, text)
    except Exception as e:  # noqa: BLE001 - a table row may expect it
        return {("raises", "msb", f"{type(e).__name__}: {e}")}
    theirs = {"PASS": set(r.passed_tests), "FAIL": set(r.failed_tests), "SKIP": set(r.skipped_tests)}
    diffs = set()
    for status in ours:
        diffs |= {(status, "ours", n) for n in ours[status] - theirs[status]}
        diffs |= {(status, "msb", n) for n in theirs[status] - ours[status]}
    return diffs


def explained_by(key, diff):
    import fnmatch
    import re

    logs, status, side, names, _ = MSB_EXPECTED[key]
    return (fnmatch.fnmatchcase(diff[0], logs) and status in ("*", diff[1]) and side == diff[2]
            and re.fullmatch(names, diff[3]) is not None)


def msb_names():
    from importlib.metadata import version

    v = f"multi-swe-bench {version('multi-swe-bench')}"

    def run():
        assert os.path.exists(swe_forge_bin()), f"no swe-forge binary at {swe_forge_bin()}; set SWE_FORGE_BIN"
        used, unexplained = set(), []
        handlers = [(f, m, r) for f, ms in MSB_PARSERS.items() for m, r in ms]
        for framework, module_name, repo in handlers:
            parse_log = msb_parse_log(module_name)
            cases = sorted(e[:-4] for e in os.listdir(os.path.join(TEST_DATA, framework)) if e.endswith(".log"))
            cases = [c for c in cases if f"{framework}/{c}" not in MSB_NOT_COMPARED]
            assert cases, f"no {framework} logs in {TEST_DATA}"
            equal = explained = missed = 0
            for case in cases:
                diffs = sorted((f"{framework}/{case}", *d) for d in msb_differences(framework, repo, case, parse_log))
                for diff in diffs:
                    keys = [k for k in range(len(MSB_EXPECTED)) if explained_by(k, diff)]
                    used.update(keys)
                    explained += bool(keys)
                    missed += not keys
                    if not keys:
                        unexplained.append(diff)
                equal += not diffs
            print(f"       {framework} ({module_name}): {len(cases)} logs, {equal} with equal names, "
                  f"{explained} explained and {missed} unexplained name/status differences")
        for k in sorted(set(range(len(MSB_EXPECTED))) - used):
            unexplained.append(("MSB_EXPECTED row explains nothing", *MSB_EXPECTED[k][:4]))
        for diff in unexplained:
            print(f"       unexplained: {diff}")
        assert not unexplained, f"{len(unexplained)} unexplained difference(s) from Multi-SWE-bench's parse_log"

    check(f"Multi-SWE-bench names: swe-forge parse --msb equals parse_log on test_data logs ({v})", run)


def msb_export():
    """`export --naming msb` (msb.jsonl, written from the runs kept under msb-work/) names every
    test of every run as Multi-SWE-bench's own parse_log of those logs does: with the handler
    registered for the record's repository (grpc/grpc-go: subtests named by their parent), and
    for a repository without one (forge-fixtures/gostack) with cli/cli's, which keeps full
    names as 14 of the 19 Go handlers and our default do."""
    from importlib.metadata import version

    v = f"multi-swe-bench {version('multi-swe-bench')}"

    def run():
        import re
        import types

        import multi_swe_bench.harness.repos.golang  # noqa: F401 - registers the Go handlers
        from multi_swe_bench.harness.instance import Instance

        records = jsonl("msb.jsonl")
        handlers = set()
        for rec in records:
            cls = Instance._registry.get(f"{rec['org']}/{rec['repo']}") or Instance._registry["cli/cli"]
            handlers.add(cls.__name__)
            this = types.SimpleNamespace(pr=types.SimpleNamespace(number=rec["number"], org=rec["org"], repo=rec["repo"]))
            for phase, result in [("run", "run_result"), ("test", "test_patch_result"), ("fix", "fix_patch_result")]:
                with open(path(f"msb-work/logs/{rec['instance_id']}/{phase}.log"), encoding="utf-8") as f:
                    log = f.read()
                theirs = cls.parse_log(this, log)
                # MSB bug (MSB_EXPECTED): `FAIL:?\s?(.+?)\s` takes the package of `FAIL pkg` as a test.
                packages = set(re.findall(r"^FAIL[ \t]+(\S+)[ \t]", log, re.M))
                got = {k: set(rec[result][f"{k}_tests"]) for k in ("passed", "failed", "skipped")}
                want = {"passed": set(theirs.passed_tests), "failed": set(theirs.failed_tests) - packages,
                        "skipped": set(theirs.skipped_tests)}
                assert got == want, f"{rec['instance_id']} {phase}: exported {got}, parse_log {want}"
            listed = set(rec["fixed_tests"]) | set(rec["p2p_tests"])
            assert listed <= set(rec["fix_patch_result"]["passed_tests"]), rec["instance_id"]
        assert {r["repo"] for r in records} == {"gostack", "grpc-go"}, [r["repo"] for r in records]
        print(f"       {len(records)} records, 3 runs each, equal to parse_log of {sorted(handlers)}")

    check(f"Multi-SWE-bench names: export --naming msb equals parse_log of the kept logs ({v})", run)


if SET == "pyarrow15":
    pandas_readers()
elif SET == "datasets219":
    datasets_readers()
elif SET == "current":
    pandas_readers()
    polars_readers()
    duckdb_readers()
    datasets_readers()
elif SET == "harness":
    swebench_harness()
    msb_harness()
    msb_names()
    msb_export()
elif SET == "swebench5":
    swebench5_harness()
else:
    sys.exit(f"unknown reader set {SET}")

if FAILURES:
    print(f"{SET}: {len(FAILURES)} check(s) failed")
    sys.exit(1)
