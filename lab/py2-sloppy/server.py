"""A sloppy MCP server on the Python SDK 2.x low-level `Server` (mcp 2.3.0): declarations that the SDK lets through
but that the benchmark's Section 5 checks must fail. One tool whose inputSchema does not compile (`"type": 12`), a
resource template without a mimeType, a prompt argument with a blank name; and a well-formed tool, resource, template
and prompt beside them so the failures are the only findings.
Usage: python server.py PORT"""
import sys

import mcp_types as types
import uvicorn
from mcp.server.lowlevel.server import Server
from mcp.shared.exceptions import MCPError

GOOD_SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
TOOLS = [
    types.Tool(name="echo", description="Echo text back.", input_schema=GOOD_SCHEMA),
    # 12 is not a JSON Schema type name: the schema fails its 2020-12 metaschema (5.1.1a).
    types.Tool(name="broken_schema", description="Declares an uncompilable schema.",
               input_schema={"type": "object", "properties": {"n": {"type": 12}}}),
]
RESOURCES = [types.Resource(name="info", uri="sloppy://info", mime_type="text/plain", description="About.")]
TEMPLATES = [
    types.ResourceTemplate(name="item", uri_template="sloppy://item/{id}", mime_type="text/plain"),
    # No mimeType: optional in MCP, required by the benchmark (5.1.2b).
    types.ResourceTemplate(name="blob", uri_template="sloppy://blob/{id}"),
]
PROMPTS = [
    types.Prompt(name="review", description="Review code.",
                 arguments=[types.PromptArgument(name="code", required=True)]),
    # A blank argument name (5.1.3a).
    types.Prompt(name="blank", description="Has an unnamed argument.",
                 arguments=[types.PromptArgument(name="", required=False)]),
]


async def list_tools(ctx, params):
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(ctx, params: types.CallToolRequestParams):
    if params.name != "echo":
        raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {params.name}")
    return types.CallToolResult(content=[types.TextContent(text=str((params.arguments or {}).get("text")))])


async def list_resources(ctx, params):
    return types.ListResourcesResult(resources=RESOURCES)


async def list_resource_templates(ctx, params):
    return types.ListResourceTemplatesResult(resource_templates=TEMPLATES)


async def read_resource(ctx, params: types.ReadResourceRequestParams):
    uri = str(params.uri)
    return types.ReadResourceResult(contents=[types.TextResourceContents(uri=uri, mime_type="text/plain", text=uri)])


async def list_prompts(ctx, params):
    return types.ListPromptsResult(prompts=PROMPTS)


async def get_prompt(ctx, params: types.GetPromptRequestParams):
    if params.name not in ("review", "blank"):
        raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown prompt: {params.name}")
    return types.GetPromptResult(messages=[
        types.PromptMessage(role="user", content=types.TextContent(text=str(params.arguments or {})))])


server = Server("py-sdk-sloppy-target", version="1.0.0",
                on_list_tools=list_tools, on_call_tool=call_tool,
                on_list_resources=list_resources, on_list_resource_templates=list_resource_templates,
                on_read_resource=read_resource, on_list_prompts=list_prompts, on_get_prompt=get_prompt)

if __name__ == "__main__":
    port = int(sys.argv[1])
    app = server.streamable_http_app(host="127.0.0.1")
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="info")
