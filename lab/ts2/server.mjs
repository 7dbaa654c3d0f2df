// MCP server on @modelcontextprotocol/server 2.4.0 + node 2.1.2: 2026-07-28, and 2025-era traffic statelessly unless rejected.
// Usage: node server.mjs PORT [--reject-legacy] [--guards] [--json]
import { createServer } from 'node:http';
import { McpServer, ResourceTemplate, createMcpHandler } from '@modelcontextprotocol/server';
import { toNodeHandler, localhostHostValidation, localhostOriginValidation } from '@modelcontextprotocol/node';
import * as z from 'zod';
const port = Number(process.argv[2]);
const flags = new Set(process.argv.slice(3));
const factory = () => {
  const s = new McpServer({ name: 'ts-sdk-v2-probe-target', version: '1.0.0' });
  s.registerTool('add', { description: 'Add two numbers', inputSchema: z.object({ a: z.number(), b: z.number() }) },
    async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }));
  s.registerTool('echo', { description: 'Echo', inputSchema: z.object({ text: z.string() }) },
    async ({ text }) => ({ content: [{ type: 'text', text }] }));
  s.registerResource('info', 'info://server', { description: 'What this server is', mimeType: 'text/plain' },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'ts2: @modelcontextprotocol/server 2.4.0 lab target' }] }));
  // list: undefined -> the template adds nothing to resources/list, only to resources/templates/list
  s.registerResource('greeting', new ResourceTemplate('greeting://{name}', { list: undefined }),
    { description: 'Greet someone by name', mimeType: 'text/plain' },
    async (uri, { name }) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: `Hello, ${name}!` }] }));
  s.registerPrompt('review', { description: 'Review code', argsSchema: z.object({ code: z.string() }) },
    ({ code }) => ({ messages: [{ role: 'user', content: { type: 'text', text: `Please review:\n${code}` } }] }));
  return s;
};
const handler = createMcpHandler(factory, {
  legacy: flags.has('--reject-legacy') ? 'reject' : 'stateless',
  responseMode: flags.has('--json') ? 'json' : 'auto',
});
const node = toNodeHandler(handler);
const vh = localhostHostValidation(), vo = localhostOriginValidation();
createServer(async (req, res) => {
  if (flags.has('--guards') && (!vh(req, res) || !vo(req, res))) return;
  if (!req.url.startsWith('/mcp')) { res.writeHead(404).end(); return; }
  await node(req, res);
}).listen(port, '127.0.0.1', () => console.log(`ts-sdk v2 on http://127.0.0.1:${port}/mcp flags=${[...flags]}`));
