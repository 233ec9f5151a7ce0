// TMbox state timeline (runs recorded with --tm-monitor events): per
// thread, the state of its transactions over time in Paraver's colours
// (the same as `strobe export --format paraver`). Drawn by
// strobe.timelineView (timeline.js), one row per thread.
strobe.view({
  id: 'tm-timeline', title: 'TM states', order: 42,
  show: d => !!d.tm_timeline && d.tm_timeline.intervals > 0,
  render(el, d) {
    const S = strobe, tl = d.tm_timeline;
    // the data's states are in strobe.tmStates' order (the report's)
    const colors = S.tmStates.map(x => x.color), help = S.tmStates.map(x => x.help);
    const name = k => tl.states[k] || '?';
    el.appendChild(S.h('div', { class: 'legend' }, tl.states.map((s, k) =>
      S.h('span', { style: '--c:' + colors[k], title: help[k] }, s))));
    S.timelineView(el, d, tl, {
      what: 'state intervals', per: 'thread', keep: l => l.intervals > 0 || !l.traced, rowHeight: 16,
      name, color: k => colors[k] || '#999', extra: k => ['state', help[k] || ''],
      cellTitle: (n, k, mixed) => S.fmt.count(n) + ' interval' + (n > 1 ? 's' : '') + ' mostly ' + name(k) +
        (mixed ? ' (and other states)' : ''),
      busyLabel: 'in a state',
    });
  },
});
