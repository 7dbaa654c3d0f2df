"""A file-serving MCP server on the Python SDK 2.x low-level `Server` (mcp 2.3.0), for the path-traversal check 5.4.1
and the missing-resource read of 5.1.2c. It serves the files under `root/` (next to this script) as
`file:///<path relative to root>`, through the template `file:///{path}`; its tool and prompt lists are empty.

Usage: python server.py PORT [--naive]

Default: the path after `file:///` is percent-decoded, joined onto the root, canonicalised (realpath: symlinks and `..`
resolved) and refused with -32602 unless it stays inside the root; a missing file is -32602 as well.
--naive: the path is percent-decoded and joined onto the root with lexical `..` removal only (os.path.normpath) and no
containment check, so `file:///docs/readme.txt/../../../../etc/passwd` reads /etc/passwd (5.4.1 must FAIL); a missing
file is answered with an empty `contents` list instead of an error (5.1.2c must FAIL).

The SDK hands `params.uri` to the handler as the string sent (mcp_types declares `uri: str`, no URL model), so no dot
segment is removed before the handler sees it."""
import os
import sys
import urllib.parse

import mcp_types as types
import uvicorn
from mcp.server.lowlevel.server import Server
from mcp.shared.exceptions import MCPError

ROOT = os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "root"))
PREFIX = "file:///"
NAIVE = "--naive" in sys.argv[2:]


def listed():
    out = []
    for d, _, files in sorted(os.walk(ROOT)):
        for f in sorted(files):
            rel = os.path.relpath(os.path.join(d, f), ROOT)
            out.append(types.Resource(name=rel, uri=PREFIX + rel, mime_type="text/plain"))
    return out


def locate(uri: str) -> str:
    if not uri.startswith(PREFIX):
        raise MCPError(code=types.INVALID_PARAMS, message=f"Resource not found: {uri}")
    rel = urllib.parse.unquote(uri[len(PREFIX):])
    if NAIVE:
        return os.path.normpath(os.path.join(ROOT, rel))
    path = os.path.realpath(os.path.join(ROOT, rel))
    if os.path.commonpath([ROOT, path]) != ROOT:
        raise MCPError(code=types.INVALID_PARAMS, message=f"Resource not found: {uri}")
    return path


async def list_tools(ctx, params):
    return types.ListToolsResult(tools=[])


async def list_prompts(ctx, params):
    return types.ListPromptsResult(prompts=[])


async def list_resources(ctx, params):
    return types.ListResourcesResult(resources=listed())


async def list_resource_templates(ctx, params):
    return types.ListResourceTemplatesResult(resource_templates=[
        types.ResourceTemplate(name="file", uri_template=PREFIX + "{path}", mime_type="text/plain")])


async def read_resource(ctx, params: types.ReadResourceRequestParams):
    uri = params.uri
    path = locate(uri)
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        if NAIVE:
            return types.ReadResourceResult(contents=[])
        raise MCPError(code=types.INVALID_PARAMS, message=f"Resource not found: {uri}")
    return types.ReadResourceResult(contents=[types.TextResourceContents(uri=uri, mime_type="text/plain", text=text)])


server = Server("py-sdk-files-target", version="1.0.0",
                on_list_tools=list_tools, on_list_prompts=list_prompts, on_list_resources=list_resources, on_list_resource_templates=list_resource_templates,
                on_read_resource=read_resource)

if __name__ == "__main__":
    port = int(sys.argv[1])
    app = server.streamable_http_app(host="127.0.0.1")
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="info")
