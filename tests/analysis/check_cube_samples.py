#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Prints the sampled call paths of a .cubex (src/export/cubex.c) with
their "samples" (summed over locations), largest first, then "total N".

usage: check_cube_samples.py PROFILE.cubex
"""
import struct
import sys
import tarfile
import xml.etree.ElementTree as ET

with tarfile.open(sys.argv[1]) as tar:
    members = {m.name: tar.extractfile(m).read() for m in tar.getmembers()}
root = ET.fromstring(members["anchor.xml"])
metric = {m.find("uniq_name").text: m.get("id") for m in root.iter("metric")}["samples"]
regions = {r.get("id"): r.find("name").text for r in root.iter("region")}
nloc = sum(1 for _ in root.iter("location"))
raw = members["%s.data" % metric]
if raw[:10] != b"CUBEX.DATA":
    sys.exit("bad data marker")
values = struct.unpack("<%dQ" % ((len(raw) - 10) // 8), raw[10:])


def walk(cnode, path):
    cid = int(cnode.get("id"))
    path = path + [regions[cnode.get("calleeId")]]
    v = sum(values[cid * nloc:(cid + 1) * nloc])
    if v:
        yield " > ".join(path), v
    for child in cnode.findall("cnode"):
        yield from walk(child, path)


rows = [r for c in root.find("program").findall("cnode") for r in walk(c, [])]
for path, v in sorted(rows, key=lambda r: -r[1]):
    print(v, path)
print("total", sum(v for _, v in rows))
