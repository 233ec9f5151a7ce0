// The page's small library: the view registry, a DOM builder, number
// formats, a sortable table, a tooltip, a HiDPI canvas and a palette.
// Each view module (one file per analysis) calls strobe.view({...}) and
// only reads the data; main.js renders the views that have data.
const strobe = {
  views: [],
  state: { thread: -1 },   // -1: all threads; else the global thread index
  listeners: {},
};

// Registers a view: {id, title, order, show(data) -> bool, render(el, data)};
// title is a string or a function of the data.
// render may call strobe.on('thread', fn) to follow the thread selector.
strobe.view = function (def) { strobe.views.push(def); };

strobe.on = function (name, fn) { (strobe.listeners[name] = strobe.listeners[name] || []).push(fn); };
strobe.emit = function (name) {
  for (const fn of strobe.listeners[name] || []) {
    try { fn(); } catch (e) { strobe.fail(null, e); }
  }
};

// A view that throws shows its error in place (and on the console, where
// the tests look), the other views still render.
strobe.fail = function (el, e) {
  console.error('strobe report: ' + (e && e.stack ? e.stack : e));
  if (el) el.appendChild(strobe.h('p', { class: 'problem' }, 'This view could not be drawn: ' + e));
};

// h('td', {class: 'num', title: 'x'}, child, ...): children are nodes or text.
strobe.h = function (tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const k in attrs || {}) {
    const v = attrs[k];
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.appendChild(typeof c === 'object' ? c : document.createTextNode(String(c)));
  }
  return el;
};

strobe.section = function (id, title) {
  return strobe.h('section', { class: 'view', id: 'view-' + id }, strobe.h('h2', null, title));
};

// ---- formats ----------------------------------------------------------
strobe.fmt = {
  // nanoseconds, 3 significant digits: "812 ns", "1.25 ms", "3.40 s"
  time(ns) {
    if (ns === null || ns === undefined) return '-';
    const a = Math.abs(ns);
    const u = a >= 1e9 ? [1e9, 's'] : a >= 1e6 ? [1e6, 'ms'] : a >= 1e3 ? [1e3, '\u00b5s'] : [1, 'ns'];
    if (u[0] === 1) return Math.round(ns) + ' ns';
    const v = ns / u[0];
    return (Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 10 ? v.toFixed(1) : v.toFixed(2)) + ' ' + u[1];
  },
  // exact integer with thousands separators
  count(n) { return n === null || n === undefined ? '-' : Number(n).toLocaleString('en-US'); },
  bytes(b) {
    if (b === null || b === undefined) return '-';
    const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let i = 0, v = b;
    while (Math.abs(v) >= 1024 && i < u.length - 1) { v /= 1024; i++; }
    return (i === 0 ? String(v) : v.toFixed(v >= 100 ? 0 : v >= 10 ? 1 : 2)) + ' ' + u[i];
  },
  pct(x) { return x === null || x === undefined || !isFinite(x) ? '-' : (100 * x).toFixed(x < 0.001 && x > 0 ? 3 : 1) + ' %'; },
};

// ---- data helpers ------------------------------------------------------
// Region label and source location of a region index.
strobe.regionName = function (d, r) { return r === null || r === undefined ? '(root)' : d.report.regions[r].name; };
strobe.regionSource = function (d, r) {
  const g = d.report.regions[r];
  return g && g.file ? g.file + (g.line ? ':' + g.line : '') : '';
};
// "t3 (pid 4242 tid 4245)": the label of a global thread index.
strobe.threadName = function (d, t) {
  const th = d.report.threads[t];
  if (!th) return 't' + t;
  const p = d.report.processes[th.process];
  const rank = p && p.rank !== null && p.rank !== undefined ? 'rank ' + p.rank + ' ' : '';
  return rank + 'pid ' + (p ? p.pid : '?') + ' t' + th.thread + ' (tid ' + th.tid + ')';
};

// ---- sortable table ----------------------------------------------------
// cols: [{key, label, num, fmt(v,row), title, cls(row)}]; rows: objects.
// opts: {sort: key, asc: false, limit: rows shown before a "show all"
// button}. Cells carry data-v with the exact value of numeric columns.
strobe.table = function (cols, rows, opts) {
  opts = opts || {};
  let sortKey = opts.sort || null, asc = !!opts.asc, limit = opts.limit || 200;
  const wrap = strobe.h('div', { class: 'tablewrap' });
  const draw = () => {
    wrap.textContent = '';
    const sorted = rows.slice();
    if (sortKey !== null) {
      const c = cols.find(c => c.key === sortKey);
      const val = c && c.sortValue ? c.sortValue : (r => r[sortKey]);
      sorted.sort((a, b) => {
        const x = val(a), y = val(b);
        const cmp = (x === null || x === undefined) - (y === null || y === undefined) ||
          (typeof x === 'string' ? x.localeCompare(y) : x - y);
        return asc ? cmp : -cmp;
      });
    }
    const head = strobe.h('tr', null, cols.map(c => strobe.h('th', {
      class: [c.num ? 'num' : '', 'sortable', c.key === sortKey ? 'sorted' : '', c.key === sortKey && asc ? 'asc' : ''].join(' '),
      title: c.title,
      onclick: () => { if (sortKey === c.key) asc = !asc; else { sortKey = c.key; asc = !c.num; } draw(); },
    }, c.label)));
    const shown = sorted.length > limit ? sorted.slice(0, limit) : sorted;
    const body = shown.map(r => strobe.h('tr', null, cols.map(c => {
      const v = r[c.key];
      return strobe.h('td', {
        class: (c.num ? 'num' : c.name ? 'name' : '') + (c.cls ? ' ' + c.cls(r) : ''),
        'data-v': c.num && typeof v === 'number' ? String(v) : null,
        title: c.name ? String(v) : null,
      }, c.fmt ? c.fmt(v, r) : v === null || v === undefined ? '-' : String(v));
    })));
    wrap.appendChild(strobe.h('div', { class: 'scroll' }, strobe.h('table', { class: 'data' },
      strobe.h('thead', null, head), strobe.h('tbody', null, body))));
    if (sorted.length > limit)
      wrap.appendChild(strobe.h('div', { class: 'note' }, (sorted.length - limit) + ' more rows ',
        strobe.h('button', { onclick: () => { limit = sorted.length; draw(); } }, 'show all')));
  };
  draw();
  return wrap;
};

// ---- tooltip -----------------------------------------------------------
strobe.tip = {
  el: null,
  // rows: [[label, value], ...] under a bold title
  show(ev, title, rows) {
    if (!this.el) { this.el = strobe.h('div', { id: 'tooltip' }); document.body.appendChild(this.el); }
    this.el.textContent = '';
    this.el.appendChild(strobe.h('b', null, title));
    if (rows && rows.length)
      this.el.appendChild(strobe.h('table', null, rows.map(r => strobe.h('tr', null, strobe.h('td', null, r[0]), strobe.h('td', null, r[1])))));
    this.el.style.display = 'block';
    const w = this.el.offsetWidth, hgt = this.el.offsetHeight;
    let x = ev.clientX + 14, y = ev.clientY + 14;
    if (x + w > window.innerWidth - 4) x = Math.max(4, ev.clientX - w - 14);
    if (y + hgt > window.innerHeight - 4) y = Math.max(4, ev.clientY - hgt - 14);
    this.el.style.left = x + 'px';
    this.el.style.top = y + 'px';
  },
  hide() { if (this.el) this.el.style.display = 'none'; },
};

// ---- canvas ------------------------------------------------------------
// A canvas as wide as its container, sharp on HiDPI screens; returns
// {canvas, ctx, width, height} with ctx scaled to CSS pixels.
strobe.canvas = function (canvas, height) {
  const ratio = window.devicePixelRatio || 1;
  const width = Math.max(200, canvas.parentNode ? canvas.parentNode.clientWidth : 800);
  canvas.style.height = height + 'px';
  canvas.width = Math.round(width * ratio);
  canvas.height = Math.round(height * ratio);
  const ctx = canvas.getContext('2d');
  ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  ctx.font = '11px ui-monospace, "DejaVu Sans Mono", monospace';
  ctx.textBaseline = 'middle';
  return { canvas, ctx, width, height };
};

// A stable warm colour per name (flame graph tradition), lighter when dim.
strobe.color = function (name, dim) {
  let h = 2166136261;
  for (let i = 0; i < name.length; i++) { h ^= name.charCodeAt(i); h = Math.imul(h, 16777619); }
  h >>>= 0;
  const hue = 8 + (h % 42), sat = 70 + ((h >> 8) % 20), lig = 55 + ((h >> 16) % 12);
  return 'hsl(' + hue + ',' + sat + '%,' + (dim ? 88 : lig) + '%)';
};

// Draws text clipped to w pixels (nothing when too narrow).
strobe.fitText = function (ctx, text, x, y, w) {
  if (w < 24) return;
  const cw = 6.7;   // monospace 11px advance, close enough to avoid measureText per box
  const n = Math.floor((w - 6) / cw);
  if (n <= 0) return;
  ctx.fillText(text.length > n ? text.slice(0, Math.max(1, n - 1)) + '\u2026' : text, x + 3, y);
};

// ---- bars, legends, heatmaps (the analysis views) ---------------------
// TMbox states in Paraver's colours (the same as the .pcf of
// `strobe export --format paraver`), in the report's order.
strobe.tmStates = [
  { key: 'Compute', color: 'rgb(0,0,160)', help: 'transaction attempts that committed, up to the commit request' },
  { key: 'Compute_Wasted', color: 'rgb(120,190,255)', help: 'attempts that aborted or were cancelled' },
  { key: 'Try_Lock', color: 'rgb(255,160,0)', help: 'waiting for the commit locks' },
  { key: 'Commit_Locked', color: 'rgb(0,140,0)', help: 'committing with the locks held' },
  { key: 'Abort', color: 'rgb(220,0,0)', help: 'rollback and back-off after an abort' },
];

// A table cell's content: `text` over a bar as wide as value/max.
strobe.bar = function (value, max, text, color) {
  const w = max > 0 && value > 0 ? Math.max(1, Math.round(100 * value / max)) : 0;
  return strobe.h('span', { class: 'barcell' },
    strobe.h('span', { class: 'barfill', style: 'width:' + w + '%' + (color ? ';background:' + color : '') }),
    strobe.h('span', { class: 'bartext' }, text));
};

// items: [{label, color}]: the colour keys of a chart.
strobe.legend = function (items) {
  return strobe.h('div', { class: 'legend' }, items.map(i => strobe.h('span', { style: '--c:' + i.color }, i.label)));
};

// Horizontal stacked bars, one row per item, all on the scale of the
// longest row. rows: [{label, values: [..]}]; parts: [{label, color}] of
// values; fmt formats a value; id names the chart (data-chart). Each
// segment's tooltip gives every part of its row with its share.
strobe.stackedBars = function (rows, parts, fmt, id) {
  const S = strobe;
  const max = Math.max(0, ...rows.map(r => r.values.reduce((a, b) => a + b, 0)));
  const body = rows.map(r => {
    const total = r.values.reduce((a, b) => a + b, 0);
    const tip = ev => S.tip.show(ev, r.label, parts.map((p, k) => [p.label, fmt(r.values[k]) + ' (' + S.fmt.pct(total ? r.values[k] / total : null) + ')'])
      .concat([['total', fmt(total)]]));
    return S.h('div', { class: 'hbar', 'data-label': r.label },
      S.h('span', { class: 'hbar-label', title: r.label }, r.label),
      S.h('span', { class: 'hbar-track', onmousemove: tip, onmouseleave: () => S.tip.hide() },
        r.values.map((v, k) => v > 0 && max > 0 ? S.h('span', {
          class: 'hbar-seg', 'data-part': parts[k].label, 'data-v': String(v),
          style: 'width:' + (100 * v / max) + '%;background:' + parts[k].color,
        }) : null)),
      S.h('span', { class: 'hbar-total', 'data-v': String(total) }, fmt(total)));
  });
  return S.h('div', { class: 'hbars', 'data-chart': id }, S.legend(parts), body);
};

// A matrix of cells shaded by value (white at 0, opts.rgb at the largest):
// a table, or for more than 4096 cells (a job of many ranks) a canvas of
// small squares. rowLabels/colLabels: strings; values[r][c]: numbers;
// opts: {id, corner (the top-left label), fmt, rgb ('r,g,b'),
// tip(r, c, v) -> [title, rows]}.
strobe.heatmap = function (rowLabels, colLabels, values, opts) {
  const S = strobe, fmt = opts.fmt || S.fmt.count, rgb = opts.rgb || '200,40,40';
  const max = Math.max(0, ...values.map(row => Math.max(0, ...row)));
  const alpha = v => v > 0 && max > 0 ? 0.12 + 0.88 * v / max : 0;
  const tip = (ev, r, c) => {
    const t = opts.tip ? opts.tip(r, c, values[r][c]) : [fmt(values[r][c]), [[rowLabels[r], colLabels[c]]]];
    S.tip.show(ev, t[0], t[1]);
  };
  if (rowLabels.length * colLabels.length > 4096)
    return S.heatmapCanvas(rowLabels, colLabels, values, opts.id, rgb, alpha, tip);
  const head = S.h('tr', null, S.h('th', null, opts.corner || ''), colLabels.map(c => S.h('th', { class: 'num' }, c)));
  const body = rowLabels.map((rl, r) => S.h('tr', null, S.h('th', { class: 'rowhead' }, rl), colLabels.map((cl, c) => {
    const v = values[r][c], a = alpha(v);
    return S.h('td', {
      class: 'num heat', 'data-v': String(v),
      style: a ? 'background:rgba(' + rgb + ',' + a.toFixed(3) + ');color:' + (a > 0.55 ? '#fff' : 'inherit') : 'background:#fff',
      onmousemove: ev => tip(ev, r, c), onmouseleave: () => S.tip.hide(),
    }, fmt(v));
  })));
  return S.h('div', { class: 'scroll heatmap', 'data-chart': opts.id },
    S.h('table', { class: 'data' }, S.h('thead', null, head), S.h('tbody', null, body)));
};

// The canvas form of strobe.heatmap: squares of 2 to 14 px, every k-th
// row label at the left and column index on top, the tooltip per cell.
strobe.heatmapCanvas = function (rowLabels, colLabels, values, id, rgb, alpha, tip) {
  const S = strobe, rows = rowLabels.length, cols = colLabels.length;
  const cell = Math.max(2, Math.min(14, Math.floor(1100 / cols)));
  const left = 96, top = 18, w = left + cols * cell, hgt = top + rows * cell, step = Math.ceil(14 / cell);
  const ratio = window.devicePixelRatio || 1;
  const canvas = S.h('canvas', { style: 'width:' + w + 'px;height:' + hgt + 'px' });
  canvas.width = Math.round(w * ratio);
  canvas.height = Math.round(hgt * ratio);
  const ctx = canvas.getContext('2d');
  ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  ctx.fillStyle = '#fff';
  ctx.fillRect(0, 0, w, hgt);
  for (let r = 0; r < rows; r++)
    for (let c = 0; c < cols; c++) {
      const a = alpha(values[r][c]);
      if (!a) continue;
      ctx.fillStyle = 'rgba(' + rgb + ',' + a.toFixed(3) + ')';
      ctx.fillRect(left + c * cell, top + r * cell, cell, cell);
    }
  ctx.fillStyle = '#5f6b7a';
  ctx.font = '10px ui-monospace, "DejaVu Sans Mono", monospace';
  ctx.textBaseline = 'middle';
  for (let r = 0; r < rows; r += step) S.fitText(ctx, rowLabels[r], 0, top + r * cell + cell / 2, left);
  for (let c = 0; c < cols; c += step * 3) ctx.fillText(String(c), left + c * cell, top / 2);
  canvas.addEventListener('mousemove', ev => {
    const r = Math.floor((ev.offsetY - top) / cell), c = Math.floor((ev.offsetX - left) / cell);
    if (r >= 0 && r < rows && c >= 0 && c < cols) tip(ev, r, c);
    else S.tip.hide();
  });
  canvas.addEventListener('mouseleave', () => S.tip.hide());
  return S.h('div', { class: 'scroll heatmap', 'data-chart': id, 'data-rows': String(rows), 'data-cols': String(cols) }, canvas);
};

// The call path of call-tree node i (an id of calltree_columns) as
// region indices, outermost first.
strobe.nodePath = function (d, i) {
  const ct = d.report.calltree_columns, p = [];
  for (; i > 0; i = ct.parent[i]) p.push(ct.region[i]);
  return p.reverse();
};

// A call path (region indices, null: not in the call tree) as "a > b".
strobe.pathName = function (d, path) {
  if (path === null || path === undefined) return '(not in the call tree)';
  return path.length ? path.map(r => strobe.regionName(d, r)).join(' > ') : '(outside every region)';
};

// strobe.table with a name (data-table), by which tests and links find it.
strobe.tableOf = function (id, cols, rows, opts) {
  const t = strobe.table(cols, rows, opts);
  t.setAttribute('data-table', id);
  return t;
};

// "t3" (the thread's index in its process), "4242/t3" when the experiment
// has several processes: the short label of tables and charts.
strobe.threadShort = function (d, t) {
  const r = d.report, th = r.threads[t];
  return (r.processes.length > 1 ? r.processes[th.process].pid + '/' : '') + 't' + th.thread;
};

// A named table of per-thread rows (row.thread_index: the global thread
// index) that follows the page's thread selector: all rows, or only the
// selected thread's.
strobe.threadTable = function (id, cols, rows, opts) {
  const S = strobe, box = S.h('div', null);
  const draw = () => {
    const t = S.state.thread;
    box.textContent = '';
    box.appendChild(S.tableOf(id, cols, t < 0 ? rows : rows.filter(r => r.thread_index === t), opts));
  };
  draw();
  S.on('thread', draw);
  return box;
};
