#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Cross-checks the Perfetto export of an experiment against its Chrome
export: the same processes (pids, names) and threads (names, pids), and per
thread the same slices, instants and counter samples in the same order at
the same nanosecond, with the thread-create flows between the same events.

usage: check_perfetto.py TRACE.json PERFETTO.tsv
PERFETTO.tsv is the decoded Perfetto trace written by test_export.c
(perfetto_end_to_end): "process" PID NAME, "thread" PID NAME TID PARENTED,
"event" PID THREAD KIND NS NAME EXTRA, times in experiment ns.
"""
import collections
import decimal
import json
import sys


def fail(msg):
    print("check_perfetto: " + msg)
    sys.exit(1)


def from_chrome(path):
    doc = json.load(open(path, encoding="utf-8"), parse_float=decimal.Decimal)
    processes, threads = {}, {}
    for ev in doc["traceEvents"]:
        if ev["ph"] == "M" and ev["name"] == "process_name":
            processes[ev["pid"]] = ev["args"]["name"]
        elif ev["ph"] == "M" and ev["name"] == "thread_name":
            threads[(ev["pid"], ev["tid"])] = ev["args"]["name"]
    events = collections.defaultdict(list)
    stacks = collections.defaultdict(list)
    pending_flow = {}
    for ev in doc["traceEvents"]:
        ph = ev["ph"]
        if ph == "M":
            continue
        key = (ev["pid"], threads[(ev["pid"], ev["tid"])])
        ns = int(ev["ts"] * 1000)
        if ph == "B":
            inherited = "inherited" in ev.get("cat", "")
            end = pending_flow.pop(key, 0)
            events[key].append(("B", ns, ev["name"], "flow=0,end=%d,cat=%s" % (end, "inherited" if inherited else "")))
            stacks[key].append(ev["name"])
        elif ph == "E":
            if stacks[key].pop() != ev["name"]:
                fail("chrome trace: unbalanced E %r" % ev["name"])
            events[key].append(("E", ns, "", "flow=0,end=0,cat="))
        elif ph == "C":
            (value,) = ev["args"].values()
            events[key].append(("C", ns, ev["name"], str(value)))
        elif ph == "i":
            events[key].append(["i", ns, ev["name"], "flow=0,end=0,cat="])
        elif ph == "s":
            # the flow starts at the "thread create" instant just written;
            # Perfetto flow ids are the Chrome ids + 1 (0 means none)
            events[key][-1][3] = "flow=%d,end=0,cat=" % (ev["id"] + 1)
        elif ph == "f":
            pending_flow[key] = ev["id"] + 1
        else:
            fail("chrome trace: unexpected ph %r" % ph)
    return processes, threads, {k: [tuple(e) for e in v] for k, v in events.items()}


def from_perfetto(path):
    processes, threads = {}, {}
    events = collections.defaultdict(list)
    for line in open(path, encoding="utf-8"):
        f = line.rstrip("\n").split("\t")
        if f[0] == "process":
            if int(f[1]) in processes:
                fail("perfetto: two process tracks for pid %s" % f[1])
            processes[int(f[1])] = f[2]
        elif f[0] == "thread":
            if f[4] != "parented":
                fail("perfetto: thread %r is not under a process track" % f[2])
            threads[(int(f[1]), f[2])] = int(f[3])
        else:
            events[(int(f[1]), f[2])].append((f[3], int(f[4]), f[5], f[6]))
    return processes, threads, events


def main():
    c_procs, c_threads, c_events = from_chrome(sys.argv[1])
    p_procs, p_threads, p_events = from_perfetto(sys.argv[2])
    if c_procs != p_procs:
        fail("processes differ:\n chrome   %r\n perfetto %r" % (c_procs, p_procs))
    if len(p_procs) != 2:
        fail("want 2 processes (fork), got %r" % p_procs)
    if sorted((pid, name) for (pid, _), name in c_threads.items()) != sorted(p_threads):
        fail("threads differ:\n chrome   %r\n perfetto %r" % (sorted(c_threads.values()), sorted(p_threads)))
    for (pid, name), tid in p_threads.items():
        if "(tid %d)" % tid not in name:
            fail("thread %r has tid %d" % (name, tid))
    if set(c_events) != set(p_events):
        fail("threads with events differ: %r vs %r" % (sorted(c_events), sorted(p_events)))
    kinds = collections.Counter()
    for key in c_events:
        if c_events[key] != p_events[key]:
            for i, (a, b) in enumerate(zip(c_events[key], p_events[key])):
                if a != b:
                    fail("%r event %d: chrome %r, perfetto %r" % (key, i, a, b))
            fail("%r: %d events in chrome, %d in perfetto" % (key, len(c_events[key]), len(p_events[key])))
        times = [e[1] for e in p_events[key]]
        if times != sorted(times):
            fail("%r: times not monotonic" % (key,))
        for e in p_events[key]:
            kinds[e[0]] += 1
            kinds[e[0] + ":" + e[2]] += 1
    # what the program does: worker + 3 leaf, leaf in the parent after the
    # fork, 2 in the child, one metric sample, a create/join pair, a fork
    want = {"B:worker": 1, "B:leaf": 6, "C:items": 1, "i:thread create": 1, "i:thread join": 1, "i:fork": 1}
    for k, n in want.items():
        if kinds[k] != n:
            fail("%s: %d events, want %d (all: %r)" % (k, kinds[k], n, dict(kinds)))
    if kinds["B"] != kinds["E"]:
        fail("%d slice begins, %d ends" % (kinds["B"], kinds["E"]))
    print("check_perfetto: ok (%d events)" % sum(len(v) for v in p_events.values()))


main()
