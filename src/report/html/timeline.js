// Timeline view: one lane per thread (grouped by process or rank), the
// frames as nested bars, zoom and pan. The data is pre-aggregated by
// strobe (docs/report-html.md, "Timeline"): intervals at least cell_ns
// long are bars, shorter ones are summed per lane, row and cell of width
// cell_ns. strobe.lanes is the drawing component, shared with the TM
// state timeline (tm_timeline.js).

// Decodes a timeline member (delta-encoded flat arrays) into lanes with,
// per row, sorted arrays of bars {b: begins, e: ends, k: keys} and cells
// {b, e, k, n: count, busy: 0..1, mixed}. Within a row neither overlaps
// another, so begins and ends are both sorted (binary search by time).
strobe.decodeTimeline = function (tl) {
  const T = tl.cell_ns;
  return tl.lanes.map(l => {
    const rows = [];
    for (let r = 0; r < l.rows; r++) rows.push({ bars: { b: [], e: [], k: [] }, cells: { b: [], e: [], k: [], n: [], busy: [], mixed: [] } });
    let t = 0;
    for (let i = 0; i + 3 < l.bars.length; i += 4) {
      t += l.bars[i];
      const row = rows[l.bars[i + 2]];
      row.bars.b.push(t); row.bars.e.push(t + l.bars[i + 1]); row.bars.k.push(l.bars[i + 3]);
    }
    let c = 0;
    for (let i = 0; i + 5 < l.cells.length; i += 6) {
      c += l.cells[i];
      const cs = rows[l.cells[i + 1]].cells;
      cs.b.push(c * T); cs.e.push((c + 1) * T); cs.k.push(l.cells[i + 2]);
      cs.n.push(l.cells[i + 3]); cs.busy.push(l.cells[i + 4] / 1000); cs.mixed.push(l.cells[i + 5]);
    }
    return { thread: l.thread, traced: l.traced, intervals: l.intervals, rows };
  });
};

// The first index whose end is after t (ends sorted), or e.length.
strobe.firstEndAfter = function (e, t) {
  let lo = 0, hi = e.length;
  while (lo < hi) { const m = (lo + hi) >> 1; if (e[m] <= t) lo = m + 1; else hi = m; }
  return lo;
};

// A zoomable, pannable lane chart. opts: {lanes (decodeTimeline), d (the
// data), end (ns), color(key) -> css, label(key) (drawn in wide bars),
// tipBar(lane, key, begin, end) -> [title, rows], tipCell(lane, key,
// count, busy, mixed, begin, end) -> [title, rows], rowHeight, maxRows}.
// Returns {el, draw(), showThread(t)}; draw once el is in the page.
strobe.lanes = function (opts) {
  const S = strobe, d = opts.d, rowH = opts.rowHeight || 14, gutter = 190, axisH = 22, laneGap = 6, groupH = 18;
  const maxRows = opts.maxRows || 32;
  const end = Math.max(1, opts.end);
  let t0 = 0, t1 = end, only = -1;
  const canvas = S.h('canvas', { class: 'chart timeline' });
  const zoom = f => {
    const mid = (t0 + t1) / 2, half = Math.max(20, (t1 - t0) * f / 2);
    setView(mid - half, mid + half);
  };
  const toolbar = S.h('div', { class: 'toolbar' },
    S.h('button', { onclick: () => zoom(0.5), title: 'zoom in (or the mouse wheel)' }, '+'),
    S.h('button', { onclick: () => zoom(2), title: 'zoom out' }, '\u2212'),
    S.h('button', { onclick: () => setView(0, end) }, 'reset zoom'),
    S.h('span', { class: 'note range' }));
  const rangeEl = toolbar.lastChild;
  const wrap = S.h('div', { class: 'lanes' }, toolbar, S.h('div', { class: 'lanescroll' }, canvas));

  // Layout: the list of drawn things top to bottom.
  // Canvases taller than about 32k pixels are not drawn at all by
  // browsers: lanes past maxHeight are left out (and counted).
  const maxHeight = 30000;
  let layout = [], height = 0, leftOut = 0;
  const doLayout = () => {
    layout = [];
    leftOut = 0;
    let y = axisH, lastGroup = null;
    const groups = new Set(opts.lanes.map(l => d.report.threads[l.thread] ? d.report.threads[l.thread].process : -1));
    for (const l of opts.lanes) {
      if (only >= 0 && l.thread !== only) continue;
      if (y > maxHeight) { leftOut++; continue; }
      const th = d.report.threads[l.thread], proc = th ? th.process : -1;
      if (groups.size > 1 && proc !== lastGroup) {
        const p = d.report.processes[proc];
        const label = p ? (p.rank !== null && p.rank !== undefined ? 'rank ' + p.rank + ' \u2014 ' : '') + 'pid ' + p.pid + (p.exe ? ' ' + p.exe.split('/').pop() : '') : 'process ?';
        layout.push({ group: label, y, h: groupH });
        y += groupH;
        lastGroup = proc;
      }
      const n = l.traced ? Math.max(1, Math.min(maxRows, l.rows.length)) : 1;
      layout.push({ lane: l, y, h: n * rowH, rows: n });
      y += n * rowH + laneGap;
    }
    height = Math.max(y, axisH + rowH);
  };

  const niceStep = span => {
    const raw = span / 8, p = Math.pow(10, Math.floor(Math.log10(raw)));
    for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
    return 10 * p;
  };

  // A tick's label: in the unit of the view's end, with as many decimals
  // as the step needs (deep in a long run: "1.5005 s", not "1.50 s").
  const axisLabel = (t, step) => {
    const u = t1 >= 1e9 ? [1e9, 's'] : t1 >= 1e6 ? [1e6, 'ms'] : t1 >= 1e3 ? [1e3, 'us'] : [1, 'ns'];
    const dec = Math.max(0, Math.ceil(-Math.log10(step / u[0]) - 1e-9));
    return (t / u[0]).toFixed(Math.min(dec, 9)) + ' ' + u[1];
  };

  let c = null;
  const draw = () => {
    if (!c || c.height !== height || c.width !== Math.max(200, canvas.parentNode.clientWidth)) c = S.canvas(canvas, height);
    const ctx = c.ctx, W = c.width - gutter, scale = W / (t1 - t0);
    ctx.clearRect(0, 0, c.width, c.height);
    // time axis
    ctx.fillStyle = '#5f6b7a';
    ctx.strokeStyle = '#e3e7ec';
    const step = niceStep(t1 - t0);
    for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step) {
      const x = gutter + (t - t0) * scale;
      ctx.beginPath(); ctx.moveTo(x + 0.5, axisH - 4); ctx.lineTo(x + 0.5, height); ctx.stroke();
      ctx.fillText(axisLabel(t, step), x + 3, axisH / 2);
    }
    for (const item of layout) {
      if (item.group !== undefined) {
        ctx.fillStyle = '#1d2330';
        ctx.font = 'bold 11px system-ui, "DejaVu Sans", sans-serif';
        ctx.fillText(item.group, 4, item.y + groupH / 2);
        ctx.font = '11px ui-monospace, "DejaVu Sans Mono", monospace';
        continue;
      }
      const l = item.lane;
      ctx.fillStyle = '#1d2330';
      S.fitText(ctx, 't' + d.report.threads[l.thread].thread + ' (tid ' + d.report.threads[l.thread].tid + ')', 0, item.y + rowH / 2, gutter - 6);
      if (!l.traced) {
        ctx.fillStyle = '#5f6b7a';
        ctx.fillText('no trace recorded for this thread', gutter + 4, item.y + rowH / 2);
        continue;
      }
      for (let r = 0; r < item.rows && r < l.rows.length; r++) {
        const y = item.y + r * rowH, row = l.rows[r];
        drawRow(ctx, row.cells, y, scale, true);
        drawRow(ctx, row.bars, y, scale, false);
      }
    }
    ctx.globalAlpha = 1;
    rangeEl.textContent = (t0 > 0 ? axisLabel(t0, step) : '0 ns') + ' \u2013 ' + axisLabel(t1, step) + ' (' + S.fmt.time(t1 - t0) + ' shown)' +
      (leftOut ? '; ' + leftOut + ' more threads not drawn: select one with the thread selector' : '');
  };

  // Draws one row's bars or cells in view; several in one pixel column
  // are drawn once (the first), so the cost is bounded by what is visible.
  const drawRow = (ctx, s, y, scale, cells) => {
    const W = c.width;
    let lastCol = -1;
    for (let i = S.firstEndAfter(s.e, t0); i < s.b.length && s.b[i] < t1; i++) {
      const x = Math.max(gutter, gutter + (s.b[i] - t0) * scale);
      const x2 = Math.min(W, gutter + (s.e[i] - t0) * scale);
      const w = x2 - x;
      const col = Math.floor(x);
      if (w < 1 && col === lastCol) continue;
      lastCol = Math.floor(x + Math.max(w, 1)) - (w < 1 ? 1 : 0);
      ctx.fillStyle = opts.color(s.k[i]);
      ctx.globalAlpha = cells ? 0.35 + 0.5 * Math.min(1, s.busy[i]) : 1;
      ctx.fillRect(x, y + 1, Math.max(w, 1), rowH - 2);
      if (!cells && w > 30 && opts.label) {
        ctx.fillStyle = '#1d2330';
        S.fitText(ctx, opts.label(s.k[i]), x, y + rowH / 2, w);
      }
    }
    ctx.globalAlpha = 1;
  };

  const setView = (a, b) => {
    const span = Math.min(end, Math.max(20, b - a));
    a = Math.max(0, Math.min(a, end - span));
    t0 = a; t1 = a + span;
    draw();
  };

  // What is under the mouse: {lane, kind, i, s} or null.
  const hit = ev => {
    const rect = canvas.getBoundingClientRect(), x = ev.clientX - rect.left, y = ev.clientY - rect.top;
    if (x < gutter) return null;
    const t = t0 + (x - gutter) * (t1 - t0) / (c.width - gutter), slack = 2 * (t1 - t0) / (c.width - gutter);
    const item = layout.find(it => it.lane && y >= it.y && y < it.y + it.h);
    if (!item || !item.lane.traced) return null;
    const row = item.lane.rows[Math.floor((y - item.y) / rowH)];
    if (!row) return null;
    for (const [kind, s] of [['bar', row.bars], ['cell', row.cells]]) {
      const i = S.firstEndAfter(s.e, t - slack);
      if (i < s.b.length && s.b[i] <= t + slack) return { lane: item.lane, kind, s, i };
    }
    return null;
  };

  let drag = null;
  canvas.addEventListener('mousedown', ev => { drag = { x: ev.clientX, t0, t1 }; ev.preventDefault(); });
  window.addEventListener('mouseup', () => { drag = null; });
  canvas.addEventListener('mousemove', ev => {
    if (drag) {
      const dt = (ev.clientX - drag.x) * (drag.t1 - drag.t0) / (c.width - gutter);
      setView(drag.t0 - dt, drag.t1 - dt);
      S.tip.hide();
      return;
    }
    const h = hit(ev);
    if (!h) { S.tip.hide(); return; }
    const s = h.s, i = h.i;
    const tip = h.kind === 'bar' ? opts.tipBar(h.lane, s.k[i], s.b[i], s.e[i])
      : opts.tipCell(h.lane, s.k[i], s.n[i], s.busy[i], s.mixed[i], s.b[i], s.e[i]);
    S.tip.show(ev, tip[0], tip[1]);
  });
  canvas.addEventListener('mouseleave', () => S.tip.hide());
  canvas.addEventListener('wheel', ev => {
    ev.preventDefault();
    const rect = canvas.getBoundingClientRect();
    const f = Math.max(0, Math.min(1, (ev.clientX - rect.left - gutter) / (c.width - gutter)));
    const at = t0 + f * (t1 - t0), k = ev.deltaY > 0 ? 1.25 : 0.8;
    setView(at - f * (t1 - t0) * k, at + (1 - f) * (t1 - t0) * k);
  }, { passive: false });
  window.addEventListener('resize', () => { c = null; draw(); });

  doLayout();
  // drawn once the element is in the page (the canvas takes its width)
  return {
    el: wrap,
    draw() { draw(); },
    showThread(t) { only = t; doLayout(); c = null; draw(); },
  };
};

// The lanes' list for the tests and screen readers: one entry per thread,
// with its interval count and whether it was traced.
strobe.laneList = function (d, lanes, what) {
  return strobe.h('ul', { class: 'lanelist', hidden: true }, lanes.map(l => strobe.h('li', {
    'data-thread': l.thread, 'data-traced': l.traced ? '1' : '0', 'data-intervals': l.intervals,
  }, strobe.threadName(d, l.thread) + ': ' + (l.traced ? strobe.fmt.count(l.intervals) + ' ' + what : 'no trace'))));
};

// Notes shared by both timelines: how the data was reduced, threads
// without a trace, dropped events, damaged streams. per: what a cell sums
// over ("thread and depth").
strobe.timelineNotes = function (d, tl, what, per) {
  const S = strobe, notes = [];
  if (tl.cell_ns > 0)
    notes.push(S.h('p', { class: 'note' }, S.fmt.count(tl.bars) + ' of ' + S.fmt.count(tl.intervals) + ' ' + what +
      ' are drawn exactly; those shorter than ' + S.fmt.time(tl.cell_ns) +
      ' are summarised per ' + per + ' in cells of that width (shaded by how busy they were).'));
  else
    notes.push(S.h('p', { class: 'note' }, 'All ' + S.fmt.count(tl.intervals) + ' ' + what + ' are drawn exactly.'));
  const untraced = tl.lanes.filter(l => !l.traced).map(l => S.threadName(d, l.thread));
  if (untraced.length)
    notes.push(S.h('p', { class: 'warning' }, untraced.length + ' thread' + (untraced.length > 1 ? 's have' : ' has') +
      ' no trace (recorded with --no-trace, or killed before writing one): ' + untraced.join(', ')));
  const dropped = tl.lanes.filter(l => d.report.threads[l.thread] && d.report.threads[l.thread].dropped > 0);
  if (dropped.length)
    notes.push(S.h('p', { class: 'warning' }, dropped.map(l => S.threadName(d, l.thread) + ': ' +
      S.fmt.count(d.report.threads[l.thread].dropped) + ' events dropped').join('; ') +
      ' (trace size limit): the timeline misses what came after the limit.'));
  const damaged = tl.lanes.filter(l => l.damaged).map(l => S.threadName(d, l.thread));
  if (damaged.length)
    notes.push(S.h('p', { class: 'warning' }, 'The event stream of ' + damaged.join(', ') +
      ' is damaged (' + tl.damage + '): the lane shows what ended before the damage.'));
  return notes;
};

// A timeline view's body: the notes, the lanes chart with its tooltips,
// the hidden lane list, and the thread selector followed. o: {what
// ("frames"), per (what a cell sums over), keep(lane) (the lanes shown),
// rowHeight, name(key), color(key), extra(key) -> [label, value] (the
// bar tooltip's last row), cellTitle(count, key, mixed), busyLabel}.
strobe.timelineView = function (el, d, tl, o) {
  const S = strobe;
  for (const n of S.timelineNotes(d, tl, o.what, o.per)) el.appendChild(n);
  const lanes = S.decodeTimeline(tl).filter(o.keep || (() => true));
  const chart = S.lanes({
    lanes, d, end: d.report.summary.duration_ns, rowHeight: o.rowHeight, color: o.color, label: o.name,
    tipBar: (l, k, b, e) => [o.name(k), [['thread', S.threadName(d, l.thread)], ['start', S.fmt.time(b)],
      ['duration', S.fmt.time(e - b)], o.extra(k)]],
    tipCell: (l, k, n, busy, mixed, b, e) => [o.cellTitle(n, k, mixed) + ' shorter than ' + S.fmt.time(tl.cell_ns),
      [['thread', S.threadName(d, l.thread)], ['from', S.fmt.time(b)], ['to', S.fmt.time(e)], [o.busyLabel, S.fmt.pct(busy)]]],
  });
  el.appendChild(chart.el);
  el.appendChild(S.laneList(d, lanes, o.what));
  chart.draw();
  S.on('thread', () => chart.showThread(S.state.thread));
};

strobe.view({
  id: 'timeline', title: 'Timeline', order: 30,
  // an uninstrumented program (sampled, say) has no frame to draw
  show: d => !!d.timeline && d.timeline.intervals > 0,
  render(el, d) {
    const S = strobe, regions = d.report.regions;
    const name = k => regions[k] ? regions[k].name : '?';
    const colors = regions.map(r => S.color(r.name));
    el.appendChild(S.h('p', { class: 'note' }, 'One lane per thread, frames nested by depth. Wheel or buttons to zoom, drag to pan.'));
    S.timelineView(el, d, d.timeline, {
      what: 'frames', per: 'thread and depth', name, color: k => colors[k] || '#999',
      extra: k => ['source', S.regionSource(d, k) || '-'],
      cellTitle: (n, k, mixed) => S.fmt.count(n) + ' frame' + (n > 1 ? 's' : '') + ' of ' + name(k) + (mixed ? ' (and others)' : ''),
      busyLabel: 'busy',
    });
  },
});
