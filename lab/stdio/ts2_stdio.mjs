// MCP server on @modelcontextprotocol/server 2.4.0 over stdio (serveStdio: 2026-07-28, and
// 2025-era openings served by a pinned instance). The same tools, resources and prompt as
// lab/ts2/server.mjs. Usage: node ts2_stdio.mjs
// Imported by path from lab/ts2's install (lab/install.sh installs it there).
import { McpServer, ResourceTemplate } from '../ts2/node_modules/@modelcontextprotocol/server/dist/index.mjs';
import { serveStdio } from '../ts2/node_modules/@modelcontextprotocol/server/dist/stdio.mjs';
import * as z from '../ts2/node_modules/zod/index.js';
serveStdio(() => {
  const s = new McpServer({ name: 'ts-sdk-v2-stdio-probe-target', version: '1.0.0' });
  s.registerTool('add', { description: 'Add two numbers', inputSchema: z.object({ a: z.number(), b: z.number() }) },
    async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }));
  s.registerTool('echo', { description: 'Echo', inputSchema: z.object({ text: z.string() }) },
    async ({ text }) => ({ content: [{ type: 'text', text }] }));
  s.registerResource('info', 'info://server', { description: 'What this server is', mimeType: 'text/plain' },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'ts2-stdio: @modelcontextprotocol/server 2.4.0 over stdio' }] }));
  s.registerResource('greeting', new ResourceTemplate('greeting://{name}', { list: undefined }),
    { description: 'Greet someone by name', mimeType: 'text/plain' },
    async (uri, { name }) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: `Hello, ${name}!` }] }));
  s.registerPrompt('review', { description: 'Review code', argsSchema: z.object({ code: z.string() }) },
    ({ code }) => ({ messages: [{ role: 'user', content: { type: 'text', text: `Please review:\n${code}` } }] }));
  return s;
});
