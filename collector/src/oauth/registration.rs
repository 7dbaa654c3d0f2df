//! Dynamic client registration (RFC 7591) of a public client with its loopback
//! redirect URI, and the pre-registered client (`--client-id`) that replaces it.

use std::sync::Mutex;

use mcp_probe_schema::model::Header;
use mcp_probe_schema::vocab::{header, leg};
use serde_json::{json, Value};

#[cfg(test)]
use super::cache::pre_registered_auth_method;
use super::cache::{client_auth_method, PreRegistered, Registration};
use super::callback::CALLBACK_PATH;
use super::error::LoginError;
use super::login::{now_s, Login};
use super::response::str_field;
use crate::journal::{lock, Journal};
use crate::transport::http::{Client, Request};

/// `client_name` of the dynamic client registration.
pub const CLIENT_NAME: &str = "mcp-collect";

/// `application_type` of the dynamic client registration (OpenID Connect Dynamic Client
/// Registration §2): MCP 2026-07-28 (SEP-837) requires a client that uses DCR to send it,
/// `native` for desktop, CLI and localhost apps, which a CLI with a loopback redirect is.
pub const APPLICATION_TYPE: &str = "native";

/// [`Registration::registered_by`] of a client whose id is its client ID metadata
/// document's URL.
pub(super) const REGISTERED_BY_CIMD: &str = "client-metadata-document";

/// The RFC 7591 registration request of a public client with `redirect_uri`.
pub fn registration_body(redirect_uri: &str, scope: Option<&str>) -> Value {
    let mut body = json!({
        "client_name": CLIENT_NAME,
        "application_type": APPLICATION_TYPE,
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    });
    if let Some(s) = scope {
        body["scope"] = Value::from(s);
    }
    body
}

impl Login {
    /// The pre-registered client as a registration on the loopback redirect `port`
    /// (RFC 8252 §7.3: the authorization server must allow any port of a loopback
    /// redirect URI). Nothing is sent: the skip on `oauth.register` says why.
    pub(super) fn pre_registration(
        &self,
        p: &PreRegistered,
        journal: &Mutex<Journal>,
        port: u16,
    ) -> Result<Registration, LoginError> {
        let method = client_auth_method(
            p.client_secret.is_some(),
            p.client_key.is_some(),
            self.metadata.token_endpoint_auth_methods.as_deref(),
        )?;
        lock(journal).skip(
            &[leg::OAUTH_REGISTER],
            "not sent: pre-registered client (--client-id): dynamic client registration was not used",
        );
        Ok(Registration {
            client_id: p.client_id.clone(),
            client_secret: p.client_secret.clone(),
            client_secret_expires_at: None,
            token_endpoint_auth_method: Some(method.to_string()),
            redirect_port: port,
            redirect_uri: format!("http://127.0.0.1:{port}{CALLBACK_PATH}"),
            registered_at: now_s(),
            pre_registered: true,
            client_key: p.client_key.clone(),
            registered_by: None,
        })
    }

    /// Whether this login's client is the operator's client ID metadata document: one is
    /// given (`--client-metadata-url`), no `--client-id` is, and the authorization server
    /// advertises `client_id_metadata_document_supported`.
    pub(super) fn uses_cimd(&self) -> bool {
        self.pre_registered.is_none()
            && self.client_metadata_url.is_some()
            && self.metadata.client_id_metadata_document_supported
    }

    /// A client for the browser login on the loopback redirect `port`, in the order the
    /// MCP authorization spec gives: the pre-registered client (`--client-id`), else the
    /// client ID metadata document (`--client-metadata-url`) where the authorization
    /// server supports them, else dynamic client registration where it offers it.
    pub(super) async fn new_client(
        &self,
        client: &Client,
        journal: &Mutex<Journal>,
        port: u16,
    ) -> Result<Registration, LoginError> {
        if let Some(p) = &self.pre_registered {
            return self.pre_registration(p, journal, port);
        }
        if let (true, Some(url)) = (self.uses_cimd(), &self.client_metadata_url) {
            lock(journal).skip(
                &[leg::OAUTH_REGISTER],
                format!(
                    "not sent: the client id is the client ID metadata document {url} (the authorization server advertises client_id_metadata_document_supported)"
                ),
            );
            return Ok(Registration {
                client_id: url.clone(),
                client_secret: None,
                client_secret_expires_at: None,
                token_endpoint_auth_method: Some("none".into()),
                redirect_port: port,
                redirect_uri: format!("http://127.0.0.1:{port}{CALLBACK_PATH}"),
                registered_at: now_s(),
                pre_registered: false,
                client_key: None,
                registered_by: Some(REGISTERED_BY_CIMD.into()),
            });
        }
        if self.client_metadata_url.is_some() && self.metadata.registration_endpoint.is_some() {
            self.notice(&format!(
                "{}: the authorization server {} does not advertise client_id_metadata_document_supported; registering a client dynamically instead of using --client-metadata-url",
                self.endpoint, self.metadata.issuer
            ));
        }
        self.register(client, journal, port).await
    }

    /// RFC 7591 registration of a public client with the loopback redirect on `port`.
    pub(super) async fn register(
        &self,
        client: &Client,
        journal: &Mutex<Journal>,
        port: u16,
    ) -> Result<Registration, LoginError> {
        let endpoint = self.metadata.registration_endpoint.clone().ok_or_else(|| {
            LoginError::NoRegistration {
                issuer: self.metadata.issuer.clone(),
                cimd: self.metadata.client_id_metadata_document_supported,
            }
        })?;
        let redirect_uri = format!("http://127.0.0.1:{port}{CALLBACK_PATH}");
        let body = registration_body(&redirect_uri, self.scope.as_deref());
        let req = Request {
            method: "POST".into(),
            url: endpoint.clone(),
            headers: vec![
                Header::new(header::CONTENT_TYPE, "application/json"),
                Header::new(header::ACCEPT, "application/json"),
            ],
            body: serde_json::to_vec(&body).expect("json encodes"),
            await_id: None,
            head_only_stream: false,
            connect_to: None,
        };
        let a = self
            .send(client, journal, leg::OAUTH_REGISTER, req, &[])
            .await?;
        let client_id = str_field(&a.json, "client_id").filter(|s| !s.is_empty());
        let (200..=299, Some(client_id)) = (a.status, client_id) else {
            let (error, description) = super::response::refusal_fields(&a.json);
            return Err(LoginError::RegistrationRefused {
                issuer: self.metadata.issuer.clone(),
                status: a.status,
                error: error
                    .or_else(|| (a.status < 300).then(|| "no client_id in the response".into())),
                description,
                cimd: self.metadata.client_id_metadata_document_supported,
            });
        };
        Ok(Registration {
            client_id,
            client_secret: str_field(&a.json, "client_secret").filter(|s| !s.is_empty()),
            client_secret_expires_at: a
                .json
                .get("client_secret_expires_at")
                .and_then(Value::as_i64),
            token_endpoint_auth_method: str_field(&a.json, "token_endpoint_auth_method"),
            redirect_port: port,
            redirect_uri,
            registered_at: now_s(),
            pre_registered: false,
            client_key: None,
            registered_by: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pre_registered_secret_goes_the_way_the_metadata_allows() {
        let l = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(pre_registered_auth_method(false, None).unwrap(), "none");
        assert_eq!(
            pre_registered_auth_method(true, None).unwrap(),
            "client_secret_basic"
        );
        assert_eq!(
            pre_registered_auth_method(
                true,
                Some(&l(&["client_secret_post", "client_secret_basic"]))
            )
            .unwrap(),
            "client_secret_basic"
        );
        assert_eq!(
            pre_registered_auth_method(true, Some(&l(&["none", "client_secret_post"]))).unwrap(),
            "client_secret_post"
        );
        assert!(pre_registered_auth_method(true, Some(&l(&["private_key_jwt"]))).is_err());
    }

    #[test]
    fn the_registration_names_a_native_public_client() {
        let b = registration_body("http://127.0.0.1:5/callback", Some("mcp:tools"));
        assert_eq!(
            b,
            json!({
                "client_name": "mcp-collect",
                "application_type": "native",
                "redirect_uris": ["http://127.0.0.1:5/callback"],
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
                "token_endpoint_auth_method": "none",
                "scope": "mcp:tools",
            })
        );
        assert!(registration_body("http://127.0.0.1:5/callback", None)
            .get("scope")
            .is_none());
    }
}
