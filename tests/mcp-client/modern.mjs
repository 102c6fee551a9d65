// Drives `rtn serve` with the official MCP TypeScript client 2.x (@modelcontextprotocol/client)
// in one of its version-negotiation modes, and checks the 2026-07-28 era end to end: the
// era it settles on, discovery, tools/list, calls with structured results, argument errors
// as tool results, a call's log messages, cancellation, and progress that keeps a call longer than the client's
// timeout alive (resetTimeoutOnProgress). Usage (tests/integration/serve_modern.sh):
//   node modern.mjs RTN DATA_DIR modern|auto|legacy
// Prints one line per check and exits non-zero on the first failure.
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { checker, deadline } from "./check.mjs";

const [rtn, dataDir, mode] = process.argv.slice(2);
const modes = { modern: { mode: { pin: "2026-07-28" } }, auto: { mode: "auto" }, legacy: { mode: "legacy" } };
if (!rtn || !dataDir || !modes[mode]) {
  console.error("usage: modern.mjs RTN DATA_DIR modern|auto|legacy");
  process.exit(2);
}
const era = mode === "legacy" ? "2025-11-25" : "2026-07-28";

const check = checker(mode);

deadline(150_000, mode);

const client = new Client({ name: "rtn-modern", version: "1.0.0" }, { versionNegotiation: modes[mode] });
const transport = new StdioClientTransport({
  command: rtn,
  args: ["serve", "--data-dir", dataDir],
  env: process.env,
  stderr: "inherit",
});
await client.connect(transport);
check(client.getNegotiatedProtocolVersion() === era, `negotiated ${era}`, client.getNegotiatedProtocolVersion());
check(client.getServerVersion()?.name === "rtn", "server identifies itself", client.getServerVersion());
check(client.getServerCapabilities()?.tools, "tools capability", client.getServerCapabilities());
if (mode !== "legacy") {
  const d = await client.discover();
  check(d.supportedVersions[0] === "2026-07-28" && d.supportedVersions.includes("2024-11-05"),
        "server/discover lists both eras", d.supportedVersions);
}

const { tools } = await client.listTools();
const names = new Set(tools.map((t) => t.name));
for (const t of ["shell_run", "shell_job_start", "shell_job_wait", "env_commit", "file_read"])
  check(names.has(t), `tools/list has ${t}`);
check(tools.every((t) => t.inputSchema && t.outputSchema && t.annotations), "every tool has schemas and annotations");

let r = await client.callTool({ name: "shell_run", arguments: { command: "echo hello; echo oops >&2; exit 3" } });
check(!r.isError && r.structuredContent.stdout === "hello\n" && r.structuredContent.exit_code === 3,
      "shell_run result", r.structuredContent);

r = await client.callTool({ name: "shell_run", arguments: { command: ["echo", "x"] } });
check(r.isError && r.content[0].text.includes("command: must be a string, got an array"),
      "a bad argument is a tool error naming the type", r.content);
r = await client.callTool({ name: "file_read", arguments: { path: "/etc/hostname", encoding: "hex" } });
check(r.isError && r.content[0].text.includes('encoding: must be one of "text" "base64", got "hex"'),
      "an enum error names the values", r.content);

// A call's own log message (a sandbox started for it) reaches the client before its result, at
// the level the request asked for (2026-07-28) or the session's (legacy).
const logs = [];
client.setNotificationHandler("notifications/message", (n) => logs.push(n.params));
const sbLog = (await client.callTool({ name: "sandbox_new", arguments: {} })).structuredContent.sandbox;
const logCall = { name: "shell_run", arguments: { sandbox: sbLog, command: "true" } };
if (era === "2026-07-28")
  logCall._meta = { "io.modelcontextprotocol/logLevel": "info" };
else
  await client.setLoggingLevel("info");
await client.callTool(logCall);
check(logs.some((l) => l.level === "info" && l.data === `${sbLog}: the sandbox started for this command`),
      "the call's log message at the level asked for", logs);
await client.callTool({ name: "sandbox_close", arguments: { sandbox: sbLog } });

// Cancellation: the aborted call's command is killed.
const ac = new AbortController();
const slow = client.callTool({ name: "shell_run", arguments: { command: "sleep 30" } }, { signal: ac.signal }).catch((e) => e);
await new Promise((res) => setTimeout(res, 500));
ac.abort();
await slow;
// The killed process goes when it is next scheduled (serve_e2e.mjs): asked for up to 5 s.
r = await client.callTool({ name: "shell_run", arguments: { command: "for i in $(seq 50); do n=$(ps -eo comm= | grep -c '^sleep$'); [ \"$n\" = 0 ] && break; sleep 0.1; done; echo $n" } });
check(r.structuredContent.stdout.trim() === "0", "cancelled command was killed", r.structuredContent);

// A wait longer than the client's timeout: without progress it times out, with
// resetTimeoutOnProgress the server's progress keeps it alive until the job ends. The
// server's progress comes every 5 s; the second wait's 9 s timeout leaves 4 s for a loaded
// machine to deliver it, and its ~14 s left of the job still outlast that timeout.
const job = (await client.callTool({ name: "shell_job_start", arguments: { command: "sleep 20; echo done" } })).structuredContent.job_id;
const wait = { name: "shell_job_wait", arguments: { job_id: job, timeout: 60 } };
const t0 = Date.now();
const timedOut = await client.callTool(wait, { timeout: 6000 }).then(() => null, (e) => e);
check(timedOut && Date.now() - t0 < 9000, "without progress the wait outlasts a 6 s client timeout", String(timedOut));
let progress = [];
r = await client.callTool(wait, {
  timeout: 9000,
  resetTimeoutOnProgress: true,
  onprogress: (p) => progress.push(p),
}).catch((e) => e);
check(!(r instanceof Error) && !r.isError && r.structuredContent.state === "exited" &&
      r.structuredContent.timed_out_waiting === false,
      "with resetTimeoutOnProgress the wait ends with the job", r instanceof Error ? String(r) : r.structuredContent);
check(Date.now() - t0 > 19000 && progress.length >= 1 &&
      progress.every((p, i) => i === 0 || p.progress > progress[i - 1].progress),
      "progress notifications, growing", progress);

await client.close();
console.log(`modern done [${mode}]`);
