// MPI view (report section `mpi`, experiments with MPI calls): per rank
// the time in MPI and the messages; per MPI function its time on each
// rank; the message size histogram; who sent how many bytes to whom; the
// collectives. Ranks are MPI_COMM_WORLD ranks.
strobe.view({
  id: 'mpi', title: 'MPI', order: 45,
  show: d => !!d.report.mpi,
  render(el, d) {
    const S = strobe, M = d.report.mpi, F = S.fmt;
    const ranks = Array.from({ length: M.ranks }, (_, r) => 'rank ' + r);
    el.appendChild(S.h('p', null, M.ranks + ' ranks; ' + F.count(M.messages) + ' point-to-point messages, ' +
      F.count(M.bytes) + ' bytes, as sent.'));
    if (!M.traced)
      el.appendChild(S.h('p', { class: 'note' }, 'No event streams (--no-trace): messages and collectives are not known.'));

    const maxMpi = Math.max(0, ...M.per_rank.map(r => r.mpi_ns));
    el.appendChild(S.h('h3', null, 'Ranks'));
    el.appendChild(S.tableOf('mpi-ranks', [
      { key: 'rank', label: 'rank', num: true },
      { key: 'mpi', label: 'time in MPI', num: true, fmt: v => S.bar(v, maxMpi, F.time(v)) },
      { key: 'share', label: 'MPI %', num: true, fmt: F.pct, title: 'of the time of its threads that call MPI' },
      { key: 'calls', label: 'calls', num: true, fmt: F.count },
      { key: 'sent', label: 'sent', num: true, fmt: F.count },
      { key: 'sent_bytes', label: 'bytes sent', num: true, fmt: F.count },
      { key: 'received', label: 'received', num: true, fmt: F.count },
      { key: 'received_bytes', label: 'bytes received', num: true, fmt: F.count },
      { key: 'note', label: '' },
    ], M.per_rank.map(r => ({
      rank: r.rank, mpi: r.mpi_ns, share: r.thread_ns ? r.mpi_ns / r.thread_ns : null, calls: r.calls,
      sent: r.sent, sent_bytes: r.sent_bytes, received: r.received, received_bytes: r.received_bytes,
      note: r.measured ? '' : 'not measured',
    })), { sort: 'rank', asc: true }));

    if (M.functions.length) {
      const maxNs = Math.max(...M.functions.map(f => f.ns));
      const names = M.functions.map(f => S.regionName(d, f.region));
      el.appendChild(S.h('h3', null, 'MPI functions'));
      el.appendChild(S.tableOf('mpi-functions', [
        { key: 'name', label: 'function', name: true },
        { key: 'calls', label: 'calls', num: true, fmt: F.count },
        { key: 'ns', label: 'time', num: true, fmt: v => S.bar(v, maxNs, F.time(v)) },
      ], M.functions.map((f, i) => ({ name: names[i], calls: f.calls, ns: f.ns })), { sort: 'ns' }));
      el.appendChild(S.h('h3', null, 'Time per MPI function and rank'));
      el.appendChild(S.heatmap(names, ranks, M.functions.map(f => f.rank_ns), {
        id: 'mpi-function-ranks', corner: 'function \u2193 rank \u2192', fmt: F.time, rgb: '47,111,223',
        tip: (r, c, v) => [names[r] + ' on rank ' + c, [['time', F.time(v)], ['of the function', F.pct(M.functions[r].ns ? v / M.functions[r].ns : null)]]],
      }));
    }
    if (!M.traced) return;

    if (M.sizes.length) {
      el.appendChild(S.h('h3', null, 'Message sizes (point-to-point, as sent)'));
      el.appendChild(S.stackedBars(M.sizes.map(s => ({
        label: s.max_bytes === null ? s.min_bytes + ' B and more' : s.min_bytes + '-' + s.max_bytes + ' B',
        values: [s.messages],
      })), [{ label: 'messages', color: '#2f6fdf' }], F.count, 'mpi-sizes'));
    }
    el.appendChild(S.h('h3', null, 'Bytes sent, sender \u00d7 receiver'));
    el.appendChild(S.heatmap(ranks, ranks, M.matrix_bytes, {
      id: 'mpi-matrix', corner: 'from \u2193 to \u2192', fmt: F.count,
      tip: (r, c, v) => ['rank ' + r + ' \u2192 rank ' + c, [['bytes', F.count(v) + ' (' + F.bytes(v) + ')'], ['messages', F.count(M.matrix_messages[r][c])]]],
    }));
    if (M.collectives.length) {
      el.appendChild(S.h('h3', null, 'Collectives'));
      el.appendChild(S.tableOf('mpi-collectives', [
        { key: 'name', label: 'collective', name: true },
        { key: 'calls', label: 'calls (all ranks)', num: true, fmt: F.count },
        { key: 'sent', label: 'bytes sent', num: true, fmt: F.count },
        { key: 'received', label: 'bytes received', num: true, fmt: F.count },
      ], M.collectives.map(c => ({ name: c.name, calls: c.calls, sent: c.sent_bytes, received: c.received_bytes })),
      { sort: 'calls' }));
    }
  },
});
