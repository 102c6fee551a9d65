"""A browser's page talks MCP to `rtn serve --http` (serve_http.sh browser_page): a page
served here on a port of its own, whose origin the server is started to allow
(--allow-origin), is opened by a real headless Chromium; its script initializes a session,
runs shell_run, sees a wrong token's 401 with WWW-Authenticate and ends the session with
DELETE, each with fetch() as a browser client does (CORS preflights included), then posts
what it saw back to this server. Prints that line.

    python3 browser_page.py RTN CHROMIUM DIR
"""
import http.server
import json
import os
import re
import subprocess
import sys
import threading
import time

rtn, chromium, d = sys.argv[1:4]

PAGE = """<html><body><script>
const U = %(url)s, T = %(tok)s;
const H = (more) => Object.assign({"Authorization": "Bearer " + T,
    "Content-Type": "application/json", "Accept": "application/json, text/event-stream"}, more);
async function go() {
  const log = [];
  try {
    let r = await fetch(U, {method: "POST", headers: H({}), body: JSON.stringify({jsonrpc: "2.0",
      id: 1, method: "initialize", params: {protocolVersion: "2025-06-18", capabilities: {},
      clientInfo: {name: "browser", version: "1"}}})});
    const sid = r.headers.get("Mcp-Session-Id");
    log.push("initialize " + r.status + " session " + (sid ? sid.length : "unreadable"));
    const s = {"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18"};
    r = await fetch(U, {method: "POST", headers: H(s),
      body: JSON.stringify({jsonrpc: "2.0", method: "notifications/initialized"})});
    log.push("initialized " + r.status);
    r = await fetch(U, {method: "POST", headers: H(s), body: JSON.stringify({jsonrpc: "2.0",
      id: 2, method: "tools/call", params: {name: "shell_run",
      arguments: {command: "echo from-the-$(echo page)"}}})});
    const t = await r.text();
    log.push("shell_run " + r.status + " " + (t.includes("from-the-page") ? "ran" : t.slice(0, 200)));
    r = await fetch(U, {method: "POST", headers: H({"Authorization": "Bearer wrong"}), body: "{}"});
    log.push("wrong token " + r.status + " " + r.headers.get("WWW-Authenticate"));
    r = await fetch(U, {method: "DELETE", headers: H(s)});
    log.push("delete " + r.status);
  } catch (e) {
    log.push("error " + e);
  }
  await fetch("/result", {method: "POST", body: log.join("; ")});
}
go();
</script></body></html>
"""

result = []
got = threading.Event()


class Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        b = self.server.page.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)

    def do_POST(self):
        result.append(self.rfile.read(int(self.headers.get("Content-Length", 0))).decode())
        self.send_response(204)
        self.end_headers()
        got.set()

    def log_message(self, *a):
        pass


page = http.server.HTTPServer(("127.0.0.1", 0), Page)
origin = "http://127.0.0.1:%d" % page.server_address[1]
tok = open(os.path.join(d, "tok")).read().strip()
log = open(os.path.join(d, "srv.log"), "w+")
srv = subprocess.Popen([rtn, "serve", "--http", "127.0.0.1:0", "--token-file",
                        os.path.join(d, "tok"), "--data-dir", os.path.join(d, "data"),
                        "--allow-origin", origin], stdin=subprocess.DEVNULL, stderr=log)
browser = None
try:
    url, end = None, time.monotonic() + 30
    while not url and time.monotonic() < end:
        log.seek(0)
        m = re.search(r"http://[0-9.]+:[0-9]+/mcp", log.read())
        url = m and m.group(0)
        time.sleep(0.05)
    assert url, "rtn serve --http did not say where it listens"
    page.page = PAGE % {"url": json.dumps(url), "tok": json.dumps(tok)}
    threading.Thread(target=page.serve_forever, daemon=True).start()
    # --no-sandbox: Chromium's own sandbox needs a user namespace or a setuid helper, which a
    # root or container run may not give it; the page is ours.
    browser = subprocess.Popen([chromium, "--headless=new", "--no-sandbox", "--disable-gpu",
                                "--no-first-run", "--user-data-dir=" + os.path.join(d, "chr"),
                                origin + "/"], stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=open(os.path.join(d, "chr.log"), "w"))
    if not got.wait(60):
        sys.exit("the page reported nothing in 60 s")
    print(result[0])
finally:
    for p in (browser, srv):
        if p:
            p.kill()
            p.wait()
    page.server_close()
