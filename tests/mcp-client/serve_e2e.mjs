// Plays a whole agent session against `rtn serve` with the official MCP TypeScript SDK client:
// initialize, list tools, run commands, ping and cancel while a command runs, start a job that
// serves HTTP on loopback and fetch it from shell_run, commit, restart the server, see the
// commit, roll back, reset. Usage (tests/integration/serve_e2e.sh):
//   node serve_e2e.mjs RTN DATA_DIR
// Prints one line per check and exits non-zero on the first failure.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { checker, deadline } from "./check.mjs";

const [rtn, dataDir] = process.argv.slice(2);
if (!rtn || !dataDir) {
  console.error("usage: serve_e2e.mjs RTN DATA_DIR");
  process.exit(2);
}

const check = checker();

deadline(120_000);

async function connect() {
  const transport = new StdioClientTransport({
    command: rtn,
    args: ["serve", "--data-dir", dataDir],
    env: process.env,
    stderr: "inherit",
  });
  const client = new Client({ name: "rtn-e2e", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

async function call(client, name, args = {}, opts = {}) {
  const r = await client.callTool({ name, arguments: args }, undefined, opts);
  return r;
}

async function run(client, command, extra = {}) {
  const r = await call(client, "shell_run", { command, ...extra });
  if (r.isError) throw new Error(`shell_run failed: ${JSON.stringify(r.content)}`);
  return r.structuredContent;
}

let client = await connect();
check(client.getServerVersion()?.name === "rtn", "initialize", client.getServerVersion());

const { tools } = await client.listTools();
const names = new Set(tools.map((t) => t.name));
for (const t of ["shell_run", "shell_job_start", "env_commit", "env_rollback", "env_reset", "env_status"])
  check(names.has(t), `tools/list has ${t}`);
check(tools.every((t) => t.outputSchema && t.annotations && t.inputSchema), "every tool has schemas and annotations");

let r = await run(client, "echo hello; echo oops >&2; exit 3");
check(r.stdout === "hello\n" && r.stderr === "oops\n" && r.exit_code === 3, "shell_run keeps stdout, stderr and the exit code apart", r);

// A long command never blocks ping; cancellation kills it.
const ac = new AbortController();
const slow = call(client, "shell_run", { command: "sleep 30" }, { signal: ac.signal }).catch((e) => e);
const t0 = Date.now();
await client.ping();
check(Date.now() - t0 < 2000, "ping answered while shell_run sleeps");
ac.abort();
await slow;
// The kill is sent before the next command starts, but the killed process goes (and is
// reaped: a zombie still has its name) when it is next scheduled: asked again for up to 5 s,
// a sleep of 30 s that was not killed is still there.
r = await run(client, "for i in $(seq 50); do [ \"$(ps -eo comm= 2>/dev/null | grep -c '^sleep$')\" = 0 ] && exit 0; sleep 0.1; done; ps -eo pid=,stat=,comm= | grep sleep; exit 1");
check(r.exit_code === 0, "cancelled command was killed", r);

// A job's server on 127.0.0.1 is reachable from the next shell_run.
r = await call(client, "shell_job_start", { command: "cd /tmp && echo served > index.txt && exec python3 -m http.server 8765 --bind 127.0.0.1" });
check(!r.isError && r.structuredContent.job_id, "shell_job_start", r.structuredContent);
const job = r.structuredContent.job_id;
// One python3 tries for five seconds (a python3 per try was a start each tenth of a second
// while the job's server came up on a loaded machine).
r = await run(client, "python3 -c \"import time, urllib.request as u\nfor i in range(50):\n  try:\n    print(u.urlopen('http://127.0.0.1:8765/index.txt').read().decode(), end=''); break\n  except OSError: time.sleep(0.1)\nelse: raise SystemExit(1)\"");
check(r.exit_code === 0 && r.stdout === "served\n", "job's HTTP server reachable from shell_run", r);
r = await call(client, "shell_job_kill", { job_id: job });
check(!r.isError, "shell_job_kill");
r = await call(client, "shell_job_wait", { job_id: job, timeout: 10 });
check(r.structuredContent.state !== "running", "killed job ended", r.structuredContent);

// Commit, restart, see it; a second commit; roll back to the first; reset drops changes.
await run(client, "echo one > /workspace/one.txt");
r = await call(client, "env_commit", { message: "first" });
check(!r.isError && r.structuredContent.commit_id, "env_commit", r.structuredContent);
const first = r.structuredContent.commit_id;
await client.close();

client = await connect();
r = await run(client, "cat /workspace/one.txt");
check(r.stdout === "one\n", "commit survives a server restart", r);
await run(client, "echo two > /workspace/two.txt && rm /workspace/one.txt");
r = await call(client, "env_diff");
check(JSON.stringify(r.structuredContent.added) === '["/workspace/two.txt"]' &&
      JSON.stringify(r.structuredContent.deleted) === '["/workspace/one.txt"]', "env_diff", r.structuredContent);
r = await call(client, "env_commit", { message: "second" });
const second = r.structuredContent.commit_id;
check(second && second !== first, "second commit");
r = await call(client, "env_snapshot_list");
check(r.structuredContent.commits.length === 2 && r.structuredContent.tip === second, "env_snapshot_list", r.structuredContent);
r = await call(client, "env_rollback", { commit_id: first.slice(0, 12) });
check(!r.isError && r.structuredContent.commit_id === first, "env_rollback by short id", r.structuredContent);
r = await run(client, "cat /workspace/one.txt; ls /workspace");
check(r.stdout === "one\none.txt\n", "rolled back tree", r);
await run(client, "echo scratch > /workspace/scratch.txt");
r = await call(client, "env_reset");
check(!r.isError, "env_reset");
r = await run(client, "ls /workspace");
check(r.stdout === "one.txt\n", "reset dropped uncommitted changes", r);
r = await call(client, "env_status");
check(r.structuredContent.tip === first && r.structuredContent.isolation, "env_status", r.structuredContent);
await client.close();
console.log("e2e done");
