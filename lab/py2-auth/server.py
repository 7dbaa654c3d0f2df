"""OAuth-protected MCP resource server (mcp 2.x): RFC 9728 metadata, 401/403 challenges, JWT access tokens
checked against the AS's JWKS (iss, aud == this resource, exp, iat, scope). Usage: python server.py PORT AS_URL"""
import sys
import jwt  # PyJWT, a dependency of mcp
from mcp.server import MCPServer
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
PORT, AS = int(sys.argv[1]), sys.argv[2]
RESOURCE = f"http://127.0.0.1:{PORT}/mcp"
jwks = jwt.PyJWKClient(f"{AS}/jwks")
class JwtVerifier:
    async def verify_token(self, token: str) -> AccessToken | None:
        try:
            key = jwks.get_signing_key_from_jwt(token)
            c = jwt.decode(token, key.key, algorithms=["RS256", "ES256"], audience=RESOURCE, issuer=AS,
                           options={"require": ["exp", "iat", "aud", "iss"]})
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
mcp.run("streamable-http", host="127.0.0.1", port=PORT)
