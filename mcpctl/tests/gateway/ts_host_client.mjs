// A gateway test client on the TypeScript SDK for what upstream servers ask of a host.
//
//   node ts_host_client.mjs stdio COMMAND ARGS_JSON WHO
//
// Announces sampling and answers it as model WHO; sets the log level to `warning` and
// collects log messages; calls `mcp__asker__sample`, `mcp__asker__log` (warning) and
// `mcp__asker__debug_log` (debug: below the level); completes the `name` argument of
// `mcp__asker__greet`; calls `mcp__asker__new_prompt` and waits for the prompt list change;
// prints one JSON object with what it got.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  CreateMessageRequestSchema,
  LoggingMessageNotificationSchema,
  PromptListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

const [, target, extra, who] = process.argv.slice(2);
const client = new Client(
  { name: "gateway-host-ts", version: "1.0.0" },
  { capabilities: { sampling: {} } },
);
const sampled = [];
client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
  sampled.push(request.params.maxTokens);
  return {
    role: "assistant",
    content: { type: "text", text: `sampled by ${who}` },
    model: `model-${who}`,
    stopReason: "endTurn",
  };
});
const logs = [];
let logged;
const gotLog = new Promise((resolve) => (logged = resolve));
client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
  logs.push({ level: n.params.level, logger: n.params.logger, data: n.params.data });
  logged();
});
let promptsChanged;
const gotPromptsChanged = new Promise((resolve) => (promptsChanged = resolve));
client.setNotificationHandler(PromptListChangedNotificationSchema, () => promptsChanged());
const transport = new StdioClientTransport({
  command: target,
  args: JSON.parse(extra),
  env: process.env,
});
const within = (promise, what) =>
  Promise.race([
    promise,
    new Promise((_, reject) => setTimeout(() => reject(new Error(`no ${what} within 20 s`)), 20000)),
  ]);
await client.connect(transport);
await client.setLoggingLevel("warning");
const sample = await client.callTool({ name: "mcp__asker__sample", arguments: {} });
await client.callTool({ name: "mcp__asker__debug_log", arguments: {} });
await client.callTool({ name: "mcp__asker__log", arguments: {} });
await within(gotLog, "log message");
const completion = await client.complete({
  ref: { type: "ref/prompt", name: "mcp__asker__greet" },
  argument: { name: "name", value: "A" },
});
await client.callTool({ name: "mcp__asker__new_prompt", arguments: {} });
await within(gotPromptsChanged, "prompt list change");
const prompts = await client.listPrompts();
console.log(
  JSON.stringify({
    sample: sample.structuredContent,
    sampled,
    logs,
    completion: completion.completion,
    prompts: prompts.prompts.map((p) => p.name).sort(),
  }),
);
await client.close();
