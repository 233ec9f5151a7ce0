// The differential flame graph of `strobe report --diff A B` (data.diff,
// src/report/diff.h): the union of both call trees, matched by function
// and file. A box is as wide as its inclusive time in B (in A for a frame
// only A has; a parent at least as wide as its children), coloured by
// the relative change of inclusive time from A to B: red for growth, blue
// for shrinkage, the stronger the larger, saturated at +-100 %; grey when
// within 1 %. The tooltip has both sides' values; the table below lists
// every path with its change.
strobe.view({
  id: 'diff', title: 'Differential flame graph', order: 12,
  show: d => !!d.diff,
  render(el, d) {
    const S = strobe, df = d.diff, n = df.parent.length;
    // relative change per node: +1/-1 for frames of one side only
    const rel = new Float64Array(n), value = new Float64Array(n);
    for (let i = 0; i < n; i++)
      rel[i] = df.in[i] === 'b' ? 1 : df.in[i] === 'a' ? -1 :
        df.incl_a[i] > 0 ? (df.incl_b[i] - df.incl_a[i]) / df.incl_a[i] : df.incl_b[i] > 0 ? 1 : 0;
    // children after parents (report/diff.c): one backward pass makes
    // every parent at least as wide as its children together
    const kidsSum = new Float64Array(n);
    for (let i = n - 1; i >= 0; i--) {
      value[i] = Math.max(df.in[i] === 'a' ? df.incl_a[i] : df.incl_b[i], kidsSum[i]);
      if (i > 0) kidsSum[df.parent[i]] += value[i];
    }
    const kind = i => rel[i] > 0.01 ? 'grown' : rel[i] < -0.01 ? 'shrunk' : 'same';
    const color = (i, dim) => {
      const t = Math.min(1, Math.abs(rel[i])), k = kind(i);
      const light = dim ? 92 : 90 - 40 * t;
      return k === 'same' ? 'hsl(220,8%,' + (dim ? 92 : 80) + '%)' :
        'hsl(' + (k === 'grown' ? 0 : 215) + ',' + Math.round(45 + 40 * t) + '%,' + light + '%)';
    };
    const count = { grown: 0, shrunk: 0, same: 0 };
    for (let i = 1; i < n; i++) count[kind(i)]++;
    const side = k => df[k].join(', ');
    el.appendChild(S.h('p', { class: 'note' }, 'A: ' + side('a_runs') + ' \u2014 B: ' + side('b_runs') +
      '. Widths: inclusive time in B (in A for frames only A has); colour: change of inclusive time. ' +
      'Click a box to zoom, hover for both values.'));
    const legend = S.h('div', { class: 'diff-legend', id: 'diff-legend' },
      [-1, -0.5, -0.1, 0, 0.1, 0.5, 1].map(r => {
        rel[0] = r;
        return S.h('span', { class: 'diff-swatch', style: 'background:' + color(0, false) },
          r === 0 ? '0 %' : (r > 0 ? '+' : '\u2212') + Math.abs(r * 100) + (Math.abs(r) === 1 ? ' % or new' : ' %'));
      }), S.h('span', { class: 'note' }, ' shrank \u2190 \u2192 grew'));
    rel[0] = 0;
    el.appendChild(legend);
    const box = S.h('div', { id: 'diff-flame' });
    el.appendChild(box);
    const pct = i => df.in[i] === 'b' ? 'only in B' : df.in[i] === 'a' ? 'only in A' :
      df.incl_a[i] > 0 ? (rel[i] >= 0 ? '+' : '') + (100 * rel[i]).toFixed(1) + ' %' : '-';
    S.flame(box, { parent: df.parent.map(p => p === null ? -1 : p), name: df.name, value: Array.from(value) }, {
      unit: S.fmt.time,
      color,
      tip: i => [['inclusive A', S.fmt.time(df.incl_a[i])], ['inclusive B', S.fmt.time(df.incl_b[i])],
        ['change', (df.incl_b[i] >= df.incl_a[i] ? '+' : '') + S.fmt.time(df.incl_b[i] - df.incl_a[i]) + ' (' + pct(i) + ')'],
        ['visits A', S.fmt.count(df.visits_a[i])], ['visits B', S.fmt.count(df.visits_b[i])]],
    });
    el.setAttribute('data-frames', n - 1);
    el.setAttribute('data-grown', count.grown);
    el.setAttribute('data-shrunk', count.shrunk);
    el.setAttribute('data-same', count.same);
    // every path with both values, largest change of inclusive time first
    const path = i => { const p = []; for (let j = i; j > 0; j = df.parent[j]) p.unshift(df.name[j]); return p.join(' > '); };
    const rows = [];
    for (let i = 1; i < n; i++)
      rows.push({ path: path(i), change: kind(i), a: df.incl_a[i], b: df.incl_b[i], delta: df.incl_b[i] - df.incl_a[i],
        rel: pct(i), va: df.visits_a[i], vb: df.visits_b[i], dv: df.visits_b[i] - df.visits_a[i] });
    const t = S.table([
      { key: 'path', label: 'call path', name: true }, { key: 'change', label: 'change', cls: r => 'diff-' + r.change },
      { key: 'a', label: 'incl A', num: true, fmt: S.fmt.time }, { key: 'b', label: 'incl B', num: true, fmt: S.fmt.time },
      { key: 'delta', label: '\u0394 incl', num: true, fmt: S.fmt.time, sortValue: r => Math.abs(r.delta) },
      { key: 'rel', label: '\u0394 %' }, { key: 'va', label: 'visits A', num: true, fmt: S.fmt.count },
      { key: 'vb', label: 'visits B', num: true, fmt: S.fmt.count }, { key: 'dv', label: '\u0394 visits', num: true, fmt: S.fmt.count },
    ], rows, { sort: 'delta' });
    t.id = 'diff-paths';
    el.appendChild(t);
  },
});
