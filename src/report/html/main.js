// Starts the page: reads the data, fills the header (command, thread
// selector), renders every view whose data is present in `order`, and
// marks the body data-ready="1" when done (the tests wait for it).
(function () {
  const S = strobe;
  let d;
  try {
    d = JSON.parse(document.getElementById('strobe-data').textContent);
  } catch (e) {
    document.getElementById('views').appendChild(S.h('p', { class: 'problem' }, 'The report data is damaged: ' + e));
    console.error('strobe report: data: ' + e);
    return;
  }
  const r = d.report;
  const cmd = r.meta && r.meta.command ? r.meta.command : r.dir;
  document.title = 'strobe: ' + cmd;
  document.getElementById('subtitle').textContent = cmd;

  if (r.threads.length > 1) {
    const sel = S.h('select', { id: 'thread-select', onchange: e => { S.state.thread = Number(e.target.value); S.emit('thread'); } },
      S.h('option', { value: '-1' }, 'all threads (' + r.threads.length + ')'),
      r.threads.map((t, i) => S.h('option', { value: String(i) }, S.threadName(d, i))));
    document.getElementById('controls').appendChild(S.h('label', null, 'Thread ', sel));
  }

  const nav = document.getElementById('nav');
  const main = document.getElementById('views');
  const views = S.views.slice().sort((a, b) => a.order - b.order);
  for (const v of views) {
    let show = false;
    try { show = v.show(d); } catch (e) { S.fail(null, e); }
    if (!show) continue;
    const title = typeof v.title === 'function' ? v.title(d) : v.title;
    const sec = S.section(v.id, title);
    main.appendChild(sec);
    nav.appendChild(S.h('a', { href: '#view-' + v.id }, title));
    try { v.render(sec, d); } catch (e) { S.fail(sec, e); }
  }
  document.getElementById('footer').textContent = 'strobe ' + (r.meta.strobe_version || '') +
    ' \u2014 experiment ' + r.dir + ' \u2014 report written ' + (d.generated || '');
  document.body.setAttribute('data-ready', '1');
})();
