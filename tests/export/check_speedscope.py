#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Opens a pprof export in speedscope (the npm package's built app, from
the directory given) in headless Chromium and prints what its Sandwich
view lists: one line per function, "name total self", as speedscope
imported them. speedscope refuses profile URLs from file://, so both are
served from a loopback HTTP server; the page's only outside request (a
Google font) fails offline, which speedscope survives.

usage: check_speedscope.py SPEEDSCOPE_RELEASE_DIR PROFILE.pb.gz
exit 0 when speedscope imported the file as pprof and listed functions."""
import functools
import http.server
import os
import shutil
import socketserver
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'report'))
from html_check import Browser  # noqa: E402

# the Sandwich view's table: name, total, self per row
ROWS_JS = """(function () {
  const tabs = Array.from(document.querySelectorAll('div')).filter(d => d.textContent === '\U0001f96aSandwich');
  if (tabs.length) tabs[tabs.length - 1].click();
  return document.body.innerText;
})()"""


def main():
    release, prof = sys.argv[1], os.path.abspath(sys.argv[2])

    class Handler(http.server.SimpleHTTPRequestHandler):
        def translate_path(self, path):
            path = path.split('?')[0].split('#')[0]
            return prof if path == '/profile/' + os.path.basename(prof) else release + path

        def log_message(self, *args):
            pass

    srv = socketserver.TCPServer(('127.0.0.1', 0), Handler)
    port = srv.server_address[1]
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    imported = False
    text = ''
    with tempfile.TemporaryDirectory() as profile:
        b = Browser(shutil.which('chromium'), profile)
        try:
            t = b.call('Target.createTarget', {'url': 'about:blank'})['targetId']
            s = b.call('Target.attachToTarget', {'targetId': t, 'flatten': True})['sessionId']
            b.call('Runtime.enable', session=s)
            b.call('Page.navigate', {'url': 'http://127.0.0.1:%d/index.html#profileURL=http://127.0.0.1:%d/profile/%s'
                                     % (port, port, os.path.basename(prof))}, session=s)
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and not text:
                r = b.call('Runtime.evaluate', {'expression': 'document.title', 'returnByValue': True}, session=s)
                if r['result'].get('value', '').startswith(os.path.basename(prof)):
                    time.sleep(0.5)
                    text = b.call('Runtime.evaluate', {'expression': ROWS_JS, 'returnByValue': True},
                                  session=s)['result'].get('value', '')
                time.sleep(0.1)
            b.pump(0.5)
            text = b.call('Runtime.evaluate', {'expression': 'document.body.innerText', 'returnByValue': True},
                          session=s)['result'].get('value', '')
        finally:
            b.close()
    for e in b.events:
        if e.get('method') == 'Runtime.consoleAPICalled':
            for a in e['params'].get('args', []):
                imported |= a.get('value') == 'Importing as protobuf encoded pprof file'
    print(text)
    if not imported:
        print('check_speedscope: speedscope did not import %s as pprof' % prof, file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
