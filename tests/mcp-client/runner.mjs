// Runs the client scripts of this directory for a suite's cases in one node process, so that
// the MCP SDKs are loaded once per suite instead of once per case (a node start that imports
// them costs about a second of CPU). tests/mcp-client/runner.bash starts it and speaks to it.
// Usage: node runner.mjs DIR SUITE_PID
//   DIR/req: a FIFO of requests, each a count N then N NUL-terminated fields:
//            REPLY_FIFO OUT_FILE ERR_FILE CWD ENV_COUNT ENV... SCRIPT ARGS...
//   The script runs as `node SCRIPT ARGS...` would, in CWD with the environment ENV: a fresh
//   instance of its module (the SDKs it imports are shared), its console output in OUT_FILE
//   and ERR_FILE, process.argv, process.env and process.exit its own. Its exit code goes to
//   REPLY_FIFO as a line. A run that fails ends the runner after the reply, as its own node
//   would have ended, so nothing it left behind reaches a later case; the suite starts a new
//   one. The runner ends too when SUITE_PID is gone.
import { AsyncLocalStorage } from "node:async_hooks";
import childProcess from "node:child_process";
import { syncBuiltinESMExports } from "node:module";
import { closeSync, constants, openSync, writeSync } from "node:fs";
import { Socket } from "node:net";
import { format } from "node:util";
import { pathToFileURL } from "node:url";

const [dir, suitePid] = process.argv.slice(2);
const als = new AsyncLocalStorage();
const realExit = process.exit.bind(process);
const realArgv = process.argv;
const realEnv = process.env;
const active = new Set();
let runs = 0;

class RunExit extends Error {
  constructor(code, run) {
    super(`exit ${code}`);
    this.code = code;
    this.run = run;
  }
}

// What a script sees of its process, its own while it runs.
Object.defineProperty(process, "argv", { configurable: true, get: () => als.getStore()?.argv ?? realArgv });
Object.defineProperty(process, "env", { configurable: true, get: () => als.getStore()?.env ?? realEnv });
process.exit = (code = process.exitCode ?? 0) => {
  const run = als.getStore();
  if (!run)
    realExit(code);
  finish(run, code); // at once, as a process ends: a catch on the way up changes nothing
  throw new RunExit(code, run);
};
for (const [name, fd] of [["log", "out"], ["info", "out"], ["error", "err"], ["warn", "err"]]) {
  const real = console[name].bind(console);
  console[name] = (...args) => {
    const run = als.getStore();
    if (!run)
      return real(...args);
    if (!run.done)
      writeSync(run[fd], format(...args) + "\n");
  };
}

// A child a script starts with its stderr inherited (the SDK's stdio transports start the
// server so) writes to the run's stderr file, as it would have to its node's.
const realSpawn = childProcess.spawn;
childProcess.spawn = function (command, args, options) {
  const run = als.getStore();
  const o = Array.isArray(args) ? options : args;
  if (run && !run.done && Array.isArray(o?.stdio) && o.stdio[2] === "inherit")
    o.stdio = [o.stdio[0], o.stdio[1], run.err, ...o.stdio.slice(3)];
  return realSpawn.apply(this, arguments);
};
syncBuiltinESMExports();

function finish(run, code) {
  if (run.done)
    return;
  run.done = true;
  active.delete(run);
  closeSync(run.out);
  closeSync(run.err);
  try { // the case may be gone (timed out): nobody reads, nothing to say
    const fd = openSync(run.reply, constants.O_WRONLY | constants.O_NONBLOCK);
    writeSync(fd, `${code}\n`);
    closeSync(fd);
  } catch {}
  if (code !== 0)
    realExit(0);
}

function failAll(e) {
  if (e instanceof RunExit) {
    finish(e.run, e.code);
    return;
  }
  if (active.size === 0) { // a stray error of a run already over: end as its node would have
    console.error(e);
    realExit(1);
  }
  for (const run of [...active]) {
    if (!run.done)
      writeSync(run.err, `${e?.stack ?? e}\n`);
    finish(run, 1);
  }
}
process.on("uncaughtException", failAll);
process.on("unhandledRejection", failAll);

function start(fields) {
  const [reply, out, err, cwd, envCount, ...rest] = fields;
  const n = Number(envCount);
  const env = {};
  for (const kv of rest.slice(0, n)) {
    const i = kv.indexOf("=");
    env[kv.slice(0, i)] = kv.slice(i + 1);
  }
  const [script, ...args] = rest.slice(n);
  const run = { reply, argv: [realArgv[0], script, ...args], env, done: false,
                out: openSync(out, "w"), err: openSync(err, "w") };
  active.add(run);
  process.chdir(cwd);
  const url = `${pathToFileURL(script).href}?run=${++runs}`;
  als.run(run, () => import(url)).then(() => finish(run, 0), failAll);
}

// Requests: "N\0" then N fields, each ended by NUL. The FIFO is read as a pipe stream, not
// with fs: a read blocked in the thread pool would hold up the runner's exit.
let buf = Buffer.alloc(0);
function requests(chunk) {
  buf = Buffer.concat([buf, chunk]);
  for (;;) {
    const fields = [];
    let at = 0, want = -1;
    while (want < 0 || fields.length < want) {
      const end = buf.indexOf(0, at);
      if (end < 0)
        return;
      const f = buf.toString("utf8", at, end);
      at = end + 1;
      if (want < 0)
        want = Number(f);
      else
        fields.push(f);
    }
    buf = buf.subarray(at);
    start(fields);
  }
}
new Socket({ fd: openSync(`${dir}/req`, constants.O_RDONLY | constants.O_NONBLOCK), writable: false })
  .on("data", requests);

setInterval(() => {
  try {
    process.kill(Number(suitePid), 0);
  } catch {
    realExit(0);
  }
}, 2000).unref();
