"""A minimal MCP server over stdio (standard library only) for the --from-config tests.

Usage: python config_stdio.py MARKER
  MARKER  a file created at start: its existence proves the command ran.
Environment: every variable whose name ends in _SECRET is echoed to stderr, so a test can
prove the collector redacts the value in the bundle, stdout and stderr.

Answers `initialize` (echoing the offered protocolVersion), the list methods (empty),
`ping`; any other request gets JSON-RPC error -32601; notifications are ignored.
"""
import json
import os
import sys

if len(sys.argv) > 1:
    with open(sys.argv[1], "w") as f:
        f.write("ran\n")
for name, value in sorted(os.environ.items()):
    if name.endswith("_SECRET"):
        sys.stderr.write(f"config-stdio: {name}={value}\n")
sys.stderr.flush()

LISTS = {
    "tools/list": "tools",
    "resources/list": "resources",
    "resources/templates/list": "resourceTemplates",
    "prompts/list": "prompts",
}

for line in sys.stdin:
    line = line.strip()
    if not line:
        continue
    try:
        msg = json.loads(line)
    except ValueError:
        continue
    if not isinstance(msg, dict) or "id" not in msg or "method" not in msg:
        continue
    method = msg["method"]
    if method == "initialize":
        offered = (msg.get("params") or {}).get("protocolVersion", "2025-11-25")
        result = {
            "protocolVersion": offered,
            "capabilities": {"tools": {}, "resources": {}, "prompts": {}},
            "serverInfo": {"name": "config-stdio", "version": "1.0.0"},
        }
        reply = {"jsonrpc": "2.0", "id": msg["id"], "result": result}
    elif method in LISTS:
        reply = {"jsonrpc": "2.0", "id": msg["id"], "result": {LISTS[method]: []}}
    elif method == "ping":
        reply = {"jsonrpc": "2.0", "id": msg["id"], "result": {}}
    else:
        reply = {
            "jsonrpc": "2.0",
            "id": msg["id"],
            "error": {"code": -32601, "message": f"method not found: {method}"},
        }
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
