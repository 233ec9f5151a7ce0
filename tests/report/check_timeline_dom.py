#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks a view of timeline.js in a page's drawn DOM (chromium --dump-dom
on stdin): the page is ready, the view's section has no error, one canvas,
and its hidden lane list; prints "intervals of each traced lane" in thread
order, "-" for an untraced one.

usage: chromium --headless --dump-dom file://PAGE | check_timeline_dom.py VIEW_ID
"""
import re
import sys


def main():
    view, dom = sys.argv[1], sys.stdin.read()
    if 'data-ready="1"' not in dom:
        sys.exit('check_timeline_dom: the page did not set data-ready="1"')
    m = re.search(r'<section[^>]*id="view-%s".*?</section>' % re.escape(view), dom, re.S)
    if not m:
        sys.exit('check_timeline_dom: no section view-' + view)
    sec = m.group(0)
    if 'could not be drawn' in sec:
        sys.exit('check_timeline_dom: ' + re.sub(r'<[^>]+>', ' ', sec)[:500])
    if len(re.findall(r'<canvas', sec)) != 1:
        sys.exit('check_timeline_dom: not one canvas')
    lanes = re.findall(r'<li data-thread="(\d+)" data-traced="([01])" data-intervals="(\d+)"', sec)
    print(' '.join(n if traced == '1' else '-' for _, traced, n in lanes))


main()
