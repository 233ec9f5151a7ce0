#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks the Cube4 .cubex exported from tests/export/make_experiment.c.

usage: check_cubex.py PROFILE.cubex EXTRACTED_DIR
EXTRACTED_DIR holds the members as unpacked by `tar -xf`. The metric files
are decoded by the small reader below, which follows the layout the
exporter documents (src/export/cubex.c): "<id>.index" = "CUBEX.INDEX",
int32 1, uint16 version 0, uint8 format 1 (sparse), uint32 N, N uint32 row
numbers; "<id>.data" = "CUBEX.DATA" then N rows x locations values; for
EXCLUSIVE metrics row number = depth-first preorder position of the cnode.
"""
import os
import struct
import sys
import tarfile
import xml.etree.ElementTree as ET

ODD = 'say "hi" <&> \ufffd gr\u00f6\u00dfe \ufffd!'
DBL_MAX = sys.float_info.max

# (call path of region names) -> per location [thread 0, thread 1]
EXPECTED = {
    ("demo",): {"visits": [0, 0], "time": [0, 0], "min_time": [DBL_MAX, DBL_MAX],
                "max_time": [0.0, 0.0], "bytes": [0, 0]},
    ("demo", "main"): {"visits": [1, 0], "time": [5400 / 1e9, 0], "min_time": [5900 / 1e9, DBL_MAX],
                       "max_time": [5900 / 1e9, 0.0], "bytes": [100, 0]},
    ("demo", "main", "compute"): {"visits": [2, 0], "time": [400 / 1e9, 0],
                                  "min_time": [100 / 1e9, DBL_MAX], "max_time": [300 / 1e9, 0.0],
                                  "bytes": [0, 0]},
    ("demo", "main", ODD): {"visits": [1, 0], "time": [100 / 1e9, 0], "min_time": [100 / 1e9, DBL_MAX],
                            "max_time": [100 / 1e9, 0.0], "bytes": [0, 0]},
    ("demo", "compute"): {"visits": [0, 2], "time": [0, 420 / 1e9], "min_time": [DBL_MAX, 20 / 1e9],
                          "max_time": [0.0, 400 / 1e9], "bytes": [0, -7]},
}
METRICS = [  # id, uniq_name, dtype, uom, struct format of one value
    (0, "time", "DOUBLE", "sec", "d"),
    (1, "visits", "UINT64", "occ", "Q"),
    (2, "min_time", "MINDOUBLE", "sec", "d"),
    (3, "max_time", "MAXDOUBLE", "sec", "d"),
    (4, "bytes", "INT64", "B", "q"),
]


def fail(msg):
    print("check_cubex: " + msg)
    sys.exit(1)


def read_index(path):
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:11] != b"CUBEX.INDEX":
        fail("%s: marker %r" % (path, raw[:11]))
    one, version, fmt, n = struct.unpack_from("<iHBI", raw, 11)
    if (one, version, fmt) != (1, 0, 1):
        fail("%s: header %r" % (path, (one, version, fmt)))
    if len(raw) != 22 + 4 * n:
        fail("%s: %d bytes for %d rows" % (path, len(raw), n))
    return list(struct.unpack_from("<%dI" % n, raw, 22))


def read_data(path, fmt, nrows, nloc):
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:10] != b"CUBEX.DATA":
        fail("%s: marker %r" % (path, raw[:10]))
    if len(raw) != 10 + 8 * nrows * nloc:
        fail("%s: %d bytes for %d x %d values" % (path, len(raw), nrows, nloc))
    values = struct.unpack_from("<%d%s" % (nrows * nloc, fmt), raw, 10)
    return [list(values[r * nloc:(r + 1) * nloc]) for r in range(nrows)]


def main():
    cubex, root_dir = sys.argv[1], sys.argv[2]
    with tarfile.open(cubex) as tar:  # a well-formed ustar archive
        names = [m.name for m in tar.getmembers()]
        if any(m.type != tarfile.REGTYPE or m.size % 512 == 0 for m in tar.getmembers()):
            fail("members must be regular files not filling their last block")
    want = [f"{i}.{kind}" for i in range(len(METRICS)) for kind in ("data", "index")] + ["anchor.xml"]
    if names != want:
        fail("members %r" % names)

    with open(os.path.join(root_dir, "anchor.xml"), "rb") as f:
        head = f.read(100)
    if not head.startswith(b'<?xml version="1.0" encoding="UTF-8"?>\n\n<cube version="4.4">\n'):
        fail("anchor.xml starts with %r" % head)
    cube = ET.parse(os.path.join(root_dir, "anchor.xml")).getroot()

    metrics = cube.find("metrics").findall("metric")
    got = [(int(m.get("id")), m.findtext("uniq_name"), m.findtext("dtype"), m.findtext("uom"))
           for m in metrics]
    if got != [m[:4] for m in METRICS] or any(m.get("type") != "EXCLUSIVE" for m in metrics):
        fail("metrics %r" % got)

    program = cube.find("program")
    regions = {int(r.get("id")): r for r in program.findall("region")}
    region_names = {i: r.findtext("name") for i, r in regions.items()}
    if sorted(region_names.values()) != sorted(["demo", "main", "compute", ODD]):
        fail("regions %r" % region_names)
    main_region = next(r for r in regions.values() if r.findtext("name") == "main")
    if (main_region.get("mod"), main_region.get("begin")) != ("demo.c", "10"):
        fail("main region attributes %r" % main_region.attrib)

    # cnode ids must be the depth-first preorder positions.
    paths = []
    roots = program.findall("cnode")
    if len(roots) != 1:
        fail("%d root cnodes" % len(roots))
    stack = [(roots[0], ())]
    while stack:
        node, prefix = stack.pop()
        path = prefix + (region_names[int(node.get("calleeId"))],)
        if int(node.get("id")) != len(paths):
            fail("cnode %s has id %s, preorder position %d" % (path, node.get("id"), len(paths)))
        paths.append(path)
        for child in reversed(node.findall("cnode")):
            stack.append((child, path))
    if sorted(paths) != sorted(EXPECTED):
        fail("call paths %r" % paths)

    system = cube.find("system")
    stn = system.findall("systemtreenode")
    if len(stn) != 1 or stn[0].findtext("name") != "testhost" or stn[0].findtext("class") != "machine":
        fail("system tree root")
    groups = stn[0].findall("locationgroup")
    if len(groups) != 1 or [groups[0].findtext(t) for t in ("name", "rank", "type")] != ["demo (pid 4242)", "0", "process"]:
        fail("location group")
    locs = [(l.get("Id"), l.findtext("name"), l.findtext("rank"), l.findtext("type"))
            for l in groups[0].findall("location")]
    if locs != [("0", "thread 0 (tid 4242)", "0", "thread"), ("1", "thread 1 (tid 4243)", "1", "thread")]:
        fail("locations %r" % locs)

    for mid, uniq, _, _, fmt in METRICS:
        rows = read_index(os.path.join(root_dir, "%d.index" % mid))
        data = read_data(os.path.join(root_dir, "%d.data" % mid), fmt, len(rows), len(locs))
        if rows != list(range(len(paths))):
            fail("%s: rows %r" % (uniq, rows))
        for row, values in zip(rows, data):
            want_values = EXPECTED[paths[row]][uniq]
            if values != want_values:
                fail("%s at %r: %r, want %r" % (uniq, paths[row], values, want_values))
    print("check_cubex: ok")


main()
