#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Input files for the STAMP applications of bench/tm/stamp.sh, which the
GCC-TM port of STAMP does not ship. Deterministic (fixed seeds), so every
run of the bench measures the same work.

  stamp_inputs.py kmeans    FILE N D C   N points of D dimensions around C centres
  stamp_inputs.py labyrinth FILE X Y Z N an X*Y*Z maze with N paths to route
  stamp_inputs.py yada      PREFIX M     a Delaunay mesh of an M*M point grid

kmeans: as STAMP's kmeans/inputs/generate.py: C uniformly random centres,
points drawn around them from a normal distribution; one "id v1 ... vD" line
per point.
labyrinth: as STAMP's labyrinth/inputs/generate.py: "d X Y Z" and N "p" lines
of distinct random source and destination cells.
yada: Triangle's .node/.ele/.poly files (what `triangle -c` writes for the
inputs STAMP names): points of a jittered M*M grid (the ones on the border
stay on the square), the cells split along a diagonal, then Lawson edge
flips until every edge is locally Delaunay, which makes the triangulation
Delaunay; the border edges are the boundary segments. The jitter leaves a
share of skinny triangles for yada to refine.
"""
import random
import sys


def kmeans(path, n, d, c):
    rng = random.Random(11)
    centres = [[rng.uniform(0, 1) for _ in range(d)] for _ in range(c)]
    with open(path, "w") as f:
        for i in range(n):
            centre = centres[rng.randrange(c)]
            f.write("%d %s\n" % (i + 1, " ".join("%.6f" % rng.gauss(v, 0.05) for v in centre)))


def labyrinth(path, x, y, z, n):
    rng = random.Random(11)
    cells = rng.sample(range(x * y * z), 2 * n)

    def coord(cell):
        return "%d %d %d" % (cell % x, cell // x % y, cell // (x * y))

    with open(path, "w") as f:
        f.write("# %d x %d x %d maze, %d paths (bench/tm/stamp_inputs.py)\nd %d %d %d\n" % (x, y, z, n, x, y, z))
        for i in range(n):
            f.write("p %s %s\n" % (coord(cells[2 * i]), coord(cells[2 * i + 1])))


def orient(p, a, b, c):
    (ax, ay), (bx, by), (cx, cy) = p[a], p[b], p[c]
    return (bx - ax) * (cy - ay) - (by - ay) * (cx - ax)


def incircle(p, a, b, c, d):
    """> 0 when d lies inside the circle through a, b, c (counter-clockwise)."""
    rows = []
    for v in (a, b, c):
        dx, dy = p[v][0] - p[d][0], p[v][1] - p[d][1]
        rows.append((dx, dy, dx * dx + dy * dy))
    (a1, a2, a3), (b1, b2, b3), (c1, c2, c3) = rows
    return a1 * (b2 * c3 - b3 * c2) - a2 * (b1 * c3 - b3 * c1) + a3 * (b1 * c2 - b2 * c1)


def yada(prefix, m):
    rng = random.Random(11)
    jitter = 0.49
    p = []
    for j in range(m):
        for i in range(m):
            dx = 0.0 if i in (0, m - 1) else rng.uniform(-jitter, jitter)
            dy = 0.0 if j in (0, m - 1) else rng.uniform(-jitter, jitter)
            p.append((i + dx, j + dy))
    tris = []
    for j in range(m - 1):
        for i in range(m - 1):
            a, b, c, d = j * m + i, j * m + i + 1, (j + 1) * m + i + 1, (j + 1) * m + i
            if orient(p, a, b, c) > 0 and orient(p, a, c, d) > 0:
                tris += [[a, b, c], [a, c, d]]
            else:
                tris += [[a, b, d], [b, c, d]]
    edges = {}  # (u, v) directed as in its triangle -> triangle index

    def link(t):
        a, b, c = tris[t]
        for u, v in ((a, b), (b, c), (c, a)):
            edges[(u, v)] = t

    for t in range(len(tris)):
        link(t)
    todo = list(edges)
    while todo:
        u, v = todo.pop()
        t1, t2 = edges.get((u, v)), edges.get((v, u))
        if t1 is None or t2 is None:
            continue
        pv = next(w for w in tris[t1] if w not in (u, v))
        q = next(w for w in tris[t2] if w not in (u, v))
        if incircle(p, u, v, pv, q) <= 1e-12 or orient(p, u, q, pv) <= 1e-12 or orient(p, q, v, pv) <= 1e-12:
            continue
        for t in (t1, t2):
            a, b, c = tris[t]
            for e in ((a, b), (b, c), (c, a)):
                del edges[e]
        tris[t1], tris[t2] = [u, q, pv], [q, v, pv]
        link(t1)
        link(t2)
        todo += [(u, q), (q, v), (v, pv), (pv, u)]
    border = [e for e in edges if (e[1], e[0]) not in edges]
    with open(prefix + ".node", "w") as f:
        f.write("%d 2 0 0\n" % len(p))
        f.writelines("%d %.17g %.17g\n" % (k + 1, x, y) for k, (x, y) in enumerate(p))
    with open(prefix + ".ele", "w") as f:
        f.write("%d 3 0\n" % len(tris))
        f.writelines("%d %d %d %d\n" % (k + 1, a + 1, b + 1, c + 1) for k, (a, b, c) in enumerate(tris))
    with open(prefix + ".poly", "w") as f:
        f.write("0 2 0 0\n%d 0\n" % len(border))
        f.writelines("%d %d %d\n" % (k + 1, u + 1, v + 1) for k, (u, v) in enumerate(sorted(border)))


if __name__ == "__main__":
    kinds = {"kmeans": (kmeans, 3), "labyrinth": (labyrinth, 4), "yada": (yada, 1)}
    if len(sys.argv) < 2 or sys.argv[1] not in kinds or len(sys.argv) != 3 + kinds[sys.argv[1]][1]:
        sys.exit(__doc__.split("\n\n")[1])
    fn, _ = kinds[sys.argv[1]]
    fn(sys.argv[2], *(int(a) for a in sys.argv[3:]))
