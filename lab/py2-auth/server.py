"""OAuth-protected MCP resource server (mcp 2.x): RFC 9728 metadata, 401/403 challenges, JWT access tokens
checked against the AS's JWKS (iss, aud == this resource or --audience, exp, iat, scope).
Usage: python server.py PORT AS_URL [--prm-resource URL] [--aud-contains] [--no-aud-check] [--audience VALUE]
  --prm-resource URL  the metadata document (at the usual path) names URL as `resource` instead of this endpoint's own
                      URI: with a URL that does not cover http://127.0.0.1:PORT/mcp it is a misconfigured server (3.3.2d)
  --aud-contains      accept a token whose aud merely contains this resource (aud [resource, other...]); by default aud
                      must be exactly this resource (a string, or a one-element list)
  --no-aud-check      accept a token whatever its aud (a server that does not bind tokens to itself)
  --audience VALUE    the audience this server accepts instead of its resource URI: aud must be exactly VALUE (a server
                      registered in Microsoft Entra ID accepts its own application id); --aud-contains applies to it"""
import argparse
import sys
import jwt  # PyJWT, a dependency of mcp
import uvicorn
from starlette.routing import Route
from mcp.server import MCPServer
from mcp.server.auth.handlers.metadata import ProtectedResourceMetadataHandler
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.routes import build_resource_metadata_url, cors_middleware
from mcp.server.auth.settings import AuthSettings
from mcp.shared.auth import ProtectedResourceMetadata
from urllib.parse import urlparse
ap = argparse.ArgumentParser()
ap.add_argument("port", type=int)
ap.add_argument("as_url")
ap.add_argument("--prm-resource")
ap.add_argument("--aud-contains", action="store_true")
ap.add_argument("--no-aud-check", action="store_true")
ap.add_argument("--audience")
args = ap.parse_args()
PORT, AS = args.port, args.as_url
RESOURCE = f"http://127.0.0.1:{PORT}/mcp"
AUDIENCE = args.audience or RESOURCE
jwks = jwt.PyJWKClient(f"{AS}/jwks")
class JwtVerifier:
    async def verify_token(self, token: str) -> AccessToken | None:
        try:
            key = jwks.get_signing_key_from_jwt(token)
            c = jwt.decode(token, key.key, algorithms=["RS256", "ES256"], audience=AUDIENCE, issuer=AS,
                           options={"require": ["exp", "iat", "aud", "iss"], "verify_aud": not args.no_aud_check})
            # PyJWT accepts any aud list containing AUDIENCE; unless --aud-contains, only AUDIENCE itself
            aud = c["aud"] if isinstance(c["aud"], list) else [c["aud"]]
            if not args.aud_contains and not args.no_aud_check and aud != [AUDIENCE]:
                raise jwt.InvalidAudienceError(f"aud {aud} is not exactly {AUDIENCE}")
        except Exception as e:  # noqa: BLE001
            print("token rejected:", e, file=sys.stderr)
            return None
        return AccessToken(token=token, client_id=c.get("client_id", ""), scopes=c.get("scope", "").split(),
                           expires_at=c["exp"], resource=RESOURCE, subject=c.get("sub"), claims=c)
mcp = MCPServer("py-sdk-oauth-target", version="1.0.0", token_verifier=JwtVerifier(),
                auth=AuthSettings(issuer_url=AS, resource_server_url=RESOURCE,
                                  required_scopes=["mcp:tools"], validate_token_resource=True))
@mcp.tool()
def whoami() -> str:
    """Return a fixed string."""
    return "authenticated"
if args.prm_resource is None:
    mcp.run("streamable-http", host="127.0.0.1", port=PORT)
else:
    # Same app as mcp.run builds; a route placed first serves the document at the SDK's path (the one the 401
    # challenge names) with the given resource, shadowing the SDK's own route.
    app = mcp.streamable_http_app(host="127.0.0.1")
    doc = ProtectedResourceMetadata(resource=args.prm_resource, authorization_servers=[AS],
                                    scopes_supported=["mcp:tools"])
    path = urlparse(str(build_resource_metadata_url(RESOURCE))).path
    app.router.routes.insert(0, Route(path, endpoint=cors_middleware(ProtectedResourceMetadataHandler(doc).handle,
                                                                     ["GET", "OPTIONS"]), methods=["GET", "OPTIONS"]))
    uvicorn.run(app, host="127.0.0.1", port=PORT, log_level="info")
