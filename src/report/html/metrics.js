// User metrics view (strobe_metric values the program recorded): per
// metric, the call paths it was recorded on with count, sum, min, avg and
// max, summed over threads (calltree_columns.metrics).
strobe.view({
  id: 'metrics', title: 'Metrics', order: 30,
  show: d => d.report.metrics.length > 0 && d.report.calltree_columns.metrics.node.length > 0,
  render(el, d) {
    const S = strobe, r = d.report, m = r.calltree_columns.metrics;
    r.metrics.forEach((def, k) => {
      const rows = [];
      for (let j = 0; j < m.node.length; j++) {
        if (m.metric[j] !== k) continue;
        rows.push({ path: S.pathName(d, S.nodePath(d, m.node[j])), count: m.count[j], sum: m.sum[j], min: m.min[j],
          avg: m.count[j] ? m.sum[j] / m.count[j] : null, max: m.max[j] });
      }
      if (!rows.length) return;
      const unit = def.unit ? ' (' + def.unit + ')' : '';
      el.appendChild(S.h('h3', null, def.name + unit));
      const num = v => v === null ? '-' : Number.isInteger(v) ? S.fmt.count(v) : v.toFixed(2);
      const t = S.table([
        { key: 'path', label: 'call path', name: true }, { key: 'count', label: 'count', num: true, fmt: S.fmt.count },
        { key: 'sum', label: 'sum', num: true, fmt: num }, { key: 'min', label: 'min', num: true, fmt: num },
        { key: 'avg', label: 'avg', num: true, fmt: num }, { key: 'max', label: 'max', num: true, fmt: num },
      ], rows, { sort: 'sum' });
      t.id = 'metric-' + k;
      el.appendChild(t);
    });
  },
});
