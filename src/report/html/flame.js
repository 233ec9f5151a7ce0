// The flame graph component (an icicle: callers above callees), used by
// the call-tree view and by any view with a tree (the sampled call tree).
// strobe.flame(container, tree, opts) draws it; tree is
//   {parent: [..], name: [..], value: [..]}   (node 0 is the root;
//   value = inclusive weight; parent[i] < i, pre-order like the JSON report)
// opts: {tip(i) -> [[label, value], ...], unit(v) -> text, rowHeight,
//        color(i, dimmed) -> CSS colour of box i (default: by name)}.
// Click a box to zoom into it (its ancestors stay as full-width bars),
// click the root or "reset" to zoom out; the search box dims every box
// whose name does not contain the text and says what share matched.
// Returns {search(text), setValues(value)}: other views can drive the
// search, and give the same tree new weights (another thread) without a
// new chart; the search text stays, the zoom too while its box has weight.
strobe.flame = function (container, tree, opts) {
  const S = strobe, n = tree.parent.length, rowH = opts.rowHeight || 18;
  const kids = Array.from({ length: n }, () => []), depth = new Int32Array(n);
  for (let i = 1; i < n; i++) { kids[tree.parent[i]].push(i); depth[i] = depth[tree.parent[i]] + 1; }
  const sortKids = () => { for (const k of kids) k.sort((a, b) => tree.value[b] - tree.value[a]); };
  tree = { parent: tree.parent, name: tree.name, value: tree.value };
  sortKids();
  // rows drawn below and above the zoomed box: deep recursion must not
  // make a canvas taller than browsers allow (~32k px)
  const MAX_ROWS = 300, MAX_ABOVE = 20;
  let zoom = 0, query = '', boxes = [];
  const input = S.h('input', { type: 'search', placeholder: 'search function\u2026' });
  const matched = S.h('span', { class: 'note' }), deep = S.h('span', { class: 'note' });
  const reset = S.h('button', { onclick: () => { zoom = 0; draw(); } }, 'reset zoom');
  const canvas = S.h('canvas', { class: 'chart' });
  container.appendChild(S.h('div', { class: 'toolbar' }, input, reset, matched, deep));
  container.appendChild(S.h('div', null, canvas));
  input.addEventListener('input', () => { query = input.value; draw(); });

  const unit = opts.unit || (v => String(v));
  // Sum of the values of the boxes under i whose name matches (a match
  // inside a matching ancestor is not counted twice). Iterative: call
  // trees can be far deeper than the JavaScript stack.
  function matchedValue(i) {
    const q = query.toLowerCase();
    let v = 0;
    const stack = [i];
    while (stack.length) {
      const j = stack.pop();
      if (j > 0 && tree.name[j].toLowerCase().includes(q)) { v += tree.value[j]; continue; }
      for (const k of kids[j]) stack.push(k);
    }
    return v;
  }
  // The boxes to draw at canvas width W, zoomed on node `zoom`: its
  // ancestors and itself full width, its descendants in proportion; boxes
  // narrower than a third of a pixel (and their subtrees) are left out.
  function layout(W) {
    const out = [];
    for (let a = zoom; ; a = tree.parent[a]) {
      if (depth[zoom] - depth[a] > MAX_ABOVE) break;
      out.push({ i: a, x: 0, w: W });
      if (a === 0) break;
    }
    out.truncated = false;
    const stack = tree.value[zoom] > 0 ? [{ i: zoom, x: 0, w: W }] : [];
    while (stack.length) {   // iterative: deep recursion must not overflow the stack
      const b = stack.pop();
      if (depth[b.i] - depth[zoom] >= MAX_ROWS) { out.truncated = out.truncated || kids[b.i].length > 0; continue; }
      let cx = b.x;
      for (const k of kids[b.i]) {
        const kw = b.w * tree.value[k] / (tree.value[b.i] || 1);
        if (kw >= 0.35) { const c = { i: k, x: cx, w: kw }; out.push(c); stack.push(c); }
        cx += kw;
      }
    }
    return out;
  }
  function draw() {
    const total = tree.value[zoom] || 1;
    const width = Math.max(200, canvas.parentNode.clientWidth || 800);
    const all = layout(width);
    const top = Math.max(0, depth[zoom] - MAX_ABOVE);   // depth of the first row drawn
    let rows = 1;
    for (const b of all) rows = Math.max(rows, depth[b.i] - top + 1);
    const c = S.canvas(canvas, rows * rowH + 2), ctx = c.ctx;
    ctx.clearRect(0, 0, c.width, c.height);
    const q = query.toLowerCase();
    boxes = [];
    for (const b of all) {
      const i = b.i, y = (depth[i] - top) * rowH;
      const label = i === 0 ? 'all (' + unit(tree.value[0]) + ')' : tree.name[i];
      const hit = q && i > 0 && tree.name[i].toLowerCase().includes(q);
      const own = opts.color ? opts.color(i, q && !hit) : S.color(tree.name[i], q && !hit);
      ctx.fillStyle = i === 0 ? '#c9ced6' : hit ? '#e040a0' : own;
      ctx.fillRect(b.x, y, Math.max(b.w - 0.5, 0.5), rowH - 1);
      ctx.fillStyle = '#1d2330';
      S.fitText(ctx, label, b.x, y + rowH / 2, b.w);
      boxes.push({ i, x: b.x, y, w: b.w });
    }
    deep.textContent = (top ? top + ' levels above not drawn; ' : '') + (all.truncated ? 'calls deeper than ' +
      MAX_ROWS + ' levels below the zoomed box not drawn: click a box near the bottom to see further' : '');
    matched.textContent = q ? 'matched ' + S.fmt.pct(matchedValue(zoom) / total) + ' of ' +
      (zoom ? tree.name[zoom] : 'all') : '';
    canvas.setAttribute('data-zoom', zoom === 0 ? '' : tree.name[zoom]);
    canvas.setAttribute('data-boxes', boxes.length);
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
  return {
    search(text) { input.value = text; query = text; draw(); },
    setValues(value) {
      tree.value = value;
      sortKids();
      if (!(value[zoom] > 0)) zoom = 0;
      draw();
    },
  };
};
