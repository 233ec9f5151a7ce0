// Task graph view (report section `taskgraph`, experiments of `strobe run
// --taskgraph`; docs/taskgraph.md): per process the work, span and
// parallelism, parallelism over time, the critical path by region and its
// tasks; lock contention per object and acquiring call path with how
// often on the critical path; with memory traces (strobe cc
// --trace=bb,mem) the sharing between threads and the false-sharing
// candidates; barrier episodes by the wait their last arriver caused.
strobe.view({
  id: 'taskgraph', title: 'Task graph', order: 62,
  show: d => !!(d.report.taskgraph && d.report.taskgraph.processes.length),
  render(el, d) {
    const S = strobe, G = d.report.taskgraph, F = S.fmt, r = d.report;
    const multi = r.processes.length > 1;
    const object = o => (multi ? r.processes[o.process].pid + ':' : '') + (o.name !== null ? o.name : '0x' + o.address.toString(16));
    const region = x => x === null ? '(outside measured regions)' : S.regionName(d, x);
    const svgNS = 'http://www.w3.org/2000/svg';

    for (const p of G.processes) {
      el.appendChild(S.h('h3', null, (multi ? 'Process ' + r.processes[p.process].pid + ': ' : '') +
        F.count(p.tasks) + ' tasks, parallelism ' + (p.parallelism === null ? '-' : p.parallelism.toFixed(2))));
      const edges = Object.keys(p.edges).map(k => k + ' ' + F.count(p.edges[k])).join(', ');
      el.appendChild(S.h('p', { class: 'note' }, 'work ' + F.time(p.work_ns) + ', span (critical path) ' + F.time(p.span_ns) +
        '; edges: ' + edges + (p.ticketed ? '' : '. Merged by time (recorded without --taskgraph): approximate.')));

      // parallelism over time: one bar per bin, busy threads on average
      const T = p.parallelism_over_time, n = T.busy_ns.length;
      if (n) {
        const par = T.busy_ns.map((b, i) => b / ((i === n - 1 ? T.last_bin_ns : T.bin_ns) || 1));
        const top = Math.max(1, ...par), W = 600, H = 80;
        const svg = document.createElementNS(svgNS, 'svg');
        svg.setAttribute('viewBox', '0 0 ' + W + ' ' + H);
        svg.setAttribute('class', 'taskgraph-parallelism');
        svg.setAttribute('width', W);
        svg.setAttribute('height', H);
        par.forEach((v, i) => {
          const bar = document.createElementNS(svgNS, 'rect');
          const h = H * v / top;
          bar.setAttribute('x', i * W / n);
          bar.setAttribute('y', H - h);
          bar.setAttribute('width', Math.max(1, W / n - 1));
          bar.setAttribute('height', h);
          bar.setAttribute('fill', 'steelblue');
          const t = document.createElementNS(svgNS, 'title');
          t.textContent = F.time(T.begin_ns + i * T.bin_ns) + ': ' + v.toFixed(2) + ' busy threads';
          bar.appendChild(t);
          svg.appendChild(bar);
        });
        el.appendChild(S.h('div', { class: 'note' }, 'Parallelism over time (busy threads per ' + F.time(T.bin_ns) + ', at most ' + top.toFixed(2) + ')'));
        el.appendChild(svg);
      }

      if (p.critical_regions.length) {
        el.appendChild(S.h('h3', null, 'Critical path by region'));
        el.appendChild(S.tableOf('taskgraph-regions-' + p.process, [
          { key: 'region', label: 'region (at the task\'s start)', name: true },
          { key: 'ns', label: 'time', num: true, fmt: v => S.bar(v, p.span_ns, F.time(v)) },
          { key: 'share', label: 'share', num: true, fmt: F.pct },
          { key: 'tasks', label: 'tasks', num: true, fmt: F.count },
        ], p.critical_regions.map(x => ({ region: region(x.region), ns: x.ns, share: p.span_ns ? x.ns / p.span_ns : null, tasks: x.tasks })),
        { sort: 'ns' }));
        el.appendChild(S.h('h3', null, 'Critical path'));
        el.appendChild(S.tableOf('taskgraph-path-' + p.process, [
          { key: 'task', label: 'task', num: true },
          { key: 'thread', label: 'thread' },
          { key: 'start', label: 'start', num: true, fmt: F.time },
          { key: 'duration', label: 'duration', num: true, fmt: F.time },
          { key: 'via', label: 'via', title: 'the edge that leads to the task on the path' },
          { key: 'region', label: 'region', name: true },
        ], p.critical_path.map(s => ({
          task: s.task, thread: S.threadShort(d, s.thread), start: s.start_ns, duration: s.end_ns - s.start_ns,
          via: s.via, region: region(s.region),
        })), { sort: null, limit: 50 }));
      }
    }

    if (G.locks.length) {
      const max = Math.max(...G.locks.map(l => l.wait_ns));
      el.appendChild(S.h('h3', null, 'Lock contention'));
      el.appendChild(S.tableOf('taskgraph-locks', [
        { key: 'object', label: 'object', name: true }, { key: 'kind', label: 'kind' },
        { key: 'path', label: 'call path', name: true },
        { key: 'wait', label: 'wait', num: true, fmt: v => S.bar(v, max, F.time(v)) },
        { key: 'max_wait', label: 'max wait', num: true, fmt: F.time },
        { key: 'hold', label: 'hold', num: true, fmt: F.time },
        { key: 'acquisitions', label: 'acquired', num: true, fmt: F.count },
        { key: 'on_path', label: 'on critical path', num: true, fmt: F.count, title: 'tasks on the critical path that ran holding this lock' },
      ], G.locks.map(l => ({
        object: object(l), kind: l.kind, path: l.path.length ? S.pathName(d, l.path) : '(outside measured regions)',
        wait: l.wait_ns, max_wait: l.max_wait_ns, hold: l.hold_ns, acquisitions: l.acquisitions, on_path: l.on_critical_path,
      })), { sort: 'wait', limit: 50 }));
    }
    if (G.memory_accesses) {
      const max = Math.max(0, ...G.sharing.map(x => x.bytes));
      el.appendChild(S.h('h3', null, 'Sharing'));
      el.appendChild(S.h('p', { class: 'note' }, 'Bytes written by one thread and read later by another (by address).'));
      el.appendChild(S.tableOf('taskgraph-sharing', [
        { key: 'writer', label: 'writer' }, { key: 'reader', label: 'reader' },
        { key: 'bytes', label: 'bytes', num: true, fmt: v => S.bar(v, max, F.bytes(v)) },
      ], G.sharing.map(x => ({ writer: S.threadShort(d, x.writer), reader: S.threadShort(d, x.reader), bytes: x.bytes })),
      { sort: 'bytes', limit: 50 }));
      el.appendChild(S.h('h3', null, 'False-sharing candidates'));
      el.appendChild(S.tableOf('taskgraph-false-sharing', [
        { key: 'line', label: '64-byte line', name: true },
        { key: 'conflicts', label: 'conflicts', num: true, fmt: F.count, title: 'writes that met an overlapping write of the other thread' },
        { key: 'a', label: 'first thread: source', name: true }, { key: 'b', label: 'second thread: source', name: true },
      ], G.false_sharing.map(f => ({
        line: '0x' + f.line.toString(16), conflicts: f.conflicts,
        a: S.threadShort(d, f.writes[0].thread) + ': ' + f.writes[0].file.split('/').pop() + ':' + f.writes[0].source_line,
        b: S.threadShort(d, f.writes[1].thread) + ': ' + f.writes[1].file.split('/').pop() + ':' + f.writes[1].source_line,
      })), { sort: 'conflicts', limit: 50 }));
    }
    if (G.barrier_episodes.length) {
      const max = Math.max(...G.barrier_episodes.map(e => e.wait_ns));
      el.appendChild(S.h('h3', null, 'Barrier imbalance'));
      el.appendChild(S.tableOf('taskgraph-barriers', [
        { key: 'object', label: 'barrier', name: true },
        { key: 'episode', label: 'episode', num: true },
        { key: 'threads', label: 'threads', num: true },
        { key: 'last', label: 'last arriver' },
        { key: 'last_ns', label: 'last arrival', num: true, fmt: F.time },
        { key: 'wait', label: 'wait caused', num: true, fmt: v => S.bar(v, max, F.time(v)) },
      ], G.barrier_episodes.map(e => ({
        object: object(e) + (e.complete ? '' : ' (incomplete)'), episode: e.episode, threads: e.threads,
        last: S.threadShort(d, e.last_thread), last_ns: e.last_arrival_ns, wait: e.wait_ns,
      })), { sort: 'wait', limit: 50 }));
    }
  },
});
