"""An MCP server on the Python SDK 2.x low-level `Server` (mcp 2.3.0) whose tool set changes between runs, for checks
1.2, 1.3 and 7.2.2. Usage: python server.py PORT STATE_FILE [--gate] [--no-sender] [--stray-token]

STATE_FILE is read on every request that lists tools or capabilities: when it holds the word `staged`, the server
advertises one more tool, `beta_export`, and one more capability (`experimental.stagedTools`), the configuration change a
re-approval should catch (1.2 FAIL against a bundle taken before). Without `--gate` a call of `beta_export` executes
(1.3 FAIL); with `--gate` it answers isError "tool pending approval" (1.3 PASS).

`echo(text)` (annotated readOnlyHint) reports progress against the caller's progressToken and logs one message, on
the request's own response stream (the log message only on the handshake revisions: 2026-07-28 sends one only to a
request that opted in). Each notification carries `_meta["io.modelcontextprotocol/serverInfo"]` (the
server's identity, as 2026-07-28 stamps results) unless `--no-sender` (7.2.2f FAIL on 2026-07-28). `--stray-token` adds a
progress notification for a token no request sent (7.2.2a FAIL)."""
import sys

import mcp_types as types
import uvicorn
from mcp.server.lowlevel.server import Server

PORT = int(sys.argv[1])
STATE = sys.argv[2]
FLAGS = set(sys.argv[3:])
SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
BASE_TOOLS = [
    types.Tool(name="echo", description="Echo text back, reporting progress.", input_schema=SCHEMA,
               annotations=types.ToolAnnotations(read_only_hint=True)),
    types.Tool(name="add", description="Add two integers.",
               input_schema={"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                             "required": ["a", "b"]}),
]
STAGED = types.Tool(name="beta_export", description="Export everything (new in this release).",
                    input_schema={"type": "object"})


def staged() -> bool:
    try:
        with open(STATE, encoding="utf-8") as f:
            return "staged" in f.read()
    except FileNotFoundError:
        return False


class StagedServer(Server):
    """Adds `experimental.stagedTools` to the advertised capabilities while the state file says so."""

    def get_capabilities(self, notification_options=None, experimental_capabilities=None, extensions=None, **kw):
        if staged():
            experimental_capabilities = {**(experimental_capabilities or {}), "stagedTools": {}}
        return super().get_capabilities(notification_options, experimental_capabilities, extensions, **kw)


def sender() -> dict:
    return {} if "--no-sender" in FLAGS else {"_meta": {types.SERVER_INFO_META_KEY: server.server_info_stamp}}


async def list_tools(ctx, params):
    return types.ListToolsResult(tools=BASE_TOOLS + ([STAGED] if staged() else []))


async def notify(ctx, method: str, params: dict) -> None:
    await ctx.session.send_notification(
        types.server_notification_adapter.validate_python({"method": method, "params": {**params, **sender()}}),
        related_request_id=ctx.request_id)


async def call_tool(ctx, params: types.CallToolRequestParams):
    args = params.arguments or {}
    if params.name == "echo":
        meta = dict(params.meta or {})
        token = meta.get("progress_token", meta.get("progressToken"))
        if token is not None:
            await notify(ctx, "notifications/progress", {"progressToken": token, "progress": 1, "total": 1})
        if "--stray-token" in FLAGS:
            await notify(ctx, "notifications/progress", {"progressToken": "never-issued", "progress": 1})
        if ctx.protocol_version != "2026-07-28":
            # 2026-07-28 sends log messages only to a request that opted in with a log level.
            await notify(ctx, "notifications/message", {"level": "info", "data": f"echo {args.get('text')!r}"})
        return types.CallToolResult(content=[types.TextContent(text=str(args.get("text")))])
    if params.name == "add":
        return types.CallToolResult(content=[types.TextContent(text=str(int(args.get("a", 0)) + int(args.get("b", 0))))])
    if params.name == "beta_export" and staged():
        if "--gate" in FLAGS:
            return types.CallToolResult(is_error=True, content=[types.TextContent(
                text="tool pending approval: beta_export was added after the approved configuration")])
        return types.CallToolResult(content=[types.TextContent(text="exported 3 records")])
    return types.CallToolResult(is_error=True, content=[types.TextContent(text=f"Unknown tool: {params.name}")])


server = StagedServer("py-sdk-staged-target", version="1.0.0", on_list_tools=list_tools, on_call_tool=call_tool)

if __name__ == "__main__":
    app = server.streamable_http_app(host="127.0.0.1")
    uvicorn.run(app, host="127.0.0.1", port=PORT, log_level="warning")
