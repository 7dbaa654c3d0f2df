"""mcp 1.30.0 FastMCP on the legacy HTTP+SSE transport (2024-11-05): GET /sse, POST /messages/.
Usage: python server.py PORT"""
import sys
from mcp.server.fastmcp import FastMCP
port = int(sys.argv[1])
mcp = FastMCP("py1-sse-probe-target", host="127.0.0.1", port=port)
@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b
@mcp.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text
@mcp.tool()
def shout(text: str) -> str:
    """Upper-case the text."""
    return text.upper()
@mcp.resource("info://server")
def info() -> str:
    """What this server is."""
    return "py1-sse: mcp 1.30.0 FastMCP over HTTP+SSE"
@mcp.resource("greeting://{name}")
def greeting(name: str) -> str:
    """Greet someone by name."""
    return f"Hello, {name}!"
@mcp.prompt()
def review(code: str) -> str:
    """Review code."""
    return f"Please review:\n{code}"
mcp.run(transport="sse")
