// Locks view (report section `locks`, recorded by default; `strobe run
// --no-locks` turns it off): per lock object and acquiring call path the
// acquisitions, contended ones, total and longest wait, estimated hold
// time and the acquiring threads; the waits by call site (from the
// traces) and the barriers. Longest total wait first, a bar per row.
strobe.view({
  id: 'locks', title: 'Locks', order: 60,
  show: d => !!(d.report.locks && (d.report.locks.objects.length || d.report.locks.barriers.length || d.report.locks.sites.length)),
  render(el, d) {
    const S = strobe, L = d.report.locks, F = S.fmt, r = d.report;
    const multi = r.processes.length > 1;
    // "hot_lock", "0x7f..." for an object without a symbol; "pid:" first when many processes
    const object = o => (multi ? r.processes[o.process].pid + ':' : '') + (o.name !== null ? o.name : '0x' + o.address.toString(16));
    const waitCol = (max, label) => ({ key: 'wait', label: label || 'wait', num: true, fmt: v => S.bar(v, max, F.time(v)) });

    if (L.profiled_threads === 0)
      el.appendChild(S.h('p', { class: 'note' }, 'No profiles in this experiment (STROBE_PROFILE=0): the lock counts live there; only the waits of the traces are shown.'));
    if (L.objects.length) {
      const max = Math.max(...L.objects.map(o => o.wait_ns));
      el.appendChild(S.h('h3', null, 'Locks by object and acquiring call path'));
      el.appendChild(S.tableOf('locks-objects', [
        { key: 'object', label: 'object', name: true }, { key: 'kind', label: 'kind' },
        { key: 'path', label: 'call path', name: true },
        { key: 'acquisitions', label: 'acquired', num: true, fmt: F.count },
        { key: 'contended', label: 'contended', num: true, fmt: F.count },
        { key: 'share', label: 'contended %', num: true, fmt: F.pct },
        waitCol(max), { key: 'max_wait', label: 'max wait', num: true, fmt: F.time },
        { key: 'hold', label: 'hold', num: true, fmt: F.time, title: 'estimated from the timed holds (the first 16 per thread and path, then about 1 in 16); - none timed' },
        { key: 'threads', label: 'threads (acquisitions)' },
      ], L.objects.map(o => ({
        object: object(o), kind: o.kind, path: S.pathName(d, o.path),
        acquisitions: o.acquisitions, contended: o.contended, share: o.acquisitions ? o.contended / o.acquisitions : null,
        wait: o.wait_ns, max_wait: o.max_wait_ns, hold: o.hold_ns,
        threads: o.threads.map(t => S.threadShort(d, t.thread) + ':' + t.acquisitions).join(' '),
      })), { sort: 'wait', limit: 50 }));
    }
    if (L.sites.length) {
      const max = Math.max(...L.sites.map(s => s.wait_ns));
      el.appendChild(S.h('h3', null, 'Waits by call site'));
      el.appendChild(S.h('p', { class: 'note' }, 'From the traces: each wait at its first frame outside the runtime.'));
      el.appendChild(S.tableOf('locks-sites', [
        { key: 'object', label: 'object', name: true }, { key: 'kind', label: 'kind' },
        { key: 'function', label: 'waiting function', name: true }, { key: 'source', label: 'file:line' },
        { key: 'waits', label: 'waits', num: true, fmt: F.count },
        waitCol(max), { key: 'max_wait', label: 'max wait', num: true, fmt: F.time },
      ], L.sites.map(s => ({
        object: object(s), kind: s.kind, function: s.function, source: s.file ? s.file.split('/').pop() + ':' + s.line : '',
        waits: s.waits, wait: s.wait_ns, max_wait: s.max_wait_ns,
      })), { sort: 'wait' }));
    }
    if (L.barriers.length) {
      const max = Math.max(...L.barriers.map(b => b.wait_ns));
      el.appendChild(S.h('h3', null, 'Barriers'));
      el.appendChild(S.tableOf('locks-barriers', [
        { key: 'object', label: 'barrier', name: true },
        { key: 'episodes', label: 'episodes', num: true, fmt: F.count },
        { key: 'waits', label: 'waits', num: true, fmt: F.count },
        { key: 'threads', label: 'threads', num: true, fmt: F.count },
        waitCol(max),
        { key: 'max_wait', label: 'max wait', num: true, fmt: F.time, title: 'the longest single wait: the imbalance' },
      ], L.barriers.map(b => ({
        object: object(b), episodes: b.episodes, waits: b.waits, threads: b.threads, wait: b.wait_ns, max_wait: b.max_wait_ns,
      })), { sort: 'wait' }));
    }
  },
});
