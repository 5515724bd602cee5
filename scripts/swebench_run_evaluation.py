"""SWE-bench 5's own harness on swe-forge's SWE-bench rows and instance images.

    python swebench_run_evaluation.py WORK_DIR DATASET.jsonl [DATASET.jsonl ...]

Run with the python of the `swebench5` reader set (scripts/python-readers.sh makes it). For each
dataset (`swe-forge export --format swebench`, in any naming), runs
`python -m swebench.harness.run_evaluation -d DATASET -p gold` on the local images the rows name
(they are never pulled: every image must exist), and for the first dataset again with a wrong
prediction for every row (a patch that adds one unrelated file and fixes nothing). Every row must
be resolved with the gold patch and none with the wrong one; the exit status is 1 otherwise.
Prints one line per dataset with the resolved counts per repository.

A gold row that is not resolved gets one second attempt, alone (`-i`, a run id of its own), and
the line names it: the engine is shared with other clients (in CI, the tests running beside this
one), and a container that could not be made or ran short of the machine is not the row's fault.
The first attempt's `run_instance.log` and test output are printed either way, so a second attempt
that resolves still shows what happened. The wrong patch gets no second attempt.

`run_evaluation` runs under `--harness` (this file again), which first makes docker-py's container
and image listings skip what was removed while they were being listed: SWE-bench's report lists
every container and image of the engine (`make_run_report`), and a container another client removes
between the list and its inspection raised `NotFound` and failed a finished run (seen in CI, where
other tests share the engine). Nothing else in the harness changes.
"""

import json
import os
import subprocess
import sys
import time

import docker

WRONG_PATCH = (
    "diff --git a/SWE_FORGE_WRONG_PATCH b/SWE_FORGE_WRONG_PATCH\n"
    "new file mode 100644\n"
    "--- /dev/null\n"
    "+++ b/SWE_FORGE_WRONG_PATCH\n"
    "@@ -0,0 +1 @@\n"
    "+not a fix\n"
)


def harness(argv):
    """`python -m swebench.harness.run_evaluation ARGV`, with listings that tolerate removals."""
    import runpy

    import docker.errors
    import docker.models.containers
    import docker.models.images

    containers_list = docker.models.containers.ContainerCollection.list

    def list_containers(self, *args, **kwargs):
        kwargs.setdefault("ignore_removed", True)
        return containers_list(self, *args, **kwargs)

    def list_images(self, name=None, all=False, filters=None):
        found = []
        for r in self.client.api.images(name=name, all=all, filters=filters):
            try:
                found.append(self.get(r["Id"]))
            except docker.errors.NotFound:
                pass
        return found

    docker.models.containers.ContainerCollection.list = list_containers
    docker.models.images.ImageCollection.list = list_images
    sys.argv = ["run_evaluation", *argv]
    runpy.run_module("swebench.harness.run_evaluation", run_name="__main__", alter_sys=True)


def rows_of(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


# Instances evaluated at once (`--max_workers`): SWE_BENCH_MAX_WORKERS, else 2. The runs wait on the
# engine more than they compute: the demo test uses 9 (docs/benchmarks/test-suite.md).
MAX_WORKERS = os.environ.get("SWE_BENCH_MAX_WORKERS", "2")


def evaluate(work, dataset, predictions, run_id, only=()):
    """run_evaluation in WORK (its logs/ and report land there), on the rows ONLY names (all when
    empty); its report."""
    os.makedirs(work, exist_ok=True)
    cmd = [sys.executable, os.path.abspath(__file__), "--harness", "-d", os.path.abspath(dataset),
           "-p", predictions, "--run_id", run_id, "--max_workers", MAX_WORKERS, "--timeout", "900",
           "--report_dir", "."]
    if only:
        cmd += ["-i", *sorted(only)]
    out = subprocess.run(cmd, cwd=work, capture_output=True, text=True)
    if out.returncode != 0:
        sys.stderr.write(out.stdout[-4000:] + out.stderr[-4000:])
        raise SystemExit(f"run_evaluation exited with {out.returncode}")
    reports = [f for f in os.listdir(work) if f.endswith(f".{run_id}.json")]
    assert len(reports) == 1, (reports, out.stdout[-2000:])
    with open(os.path.join(work, reports[0]), encoding="utf-8") as f:
        report = json.load(f)
    return report, out.stdout


def main():
    work, datasets = sys.argv[1], sys.argv[2:]
    client = docker.from_env()
    failures = []
    for n, dataset in enumerate(datasets):
        rows = rows_of(dataset)
        ids = {r["instance_id"] for r in rows}
        for r in rows:
            assert r["image"] and r["log_parser"], f"{r['instance_id']}: no image or log_parser"
            client.images.get(r["image"])  # raises when the image is not here: nothing is pulled
        started = time.time()
        gold, _ = evaluate(os.path.join(work, f"gold-{n}"), dataset, "gold", f"swe-forge-gold-{n}")
        missed = ids - set(gold["resolved_ids"])
        second = set()
        if missed:
            for i in sorted(missed):
                print(what_happened(os.path.join(work, f"gold-{n}"), i, gold))
            again, _ = evaluate(os.path.join(work, f"gold-{n}-again"), dataset, "gold",
                                f"swe-forge-gold-{n}-again", only=missed)
            second = missed & set(again["resolved_ids"])
            gold = dict(gold, resolved_ids=sorted(set(gold["resolved_ids"]) | second))
        wrong = {"resolved_ids": []}
        if n == 0:
            wrong = wrong_run(work, n, dataset, rows)
        took = time.time() - started
        resolved, wrongly = set(gold["resolved_ids"]), set(wrong["resolved_ids"])
        by_repo = {}
        for r in rows:
            got = by_repo.setdefault(r["repo"], [0, 0])
            got[0] += r["instance_id"] in resolved
            got[1] += 1
        per_repo = ", ".join(f"{repo} {a}/{b}" for repo, (a, b) in sorted(by_repo.items()))
        wrong_line = f"; wrong patch resolved {len(wrongly & ids)} of {len(ids)}" if n == 0 else ""
        again_line = f"; resolved on a second attempt: {sorted(second)}" if second else ""
        print(f"{os.path.basename(dataset)}: gold resolved {len(resolved & ids)} of {len(ids)} ({per_repo})"
              f"{wrong_line}{again_line}; {took:.0f} s")
        if resolved != ids:
            failures.append(f"{dataset}: gold not resolved: {sorted(ids - resolved)}; report: {gold}")
        if wrongly:
            failures.append(f"{dataset}: the wrong patch resolved {sorted(wrongly)}")
    for f in failures:
        print(f"FAIL {f}")
    sys.exit(1 if failures else 0)


def what_happened(work, instance_id, report):
    """The tail of an instance's run_instance.log and test output under WORK, with its report entry."""
    out = [f"== {instance_id} was not resolved (reason: "
           f"{report.get('failure_reasons', {}).get(instance_id, 'none given')})"]
    for root, _, files in os.walk(os.path.join(work, "logs")):
        if os.path.basename(root) != instance_id:
            continue
        for name in ("run_instance.log", "test_output.txt"):
            if name in files:
                with open(os.path.join(root, name), encoding="utf-8", errors="replace") as f:
                    tail = f.read().splitlines()[-60:]
                out.append(f"-- {name} (last {len(tail)} lines)")
                out.extend(tail)
    return "\n".join(out)


def wrong_run(work, n, dataset, rows):
    """run_evaluation with the wrong patch for every row; its report."""
    preds = os.path.join(work, f"wrong-{n}.jsonl")
    os.makedirs(work, exist_ok=True)
    with open(preds, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps({"instance_id": r["instance_id"], "model_name_or_path": "wrong",
                                "model_patch": WRONG_PATCH}) + "\n")
    report, _ = evaluate(os.path.join(work, f"wrong-{n}"), dataset, os.path.abspath(preds), f"swe-forge-wrong-{n}")
    return report


if __name__ == "__main__":
    if sys.argv[1:2] == ["--harness"]:
        harness(sys.argv[2:])
    else:
        main()
