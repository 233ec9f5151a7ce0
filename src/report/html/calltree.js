// Call-tree view: the call-path profile as a flame graph of inclusive
// time, and the flat profile as a sortable table, for all threads or the
// one chosen in the header. All threads use the report's own flat profile
// (exact, computed by strobe); one thread's is summed here from the call
// tree's per-thread statistics, with the same rules: inclusive time counts
// only the outermost occurrence of a region on each call path.
strobe.view({
  id: 'calltree', title: 'Call tree', order: 20,
  show: d => d.report.calltree.length > 1,
  render(el, d) {
    const S = strobe, r = d.report, nodes = r.calltree, n = nodes.length;
    const names = nodes.map(x => x.region === null ? 'all' : S.regionName(d, x.region));
    // statistics of node i for the current selection (null: never entered)
    const stat = i => {
      const x = nodes[i];
      if (S.state.thread < 0) return x.visits === undefined ? null : x;
      return (x.threads || []).find(t => t.thread === S.state.thread) || null;
    };
    const note = S.h('p', { class: 'note' });
    const flameBox = S.h('div');
    const tableBox = S.h('div');
    el.appendChild(note);
    el.appendChild(flameBox);
    el.appendChild(S.h('h3', null, 'Flat profile'));
    el.appendChild(S.h('p', { class: 'note' }, 'Click a row to find the region in the flame graph.'));
    el.appendChild(tableBox);
    let flame = null;

    function flatRows() {
      if (S.state.thread < 0)
        return r.flat.map(f => ({
          region: f.region, name: S.regionName(d, f.region), source: S.regionSource(d, f.region),
          visits: f.visits, incl: f.incl_ns, excl: f.excl_ns, min: f.min_ns, max: f.max_ns,
          avg: f.visits ? f.sum_incl_ns / f.visits : null,
        }));
      const by = new Map();
      const onPath = new Map();   // region -> open occurrences on the current path
      const depthStack = [];
      for (let i = 1; i < n; i++) {
        const x = nodes[i];
        while (depthStack.length && depthStack[depthStack.length - 1].depth >= x.depth) {
          const g = depthStack.pop().region;
          onPath.set(g, onPath.get(g) - 1);
        }
        depthStack.push({ depth: x.depth, region: x.region });
        const outer = !onPath.get(x.region);
        onPath.set(x.region, (onPath.get(x.region) || 0) + 1);
        const s = stat(i);
        if (!s) continue;
        let f = by.get(x.region);
        if (!f) by.set(x.region, f = { region: x.region, name: names[i], source: S.regionSource(d, x.region),
          visits: 0, incl: 0, excl: 0, sumIncl: 0, min: null, max: null });
        f.visits += s.visits;
        f.excl += s.excl_ns;
        f.sumIncl += s.incl_ns;
        if (outer) f.incl += s.incl_ns;
        if (s.min_ns !== null && (f.min === null || s.min_ns < f.min)) f.min = s.min_ns;
        if (s.max_ns !== null && (f.max === null || s.max_ns > f.max)) f.max = s.max_ns;
      }
      return Array.from(by.values(), f => Object.assign(f, { avg: f.visits ? f.sumIncl / f.visits : null }));
    }

    function draw() {
      const value = new Array(n).fill(0);
      for (let i = n - 1; i >= 1; i--) {
        const s = stat(i);
        value[i] = s ? s.incl_ns : 0;
      }
      value[0] = 0;
      for (let i = 1; i < n; i++) if (nodes[i].parent === 0) value[0] += value[i];
      const who = S.state.thread < 0 ? 'all threads' : S.threadName(d, S.state.thread);
      note.textContent = 'Inclusive time of ' + who + ' (' + S.fmt.time(value[0]) +
        ' in top-level regions). Click a box to zoom, hover for its statistics.';
      flameBox.textContent = '';
      flame = S.flame(flameBox, { parent: nodes.map(x => x.parent === null ? -1 : x.parent), name: names, value }, {
        unit: S.fmt.time,
        tip(i) {
          const s = stat(i), g = nodes[i].region;
          if (i === 0 || !s) return [['inclusive', S.fmt.time(value[i])]];
          return [['source', S.regionSource(d, g) || '-'], ['visits', S.fmt.count(s.visits)],
            ['inclusive', S.fmt.time(s.incl_ns)], ['exclusive', S.fmt.time(s.excl_ns)],
            ['min', S.fmt.time(s.min_ns)], ['avg', S.fmt.time(s.visits ? s.incl_ns / s.visits : null)],
            ['max', S.fmt.time(s.max_ns)]];
        },
      });
      const rows = flatRows();
      const total = rows.reduce((a, f) => a + f.excl, 0) || 1;
      for (const f of rows) f.share = f.excl / total;
      tableBox.textContent = '';
      const table = S.table([
        { key: 'name', label: 'region', name: true }, { key: 'source', label: 'source', name: true },
        { key: 'visits', label: 'visits', num: true, fmt: S.fmt.count },
        { key: 'incl', label: 'inclusive', num: true, fmt: S.fmt.time },
        { key: 'excl', label: 'exclusive', num: true, fmt: S.fmt.time },
        { key: 'share', label: 'excl %', num: true, fmt: S.fmt.pct },
        { key: 'min', label: 'min', num: true, fmt: S.fmt.time }, { key: 'avg', label: 'avg', num: true, fmt: S.fmt.time },
        { key: 'max', label: 'max', num: true, fmt: S.fmt.time },
      ], rows, { sort: 'excl' });
      table.id = 'flat-profile';
      table.addEventListener('click', ev => {
        const tr = ev.target.closest('tbody tr');
        if (tr && flame) { flame.search(tr.firstChild.textContent); flameBox.scrollIntoView({ block: 'nearest' }); }
      });
      tableBox.appendChild(table);
    }
    draw();
    S.on('thread', draw);
  },
});
