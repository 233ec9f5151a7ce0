#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks a Chrome JSON export split into parts (`strobe export --chunk-size`)
against the same export in one file.

usage: check_parts.py WHOLE.json PART-000.json PART-001.json ...

Every part must be a complete document that loads alone: the metadata of
every process and thread, and per thread B/E events that balance (each E
closes the innermost open B of the same name and args). A frame open at a
part boundary is closed by E events at the end of the part and opened again
by B events with args "continued": true at the start of the next one, at the
same time. Without those, the parts' events, thread by thread and in order,
are exactly the whole export's.
"""
import collections
import json
import sys


def fail(msg):
    print("check_parts: " + msg)
    sys.exit(1)


def threads_events(path):
    try:
        doc = json.load(open(path, encoding="utf-8"))
    except ValueError as e:
        fail("%s: not JSON: %s" % (path, e))
    meta = set()
    events = collections.defaultdict(list)
    for ev in doc["traceEvents"]:
        if ev["ph"] == "M":
            meta.add((ev["name"], ev["pid"], ev["tid"]))
        else:
            events[(ev["pid"], ev["tid"])].append(ev)
    if "otherData" not in doc or "displayTimeUnit" not in doc:
        fail("%s: document not complete" % path)
    return meta, events


def balanced(path, key, evs):
    stack = []
    for ev in evs:
        if ev["ph"] == "B":
            stack.append((ev["name"], json.dumps(ev.get("args"), sort_keys=True)))
        elif ev["ph"] == "E":
            if not stack or stack.pop() != (ev["name"], json.dumps(ev.get("args"), sort_keys=True)):
                fail("%s: thread %s: E %r does not close the innermost B" % (path, key, ev["name"]))
    if stack:
        fail("%s: thread %s: %d frames left open" % (path, key, len(stack)))


def main():
    whole_meta, whole = threads_events(sys.argv[1])
    parts = [threads_events(p) for p in sys.argv[2:]]
    if len(parts) < 2:
        fail("fewer than two parts")
    joined = collections.defaultdict(list)
    continued = 0
    for i, (meta, events) in enumerate(parts):
        path = sys.argv[2 + i]
        if meta != whole_meta:
            fail("%s: metadata differs from the whole export's" % path)
        for key, evs in events.items():
            balanced(path, key, evs)
            k = 0
            while k < len(evs) and evs[k]["ph"] == "B" and evs[k].get("args", {}).get("continued") is True:
                k += 1
            if k:
                # the part before closed these frames at its end, at this time
                prev = joined[key]
                closing, opening = prev[len(prev) - k:], evs[:k]
                if len(closing) < k or any(e["ph"] != "E" for e in closing):
                    fail("%s: thread %s: %d frames continued, not closed at the end of the part before" %
                         (path, key, k))
                for c, o in zip(reversed(closing), opening):
                    if c["name"] != o["name"] or c["ts"] != o["ts"]:
                        fail("%s: thread %s: continued %r at %s does not match %r closed at %s" %
                             (path, key, o["name"], o["ts"], c["name"], c["ts"]))
                del prev[len(prev) - k:]
                continued += k
            for ev in evs[k:]:
                if ev["ph"] == "B" and ev.get("args", {}).get("continued") is True:
                    fail("%s: thread %s: continued frame %r after the part's start" % (path, key, ev["name"]))
                if ev["ph"] in "BE" and "continued" in ev.get("args", {}):
                    ev = dict(ev, args={a: v for a, v in ev["args"].items() if a != "continued"})
                    if not ev["args"]:
                        del ev["args"]
                joined[key].append(ev)
    for key in set(whole) | set(joined):
        if whole.get(key, []) != joined.get(key, []):
            a, b = whole.get(key, []), joined.get(key, [])
            i = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            fail("thread %s: event %d differs: whole %r, parts %r" %
                 (key, i, a[i] if i < len(a) else None, b[i] if i < len(b) else None))
    print("%d parts, %d frames continued" % (len(parts), continued))


main()
