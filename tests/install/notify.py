#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# strobed under a stand-in for systemd's notification socket (Type=notify):
# prints what it says when started, on SIGHUP (reload) and on SIGTERM.
#   notify.py STROBED
import os, signal, socket, subprocess, sys

path = os.path.join(os.getcwd(), 'notify.sock')
if os.path.exists(path):
    os.unlink(path)
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
s.settimeout(20)
probe = socket.socket()
probe.bind(('127.0.0.1', 0))
port = probe.getsockname()[1]
probe.close()
p = subprocess.Popen([sys.argv[1], '--listen', f'127.0.0.1:{port}', '--sample', 'meminfo', '--producer', 'n1'],
                     env=dict(os.environ, NOTIFY_SOCKET=path), stderr=subprocess.DEVNULL)
print(s.recv(4096).decode())
p.send_signal(signal.SIGHUP)
print(s.recv(4096).decode())
print(s.recv(4096).decode())
p.send_signal(signal.SIGTERM)
print(s.recv(4096).decode())
print('exit', p.wait())
