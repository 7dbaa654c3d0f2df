//! The login flags of a run, validated before any traffic: the pre-registered client
//! (`--client-id`, its secret or key), the grant (`--grant` and what each needs), the
//! client ID metadata document, `--audience` and `--no-resource-indicator`. Every secret
//! comes from the environment (never argv) and is registered with the run's redactor
//! here, before the first request.

use std::sync::Arc;

use mcp_probe_schema::host::is_local_url;
use mcp_probe_schema::model::LoginOptions;

use super::cli::{Printer, UsageError};
use super::flags::Flags;
use crate::oauth::{Enterprise, Grant, PreRegistered, SigningKey, Unattended};

/// What the login of each target is given.
#[derive(Debug, Clone, Default)]
pub struct LoginPlan {
    /// `--client-id` and its secret or key.
    pub client: Option<PreRegistered>,
    /// `--grant`.
    pub grant: Grant,
    /// The assertion or identity provider of an unattended grant.
    pub unattended: Option<Unattended>,
    /// `--client-metadata-url`.
    pub client_metadata_url: Option<String>,
    /// `--audience`.
    pub audience: Option<String>,
    /// Not `--no-resource-indicator`.
    pub resource_indicator: bool,
}

fn env_value(flag: &'static str, var: &str) -> Result<String, UsageError> {
    match std::env::var(var) {
        Ok(v) if !v.trim().is_empty() => Ok(v.trim().to_string()),
        _ => Err(UsageError::EnvVar {
            flag,
            var: var.to_string(),
        }),
    }
}

/// A URL a login flag gives: http(s), no userinfo or fragment, and plain http only for a
/// loopback host (as every other credential-bearing URL).
fn login_url(flag: &'static str, s: &str) -> Result<url::Url, UsageError> {
    let bad = |reason: &str| UsageError::LoginUrl {
        flag,
        url: s.to_string(),
        reason: reason.to_string(),
    };
    let u = url::Url::parse(s.trim()).map_err(|e| bad(&format!("not a URL ({e})")))?;
    if !u.username().is_empty() || u.password().is_some() {
        return Err(bad("the URL carries userinfo"));
    }
    if u.fragment().is_some() {
        return Err(bad("the URL has a fragment"));
    }
    match u.scheme() {
        "https" => Ok(u),
        "http" if is_local_url(&u) => Ok(u),
        "http" => Err(bad(
            "plain http is allowed only for a loopback host; use https",
        )),
        other => Err(bad(&format!("scheme {other} (https expected)"))),
    }
}

/// Validate the login flags. `printer`'s redactor learns every secret.
pub fn plan_login(flags: &Flags, printer: &Printer) -> Result<LoginPlan, UsageError> {
    let grant = flags.grant;
    let misplaced = |reason: String| UsageError::Grant {
        grant: grant.as_str(),
        reason,
    };
    let client = match &flags.client_id {
        Some(id) if id.trim().is_empty() => return Err(UsageError::ClientId),
        Some(id) => {
            let secret = match &flags.client_secret_env {
                Some(var) => Some(
                    env_value("--client-secret-env", var)
                        .map_err(|_| UsageError::ClientSecretEnv(var.clone()))?,
                ),
                None => None,
            };
            let key = match &flags.client_key_file {
                Some(path) => {
                    let text =
                        std::fs::read_to_string(path).map_err(|e| UsageError::ClientKey {
                            path: path.clone(),
                            reason: e.to_string(),
                        })?;
                    let k = SigningKey::from_pem(&text).map_err(|e| UsageError::ClientKey {
                        path: path.clone(),
                        reason: e.to_string(),
                    })?;
                    Some(Arc::new(k))
                }
                None => None,
            };
            let r = printer.redactor();
            r.add_public(id.trim().as_bytes());
            if let Some(s) = &secret {
                r.add_secret(s.as_bytes(), "client-secret");
            }
            Some(PreRegistered {
                client_id: id.trim().to_string(),
                client_secret: secret,
                client_key: key,
            })
        }
        None => None,
    };
    if flags.token_env.is_some() && grant.unattended() {
        return Err(misplaced(
            "--token-env gives the token itself; a grant is not used with it".into(),
        ));
    }
    if flags.assertion_env.is_some() && grant != Grant::JwtBearer {
        return Err(misplaced(
            "--assertion-env is used only with --grant jwt-bearer".into(),
        ));
    }
    let idp_flags = flags.idp_token_endpoint.is_some()
        || flags.id_token_env.is_some()
        || flags.idp_client_id.is_some();
    if idp_flags && grant != Grant::EnterpriseManaged {
        return Err(misplaced(
            "--idp-token-endpoint, --id-token-env and --idp-client-id are used only with --grant enterprise-managed"
                .into(),
        ));
    }
    if flags.client_metadata_url.is_some() && grant.unattended() {
        return Err(misplaced(
            "--client-metadata-url names a client of the browser login (--grant authorization-code)"
                .into(),
        ));
    }
    let with_credential = client
        .as_ref()
        .is_some_and(|c| c.client_secret.is_some() || c.client_key.is_some());
    let unattended = match grant {
        Grant::AuthorizationCode => None,
        Grant::ClientCredentials => {
            if !with_credential {
                return Err(misplaced(
                    "needs --client-id with --client-secret-env or --client-key-file".into(),
                ));
            }
            Some(Unattended::default())
        }
        Grant::JwtBearer => {
            let var = flags
                .assertion_env
                .as_ref()
                .ok_or_else(|| misplaced("needs --assertion-env VAR".into()))?;
            let a = env_value("--assertion-env", var)?;
            printer.redactor().add_secret(a.as_bytes(), "assertion");
            Some(Unattended {
                assertion: Some(a),
                enterprise: None,
            })
        }
        Grant::EnterpriseManaged => {
            if client.is_none() {
                return Err(misplaced(
                    "needs --client-id (with --client-secret-env or --client-key-file when the authorization server authenticates clients)"
                        .into(),
                ));
            }
            let (Some(endpoint), Some(var)) = (&flags.idp_token_endpoint, &flags.id_token_env)
            else {
                return Err(misplaced(
                    "needs --idp-token-endpoint URL and --id-token-env VAR".into(),
                ));
            };
            let token_endpoint = login_url("--idp-token-endpoint", endpoint)?;
            let id_token = env_value("--id-token-env", var)?;
            let client_secret = match &flags.idp_client_secret_env {
                Some(v) => Some(env_value("--idp-client-secret-env", v)?),
                None => None,
            };
            let r = printer.redactor();
            r.add_secret(id_token.as_bytes(), "id-token");
            if let Some(s) = &client_secret {
                r.add_secret(s.as_bytes(), "client-secret");
            }
            if let Some(id) = &flags.idp_client_id {
                r.add_public(id.trim().as_bytes());
            }
            Some(Unattended {
                assertion: None,
                enterprise: Some(Enterprise {
                    token_endpoint,
                    id_token,
                    client_id: flags.idp_client_id.as_ref().map(|s| s.trim().to_string()),
                    client_secret,
                }),
            })
        }
    };
    let client_metadata_url = match &flags.client_metadata_url {
        Some(s) => {
            let u = login_url("--client-metadata-url", s)?;
            if u.path().is_empty() || u.path() == "/" {
                return Err(UsageError::LoginUrl {
                    flag: "--client-metadata-url",
                    url: s.clone(),
                    reason: "a client ID metadata document URL has a path (the client id is the whole URL)".into(),
                });
            }
            printer.redactor().add_public(u.as_str().as_bytes());
            Some(u.to_string())
        }
        None => None,
    };
    Ok(LoginPlan {
        client,
        grant,
        unattended,
        client_metadata_url,
        audience: flags.audience.clone(),
        resource_indicator: !flags.no_resource_indicator,
    })
}

impl LoginPlan {
    /// What the bundle records of the login flags (`run.options.login`); `None` when
    /// every flag has its default (bundles then read as before the record existed).
    pub fn record(&self, flags: &Flags) -> Option<LoginOptions> {
        let r = LoginOptions {
            grant: self
                .grant
                .unattended()
                .then(|| self.grant.as_str().to_string()),
            client_key_thumbprint: self
                .client
                .as_ref()
                .and_then(|c| c.client_key.as_ref())
                .map(|k| k.thumbprint()),
            assertion_env: flags.assertion_env.clone(),
            idp_token_endpoint: self
                .unattended
                .as_ref()
                .and_then(|u| u.enterprise.as_ref())
                .map(|e| e.token_endpoint.to_string()),
            id_token_env: flags.id_token_env.clone(),
            idp_client_id: flags.idp_client_id.as_ref().map(|s| s.trim().to_string()),
            client_metadata_url: self.client_metadata_url.clone(),
            audience: self.audience.clone(),
            no_resource_indicator: !self.resource_indicator,
        };
        (r != LoginOptions::default()).then_some(r)
    }
}
