// A gateway test client on the TypeScript SDK (installed by scripts/gateway-clients.sh).
//
//   node ts_client.mjs stdio COMMAND ARGS_JSON WHO
//   node ts_client.mjs http URL TOKEN WHO
//
// Lists tools, calls `mcp__notes__echo`, reads `file:///readme`, calls `mcp__notes__ask`
// (the upstream server asks this client, through the gateway, who it is: it answers WHO),
// lists prompts and gets `mcp__notes__greet`, and prints one JSON object with what it got.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const [mode, target, extra, who] = process.argv.slice(2);
const client = new Client(
  { name: "gateway-test-ts", version: "1.0.0" },
  { capabilities: { elicitation: {} } },
);
client.setRequestHandler(ElicitRequestSchema, async () => ({
  action: "accept",
  content: { who },
}));
const transport =
  mode === "stdio"
    ? new StdioClientTransport({ command: target, args: JSON.parse(extra), env: process.env })
    : new StreamableHTTPClientTransport(new URL(target), {
        requestInit: { headers: { Authorization: `Bearer ${extra}` } },
      });
await client.connect(transport);
const tools = await client.listTools();
const echo = await client.callTool({ name: "mcp__notes__echo", arguments: { text: "hi" } });
const read = await client.readResource({ uri: "file:///readme" });
const ask = await client.callTool({ name: "mcp__notes__ask", arguments: {} });
const guarded = await client.callTool({ name: "mcp__notes__guarded", arguments: { text: "x" } });
const prompts = await client.listPrompts();
const prompt = await client.getPrompt({ name: "mcp__notes__greet", arguments: { who: "gateway" } });
console.log(
  JSON.stringify({
    tools: tools.tools.map((t) => t.name).sort(),
    echo,
    read,
    ask,
    prompts: prompts.prompts.map((p) => p.name).sort(),
    prompt,
    guarded,
  }),
);
await client.close();
