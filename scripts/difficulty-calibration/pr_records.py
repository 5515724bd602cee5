#!/usr/bin/env python3
"""Rebuilds minimal Multi-SWE-bench-shaped records (fix_patch, test_patch) for annotated pull requests
from local mirrors that carry GitHub's refs/pull/<N>/head refs, so that swe-forge can compute difficulty
features for rows of the annotation sheets.

The PR diff is `git diff <merge-base> refs/pull/<N>/head` (what GitHub shows as the PR's diff), where
the merge base is taken with the default branch, or with the branch that gives the smallest non-empty
diff when that one is large (backports target release branches). When a branch already contains the
head (a merge commit), the base is where the merge's first parent meets the head. Files whose path contains "test" go to the test patch, the rest to the fix patch: the split
Multi-SWE-bench's collector used, so the features describe what its annotators saw.

Usage: pr_records.py LABELS.jsonl MIRRORS_DIR > records.jsonl
MIRRORS_DIR holds <org>+<repo>/repo (bare repositories); rows whose repository or PR ref is missing are
reported on stderr and skipped. Issue texts are not in git: records carry none.
"""

import json
import os
import subprocess
import sys


def git(repo, *args):
    return subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True, errors="replace")


def find_mirror(root, org, repo):
    want = f"{org}+{repo}".lower()
    for name in os.listdir(root):
        if name.lower() == want:
            return os.path.join(root, name, "repo")
    return None


def split(diff):
    fix, test = [], []
    current = None
    for line in diff.splitlines(keepends=True):
        if line.startswith("diff --git "):
            path = line.split(" b/", 1)[-1].strip()
            current = test if "test" in path else fix
        if current is not None:
            current.append(line)
    return "".join(fix), "".join(test)


def rev(repo, name):
    return git(repo, "rev-parse", "--verify", "-q", name + "^{commit}").stdout.strip()


def pr_base(repo, branch, head_sha):
    """The commit the PR's diff starts from on `branch`, or None when the branch does not know it."""
    base = git(repo, "merge-base", branch, head_sha).stdout.strip()
    if not base:
        return None
    if base != head_sha:
        return base
    # The branch contains the PR head (merged with a merge commit): the PR's diff starts where the
    # merge commit's first parent meets the head.
    merges = git(repo, "rev-list", "--first-parent", "--ancestry-path", f"{head_sha}..{branch}").stdout.split()
    if not merges:
        return None
    base = git(repo, "merge-base", merges[-1] + "^1", head_sha).stdout.strip()
    return base if base and base != head_sha else None


def pr_diff(repo, number):
    head = rev(repo, f"refs/pull/{number}/head") or rev(repo, f"refs/pull/{number}")
    if not head:
        return None
    branches = git(repo, "for-each-ref", "--format=%(refname)", "refs/heads").stdout.split()
    best = None
    for branch in ["HEAD"] + branches:
        base = pr_base(repo, branch, head)
        if base is None:
            continue
        stat = git(repo, "diff", "--shortstat", base, head).stdout
        size = sum(int(w) for w in stat.replace(",", " ").split() if w.isdigit())
        if size > 0 and (best is None or size < best[0]):
            best = (size, base)
        if branch == "HEAD" and 0 < size < 5000:
            break
    if best is None:
        return None
    diff = git(repo, "diff", "--no-color", "--no-ext-diff", best[1], head).stdout
    return best[1], diff


def main(labels_path, root):
    seen = set()
    for line in open(labels_path, encoding="utf-8"):
        row = json.loads(line)
        iid = row.get("instance_id")
        if not iid or iid in seen:
            continue
        seen.add(iid)
        full, number = iid.rsplit("-", 1)
        org, repo = full.split("__", 1)
        mirror = find_mirror(root, org, repo)
        if mirror is None:
            print(f"skip {iid}: no mirror", file=sys.stderr)
            continue
        got = pr_diff(mirror, number)
        if got is None:
            print(f"skip {iid}: no PR ref", file=sys.stderr)
            continue
        base, diff = got
        fix, test = split(diff)
        record = {
            "org": org,
            "repo": repo,
            "number": int(number),
            "state": "closed",
            "title": "",
            "body": None,
            "base": {"label": f"{org}:base", "ref": "base", "sha": base},
            "resolved_issues": [],
            "fix_patch": fix,
            "test_patch": test,
            "instance_id": iid,
            "lang": row.get("lang"),
        }
        print(json.dumps(record))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
