// The legacy era with the official SDK 1.x client, over every legacy protocol version: the
// client always offers its latest in initialize, so its first message is rewritten to ask for
// VERSION, which the server must then agree to. Checks the shape each version defines for
// tools/list and results, how bad arguments come back (-32602 up to 2025-06-18, a tool error
// from 2025-11-25), ping, and progress that keeps a shell_job_wait longer than the client's
// timeout alive. Usage (tests/integration/serve_modern.sh):
//   node legacy.mjs RTN DATA_DIR VERSION
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { checker, deadline } from "./check.mjs";

const [rtn, dataDir, version] = process.argv.slice(2);
const versions = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
if (!rtn || !dataDir || !versions.includes(version)) {
  console.error(`usage: legacy.mjs RTN DATA_DIR ${versions.join("|")}`);
  process.exit(2);
}
const at = (v) => versions.indexOf(version) >= versions.indexOf(v);

const check = checker(version);

deadline(90_000, version);

const transport = new StdioClientTransport({
  command: rtn,
  args: ["serve", "--data-dir", dataDir],
  env: process.env,
  stderr: "inherit",
});
let agreed;
const send = transport.send.bind(transport);
transport.send = (msg, opts) => {
  if (msg.method === "initialize") msg = { ...msg, params: { ...msg.params, protocolVersion: version } };
  return send(msg, opts);
};
const client = new Client({ name: "rtn-legacy", version: "1.0.0" });
const start = transport.start.bind(transport);
transport.start = async () => {
  await start();
  const inner = transport.onmessage;
  transport.onmessage = (m, extra) => {
    if (m.result?.protocolVersion) agreed = m.result.protocolVersion;
    inner?.(m, extra);
  };
};
await client.connect(transport);
check(agreed === version, `initialize agreed on ${version}`, agreed);

const { tools } = await client.listTools();
const run = tools.find((t) => t.name === "shell_run");
check(run && Boolean(run.outputSchema) === at("2025-06-18") && Boolean(run.annotations) === at("2025-03-26"),
      "tools/list has the fields of the version", run);

let r = await client.callTool({ name: "shell_run", arguments: { command: "echo hi" } });
const text = JSON.parse(r.content[0].text);
check(!r.isError && text.stdout === "hi\n" && Boolean(r.structuredContent) === at("2025-06-18") &&
      r.resultType === undefined && r._meta === undefined, "shell_run result in the version's shape", r);

const bad = await client.callTool({ name: "shell_run", arguments: { command: 42 } }).catch((e) => e);
if (at("2025-11-25"))
  check(bad.isError && bad.content[0].text.includes("command: must be a string, got a number"),
        "a bad argument is a tool error", bad);
else
  check(bad instanceof Error && bad.code === -32602 && bad.message.includes("command: must be a string, got a number"),
        "a bad argument is -32602", String(bad));

await client.ping();
check(true, "ping");

// The server's progress comes every 5 s: a 9 s timeout leaves 4 s for a loaded machine to
// deliver it, and the 12 s job still outlasts that timeout.
const job = JSON.parse((await client.callTool({ name: "shell_job_start", arguments: { command: "sleep 12" } })).content[0].text);
const t0 = Date.now();
const progress = [];
r = await client.callTool({ name: "shell_job_wait", arguments: { job_id: job.job_id, timeout: 60 } }, undefined, {
  timeout: 9000,
  resetTimeoutOnProgress: true,
  onprogress: (p) => progress.push(p),
}).catch((e) => e);
check(!(r instanceof Error) && !r.isError && JSON.parse(r.content[0].text).state === "exited" &&
      Date.now() - t0 > 9000 && progress.length >= 1,
      "progress keeps a wait longer than the client's timeout alive", r instanceof Error ? String(r) : progress);

await client.close();
console.log(`legacy done [${version}]`);
