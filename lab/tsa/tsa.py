#!/usr/bin/env python3
"""A local RFC 3161 time-stamping authority for tests: `openssl ts -reply` behind HTTP.

Usage: lab/tsa/tsa.py DIR [PORT]   (DIR made by lab/tsa/make-certs.sh; PORT 0 = any free)
Prints "listening PORT" on stdout once it accepts connections. Loopback only.

Paths:
  /tsa      a real reply (the query piped to `openssl ts -reply`)
  /garbage  200 with bytes that are not a TimeStampResp
  /reject   200 with a TimeStampResp whose status is rejection
  /other    a real, granted reply to another query (wrong imprint and nonce)
  /slow     never answers (the client's timeout must end it)
  anything else: 404
"""
import os
import subprocess
import sys
import tempfile
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DIR = os.path.abspath(sys.argv[1])
PORT = int(sys.argv[2]) if len(sys.argv) > 2 else 0
MAX_QUERY = 16 * 1024


def reply_to(query: bytes) -> bytes:
    with tempfile.TemporaryDirectory() as t:
        q, r = os.path.join(t, "q.tsq"), os.path.join(t, "r.tsr")
        with open(q, "wb") as f:
            f.write(query)
        subprocess.run(
            ["openssl", "ts", "-reply", "-config", os.path.join(DIR, "tsa.cnf"),
             "-queryfile", q, "-out", r],
            check=True, capture_output=True)
        with open(r, "rb") as f:
            return f.read()


def other_query() -> bytes:
    with tempfile.TemporaryDirectory() as t:
        d = os.path.join(t, "d")
        with open(d, "wb") as f:
            f.write(os.urandom(32))
        out = subprocess.run(["openssl", "ts", "-query", "-data", d, "-sha256", "-cert"],
                             check=True, capture_output=True)
        return out.stdout


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send(self, status, body, ctype="application/timestamp-reply"):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        if n > MAX_QUERY:
            return self.send(413, b"too large", "text/plain")
        query = self.rfile.read(n)
        if self.path == "/tsa":
            try:
                return self.send(200, reply_to(query))
            except subprocess.CalledProcessError as e:
                return self.send(400, e.stderr or b"bad query", "text/plain")
        if self.path == "/garbage":
            return self.send(200, b"<html>this is not a timestamp</html>")
        if self.path == "/reject":
            return self.send(200, bytes([0x30, 0x05, 0x30, 0x03, 0x02, 0x01, 0x02]))
        if self.path == "/other":
            return self.send(200, reply_to(other_query()))
        if self.path == "/slow":
            time.sleep(3600)
        return self.send(404, b"not found", "text/plain")


server = ThreadingHTTPServer(("127.0.0.1", PORT), Handler)
server.daemon_threads = True
print(f"listening {server.server_address[1]}", flush=True)
server.serve_forever()
