// Transactional memory view (`strobe run --tm`, report section `tm`): the
// monitoring level and what it recorded, the atomic blocks with their
// verdicts, the blocks per thread, useful vs wasted time and the TMbox
// states per thread, and who aborted whom. Times, states and culprits
// exist only at level `events`; the view says so instead of showing zeros.
strobe.view({
  id: 'tm', title: 'Transactional memory', order: 40,
  show: d => !!(d.report.tm && d.report.tm.blocks.length),
  render(el, d) {
    const S = strobe, tm = d.report.tm, F = S.fmt;
    const thread = t => S.threadShort(d, t);
    el.appendChild(tm.level === null
      ? S.h('p', null, 'Not run on the monitored STM: the blocks are known from the profile only.')
      : S.h('p', null, 'Monitoring level ', S.h('b', null, tm.level), ': ' + tm.recorded +
        (tm.level_inferred ? ' (level inferred from the records)' : '') + '.'));

    // abort causes worth a column: those that occurred (hardware ones are rare)
    const causes = tm.blocks[0].aborts ? Object.keys(tm.blocks[0].aborts)
      .filter(k => tm.blocks.some(b => b.aborts[k] > 0)) : [];
    const serial = Object.keys(tm.blocks[0].serialized);
    // the row of a block or a block's thread (c: its counts and verdict)
    const cells = (c, row) => {
      row.transactions = c.transactions;
      row.commits = c.transactions - c.cancels;
      row.rollbacks = c.rollbacks;
      row.cancels = c.cancels;
      row.rate = c.verdict.rollback_rate;
      for (const k of serial) row['ser_' + k] = c.serialized[k];
      for (const k of causes) row['ab_' + k] = c.aborts[k];
      row.committed = c.committed_ns;
      row.wasted = c.aborted_ns;
      return row;
    };
    const blockName = b => S.regionName(d, b.region);
    const counts = [
      { key: 'transactions', label: 'transactions', num: true, fmt: F.count, title: 'completed executions (committed or cancelled)' },
      { key: 'commits', label: 'commits', num: true, fmt: F.count, title: 'transactions that committed (not cancelled)' },
      { key: 'rollbacks', label: 'rollbacks', num: true, fmt: F.count, title: 'aborted attempts that were retried' },
      { key: 'cancels', label: 'cancels', num: true, fmt: F.count, title: '__transaction_cancel' },
      { key: 'rate', label: 'rollback rate', num: true, fmt: F.pct, title: 'rollbacks per attempt' },
    ].concat(serial.map(k => ({ key: 'ser_' + k, label: 'ser. ' + k, num: true, fmt: F.count, title: 'executions serialized, first cause ' + k })),
      causes.map(k => ({ key: 'ab_' + k, label: 'abort ' + k, num: true, fmt: F.count, title: 'aborts caused by ' + k })),
      tm.has_events ? [
        { key: 'committed', label: 'useful', num: true, fmt: F.time, title: 'time in attempts that committed' },
        { key: 'wasted', label: 'wasted', num: true, fmt: F.time, title: 'time in attempts that aborted or were cancelled' },
      ] : []);

    const blocks = tm.blocks.map(b => cells(b, {
      name: blockName(b), source: S.regionSource(d, b.region), grade: b.verdict.grade, verdict: b.verdict,
      wasted_share: b.verdict.wasted,
    }));
    el.appendChild(S.h('h3', null, 'Atomic blocks'));
    el.appendChild(S.tableOf('tm-blocks', [
      { key: 'name', label: 'block', name: true },
      { key: 'source', label: 'file:line', fmt: v => S.h('span', { title: v }, v.split('/').pop()) },
    ].concat(counts, [
      tm.has_events ? { key: 'wasted_share', label: 'wasted share', num: true, fmt: F.pct, title: 'rolled-back attempts\u2019 share of the attempt time (cancels left out)' } : null,
      { key: 'grade', label: 'verdict', cls: r => 'grade grade-' + r.grade, fmt: (g, r) => S.h('span', { title: r.verdict.summary + '. ' + r.verdict.advice + '.' }, g) },
    ]).filter(Boolean), blocks, { sort: 'transactions' }));
    for (const b of blocks)
      if (b.grade !== 'good' && b.grade !== 'none')
        el.appendChild(S.h('p', { class: 'note' }, S.h('b', null, b.name), ': ' + b.verdict.summary + '. ' + b.verdict.advice + '.'));
    if (!tm.has_events)
      el.appendChild(S.h('p', { class: 'note' }, 'Times, TMbox states and culprits are not recorded at level \u2018' +
        tm.level + '\u2019: re-run with --tm-monitor events.'));

    // block x thread: the threads that ran each block
    const per = [];
    for (const b of tm.blocks)
      for (const c of b.threads)
        if (c.transactions || c.rollbacks)
          per.push(cells(c, { name: blockName(b), thread: thread(c.thread), thread_index: c.thread }));
    el.appendChild(S.h('h3', null, 'Atomic blocks per thread'));
    el.appendChild(S.threadTable('tm-threads', [
      { key: 'name', label: 'block', name: true }, { key: 'thread', label: 'thread' },
    ].concat(counts), per, { sort: 'transactions' }));
    if (!tm.has_events) return;

    // the threads that ran transactions: useful vs wasted time, TMbox states
    const ran = new Set(tm.threads.filter(c => c.transactions || c.rollbacks).map(c => c.thread));
    el.appendChild(S.h('h3', null, 'Useful and wasted transaction time per thread'));
    el.appendChild(S.stackedBars(tm.threads.filter(c => ran.has(c.thread)).map(c => ({
      label: thread(c.thread), values: [c.committed_ns, c.aborted_ns],
    })), [
      { label: 'committed (useful)', color: S.tmStates[0].color },
      { label: 'aborted or cancelled (wasted)', color: S.tmStates[1].color },
    ], F.time, 'tm-useful'));

    el.appendChild(S.h('h3', null, 'Time per TMbox state per thread'));
    el.appendChild(S.stackedBars(tm.states.filter(s => ran.has(s.thread)).map(s => ({
      label: thread(s.thread), values: S.tmStates.map(k => s[k.key]),
    })), S.tmStates.map(k => ({ label: k.key, color: k.color })), F.time, 'tm-states'));

    // aborted_by[culprit][victim]; the last row: culprit unknown
    const n = tm.aborted_by.length - 1;
    const total = tm.aborted_by.flat().reduce((a, b) => a + b, 0);
    el.appendChild(S.h('h3', null, 'Who aborted whom (' + F.count(total) + ' aborts)'));
    if (!total) {
      el.appendChild(S.h('p', { class: 'note' }, 'No transaction was aborted by a conflict.'));
      return;
    }
    const names = Array.from({ length: n }, (_, t) => thread(t));
    el.appendChild(S.heatmap(names.concat(['unknown']), names, tm.aborted_by, {
      id: 'tm-aborted-by', corner: 'culprit \u2193 victim \u2192',
      tip: (r, c, v) => [F.count(v) + ' aborts', [['culprit', r < n ? S.threadName(d, r) : 'unknown'], ['victim', S.threadName(d, c)]]],
    }));
    el.appendChild(S.h('p', { class: 'note' }, 'A row is the thread whose commit invalidated the victim\u2019s transaction; ' +
      '\u2018unknown\u2019 counts aborts whose culprit the STM could not name.'));
  },
});
