#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Lists the events of a Chrome trace or an OTF2 archive one per line, with
times relative to BASE, so a test can compare a selected export exactly.

usage: list_events.py chrome TRACE.json BASE_NS
       list_events.py otf2 ARCHIVE/traces.otf2 BASE
chrome: "thread T NAME" per thread_name metadata, then per event in file
        order "T PH NAME +NS" (NS = ts in ns - BASE_NS).
otf2:   "location L NAME events N" per Location definition, then per event
        "L EVENT +NS [REGION]", location by location in time order.
Characters outside printable ASCII in names are shown as "?". Exits 1 with a message when the file does not parse or B/E (ENTER/LEAVE)
do not nest per thread.
"""
import decimal
import json
import re
import subprocess
import sys


def shown(name):
    return "".join(c if " " <= c <= "~" else "?" for c in name)


def fail(msg):
    print("list_events: " + msg)
    sys.exit(1)


def chrome(path, base):
    with open(path, encoding="utf-8") as f:
        doc = json.load(f, parse_float=decimal.Decimal)
    lines, stacks = [], {}
    for ev in doc["traceEvents"]:
        if ev["ph"] == "M":
            if ev["name"] == "thread_name":
                lines.append("thread %d %s" % (ev["tid"], shown(ev["args"]["name"])))
            continue
        ns = int(ev["ts"] * 1000) - base
        lines.append("%d %s %s %+d" % (ev["tid"], ev["ph"], shown(ev["name"]), ns))
        stack = stacks.setdefault(ev["tid"], [])
        if ev["ph"] == "B":
            stack.append(ev["name"])
        elif ev["ph"] == "E" and (not stack or stack.pop() != ev["name"]):
            fail("tid %d: E %r does not close the open frame" % (ev["tid"], ev["name"]))
    if any(stacks.values()):
        fail("frames left open: %r" % stacks)
    return lines


def otf2_print(*args):
    p = subprocess.run(["otf2-print", *args], capture_output=True)
    out = p.stdout.decode("utf-8", "surrogateescape")
    if p.returncode != 0 or p.stderr.strip():
        fail("otf2-print %s: exit %d %s" % (" ".join(args), p.returncode, p.stderr))
    return out


def otf2(anchor, base):
    lines = []
    for m in re.finditer(r'^LOCATION +(\d+)  Name: "(.*)" <\d+>, Type: CPU_THREAD, # Events: (\d+),',
                         otf2_print("-G", anchor), re.M):
        lines.append("location %s %s events %s" % m.groups())
    stacks, events = {}, []
    for line in otf2_print(anchor).splitlines():
        m = re.match(r"^([A-Z_]+) +(\d+) +(\d+)  (.*)$", line)
        if not m:
            continue
        name, loc, ts, attrs = m.group(1), int(m.group(2)), int(m.group(3)), m.group(4)
        r = re.fullmatch(r'Region: "(.*)" <\d+>', attrs)
        events.append((loc, "%d %s %+d%s" % (loc, name, ts - base, " " + shown(r.group(1)) if r else "")))
        stack = stacks.setdefault(loc, [])
        if name == "ENTER":
            stack.append(r.group(1))
        elif name == "LEAVE" and (not stack or stack.pop() != r.group(1)):
            fail("location %d: LEAVE %r does not close the open region" % (loc, r.group(1)))
    if any(stacks.values()):
        fail("regions left open: %r" % stacks)
    # otf2-print merges the locations by time: list them one after the other
    return lines + [text for _, text in sorted(events, key=lambda e: e[0])]


def main():
    kind, path, base = sys.argv[1], sys.argv[2], int(sys.argv[3])
    for line in (chrome if kind == "chrome" else otf2)(path, base):
        print(line)


main()
