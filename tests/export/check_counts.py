#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Cross-checks the three exports of one experiment: the number of visits
of every region is the same in the Chrome trace ("B" events), the OTF2
archive (ENTER events, via otf2-print) and the Cube profile (visits metric
summed over call paths and locations), and equals NAME=COUNT for each
region named on the command line.

usage: check_counts.py TRACE.json ARCHIVE/traces.otf2 PROFILE.cubex NAME=COUNT...
"""
import collections
import json
import re
import struct
import subprocess
import sys
import tarfile
import xml.etree.ElementTree as ET


def canonical(name):
    """Names as the most restrictive format (Cube's XML) can carry them:
    invalid UTF-8 and control characters become U+FFFD."""
    text = name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return "".join("\ufffd" if ord(c) < 0x20 else c for c in text)


def fail(msg):
    print("check_counts: " + msg)
    sys.exit(1)


def chrome_counts(path):
    with open(path, encoding="utf-8") as f:
        events = json.load(f)["traceEvents"]
    begins, ends = collections.Counter(), collections.Counter()
    for ev in events:
        if ev["ph"] == "B":
            begins[(ev["name"], ev["tid"])] += 1
        elif ev["ph"] == "E":
            ends[(ev["name"], ev["tid"])] += 1
    if begins != ends:
        fail("chrome: B and E differ per (name, tid): %r / %r" % (begins, ends))
    counts = collections.Counter()
    for (name, _), n in begins.items():
        counts[canonical(name)] += n
    return counts


def otf2_counts(anchor):
    p = subprocess.run(["otf2-print", anchor], capture_output=True, text=True, errors="surrogateescape")
    if p.returncode != 0 or p.stderr.strip():
        fail("otf2-print: %d %s" % (p.returncode, p.stderr))
    enters, leaves = collections.Counter(), collections.Counter()
    for line in p.stdout.splitlines():
        m = re.match(r'^(ENTER|LEAVE) +(\d+) +\d+  Region: "(.*)" <\d+>$', line)
        if m:
            (enters if m.group(1) == "ENTER" else leaves)[(m.group(3), m.group(2))] += 1
    if enters != leaves:
        fail("otf2: ENTER and LEAVE differ per (region, location)")
    counts = collections.Counter()
    for (name, _), n in enters.items():
        counts[canonical(name)] += n
    return counts


def cube_counts(path):
    with tarfile.open(path) as tar:
        anchor = ET.fromstring(tar.extractfile("anchor.xml").read())
        metric = next(m for m in anchor.iter("metric") if m.findtext("uniq_name") == "visits")
        mid = metric.get("id")
        index = tar.extractfile(mid + ".index").read()
        data = tar.extractfile(mid + ".data").read()
    regions = {r.get("id"): r.findtext("name") for r in anchor.iter("region")}
    cnodes = {c.get("id"): regions[c.get("calleeId")] for c in anchor.iter("cnode")}
    nloc = len(list(anchor.iter("location")))
    (n,) = struct.unpack_from("<I", index, 18)
    rows = struct.unpack_from("<%dI" % n, index, 22)
    values = struct.unpack_from("<%dQ" % (n * nloc), data, 10)
    counts = collections.Counter()
    for i, row in enumerate(rows):
        counts[canonical(cnodes[str(row)])] += sum(values[i * nloc:(i + 1) * nloc])
    return +counts  # drop regions without visits (the artificial root)


def main():
    chrome, otf2, cube = chrome_counts(sys.argv[1]), otf2_counts(sys.argv[2]), cube_counts(sys.argv[3])
    if not (chrome == otf2 == cube):
        fail("visits differ:\nchrome %r\notf2   %r\ncube   %r" % (chrome, otf2, cube))
    for arg in sys.argv[4:]:
        name, count = arg.split("=")
        if chrome[name] != int(count):
            fail("%s: %d visits, want %s (all: %r)" % (name, chrome[name], count, chrome))
    print("check_counts: ok %r" % dict(chrome))


main()
