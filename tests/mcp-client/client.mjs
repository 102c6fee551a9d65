// Drives an MCP stdio server through `rtn exec` with the official TypeScript SDK client and
// checks the answers: initialize, tools/list, a 1 MiB echo round trip, and sandbox_info
// showing the server really ran inside the sandbox. Usage:
//   node client.mjs RTN HOSTNAME -- SERVER-COMMAND...      (run by tests/integration/exec_mcp.sh)
// Prints one line per check and exits non-zero on the first failure.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { checker } from "./check.mjs";

const [rtn, host, sep, ...serverCmd] = process.argv.slice(2);
if (!rtn || !host || sep !== "--" || serverCmd.length === 0) {
  console.error("usage: client.mjs RTN HOSTNAME -- SERVER-COMMAND...");
  process.exit(2);
}

const check = checker();

const transport = new StdioClientTransport({
  command: rtn,
  args: ["exec", "--hostname", host, ...serverCmd],
  env: process.env,
  stderr: "inherit",
});
const client = new Client({ name: "rtn-test-client", version: "1.0.0" });
const deadline = setTimeout(() => {
  console.error("FAIL timed out");
  process.exit(1);
}, 60_000);

await client.connect(transport);
check(client.getServerVersion()?.name === "rtn-test-server", "initialize", client.getServerVersion());

const { tools } = await client.listTools();
const names = tools.map((t) => t.name).sort();
check(JSON.stringify(names) === '["echo","sandbox_info"]', "tools/list", names);

const big = "x".repeat(1 << 20) + "é\u2603end";
const echoed = await client.callTool({ name: "echo", arguments: { text: big } });
check(echoed.content?.[0]?.text === big, "tools/call echo 1 MiB");

const res = await client.callTool({ name: "sandbox_info", arguments: {} });
const info = JSON.parse(res.content[0].text);
check(info.hostname === host, "hostname inside is the sandbox's", info.hostname);
check(JSON.stringify(info.interfaces) === '["lo"]', "only lo inside", info.interfaces);
// comm of a binary exec'd from a memfd may read "memfd:rtn-init"; argv[0] still names it.
const isInit = (s) => typeof s === "string" && s.split("/").pop() === "rtn-init";
check(isInit(info.pid1) || isInit(info.pid1_argv0), "pid 1 is rtn-init", [info.pid1, info.pid1_argv0]);

await client.close();
clearTimeout(deadline);
console.log("ok closed");
