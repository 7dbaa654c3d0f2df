"""MCP server on the Python SDK 2.x (MCPServer). Usage: python server.py PORT [--stateless] [--json] [--no-dns-protect] [--version=X]
--version=X changes the serverInfo version (identity drift for check 1.4; default 1.0.0)."""
import sys
from mcp.server import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
port = int(sys.argv[1])
args = set(sys.argv[2:])
version = next((a.split("=", 1)[1] for a in args if a.startswith("--version=")), "1.0.0")
mcp = MCPServer("py-sdk-probe-target", version=version)
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
    return "py2: mcp 2.3.0 MCPServer lab target"
@mcp.resource("greeting://{name}")
def greeting(name: str) -> str:
    """Greet someone by name."""
    return f"Hello, {name}!"
@mcp.prompt()
def review(code: str) -> str:
    """Review code."""
    return f"Please review:\n{code}"
ts = TransportSecuritySettings(enable_dns_rebinding_protection=False) if "--no-dns-protect" in args else None
mcp.run("streamable-http", host="127.0.0.1", port=port,
        stateless_http="--stateless" in args, json_response="--json" in args,
        transport_security=ts)
