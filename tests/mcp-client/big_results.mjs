// The largest results `rtn serve` can give, read by the official TypeScript SDK clients: 1.x
// (@modelcontextprotocol/sdk) and 2.x (@modelcontextprotocol/client). Both close the stdio
// transport when a message passes 10 MiB (their ReadBuffer), which ends the session and its
// uncommitted work; every result here must arrive, cut where it had to be and saying so,
// and the session must answer a ping after each. Usage (tests/integration/serve_e2e.sh):
//   node big_results.mjs RTN DATA_DIR 1|2
// Prints one line per check and exits non-zero on the first failure.
import { checker, deadline, serverEnv } from "./check.mjs";
const [rtn, dataDir, major] = process.argv.slice(2);
if (!rtn || !dataDir || !["1", "2"].includes(major)) {
  console.error("usage: big_results.mjs RTN DATA_DIR 1|2");
  process.exit(2);
}
const { Client } = await import(major === "1" ? "@modelcontextprotocol/sdk/client/index.js" : "@modelcontextprotocol/client");
const { StdioClientTransport } = await import(major === "1" ? "@modelcontextprotocol/sdk/client/stdio.js" : "@modelcontextprotocol/client/stdio");

const check = checker(undefined, 600);

deadline(240_000);

const transport = new StdioClientTransport({
  command: rtn,
  args: ["serve", "--data-dir", dataDir, "--max-output", String(16 << 20)],
  env: serverEnv(),
  stderr: "inherit",
});
let closed = null;
const client = new Client({ name: `rtn-big-${major}`, version: "1.0.0" });
client.onerror = (e) => { closed ??= String(e); };
client.onclose = () => { closed ??= "closed"; };
await client.connect(transport);
check(client.getServerVersion()?.name === "rtn", `SDK ${major}: initialize`);

const MiB = 1 << 20;
async function call(name, args, what) {
  const t0 = Date.now();
  let r;
  try {
    r = await client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 });
  } catch (e) {
    check(false, `${what}: the call failed`, `${e} (transport: ${closed})`);
  }
  check(closed === null, `${what}: the session is open (${Date.now() - t0} ms)`, closed);
  await client.ping();
  check(!r.isError, `${what}: no error`, r.content);
  return r;
}

async function run(command, what) {
  return (await call("shell_run", { command, timeout: 120 }, what)).structuredContent;
}

// The two cases that ended a session: 1 MiB of newlines on each stream, and a 4 MiB file as
// base64 (the documented maximum).
let r = await run(`yes "" | head -c ${MiB}; yes "" | head -c ${MiB} >&2`, "1 MiB of newlines on stdout and stderr");
check(r.stdout.length + r.stderr.length > MiB, "newlines kept", [r.stdout.length, r.stderr.length]);
await run(`head -c ${4 * MiB} /dev/urandom > /tmp/big.bin`, "make a 4 MiB file");
let res = await call("file_read", { path: "/tmp/big.bin", encoding: "base64" }, "file_read base64 of 4 MiB");
check(Buffer.from(res.structuredContent.content, "base64").length === 4 * MiB && !res.structuredContent.truncated,
  "the whole 4 MiB arrive");
check(res.content[0].text.length < MiB, "its text copy is not a second copy", res.content[0].text.length);

// Worse: control characters are six bytes each in JSON, and --max-output lets 16 MiB through.
r = await run(`head -c ${MiB} /dev/zero | tr '\\0' '\\1'; head -c ${MiB} /dev/zero | tr '\\0' '\\2' >&2`,
  "1 MiB of control characters on each stream");
check(r.stdout_truncated || r.stderr_truncated, "cut and flagged", [r.stdout_truncated, r.stderr_truncated]);
r = await run(`head -c ${16 * MiB} /dev/zero | tr '\\0' a`, "16 MiB of stdout");
check(r.stdout_truncated && r.stdout.length > 4 * MiB && /^a+$/.test(r.stdout), "cut and flagged", r.stdout.length);

// A text file of control characters (valid UTF-8, so not refused as binary), numbered.
await run(`head -c ${MiB} /dev/zero | tr '\\0' '\\33' | fold -w 100 > /tmp/esc.txt`, "make a file of ESC lines");
res = await call("file_read", { path: "/tmp/esc.txt", limit: 100000 }, "file_read text of 1 MiB of ESC");
check(res.structuredContent.truncated, "cut and flagged");

// Listings and matches: 10000 long paths.
await run(`python3 -c 'import os\nd = "/tmp/" + "d" * 200 + "/" + "e" * 200\nos.makedirs(d)\n` +
  `for i in range(10000): open(d + "/" + "f" * 180 + str(i), "w").write("match\\n")'`,
  "make 10000 files with long names");
res = await call("file_list", { path: "/tmp", depth: 3 }, "file_list of 10000 long paths");
check(res.structuredContent.entries.length > 100, "entries kept", res.structuredContent.entries.length);
res = await call("file_search", { path: "/tmp", pattern: "match", max_matches: 10000 }, "file_search with 10000 matches");
check(res.structuredContent.matches.length > 100, "matches kept", res.structuredContent.matches.length);

await client.close();
console.log(`big results done (SDK ${major})`);
