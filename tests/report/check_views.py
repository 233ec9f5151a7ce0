#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Loads an HTML report in headless Chromium (html_check.py: it fails on a
console error, an exception, a network request or a page that does not
finish drawing) and prints what its views show, one line per fact, for the
tests to match exactly:

    view tm
    table tm-blocks: block=atomic@main | transactions=1000 | ...
    bars tm-states: t0 | Compute=123 | ... | total=456
    heatmap tm-aborted-by: t1 | t0=0 | t1=0 | t2=2
    heatmap mpi-matrix: canvas 128x128      (a matrix too large for a table)
    first-look Waiting: 28.1 ms on mutex hot_lock from worker > wait_hot → locks
    flame samples-flame: nodes=7 canvas=1   (a flame graph: its tree's nodes)
    table blame-variables: depth=1 | samples=4 | ...   (a row of a tree table)

Cells with data-v give that (numeric cells: their exact value), other cells
their text; a row with data-depth (a tree table's) gives its depth first.
Fails (exit 1) when html_check.py does, or a view shows its error.
Usage: check_views.py PAGE.html [--thread N] [--eval EXPR]...
  --thread N   the views as they are with global thread N chosen in the
               page's thread selector
  --eval EXPR  the views after the JavaScript expression EXPR ran in the
               page (a click on a toggle, a choice in a selector), in order
"""
import argparse
import html.parser
import os
import subprocess
import sys
import tempfile


class Node:
    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent, self.children = tag, dict(attrs), parent, []

    def text(self):
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def find(self, pred):
        for c in self.children:
            if isinstance(c, Node):
                if pred(c):
                    yield c
                yield from c.find(pred)

    def cls(self):
        return self.attrs.get("class", "").split()


VOID = {"meta", "link", "br", "img", "input", "hr", "col", "area", "base", "source", "wbr"}


class Parser(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = self.cur = Node("#root", {}, None)

    def handle_starttag(self, tag, attrs):
        n = Node(tag, attrs, self.cur)
        self.cur.children.append(n)
        if tag not in VOID:
            self.cur = n

    def handle_endtag(self, tag):
        n = self.cur
        while n is not None and n.tag != tag:
            n = n.parent
        if n is not None and n.parent is not None:
            self.cur = n.parent

    def handle_data(self, data):
        self.cur.children.append(data)


def cell(td, label):
    v = td.attrs.get("data-v")
    return "%s=%s" % (label, v if v is not None else " ".join(td.text().split()))


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    with tempfile.TemporaryDirectory(prefix="strobe-check-views-") as tmp:
        dom = os.path.join(tmp, "dom.html")
        ap = argparse.ArgumentParser()
        ap.add_argument("page")
        ap.add_argument("--thread", type=int)
        ap.add_argument("--eval", action="append", default=[])
        a = ap.parse_args()
        args = [sys.executable, os.path.join(here, "html_check.py"), a.page, "--dom", dom]
        if a.thread is not None:  # choose it in the page's thread selector
            args += ["--eval", "(() => { const s = document.getElementById('thread-select'); s.value = '%d'; "
                     "s.dispatchEvent(new Event('change')); return s.value; })()" % a.thread]
        for expr in a.eval:
            args += ["--eval", expr]
        p = subprocess.run(args, capture_output=True, text=True, timeout=180)
        if p.returncode != 0:
            sys.exit("html_check.py: exit %d\n%s%s" % (p.returncode, p.stdout, p.stderr))
        with open(dom, encoding="utf-8") as f:
            text = f.read()
    parser = Parser()
    parser.feed(text)
    root = parser.root
    for sec in root.find(lambda n: n.tag == "section" and "view" in n.cls()):
        print("view", sec.attrs["id"][len("view-"):])
        for prob in sec.find(lambda n: "problem" in n.cls()):
            sys.exit("view %s: %s" % (sec.attrs["id"], prob.text()))
        for dl in sec.find(lambda n: n.tag == "dl" and n.attrs.get("id") == "first-look"):
            terms = [c for c in dl.children if isinstance(c, Node)]
            for dt, dd in zip(terms[0::2], terms[1::2]):
                print("first-look %s: %s" % (dt.text(), " ".join(dd.text().split())))
        for t in sec.find(lambda n: "data-table" in n.attrs):
            heads = [" ".join(th.text().split()) for th in t.find(lambda n: n.tag == "th")]
            for tr in t.find(lambda n: n.tag == "tr" and n.parent.tag == "tbody"):
                tds = [c for c in tr.children if isinstance(c, Node) and c.tag == "td"]
                cells = [cell(td, h) for td, h in zip(tds, heads)]
                if "data-depth" in tr.attrs:
                    cells.insert(0, "depth=" + tr.attrs["data-depth"])
                print("table %s: %s" % (t.attrs["data-table"], " | ".join(cells)))
        for c in sec.find(lambda n: "data-chart" in n.attrs):
            name = c.attrs["data-chart"]
            if "hbars" in c.cls():
                for row in c.find(lambda n: "hbar" in n.cls()):
                    segs = ["%s=%s" % (s.attrs["data-part"], s.attrs["data-v"])
                            for s in row.find(lambda n: "hbar-seg" in n.cls())]
                    total = next(row.find(lambda n: "hbar-total" in n.cls())).attrs["data-v"]
                    print("bars %s: %s" % (name, " | ".join([row.attrs["data-label"]] + segs + ["total=" + total])))
            elif "flame" in c.cls():
                canvases = len(list(c.find(lambda n: n.tag == "canvas")))
                print("flame %s: nodes=%s canvas=%d" % (name, c.attrs.get("data-nodes"), canvases))
            elif "data-rows" in c.attrs:
                print("heatmap %s: canvas %sx%s" % (name, c.attrs["data-rows"], c.attrs["data-cols"]))
            else:
                heads = [" ".join(th.text().split()) for th in c.find(lambda n: n.tag == "th" and n.parent.parent.tag == "thead")]
                for tr in c.find(lambda n: n.tag == "tr" and n.parent.tag == "tbody"):
                    rowhead = next(tr.find(lambda n: n.tag == "th")).text()
                    tds = [x for x in tr.children if isinstance(x, Node) and x.tag == "td"]
                    print("heatmap %s: %s" % (name, " | ".join([rowhead] + [cell(td, h) for td, h in zip(tds, heads[1:])])))


if __name__ == "__main__":
    main()
