"""An OAuth 2.1 authorization server on loopback that answers MCP clients the way a named identity provider does.
Usage: python as.py PORT --mode MODE --resource RS_URL
The issuer is http://127.0.0.1:PORT. /authorize approves at once (302 to redirect_uri with code, state and iss); /token
takes authorization_code (PKCE S256 checked) and refresh_token grants and issues RS256 JWT access tokens signed with a
key made at start (served at /jwks). Clients accepted in every mode: public `provider-app`, and confidential
`provider-secret-app` (secret `provider-app-secret-0123456789`, client_secret_basic or client_secret_post).
MODE (the refusals are the texts these providers are reported to send):
  okta      POST /register: 401 E0000011 "Invalid token provided" (DCR needs an API token). aud = RS_URL
  keycloak  POST /register: 403 insufficient_scope, "Policy 'Trusted Hosts' rejected request". aud = RS_URL
  entra     no registration_endpoint; a token request carrying `resource` is refused with AADSTS901002 (the code
            stays usable: a retry without it succeeds); aud = the application id 6731de76-14a6-49ae-97bc-6eba6914391e
  auth0     open registration; `resource` ignored; with `audience` (authorization or token request) a JWT whose aud is
            it, without one an opaque access token (a random string, not a JWT)
  hydra     open registration; `resource` ignored; a JWT with aud []
  github    no registration_endpoint (and no client ID metadata documents); aud = RS_URL
Test hook: GET /_lab/issued lists every code, access token, refresh token and client secret this process has issued
(so a test can check none of them leaked into a bundle). Loopback only; this is a lab fixture, not a provider."""
import argparse
import base64
import hashlib
import hmac
import json
import secrets
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit

import jwt  # PyJWT (with cryptography), as in the lab's mcp 2.x venv
from cryptography.hazmat.primitives.asymmetric import rsa

MODES = ("okta", "keycloak", "entra", "auth0", "hydra", "github")
ENTRA_APP_ID = "6731de76-14a6-49ae-97bc-6eba6914391e"
TTL = 600  # access-token lifetime, seconds
CODE_TTL = 300
MAX_BODY = 64 * 1024
SECRET_APP, SECRET_APP_SECRET = "provider-secret-app", "provider-app-secret-0123456789"
REFUSALS = {  # POST /register: (status, body) as the provider sends it
    "okta": (401, {"errorCode": "E0000011", "errorSummary": "Invalid token provided", "errorLink": "E0000011",
                   "errorId": "oaeRr9ixwFBRgqJE2VGdWo0Hg", "errorCauses": []}),
    "keycloak": (403, {"error": "insufficient_scope", "error_description": "Policy 'Trusted Hosts' rejected request "
                                                                           "to client-registration service. Details: Host not trusted."}),
}
ENTRA_RESOURCE_REFUSAL = {"error": "invalid_request", "error_description": "AADSTS901002: The 'resource' request "
                          "parameter is not supported. Trace ID: 0 Correlation ID: 0 Timestamp: 2026-01-01 00:00:00Z"}

ap = argparse.ArgumentParser()
ap.add_argument("port", type=int)
ap.add_argument("--mode", required=True, choices=MODES)
ap.add_argument("--resource", required=True, help="the MCP resource server's URL (the audience where the mode uses it)")
args = ap.parse_args()
MODE, RESOURCE = args.mode, args.resource
ISSUER = f"http://127.0.0.1:{args.port}"
KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
KID = "lab-" + secrets.token_hex(4)
JWK = {**json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(KEY.public_key())), "kid": KID, "alg": "RS256", "use": "sig"}

LOCK = threading.Lock()
CLIENTS = {"provider-app": {"secret": None, "redirect_uris": None},  # None: any loopback redirect (RFC 8252 7.3)
           SECRET_APP: {"secret": SECRET_APP_SECRET, "redirect_uris": None}}
CODES, REFRESH = {}, {}  # code -> grant; refresh token -> grant
ISSUED = {"codes": [], "access_tokens": [], "refresh_tokens": [], "client_secrets": [SECRET_APP_SECRET]}


class OAuthError(Exception):
    def __init__(self, status, error, description, headers=None):
        super().__init__(description)
        self.status, self.body, self.headers = status, {"error": error, "error_description": description}, headers or {}


def metadata():
    m = {"issuer": ISSUER, "authorization_endpoint": f"{ISSUER}/authorize", "token_endpoint": f"{ISSUER}/token",
         "jwks_uri": f"{ISSUER}/jwks", "response_types_supported": ["code"],
         "grant_types_supported": ["authorization_code", "refresh_token"],
         "code_challenge_methods_supported": ["S256"], "scopes_supported": ["mcp:tools"],
         "token_endpoint_auth_methods_supported": ["none", "client_secret_basic", "client_secret_post"],
         "authorization_response_iss_parameter_supported": True}
    if MODE not in ("entra", "github"):
        m["registration_endpoint"] = f"{ISSUER}/register"
    return m


def loopback_redirect(uri):
    """An http URL on a loopback host, without a fragment (RFC 8252 7.3)."""
    try:
        u = urlsplit(uri)
        return u.scheme == "http" and u.hostname in ("127.0.0.1", "localhost", "::1") and not u.fragment and u.port
    except ValueError:
        return False


def register(body):
    if MODE in REFUSALS:
        status, doc = REFUSALS[MODE]
        return status, doc
    try:
        req = json.loads(body or b"{}")
    except ValueError:
        raise OAuthError(400, "invalid_client_metadata", "the body is not JSON")
    if not isinstance(req, dict):
        raise OAuthError(400, "invalid_client_metadata", "the body is not a JSON object")
    uris = req.get("redirect_uris")
    if not isinstance(uris, list) or not uris or not all(isinstance(u, str) and loopback_redirect(u) for u in uris):
        raise OAuthError(400, "invalid_redirect_uri", "redirect_uris must be loopback http URLs")
    method = req.get("token_endpoint_auth_method", "client_secret_basic")
    if method not in ("none", "client_secret_basic", "client_secret_post"):
        raise OAuthError(400, "invalid_client_metadata", f"token_endpoint_auth_method {method!r} is not supported")
    client_id = "dcr-" + secrets.token_hex(8)
    secret = None if method == "none" else secrets.token_urlsafe(24)
    with LOCK:
        CLIENTS[client_id] = {"secret": secret, "redirect_uris": list(uris)}
        if secret:
            ISSUED["client_secrets"].append(secret)
    doc = {"client_id": client_id, "client_id_issued_at": int(time.time()), "redirect_uris": uris,
           "token_endpoint_auth_method": method, "grant_types": ["authorization_code", "refresh_token"],
           "response_types": ["code"]}
    for k in ("client_name", "scope"):
        if isinstance(req.get(k), str):
            doc[k] = req[k]
    if secret:
        doc.update(client_secret=secret, client_secret_expires_at=0)
    return 201, doc


def authorize(q):
    """(status, Location or None, body)."""
    client = CLIENTS.get(q.get("client_id", ""))
    redirect = q.get("redirect_uri", "")
    if client is None:
        raise OAuthError(400, "invalid_client", "unknown client_id")
    ok = redirect in client["redirect_uris"] if client["redirect_uris"] is not None else loopback_redirect(redirect)
    if not ok:
        raise OAuthError(400, "invalid_request", "redirect_uri is not registered for this client")

    def back(params):
        sep = "&" if urlsplit(redirect).query else "?"
        extra = {"state": q["state"]} if "state" in q else {}
        return 302, redirect + sep + urlencode({**params, **extra, "iss": ISSUER}), b""

    if q.get("response_type") != "code":
        return back({"error": "unsupported_response_type", "error_description": "only response_type=code"})
    if q.get("code_challenge_method") != "S256" or not q.get("code_challenge"):
        return back({"error": "invalid_request", "error_description": "PKCE with code_challenge_method=S256 is required"})
    code = secrets.token_urlsafe(32)
    grant = {"client_id": q["client_id"], "redirect_uri": redirect, "challenge": q["code_challenge"],
             "scope": q.get("scope") or "mcp:tools", "audience": q.get("audience"), "exp": time.time() + CODE_TTL}
    with LOCK:
        CODES[code] = grant
        ISSUED["codes"].append(code)
    return back({"code": code})


def client_auth(headers, form):
    """The authenticated client id (RFC 6749 2.3.1: Basic, or client_secret in the body, or a public client)."""
    auth = headers.get("Authorization", "")
    if auth[:6].lower() == "basic ":
        try:
            cid, _, secret = base64.b64decode(auth[6:].strip(), validate=True).decode().partition(":")
            cid, secret = unquote(cid.replace("+", " ")), unquote(secret.replace("+", " "))
        except ValueError:
            raise OAuthError(401, "invalid_client", "malformed Basic credentials", {"WWW-Authenticate": "Basic"})
        if form.get("client_id", cid) != cid:
            raise OAuthError(400, "invalid_request", "client_id does not match the Basic credentials")
    else:
        cid, secret = form.get("client_id", ""), form.get("client_secret")
    client = CLIENTS.get(cid)
    if client is None:
        raise OAuthError(401, "invalid_client", "unknown client")
    if client["secret"] is not None and not (secret and hmac.compare_digest(secret, client["secret"])):
        raise OAuthError(401, "invalid_client", "client authentication failed", {"WWW-Authenticate": "Basic"})
    if client["secret"] is None and secret:
        raise OAuthError(401, "invalid_client", "a public client has no secret")
    return cid


def access_token(grant, form):
    now = int(time.time())
    audience = form.get("audience") or grant.get("audience")
    if MODE == "auth0" and not audience:
        token = secrets.token_urlsafe(32)  # opaque: only Auth0's /userinfo would take it
    else:
        aud = {"entra": ENTRA_APP_ID, "hydra": [], "auth0": audience}.get(MODE, RESOURCE)
        claims = {"iss": ISSUER, "sub": "lab-user", "aud": aud, "exp": now + TTL, "iat": now, "nbf": now,
                  "jti": secrets.token_hex(8), "scope": grant["scope"], "client_id": grant["client_id"]}
        token = jwt.encode(claims, KEY, algorithm="RS256", headers={"kid": KID, "typ": "at+jwt"})
    refresh = secrets.token_urlsafe(32)
    with LOCK:
        REFRESH[refresh] = {k: grant[k] for k in ("client_id", "scope", "audience")}
        ISSUED["access_tokens"].append(token)
        ISSUED["refresh_tokens"].append(refresh)
    return {"access_token": token, "token_type": "Bearer", "expires_in": TTL, "scope": grant["scope"],
            "refresh_token": refresh}


def token(headers, form):
    if MODE == "entra" and "resource" in form:
        return 400, ENTRA_RESOURCE_REFUSAL  # before anything is consumed: a retry without it can succeed
    cid = client_auth(headers, form)
    gt = form.get("grant_type")
    if gt == "authorization_code":
        with LOCK:
            grant = CODES.pop(form.get("code", ""), None)
        if grant is None or grant["exp"] < time.time() or grant["client_id"] != cid:
            raise OAuthError(400, "invalid_grant", "the code is unknown, used, expired or another client's")
        if form.get("redirect_uri") != grant["redirect_uri"]:
            raise OAuthError(400, "invalid_grant", "redirect_uri does not match the authorization request")
        verifier = form.get("code_verifier", "")
        digest = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        if not verifier or not hmac.compare_digest(digest, grant["challenge"]):
            raise OAuthError(400, "invalid_grant", "PKCE verification failed")
        return 200, access_token(grant, form)
    if gt == "refresh_token":
        with LOCK:
            grant = REFRESH.pop(form.get("refresh_token", ""), None)  # rotated: single use
        if grant is None or grant["client_id"] != cid:
            raise OAuthError(400, "invalid_grant", "the refresh token is unknown, used or another client's")
        return 200, access_token(grant, form)
    raise OAuthError(400, "unsupported_grant_type", f"grant_type {gt!r} is not supported")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = f"lab-{MODE}-as"

    def send(self, status, doc=None, headers=None):
        body = b"" if doc is None else json.dumps(doc).encode()
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        if doc is not None:
            self.send_header("Content-Type", "application/json")
        self.send_header("Cache-Control", "no-store")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def body(self):
        try:
            n = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            raise OAuthError(400, "invalid_request", "bad Content-Length")
        if n < 0 or n > MAX_BODY:
            raise OAuthError(400, "invalid_request", "body too large")
        return self.rfile.read(n)

    def form(self):
        if not self.headers.get("Content-Type", "").lower().startswith("application/x-www-form-urlencoded"):
            raise OAuthError(400, "invalid_request", "the body must be application/x-www-form-urlencoded")
        pairs = parse_qsl(self.body().decode("utf-8", "replace"), keep_blank_values=True)
        names = [k for k, _ in pairs]
        dup = {k for k in names if names.count(k) > 1 and k != "resource"}
        if dup:
            raise OAuthError(400, "invalid_request", f"repeated parameter {sorted(dup)[0]}")
        return dict(pairs)

    def handle_one(self, method):
        u = urlsplit(self.path)
        route = (method, u.path)
        if route in (("GET", "/.well-known/oauth-authorization-server"), ("GET", "/.well-known/openid-configuration")):
            return self.send(200, metadata())
        if route == ("GET", "/jwks"):
            return self.send(200, {"keys": [JWK]})
        if route == ("GET", "/_lab/issued"):
            with LOCK:
                return self.send(200, ISSUED)
        if route == ("GET", "/authorize"):
            pairs = parse_qsl(u.query, keep_blank_values=True)
            status, location, _ = authorize(dict(pairs))
            return self.send(status, None, {"Location": location})
        if route == ("POST", "/token"):
            return self.send(*token(self.headers, self.form()))
        if route == ("POST", "/register") and "registration_endpoint" in metadata():
            return self.send(*register(self.body()))
        self.body()  # drain, so the connection stays usable
        self.send(404, {"error": "not_found", "error_description": f"{method} {u.path}"})

    def dispatch(self, method):
        try:
            self.handle_one(method)
        except Exception as e:  # noqa: BLE001 -- a bad request never takes the server down
            # the body may be unread: close the connection rather than read it as the next request
            self.close_connection = True
            if isinstance(e, OAuthError):
                return self.send(e.status, e.body, {**e.headers, "Connection": "close"})
            self.log_error("error: %r", e)
            self.send(400, {"error": "invalid_request", "error_description": "malformed request"},
                      {"Connection": "close"})

    def do_GET(self):
        self.dispatch("GET")

    def do_POST(self):
        self.dispatch("POST")


if __name__ == "__main__":
    print(f"{MODE} AS {ISSUER} for {RESOURCE}", flush=True)
    ThreadingHTTPServer(("127.0.0.1", args.port), Handler).serve_forever()
