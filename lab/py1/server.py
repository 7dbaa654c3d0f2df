"""mcp 1.x FastMCP server. Usage: python server.py PORT [--stateless] [--json] [--no-dns-protect]"""
import sys
from mcp.server.fastmcp import FastMCP
from mcp.server.transport_security import TransportSecuritySettings
port = int(sys.argv[1]); args = set(sys.argv[2:])
kw = {}
if "--no-dns-protect" in args:
    kw["transport_security"] = TransportSecuritySettings(enable_dns_rebinding_protection=False)
mcp = FastMCP("py-sdk-v1-probe-target", host="127.0.0.1", port=port,
              stateless_http="--stateless" in args, json_response="--json" in args, **kw)
@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b
@mcp.resource("info://server")
def info() -> str:
    """What this server is."""
    return "py1: mcp 1.30.0 FastMCP lab target"
@mcp.resource("greeting://{name}")
def greeting(name: str) -> str:
    """Greet someone by name."""
    return f"Hello, {name}!"
@mcp.prompt()
def review(code: str) -> str:
    """Review code."""
    return f"Please review:\n{code}"
mcp.run(transport="streamable-http")
