#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks the OTF2 archive exported from tests/export/make_experiment.c with
the reference reader otf2-print.

usage: check_otf2.py ARCHIVE/traces.otf2 BASE
BASE is the OTF2 timestamp of the main thread's start S; expected
timestamps below are exact offsets from it.
"""
import collections
import re
import subprocess
import sys

ODD = b'say "hi" <&> \x01 gr\xc3\xb6\xc3\x9fe \xff!'.decode("utf-8", "surrogateescape")
CONTINGENT = 'Thread Contingent: "threads of demo (pid 4242)" <0>'

# Per location: (event, ns after S, region name or attributes).
EXPECTED = {
    0: [
        ("ENTER", 100, "main"),
        ("ENTER", 200, "compute"),
        ("LEAVE", 500, "compute"),
        ("METRIC", 550, 'Metric: 0, 1 Value: ("bytes" <0>; INT64; 100)'),
        ("ENTER", 600, "compute"),
        ("LEAVE", 700, "compute"),
        ("THREAD_CREATE", 800, CONTINGENT + ", Sequence Count: 1"),
        ("ENTER", 900, ODD),
        ("LEAVE", 1000, ODD),
        ("THREAD_WAIT", 5000, CONTINGENT + ", Sequence Count: 1"),
        ("LEAVE", 6000, "main"),
    ],
    1: [
        ("THREAD_BEGIN", 850, CONTINGENT + ", Sequence Count: 1"),
        ("ENTER", 900, "compute"),
        ("METRIC", 910, 'Metric: 0, 1 Value: ("bytes" <0>; INT64; -7)'),
        ("LEAVE", 1300, "compute"),
        ("ENTER", 1350, "compute"),
        ("LEAVE", 1370, "compute"),
        ("THREAD_END", 1450, CONTINGENT + ", Sequence Count: 1"),
    ],
}


def fail(msg):
    print("check_otf2: " + msg)
    sys.exit(1)


def otf2_print(*args):
    p = subprocess.run(["otf2-print", *args], capture_output=True)
    out = p.stdout.decode("utf-8", "surrogateescape")
    err = p.stderr.decode("utf-8", "surrogateescape")
    if p.returncode != 0 or err.strip() or "error" in out.lower() or "warning" in out.lower():
        fail("otf2-print %s: exit %d\n%s\n%s" % (" ".join(args), p.returncode, out, err))
    return out


def main():
    anchor, base = sys.argv[1], int(sys.argv[2])

    events = collections.defaultdict(list)
    line_re = re.compile(r"^([A-Z_]+) +(\d+) +(\d+)  (.*)$")
    for line in otf2_print(anchor).splitlines():
        m = line_re.match(line)
        if not m or m.group(1) in ("Event",):
            continue
        name, loc, ts, attrs = m.group(1), int(m.group(2)), int(m.group(3)), m.group(4)
        r = re.fullmatch(r'Region: "(.*)" <\d+>', attrs)
        events[loc].append((name, ts - base, r.group(1) if r else attrs))
    for loc, want in EXPECTED.items():
        if events[loc] != want:
            fail("location %d events:\n got %r\nwant %r" % (loc, events[loc], want))
    if set(events) != set(EXPECTED):
        fail("locations %r" % sorted(events))
    enters = collections.Counter((loc, e[2]) for loc in events for e in events[loc] if e[0] == "ENTER")
    leaves = collections.Counter((loc, e[2]) for loc in events for e in events[loc] if e[0] == "LEAVE")
    if enters != leaves or enters[(0, "compute")] != 2 or enters[(1, "compute")] != 2:
        fail("ENTER/LEAVE per location and region: %r / %r" % (enters, leaves))

    defs = otf2_print("-G", anchor)
    want_defs = [
        r"^CLOCK_PROPERTIES +Ticks per Seconds: 1000000000, Global Offset: (\d+), Length: (\d+)",
        r'^SYSTEM_TREE_NODE +0  Name: "testhost" <\d+>, Class: "machine"',
        r'^LOCATION_GROUP +0  Name: "demo \(pid 4242\)" <\d+>, Type: PROCESS',
        r'^LOCATION +0  Name: "thread 0 \(tid 4242\)" <\d+>, Type: CPU_THREAD, # Events: 11,',
        r'^LOCATION +1  Name: "thread 1 \(tid 4243\)" <\d+>, Type: CPU_THREAD, # Events: 7,',
        r'^REGION +\d+  Name: "main" <\d+> .*Role: CODE, Paradigm: USER, .*File: "demo.c" <\d+>, Begin: 10,',
        r'^REGION +\d+  Name: "compute" <\d+> .*File: "demo.c" <\d+>, Begin: 20,',
        r'^REGION +\d+  Name: "' + re.escape(ODD) + '"',
        r'^METRIC_MEMBER +0  Name: "bytes" <\d+>, .*Type: USER, Mode: ABSOLUTE_POINT, Value Type: INT64, .*Unit: "B"',
        r"^COMM +0  Name: \"threads of demo \(pid 4242\)\"",
    ]
    for pattern in want_defs:
        m = re.search(pattern, defs, re.M)
        if not m:
            fail("no global definition matching %r in:\n%s" % (pattern, defs))
        if pattern.startswith("^CLOCK"):
            offset, length = int(m.group(1)), int(m.group(2))
    if len(events[0]) != 11 or len(events[1]) != 7:
        fail("event counts differ from the Location definitions")
    if not (offset <= base + 100 and base + 6000 < offset + length):
        fail("clock properties offset %d length %d do not cover the events" % (offset, length))
    print("check_otf2: ok")


main()
