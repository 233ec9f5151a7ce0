#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks the Chrome trace exported from tests/export/make_experiment.c.

usage: check_chrome.py TRACE.json BASE_NS
BASE_NS is the experiment time (ns) of the main thread's start S; every
expected timestamp below is an exact offset from it.
"""
import collections
import decimal
import json
import sys

ODD = 'say "hi" <&> \x01 gr\u00f6\u00dfe \ufffd!'

# Per thread, in stream order: (ph, name, ns after S, args; None = no "args").
EXPECTED = {
    0: [
        ("B", "main", 100, {"file": "demo.c", "line": 10}),
        ("B", "compute", 200, {"file": "demo.c", "line": 20}),
        ("E", "compute", 500, {"file": "demo.c", "line": 20}),
        ("C", "bytes", 550, {"thread 0": 100}),
        ("B", "compute", 600, {"file": "demo.c", "line": 20}),
        ("E", "compute", 700, {"file": "demo.c", "line": 20}),
        ("i", "thread create", 800, {"thread": 1, "name": "thread 1 (tid 4243)"}),
        ("s", "thread create", 800, None),
        ("B", ODD, 900, None),
        ("E", ODD, 1000, None),
        ("i", "thread join", 5000, {"thread": 1, "name": "thread 1 (tid 4243)"}),
        ("E", "main", 6000, {"file": "demo.c", "line": 10}),
    ],
    1: [
        ("f", "thread create", 850, None),
        ("B", "compute", 900, {"file": "demo.c", "line": 20}),
        ("C", "bytes", 910, {"thread 1": -7}),
        ("E", "compute", 1300, {"file": "demo.c", "line": 20}),
        ("B", "compute", 1350, {"file": "demo.c", "line": 20}),
        ("E", "compute", 1370, {"file": "demo.c", "line": 20}),
    ],
}


def fail(msg):
    print("check_chrome: " + msg)
    sys.exit(1)


def main():
    path, base = sys.argv[1], int(sys.argv[2])
    with open(path, "rb") as f:
        raw = f.read()
    text = raw.decode("utf-8")  # strict: the file must be valid UTF-8
    # Decimal keeps "1234.567" exact, so the ns precision is checked too.
    doc = json.loads(text, parse_float=decimal.Decimal)
    if doc.get("displayTimeUnit") != "ns":
        fail("displayTimeUnit %r" % doc.get("displayTimeUnit"))
    other = doc["otherData"]
    if other.get("command") != "./demo --size 3" or other.get("host") != "testhost":
        fail("otherData %r" % other)

    meta = {}
    per_tid = collections.defaultdict(list)
    for ev in doc["traceEvents"]:
        if ev["pid"] != 4242:
            fail("pid %r" % ev["pid"])
        if ev["ph"] == "M":
            meta[(ev["name"], ev["tid"])] = ev["args"]
            continue
        per_tid[ev["tid"]].append(ev)
    if meta.get(("process_name", 0)) != {"name": "demo"}:
        fail("process_name %r" % meta)
    for tid, name in ((0, "thread 0 (tid 4242)"), (1, "thread 1 (tid 4243)")):
        if meta.get(("thread_name", tid)) != {"name": name}:
            fail("thread_name of tid %d: %r" % (tid, meta.get(("thread_name", tid))))

    counts = collections.Counter()
    for tid, events in per_tid.items():
        for ev in events:
            counts[(ev["ph"], ev["name"], tid)] += 1
    want = collections.Counter()
    for tid, events in EXPECTED.items():
        for ph, name, _, _ in events:
            want[(ph, name, tid)] += 1
    if counts != want:
        fail("event counts per (ph, name, tid) differ:\n got %r\nwant %r" % (sorted(counts.items()), sorted(want.items())))
    if counts[("B", "compute", 0)] != 2 or counts[("E", "compute", 1)] != 2:
        fail("B/E counts")

    for tid, expected in EXPECTED.items():
        got = per_tid[tid]
        for ev, (ph, name, off, args) in zip(got, expected):
            ts_ns = ev["ts"] * 1000
            if ts_ns != base + off:
                fail("tid %d %s %r: ts %s, want %d ns" % (tid, ph, name, ev["ts"], base + off))
            if (ev["ph"], ev["name"]) != (ph, name):
                fail("tid %d: %r %r, want %r %r" % (tid, ev["ph"], ev["name"], ph, name))
            if ev.get("args") != args:
                fail("tid %d %r args %r, want %r" % (tid, name, ev.get("args"), args))
            if ph in "BE" and ev.get("cat") != "user":
                fail("category %r" % ev.get("cat"))
            if ph in "sf" and ev.get("id") != 1:
                fail("flow id %r" % ev.get("id"))
    print("check_chrome: ok")


main()
