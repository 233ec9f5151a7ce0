// The flame graph component (an icicle: callers above callees), used by
// the call-tree view and by any view with a tree (the sampled call tree).
// strobe.flame(container, tree, opts) draws it; tree is
//   {parent: [..], name: [..], value: [..]}   (node 0 is the root;
//   value = inclusive weight; parent[i] < i, pre-order like the JSON report)
// opts: {tip(i) -> [[label, value], ...], unit(v) -> text, rowHeight}.
// Click a box to zoom into it (its ancestors stay as full-width bars),
// click the root or "reset" to zoom out; the search box dims every box
// whose name does not contain the text and says what share matched.
// Returns {search(text)} so other views can drive the search.
strobe.flame = function (container, tree, opts) {
  const S = strobe, n = tree.parent.length, rowH = opts.rowHeight || 18;
  const kids = Array.from({ length: n }, () => []), depth = new Int32Array(n);
  for (let i = 1; i < n; i++) { kids[tree.parent[i]].push(i); depth[i] = depth[tree.parent[i]] + 1; }
  for (const k of kids) k.sort((a, b) => tree.value[b] - tree.value[a]);
  let zoom = 0, query = '', boxes = [];
  const input = S.h('input', { type: 'search', placeholder: 'search function\u2026' });
  const matched = S.h('span', { class: 'note' });
  const reset = S.h('button', { onclick: () => { zoom = 0; draw(); } }, 'reset zoom');
  const canvas = S.h('canvas', { class: 'chart' });
  container.appendChild(S.h('div', { class: 'toolbar' }, input, reset, matched));
  container.appendChild(S.h('div', null, canvas));
  input.addEventListener('input', () => { query = input.value; draw(); });

  const unit = opts.unit || (v => String(v));
  // Sum of the values of the boxes whose name matches (not counting a
  // match inside a matching ancestor twice).
  function matchedValue(i, inMatch) {
    const hit = !inMatch && i > 0 && tree.name[i].toLowerCase().includes(query.toLowerCase());
    let v = hit ? tree.value[i] : 0;
    for (const k of kids[i]) v += matchedValue(k, inMatch || hit);
    return v;
  }
  // The boxes to draw at canvas width W, zoomed on node `zoom`: its
  // ancestors and itself full width, its descendants in proportion; boxes
  // narrower than a third of a pixel (and their subtrees) are left out.
  function layout(W) {
    const out = [];
    for (let a = zoom; ; a = tree.parent[a]) {
      out.push({ i: a, x: 0, w: W });
      if (a === 0) break;
    }
    const walk = (i, x, w) => {
      let cx = x;
      for (const k of kids[i]) {
        const kw = w * tree.value[k] / (tree.value[i] || 1);
        if (kw >= 0.35) { out.push({ i: k, x: cx, w: kw }); walk(k, cx, kw); }
        cx += kw;
      }
    };
    if (tree.value[zoom] > 0) walk(zoom, 0, W);
    return out;
  }
  function draw() {
    const total = tree.value[zoom] || 1;
    const width = Math.max(200, canvas.parentNode.clientWidth || 800);
    const all = layout(width);
    let rows = 1;
    for (const b of all) rows = Math.max(rows, depth[b.i] + 1);
    rows = Math.min(rows, 400);
    const c = S.canvas(canvas, rows * rowH + 2), ctx = c.ctx;
    ctx.clearRect(0, 0, c.width, c.height);
    const q = query.toLowerCase();
    boxes = [];
    for (const b of all) {
      const i = b.i, y = depth[i] * rowH;
      if (depth[i] >= rows) continue;
      const label = i === 0 ? 'all (' + unit(tree.value[0]) + ')' : tree.name[i];
      const hit = q && i > 0 && tree.name[i].toLowerCase().includes(q);
      ctx.fillStyle = i === 0 ? '#c9ced6' : q && !hit ? S.color(tree.name[i], true) : hit ? '#e040a0' : S.color(tree.name[i]);
      ctx.fillRect(b.x, y, Math.max(b.w - 0.5, 0.5), rowH - 1);
      ctx.fillStyle = '#1d2330';
      S.fitText(ctx, label, b.x, y + rowH / 2, b.w);
      boxes.push({ i, x: b.x, y, w: b.w });
    }
    matched.textContent = q ? 'matched ' + S.fmt.pct(matchedValue(zoom, false) / total) + ' of ' +
      (zoom ? tree.name[zoom] : 'all') : '';
    canvas.setAttribute('data-zoom', zoom === 0 ? '' : tree.name[zoom]);
  }
  const hit = ev => {
    const r = canvas.getBoundingClientRect(), x = ev.clientX - r.left, y = ev.clientY - r.top;
    for (let b = boxes.length - 1; b >= 0; b--) {
      const bx = boxes[b];
      if (x >= bx.x && x < bx.x + bx.w && y >= bx.y && y < bx.y + rowH) return bx.i;
    }
    return -1;
  };
  canvas.addEventListener('mousemove', ev => {
    const i = hit(ev);
    if (i < 0) { S.tip.hide(); return; }
    const share = tree.value[i] / (tree.value[0] || 1);
    S.tip.show(ev, i === 0 ? 'all' : tree.name[i],
      (opts.tip ? opts.tip(i) : [['value', unit(tree.value[i])]]).concat([['share of all', S.fmt.pct(share)]]));
  });
  canvas.addEventListener('mouseleave', () => S.tip.hide());
  canvas.addEventListener('click', ev => { const i = hit(ev); if (i >= 0) { zoom = i === zoom ? tree.parent[i] || 0 : i; draw(); } });
  window.addEventListener('resize', () => draw());
  draw();
  return { search(text) { input.value = text; query = text; draw(); }, zoomTo(i) { zoom = i; draw(); } };
};
