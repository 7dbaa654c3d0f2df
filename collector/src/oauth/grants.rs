//! Token endpoint requests: the client-authenticated token form, the code and refresh
//! grants of the login, and the raw grants the audience legs send (a refresh grant
//! naming another resource, never cached, and the refresh-chain restore, whose answer is
//! cached so the chain stays bound to the audited resource).

use std::path::PathBuf;
use std::sync::Mutex;

use base64::Engine as _;
use mcp_probe_schema::bundle::fingerprint;
use mcp_probe_schema::model::{Header, MintedToken, TokenFacts};
use mcp_probe_schema::redact::decode_jwt;
use mcp_probe_schema::vocab::{header, leg, LegId};
use serde_json::Value;

use super::cache::{save, Registration, Tokens};
use super::error::LoginError;
use super::login::{now_s, Answer, Login};
use super::response::{self, str_field, TokenResponse};
use crate::journal::{lock, Journal};
use crate::transport::http::{Client, Request};

/// A POST of `form` (`application/x-www-form-urlencoded`) to `url` with `headers`.
pub(super) fn form_post(url: url::Url, headers: Vec<Header>, form: &[(&str, &str)]) -> Request {
    let body = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(form.iter())
        .finish()
        .into_bytes();
    Request {
        method: "POST".into(),
        url,
        headers,
        body,
        await_id: None,
        head_only_stream: false,
        connect_to: None,
    }
}

/// `Basic <credentials>` of RFC 6749 §2.3.1: the client id and secret, each
/// form-urlencoded, joined by a colon, in base64.
pub(super) fn basic_credentials(client_id: &str, secret: &str) -> String {
    let enc = |v: &str| url::form_urlencoded::byte_serialize(v.as_bytes()).collect::<String>();
    let basic = base64::engine::general_purpose::STANDARD.encode(format!(
        "{}:{}",
        enc(client_id),
        enc(secret)
    ));
    format!("Basic {basic}")
}

/// RFC 7523 §2.2 `client_assertion_type` of a JWT client assertion.
pub const CLIENT_ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// How long a client assertion is valid (RFC 7523 §3: `exp` is required; short-lived).
const ASSERTION_LIFETIME_S: i64 = 120;

impl Login {
    /// An RFC 7523 client assertion for `client_id`: `iss` and `sub` the client id, `aud`
    /// the authorization server's issuer (the value RFC 7523's update and the MCP
    /// client-credentials extension name; RFC 7523 also allows the token endpoint URL),
    /// `iat`, `exp` two minutes later and a random `jti`, signed with an algorithm the
    /// metadata lists in `token_endpoint_auth_signing_alg_values_supported`.
    pub(super) fn client_assertion(
        &self,
        key: &super::jose::SigningKey,
        client_id: &str,
    ) -> Result<String, LoginError> {
        let alg = key
            .choose_alg(self.metadata.token_endpoint_auth_signing_algs.as_deref())
            .map_err(|e| LoginError::ClientKey(e.to_string()))?;
        let now = now_s();
        let jti = super::jose::random_jti().map_err(|e| LoginError::Random(e.to_string()))?;
        let claims = serde_json::json!({
            "iss": client_id,
            "sub": client_id,
            "aud": self.metadata.issuer,
            "iat": now,
            "exp": now + ASSERTION_LIFETIME_S,
            "jti": jti,
        });
        let mut h = serde_json::Map::new();
        h.insert("typ".into(), "JWT".into());
        key.sign_jwt(alg, h, &claims)
            .map_err(|e| LoginError::ClientKey(e.to_string()))
    }

    /// POST `form` to the token endpoint, authenticating the client the way its
    /// registration says (`none`, `client_secret_post`, `client_secret_basic`,
    /// `private_key_jwt`), with every
    /// secret registered for redaction before the exchange is recorded under `leg`.
    pub(super) async fn post_token_form(
        &self,
        client: &Client,
        journal: &Mutex<Journal>,
        leg: LegId,
        reg: &Registration,
        form: Vec<(&str, &str)>,
        secrets: &[(&str, &str)],
    ) -> Result<Answer, LoginError> {
        let mut headers = vec![
            Header::new(header::CONTENT_TYPE, "application/x-www-form-urlencoded"),
            Header::new(header::ACCEPT, "application/json"),
        ];
        let mut form: Vec<(&str, &str)> = form.to_vec();
        let mut secrets = secrets.to_vec();
        let method = reg.token_endpoint_auth_method.as_deref().unwrap_or("none");
        // RFC 7523 §2.2: a client assertion signed with the --client-key-file key, made
        // for this one request.
        let assertion = match (method, &reg.client_key) {
            ("private_key_jwt", Some(k)) => Some(self.client_assertion(k, &reg.client_id)?),
            _ => None,
        };
        if let Some(a) = &assertion {
            secrets.push((a, "client-assertion"));
            form.push(("client_assertion_type", CLIENT_ASSERTION_TYPE));
            form.push(("client_assertion", a));
        }
        if let Some(s) = &reg.client_secret {
            secrets.push((s, "client-secret"));
            match method {
                "client_secret_basic" => headers.push(Header::new(
                    header::AUTHORIZATION,
                    basic_credentials(&reg.client_id, s),
                )),
                "client_secret_post" => form.push(("client_secret", s)),
                _ => {}
            }
        }
        if !reg.client_id.is_empty() {
            form.push(("client_id", &reg.client_id));
        }
        let req = form_post(self.metadata.token_endpoint.clone(), headers, &form);
        self.send_token(client, journal, leg, req, &secrets).await
    }

    /// POST a form to the token endpoint with the client's authentication.
    pub(super) async fn token_request(
        &self,
        client: &Client,
        journal: &Mutex<Journal>,
        leg: LegId,
        reg: &Registration,
        form: Vec<(&str, &str)>,
        secrets: &[(&str, &str)],
    ) -> Result<TokenResponse, LoginError> {
        let mut a = self
            .post_token_form(client, journal, leg, reg, form.clone(), secrets)
            .await?;
        // An authorization server that refuses the RFC 8707 resource parameter itself
        // (Microsoft Entra ID): recorded, then the same request once more without it, as a
        // client configured for that server sends it.
        if a.status >= 400
            && response::refuses_resource(&a.json)
            && form.iter().any(|(k, _)| *k == "resource")
            && !self
                .resource_refused
                .swap(true, std::sync::atomic::Ordering::SeqCst)
        {
            let (error, description) = response::refusal_fields(&a.json);
            self.notice(&format!(
                "{}: the authorization server {} refuses the RFC 8707 resource parameter ({}{}); sending the token request again without it (--no-resource-indicator leaves it out from the start)",
                self.endpoint,
                self.metadata.issuer,
                error.as_deref().unwrap_or("no error code"),
                description.map(|d| format!(": {d}")).unwrap_or_default()
            ));
            let seq = a.seq;
            lock(journal).update_session(|s| s.resource_refused_in = Some(seq));
            let without: Vec<(&str, &str)> =
                form.into_iter().filter(|(k, _)| *k != "resource").collect();
            a = self
                .post_token_form(client, journal, leg, reg, without, secrets)
                .await?;
        }
        self.token_answer(leg, &a)
    }

    /// A token endpoint's answer read as a successful Bearer token response (an error
    /// naming the leg otherwise).
    fn token_answer(&self, leg: LegId, a: &Answer) -> Result<TokenResponse, LoginError> {
        let url = self.metadata.token_endpoint.to_string();
        let access = str_field(&a.json, "access_token").filter(|s| !s.is_empty());
        let (200..=299, Some(access_token)) = (a.status, access) else {
            let (error, description) = response::refusal_fields(&a.json);
            return Err(LoginError::Server {
                leg,
                url,
                status: a.status,
                error: error
                    .or_else(|| (a.status < 300).then(|| "no access_token in the response".into())),
                description,
            });
        };
        let token_type = str_field(&a.json, "token_type").unwrap_or_default();
        // RFC 9449: a DPoP-bound token only when this login sent proofs.
        let dpop = self.dpop.is_some() && token_type.eq_ignore_ascii_case("dpop");
        if !token_type.eq_ignore_ascii_case("bearer") && !dpop {
            return Err(LoginError::Server {
                leg,
                url,
                status: a.status,
                error: Some(format!(
                    "unsupported token_type {token_type:?} (Bearer expected)"
                )),
                description: None,
            });
        }
        Ok(TokenResponse {
            access_token,
            token_type,
            expires_in: expires_in(&a.json),
            refresh_token: str_field(&a.json, "refresh_token").filter(|s| !s.is_empty()),
            scope: str_field(&a.json, "scope"),
        })
    }

    pub(super) fn tokens(&self, r: TokenResponse, previous_refresh: Option<&str>) -> Tokens {
        let now = now_s();
        let expires_at = r.expires_in.map(|e| now + e).or_else(|| {
            decode_jwt(&r.access_token).and_then(|(_, c)| c.get("exp").and_then(Value::as_i64))
        });
        Tokens {
            access_token: r.access_token,
            // RFC 6749 §6: without a new refresh token, the old one stays valid.
            refresh_token: r
                .refresh_token
                .or_else(|| previous_refresh.map(str::to_string)),
            expires_at,
            expires_in: r.expires_in,
            scope: r.scope,
            token_type: r.token_type,
            resource: self.resource.clone(),
            obtained_at: now,
        }
    }

    /// The login's refresh grant (leg `oauth.refresh`).
    pub(super) async fn refresh(
        &self,
        client: &Client,
        journal: &Mutex<Journal>,
        reg: &Registration,
        refresh_token: &str,
    ) -> Result<Tokens, LoginError> {
        self.refresh_grant(client, journal, leg::OAUTH_REFRESH, reg, refresh_token)
            .await
            .map(|(t, _)| t)
    }

    /// A refresh grant spending `refresh_token` for this login's own resource, recorded
    /// under `leg`; the tokens to cache (the old refresh token stays when none is new)
    /// and the seq of the grant's record.
    async fn refresh_grant(
        &self,
        client: &Client,
        journal: &Mutex<Journal>,
        leg: LegId,
        reg: &Registration,
        refresh_token: &str,
    ) -> Result<(Tokens, u64), LoginError> {
        let mut form = vec![
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh_token),
        ];
        form.extend(self.resource_params());
        let secrets = [(refresh_token, "refresh-token")];
        let a = self
            .post_token_form(client, journal, leg, reg, form, &secrets)
            .await?;
        let r = self.token_answer(leg, &a)?;
        Ok((self.tokens(r, Some(refresh_token)), a.seq))
    }
}

/// `expires_in` of a token response: a number, or a string holding one.
fn expires_in(json: &Value) -> Option<i64> {
    match json.get("expires_in") {
        Some(Value::Number(n)) => n.as_i64(),
        Some(Value::String(s)) => s.trim().parse().ok(),
        _ => None,
    }
}

/// The facts a bundle keeps of `access_token`, a token a probe grant obtained (recorded
/// under `leg`, record `seq`, naming `resource`; the login asked for `login_resource`),
/// with the answer's `token_type`, `expires_in` and `scope` (`json`): its fingerprint and,
/// for a JWT, the decoded header and claims, as `tokens[]` keeps them; never the token.
fn minted_facts(
    login_resource: &str,
    leg: LegId,
    seq: u64,
    resource: &str,
    access_token: &str,
    json: &Value,
) -> MintedToken {
    let (h, c) = decode_jwt(access_token).map_or((None, None), |(h, c)| (Some(h), Some(c)));
    MintedToken {
        leg: leg.to_string(),
        seq: Some(seq),
        requested_resource: Some(resource.to_string()),
        login_resource: Some(login_resource.to_string()),
        token: TokenFacts {
            source: MINTED_SOURCE.into(),
            fingerprint: fingerprint(access_token.as_bytes()),
            jwt_header: h,
            jwt_claims: c,
            expires_in: expires_in(json),
            scope: str_field(json, "scope"),
            token_type: str_field(json, "token_type"),
        },
    }
}

/// `TokenFacts::source` of a token a probe grant obtained.
pub const MINTED_SOURCE: &str = "oauth-grant";

/// What a token endpoint answered to a refresh grant, as it came (success or not). The
/// secrets in it are registered with the journal's redactor before it was recorded.
#[derive(Clone)]
pub struct RawGrant {
    /// HTTP status.
    pub status: u16,
    /// `access_token`, when the answer carried a non-empty one.
    pub access_token: Option<String>,
    /// `refresh_token`, when the answer carried a non-empty one.
    pub refresh_token: Option<String>,
    /// OAuth `error`.
    pub error: Option<String>,
    /// OAuth `error_description`.
    pub error_description: Option<String>,
}

impl std::fmt::Debug for RawGrant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RawGrant")
            .field("status", &self.status)
            .field(
                "access_token",
                &self
                    .access_token
                    .as_ref()
                    .map(|t| fingerprint(t.as_bytes())),
            )
            .field("rotated", &self.refresh_token.is_some())
            .field("error", &self.error)
            .field("error_description", &self.error_description)
            .finish()
    }
}

/// The cached refresh token and client registration of a login.
#[derive(Clone)]
pub struct CachedRefresh {
    /// The refresh token (registered with the redactor by [`Login::cached_refresh`]).
    pub refresh_token: String,
    /// The registered client id.
    pub client_id: String,
    /// The access token cached with it.
    pub access_token: String,
}

impl std::fmt::Debug for CachedRefresh {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CachedRefresh")
            .field("client_id", &self.client_id)
            .finish()
    }
}

impl Login {
    /// The refresh token of this login's cache entry, read now (at use time), with its
    /// client id; `None` when no entry or no refresh token is cached. Every secret of
    /// the entry is registered with the journal's redactor first.
    pub fn cached_refresh(
        &self,
        journal: &Mutex<Journal>,
    ) -> Result<Option<CachedRefresh>, LoginError> {
        let Some((_, entry)) = self.cached()? else {
            return Ok(None);
        };
        let mut j = lock(journal);
        entry.client.register(&mut j);
        let Some(t) = &entry.tokens else {
            return Ok(None);
        };
        j.add_secret(t.access_token.as_bytes(), "access-token");
        let Some(rt) = t.refresh_token.as_ref().filter(|r| !r.is_empty()) else {
            return Ok(None);
        };
        j.add_secret(rt.as_bytes(), "refresh-token");
        Ok(Some(CachedRefresh {
            refresh_token: rt.clone(),
            client_id: entry.client.client_id.clone(),
            access_token: t.access_token.clone(),
        }))
    }

    /// A refresh grant spending `refresh_token` and naming `resource` (any string),
    /// recorded under `leg`, with the cached client's authentication. The answer is
    /// returned as it came and **never cached** (3.3.1b's wrong-audience pair). The token
    /// endpoint must pass the OAuth scheme rule and the network guard, as every OAuth
    /// request. `Err` only when nothing usable came back (refused, transport, no cached
    /// client).
    pub async fn refresh_raw(
        &self,
        client: &Client,
        journal: &Mutex<Journal>,
        leg: LegId,
        refresh_token: &str,
        resource: &str,
    ) -> Result<RawGrant, LoginError> {
        let Some((_, entry)) = self.cached()? else {
            return Err(LoginError::Metadata(
                "no cached client registration for this endpoint".into(),
            ));
        };
        let reg = entry.client;
        let secrets: Vec<(&str, &str)> = vec![(refresh_token, "refresh-token")];
        let form: Vec<(&str, &str)> = vec![
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh_token),
            ("resource", resource),
        ];
        let a = self
            .post_token_form(client, journal, leg, &reg, form, &secrets)
            .await?;
        // The answer's secrets were registered before it was recorded; its token's
        // facts follow the record.
        if let (200..=299, Some(t)) = (
            a.status,
            str_field(&a.json, "access_token").filter(|s| !s.is_empty()),
        ) {
            lock(journal).push_minted(minted_facts(
                &self.resource,
                leg,
                a.seq,
                resource,
                &t,
                &a.json,
            ));
        }
        Ok(RawGrant {
            status: a.status,
            access_token: str_field(&a.json, "access_token").filter(|s| !s.is_empty()),
            refresh_token: str_field(&a.json, "refresh_token").filter(|s| !s.is_empty()),
            error: str_field(&a.json, "error"),
            error_description: str_field(&a.json, "error_description"),
        })
    }

    /// The refresh-chain restore (docs/collector.md, "Credentials"): spend `refresh_token`
    /// (the one a wrong-audience grant rotated to) on a refresh grant naming this login's own
    /// resource, recorded under `leg`, and cache the answer, so the stored credential
    /// stays bound to the audited resource. The new access token's facts are not added
    /// to the journal's `tokens` (the run goes on with the token it holds) but to its
    /// `minted_tokens`.
    pub async fn restore_chain(
        &self,
        client: &Client,
        journal: &Mutex<Journal>,
        leg: LegId,
        refresh_token: &str,
    ) -> Result<PathBuf, LoginError> {
        let Some((_, mut entry)) = self.cached()? else {
            return Err(LoginError::Metadata(
                "no cached client registration for this endpoint".into(),
            ));
        };
        let (tokens, seq) = self
            .refresh_grant(client, journal, leg, &entry.client, refresh_token)
            .await?;
        let answer = serde_json::json!({
            "expires_in": tokens.expires_in,
            "scope": tokens.scope,
            "token_type": tokens.token_type,
        });
        lock(journal).push_minted(minted_facts(
            &self.resource,
            leg,
            seq,
            &self.resource,
            &tokens.access_token,
            &answer,
        ));
        entry.tokens = Some(tokens);
        entry.updated_at = now_s();
        save(&self.cache_dir(), &entry)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oauth::cache::{Entry, CACHE_VERSION};
    use mcp_probe_schema::model::RunStatus;
    use serde_json::json;
    use std::time::Duration;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    const ENDPOINT: &str = "http://127.0.0.1:9/mcp";
    const FOREIGN: &str = "https://cis-probe.invalid/wrong-audience";

    fn b64(v: &Value) -> String {
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string())
    }

    /// A compact JWT whose claims name `aud` and whose signature segment is `sig`.
    fn jwt(aud: &str, sig: &str) -> String {
        let h = json!({"alg": "RS256", "kid": "rs1", "typ": "at+jwt"});
        let c = json!({"aud": aud, "iss": "http://127.0.0.1:1", "sub": "user-1", "exp": 2_000_000_600_i64,
                       "iat": 2_000_000_000_i64, "scope": "mcp:tools", "client_id": "c-1", "azp": "c-1",
                       "cnf": {"jkt": "thumb"}});
        format!(
            "{}.{}.{}",
            b64(&h),
            b64(&c),
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sig)
        )
    }

    /// A token endpoint that ignores the RFC 8707 `resource` parameter: every refresh
    /// grant is answered with a JWT for the audited resource and a rotated refresh token
    /// (the first answer `first`, the next ones `next`).
    async fn token_endpoint(first: (String, String), next: (String, String)) -> u16 {
        let l = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .expect("bind");
        let port = l.local_addr().expect("addr").port();
        tokio::spawn(async move {
            let mut answers = vec![first, next.clone()].into_iter();
            loop {
                let Ok((mut s, _)) = l.accept().await else {
                    return;
                };
                let (at, rt) = answers.next().unwrap_or_else(|| next.clone());
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                // Read the head and the body (Content-Length).
                loop {
                    let n = s.read(&mut chunk).await.unwrap_or(0);
                    if n == 0 {
                        break;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    let text = String::from_utf8_lossy(&buf).to_string();
                    if let Some(end) = text.find("\r\n\r\n") {
                        let len = text[..end]
                            .lines()
                            .find_map(|l| {
                                let (k, v) = l.split_once(':')?;
                                k.eq_ignore_ascii_case("content-length")
                                    .then(|| v.trim().parse::<usize>().ok())?
                            })
                            .unwrap_or(0);
                        if buf.len() >= end + 4 + len {
                            break;
                        }
                    }
                }
                let body = json!({"access_token": at, "token_type": "Bearer", "expires_in": 600,
                                  "scope": "mcp:tools", "refresh_token": rt})
                .to_string();
                let resp = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
                     Connection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = s.write_all(resp.as_bytes()).await;
                let _ = s.shutdown().await;
            }
        });
        port
    }

    #[tokio::test]
    async fn a_probe_grant_records_the_minted_tokens_facts_and_never_the_token() {
        let minted = jwt(ENDPOINT, "minted-signature-0123456789abcdef");
        let restored = jwt(ENDPOINT, "restored-signature-0123456789abcdef");
        let (rt0, rt1, rt2) = (
            "refresh-0-abcdef0123456789",
            "refresh-1-abcdef0123456789",
            "refresh-2-abcdef0123456789",
        );
        let port = token_endpoint(
            (minted.clone(), rt1.to_string()),
            (restored.clone(), rt2.to_string()),
        )
        .await;
        let dir = tempfile::tempdir().expect("tempdir");
        let ev = mcp_probe_schema::testkit::evidence(ENDPOINT, Vec::new());
        let journal = Mutex::new(
            Journal::create(
                dir.path(),
                "t",
                ev.target,
                ev.run.options,
                mcp_probe_schema::redact::Redactor::new(),
            )
            .expect("journal"),
        );
        let base = format!("http://127.0.0.1:{port}");
        let meta = json!({
            "issuer": base, "authorization_endpoint": format!("{base}/authorize"),
            "token_endpoint": format!("{base}/token"), "code_challenge_methods_supported": ["S256"],
        });
        let ep = url::Url::parse(ENDPOINT).expect("url");
        let login = Login::new(&ep, &meta, None, None, dir.path()).expect("login");
        save(
            &login.cache_dir(),
            &Entry {
                version: CACHE_VERSION,
                endpoint: ep.to_string(),
                issuer: base.clone(),
                scope: None,
                client: Registration {
                    client_id: "c-1".into(),
                    client_secret: None,
                    client_secret_expires_at: None,
                    token_endpoint_auth_method: Some("none".into()),
                    redirect_port: 1,
                    redirect_uri: "http://127.0.0.1:1/callback".into(),
                    registered_at: 1,
                    pre_registered: false,
                    client_key: None,
                    registered_by: None,
                },
                tokens: Some(Tokens {
                    access_token: "own-access-abcdef0123456789".into(),
                    refresh_token: Some(rt0.into()),
                    expires_at: None,
                    expires_in: Some(600),
                    scope: None,
                    token_type: "Bearer".into(),
                    resource: login.resource.clone(),
                    obtained_at: 1,
                }),
                updated_at: 1,
                grant: None,
            },
        )
        .expect("cache");
        let client = Client::new(
            crate::transport::tls::Trust::load(None).expect("trust"),
            Duration::from_secs(5),
            1 << 16,
        );
        let cached = login
            .cached_refresh(&journal)
            .expect("cache")
            .expect("cached");
        let grant = login
            .refresh_raw(
                &client,
                &journal,
                leg::FOREIGN_MINT,
                &cached.refresh_token,
                FOREIGN,
            )
            .await
            .expect("grant");
        assert_eq!(grant.status, 200);
        assert_eq!(grant.access_token.as_deref(), Some(minted.as_str()));
        login
            .restore_chain(&client, &journal, leg::FOREIGN_RESTORE, rt1)
            .await
            .expect("restore");

        // The facts: the grant, the resources, the header and claims, the answer.
        let facts = lock(&journal).minted_tokens().to_vec();
        let recs = lock(&journal).records();
        assert_eq!(facts.len(), 2, "{facts:?}");
        let (m, r) = (&facts[0], &facts[1]);
        assert_eq!(m.leg, leg::FOREIGN_MINT.as_str());
        assert_eq!(r.leg, leg::FOREIGN_RESTORE.as_str());
        let seq_of = |l: LegId| {
            recs.iter()
                .find(|x| x.legs.iter().any(|y| y == l.as_str()))
                .map(|x| x.seq)
        };
        assert_eq!(m.seq, seq_of(leg::FOREIGN_MINT));
        assert_eq!(r.seq, seq_of(leg::FOREIGN_RESTORE));
        assert_eq!(m.requested_resource.as_deref(), Some(FOREIGN));
        assert_eq!(m.login_resource.as_deref(), Some(login.resource.as_str()));
        assert_eq!(
            r.requested_resource.as_deref(),
            Some(login.resource.as_str())
        );
        assert_eq!(m.token.fingerprint, fingerprint(minted.as_bytes()));
        assert_eq!(r.token.fingerprint, fingerprint(restored.as_bytes()));
        assert_eq!(m.token.source, MINTED_SOURCE);
        let claims = m.token.jwt_claims.as_ref().expect("claims");
        for k in [
            "aud",
            "exp",
            "iat",
            "iss",
            "scope",
            "cnf",
            "client_id",
            "azp",
            "sub",
        ] {
            assert!(claims.get(k).is_some(), "{k}: {claims}");
        }
        assert_eq!(claims["aud"], ENDPOINT);
        assert_eq!(m.token.jwt_header.as_ref().expect("header")["kid"], "rs1");
        assert_eq!(m.token.token_type.as_deref(), Some("Bearer"));
        assert_eq!(m.token.expires_in, Some(600));
        assert_eq!(m.token.scope.as_deref(), Some("mcp:tools"));
        // The run's own tokens are not touched: these are not tokens presented.
        assert!(lock(&journal).tokens().is_empty());

        // Sealed: the facts are in the payload, the tokens nowhere.
        let key = mcp_probe_schema::testkit::test_key(3);
        let path = lock(&journal)
            .seal(RunStatus::Complete, &key)
            .expect("seal");
        let bytes = std::fs::read(&path).expect("bundle");
        let sig = |t: &str| t.rsplit('.').next().unwrap_or_default().to_string();
        for secret in [
            minted.clone(),
            restored.clone(),
            sig(&minted),
            sig(&restored),
            rt0.into(),
            rt1.into(),
            rt2.into(),
        ] {
            assert!(
                !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
                "{secret} is in the bundle"
            );
        }
        let v = mcp_probe_schema::bundle::open(&bytes, &[]).expect("verifies");
        assert_eq!(v.evidence.minted_tokens, facts);
        // The grant's record holds the token's fingerprint where the token was.
        let mint_rec = v
            .records
            .iter()
            .find(|x| Some(x.seq) == m.seq)
            .expect("mint record");
        let mcp_probe_schema::model::Observation::Http(x) = &mint_rec.observation else {
            panic!("http")
        };
        let mcp_probe_schema::model::HttpOutcome::Response(resp) = &x.outcome else {
            panic!("response")
        };
        let body: Value = serde_json::from_slice(&resp.body.bytes).expect("json");
        assert_eq!(body["access_token"], m.token.fingerprint.as_str());
    }
}
