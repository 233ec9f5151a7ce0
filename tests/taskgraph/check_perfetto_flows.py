#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Decodes a Perfetto export with protoc --decode and prints its task-graph
flows (ids after the thread-create ones, which are 1 + thread index): how
many, whether each starts exactly once and ends exactly once, and the edge
kinds named.

usage: check_perfetto_flows.py SOURCE_DIR TRACE.pftrace
"""
import collections
import re
import subprocess
import sys

src, trace = sys.argv[1], sys.argv[2]
with open(trace, "rb") as f:
    text = subprocess.run(["protoc", "--decode=perfetto.protos.Trace", "--proto_path=" + src + "/src",
                           src + "/src/export/perfetto_trace.proto"], stdin=f, capture_output=True,
                          check=True).stdout.decode()
threads = text.count("thread {")
starts = collections.Counter(int(i) for i in re.findall(r"\n *flow_ids: (\d+)", text) if int(i) > threads)
ends = collections.Counter(int(i) for i in re.findall(r"\n *terminating_flow_ids: (\d+)", text)
                           if int(i) > threads)
kinds = {"create", "join", "lock", "barrier", "cond", "fork"}
print(len(starts), "flows;", "paired" if starts.keys() == ends.keys() and
      set(starts.values()) | set(ends.values()) == {1} else "unpaired",
      sorted(kinds & set(re.findall(r'name: "(\w+)"', text))))
