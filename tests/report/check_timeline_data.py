#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks the timeline members of an HTML report's data (docs/report-html.md,
"Timeline"): decodes the delta-encoded arrays exactly as timeline.js does and
prints one line per lane, "thread rows intervals bars cells: region names of
its rows", for the C test to compare; fails (exit 1, one line) when a lane's
bars and cell counts do not add up to its intervals, a bar is shorter than
cell_ns, an index is out of range or the encoding exceeds the budget.

usage: check_timeline_data.py REPORT.html [timeline|tm_timeline]
"""
import json
import re
import sys


def fail(msg):
    print('check_timeline_data: ' + msg)
    sys.exit(1)


def main():
    path, member = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else 'timeline'
    page = open(path, encoding='utf-8').read()
    m = re.search(r'<script type="application/json" id="strobe-data">(.*?)</script>', page, re.S)
    if not m:
        fail('no data element')
    d = json.loads(m.group(1))
    if member not in d:
        fail('no member ' + member)
    tl, rep = d[member], d['report']
    keys = tl['states'] if member == 'tm_timeline' else [r['name'] for r in rep['regions']]
    if len(tl['lanes']) != len(rep['threads']):
        fail('%d lanes for %d threads' % (len(tl['lanes']), len(rep['threads'])))
    if tl['bytes'] > tl['budget']:
        fail('%d bytes over the budget of %d' % (tl['bytes'], tl['budget']))
    total = bars_total = 0
    T = tl['cell_ns']
    for lane in tl['lanes']:
        b, c = lane['bars'], lane['cells']
        if len(b) % 4 or len(c) % 6:
            fail('thread %d: ragged arrays' % lane['thread'])
        names = [set() for _ in range(lane['rows'])]
        t = 0
        for i in range(0, len(b), 4):
            t += b[i]
            if b[i + 1] < T or b[i + 2] >= lane['rows'] or b[i + 3] >= len(keys):
                fail('thread %d: bad bar %s' % (lane['thread'], b[i:i + 4]))
            names[b[i + 2]].add(keys[b[i + 3]])
        counted = 0
        for i in range(0, len(c), 6):
            if c[i + 1] >= lane['rows'] or c[i + 2] >= len(keys) or c[i + 3] < 1 or not 0 <= c[i + 4] <= 1000:
                fail('thread %d: bad cell %s' % (lane['thread'], c[i:i + 6]))
            names[c[i + 1]].add(keys[c[i + 2]])
            counted += c[i + 3]
        if len(b) // 4 + counted != lane['intervals']:
            fail('thread %d: %d bars + %d in cells != %d intervals' %
                 (lane['thread'], len(b) // 4, counted, lane['intervals']))
        total += lane['intervals']
        bars_total += len(b) // 4
        print('%d %d %d %d %d: %s' % (lane['thread'], lane['rows'], lane['intervals'], len(b) // 4, len(c) // 6,
                                      ' | '.join(','.join(sorted(n)) for n in names)))
    if total != tl['intervals'] or bars_total != tl['bars']:
        fail('totals %d/%d, lanes say %d/%d' % (tl['intervals'], tl['bars'], total, bars_total))


main()
