// The workspace modes of `rtn serve`, driven by the official MCP TypeScript SDK client
// (tests/integration/serve_workspace.sh). Usage:
//   node serve_workspace.mjs RTN DATA_DIR overlay|live|none [WORKSPACE]
// overlay: the instructions and env_status say what /workspace is; a write stays in the
// sandbox (env_diff lists it, the host dir is untouched), env_reset drops it, env_commit
// leaves it pending, workspace_apply writes it and lists each refusal with its reason.
// live: workspace_apply does not exist, the texts say /workspace is the user's directory
// and reset cannot undo it, and it is so (a file deleted stays deleted after env_reset).
// none: /workspace is the sandbox's own and reset drops what is written there.
// Prints one line per check; exits non-zero on the first failure.
import fs from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { checker, deadline } from "./check.mjs";

const [rtn, dataDir, mode, ws] = process.argv.slice(2);
if (!rtn || !dataDir || !mode) {
  console.error("usage: serve_workspace.mjs RTN DATA_DIR overlay|live|none [WORKSPACE]");
  process.exit(2);
}

const check = checker();

deadline(120_000);

const args = ["serve", "--data-dir", dataDir];
if (ws) args.push("--workspace", ws);
if (mode !== "none") args.push("--workspace-mode", mode);
const client = new Client({ name: "rtn-workspace", version: "1.0.0" });
await client.connect(new StdioClientTransport({ command: rtn, args, env: process.env, stderr: "inherit" }));

async function call(name, a = {}) {
  return client.callTool({ name, arguments: a });
}

async function run(command) {
  const r = await call("shell_run", { command });
  if (r.isError) throw new Error(`shell_run failed: ${JSON.stringify(r.content)}`);
  return r.structuredContent;
}

const host = (p) => path.join(ws, p);
const read = (p) => (fs.existsSync(host(p)) ? fs.readFileSync(host(p), "utf8") : null);
const instructions = client.getInstructions() ?? "";
const names = new Set((await client.listTools()).tools.map((t) => t.name));
let r, st;

if (mode === "overlay") {
  check(names.has("workspace_apply"), "tools/list has workspace_apply");
  check(instructions.includes(`/workspace shows the user's directory ${ws} through an overlay`) &&
        instructions.includes("workspace_apply"), "instructions say what the overlay is", instructions);
  st = (await call("env_status")).structuredContent;
  check(st.workspace_mode === "overlay" && st.live_paths.length === 0 &&
        st.host_dirs[0].mount_point === "/workspace" && st.host_dirs[0].mode === "overlay" &&
        st.host_dirs[0].access === "rw" && st.host_dirs[0].host_path === ws,
        "env_status: the workspace is an overlay, nothing is live", st);

  // write, diff, reset
  await run("echo changed >> /workspace/a && rm /workspace/d/f && echo n > /workspace/new");
  check(read("a") === "hello\n" && read("d/f") === "f\n" && read("new") === null, "the host dir is untouched");
  r = (await call("env_diff")).structuredContent;
  check(JSON.stringify(r) === JSON.stringify({ added: ["/workspace/new"], modified: ["/workspace/a"],
                                              deleted: ["/workspace/d/f"], truncated: false }),
        "env_diff lists the pending changes", r);
  st = (await call("env_status")).structuredContent;
  check(st.host_dirs[0].pending_changes === 3 && st.dirty_files.includes("/workspace/new"),
        "env_status counts them", st);
  r = await call("env_reset");
  check(!r.isError, "env_reset");
  r = await run("cat /workspace/a; ls /workspace/d; ls /workspace");
  check(r.stdout === "hello\nf\ng\na\nd\n", "reset dropped them: the sandbox sees the host dir", r);

  // write again; env_commit leaves them pending
  await run("echo again >> /workspace/a && rm /workspace/d/f && echo n > /workspace/new && " +
            "mkfifo /workspace/fifo && ln -s /etc/passwd /workspace/abs && " +
            "ln -s ../../x /workspace/up && echo 'export A=1' > /workspace/.envrc && " +
            "mkdir -p /workspace/.vscode && echo '{}' > /workspace/.vscode/tasks.json && " +
            "echo pkg > $HOME/pkg");
  r = (await call("env_commit", { message: "tools" })).structuredContent;
  check(r.commit_id && r.workspace_pending === 9, "env_commit commits the rest and leaves /workspace pending", r);
  check(read("new") === null, "still nothing on the host");

  // apply: a dry run, then for real, with the refusals and their reasons
  r = (await call("workspace_apply", { dry_run: true })).structuredContent;
  check(r.dry_run === true && r.applied.length === 3 && read("new") === null, "dry_run writes nothing", r);
  r = await call("workspace_apply");
  check(!r.isError, "workspace_apply", r);
  r = r.structuredContent;
  const applied = r.applied.map((e) => `${e.change} ${e.path}`).sort();
  check(JSON.stringify(applied) === JSON.stringify(["added /workspace/new", "deleted /workspace/d/f",
                                                   "modified /workspace/a"]), "applied list", r.applied);
  const why = Object.fromEntries(r.refused.map((e) => [e.path, e.reason]));
  check(why["/workspace/fifo"]?.startsWith("a FIFO") &&
        why["/workspace/abs"]?.startsWith("a symlink to an absolute path") &&
        why["/workspace/up"]?.startsWith("a symlink that leaves the workspace") &&
        why["/workspace/.envrc"]?.startsWith("protected (.envrc)") &&
        why["/workspace/.vscode"]?.startsWith("protected (.vscode)") &&
        Object.keys(why).length === 5, "refused list with reasons", r.refused);
  check(read("a") === "hello\nagain\n" && read("d/f") === null && read("new") === "n\n" &&
        !fs.existsSync(host("fifo")) && !fs.existsSync(host(".envrc")) && !fs.existsSync(host(".vscode")),
        "the host dir has what was applied, and only that");
  r = (await call("env_diff")).structuredContent;
  check(r.added.length === 6 && r.modified.length === 0 && r.deleted.length === 0,
        "the refused changes stay pending", r);
  r = await run("cat /workspace/a; cat $HOME/pkg");
  check(r.stdout === "hello\nagain\npkg\n", "the sandbox restarts on the commit and the host dir", r);
} else if (mode === "live") {
  check(!names.has("workspace_apply"), "no workspace_apply in live mode");
  check(instructions.includes(`/workspace is the user's directory ${ws} itself (live)`) &&
        instructions.includes("neither env_reset nor env_rollback can undo it"),
        "instructions say /workspace is live", instructions);
  const reset = (await client.listTools()).tools.find((t) => t.name === "env_reset");
  check(reset.description.includes("cannot undo"), "env_reset's description says what it cannot undo", reset.description);
  st = (await call("env_status")).structuredContent;
  check(st.workspace_mode === "live" && JSON.stringify(st.live_paths) === '["/workspace"]' &&
        st.host_dirs[0].mode === "live", "env_status: /workspace is live", st);
  await run("rm /workspace/a && echo w > /workspace/w");
  check(read("a") === null && read("w") === "w\n", "a write is on the host at once");
  r = (await call("env_diff")).structuredContent;
  check(r.added.length + r.modified.length + r.deleted.length === 0, "env_diff lists no live write", r);
  await call("env_reset");
  check(read("a") === null && read("w") === "w\n", "env_reset did not undo it, as the texts say");
} else {
  check(instructions.includes("/workspace is a directory of the sandbox"), "instructions: /workspace is the sandbox's", instructions);
  st = (await call("env_status")).structuredContent;
  check(st.workspace_mode === "none" && st.host_dirs.length === 0 && st.live_paths.length === 0,
        "env_status: no host dir", st);
  await run("echo s > /workspace/s");
  await call("env_reset");
  r = await run("ls /workspace");
  check(r.stdout === "", "env_reset dropped it", r);
}
await client.close();
console.log("workspace done");
