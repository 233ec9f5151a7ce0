// Samples view (`strobe run --sample`, report section `samples`): the
// sampled flat profile, the samples per thread with how much of its CPU
// time they cover, the sampled call tree (a flame graph) and, for
// instrumented programs, the samples per instrumented call path. Counts
// are sampling periods.
strobe.view({
  id: 'samples', title: 'Samples', order: 50,
  show: d => !!d.report.samples,
  render(el, d) {
    const S = strobe, M = d.report.samples, F = S.fmt;
    const period = M.hz ? 1e9 / M.hz : 0;
    const share = v => M.samples ? v / M.samples : null;
    const fname = f => f === null ? '-' : M.functions[f].name;
    el.appendChild(S.h('p', null, F.count(M.samples) + ' samples (' + F.time(M.samples * period) + ' of CPU time) in ' +
      F.count(M.records) + ' signals at ' + M.hz + ' Hz of each thread\u2019s CPU time (' +
      (M.source === 'perf' ? 'perf task-clock: user mode only' : 'CPU-time timers') + ')' +
      (M.mixed_rates ? '; processes sampled at different rates' : '') + '.'));
    if (M.missed)
      el.appendChild(S.h('p', { class: 'warning' }, F.count(M.missed) + ' periods missed (signal blocked or delayed, or the runtime busy).'));
    if (M.truncated)
      el.appendChild(S.h('p', { class: 'note' }, F.count(M.truncated) + ' samples with their outermost frames cut.'));
    if (M.unstacked)
      el.appendChild(S.h('p', { class: 'note' }, F.count(M.unstacked) + ' samples of threads without a trace (--no-trace): ' +
        'per instrumented call path only, their stacks were not recorded.'));

    if (M.functions.length) {
      const maxSelf = Math.max(0, ...M.functions.map(f => f.self));
      el.appendChild(S.h('h3', null, 'Sampled flat profile'));
      el.appendChild(S.tableOf('samples-functions', [
        { key: 'name', label: 'function', name: true },
        { key: 'self', label: 'self', num: true, fmt: v => S.bar(v, maxSelf, F.count(v)) },
        { key: 'self_pct', label: 'self %', num: true, fmt: F.pct },
        { key: 'total', label: 'total', num: true, fmt: F.count },
        { key: 'total_pct', label: 'total %', num: true, fmt: F.pct },
        { key: 'where', label: 'hottest line / module', name: true },
      ], M.functions.map(f => ({
        name: f.name, self: f.self, self_pct: share(f.self), total: f.total, total_pct: share(f.total),
        where: f.file ? f.file.split('/').pop() + ':' + f.line : f.module ? '[' + f.module.split('/').pop() + ']' : '',
      })), { sort: 'self', limit: 100 }));
    }

    // per thread: the listed threads, their cover and hottest functions
    const hottest = t => M.functions.map(f => [f.name, (f.threads.find(x => x[0] === t) || [0, 0])[1]])
      .filter(x => x[1] > 0).sort((a, b) => b[1] - a[1]).slice(0, 3);
    const threads = M.threads.filter(t => t.listed);
    el.appendChild(S.h('h3', null, 'Samples per thread'));
    el.appendChild(S.threadTable('samples-threads', [
      { key: 'thread', label: 'thread' },
      { key: 'samples', label: 'samples', num: true, fmt: F.count },
      { key: 'missed', label: 'missed', num: true, fmt: F.count },
      { key: 'cpu', label: 'CPU time', num: true, fmt: F.time },
      { key: 'cover', label: 'cover', num: true, fmt: v => v === null ? '?' : S.bar(v, 1, F.pct(v), v < 0.75 ? '#f4c7c3' : null),
        title: 'samples \u00d7 period / the thread\u2019s CPU time (? under 100 ms of CPU time)' },
      { key: 'hot', label: 'hottest functions (self)', name: true },
    ], threads.map(t => ({
      thread: S.threadShort(d, t.thread), thread_index: t.thread, samples: t.samples, missed: t.missed, cpu: t.cpu_ns, cover: t.cover,
      hot: hottest(t.thread).map(x => x[0] + ' ' + F.pct(t.samples ? x[1] / t.samples : null)).join(', '),
    })), { sort: 'samples' }));
    const low = threads.filter(t => t.cover !== null && t.cover < 0.75).length;
    if (low)
      el.appendChild(S.h('p', { class: 'note' }, low + ' thread(s) sampled for less than 75 % of their CPU time: SIGPROF blocked, or taken by another handler.'));

    if (M.functions.length) {
      el.appendChild(S.h('h3', null, 'Sampled call tree'));
      this.callTree(el, S, M, share);
    }

    const hybrid = M.paths.filter(p => !(p.path && p.path.length === 0));
    if (hybrid.length) {
      const max = Math.max(...M.paths.map(p => p.samples));
      el.appendChild(S.h('h3', null, 'Samples per instrumented call path'));
      el.appendChild(S.tableOf('samples-paths', [
        { key: 'path', label: 'call path (regions open when sampled)', name: true },
        { key: 'samples', label: 'samples', num: true, fmt: v => S.bar(v, max, F.count(v)) },
        { key: 'pct', label: '%', num: true, fmt: F.pct },
        { key: 'func', label: 'mostly in (self)', name: true },
        { key: 'func_pct', label: 'of its samples', num: true, fmt: F.pct },
      ], M.paths.map(p => ({
        path: p.path && p.path.length === 0 ? '(no instrumented region open)' : S.pathName(d, p.path),
        samples: p.samples, pct: share(p.samples), func: fname(p.function),
        func_pct: p.samples ? p.function_samples / p.samples : null,
      })), { sort: 'samples' }));
    }
  },

  // The sampled call tree as a flame graph (strobe.flame), outermost frame
  // on top, weighted by samples; the tooltip gives total, self and share.
  callTree(el, S, M, share) {
    const F = S.fmt, t = M.tree;
    const box = S.h('div', { class: 'flame', 'data-chart': 'samples-flame', 'data-nodes': String(t.length) });
    el.appendChild(box);   // attached first: the canvas takes the page's width
    S.flame(box, {
      parent: t.map(n => n.parent === null ? -1 : n.parent),
      name: t.map(n => n.function === null ? 'all' : M.functions[n.function].name),
      value: t.map(n => n.total),
    }, {
      unit: v => F.count(v) + ' samples',
      tip: i => [['samples', F.count(t[i].total)], ['self', F.count(t[i].self)], ['of all samples', F.pct(share(t[i].total))]],
    });
  },
});
