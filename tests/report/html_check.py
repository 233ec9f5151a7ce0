#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Loads an HTML report in headless Chromium and says what a user's
browser would see: console errors and uncaught exceptions, every network
request the page made (there must be none), the time until the page set
data-ready="1", the DOM after the scripts ran, a screenshot, and the
values of JavaScript expressions evaluated in the page.

Chromium is driven through the DevTools protocol on a pipe
(--remote-debugging-pipe: JSON messages separated by NUL on fds 3 and 4),
so nothing but the standard library is needed.

usage: html_check.py PAGE.html [--dom OUT.html] [--screenshot OUT.png]
                     [--eval EXPR]... [--expect ID:ROW:COLUMN=VALUE]...
                     [--timeout S] [--width W --height H]
--expect checks a cell of the table inside the element with id ID: the row
whose first cell reads ROW, the column headed COLUMN; VALUE is compared
with the cell's exact value (data-v) when it has one, else its text. The
--eval expressions run before the checks (to select a thread, search, ...).
Prints one JSON object; exit 0 when the page became ready with no error
and no request, 1 otherwise, 2 when Chromium cannot be started.
"""
import argparse
import base64
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time


# The header labels and cell values (data-v, else text) of the first table
# inside the element with the given id.
TABLE_JS = """(function (id) {
  const el = document.getElementById(id), t = el && el.querySelector('table');
  if (!t) return null;
  const cells = tr => Array.from(tr.children, c => c.hasAttribute('data-v') ? c.getAttribute('data-v') : c.textContent);
  return {head: Array.from(t.tHead.rows[0].children, c => c.textContent),
          rows: Array.from(t.tBodies[0].rows, cells)};
})(%s)"""


class Browser:
    def __init__(self, exe, profile):
        to_child_r, self.to_child = os.pipe()
        self.from_child, from_child_w = os.pipe()

        def fds():  # in the child: the pipe ends at fds 3 and 4, as Chromium wants them
            r, w = os.dup(to_child_r), os.dup(from_child_w)
            os.dup2(r, 3)
            os.dup2(w, 4)
            os.set_inheritable(3, True)
            os.set_inheritable(4, True)

        args = [exe, '--headless=new', '--no-sandbox', '--disable-gpu', '--no-first-run',
                '--no-default-browser-check', '--disable-extensions', '--disable-background-networking',
                '--disable-component-update', '--disable-sync', '--mute-audio', '--hide-scrollbars',
                '--user-data-dir=' + profile, '--remote-debugging-pipe', 'about:blank']
        self.proc = subprocess.Popen(args, preexec_fn=fds, pass_fds=(3, 4),
                                     stdout=subprocess.DEVNULL, stderr=(None if os.environ.get("HTML_CHECK_DEBUG") else subprocess.DEVNULL))
        os.close(to_child_r)
        os.close(from_child_w)
        self.buf = b''
        self.next_id = 0
        self.events = []

    def send(self, method, params=None, session=None):
        self.next_id += 1
        msg = {'id': self.next_id, 'method': method, 'params': params or {}}
        if session:
            msg['sessionId'] = session
        os.write(self.to_child, json.dumps(msg).encode() + b'\0')
        return self.next_id

    def read(self, deadline):
        while b'\0' not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.from_child], [], [], left)[0]:
                raise TimeoutError('no answer from chromium')
            chunk = os.read(self.from_child, 1 << 20)
            if not chunk:
                raise EOFError('chromium closed the pipe')
            self.buf += chunk
        msg, self.buf = self.buf.split(b'\0', 1)
        return json.loads(msg)

    def call(self, method, params=None, session=None, timeout=30):
        want = self.send(method, params, session)
        deadline = time.monotonic() + timeout
        while True:
            m = self.read(deadline)
            if m.get('id') == want:
                if 'error' in m:
                    raise RuntimeError('%s: %s' % (method, m['error'].get('message')))
                return m.get('result', {})
            if 'method' in m:
                self.events.append(m)

    def pump(self, seconds):
        deadline = time.monotonic() + seconds
        try:
            while True:
                self.events.append(self.read(deadline))
        except TimeoutError:
            pass

    def close(self):
        try:
            self.send('Browser.close')
            self.proc.wait(timeout=10)
        except Exception:
            self.proc.kill()
            self.proc.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('page')
    ap.add_argument('--dom')
    ap.add_argument('--screenshot')
    ap.add_argument('--eval', action='append', default=[])
    ap.add_argument('--expect', action='append', default=[])
    ap.add_argument('--timeout', type=float, default=30)
    ap.add_argument('--width', type=int, default=1400)
    ap.add_argument('--height', type=int, default=1000)
    a = ap.parse_args()
    exe = shutil.which('chromium') or shutil.which('chromium-browser') or shutil.which('google-chrome')
    if not exe:
        print('html_check: chromium not found (Debian package chromium; scripts/install-deps.sh installs it)',
              file=sys.stderr)
        return 2
    url = 'file://' + os.path.abspath(a.page)
    out = {'page': a.page, 'errors': [], 'requests': [], 'ready_ms': None, 'evals': []}
    with tempfile.TemporaryDirectory(prefix='strobe-html-check-') as profile:
        b = Browser(exe, profile)
        try:
            target = b.call('Target.createTarget', {'url': 'about:blank'})['targetId']
            s = b.call('Target.attachToTarget', {'targetId': target, 'flatten': True})['sessionId']
            for domain in ('Runtime', 'Log', 'Network', 'Page'):
                b.call(domain + '.enable', session=s)
            b.call('Emulation.setDeviceMetricsOverride',
                   {'width': a.width, 'height': a.height, 'deviceScaleFactor': 1, 'mobile': False}, session=s)
            b.events.clear()
            t0 = time.monotonic()
            b.call('Page.navigate', {'url': url}, session=s)
            while True:
                r = b.call('Runtime.evaluate', {'expression': "document.body && document.body.getAttribute('data-ready')",
                                                'returnByValue': True}, session=s)
                if r.get('result', {}).get('value') == '1':
                    out['ready_ms'] = round(1000 * (time.monotonic() - t0), 1)
                    break
                if time.monotonic() - t0 > a.timeout:
                    out['errors'].append('the page did not set data-ready within %g s' % a.timeout)
                    break
                time.sleep(0.02)
            for expr in a.eval:
                r = b.call('Runtime.evaluate', {'expression': expr, 'returnByValue': True,
                                                'awaitPromise': True}, session=s)
                if 'exceptionDetails' in r:
                    out['errors'].append('eval %s: %s' % (expr, r['exceptionDetails'].get('text')))
                    out['evals'].append(None)
                else:
                    out['evals'].append(r.get('result', {}).get('value'))
            for e in a.expect:
                try:
                    where, value = e.rsplit('=', 1)
                    tid, row, col = where.split(':', 2)
                except ValueError:
                    out['errors'].append('--expect %s: not ID:ROW:COLUMN=VALUE' % e)
                    continue
                r = b.call('Runtime.evaluate', {'expression': TABLE_JS % json.dumps(tid), 'returnByValue': True},
                           session=s)
                t = r.get('result', {}).get('value')
                if not t:
                    out['errors'].append('--expect %s: no table in #%s' % (e, tid))
                    continue
                if col not in t['head']:
                    out['errors'].append('--expect %s: no column %r (columns %s)' % (e, col, t['head']))
                    continue
                got = [c[t['head'].index(col)] for c in t['rows'] if c and c[0] == row]
                if got != [value]:
                    out['errors'].append('--expect %s: found %s' % (e, got or 'no such row'))
            b.pump(0.3)  # late console messages
            if a.dom:
                r = b.call('Runtime.evaluate', {'expression': 'document.documentElement.outerHTML',
                                                'returnByValue': True}, session=s)
                with open(a.dom, 'w') as f:
                    f.write(r['result']['value'])
            if a.screenshot:
                r = b.call('Page.captureScreenshot', {'format': 'png'}, session=s, timeout=60)
                data = base64.b64decode(r['data'])
                with open(a.screenshot, 'wb') as f:
                    f.write(data)
                out['screenshot_bytes'] = len(data)
        except Exception as e:  # the browser died or hung: that is a failure of the page check
            out['errors'].append('chromium: %s' % e)
        finally:
            b.close()
    for ev in b.events:
        m, p = ev.get('method'), ev.get('params', {})
        if m == 'Runtime.exceptionThrown':
            d = p.get('exceptionDetails', {})
            out['errors'].append('exception: %s %s' % (d.get('text'), d.get('exception', {}).get('description', '')))
        elif m == 'Runtime.consoleAPICalled' and p.get('type') in ('error', 'assert', 'warning'):
            out['errors'].append('console.%s: %s' % (p['type'], ' '.join(
                str(x.get('value', x.get('description', ''))) for x in p.get('args', []))))
        elif m == 'Log.entryAdded' and p.get('entry', {}).get('level') in ('error', 'warning'):
            out['errors'].append('log: %s' % p['entry'].get('text'))
        elif m == 'Network.requestWillBeSent':
            u = p.get('request', {}).get('url', '')
            if u != url:
                out['requests'].append(u)
    print(json.dumps(out, indent=1))
    return 0 if not out['errors'] and not out['requests'] and out['ready_ms'] is not None else 1


if __name__ == '__main__':
    sys.exit(main())
