#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes a copy of an HTML report with a hand-written blame section (the
schema of `strobe report --blame --format json`), to check the page's
blame view on exact numbers:

  fig1   the paper's Figure 1 (seed 003, Table I): one sample on each of
         lines 17-20 of fig1; a = 50 %, b = 25 %, c = 100 %, no unknown data.
  parts  display children (p.x and p.y under the struct p, the heap block
         h[] under h), a global, unknown data with two reasons, samples whose
         caller could not be charged, and a blame point other than main.

  many   N variables (N from the environment variable BLAME_VARIABLES, 1000
         by default), each with one field: i samples for variable vI, its
         field vI.f half of them.

Usage: blame_page.py PAGE.html fig1|parts|many OUT.html
"""
import json
import os
import re
import sys

FIG1 = "/src/tests/cc/blame_fig1.c"
FIX = "/src/tests/report/fix.c"


def var(i, name, type_, kind, function, file, line, parent, samples, total):
    return {"id": i, "name": name, "type": type_, "kind": kind, "function": function, "file": file,
            "line": line, "parent": parent, "samples": samples, "percent": round(100.0 * samples / total, 1)}


def fig1():
    return {
        "samples": 4,
        "unknown": {"samples": 0, "percent": 0.0,
                    "by_reason": {"no-table": 0, "no-debug": 0, "no-variable": 0, "measurement": 0}},
        "caller_unknown": 0,
        "variables": [var(2, "c", "int", "local", "fig1", FIG1, 15, None, 4, 4),
                      var(0, "a", "int", "local", "fig1", FIG1, 15, None, 2, 4),
                      var(1, "b", "int", "local", "fig1", FIG1, 15, None, 1, 4)],
        "functions": [{"name": "fig1", "file": FIG1, "line": 14, "self": 4, "total": 4, "top_variable": 2,
                       "top_samples": 4, "unknown": 0},
                      {"name": "main", "file": FIG1, "line": 23, "self": 0, "total": 4, "top_variable": None,
                       "top_samples": 0, "unknown": 0}],
        "points": [{"function": "main", "samples": 4, "path": ["main"], "variables": [],
                    "callees": [{"name": "fig1", "samples": 4}]},
                   {"function": "fig1", "samples": 4, "path": ["main", "fig1"],
                    "variables": [{"id": 2, "samples": 4, "percent": 100.0}, {"id": 0, "samples": 2, "percent": 50.0},
                                  {"id": 1, "samples": 1, "percent": 25.0}],
                    "callees": []}],
    }


def parts():
    return {
        "samples": 10,
        "unknown": {"samples": 2, "percent": 20.0,
                    "by_reason": {"no-table": 1, "no-debug": 0, "no-variable": 1, "measurement": 0}},
        "caller_unknown": 1,
        "variables": [var(0, "p", "struct pt", "local", "main", FIX, 10, None, 6, 10),
                      var(1, "p.x", "double", "field", "main", FIX, 10, 0, 4, 10),
                      var(3, "h", "double *", "local", "main", FIX, 11, None, 3, 10),
                      var(4, "h[]", "double", "heap", "main", FIX, 12, 3, 3, 10),
                      var(2, "p.y", "double", "field", "main", FIX, 10, 0, 2, 10),
                      var(5, "total", "long", "global", None, FIX, 5, None, 1, 10)],
        "functions": [{"name": "fill", "file": FIX, "line": 3, "self": 3, "total": 3, "top_variable": 4,
                       "top_samples": 3, "unknown": 0},
                      {"name": "main", "file": FIX, "line": 8, "self": 7, "total": 10, "top_variable": 0,
                       "top_samples": 6, "unknown": 2}],
        "points": [{"function": "main", "samples": 10, "path": ["main"],
                    "variables": [{"id": 0, "samples": 6, "percent": 60.0}, {"id": 3, "samples": 3, "percent": 30.0},
                                  {"id": 5, "samples": 1, "percent": 10.0}],
                    "callees": [{"name": "fill", "samples": 3}]}],
    }


def many():
    n = int(os.environ.get("BLAME_VARIABLES", "1000"))
    total = n * (n + 1) // 2
    vs = []
    for i in range(1, n + 1):
        vs += [var(2 * i - 2, "v%d" % i, "struct s", "local", "work", FIX, i, None, i, total),
               var(2 * i - 1, "v%d.f" % i, "double", "field", "work", FIX, i, 2 * i - 2, i // 2, total)]
    return {
        "samples": total,
        "unknown": {"samples": 0, "percent": 0.0,
                    "by_reason": {"no-table": 0, "no-debug": 0, "no-variable": 0, "measurement": 0}},
        "caller_unknown": 0,
        "variables": sorted(vs, key=lambda v: -v["samples"]),
        "functions": [{"name": "work", "file": FIX, "line": 1, "self": total, "total": total,
                       "top_variable": 2 * n - 2, "top_samples": n, "unknown": 0}],
        "points": [{"function": "work", "samples": total, "path": ["main", "work"],
                    "variables": [{"id": v["id"], "samples": v["samples"], "percent": v["percent"]}
                                  for v in vs if v["parent"] is None],
                    "callees": []}],
    }


page = open(sys.argv[1], encoding="utf-8").read()
m = re.search(r'(<script type="application/json" id="strobe-data">)(.*?)(</script>)', page, re.S)
data = json.loads(m.group(2))
data["report"]["blame"] = {"fig1": fig1, "parts": parts, "many": many}[sys.argv[2]]()
text = json.dumps(data, separators=(",", ":")).replace("<", "\\u003c")
open(sys.argv[3], "w", encoding="utf-8").write(page[:m.start(2)] + text + page[m.end(2):])
