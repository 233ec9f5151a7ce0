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


def func(name, file, line, self, total, top, top_samples, unknown):
    return {"name": name, "file": file, "line": line, "self": self, "total": total, "top_variable": top,
            "top_samples": top_samples, "unknown": unknown}


def point(function, path, samples, variables, callees):
    """variables: [(id, samples)]; callees: [(name, samples)]."""
    return {"function": function, "samples": samples, "path": path,
            "variables": [{"id": i, "samples": n, "percent": round(100.0 * n / samples, 1)} for i, n in variables],
            "callees": [{"name": c, "samples": n} for c, n in callees]}


def blame(samples, reasons, caller_unknown, variables, functions, points):
    """reasons: the unknown samples by reason, the ones not given 0."""
    by_reason = {r: reasons.get(r, 0) for r in ("no-table", "no-debug", "no-variable", "measurement")}
    unknown = sum(by_reason.values())
    return {"samples": samples,
            "unknown": {"samples": unknown, "percent": round(100.0 * unknown / samples, 1), "by_reason": by_reason},
            "caller_unknown": caller_unknown, "variables": variables, "functions": functions, "points": points}


def fig1():
    return blame(4, {}, 0,
                 [var(2, "c", "int", "local", "fig1", FIG1, 15, None, 4, 4),
                  var(0, "a", "int", "local", "fig1", FIG1, 15, None, 2, 4),
                  var(1, "b", "int", "local", "fig1", FIG1, 15, None, 1, 4)],
                 [func("fig1", FIG1, 14, 4, 4, 2, 4, 0), func("main", FIG1, 23, 0, 4, None, 0, 0)],
                 [point("main", ["main"], 4, [], [("fig1", 4)]),
                  point("fig1", ["main", "fig1"], 4, [(2, 4), (0, 2), (1, 1)], [])])


def parts():
    return blame(10, {"no-table": 1, "no-variable": 1}, 1,
                 [var(0, "p", "struct pt", "local", "main", FIX, 10, None, 6, 10),
                  var(1, "p.x", "double", "field", "main", FIX, 10, 0, 4, 10),
                  var(3, "h", "double *", "local", "main", FIX, 11, None, 3, 10),
                  var(4, "h[]", "double", "heap", "main", FIX, 12, 3, 3, 10),
                  var(2, "p.y", "double", "field", "main", FIX, 10, 0, 2, 10),
                  var(5, "total", "long", "global", None, FIX, 5, None, 1, 10)],
                 [func("fill", FIX, 3, 3, 3, 4, 3, 0), func("main", FIX, 8, 7, 10, 0, 6, 2)],
                 [point("main", ["main"], 10, [(0, 6), (3, 3), (5, 1)], [("fill", 3)])])


def many():
    n = int(os.environ.get("BLAME_VARIABLES", "1000"))
    total = n * (n + 1) // 2
    vs = []
    for i in range(1, n + 1):
        vs += [var(2 * i - 2, "v%d" % i, "struct s", "local", "work", FIX, i, None, i, total),
               var(2 * i - 1, "v%d.f" % i, "double", "field", "work", FIX, i, 2 * i - 2, i // 2, total)]
    return blame(total, {}, 0, sorted(vs, key=lambda v: -v["samples"]),
                 [func("work", FIX, 1, total, total, 2 * n - 2, n, 0)],
                 [point("work", ["main", "work"], total, [(v["id"], v["samples"]) for v in vs if v["parent"] is None], [])])


page = open(sys.argv[1], encoding="utf-8").read()
m = re.search(r'(<script type="application/json" id="strobe-data">)(.*?)(</script>)', page, re.S)
data = json.loads(m.group(2))
data["report"]["blame"] = {"fig1": fig1, "parts": parts, "many": many}[sys.argv[2]]()
text = json.dumps(data, separators=(",", ":")).replace("<", "\\u003c")
open(sys.argv[3], "w", encoding="utf-8").write(page[:m.start(2)] + text + page[m.end(2):])
