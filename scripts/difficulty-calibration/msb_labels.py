#!/usr/bin/env python3
"""Reads Multi-SWE-bench's manual-verification spreadsheets (one .xlsx per language, from
docs/manual-verification/annotation-results/ of multi-swe-bench/multi-swe-bench) and writes one JSON
line per annotated candidate:

  {"instance_id": "cli__cli-10388", "lang": "go", "label": "easy", "labels": ["easy"],
   "severe": [0], "clarity": [2], "adequacy": [3]}

`label` is the difficulty from question 5.1 (time an experienced engineer needs): <15 min = easy,
15 min - 1 h = medium, 1-4 h and >4 h = hard. Sheets with two annotators per row (java, js) give two
answers; `label` is then the first annotator's and `labels` holds both. Rows without a time answer get
`"label": null`.

Needs openpyxl (pip install openpyxl). Usage: msb_labels.py SHEET.xlsx... > labels.jsonl
The repository of an id is found in REPOS below (sheet ids join org and repo with '-').
"""

import json
import re
import sys

import openpyxl

# The repositories of Multi-SWE-bench (org/repo as GitHub spells them).
REPOS = """
facebook/zstd jqlang/jq ponylang/ponyc redis/redis valkey-io/valkey catchorg/Catch2 fmtlib/fmt
nlohmann/json simdjson/simdjson yhirose/cpp-httplib cli/cli etcd-io/etcd gin-gonic/gin go-gorm/gorm
grpc/grpc-go zeromicro/go-zero alibaba/fastjson2 apache/dubbo elastic/logstash fasterxml/jackson-core
fasterxml/jackson-dataformat-xml fasterxml/jackson-databind google/gson googlecontainertools/jib
mockito/mockito Kong/insomnia anuraghazra/github-readme-stats axios/axios expressjs/express iamkun/dayjs
preactjs/preact sveltejs/svelte BurntSushi/ripgrep clap-rs/clap nushell/nushell rayon-rs/rayon
serde-rs/serde sharkdp/bat sharkdp/fd tokio-rs/bytes tokio-rs/tokio tokio-rs/tracing
darkreader/darkreader mui/material-ui vuejs/core
""".split()

TIME = [("<15", "easy"), ("15", "medium"), ("1-4", "hard"), ("4", "hard")]


def instance_id(raw):
    raw = raw.strip()
    m = re.match(r"^(?:\d+_[a-z+]+_)?(.+)-(\d+)$", raw)
    if not m:
        return None
    name, number = m.group(1), m.group(2)
    for full in REPOS:
        org, repo = full.split("/")
        if name.lower() in (f"{org}-{repo}".lower(), f"{org}__{repo}".lower()):
            return f"{org}__{repo}-{number}"
    return None


def score(v):
    m = re.match(r"\s*(\d)", str(v)) if v is not None else None
    return int(m.group(1)) if m else None


def time_label(v):
    if v is None:
        return None
    s = str(v).strip()
    for prefix, label in TIME:
        if s.startswith(prefix):
            return label
    return None


def columns(header, question):
    # "问题 3.1：", "问题 3.1-1：", "问题2.1-2：": question number, then an optional annotator suffix.
    pat = re.compile(r"问题\s*" + re.escape(question) + r"(-\d)?\s*[：:]")
    return [i for i, h in enumerate(header) if h is not None and pat.search(str(h))]


def main(paths):
    for path in paths:
        lang = re.sub(r"\.xlsx$", "", path.rsplit("/", 1)[-1])
        ws = openpyxl.load_workbook(path, read_only=True).worksheets[0]
        rows = list(ws.iter_rows(values_only=True))
        header = rows[0]
        id_col = next(i for i, h in enumerate(header) if h is not None and "instance_id" in str(h))
        cols = {q: columns(header, q) for q in ("2.1", "3.1", "4.1", "5.1")}
        for row in rows[1:]:
            if row[id_col] is None:
                continue
            iid = instance_id(str(row[id_col]))
            labels = [time_label(row[i]) for i in cols["5.1"] if i < len(row)]
            rec = {
                "instance_id": iid,
                "sheet_id": str(row[id_col]).strip(),
                "lang": lang,
                "label": labels[0] if labels else None,
                "labels": labels,
                "severe": [score(row[i]) for i in cols["2.1"] if i < len(row)],
                "clarity": [score(row[i]) for i in cols["3.1"] if i < len(row)],
                "adequacy": [score(row[i]) for i in cols["4.1"] if i < len(row)],
            }
            print(json.dumps(rec, ensure_ascii=False))


if __name__ == "__main__":
    main(sys.argv[1:])
