"""Paginated MCP server on the Python SDK 2.x low-level `Server` (mcp 2.3.0): 23 tools and 12 static resources served
5 per page behind `nextCursor`, plus 1 resource template and 1 prompt (single page). MCPServer has no page-size option,
so the list handlers are written against the low-level API with explicit, deterministic cursors.
Usage: python server.py PORT [--stateless] [--json] [--no-dns-protect]"""
import base64
import sys

import mcp_types as types
import uvicorn
from mcp.server.lowlevel.server import Server
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError

PAGE_SIZE = 5
TOOLS = [types.Tool(name=f"tool_{i:02d}", description=f"Paged tool {i:02d}: echoes its text.",
                    input_schema={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})
         for i in range(23)]
RESOURCES = [types.Resource(name=f"item_{i:02d}", uri=f"paged://item/{i:02d}", mime_type="text/plain",
                            description=f"Static item {i:02d}") for i in range(12)]
TEMPLATES = [types.ResourceTemplate(name="item", uri_template="paged://item/{id}", mime_type="text/plain",
                                    description="Any item by id")]
PROMPTS = [types.Prompt(name="review", description="Review code.",
                        arguments=[types.PromptArgument(name="code", description="The code", required=True)])]
SCHEMAS = {t.name: t.input_schema for t in TOOLS}


def cursor_for(kind: str, offset: int) -> str:  # opaque to clients, deterministic for tests
    return base64.urlsafe_b64encode(f"{kind}:{offset}".encode()).decode().rstrip("=")


def page(kind: str, items: list, params: types.PaginatedRequestParams | None) -> tuple[list, str | None]:
    start = 0
    if params is not None and params.cursor is not None:
        try:
            raw = params.cursor + "=" * (-len(params.cursor) % 4)
            k, off = base64.urlsafe_b64decode(raw.encode()).decode().split(":")
            start = int(off)
            if k != kind or not 0 < start < len(items):
                raise ValueError
        except ValueError as e:  # also binascii.Error and UnicodeDecodeError (both ValueError)
            raise MCPError(code=types.INVALID_PARAMS, message=f"Invalid cursor: {params.cursor!r}") from e
    end = start + PAGE_SIZE
    return items[start:end], (cursor_for(kind, end) if end < len(items) else None)


async def list_tools(ctx, params):
    tools, nxt = page("tools", TOOLS, params)
    return types.ListToolsResult(tools=tools, next_cursor=nxt)


async def list_resources(ctx, params):
    resources, nxt = page("resources", RESOURCES, params)
    return types.ListResourcesResult(resources=resources, next_cursor=nxt)


async def list_resource_templates(ctx, params):
    return types.ListResourceTemplatesResult(resource_templates=TEMPLATES)


async def list_prompts(ctx, params):
    return types.ListPromptsResult(prompts=PROMPTS)


async def call_tool(ctx, params: types.CallToolRequestParams):
    if params.name not in SCHEMAS:
        raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {params.name}")
    text = (params.arguments or {}).get("text")
    if not isinstance(text, str):
        return types.CallToolResult(content=[types.TextContent(text="argument 'text' (string) is required")],
                                    is_error=True)
    return types.CallToolResult(content=[types.TextContent(text=f"{params.name}: {text}")])


async def read_resource(ctx, params: types.ReadResourceRequestParams):
    uri = str(params.uri)
    prefix = "paged://item/"
    if not uri.startswith(prefix) or not uri[len(prefix):] or "/" in uri[len(prefix):]:
        raise MCPError(code=types.INVALID_PARAMS, message=f"Resource not found: {uri}", data={"uri": uri})
    return types.ReadResourceResult(
        contents=[types.TextResourceContents(uri=uri, mime_type="text/plain", text=f"item {uri[len(prefix):]}")])


async def get_prompt(ctx, params: types.GetPromptRequestParams):
    if params.name != "review":
        raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown prompt: {params.name}")
    code = (params.arguments or {}).get("code")
    if code is None:
        raise MCPError(code=types.INVALID_PARAMS, message="Missing required argument: code")
    return types.GetPromptResult(description="Review code.", messages=[
        types.PromptMessage(role="user", content=types.TextContent(text=f"Please review:\n{code}"))])


server = Server("py-sdk-paged-target", version="1.0.0", get_tool_input_schema=SCHEMAS.get,
                on_list_tools=list_tools, on_call_tool=call_tool,
                on_list_resources=list_resources, on_list_resource_templates=list_resource_templates,
                on_read_resource=read_resource, on_list_prompts=list_prompts, on_get_prompt=get_prompt)

if __name__ == "__main__":
    port = int(sys.argv[1])
    args = set(sys.argv[2:])
    ts = TransportSecuritySettings(enable_dns_rebinding_protection=False) if "--no-dns-protect" in args else None
    app = server.streamable_http_app(host="127.0.0.1", stateless_http="--stateless" in args,
                                     json_response="--json" in args, transport_security=ts)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="info")
