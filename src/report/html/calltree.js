// Call-tree view: the call-path profile as a flame graph of inclusive
// time, and the flat profile as a sortable table, for all threads or the
// one chosen in the header. All threads use the report's own flat profile
// (exact, computed by strobe); one thread's is summed here from the call
// tree's per-thread statistics, with the same rules: inclusive time counts
// only the outermost occurrence of a region on each call path.
strobe.view({
  id: 'calltree', title: 'Call tree', order: 20,
  show: d => d.report.calltree_columns.parent.length > 1,
  render(el, d) {
    const S = strobe, r = d.report, ct = r.calltree_columns, n = ct.parent.length;
    const names = ct.region.map(g => g < 0 ? 'all' : S.regionName(d, g));
    const depth = new Int32Array(n);
    for (let i = 1; i < n; i++) depth[i] = depth[ct.parent[i]] + 1;
    // The statistics of the selection: the columns for all threads, for
    // one thread its entries of calltree_columns.threads by node.
    let cols = null;
    const select = () => {
      if (S.state.thread < 0) { cols = ct; return; }
      const th = ct.threads, at = new Int32Array(n).fill(-1);
      for (let k = 0; k < th.node.length; k++) if (th.thread[k] === S.state.thread) at[th.node[k]] = k;
      const pick = key => Array.from(at, k => k < 0 ? 0 : th[key][k]);
      cols = { visits: pick('visits'), incl_ns: pick('incl_ns'), excl_ns: pick('excl_ns'),
        min_ns: Array.from(at, k => k < 0 ? null : th.min_ns[k]), max_ns: Array.from(at, k => k < 0 ? null : th.max_ns[k]),
        entered: at };
    };
    // statistics of node i for the current selection (null: never entered)
    const stat = i => {
      if (i === 0 || (cols.entered && cols.entered[i] < 0)) return null;
      return { visits: cols.visits[i], incl_ns: cols.incl_ns[i], excl_ns: cols.excl_ns[i], min_ns: cols.min_ns[i], max_ns: cols.max_ns[i] };
    };
    const note = S.h('p', { class: 'note' });
    const flameBox = S.h('div');
    const tableBox = S.h('div');
    el.appendChild(note);
    el.appendChild(flameBox);
    const treeBox = S.h('div');
    el.appendChild(S.h('h3', null, 'Call paths'));
    el.appendChild(S.h('p', { class: 'note' }, 'The call tree with its exact numbers; the hottest path is open. Click \u25B8 to open a node.'));
    el.appendChild(treeBox);
    el.appendChild(S.h('h3', null, 'Flat profile'));
    el.appendChild(S.h('p', { class: 'note' }, 'Click a row to find the region in the flame graph.'));
    el.appendChild(tableBox);
    let flame = null, flameValue = null;   // one chart, its weights follow the thread

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
        const g = ct.region[i];
        while (depthStack.length && depthStack[depthStack.length - 1].depth >= depth[i]) {
          const o = depthStack.pop().region;
          onPath.set(o, onPath.get(o) - 1);
        }
        depthStack.push({ depth: depth[i], region: g });
        const outer = !onPath.get(g);
        onPath.set(g, (onPath.get(g) || 0) + 1);
        const s = stat(i);
        if (!s) continue;
        let f = by.get(g);
        if (!f) by.set(g, f = { region: g, name: names[i], source: S.regionSource(d, g),
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
      select();
      const value = new Float64Array(n);
      for (let i = 1; i < n; i++) {
        value[i] = cols.incl_ns[i] || 0;
        if (ct.parent[i] === 0) value[0] += value[i];
      }
      const who = S.state.thread < 0 ? 'all threads' : S.threadName(d, S.state.thread);
      note.textContent = 'Inclusive time of ' + who + ' (' + S.fmt.time(value[0]) +
        ' in top-level regions). Click a box to zoom, hover for its statistics.';
      flameValue = value;
      if (flame) flame.setValues(value);
      else flame = S.flame(flameBox, { parent: ct.parent, name: names, value }, {
        unit: S.fmt.time,
        tip(i) {
          const s = stat(i), g = ct.region[i];
          if (i === 0 || !s) return [['inclusive', S.fmt.time(flameValue[i])]];
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
      drawTree(value);
    }

    // The call tree as an indented table: children by inclusive time,
    // rows made when their parent is opened (trees can be huge).
    const kids = Array.from({ length: n }, () => []);
    for (let i = 1; i < n; i++) kids[ct.parent[i]].push(i);
    function drawTree(value) {
      const total = value[0] || 1;
      const order = i => kids[i].filter(k => stat(k)).sort((a, b) => value[b] - value[a]);
      const body = S.h('tbody');
      const row = (i, open) => {
        const s = stat(i), ks = order(i);
        const toggle = S.h('span', { class: 'toggle' }, ks.length ? (open ? '\u25BE' : '\u25B8') : '\u00A0');
        const tr = S.h('tr', { 'data-node': String(i) },
          S.h('td', { class: 'name', title: S.regionSource(d, ct.region[i]), 'data-v': names[i] }, S.h('span', { style: 'padding-left:' + (depth[i] - 1) * 14 + 'px' }),
            toggle, ' ', names[i]),
          S.h('td', { class: 'num', 'data-v': String(s.visits) }, S.fmt.count(s.visits)),
          S.h('td', { class: 'num', 'data-v': String(s.incl_ns) }, S.fmt.time(s.incl_ns)),
          S.h('td', { class: 'num' }, S.fmt.pct(s.incl_ns / total)),
          S.h('td', { class: 'num', 'data-v': String(s.excl_ns) }, S.fmt.time(s.excl_ns)),
          S.h('td', { class: 'num' }, S.fmt.time(s.visits ? s.incl_ns / s.visits : null)));
        tr.kids = null;
        const expand = () => {
          if (tr.kids) return;
          tr.kids = [];
          let after = tr;
          for (const k of ks) { const c = row(k, false); after.after(c.tr); after = lastRow(c.tr); tr.kids.push(c.tr); }
          toggle.textContent = ks.length ? '\u25BE' : '\u00A0';
        };
        const collapse = () => {
          for (const c of tr.kids || []) { c.collapse(); c.remove(); }
          tr.kids = null;
          toggle.textContent = ks.length ? '\u25B8' : '\u00A0';
        };
        tr.collapse = collapse;
        toggle.addEventListener('click', () => (tr.kids ? collapse() : expand()));
        return { tr, expand, ks };
      };
      const lastRow = tr => (tr.kids && tr.kids.length ? lastRow(tr.kids[tr.kids.length - 1]) : tr);
      // top-level nodes, and the hottest path opened
      let hot = null;
      for (const k of order(0)) {
        const c = row(k, false);
        body.appendChild(c.tr);
        if (!hot) hot = c;
      }
      for (let guard = 0; hot && guard < 64; guard++) {
        hot.expand();
        const next = hot.tr.kids && hot.tr.kids[0];
        if (!next) break;
        const i = Number(next.getAttribute('data-node'));
        hot = { tr: next, expand: () => next.querySelector('.toggle').click(), ks: order(i) };
        if (!hot.ks.length) break;
      }
      treeBox.textContent = '';
      const table = S.h('table', { class: 'data' }, S.h('thead', null, S.h('tr', null,
        ['call path', 'visits', 'inclusive', 'incl %', 'exclusive', 'avg'].map((h, k) => S.h('th', { class: k ? 'num' : '' }, h)))), body);
      treeBox.appendChild(S.h('div', { class: 'scroll', id: 'call-paths' }, table));
    }
    draw();
    S.on('thread', draw);
  },
});
