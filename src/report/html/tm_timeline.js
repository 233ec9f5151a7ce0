// TMbox state timeline (runs recorded with --tm-monitor events): per
// thread, the state of its transactions over time in Paraver's colours
// (the same as `strobe export --format paraver`). Drawn by strobe.lanes
// (timeline.js), one row per thread.
strobe.view({
  id: 'tm-timeline', title: 'TM states', order: 42,
  show: d => !!d.tm_timeline && d.tm_timeline.intervals > 0,
  render(el, d) {
    const S = strobe, tl = d.tm_timeline;
    const colors = ['rgb(0,0,160)', 'rgb(120,190,255)', 'rgb(255,160,0)', 'rgb(0,140,0)', 'rgb(220,0,0)'];
    const help = ['transaction attempts that committed, up to the commit request',
      'attempts that aborted or were cancelled', 'waiting for the commit locks',
      'committing with the locks held', 'rollback and back-off after an abort'];
    const name = k => tl.states[k] || '?';
    el.appendChild(S.h('div', { class: 'legend' }, tl.states.map((s, k) =>
      S.h('span', { style: '--c:' + colors[k], title: help[k] }, s))));
    for (const n of S.timelineNotes(d, tl, 'state intervals')) el.appendChild(n);
    const lanes = S.decodeTimeline(tl).filter(l => l.intervals > 0 || !l.traced);
    const chart = S.lanes({
      lanes, d, end: d.report.summary.duration_ns, cellNs: tl.cell_ns, rowHeight: 16,
      color: k => colors[k] || '#999', label: name,
      tipBar: (l, k, b, e) => [name(k), [['thread', S.threadName(d, l.thread)], ['start', S.fmt.time(b)],
        ['duration', S.fmt.time(e - b)], ['state', help[k] || '']]],
      tipCell: (l, k, n, busy, mixed, b, e) => [S.fmt.count(n) + ' interval' + (n > 1 ? 's' : '') + ' mostly ' + name(k) +
        (mixed ? ' (and other states)' : '') + ' shorter than ' + S.fmt.time(tl.cell_ns),
        [['thread', S.threadName(d, l.thread)], ['from', S.fmt.time(b)], ['to', S.fmt.time(e)], ['in a state', S.fmt.pct(busy)]]],
    });
    el.appendChild(chart.el);
    el.appendChild(S.laneList(d, lanes, 'state intervals'));
    chart.draw();
    S.on('thread', () => chart.showThread(S.state.thread));
  },
});
