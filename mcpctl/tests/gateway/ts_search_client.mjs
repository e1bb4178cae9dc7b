// A gateway test client for `mcpctl serve --tool-exposure search`, on the TypeScript SDK.
//
//   node ts_search_client.mjs stdio COMMAND ARGS_JSON
//
// Lists tools (the two of search mode), searches for a tool that echoes text, calls the
// first result through `call_tool`, then `mcp__notes__guarded` (approval mode `prompt`)
// through `call_tool` while declining the approval question, and prints one JSON object.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const [, target, extra] = process.argv.slice(2);
const questions = [];
const client = new Client(
  { name: "gateway-search-ts", version: "1.0.0" },
  { capabilities: { elicitation: {} } },
);
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  questions.push(request.params.message);
  return { action: "decline" };
});
await client.connect(
  new StdioClientTransport({ command: target, args: JSON.parse(extra), env: process.env }),
);
const tools = await client.listTools();
const found = await client.callTool({
  name: "search_tools",
  arguments: { query: "echo the text back", limit: 3 },
});
const first = found.structuredContent.tools[0].name;
const called = await client.callTool({ name: "call_tool", arguments: { name: first, arguments: { text: "hi" } } });
const guarded = await client.callTool({
  name: "call_tool",
  arguments: { name: "mcp__notes__guarded", arguments: { text: "x" } },
});
const empty = await client.callTool({ name: "search_tools", arguments: { query: "   " } });
console.log(
  JSON.stringify({
    tools: tools.tools.map((t) => t.name).sort(),
    list_bytes: JSON.stringify(tools).length,
    found: found.structuredContent,
    called,
    guarded,
    questions,
    empty,
  }),
);
await client.close();
