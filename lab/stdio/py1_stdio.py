"""MCP server on the Python SDK 1.x (FastMCP, mcp 1.30.0) over stdio: a legacy-only server
(no server/discover), so the collector falls back to initialize. Usage: python py1_stdio.py"""
from mcp.server.fastmcp import FastMCP

mcp = FastMCP("py-sdk-v1-stdio-probe-target")


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@mcp.resource("info://server")
def info() -> str:
    """What this server is."""
    return "py1-stdio: mcp 1.x FastMCP lab target over stdio"


mcp.run("stdio")
