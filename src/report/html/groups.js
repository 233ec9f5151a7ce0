// Ranks (or processes) view, for experiments with several: one row per
// MPI rank (or process) with its threads, visits, inclusive time and
// events, and the call paths whose inclusive time differs most between
// them (max - avg over the groups: the time the others wait for the
// slowest), from the report's `by` section.
strobe.view({
  id: 'groups', title: d => d.report.by.key === 'rank' ? 'Ranks' : 'Processes', order: 25,
  show: d => !!d.report.by && d.report.by.groups.length > 1,
  render(el, d) {
    const S = strobe, r = d.report, by = r.by, rank = by.key === 'rank';
    el.appendChild(S.h('p', { class: 'note' }, rank
      ? 'All processes of each MPI rank together' + (by.left_out ? ' (' + by.left_out + ' processes without a rank left out)' : '') + '.'
      : 'One row per process image.'));
    const groups = by.groups.map((g, i) => ({
      group: rank ? g.rank : r.processes[g.processes[0]].pid, processes: g.processes.length, threads: g.threads,
      visits: g.visits, incl: g.incl_ns, events: g.events, index: i,
    }));
    el.appendChild(S.table([
      { key: 'group', label: rank ? 'rank' : 'pid', num: true }, { key: 'processes', label: 'processes', num: true },
      { key: 'threads', label: 'threads', num: true }, { key: 'visits', label: 'visits', num: true, fmt: S.fmt.count },
      { key: 'incl', label: 'inclusive', num: true, fmt: S.fmt.time }, { key: 'events', label: 'events', num: true, fmt: S.fmt.count },
    ], groups, { sort: 'group', asc: true }));
    // call paths by imbalance of inclusive time
    const path = i => S.pathName(d, S.nodePath(d, i));
    const rows = by.calltree.map(c => ({
      path: path(c.id), min: c.incl_ns.min, avg: c.incl_ns.avg, max: c.incl_ns.max, imbalance: c.incl_ns.max - c.incl_ns.avg,
      ratio: c.incl_ns.avg ? c.incl_ns.max / c.incl_ns.avg : null, vmin: c.visits.min, vmax: c.visits.max,
    })).filter(x => x.max > 0);
    el.appendChild(S.h('h3', null, 'Call paths by imbalance'));
    el.appendChild(S.h('p', { class: 'note' }, 'Inclusive time over the ' + (rank ? 'ranks' : 'processes') +
      ': max \u2212 avg is what the others wait for the slowest.'));
    const t = S.table([
      { key: 'path', label: 'call path', name: true }, { key: 'imbalance', label: 'max \u2212 avg', num: true, fmt: S.fmt.time },
      { key: 'ratio', label: 'max / avg', num: true, fmt: v => v === null ? '-' : v.toFixed(2) },
      { key: 'min', label: 'min', num: true, fmt: S.fmt.time }, { key: 'avg', label: 'avg', num: true, fmt: S.fmt.time },
      { key: 'max', label: 'max', num: true, fmt: S.fmt.time },
      { key: 'vmin', label: 'visits min', num: true, fmt: S.fmt.count }, { key: 'vmax', label: 'visits max', num: true, fmt: S.fmt.count },
    ], rows, { sort: 'imbalance', limit: 100 });
    t.id = 'group-paths';
    el.appendChild(t);
  },
});
