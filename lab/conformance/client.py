#!/usr/bin/env python3
"""lab/conformance/client.py SERVER_URL -- the client command the conformance suite runs.

The suite (`conformance client --command ...`) starts a test MCP server, and for the auth
scenarios a test authorization server, on loopback, appends the server's URL to this
command and sets MCP_CONFORMANCE_SCENARIO (and MCP_CONFORMANCE_CONTEXT for some).

This runs `mcp-collect --no-browser -o OUT SERVER_URL` with a private MCP_PROBE_HOME (a
fresh temp dir: no token cache, registration or key is shared between scenarios), and
plays the user: when mcp-collect prints its login URL on stderr, it GETs that URL and
follows the redirects (the suite's authorization server approves at once) hop by hop,
up to mcp-collect's loopback callback, which completes the login. Every hop must be a
loopback http(s) URL; anything else is refused and never contacted. The callback URL
(it carries the authorization code) is not printed.

Environment: MCP_COLLECT (the binary, default target/debug/mcp-collect),
CONFORMANCE_OUT (a directory: the bundle goes to OUT/<scenario>/, and OUT/<scenario>.context.json
keeps MCP_CONFORMANCE_CONTEXT so the leak check knows the scenario's secrets),
CONFORMANCE_COLLECT_ARGS (extra mcp-collect flags, split on spaces).
Exit status: mcp-collect's.
"""
import http.client
import ipaddress
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from urllib.parse import urljoin, urlsplit

URL_LINE = "mcp-collect: open this URL to log in: "
# The client ID metadata document URL auth/basic-cimd expects as the client id.
CIMD_URL = "https://conformance-test.local/client-metadata.json"
MAX_HOPS = 10


def loopback(url):
    u = urlsplit(url)
    if u.scheme not in ("http", "https") or not u.hostname:
        return False
    if u.hostname == "localhost":
        return True
    try:
        return ipaddress.ip_address(u.hostname).is_loopback
    except ValueError:
        return False


def play_user(url, log):
    """GET url and follow redirects while they stay on loopback. Logs hosts and statuses only."""
    for hop in range(MAX_HOPS):
        if not loopback(url):
            log(f"login: hop {hop} leaves loopback ({urlsplit(url).scheme}://{urlsplit(url).hostname}), not contacted")
            return
        u = urlsplit(url)
        conn_cls = http.client.HTTPSConnection if u.scheme == "https" else http.client.HTTPConnection
        conn = conn_cls(u.hostname, u.port, timeout=15)
        path = (u.path or "/") + (f"?{u.query}" if u.query else "")
        try:
            conn.request("GET", path, headers={"Accept": "text/html,*/*"})
            r = conn.getresponse()
            r.read(1 << 20)
        except OSError as e:
            log(f"login: hop {hop} to {u.hostname}:{u.port}{u.path}: {type(e).__name__}: {e}")
            return
        finally:
            conn.close()
        log(f"login: hop {hop} GET {u.hostname}:{u.port}{u.path} -> {r.status}")
        loc = r.getheader("Location")
        if r.status in (301, 302, 303, 307, 308) and loc:
            url = urljoin(url, loc)
            continue
        return
    log(f"login: more than {MAX_HOPS} redirects, stopped")


def main():
    if len(sys.argv) < 2:
        print("usage: client.py SERVER_URL", file=sys.stderr)
        return 2
    server_url = sys.argv[-1]
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "unknown")
    safe = scenario.replace("/", "_")
    collect = os.environ.get("MCP_COLLECT", "target/debug/mcp-collect")
    out_root = os.environ.get("CONFORMANCE_OUT") or tempfile.mkdtemp(prefix="conformance-out-")
    out = os.path.join(out_root, safe)
    os.makedirs(out, exist_ok=True)
    ctx = os.environ.get("MCP_CONFORMANCE_CONTEXT")
    if ctx:
        with open(os.path.join(out_root, f"{safe}.context.json"), "w") as f:
            f.write(ctx)
    home = tempfile.mkdtemp(prefix="mcp-probe-home-")
    extra = os.environ.get("CONFORMANCE_COLLECT_ARGS", "").split()
    # The scenario's context is handed over as an operator would: ids and URLs as flags,
    # every secret through an environment variable (never a flag value), a key as a file.
    #   client_id [+ client_secret]        --client-id [--client-secret-env]   (pre-registration)
    #   + the client-credentials scenarios --grant client-credentials
    #   private_key_pem                    --client-key-file (private_key_jwt)
    #   valid_jwt                          --grant jwt-bearer --assertion-env  (workload identity)
    #   idp_id_token, idp_token_endpoint   --grant enterprise-managed --id-token-env --idp-token-endpoint
    # auth/basic-cimd hands nothing over: its client ID metadata document URL is fixed by the
    # suite (the authorization server accepts it without fetching it).
    client = []
    secret_env = {}
    try:
        c = json.loads(ctx) if ctx else {}
    except ValueError:
        c = {}
    if not isinstance(c, dict):
        c = {}
    s = lambda k: c[k] if isinstance(c.get(k), str) and c[k] else None
    key_dir = tempfile.mkdtemp(prefix="conformance-key-")
    if s("client_id"):
        client = ["--client-id", s("client_id")]
        if s("client_secret"):
            client += ["--client-secret-env", "CONFORMANCE_CLIENT_SECRET"]
            secret_env["CONFORMANCE_CLIENT_SECRET"] = s("client_secret")
        if s("private_key_pem"):
            key = os.path.join(key_dir, "client.key")
            fd = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(s("private_key_pem"))
            client += ["--client-key-file", key]
    if scenario.startswith("auth/client-credentials"):
        client += ["--grant", "client-credentials"]
    if s("valid_jwt"):
        client += ["--grant", "jwt-bearer", "--assertion-env", "CONFORMANCE_ASSERTION"]
        secret_env["CONFORMANCE_ASSERTION"] = s("valid_jwt")
    if s("idp_id_token") and s("idp_token_endpoint"):
        client += ["--grant", "enterprise-managed", "--idp-token-endpoint", s("idp_token_endpoint"),
                   "--id-token-env", "CONFORMANCE_ID_TOKEN"]
        secret_env["CONFORMANCE_ID_TOKEN"] = s("idp_id_token")
        if s("idp_client_id"):
            client += ["--idp-client-id", s("idp_client_id")]
    if scenario == "auth/basic-cimd":
        client += ["--client-metadata-url", CIMD_URL]
    if scenario == "auth/scope-step-up":
        # Its 403 insufficient_scope comes only from tools/call, which mcp-collect sends only
        # with the operator's consent: given here for the suite's one tool.
        inputs = os.path.join(key_dir, "inputs.json")
        with open(inputs, "w") as f:
            json.dump({server_url: {"tool_calls_authorised": True, "tool_arguments": {"test-tool": {}}}}, f)
        client += ["--inputs", inputs]
    cmd = [collect, "--no-browser", "-o", out, *client, *extra, server_url]

    def log(msg):
        print(f"client.py: {msg}", file=sys.stderr, flush=True)

    log(f"scenario {scenario}: {' '.join(cmd)}")
    env = dict(os.environ, MCP_PROBE_HOME=home, **secret_env)
    for k in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "no_proxy", "NO_PROXY"):
        env.pop(k, None)
    try:
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, text=True)
        logins = []
        for line in p.stderr:
            sys.stderr.write(line)
            sys.stderr.flush()
            if line.startswith(URL_LINE):
                t = threading.Thread(target=play_user, args=(line[len(URL_LINE):].strip(), log), daemon=True)
                t.start()
                logins.append(t)
        rc = p.wait()
        for t in logins:
            t.join(timeout=20)
        log(f"mcp-collect exited {rc}")
        return rc
    finally:
        shutil.rmtree(home, ignore_errors=True)
        shutil.rmtree(key_dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
