// Memory view (`strobe run --malloc`, report section `malloc`): per
// process the peak of live bytes and when it was reached, what was live
// at exit; per call path the allocations, bytes, frees and what stayed
// live (leaks, also per thread); the large blocks in time order.
strobe.view({
  id: 'malloc', title: 'Memory', order: 70,
  show: d => !!d.report.malloc,
  render(el, d) {
    const S = strobe, M = d.report.malloc, F = S.fmt, r = d.report;
    el.appendChild(S.h('p', null, F.count(M.allocs) + ' allocations of ' + F.bytes(M.alloc_bytes) + ', ' +
      F.count(M.frees) + ' frees of ' + F.bytes(M.freed_bytes) + '; live at exit: ' +
      F.bytes(M.live_bytes) + ' in ' + F.count(M.live_blocks) + ' blocks (sizes as asked for).'));

    el.appendChild(S.h('h3', null, 'Processes'));
    el.appendChild(S.tableOf('malloc-processes', [
      { key: 'pid', label: 'pid', num: true }, { key: 'exe', label: 'program', name: true },
      { key: 'peak', label: 'peak live bytes', num: true, fmt: F.bytes },
      { key: 'when', label: 'at', num: true, fmt: F.time, title: 'time of the peak since the start of the experiment' },
      { key: 'live', label: 'live at exit', num: true, fmt: F.bytes },
      { key: 'blocks', label: 'live blocks', num: true, fmt: F.count },
      { key: 'untracked', label: 'untracked blocks', num: true, fmt: F.count, title: 'freed blocks allocated before tracking began' },
      { key: 'note', label: '' },
    ], M.processes.map(p => ({
      pid: r.processes[p.process].pid, exe: r.processes[p.process].exe,
      peak: p.summarized ? p.peak_bytes : null, when: p.summarized ? p.peak_ns : null,
      live: p.summarized ? p.live_bytes : null, blocks: p.summarized ? p.live_blocks : null,
      untracked: p.summarized ? p.untracked_blocks : null,
      note: p.summarized ? '' : 'did not exit normally: no peak or live counts',
    })), { sort: 'pid', asc: true }));

    if (M.paths.length) {
      const max = Math.max(...M.paths.map(p => p.alloc_bytes));
      el.appendChild(S.h('h3', null, 'Allocations by call path'));
      el.appendChild(S.tableOf('malloc-paths', [
        { key: 'path', label: 'call path', name: true },
        { key: 'allocs', label: 'allocations', num: true, fmt: F.count },
        { key: 'bytes', label: 'bytes', num: true, fmt: v => S.bar(v, max, F.count(v)) },
        { key: 'frees', label: 'frees', num: true, fmt: F.count },
        { key: 'freed', label: 'freed bytes', num: true, fmt: F.count },
        { key: 'live_blocks', label: 'live blocks', num: true, fmt: F.count, title: 'allocated here, live at exit' },
        { key: 'live_bytes', label: 'live bytes', num: true, fmt: F.count },
      ], M.paths.map(p => ({
        path: S.pathName(d, p.path), allocs: p.allocs, bytes: p.alloc_bytes, frees: p.frees, freed: p.freed_bytes,
        live_blocks: p.live_blocks, live_bytes: p.live_bytes,
      })), { sort: 'bytes' }));
    }
    if (M.leaks.length) {
      const max = Math.max(...M.leaks.map(l => l.bytes));
      el.appendChild(S.h('h3', null, 'Live at exit (leaks): ' + F.count(M.live_bytes) + ' bytes in ' + F.count(M.live_blocks) + ' blocks'));
      el.appendChild(S.threadTable('malloc-leaks', [
        { key: 'path', label: 'allocated on', name: true }, { key: 'thread', label: 'thread' },
        { key: 'blocks', label: 'blocks', num: true, fmt: F.count },
        { key: 'bytes', label: 'bytes', num: true, fmt: v => S.bar(v, max, F.count(v), '#f4c7c3') },
      ], M.leaks.map(l => ({ path: S.pathName(d, l.path), thread: S.threadShort(d, l.thread), thread_index: l.thread, blocks: l.blocks, bytes: l.bytes })),
      { sort: 'bytes' }));
    }
    if (M.large.length) {
      const large = M.processes.map(p => p.large_bytes);
      el.appendChild(S.h('h3', null, 'Large blocks (' + F.bytes(Math.min(...large)) + ' and more): ' + F.count(M.large.length) + ' events'));
      el.appendChild(S.threadTable('malloc-large', [
        { key: 'time', label: 'time', num: true, fmt: F.time }, { key: 'thread', label: 'thread' },
        { key: 'event', label: 'event' }, { key: 'call', label: 'call' }, { key: 'address', label: 'address' },
        { key: 'bytes', label: 'bytes', num: true, fmt: F.count },
        { key: 'path', label: 'call path', name: true },
      ], M.large.map(l => ({
        time: l.time_ns, thread: S.threadShort(d, l.thread), thread_index: l.thread, event: l.event, call: l.call,
        address: '0x' + l.address.toString(16), bytes: l.bytes, path: S.pathName(d, l.path),
      })), { sort: 'time', asc: true }));
    }
  },
});
