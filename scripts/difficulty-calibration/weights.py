#!/usr/bin/env python3
"""Compares candidate weightings of swe-forge's difficulty score against human labels, with the
thresholds refitted on training folds: in-sample, 5-fold cross-validation (seeded), and
leave-one-language-out. Reads the features swe-forge computed (`swe_forge.difficulty.features`
of `swe-forge curate` output), so the features are exactly the Rust ones.

Usage: weights.py CURATED.jsonl LABELS.jsonl
"""

import itertools
import json
import math
import random
import sys

L = {"easy": 0, "medium": 1, "hard": 2}


def l2(x):
    return math.log2(1 + x)


def beyond_first(x):
    return l2(max(0, x - 1))


def score(f, w):
    lines, files, hunks, dirs = w
    return (
        lines * l2(f["fix_lines_added"] + f["fix_lines_removed"])
        + files * beyond_first(f["fix_files"])
        + hunks * beyond_first(f["fix_hunks"])
        + dirs * beyond_first(f["fix_dirs"])
    )


def label(s, t):
    return 0 if s < t[0] else 2 if s >= t[1] else 1


def fit(scores, ys):
    # Same grid and tie-break order as swe_forge_curate::fit_thresholds, at a coarser step.
    best = (-1, None)
    for a in range(0, 70):
        for b in range(a, 70):
            t = (a / 5, b / 5)
            c = sum(label(s, t) == y for s, y in zip(scores, ys))
            if c > best[0]:
                best = (c, t)
    return best[1]


def main(curated, labels):
    human = {}
    for line in open(labels, encoding="utf-8"):
        r = json.loads(line)
        if r.get("instance_id") and r.get("label"):
            human[r["instance_id"]] = (L[r["label"]], r.get("lang") or "unknown")
    rows = []
    for line in open(curated, encoding="utf-8"):
        r = json.loads(line)
        if r["instance_id"] in human and r["fix_patch"].strip():
            y, lang = human[r["instance_id"]]
            rows.append((r["swe_forge"]["difficulty"]["features"], y, lang))
    print(f"{len(rows)} labelled rows")
    print("| lines | files | hunks | dirs | in-sample | 5-fold | leave one language out |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for w in itertools.product([1.0], [0, 0.5, 1], [0, 0.5], [0, 0.5, 1]):
        scores = [score(f, w) for f, _, _ in rows]
        ys = [y for _, y, _ in rows]
        t = fit(scores, ys)
        inside = sum(label(s, t) == y for s, y in zip(scores, ys)) / len(rows)
        idx = list(range(len(rows)))
        random.Random(1).shuffle(idx)
        folds = [idx[k::5] for k in range(5)]
        ok = 0
        for k in range(5):
            test = set(folds[k])
            train = [i for i in idx if i not in test]
            tk = fit([scores[i] for i in train], [ys[i] for i in train])
            ok += sum(label(scores[i], tk) == ys[i] for i in folds[k])
        lolo = 0
        for lang in sorted({r[2] for r in rows}):
            train = [i for i in idx if rows[i][2] != lang]
            tk = fit([scores[i] for i in train], [ys[i] for i in train])
            lolo += sum(label(scores[i], tk) == ys[i] for i in idx if rows[i][2] == lang)
        print(f"| {w[0]} | {w[1]} | {w[2]} | {w[3]} | {inside:.3f} | {ok / len(rows):.3f} | {lolo / len(rows):.3f} |")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
