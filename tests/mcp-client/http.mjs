// `rtn serve --http` driven by the official MCP TypeScript clients over Streamable HTTP
// (StreamableHTTPClientTransport): SDK 1.x in the legacy era, the 2.x client pinned to the
// stateless 2026-07-28 era. Usage (tests/integration/serve_http.sh, tools/bench-http.sh):
//   node http.mjs URL TOKEN_FILE sdk1|modern|noauth|isolation|load [N]|state CLIENT|progress CLIENT
// sdk1:      initialize, tools/list, shell_run and a file round trip, then DELETE
// modern:    the 2.x client pinned to 2026-07-28: discover, tools/list, shell_run
// noauth:    a client without the token is refused with 401
// isolation: two sessions: neither sees the other's files or processes; a commit of one is
//            in the server's environment, which the other's history shows
// load N:    N sessions at once, each initialize + shell_run; prints the latencies (the
//            benchmark of docs/benchmarks.md; serve_http.sh's sessions_200 loads with curl)
// progress C: client C (as for state) runs a command longer than its request timeout with
//            resetTimeoutOnProgress: the server's progress on the POST's event stream keeps it
// logs C:    client C's log messages of a call on the POST's event stream: the legacy era at
//            the session's logging/setLevel, the 2026-07-28 era at the request's _meta logLevel
//            (none asked, none sent)
// state C:   client C (sdk1, or the 2.x client in legacy, auto or modern mode) keeps a file,
//            a job and a sandbox handle across calls: in its session in the legacy era, and
//            from one client to a fresh one in the 2026-07-28 era (every request stands alone)
// Prints one line per check and exits non-zero on the first failure.
import { readFileSync } from "node:fs";
import { checker, deadline } from "./check.mjs";

const [url, tokenFile, mode, nArg] = process.argv.slice(2);
if (!url || !tokenFile || !mode) {
  console.error("usage: http.mjs URL TOKEN_FILE sdk1|modern|noauth|isolation|load [N]");
  process.exit(2);
}
// Only the client a run uses is imported: each SDK's import is a third of a second of CPU,
// and a run of one mode uses one of them.
const sdk2 = mode === "modern" || (["state", "progress", "logs"].includes(mode) && nArg !== "sdk1");
const { Client: Client1 } = sdk2 ? {} : await import("@modelcontextprotocol/sdk/client/index.js");
const { StreamableHTTPClientTransport: Http1 } = sdk2 ? {} :
  await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
const { LoggingMessageNotificationSchema } = sdk2 ? {} : await import("@modelcontextprotocol/sdk/types.js");
const { Client: Client2, StreamableHTTPClientTransport: Http2 } = sdk2 ?
  await import("@modelcontextprotocol/client") : {};
const token = readFileSync(tokenFile, "utf8").trim();
const auth = { headers: { Authorization: `Bearer ${token}` } };

const check = checker(mode);

deadline(600_000, mode);

async function session(name, requestInit = auth) {
  const client = new Client1({ name, version: "1.0.0" });
  const transport = new Http1(new URL(url), { requestInit });
  await client.connect(transport);
  return { client, transport };
}

async function sh(client, command) {
  const r = await client.callTool({ name: "shell_run", arguments: { command } });
  return r.structuredContent ?? { error: r.content?.[0]?.text };
}

async function end({ client, transport }) {
  await transport.terminateSession(); // DELETE: the server ends the session's sandbox
  await client.close();
}

if (mode === "sdk1") {
  const s = await session("rtn-http");
  check(s.transport.sessionId?.length === 32, "the server gave a session id", s.transport.sessionId);
  check(s.client.getServerVersion()?.name === "rtn", "server identifies itself");
  const { tools } = await s.client.listTools();
  check(tools.some((t) => t.name === "shell_run"), "tools/list has shell_run");
  let r = await sh(s.client, "echo hello; exit 3");
  check(r.stdout === "hello\n" && r.exit_code === 3, "shell_run result", r);
  await s.client.callTool({ name: "file_write", arguments: { path: "/tmp/f", content: "kept\n" } });
  r = await sh(s.client, "cat /tmp/f");
  check(r.stdout === "kept\n", "the session keeps its sandbox between calls", r);
  await s.client.ping();
  check(true, "ping");
  await end(s);
  check(true, "DELETE ended the session");
} else if (mode === "modern") {
  const client = new Client2({ name: "rtn-http-modern", version: "1.0.0" },
                             { versionNegotiation: { mode: { pin: "2026-07-28" } } });
  await client.connect(new Http2(new URL(url), { requestInit: auth }));
  check(client.getNegotiatedProtocolVersion() === "2026-07-28", "negotiated 2026-07-28",
        client.getNegotiatedProtocolVersion());
  const d = await client.discover();
  check(d.supportedVersions[0] === "2026-07-28", "server/discover", d.supportedVersions);
  const { tools } = await client.listTools();
  check(tools.some((t) => t.name === "shell_run"), "tools/list has shell_run");
  const r = await client.callTool({ name: "shell_run", arguments: { command: "echo modern" } });
  check(r.structuredContent?.stdout === "modern\n", "shell_run result", r.structuredContent);
  await client.close();
} else if (mode === "noauth") {
  for (const [what, init] of [["no token", {}],
                              ["a wrong token", { headers: { Authorization: `Bearer x${token}` } }]]) {
    let err;
    try {
      await session("rtn-http-noauth", init);
    } catch (e) {
      err = e;
    }
    check(err && /401|Unauthorized/i.test(`${err.code} ${err.message} ${err.constructor.name}`),
          `${what} is refused with 401`, `${err}`);
  }
} else if (mode === "isolation") {
  const a = await session("rtn-http-a"), b = await session("rtn-http-b");
  let r = await sh(a.client, "echo secret-a > /tmp/a && echo secret-a > /workspace/a && sleep 300 & echo started");
  check(r.stdout === "started\n", "session A writes its files and runs a process", r);
  r = await sh(b.client, "cat /tmp/a /workspace/a; ls /tmp /workspace; ps -eo args");
  check(!r.stdout.includes("secret-a") && !r.stdout.includes("sleep 300"), "session B sees none of A's files or processes", r);
  const fr = await b.client.callTool({ name: "file_read", arguments: { path: "/tmp/a" } });
  check(fr.isError, "B's file_read of A's file fails", fr.content?.[0]?.text);
  const c = await a.client.callTool({ name: "env_commit", arguments: { message: "a's commit" } });
  check(!c.isError, "A commits", c.content?.[0]?.text);
  const l = await b.client.callTool({ name: "env_snapshot_list", arguments: {} });
  check(JSON.stringify(l.structuredContent).includes("a's commit"), "the environment B works on has A's commit (environments are per server)", l.structuredContent);
  r = await sh(b.client, "cat /tmp/a");
  check(r.exit_code !== 0, "B still cannot read A's file", r);
  await end(a);
  await end(b);
} else if (mode === "load") {
  const n = Number(nArg ?? 200);
  const ms = (t) => Number(process.hrtime.bigint() - t) / 1e6;
  const t0 = process.hrtime.bigint();
  const lat = { init: [], call: [] };
  const sessions = await Promise.all(Array.from({ length: n }, async (_, i) => {
    let t = process.hrtime.bigint();
    const s = await session(`rtn-load-${i}`);
    lat.init.push(ms(t));
    t = process.hrtime.bigint();
    const r = await sh(s.client, `echo session-${i}`);
    lat.call.push(ms(t));
    if (r.stdout !== `session-${i}\n`)
      check(false, `session ${i} got its own answer`, r);
    return s;
  }));
  const all = ms(t0);
  check(sessions.length === n, `${n} sessions open at once, each answered by its own sandbox`);
  const pct = (a, p) => a.sort((x, y) => x - y)[Math.min(a.length - 1, Math.floor(a.length * p))].toFixed(0);
  console.log(`load: ${n} sessions in ${all.toFixed(0)} ms; initialize p50 ${pct(lat.init, 0.5)} ms p95 ${pct(lat.init, 0.95)} ms; ` +
              `first shell_run p50 ${pct(lat.call, 0.5)} ms p95 ${pct(lat.call, 0.95)} ms`);
  if (process.env.HTTP_LOAD_HOLD) { // the bench measures memory while they are idle
    console.log("holding");
    await new Promise((r) => process.stdin.once("data", r));
  }
  await Promise.all(sessions.map(end));
  check(true, "every session ended");
} else if (mode === "state" || mode === "progress" || mode === "logs") {
  const negotiation = { legacy: { mode: "legacy" }, auto: { mode: "auto" },
                        modern: { mode: { pin: "2026-07-28" } } }[nArg];
  if (nArg !== "sdk1" && !negotiation) {
    console.error(`${mode}: CLIENT is sdk1, legacy, auto or modern`);
    process.exit(2);
  }
  const open = async () => {
    if (nArg === "sdk1")
      return (await session("rtn-http-state")).client;
    const c = new Client2({ name: "rtn-http-state", version: "1.0.0" }, { versionNegotiation: negotiation });
    await c.connect(new Http2(new URL(url), { requestInit: auth }));
    return c;
  };
  if (mode === "progress") {
    // The command outlasts the client's 8 s request timeout by construction; the server's
    // progress (every 5 s, 3 s of slack for a loaded machine) must reset it. No assertion on
    // how long anything took.
    const c = await open();
    const progress = [];
    const params = { name: "shell_run", arguments: { command: "sleep 10; echo done" } };
    const opts = { timeout: 8000, resetTimeoutOnProgress: true, onprogress: (p) => progress.push(p) };
    // 1.x takes (params, resultSchema, options), 2.x (params, options).
    const r = await (nArg === "sdk1" ? c.callTool(params, undefined, opts) : c.callTool(params, opts))
      .catch((e) => e);
    check(!(r instanceof Error) && !r.isError && r.structuredContent?.stdout === "done\n",
          "progress kept a call longer than the client's timeout alive", r instanceof Error ? String(r) : r);
    check(progress.length >= 1 && progress.every((p, i) => i === 0 || p.progress > progress[i - 1].progress),
          "progress notifications, growing", progress);
    const again = await c.callTool({ name: "shell_run", arguments: { command: "echo after" } });
    check(again.structuredContent?.stdout === "after\n", "the next call is answered", again);
    await c.close();
    console.log(`http done [${mode}]`);
    process.exit(0);
  }
  if (mode === "logs") {
    const c = await open();
    const logs = [];
    const seen = (n) => logs.push(n.params);
    if (nArg === "sdk1")
      c.setNotificationHandler(LoggingMessageNotificationSchema, seen);
    else
      c.setNotificationHandler("notifications/message", seen);
    const modern = nArg !== "sdk1" && c.getNegotiatedProtocolVersion() === "2026-07-28";
    // A call that starts a sandbox logs so at info; logLevel is the request's (modern) or
    // the session's (legacy).
    const run = async (sandbox, level) => {
      const before = logs.length;
      const params = { name: "shell_run", arguments: { sandbox, command: "true" } };
      if (modern && level)
        params._meta = { "io.modelcontextprotocol/logLevel": level };
      else if (!modern && level)
        await c.setLoggingLevel(level);
      const r = await c.callTool(params);
      check(!r.isError, `shell_run in ${sandbox}`, r);
      return logs.slice(before);
    };
    const fresh = async () => (await c.callTool({ name: "sandbox_new", arguments: {} })).structuredContent.sandbox;
    let got = await run("sb-1", modern ? undefined : "info");
    if (modern)
      check(got.length === 0, "no log message without a logLevel in the request", got);
    else
      check(got.length === 1 && got[0].level === "info" && got[0].data === "sb-1: the sandbox started for this command" &&
            got[0]._meta === undefined, "the call's log message on its stream, at the session's level", got);
    got = await run(await fresh(), "warning");
    check(got.length === 0, "no info message at level warning", got);
    const sb = await fresh();
    got = await run(sb, "debug");
    check(got.length === 1 && got[0].level === "info" && got[0].data === `${sb}: the sandbox started for this command` &&
          got[0]._meta === undefined, "the call's log message on its stream at the level asked for", got);
    await c.close();
    console.log(`http done [${mode}]`);
    process.exit(0);
  }
  const call = async (client, name, args) => {
    const r = await client.callTool({ name, arguments: args });
    return { error: r.isError ? r.content?.[0]?.text : undefined, ...(r.structuredContent ?? {}) };
  };
  const a = await open();
  const modern = nArg === "sdk1" ? false : a.getNegotiatedProtocolVersion() === "2026-07-28";
  check(modern === (nArg === "auto" || nArg === "modern"), `the ${modern ? "2026-07-28" : "legacy"} era`,
        nArg === "sdk1" ? "1.x" : a.getNegotiatedProtocolVersion());
  let r = await call(a, "file_write", { path: "/tmp/kept", content: "kept\n" });
  check(!r.error, "file_write", r);
  const job = await call(a, "shell_job_start", { command: "echo job-out; sleep 1" });
  check(job.job_id, "shell_job_start", job);
  const sb = await call(a, "sandbox_new", {});
  check(sb.sandbox && sb.sandbox !== "sb-1", "sandbox_new", sb);
  r = await call(a, "file_write", { sandbox: sb.sandbox, path: "/tmp/in-sb", content: "in-sb\n" });
  check(!r.error, "file_write in the new sandbox", r);
  // The later calls: in the legacy era on the session's client; in the 2026-07-28 era from
  // a client that never saw the first one's requests as well.
  const b = modern ? await open() : a;
  for (const c of modern ? [a, b] : [a]) {
    r = await call(c, "file_read", { path: "/tmp/kept" });
    check(r.content?.endsWith("\tkept\n"), "a later call reads the file", r);
    r = await call(c, "shell_job_wait", { job_id: job.job_id, timeout: 30 });
    check(r.state === "exited" && r.exit_code === 0, "a later call waits for the job", r);
    r = await call(c, "shell_job_output", { job_id: job.job_id });
    check(r.output === "job-out\n", "a later call reads the job's output", r);
    r = await call(c, "file_read", { sandbox: sb.sandbox, path: "/tmp/in-sb" });
    check(r.content?.endsWith("\tin-sb\n"), "a later call reaches the sandbox by its handle", r);
    r = await call(c, "sandbox_list", {});
    check(r.sandboxes?.some((s) => s.sandbox === sb.sandbox), "sandbox_list lists the handle", r);
  }
  r = await call(b, "file_read", { path: "/tmp/in-sb" });
  check(r.error, "the default sandbox does not have the new sandbox's file", r);
  r = await call(b, "sandbox_close", { sandbox: sb.sandbox });
  check(!r.error, "sandbox_close", r);
  r = await call(b, "file_read", { sandbox: sb.sandbox, path: "/tmp/in-sb" });
  check(r.error?.includes(sb.sandbox), "a closed handle is refused by name", r);
  await a.close();
  if (b !== a)
    await b.close();
} else {
  console.error(`unknown mode ${mode}`);
  process.exit(2);
}
console.log(`http done [${mode}]`);
