//! Token endpoint requests: the client-authenticated token form, the code and refresh
//! grants of the login, and the raw grants the audience legs send (a refresh grant
//! naming another resource, never cached, and the refresh-chain restore, whose answer is
//! cached so the chain stays bound to the audited resource).

use std::path::PathBuf;
use std::sync::Mutex;

use base64::Engine as _;
use mcp_probe_schema::bundle::fingerprint;
use mcp_probe_schema::model::Header;
use mcp_probe_schema::redact::decode_jwt;
use mcp_probe_schema::vocab::{header, leg, LegId};
use serde_json::Value;

use super::cache::{save, Registration, Tokens};
use super::error::LoginError;
use super::login::{now_s, Answer, Login};
use super::response::{str_field, TokenResponse};
use crate::journal::{lock, Journal};
use crate::transport::http::{Client, Request};

impl Login {
    /// POST `form` to the token endpoint, authenticating the client the way its
    /// registration says (`none`, `client_secret_post`, `client_secret_basic`), with every
    /// secret registered for redaction before the exchange is recorded under `leg`.
    pub(super) async fn post_token_form(
        &self,
        client: &Client,
        journal: &Mutex<Journal>,
        leg: LegId,
        reg: &Registration,
        mut form: Vec<(&str, &str)>,
        secrets: &[(&str, &str)],
    ) -> Result<Answer, LoginError> {
        let mut headers = vec![
            Header::new(header::CONTENT_TYPE, "application/x-www-form-urlencoded"),
            Header::new(header::ACCEPT, "application/json"),
        ];
        let mut secrets = secrets.to_vec();
        if let Some(s) = &reg.client_secret {
            secrets.push((s, "client-secret"));
            match reg.token_endpoint_auth_method.as_deref().unwrap_or("none") {
                "client_secret_basic" => {
                    let enc = |v: &str| {
                        url::form_urlencoded::byte_serialize(v.as_bytes()).collect::<String>()
                    };
                    let basic = base64::engine::general_purpose::STANDARD.encode(format!(
                        "{}:{}",
                        enc(&reg.client_id),
                        enc(s)
                    ));
                    headers.push(Header::new(header::AUTHORIZATION, format!("Basic {basic}")));
                }
                "client_secret_post" => form.push(("client_secret", s)),
                _ => {}
            }
        }
        form.push(("client_id", &reg.client_id));
        let body = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(form.iter())
            .finish()
            .into_bytes();
        let req = Request {
            method: "POST".into(),
            url: self.metadata.token_endpoint.clone(),
            headers,
            body,
            await_id: None,
            head_only_stream: false,
            connect_to: None,
        };
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
        let a = self
            .post_token_form(client, journal, leg, reg, form, secrets)
            .await?;
        let url = self.metadata.token_endpoint.to_string();
        let access = str_field(&a.json, "access_token").filter(|s| !s.is_empty());
        let (200..=299, Some(access_token)) = (a.status, access) else {
            return Err(LoginError::Server {
                leg,
                url,
                status: a.status,
                error: str_field(&a.json, "error")
                    .or_else(|| (a.status < 300).then(|| "no access_token in the response".into())),
                description: str_field(&a.json, "error_description"),
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
        let expires_in = match a.json.get("expires_in") {
            Some(Value::Number(n)) => n.as_i64(),
            Some(Value::String(s)) => s.trim().parse().ok(),
            _ => None,
        };
        Ok(TokenResponse {
            access_token,
            token_type,
            expires_in,
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
    }

    /// A refresh grant spending `refresh_token` for this login's own resource, recorded
    /// under `leg`; the tokens to cache (the old refresh token stays when none is new).
    async fn refresh_grant(
        &self,
        client: &Client,
        journal: &Mutex<Journal>,
        leg: LegId,
        reg: &Registration,
        refresh_token: &str,
    ) -> Result<Tokens, LoginError> {
        let form = vec![
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh_token),
            ("resource", self.resource.as_str()),
        ];
        let r = self
            .token_request(
                client,
                journal,
                leg,
                reg,
                form,
                &[(refresh_token, "refresh-token")],
            )
            .await?;
        Ok(self.tokens(r, Some(refresh_token)))
    }
}

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
    /// to the journal's `tokens` (the run goes on with the token it holds).
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
        let tokens = self
            .refresh_grant(client, journal, leg, &entry.client, refresh_token)
            .await?;
        entry.tokens = Some(tokens);
        entry.updated_at = now_s();
        save(&self.cache_dir(), &entry)
    }
}
