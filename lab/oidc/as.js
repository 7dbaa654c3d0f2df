// OAuth 2.1 AS for MCP tests on oidc-provider 9: DCR, PKCE S256, RFC 8707 resources, JWT access tokens, refresh.
// Usage: node as.js PORT DEFAULT_RESOURCE   (env ISSUER overrides http://127.0.0.1:PORT)
// Env ACCESS_TOKEN_TTL: access-token lifetime in seconds (default 600). Env EXTRA_AUDIENCE: a second audience added to
// every JWT access token (aud becomes [resource, EXTRA_AUDIENCE]); oidc-provider itself refuses a multi-valued resource
// audience (token_helpers.setAudience: "only a single audience value is supported"), so it is added by the documented
// formats.customizers.jwt hook, which edits the payload before signing.
import { Provider, errors } from 'oidc-provider';
import { generateKeyPair, exportJWK } from 'jose';
const PORT = Number(process.argv[2]);
const ISSUER = process.env.ISSUER || `http://127.0.0.1:${PORT}`;
const RESOURCE = process.argv[3];
const MCP_SCOPES = ['mcp:tools', 'mcp:read'];
const TTL = Number(process.env.ACCESS_TOKEN_TTL || 600);
if (!Number.isInteger(TTL) || TTL <= 0) throw new Error(`ACCESS_TOKEN_TTL must be a positive integer: ${process.env.ACCESS_TOKEN_TTL}`);
const EXTRA_AUDIENCE = process.env.EXTRA_AUDIENCE || '';
// Env FIXED_AUDIENCE: every JWT access token names this audience instead of the resource (a token not bound to it).
const FIXED_AUDIENCE = process.env.FIXED_AUDIENCE || '';
// Env IGNORE_RESOURCE=1: the token endpoint ignores the RFC 8707 `resource` parameter (as Auth0 with a tenant default
// audience, ORY Hydra or an Authlib AS as shipped do): it is dropped from every token request before oidc-provider
// reads it, so a grant naming another resource is answered with a token for the resource the authorization granted
// (the default resource: the audited one), never with invalid_target.
const IGNORE_RESOURCE = process.env.IGNORE_RESOURCE === '1';
const keys = [];
for (const [alg, kid] of [['RS256', 'rs1'], ['ES256', 'es1']]) {
  const { privateKey } = await generateKeyPair(alg, { extractable: true });
  keys.push({ ...(await exportJWK(privateKey)), kid, alg, use: 'sig' });
}
const configuration = {
  jwks: { keys },
  cookies: { keys: ['test-cookie-key-not-secret'] },
  responseTypes: ['code'],                          // OAuth 2.1: code flow only (no implicit)
  scopes: ['openid', 'offline_access', ...MCP_SCOPES],
  clientDefaults: { grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'],
                    token_endpoint_auth_method: 'none' },
  pkce: { required: () => true },                   // S256 is the only method oidc-provider accepts
  features: {
    devInteractions: { enabled: true },             // built-in login/consent pages (any user/pass)
    registration: { enabled: true, initialAccessToken: false },  // open DCR (RFC 7591)
    registrationManagement: { enabled: true },      // RFC 7592
    revocation: { enabled: true },
    introspection: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: async (ctx, client, oneOf) => oneOf ?? RESOURCE,
      useGrantedResource: async () => true,
      getResourceServerInfo: async (ctx, resourceIndicator, client) => {
        // accept any loopback resource so several MCP servers can share this AS
        if (!/^https?:\/\/(127\.0\.0\.1|localhost|\[::1\])(:\d+)?\//.test(resourceIndicator)) {
          throw new errors.InvalidTarget('resource not served by this test AS');
        }
        return { scope: MCP_SCOPES.join(' '), audience: resourceIndicator, accessTokenTTL: TTL,
                 accessTokenFormat: 'jwt', jwt: { sign: { alg: 'RS256' } } };
      },
    },
  },
  formats: {
    customizers: {
      // EXTRA_AUDIENCE: a token also valid for another service (what token passthrough needs; 3.2.2 must fail)
      jwt: async (ctx, token, jwt) => {
        if (EXTRA_AUDIENCE && jwt.payload.aud !== EXTRA_AUDIENCE) jwt.payload.aud = [jwt.payload.aud, EXTRA_AUDIENCE].flat();
        if (FIXED_AUDIENCE) jwt.payload.aud = FIXED_AUDIENCE;
      },
    },
  },
  issueRefreshToken: async (ctx, client) => client.grantTypeAllowed('refresh_token'),
  ttl: { AccessToken: TTL, AuthorizationCode: 60, RefreshToken: 86400, Grant: 86400,
         Interaction: 600, Session: 86400, IdToken: 600 },
  clientBasedCORS: () => true,
  findAccount: async (ctx, sub) => ({ accountId: sub, claims: async () => ({ sub }) }),
};
const provider = new Provider(ISSUER, configuration);
if (IGNORE_RESOURCE) {
  // oidc-provider reads a body an upstream middleware already parsed (shared/selective_body.js: req.body once the
  // request stream has been read), so the form is read here and handed on without `resource`.
  provider.use(async (ctx, next) => {
    if (ctx.method === 'POST' && ctx.path === '/token' && ctx.is('application/x-www-form-urlencoded')) {
      const chunks = [];
      for await (const chunk of ctx.req) chunks.push(chunk);
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      form.delete('resource');
      ctx.req.body = Object.fromEntries(form);
    }
    await next();
  });
}
provider.on('server_error', (ctx, err) => console.error('server_error', err));
provider.listen(PORT, '127.0.0.1');
console.log(`oidc-provider AS: ${ISSUER}/.well-known/oauth-authorization-server  (default resource ${RESOURCE}, access-token TTL ${TTL} s${EXTRA_AUDIENCE ? `, extra audience ${EXTRA_AUDIENCE}` : ''}${IGNORE_RESOURCE ? ', resource parameter ignored at the token endpoint' : ''})`);
