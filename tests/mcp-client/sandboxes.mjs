// Sandboxes as handles, through the official MCP TypeScript client 2.x in either era: the
// default sandbox answers calls that name none (today's clients), sandbox_fork copies the
// root filesystem's and an overlay /workspace's uncommitted changes and /tmp, each side's
// later writes stay its own, jobs are not copied, env_commit works from a fork and keeps /tmp, sandbox_new starts
// from a commit, a closed or unknown handle is refused by name, the cap's error, and closing
// frees the sandbox (its processes, its session dir, the server's fds). Usage
// (tests/integration/serve_sandboxes.sh):
//   node sandboxes.mjs RTN DATA_DIR WORKSPACE modern|legacy
// WORKSPACE is a host dir holding a file `base` with "host\n"; it must stay unchanged.
import { readdirSync, readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { checker, deadline } from "./check.mjs";

const [rtn, dataDir, ws, mode] = process.argv.slice(2);
const modes = { modern: { mode: { pin: "2026-07-28" } }, legacy: { mode: "legacy" } };
if (!rtn || !dataDir || !ws || !modes[mode]) {
  console.error("usage: sandboxes.mjs RTN DATA_DIR WORKSPACE modern|legacy");
  process.exit(2);
}

const check = checker(mode);

deadline(240_000, mode);

const MAX = 4;
const client = new Client({ name: "rtn-sandboxes", version: "1.0.0" }, { versionNegotiation: modes[mode] });
const transport = new StdioClientTransport({
  command: rtn,
  args: ["serve", "--data-dir", dataDir, "--workspace", ws, "--workspace-mode", "overlay",
         "--max-sandboxes", String(MAX)],
  env: process.env,
  stderr: "inherit",
});
await client.connect(transport);
const pid = transport.pid;

async function call(name, args = {}) {
  return client.callTool({ name, arguments: args });
}
async function ok(name, args = {}) {
  const r = await call(name, args);
  if (r.isError) check(false, `${name} ${JSON.stringify(args)} succeeds`, r.content);
  return r.structuredContent;
}
async function sh(command, sandbox) {
  const s = await ok("shell_run", sandbox ? { command, sandbox } : { command });
  return s.stdout;
}
const fds = () => readdirSync(`/proc/${pid}/fd`).length;
const sessions = () => readdirSync(`${dataDir}/sessions`).length;
// rtn serve's children: one rtn-init per sandbox that runs.
const children = () => readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).length;

// The default sandbox: today's calls, without a handle, act on sb-1.
let l = await ok("sandbox_list");
check(l.sandboxes.length === 1 && l.sandboxes[0].sandbox === "sb-1" && l.sandboxes[0].default &&
      l.max_sandboxes === MAX, "one default sandbox, sb-1", l);
await sh("echo src > /var/tmp/shared; echo src > /workspace/shared; echo src > /workspace/base; " +
         "mkdir /tmp/d; echo src > /tmp/d/shared; chmod 640 /tmp/d/shared");
check((await sh("cat /var/tmp/shared", "sb-1")) === "src\n", "a call without a handle acts on sb-1");
const job = (await ok("shell_job_start", { command: "sleep 300" })).job_id;
const fdsBefore = fds();
const sessionsBefore = sessions();

// The fork sees the source's files: root filesystem and overlay workspace.
const f = await ok("sandbox_fork");
check(f.sandbox === "sb-2" && f.forked_from === "sb-1" && /not copied/.test(f.note), "sandbox_fork result", f);
check((await sh("cat /var/tmp/shared /workspace/shared /workspace/base /tmp/d/shared; stat -c %a /tmp/d/shared /tmp",
                "sb-2")) === "src\nsrc\nsrc\nsrc\n640\n1777\n",
      "the fork sees the source's files (root fs, /workspace and /tmp)");
check((await ok("shell_job_list", { sandbox: "sb-2" })).jobs.length === 0, "jobs are not copied");
check((await sh("ps -eo comm= | grep -c '^sleep$' || true", "sb-2")).trim() === "0",
      "processes are not copied");
check((await ok("shell_job_status", { job_id: job })).state === "running", "the source's job runs on");

// Each side's later writes stay its own.
await sh("echo one > /var/tmp/shared; echo one > /workspace/shared; echo one > /var/tmp/only1; echo one > /tmp/d/shared", "sb-1");
await sh("echo two > /var/tmp/shared; echo two > /workspace/shared; rm /workspace/base; echo two > /var/tmp/only2; echo two > /tmp/d/shared", "sb-2");
await ok("file_write", { path: "/workspace/by-tool", content: "two\n", sandbox: "sb-2" });
check((await sh("cat /var/tmp/shared /workspace/shared /workspace/base /tmp/d/shared; ls /var/tmp/only2 /workspace/by-tool 2>&1 || true", "sb-1")) ===
      "one\none\nsrc\none\nls: cannot access '/var/tmp/only2': No such file or directory\n" +
      "ls: cannot access '/workspace/by-tool': No such file or directory\n",
      "the source does not see the fork's writes");
check((await sh("cat /var/tmp/shared /workspace/shared /tmp/d/shared; ls /workspace/base /var/tmp/only1 2>&1 || true", "sb-2")) ===
      "two\ntwo\ntwo\nls: cannot access '/workspace/base': No such file or directory\n" +
      "ls: cannot access '/var/tmp/only1': No such file or directory\n",
      "the fork does not see the source's writes");
const rd = await ok("file_read", { path: "/workspace/shared", sandbox: "sb-2" });
check(rd.content.includes("two"), "file tools act on the named sandbox", rd);
const d2 = await ok("env_diff", { sandbox: "sb-2" });
check(JSON.stringify(d2).includes("base"), "env_diff of the fork lists its own deletion", d2);
check(readFileSync(`${ws}/base`, "utf8") === "host\n", "the host's workspace is untouched");

// env_commit from the fork; sandbox_new from that commit sees it, and from nothing does not.
const c = await ok("env_commit", { message: "from the fork", sandbox: "sb-2" });
check(/^[0-9a-f]{64}$/.test(c.commit_id), "env_commit works from a fork", c);
check((await sh("cat /tmp/d/shared", "sb-2")) === "two\n", "/tmp outlives the commit, as it does a fork");
const n = await ok("sandbox_new", { from: c.commit_id.slice(0, 12) });
check(n.sandbox === "sb-3" && n.base_commit === c.commit_id, "sandbox_new from a commit", n);
check((await sh("cat /var/tmp/only2", "sb-3")) === "two\n", "the new sandbox runs on the commit");

// The cap.
const n4 = await ok("sandbox_new");
check(n4.sandbox === "sb-4", "sandbox_new without from", n4);
let r = await call("sandbox_fork", { sandbox: "sb-1" });
check(r.isError && r.content[0].text.includes(`${MAX} sandboxes are open, the most this server keeps`),
      "past --max-sandboxes: a clear error", r.content);

// Close: handles refused by name, everything freed.
await sh("sleep 300 >/dev/null 2>&1 & echo started", "sb-2");
const cl = await ok("sandbox_close", { sandbox: "sb-2" });
check(cl.sandbox === "sb-2", "sandbox_close", cl);
r = await call("shell_run", { command: "true", sandbox: "sb-2" });
check(r.isError && r.content[0].text.includes("sandbox sb-2 was closed"), "a closed handle is refused", r.content);
r = await call("sandbox_close", { sandbox: "sb-2" });
check(r.isError && r.content[0].text.includes("sandbox sb-2 was closed"), "closing twice is refused", r.content);
r = await call("file_read", { path: "/var/tmp/shared", sandbox: "sb-99" });
check(r.isError && r.content[0].text.includes("no sandbox sb-99"), "an unknown handle is refused", r.content);
await ok("sandbox_close", { sandbox: "sb-3" });
await ok("sandbox_close", { sandbox: "sb-4" });
check(fds() === fdsBefore, "closing frees every fd of the forks", { before: fdsBefore, after: fds() });
check(sessions() === sessionsBefore, "closing removes the forks' session dirs");
check(children() === 1, "closing kills the forks' processes: only sb-1's rtn-init is left", children());
l = await ok("sandbox_list");
check(l.sandboxes.map((s) => s.sandbox).join() === "sb-1", "sb-1 is left", l);
check((await sh("cat /var/tmp/shared")) === "one\n", "the default sandbox is unchanged");

// Closing the default: calls without a handle say so.
const n5 = await ok("sandbox_new");
await ok("sandbox_close", { sandbox: "sb-1" });
r = await call("shell_run", { command: "true" });
check(r.isError && r.content[0].text.includes("sandbox sb-1 was closed") && r.content[0].text.includes("sandbox argument"),
      "without sb-1 a call without a handle is refused", r.content);
check((await sh("echo alive; echo late > /workspace/late", n5.sandbox)) === "alive\n", "the other sandbox serves on");

await client.close();
console.log(`sandboxes done [${mode}]`);
