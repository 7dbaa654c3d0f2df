//! Logins without a browser or a person (docs/collector.md, "Logging in"): the grants a
//! CI pipeline or a jump host uses, each with a client the operator registered
//! beforehand and every secret from the environment.
//!
//! * [`Grant::ClientCredentials`] (OAuth 2.1 §4.2): the client authenticates with its
//!   secret (`client_secret_basic`, or `client_secret_post` where the metadata asks for
//!   it) or with an RFC 7523 client assertion signed by its key (`private_key_jwt`).
//! * [`Grant::JwtBearer`] (RFC 7523 §2.1): a workload identity token (a CI system's OIDC
//!   token, a Kubernetes service-account token) presented as the grant's `assertion`.
//!   Sent once: a refused assertion is not retried and no other grant is tried.
//! * [`Grant::EnterpriseManaged`]: an RFC 8693 token exchange at the enterprise identity
//!   provider turns the operator's ID token into an identity assertion grant (ID-JAG) for
//!   this authorization server and resource, then an RFC 7523 JWT-bearer grant at the
//!   authorization server turns that into an access token.
//!
//! Every request goes through `Login::send` (the scheme rule, the network guard, the
//! recording client and the redactor, each secret registered before its exchange is
//! recorded). Nothing is registered: `oauth.register` is recorded as skipped, naming the
//! grant.

use std::sync::Mutex;

use mcp_probe_schema::model::Header;
use mcp_probe_schema::vocab::{header, leg};

use super::cache::{save, Entry, Registration, CACHE_VERSION};
use super::error::LoginError;
use super::flow::{
    Enterprise, Grant, Unattended, ID_JAG_TYPE, ID_TOKEN_TYPE, TOKEN_EXCHANGE_GRANT,
};
use super::login::{now_s, Credential, Login, Obtained};
use super::response::str_field;
use crate::journal::{lock, Journal};
use crate::transport::http::Client;

impl Login {
    /// The extra parameters every token request of the login's own resource carries:
    /// the RFC 8707 `resource` (unless `--no-resource-indicator`) and `--audience`.
    pub(super) fn resource_params(&self) -> Vec<(&'static str, &str)> {
        let mut out = Vec::new();
        if self.resource_indicator
            && !self
                .resource_refused
                .load(std::sync::atomic::Ordering::SeqCst)
        {
            out.push(("resource", self.resource.as_str()));
        }
        if let Some(a) = &self.audience {
            out.push(("audience", a.as_str()));
        }
        out
    }

    /// The registration an unattended grant uses: the operator's client (or none, for a
    /// JWT-bearer grant without `--client-id`). Nothing is sent; `oauth.register` is
    /// recorded as skipped.
    fn unattended_client(&self, journal: &Mutex<Journal>) -> Result<Registration, LoginError> {
        let (client_id, secret, key) = match &self.pre_registered {
            Some(p) => (
                p.client_id.clone(),
                p.client_secret.clone(),
                p.client_key.clone(),
            ),
            None => (String::new(), None, None),
        };
        let method = super::cache::client_auth_method(
            secret.is_some(),
            key.is_some(),
            self.metadata.token_endpoint_auth_methods.as_deref(),
        )?;
        let reg = Registration {
            client_id,
            client_secret: secret,
            client_secret_expires_at: None,
            token_endpoint_auth_method: Some(method.to_string()),
            redirect_port: 0,
            redirect_uri: String::new(),
            registered_at: now_s(),
            pre_registered: true,
            client_key: key,
            registered_by: None,
        };
        let mut j = lock(journal);
        reg.register(&mut j);
        j.skip(
            &[leg::OAUTH_REGISTER],
            format!(
                "not sent: --grant {}: the operator's client is used and dynamic client registration was not",
                self.grant.as_str()
            ),
        );
        Ok(reg)
    }

    /// The unattended grant of [`Login::grant`]; its tokens are cached like a browser
    /// login's (a refresh token, when one is issued, is used by the next run).
    pub(super) async fn unattended(
        &self,
        client: &Client,
        journal: &Mutex<Journal>,
    ) -> Result<Credential, LoginError> {
        if let Some(listed) = &self.metadata.grant_types {
            let wanted = self.grant.grant_type();
            if !listed.iter().any(|g| g == wanted) {
                self.notice(&format!(
                    "{}: the authorization server {} lists grant_types_supported {listed:?} without {wanted}; trying --grant {} all the same",
                    self.endpoint,
                    self.metadata.issuer,
                    self.grant.as_str()
                ));
            }
        }
        let reg = self.unattended_client(journal)?;
        let none = Unattended::default();
        let u = self.unattended.as_ref().unwrap_or(&none);
        let params = self.resource_params();
        let scope = self.scope.clone();
        let mut form: Vec<(&str, &str)> = vec![("grant_type", self.grant.grant_type())];
        let mut secrets: Vec<(&str, &str)> = Vec::new();
        let jag;
        match self.grant {
            Grant::AuthorizationCode | Grant::ClientCredentials => {}
            Grant::JwtBearer => {
                let a = u.assertion.as_deref().ok_or_else(|| {
                    LoginError::Metadata("--grant jwt-bearer needs --assertion-env".into())
                })?;
                form.push(("assertion", a));
                secrets.push((a, "assertion"));
            }
            Grant::EnterpriseManaged => {
                let e = u.enterprise.as_ref().ok_or_else(|| {
                    LoginError::Metadata(
                        "--grant enterprise-managed needs --idp-token-endpoint and --id-token-env"
                            .into(),
                    )
                })?;
                jag = self.token_exchange(client, journal, e).await?;
                form.push(("assertion", jag.as_str()));
                secrets.push((jag.as_str(), "identity-assertion"));
            }
        }
        if let Some(s) = &scope {
            form.push(("scope", s));
        }
        form.extend(params);
        let r = self
            .token_request(client, journal, leg::OAUTH_TOKEN, &reg, form, &secrets)
            .await?;
        let tokens = self.tokens(r, None);
        let entry = Entry {
            version: CACHE_VERSION,
            endpoint: self.endpoint.to_string(),
            issuer: self.metadata.issuer.clone(),
            scope: self.scope.clone(),
            client: reg,
            tokens: Some(tokens.clone()),
            updated_at: now_s(),
            grant: Some(self.grant.as_str().to_string()),
        };
        let path = save(&self.cache_dir(), &entry)?;
        Ok(self.credential(journal, &entry, &tokens, path, Obtained::Grant))
    }

    /// Enterprise-managed authorization, step one: an RFC 8693 token exchange at the
    /// identity provider, the operator's ID token for an identity assertion (ID-JAG)
    /// naming this authorization server (`audience`, its issuer) and this resource.
    /// Recorded under `oauth.exchange`; the assertion returned is registered as a
    /// secret before the answer is recorded.
    async fn token_exchange(
        &self,
        client: &Client,
        journal: &Mutex<Journal>,
        e: &Enterprise,
    ) -> Result<String, LoginError> {
        let mut form: Vec<(&str, &str)> = vec![
            ("grant_type", TOKEN_EXCHANGE_GRANT),
            ("requested_token_type", ID_JAG_TYPE),
            ("audience", self.metadata.issuer.as_str()),
            ("resource", self.resource.as_str()),
            ("subject_token", e.id_token.as_str()),
            ("subject_token_type", ID_TOKEN_TYPE),
        ];
        if let Some(s) = &self.scope {
            form.push(("scope", s));
        }
        let mut headers = vec![
            Header::new(header::CONTENT_TYPE, "application/x-www-form-urlencoded"),
            Header::new(header::ACCEPT, "application/json"),
        ];
        let mut secrets: Vec<(&str, &str)> = vec![(e.id_token.as_str(), "id-token")];
        if let Some(id) = &e.client_id {
            lock(journal).add_public(id.as_bytes());
            match &e.client_secret {
                Some(s) => {
                    secrets.push((s, "client-secret"));
                    headers.push(Header::new(
                        header::AUTHORIZATION,
                        super::grants::basic_credentials(id, s),
                    ));
                }
                None => form.push(("client_id", id)),
            }
        }
        let req = super::grants::form_post(e.token_endpoint.clone(), headers, &form);
        let a = self
            .send(client, journal, leg::OAUTH_EXCHANGE, req, &secrets)
            .await?;
        let jag = str_field(&a.json, "access_token").filter(|s| !s.is_empty());
        let (200..=299, Some(jag)) = (a.status, jag) else {
            return Err(LoginError::Server {
                leg: leg::OAUTH_EXCHANGE,
                url: e.token_endpoint.to_string(),
                status: a.status,
                error: str_field(&a.json, "error")
                    .or_else(|| (a.status < 300).then(|| "no access_token in the response".into())),
                description: str_field(&a.json, "error_description"),
            });
        };
        if let Some(t) = str_field(&a.json, "issued_token_type").filter(|t| t != ID_JAG_TYPE) {
            return Err(LoginError::Server {
                leg: leg::OAUTH_EXCHANGE,
                url: e.token_endpoint.to_string(),
                status: a.status,
                error: Some(format!(
                    "issued_token_type {t:?} is not an identity assertion ({ID_JAG_TYPE})"
                )),
                description: None,
            });
        }
        Ok(jag)
    }
}
