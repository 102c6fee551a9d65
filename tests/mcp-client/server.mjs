// A tiny MCP stdio server built with the official SDK, meant to run *inside* `rtn exec`.
// Its tools report what the sandbox looks like from inside, so the client can tell that
// the server really ran there: sandbox_info returns the hostname, the uid, the network
// interfaces from /proc/net/dev and pid 1's comm and argv[0]. echo returns its argument, so a large
// message proves the stdio framing passes through rtn byte for byte.
import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const server = new Server({ name: "rtn-test-server", version: "1.0.0" }, { capabilities: { tools: {} } });

const tools = [
  {
    name: "echo",
    description: "Returns its text argument unchanged.",
    inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  },
  {
    name: "sandbox_info",
    description: "Hostname, uid, network interfaces and pid 1's comm and argv[0] as seen by this server.",
    inputSchema: { type: "object", properties: {} },
  },
];

function interfaces() {
  // /proc/net/dev: two header lines, then "  name: counters..." per interface.
  return readFileSync("/proc/net/dev", "utf8").split("\n").slice(2)
    .map((l) => l.split(":")[0].trim()).filter((n) => n.length > 0);
}

server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
server.setRequestHandler(CallToolRequestSchema, async (req) => {
  const { name, arguments: args } = req.params;
  if (name === "echo")
    return { content: [{ type: "text", text: String(args?.text ?? "") }] };
  if (name === "sandbox_info") {
    const info = {
      hostname: hostname(),
      uid: process.getuid(),
      interfaces: interfaces(),
      pid1: readFileSync("/proc/1/comm", "utf8").trim(),
      pid1_argv0: readFileSync("/proc/1/cmdline", "utf8").split("\0")[0],
    };
    return { content: [{ type: "text", text: JSON.stringify(info) }] };
  }
  return { isError: true, content: [{ type: "text", text: `unknown tool ${name}` }] };
});

await server.connect(new StdioServerTransport());
