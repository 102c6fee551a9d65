// A stand-in for an agent's own CLI (docs/recipes.md, "An agent's CLI"), run by
// tests/security/recipes.sh: it reads its config directory ($MYCLI_CONFIG_DIR/config.json:
// the API's URL), sends one request to the API with its key ($MYCLI_API_KEY) in x-api-key,
// through the proxy $HTTPS_PROXY names as real CLIs do (CONNECT, then TLS), prints what came
// back, then tries a host its config does not name, which must fail.
"use strict";
const fs = require("fs");
const http = require("http");
const tls = require("tls");

function get(url, headers) {
  const u = new URL(url);
  const proxy = new URL(process.env.HTTPS_PROXY || process.env.https_proxy);
  return new Promise((resolve, reject) => {
    const target = `${u.hostname}:${u.port || 443}`;
    const req = http.request({host: proxy.hostname, port: proxy.port, method: "CONNECT",
                              path: target, headers: {Host: target}});
    req.on("connect", (res, socket) => {
      if (res.statusCode !== 200) return reject(new Error(`proxy said ${res.statusCode}`));
      const s = tls.connect({socket, servername: u.hostname}, () => {
        const lines = [`GET ${u.pathname} HTTP/1.1`, `Host: ${u.hostname}`, "Connection: close"];
        for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
        s.write(lines.join("\r\n") + "\r\n\r\n");
      });
      let body = "";
      s.on("data", (d) => (body += d));
      s.on("end", () => resolve(body));
      s.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}

async function main() {
  const cfg = JSON.parse(fs.readFileSync(`${process.env.MYCLI_CONFIG_DIR}/config.json`));
  console.log(`key inside: ${process.env.MYCLI_API_KEY}`);
  const answer = await get(cfg.api_url, {"x-api-key": process.env.MYCLI_API_KEY});
  console.log(answer.includes("GET /v1/messages") ? "api answered" : `api: ${answer}`);
  try {
    await get("https://unknown.test/steal", {});
    console.log("other host reached");
  } catch (e) {
    console.log(`other host refused: ${e.message}`);
  }
}

main().catch((e) => {
  console.log(`failed: ${e.message}`);
  process.exit(1);
});
