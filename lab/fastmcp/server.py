"""Minimal standalone-fastmcp server. Start with:  fastmcp run server.py -t http --host 127.0.0.1 -p PORT [--stateless]
Env: FASTMCP_JSON_RESPONSE=true, FASTMCP_STATELESS_HTTP=true, FASTMCP_HTTP_HOST_ORIGIN_PROTECTION=auto|true|false"""
from fastmcp import FastMCP
mcp = FastMCP("fastmcp-probe-target", version="1.0.0")
@mcp.tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b
@mcp.tool
def echo(text: str) -> str:
    """Echo text back."""
    return text
@mcp.resource("info://server")
def info() -> str:
    """What this server is."""
    return "fastmcp: fastmcp 4.2.3 lab target"
@mcp.resource("greeting://{name}")
def greeting(name: str) -> str:
    """Greet someone by name."""
    return f"Hello, {name}!"
@mcp.prompt
def review(code: str) -> str:
    """Review code."""
    return f"Please review:\n{code}"
