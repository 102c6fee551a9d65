// Issue 38's "done when", played by the official MCP TypeScript SDK client against `rtn serve`:
// write (file_write) -> run (shell_run: a tree, a chmod, a symlink, an xattr, a hard link) ->
// break (a deleted tree, a chmod, the symlink replaced, the xattr changed) -> env_history ->
// env_undo: the files are back byte for byte -> env_redo: broken again -> env_undo ->
// env_commit. In the sandbox's own upper (/var/tmp) and /tmp, and with WORKSPACE in an overlay
// workspace's /workspace too, whose changes stay pending past the commit. Usage
// (tests/integration/serve_undo.sh):
//   node undo.mjs RTN DATA_DIR [WORKSPACE]
// Prints one line per check and exits non-zero on the first failure.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { checker, deadline } from "./check.mjs";

const [rtn, dataDir, workspace] = process.argv.slice(2);
if (!rtn || !dataDir) {
  console.error("usage: undo.mjs RTN DATA_DIR [WORKSPACE]");
  process.exit(2);
}

const check = checker();

deadline(120_000);

const args = ["serve", "--data-dir", dataDir];
if (workspace) args.push("--workspace", workspace, "--workspace-mode", "overlay");
const transport = new StdioClientTransport({ command: rtn, args, env: process.env, stderr: "inherit" });
const client = new Client({ name: "rtn-undo", version: "1.0.0" });
await client.connect(transport);

async function call(name, a = {}) {
  const r = await client.callTool({ name, arguments: a });
  if (r.isError) throw new Error(`${name} failed: ${JSON.stringify(r.content)}`);
  return r.structuredContent;
}

async function run(command) {
  const r = await call("shell_run", { command });
  if (r.exit_code !== 0) throw new Error(`${command}: ${JSON.stringify(r)}`);
  return r.stdout;
}

const bases = ["/var/tmp/u", "/tmp/u", ...(workspace ? ["/workspace/u"] : [])];
// Every entry below the bases: type and mode, owner, size, link target, xattrs, content
// hash, and which names share an inode.
const snapCode = `import hashlib, os, stat
ino = {}
for top in ${JSON.stringify(bases)}:
    for r, ds, fs in sorted(os.walk(top)):
        ds.sort()
        for n in sorted(ds + fs):
            p = os.path.join(r, n)
            st = os.lstat(p)
            x = sorted((k, os.getxattr(p, k, follow_symlinks=False).hex())
                       for k in os.listxattr(p, follow_symlinks=False))
            what = os.readlink(p) if stat.S_ISLNK(st.st_mode) else ""
            if stat.S_ISREG(st.st_mode):
                what = hashlib.sha256(open(p, "rb").read()).hexdigest()
                ino.setdefault(st.st_ino, []).append(p)
            size = "" if stat.S_ISDIR(st.st_mode) else st.st_size
            print(p, oct(st.st_mode), st.st_uid, st.st_gid, size, st.st_nlink, what, x)
print(sorted(v for v in ino.values() if len(v) > 1))`;
const snap = () => run(`python3 -c '${snapCode.replaceAll("'", "'\\''")}'`);

const { tools } = await client.listTools();
const names = new Set(tools.map((t) => t.name));
for (const t of ["env_history", "env_undo", "env_redo", "env_commit"]) check(names.has(t), `tools/list has ${t}`);

// write, run
await run(`mkdir -p ${bases.join(" ")}`);
for (const b of bases) await call("file_write", { path: `${b}/notes.txt`, content: "written\n" });
for (const b of bases)
  await run(`cd ${b} && mkdir -p tree/sub/deep && echo deep > tree/sub/deep/f && echo g > tree/g &&
    echo x > x && chmod 640 x && ln -s x lnk && ln x hl &&
    python3 -c 'import os; os.setxattr("x", "user.k", b"v1")'`);
const before = await snap();
check(before.includes("tree/sub/deep/f") && before.includes("'user.k'"), "the state to come back to", before);

// break
const breakCmd = bases
  .map((b) => `cd ${b} && rm -rf tree && chmod 600 x && rm lnk && ln -s notes.txt lnk && echo more >> x &&
    python3 -c 'import os; os.setxattr("x", "user.k", b"v2")'`)
  .join(" && ");
await run(breakCmd);
const broken = await snap();
check(!broken.includes("tree") && broken !== before, "broken", broken);

// env_history: newest first; the break names the tree it deleted
const h = await call("env_history");
check(h.steps.length >= 6 && h.steps[0].tool === "shell_run" && h.steps[0].step > h.steps[1].step,
  "env_history lists the calls newest first", h.steps.map((s) => [s.step, s.tool]));
const brk = h.steps[1];
check(brk.args.startsWith("cd ") && brk.args.includes("rm -rf tree") && brk.undoable,
  "env_history names the breaking call", brk);
check(brk.paths.some((p) => p === `${bases[0]}/tree`) && brk.paths_total >= brk.paths.length,
  "its paths name the deleted tree", brk.paths);
check(h.steps.some((s) => s.tool === "file_write"), "the file_write is a step");

// env_undo of the break and the snapshot after it: back byte for byte
let u = await call("env_undo", { steps: 2 });
check(u.undone === 2 && u.redoable === 2, "env_undo 2", u);
// env_redo: broken again (a shell_run would end the redo: so redo first, then look)
u = await call("env_redo", { steps: 2 });
check(u.redone === 2 && u.redoable === 0, "env_redo 2", u);
check((await snap()) === broken, "env_redo gives the broken state back");
u = await call("env_undo", { steps: 3 });
check(u.undone === 3, "env_undo 3", u);
const back = await snap();
check(back === before, "the files are back byte for byte (tree, chmod, symlink, xattr, hard link)", {
  before,
  back,
});

// env_commit
const c = await call("env_commit", { message: "undone" });
check(typeof c.commit_id === "string" && c.commit_id.length > 0 && !c.unchanged, "env_commit", c);
if (workspace) check(c.workspace_pending > 0, "the workspace's changes stay pending for apply", c);
check((await snap()) === before, "the committed state is the one undone to");
const after = await call("env_history");
check(after.steps.every((s) => s.tool !== "file_write"), "the history starts over at the commit",
  after.steps.map((s) => s.tool));

await client.close();
console.log("undo done");
