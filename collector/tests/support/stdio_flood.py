"""A hostile stdio MCP server for collector/tests/stdio_flood.rs.

    stdio_flood.py MODE PIDFILE [answer]

It writes its own pid and the pid of a `sleep` grandchild to PIDFILE, ignores SIGTERM,
and never exits on its own: not when its stdin closes, not when its stdout breaks (the
collector must kill its process group). `server/discover` is refused (-32601), so the
collector falls back to `initialize`, which is answered; then it misbehaves as MODE says:

    notify   valid JSON-RPC notifications on stdout, without pause
    junk     lines that are not JSON, without pause
    empty    empty lines, without pause
    endless  one line that never ends (no newline), without pause
    foreign  JSON-RPC responses to ids never sent, without pause
    stderr   endless bytes on stderr (stdout stays quiet)
    preinit  junk lines from the start, before anything is read from stdin

With `answer`, the flood is a burst (3 MiB), then each request read after `initialize`
is answered behind a hundred more lines of the mode (`tools/list` with one tool,
anything else with -32601); stderr mode answers at once. Without it nothing is answered.
"""

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time

MODE = sys.argv[1]
PIDFILE = sys.argv[2]
ANSWER = len(sys.argv) > 3 and sys.argv[3] == "answer"

signal.signal(signal.SIGTERM, signal.SIG_IGN)
grandchild = subprocess.Popen(["sleep", "300"], stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
with open(PIDFILE + ".tmp", "w") as f:
    f.write(f"{os.getpid()} {grandchild.pid}\n")
os.replace(PIDFILE + ".tmp", PIDFILE)

out = sys.stdout.buffer
requests = queue.Queue()
initialized = threading.Event()


def write(b):
    try:
        out.write(b)
        out.flush()
        return True
    except (BrokenPipeError, OSError, ValueError):
        return False


def answer(msg):
    mid = msg.get("id")
    method = msg.get("method", "")
    if method == "server/discover":
        r = {"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "no"}}
    elif method == "initialize":
        r = {"jsonrpc": "2.0", "id": mid, "result": {
            "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
            "serverInfo": {"name": "flood", "version": "1"}}}
    elif method == "tools/list":
        r = {"jsonrpc": "2.0", "id": mid, "result": {"tools": [
            {"name": "echo", "inputSchema": {"type": "object"}}]}}
    else:
        r = {"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "no"}}
    return (json.dumps(r) + "\n").encode()


def read_stdin():
    for line in sys.stdin.buffer:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if not isinstance(msg, dict) or "id" not in msg:
            continue
        if not initialized.is_set():
            write(answer(msg))
            if msg.get("method") == "initialize":
                initialized.set()
        else:
            requests.put(msg)
    # stdin closed: keep running regardless.


def forever():
    while True:
        time.sleep(3600)


def block_of(line, size=64 << 10):
    return line * max(1, size // len(line))


BLOCKS = {
    "notify": block_of(b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"flood flood flood"}}\n'),
    "junk": block_of(b"INFO this is not a protocol message, it is a log line\n"),
    "empty": block_of(b"\n"),
    "endless": block_of(b"x"),
    "preinit": block_of(b"starting up... not JSON\n"),
}


def foreign_block(n):
    return b"".join(
        (json.dumps({"jsonrpc": "2.0", "id": 10_000_000 + n + i, "result": {}}) + "\n").encode()
        for i in range(1000))


def answering():
    block = BLOCKS.get(MODE, b"")
    line = block[:block.index(b"\n") + 1] if b"\n" in block else b""
    sent = 0
    while MODE != "stderr" and sent < 3 << 20:
        if not write(block):
            return
        sent += len(block)
    while True:
        msg = requests.get()
        if not write(line * 100 + answer(msg)):
            return


def flood():
    n = 0
    while True:
        if MODE == "stderr":
            try:
                sys.stderr.buffer.write(b"e" * 65536)
                sys.stderr.buffer.flush()
            except (BrokenPipeError, OSError, ValueError):
                return
            continue
        block = foreign_block(n) if MODE == "foreign" else BLOCKS[MODE]
        n += 1000
        if not write(block):
            return


if MODE == "preinit":
    # Flood before anything is read: the collector's first message waits behind it.
    while write(BLOCKS["preinit"]):
        pass
    forever()

threading.Thread(target=read_stdin, daemon=True).start()
initialized.wait()
if ANSWER:
    if MODE == "stderr":
        threading.Thread(target=flood, daemon=True).start()
    answering()
else:
    flood()
forever()
