// Summary view: what ran, how long, on how many threads and processes,
// how much was recorded, the overhead estimate and every warning about
// missing or dropped data (the report's own problems first); and the
// threads view, the table of every thread.
strobe.view({
  id: 'summary', title: 'Summary', order: 10,
  show: () => true,
  render(el, d) {
    const S = strobe, r = d.report, s = r.summary, m = r.meta || {};
    for (const p of d.problems || [])
      el.appendChild(S.h('p', { class: 'problem' }, 'Could not be read: ' + p));
    if (s.dropped > 0)
      el.appendChild(S.h('p', { class: 'warning' }, S.fmt.count(s.dropped) +
        ' events were dropped (trace size limit): the timeline is incomplete; profiles still count every visit.'));
    if (s.profile_incomplete)
      el.appendChild(S.h('p', { class: 'warning' }, 'Some threads were killed: the time of the frames they had open is missing.'));
    if (s.open_at_end > 0)
      el.appendChild(S.h('p', { class: 'warning' }, S.fmt.count(s.open_at_end) +
        ' visits were still open when measurement ended; their time runs to that end.'));
    const facts = [
      ['command', m.command], ['started', m.start_time], ['exit status', m.exit_status],
      ['duration', S.fmt.time(s.duration_ns)],
      ['processes', S.fmt.count(s.processes)], ['threads', S.fmt.count(s.threads)],
      ['events', S.fmt.count(s.events) + ' (' + S.fmt.bytes(s.trace_bytes) + ' of trace)'],
      ['thread time', S.fmt.time(s.thread_time_ns)],
      ['overhead estimate', s.overhead_ns === null ? 'unknown (no process measured its cost per event)' :
        S.fmt.time(s.overhead_ns) + ' (likely ' + S.fmt.time(s.overhead_low_ns) + ' to ' + S.fmt.time(s.overhead_high_ns) +
        ', ' + S.fmt.pct(s.thread_time_ns ? s.overhead_ns / s.thread_time_ns : null) + ' of the thread time)'],
      ['profile from', s.profile_source],
      ['experiment', r.dir],
    ];
    el.appendChild(S.h('dl', { class: 'facts' }, facts.filter(f => f[1] !== undefined && f[1] !== null && f[1] !== '')
      .map(f => [S.h('dt', null, f[0]), S.h('dd', null, String(f[1]))])));
  },
});

// Threads view: one row per thread of every process, sortable.
strobe.view({
  id: 'threads', title: 'Threads', order: 28,
  show: () => true,
  render(el, d) {
    const S = strobe, r = d.report;
    const rows = r.threads.map((t, i) => {
      const p = r.processes[t.process];
      return {
        index: i, pid: p.pid, rank: p.rank, thread: 't' + t.thread, tid: t.tid,
        begin: t.begin_ns, span: t.end_ns - t.begin_ns, events: t.events, dropped: t.dropped, visits: t.visits,
        ended: t.summarized ? (t.at_exit ? 'at process exit' : 'ended') : 'killed / exec / _exit',
      };
    });
    const ranked = r.processes.some(p => p.rank !== null && p.rank !== undefined);
    const cols = [
      { key: 'index', label: '#', num: true },
      ranked ? { key: 'rank', label: 'rank', num: true } : null,
      { key: 'pid', label: 'pid', num: true }, { key: 'thread', label: 'thread' }, { key: 'tid', label: 'tid', num: true },
      { key: 'begin', label: 'start', num: true, fmt: S.fmt.time }, { key: 'span', label: 'span', num: true, fmt: S.fmt.time },
      { key: 'visits', label: 'visits', num: true, fmt: S.fmt.count }, { key: 'events', label: 'events', num: true, fmt: S.fmt.count },
      { key: 'dropped', label: 'dropped', num: true, fmt: S.fmt.count }, { key: 'ended', label: 'end' },
    ].filter(Boolean);
    el.appendChild(S.table(cols, rows, { sort: 'index', asc: true, limit: 64 }));
  },
});
