#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Decodes a pprof profile written by strobe export --format pprof with
protoc and prints it in the canonical form of pprof_decode.c, which the
test compares with its exact expectation.

usage: check_pprof.py PROFILE.pb.gz PROTO_DIR

The file is gunzipped, then `protoc --decode perftools.profiles.Profile
PROTO_DIR/profile.proto` turns it into text format, read by the small
parser below. Every reference is checked on the way: string indices in
the table (whose entry 0 is ""), location and function ids defined, one
value per sample type. Output, one line each:
    types TYPE/UNIT ... default TYPE period TYPE/UNIT N
    time_nanos>0 duration D
    comment TEXT
    sample ROOT > ... > LEAF [KEY=VALUE ...] V1 V2 ...
    inlined INNERMOST in ... in CALLER      (a location of several lines)
"""
import codecs
import gzip
import re
import subprocess
import sys

TOKEN = re.compile(r'\s*(?:(\})|([A-Za-z_]\w*)\s*(\{|:\s*("(?:[^"\\]|\\.)*"|[^\s]+)))')


def parse(text):
    """protoc's text format -> dict of field -> list of values (dicts
    for messages, str for strings, int otherwise)."""
    stack = [{}]
    pos = 0
    while True:
        m = TOKEN.match(text, pos)
        if not m:
            if text[pos:].strip():
                sys.exit("cannot parse at: " + text[pos:pos + 60])
            break
        pos = m.end()
        if m.group(1):
            stack.pop()
            continue
        field, value = m.group(2), m.group(4)
        if m.group(3) == "{":
            msg = {}
            stack[-1].setdefault(field, []).append(msg)
            stack.append(msg)
        elif value.startswith('"'):
            raw = codecs.escape_decode(value[1:-1].encode("ascii"))[0]
            stack[-1].setdefault(field, []).append(raw.decode("utf-8"))  # must be valid UTF-8
        elif value in ("true", "false"):
            stack[-1].setdefault(field, []).append(value == "true")
        else:
            stack[-1].setdefault(field, []).append(int(value))
    if len(stack) != 1:
        sys.exit("unbalanced braces")
    return stack[0]


def one(msg, field, default=0):
    return msg.get(field, [default])[0]


def main():
    path, proto_dir = sys.argv[1], sys.argv[2]
    with gzip.open(path, "rb") as f:
        data = f.read()
    text = subprocess.run(["protoc", "--decode", "perftools.profiles.Profile", "--proto_path", proto_dir,
                           proto_dir + "/profile.proto"], input=data, capture_output=True, check=True).stdout
    p = parse(text.decode("ascii"))
    strings = p.get("string_table", [])
    if not strings or strings[0] != "":
        sys.exit("string_table[0] is not the empty string")

    def s(i):
        if not 0 <= i < len(strings):
            sys.exit("string index %d out of the table (%d)" % (i, len(strings)))
        return strings[i]

    funcs = {one(f, "id"): s(one(f, "name")) for f in p.get("function", [])}
    for f in p.get("function", []):
        s(one(f, "system_name")), s(one(f, "filename"))
    mappings = {one(m, "id") for m in p.get("mapping", [])}
    locs = {}
    for loc in p.get("location", []):
        if one(loc, "mapping_id") and one(loc, "mapping_id") not in mappings:
            sys.exit("location %d: no mapping %d" % (one(loc, "id"), one(loc, "mapping_id")))
        # inlined frames: the caller last, so innermost > ... > outermost
        locs[one(loc, "id")] = [funcs[one(ln, "function_id")] for ln in loc.get("line", [])]
    types = ["%s/%s" % (s(one(t, "type")), s(one(t, "unit"))) for t in p.get("sample_type", [])]
    pt = one(p, "period_type", {})
    print("types %s default %s period %s/%s %d" % (" ".join(types), s(one(p, "default_sample_type")),
                                                     s(one(pt, "type")), s(one(pt, "unit")), one(p, "period")))
    print("time_nanos>0 %s duration %d" % (one(p, "time_nanos") > 0, one(p, "duration_nanos")))
    for c in p.get("comment", []):
        print("comment " + s(c))
    for smp in p.get("sample", []):
        frames = []
        for lid in smp.get("location_id", []):
            frames += locs[lid]
        values = smp.get("value", [])
        if len(values) != len(types):
            sys.exit("a sample has %d values for %d types" % (len(values), len(types)))
        labels = ["%s=%s" % (s(one(lb, "key")), s(one(lb, "str")) if one(lb, "str") else one(lb, "num"))
                  for lb in smp.get("label", [])]
        print("sample %s [%s] %s" % (" > ".join(reversed(frames)), " ".join(labels),
                                     " ".join(str(v) for v in values)))
    for loc in p.get("location", []):  # inline chains, innermost first
        if len(loc.get("line", [])) > 1:
            print("inlined " + " in ".join(locs[one(loc, "id")]))


main()
