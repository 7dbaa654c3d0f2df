"""MCP server on the Python SDK 2.x (MCPServer) over stdio: the lab's stdio targets.

Usage: python py2_stdio.py [--log-to-stdout] [--api-key KEY] [--hang] [--exit-now]
  --log-to-stdout  print a log line on stdout before serving (5.3.1 FAIL: logs mixed into
                   the protocol stream)
  --api-key KEY    take a credential on the command line (3.1.1 FAIL); the key is echoed
                   to stderr so a test can prove the collector redacts it there too
  --hang           never answer: read stdin and say nothing (the per-target deadline)
  --exit-now       exit at once with status 7 (a server that exits before any traffic)
Environment: LAB_STDIO_SECRET, when set, is echoed to stderr (a test proves the value is
redacted in the bundle)."""
import os
import sys
import time

args = sys.argv[1:]
if "--exit-now" in args:
    sys.stderr.write("py2-stdio: exiting at once\n")
    sys.exit(7)
if "--hang" in args:
    sys.stderr.write("py2-stdio: hanging\n")
    sys.stderr.flush()
    for _ in sys.stdin:
        pass
    time.sleep(3600)
    sys.exit(0)
if "--api-key" in args:
    key = args[args.index("--api-key") + 1]
    sys.stderr.write(f"py2-stdio: using api key {key}\n")
secret = os.environ.get("LAB_STDIO_SECRET")
if secret:
    sys.stderr.write(f"py2-stdio: LAB_STDIO_SECRET is {secret}\n")
if "--log-to-stdout" in args:
    # The bug 5.3.1 is about: a log line on the protocol stream.
    print("INFO py2-stdio starting up", flush=True)
sys.stderr.flush()

from mcp.server import MCPServer  # noqa: E402

mcp = MCPServer("py-sdk-stdio-probe-target", version="1.0.0")


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@mcp.tool()
def echo(text: str) -> str:
    """Echo text back."""
    return text


@mcp.resource("info://server")
def info() -> str:
    """What this server is."""
    return "py2-stdio: mcp 2.3.0 MCPServer lab target over stdio"


@mcp.resource("greeting://{name}")
def greeting(name: str) -> str:
    """Greet someone by name."""
    return f"Hello, {name}!"


@mcp.prompt()
def review(code: str) -> str:
    """Review code."""
    return f"Please review:\n{code}"


mcp.run("stdio")
