// Blame view (`strobe report --blame`, report section `blame`): the sampled
// cost charged to the program's variables (seed 003's data-centric blame).
// Data-centric: the variables by blame %, each with its display children
// (fields, elements, the heap block under its holder) to open below it;
// the samples no variable could take ("unknown data") with their reasons;
// code-centric: the sampled functions with their top variable; hybrid: per
// blame point the variables' shares of the samples through it and the
// callees the rest stayed in. Counts are sampling periods; the JSON's
// percent values are already percent (50.0).
strobe.view({
  id: 'blame', title: 'Blame', order: 52,
  show: d => !!d.report.blame,
  render(el, d) {
    const S = strobe, B = d.report.blame, F = S.fmt;
    const byId = new Map(B.variables.map(v => [v.id, v]));
    const vname = id => id === null || id === undefined ? '-' : byId.has(id) ? byId.get(id).name : '#' + id;
    el.appendChild(S.h('p', null, F.count(B.samples) + ' samples, charged to ' + B.variables.filter(v => v.samples > 0).length +
      ' variables; a sample counts once for every variable whose blame holds the statement it was in, so ' +
      'the shares add up to more than 100 %.'));
    if (B.caller_unknown)
      el.appendChild(S.h('p', { class: 'note' }, F.count(B.caller_unknown) + ' samples charged to a function\u2019s ' +
        'parameters, return value or globals whose caller could not be charged too (no call record at the call).'));

    el.appendChild(S.h('h3', null, 'Variables (data-centric)'));
    el.appendChild(this.variables(S, B));
    el.appendChild(S.h('h3', null, 'Unknown data'));
    this.unknown(el, S, B);
    if (B.functions.length) {
      el.appendChild(S.h('h3', null, 'Functions (code-centric)'));
      const max = Math.max(0, ...B.functions.map(f => f.total));
      el.appendChild(S.tableOf('blame-functions', [
        { key: 'name', label: 'function', name: true },
        { key: 'where', label: 'defined at', name: true },
        { key: 'total', label: 'total', num: true, fmt: v => S.bar(v, max, F.count(v)) },
        { key: 'self', label: 'self', num: true, fmt: F.count },
        { key: 'top', label: 'top variable', name: true },
        { key: 'top_samples', label: 'its samples', num: true, fmt: F.count },
        { key: 'unknown', label: 'unknown data', num: true, fmt: F.count },
      ], B.functions.map(f => ({
        name: f.name, where: this.loc(f.file, f.line), total: f.total, self: f.self,
        top: vname(f.top_variable), top_samples: f.top_variable === null ? null : f.top_samples, unknown: f.unknown,
      })), { sort: 'total', limit: 100 }));
    }
    if (B.points.length) {
      el.appendChild(S.h('h3', null, 'Blame points (hybrid)'));
      this.points(el, S, B, byId, vname);
    }
  },

  // "fix.c:18" (the file's base name; "" when unknown).
  loc(file, line) { return file ? file.split('/').pop() + (line ? ':' + line : '') : ''; },
  pct(p) { return p === null || p === undefined ? '-' : Number(p).toFixed(1) + ' %'; },
  definedIn(v) {
    if (v.function === null || v.function === undefined) return 'global';
    const at = this.loc(v.file, v.line);
    return v.function + (at ? ' ' + at : '');
  },

  // The variables as a tree table: top-level rows by the sort key (the
  // first 200, then a button for the rest), each row's display children
  // (closed at first; the toggle or "open all" shows them, indented)
  // sorted the same way below it.
  variables(S, B) {
    const F = S.fmt, ids = new Set(B.variables.map(v => v.id)), kids = new Map(), roots = [];
    for (const v of B.variables) {
      if (v.parent !== null && v.parent !== undefined && ids.has(v.parent)) {
        if (!kids.has(v.parent)) kids.set(v.parent, []);
        kids.get(v.parent).push(v);
      } else {
        roots.push(v);
      }
    }
    const open = new Set();
    let key = 'samples', asc = false, limit = 200;
    const cols = [
      { key: 'samples', label: 'samples', num: true, sort: true },
      { key: 'percent', label: 'blame %', num: true, sort: true },
      { key: 'bar', label: '' },
      { key: 'name', label: 'variable', sort: true },
      { key: 'type', label: 'type' },
      { key: 'kind', label: 'kind' },
      { key: 'defined', label: 'defined in' },
    ];
    const order = vs => vs.slice().sort((a, b) => {
      const c = key === 'name' ? a.name.localeCompare(b.name) : a[key] - b[key] || b.id - a.id;
      return asc ? c : -c;
    });
    const wrap = S.h('div', { 'data-table': 'blame-variables' });
    const rowsOf = (v, depth) => {
      const ks = kids.get(v.id) || [], isOpen = open.has(v.id);
      const toggle = S.h('span', {
        class: 'toggle', title: ks.length ? ks.length + ' parts' : null,
        onclick: () => { if (!ks.length) return; if (isOpen) open.delete(v.id); else open.add(v.id); draw(); },
      }, ks.length ? (isOpen ? '\u25BE' : '\u25B8') : '\u00A0');
      const where = this.loc(v.file, v.line);
      const tr = S.h('tr', { 'data-depth': String(depth) },
        S.h('td', { class: 'num', 'data-v': String(v.samples) }, F.count(v.samples)),
        S.h('td', { class: 'num', 'data-v': String(v.percent) }, this.pct(v.percent)),
        S.h('td', null, S.h('span', { class: 'blamebar' }, S.h('span', { style: 'width:' + Math.min(100, v.percent) + '%' }))),
        S.h('td', { class: 'name', 'data-v': v.name, title: v.name },
          S.h('span', { style: 'padding-left:' + depth * 14 + 'px' }), toggle, ' ', v.name),
        S.h('td', { class: 'name' }, v.type),
        S.h('td', null, v.kind),
        S.h('td', { class: 'name', title: v.file ? v.file + (v.line ? ':' + v.line : '') : null }, this.definedIn(v)));
      return [tr].concat(isOpen ? order(ks).map(k => rowsOf(k, depth + 1)) : []);
    };
    const draw = () => {
      wrap.textContent = '';
      const head = S.h('tr', null, cols.map(c => S.h('th', {
        class: [c.num ? 'num' : '', c.sort ? 'sortable' : '', c.key === key ? 'sorted' : '', c.key === key && asc ? 'asc' : ''].join(' '),
        onclick: c.sort ? () => { if (key === c.key) asc = !asc; else { key = c.key; asc = !c.num; } draw(); } : null,
      }, c.label)));
      const all = kids.size ? S.h('div', { class: 'toolbar' },
        S.h('button', { class: 'open-all', onclick: () => { for (const k of kids.keys()) open.add(k); draw(); } }, 'open all'),
        S.h('button', { class: 'close-all', onclick: () => { open.clear(); draw(); } }, 'close all')) : null;
      const shown = order(roots).slice(0, limit);
      wrap.appendChild(S.h('div', null, all, S.h('div', { class: 'scroll' }, S.h('table', { class: 'data' },
        S.h('thead', null, head), S.h('tbody', null, shown.map(v => rowsOf(v, 0)))))));
      if (roots.length > limit)
        wrap.appendChild(S.h('div', { class: 'note' }, (roots.length - limit) + ' more variables ',
          S.h('button', { class: 'show-all', onclick: () => { limit = roots.length; draw(); } }, 'show all')));
    };
    draw();
    return wrap;
  },

  // The samples no variable took: one bar of all samples (attributed and
  // each reason) and the reasons with their shares, zeros included.
  unknown(el, S, B) {
    const F = S.fmt, U = B.unknown;
    const help = {
      'no-table': 'the code\u2019s module has no blame table (not compiled by strobe cc, or stripped of .strobe_blame)',
      'no-debug': 'no source line for the code (no debug information, or compiler-made code)',
      'no-variable': 'the statement is in no variable\u2019s blame',
      'measurement': 'in strobe\u2019s own runtime',
    };
    const colors = { 'no-table': '#e8833a', 'no-debug': '#d64545', 'no-variable': '#9b5de5', 'measurement': '#8d99ae' };
    const reasons = Object.keys(U.by_reason);
    el.appendChild(S.h('p', { class: U.samples ? 'warning' : 'note' }, 'Unknown data: ' + F.count(U.samples) +
      ' samples, ' + this.pct(U.percent) + ' of all, charged to no variable (never dropped: the variables\u2019 shares ' +
      'and this one are of the same total).'));
    el.appendChild(S.stackedBars([{ label: 'all samples', values: [B.samples - U.samples].concat(reasons.map(r => U.by_reason[r])) }],
      [{ label: 'attributed', color: '#c9daf8' }].concat(reasons.map(r => ({ label: r, color: colors[r] || '#b0b0b0' }))),
      F.count, 'blame-unknown'));
    el.appendChild(S.tableOf('blame-unknown-reasons', [
      { key: 'reason', label: 'reason' },
      { key: 'samples', label: 'samples', num: true, fmt: F.count },
      { key: 'share', label: '% of all', num: true, fmt: F.pct },
      { key: 'help', label: 'meaning' },
    ], reasons.map(r => ({ reason: r, samples: U.by_reason[r], share: B.samples ? U.by_reason[r] / B.samples : null, help: help[r] || '' })),
    { sort: null }));
  },

  // Hybrid: the chosen blame point's call path and samples, its variables'
  // shares of them, and the samples that stayed in its callees.
  points(el, S, B, byId, vname) {
    const F = S.fmt, box = S.h('div');
    const sel = S.h('select', { id: 'blame-point-select', onchange: e => draw(Number(e.target.value)) },
      B.points.map((p, i) => S.h('option', { value: String(i) }, p.function + ' (' + F.count(p.samples) + ' samples)')));
    el.appendChild(S.h('div', { class: 'toolbar' }, S.h('label', null, 'Blame point ', sel)));
    el.appendChild(box);
    const draw = i => {
      const p = B.points[i], share = n => p.samples ? n / p.samples : null;
      box.textContent = '';
      box.appendChild(S.tableOf('blame-point', [
        { key: 'function', label: 'blame point', name: true },
        { key: 'path', label: 'call path (most common)', name: true },
        { key: 'samples', label: 'samples', num: true, fmt: F.count },
        { key: 'share', label: '% of all', num: true, fmt: F.pct },
      ], [{ function: p.function, path: p.path.join(' > '), samples: p.samples, share: B.samples ? p.samples / B.samples : null }]));
      const max = Math.max(0, ...p.variables.map(v => v.samples));
      if (!p.variables.length)
        box.appendChild(S.h('p', { class: 'note' }, 'No variable took samples through ' + p.function + '.'));
      else box.appendChild(S.tableOf('blame-point-variables', [
        { key: 'name', label: 'variable', name: true },
        { key: 'samples', label: 'samples', num: true, fmt: v => S.bar(v, max, F.count(v)) },
        { key: 'percent', label: 'blame %', num: true, fmt: v => this.pct(v) },
        { key: 'type', label: 'type', name: true },
        { key: 'defined', label: 'defined in', name: true },
      ], p.variables.map(v => {
        const w = byId.get(v.id);
        return { name: vname(v.id), samples: v.samples, percent: v.percent, type: w ? w.type : '-', defined: w ? this.definedIn(w) : '-' };
      }), { sort: 'samples' }));
      if (p.callees.length)
        box.appendChild(S.tableOf('blame-point-callees', [
          { key: 'name', label: 'stayed in callee', name: true },
          { key: 'samples', label: 'samples', num: true, fmt: F.count },
          { key: 'share', label: '% of the point\u2019s', num: true, fmt: F.pct },
        ], p.callees.map(c => ({ name: c.name, samples: c.samples, share: share(c.samples) })), { sort: 'samples' }));
    };
    draw(0);
  },
});
