// First look: the few facts worth reading before anything else, one line
// each with a link to the view that explains it: where the exclusive time
// goes, the most imbalanced call path between ranks or processes, and the
// headline of each analysis the experiment has (TM verdicts, the longest
// lock wait, leaks, the hottest sampled function, the time in MPI).
strobe.view({
  id: 'highlights', title: 'First look', order: 11,
  show(d) { return this.facts(d).length > 0; },
  render(el, d) {
    el.appendChild(strobe.h('dl', { class: 'facts', id: 'first-look' }, this.facts(d).map(x => [strobe.h('dt', null, x[0]),
      strobe.h('dd', null, x[1], ' \u2192 ', x[2])])));
  },
  // The facts as [term, text, link]; none: the view is not shown.
  facts(d) {
    const S = strobe, r = d.report, items = [];
    const link = (view, text) => S.h('a', { href: '#view-' + view }, text);
    const pathName = p => S.pathName(d, p);
    const totalExcl = r.summary.total_excl_ns || 1;
    const top = r.flat.slice().sort((a, b) => b.excl_ns - a.excl_ns).slice(0, 3).filter(f => f.excl_ns > 0);
    if (top.length)
      items.push(['Exclusive time', top.map(f => S.regionName(d, f.region) + ' ' + S.fmt.pct(f.excl_ns / totalExcl)).join(', '),
        link('calltree', 'call tree')]);
    if (r.by && r.by.groups.length > 1 && r.by.calltree.length) {
      const worst = r.by.calltree.reduce((a, c) => (c.incl_ns.max - c.incl_ns.avg > a.incl_ns.max - a.incl_ns.avg ? c : a));
      items.push(['Imbalance', pathName(S.nodePath(d, worst.id)) + ': the slowest ' + (r.by.key === 'rank' ? 'rank' : 'process') + ' took ' +
        S.fmt.time(worst.incl_ns.max) + ', the average ' + S.fmt.time(worst.incl_ns.avg), link('groups', r.by.key === 'rank' ? 'ranks' : 'processes')]);
    }
    if (r.tm && r.tm.blocks.length) {
      const bad = r.tm.blocks.filter(b => b.verdict && b.verdict.grade !== 'good' && b.verdict.grade !== 'none');
      items.push(['Transactions', bad.length
        ? bad.map(b => S.regionName(d, b.region) + ': ' + b.verdict.grade + ' (rollback rate ' + S.fmt.pct(b.verdict.rollback_rate) + ')').join(', ')
        : r.tm.blocks.length + ' atomic blocks, none with a problem', link('tm', 'transactional memory')]);
    }
    if (r.locks) {
      const w = (r.locks.objects || []).concat(r.locks.barriers || []).sort((a, b) => b.wait_ns - a.wait_ns)[0];
      if (w && w.wait_ns > 0) {
        // where: its call path, or without one (an uninstrumented program)
        // the call site that waited longest on the object
        const site = (r.locks.sites || []).find(x => x.address === w.address && x.process === w.process);
        const where = w.path && w.path.length ? ' from ' + pathName(w.path)
          : site ? ' at ' + site.function + (site.file ? ' (' + site.file.split('/').pop() + ':' + site.line + ')' : '') : '';
        items.push(['Waiting', S.fmt.time(w.wait_ns) + ' on ' + (w.kind || 'barrier') + ' ' +
          (w.name || '0x' + Number(w.address).toString(16)) + where, link('locks', 'locks')]);
      }
    }
    if (r.malloc && r.malloc.live_blocks > 0)
      items.push(['Memory', S.fmt.count(r.malloc.live_blocks) + ' blocks (' + S.fmt.bytes(r.malloc.live_bytes) + ') still allocated at exit',
        link('malloc', 'memory')]);
    if (r.samples && r.samples.functions && r.samples.functions.length && r.samples.samples) {
      const f = r.samples.functions[0];
      items.push(['Samples', f.name + (f.file ? ' (' + f.file.split('/').pop() + ':' + f.line + ')' : '') + ' ' +
        S.fmt.pct(f.self / r.samples.samples) + ' of the samples', link('samples', 'samples')]);
    }
    if (r.mpi && r.mpi.per_rank && r.mpi.per_rank.length) {
      const mpi = r.mpi.per_rank.reduce((a, x) => a + x.mpi_ns, 0), all = r.mpi.per_rank.reduce((a, x) => a + x.thread_ns, 0);
      items.push(['MPI', S.fmt.pct(all ? mpi / all : null) + ' of the ranks\' time in MPI, ' + S.fmt.count(r.mpi.messages) + ' messages',
        link('mpi', 'MPI')]);
    }
    return items;
  },
});
