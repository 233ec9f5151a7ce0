#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks a Paraver export of tests/analysis/tm_prog.c run under
`strobe run --tm` (see tm_prog.c for the expected behaviour).

usage: check_paraver.py BASE   (reads BASE.prv, BASE.pcf, BASE.row)
"""
import re
import sys


def fail(msg):
    sys.exit("check_paraver: " + msg)


base = sys.argv[1]
prv = open(base + ".prv").read().splitlines()
pcf = open(base + ".pcf").read()
row = open(base + ".row").read()

m = re.match(r"#Paraver \(\d\d/\d\d/\d{4} at \d\d:\d\d\):(\d+)_ns:1\(3\):1:1\(3:1\)$", prv[0])
if not m:
    fail("header: " + prv[0])
duration = int(m.group(1))

ends = {1: 0, 2: 0, 3: 0}  # commit, abort, cancel
comms = []
last = 0
for line in prv[1:]:
    f = [int(x) for x in line.split(":")]
    t = f[5]
    if t < last:
        fail("records not sorted by time at: " + line)
    last = t
    if f[0] == 1:
        begin, end, state = f[5], f[6], f[7]
        if not (0 <= begin < end <= duration) or state not in range(7):
            fail("bad state record: " + line)
    elif f[0] == 2:
        if f[6] == 90000001:
            ends[f[7]] += 1
    elif f[0] == 3:
        comms.append(f)
    else:
        fail("unknown record: " + line)

# block A: 990 commits + 10 cancels; B: 1; C: 2; D: 1 commit after 2 aborts
if ends != {1: 994, 2: 2, 3: 10}:
    fail("attempt ends %s" % ends)
if len(comms) != 2:
    fail("%d abort communications, expected 2" % len(comms))
for c in comms:
    # from thread 1 (cpu 2) to thread 2 (cpu 3), sent before received
    if c[1] != 2 or c[4] != 2 or c[7] != 3 or c[10] != 3 or not c[5] <= c[11]:
        fail("communication: %s" % c)
for name in ("Compute_Wasted", "Try_Lock", "Commit_Locked", "TM abort cause", "validation",
             "atomic@main (tm_prog.c:"):
    if name not in pcf:
        fail(".pcf lacks " + name)
if "LEVEL THREAD SIZE 3" not in row:
    fail(".row: " + row)
print("paraver ok")
