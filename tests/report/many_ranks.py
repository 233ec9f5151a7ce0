#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes a copy of an HTML report whose MPI section is a synthetic job of
N ranks (each rank sends 1000 bytes to the next one, twice), to check the
page's views on a job too large for table heatmaps.
Usage: many_ranks.py PAGE.html N OUT.html
"""
import json
import re
import sys

page = open(sys.argv[1], encoding="utf-8").read()
n = int(sys.argv[2])
m = re.search(r'(<script type="application/json" id="strobe-data">)(.*?)(</script>)', page, re.S)
data = json.loads(m.group(2))
mpi = data["report"]["mpi"]
mpi["ranks"] = n
mpi["messages"], mpi["bytes"] = 2 * n, 2000 * n
mpi["per_rank"] = [{"rank": r, "measured": True, "mpi_ns": 1000 * (r + 1), "thread_ns": 10000 * (r + 1), "calls": 4,
                    "sent": 2, "sent_bytes": 2000, "received": 2, "received_bytes": 2000} for r in range(n)]
for f in mpi["functions"]:
    f["rank_ns"] = [f["ns"] // n] * n
mpi["matrix_bytes"] = [[2000 if c == (r + 1) % n else 0 for c in range(n)] for r in range(n)]
mpi["matrix_messages"] = [[2 if c == (r + 1) % n else 0 for c in range(n)] for r in range(n)]
text = json.dumps(data, separators=(",", ":")).replace("<", "\\u003c")
open(sys.argv[3], "w", encoding="utf-8").write(page[:m.start(2)] + text + page[m.end(2):])
