//! The token cache: one JSON file per endpoint, issuer, client and scope under the state
//! directory's `credentials/`, written 0600 in a 0700 directory, atomically (a
//! temporary file renamed into place). It holds secrets: the client registration and
//! the tokens.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::error::LoginError;
use super::pkce::random_b64;

/// Subdirectory of the state directory holding the token cache.
pub const CREDENTIALS_DIR: &str = "credentials";
/// Version of the cache file layout.
pub(super) const CACHE_VERSION: u32 = 1;

/// Name of a cache file: the first 16 hex digits of SHA-256 of
/// `endpoint|issuer|client_id|scope` (an absent scope is empty), plus `.json`.
pub fn cache_file_name(
    endpoint: &str,
    issuer: &str,
    client_id: &str,
    scope: Option<&str>,
) -> String {
    let key = format!("{endpoint}|{issuer}|{client_id}|{}", scope.unwrap_or(""));
    format!(
        "{}.json",
        &hex::encode(Sha256::digest(key.as_bytes()))[..16]
    )
}

/// `--reauth`: delete every cached registration and token of `endpoint` under
/// `state_dir`. Returns how many files were removed.
pub fn forget(state_dir: &Path, endpoint: &str) -> Result<usize, LoginError> {
    let mut n = 0;
    for (path, entry) in load_all(&state_dir.join(CREDENTIALS_DIR))? {
        if entry.endpoint == endpoint {
            std::fs::remove_file(&path).map_err(|source| LoginError::Cache {
                path: path.clone(),
                source,
            })?;
            n += 1;
        }
    }
    Ok(n)
}

/// A client the operator registered with the authorization server beforehand
/// (`--client-id`, `--client-secret-env`, `--client-key-file`): the login uses it and
/// never registers one.
#[derive(Clone)]
pub struct PreRegistered {
    /// The client id (a public value).
    pub client_id: String,
    /// The client secret, from the environment; `None`: a public client.
    pub client_secret: Option<String>,
    /// The client's private key (`--client-key-file`): the client authenticates with
    /// RFC 7523 client assertions (`private_key_jwt`). Held in memory only.
    pub client_key: Option<std::sync::Arc<super::jose::SigningKey>>,
}

impl PartialEq for PreRegistered {
    fn eq(&self, other: &Self) -> bool {
        self.client_id == other.client_id
            && self.client_secret == other.client_secret
            && self.client_key.as_ref().map(|k| k.thumbprint())
                == other.client_key.as_ref().map(|k| k.thumbprint())
    }
}

impl std::fmt::Debug for PreRegistered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreRegistered")
            .field("client_id", &self.client_id)
            .field("secret", &self.client_secret.is_some())
            .field("key", &self.client_key.as_ref().map(|k| k.kind()))
            .finish()
    }
}

/// How a pre-registered client with a secret authenticates at the token endpoint
/// (`None`: a public client, `none`): `client_secret_basic` when the metadata's
/// `token_endpoint_auth_methods_supported` lists it or is absent (RFC 8414 §2: the
/// default), else `client_secret_post` when listed. A list naming neither leaves no
/// method this tool has.
pub fn pre_registered_auth_method(
    has_secret: bool,
    supported: Option<&[String]>,
) -> Result<&'static str, LoginError> {
    if !has_secret {
        return Ok("none");
    }
    match supported {
        None => Ok("client_secret_basic"),
        Some(l) if l.iter().any(|m| m == "client_secret_basic") => Ok("client_secret_basic"),
        Some(l) if l.iter().any(|m| m == "client_secret_post") => Ok("client_secret_post"),
        Some(l) => Err(LoginError::Metadata(format!(
            "token_endpoint_auth_methods_supported {l:?} names neither client_secret_basic nor \
             client_secret_post, the methods a --client-secret-env secret is sent with"
        ))),
    }
}

/// How a pre-registered client authenticates at the token endpoint: `private_key_jwt`
/// with a key (when the metadata lists it, or lists no methods), else as
/// [`pre_registered_auth_method`] says for a secret or a public client.
pub fn client_auth_method(
    has_secret: bool,
    has_key: bool,
    supported: Option<&[String]>,
) -> Result<&'static str, LoginError> {
    if !has_key {
        return pre_registered_auth_method(has_secret, supported);
    }
    match supported {
        Some(l) if !l.iter().any(|m| m == "private_key_jwt") => Err(LoginError::Metadata(format!(
            "token_endpoint_auth_methods_supported {l:?} does not name private_key_jwt, the \
             method a --client-key-file key is used with"
        ))),
        _ => Ok("private_key_jwt"),
    }
}

/// A dynamic client registration (or a pre-registered client), as cached.
#[derive(Clone, Serialize, Deserialize)]
pub(super) struct Registration {
    pub(super) client_id: String,
    #[serde(default)]
    pub(super) client_secret: Option<String>,
    /// RFC 7591: 0 or absent means it does not expire.
    #[serde(default)]
    pub(super) client_secret_expires_at: Option<i64>,
    /// `none`, `client_secret_post` or `client_secret_basic` (as the server answered).
    #[serde(default)]
    pub(super) token_endpoint_auth_method: Option<String>,
    /// Port of the loopback redirect URI registered.
    pub(super) redirect_port: u16,
    pub(super) redirect_uri: String,
    pub(super) registered_at: i64,
    /// A `--client-id` client, not a dynamic registration: its secret comes from the
    /// environment on every run and is never written to the cache.
    #[serde(default)]
    pub(super) pre_registered: bool,
    /// The `--client-key-file` key of a pre-registered client (never cached).
    #[serde(skip)]
    pub(super) client_key: Option<std::sync::Arc<super::jose::SigningKey>>,
    /// How the client id was obtained, when not by dynamic registration or
    /// `--client-id`: `client-metadata-document` (the id is the document's URL).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) registered_by: Option<String>,
}

impl Registration {
    /// Register the client with the journal's redactor: its id and redirect URI as
    /// public values first (sent as they are; no piece of a secret they share is
    /// replaced inside them), then its secret.
    pub(super) fn register(&self, j: &mut crate::journal::Journal) {
        j.add_public(self.client_id.as_bytes());
        j.add_public(self.redirect_uri.as_bytes());
        if let Some(s) = &self.client_secret {
            j.add_secret(s.as_bytes(), "client-secret");
        }
    }
}

/// Tokens, as cached.
#[derive(Clone, Serialize, Deserialize)]
pub(super) struct Tokens {
    pub(super) access_token: String,
    #[serde(default)]
    pub(super) refresh_token: Option<String>,
    /// UTC seconds; absent when the server said nothing about the lifetime.
    #[serde(default)]
    pub(super) expires_at: Option<i64>,
    /// `expires_in` as issued (the bundle reports the issued lifetime, never the
    /// remaining one, so that two bundles of one token agree).
    #[serde(default)]
    pub(super) expires_in: Option<i64>,
    /// `scope` of the token response, if it had one.
    #[serde(default)]
    pub(super) scope: Option<String>,
    pub(super) token_type: String,
    /// The RFC 8707 resource the token was asked for.
    pub(super) resource: String,
    pub(super) obtained_at: i64,
}

/// One cache file.
#[derive(Clone, Serialize, Deserialize)]
pub(super) struct Entry {
    pub(super) version: u32,
    pub(super) endpoint: String,
    pub(super) issuer: String,
    pub(super) scope: Option<String>,
    pub(super) client: Registration,
    pub(super) tokens: Option<Tokens>,
    pub(super) updated_at: i64,
    /// The grant that obtained the tokens, when not the authorization code
    /// (`client_credentials`, `jwt-bearer`, `enterprise-managed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) grant: Option<String>,
}

pub(super) fn cache_err(path: &Path) -> impl FnOnce(std::io::Error) -> LoginError + '_ {
    move |source| LoginError::Cache {
        path: path.to_path_buf(),
        source,
    }
}

/// Create `dir` (and missing parents) 0700, and tighten it to 0700 if it exists.
pub(super) fn private_dir(dir: &Path) -> Result<(), LoginError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(cache_err(dir))?;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .map_err(cache_err(dir))
    }
    #[cfg(not(unix))]
    {
        std::fs::create_dir_all(dir).map_err(cache_err(dir))
    }
}

/// Every parsable cache file in `dir` (a missing directory is an empty cache; a file
/// that does not parse is skipped: it is not ours to delete).
pub(super) fn load_all(dir: &Path) -> Result<Vec<(PathBuf, Entry)>, LoginError> {
    let rd = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(cache_err(dir)(e)),
    };
    let mut out = Vec::new();
    for de in rd.flatten() {
        let path = de.path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let Ok(bytes) = std::fs::read(&path) else {
            continue;
        };
        if let Ok(e) = serde_json::from_slice::<Entry>(&bytes) {
            if e.version == CACHE_VERSION {
                out.push((path, e));
            }
        }
    }
    Ok(out)
}

/// Write `entry` 0600 (temporary file renamed into place) and remove the other files
/// for the same endpoint, issuer and scope (a registration replaced on a new port).
pub(super) fn save(dir: &Path, entry: &Entry) -> Result<PathBuf, LoginError> {
    private_dir(dir)?;
    let name = cache_file_name(
        &entry.endpoint,
        &entry.issuer,
        &entry.client.client_id,
        entry.scope.as_deref(),
    );
    let path = dir.join(&name);
    let tmp = dir.join(format!(".{name}.{}.tmp", random_b64(6)?));
    let mut entry = entry.clone();
    if entry.client.pre_registered {
        // The operator's secret stays in the operator's environment.
        entry.client.client_secret = None;
    }
    let entry = &entry;
    let bytes = serde_json::to_vec_pretty(entry).expect("cache entry encodes");
    crate::keys::write_private(&tmp, &bytes).map_err(cache_err(&tmp))?;
    if let Err(e) = std::fs::rename(&tmp, &path) {
        let _ = std::fs::remove_file(&tmp);
        return Err(cache_err(&path)(e));
    }
    for (other, e) in load_all(dir)? {
        if other != path
            && e.endpoint == entry.endpoint
            && e.issuer == entry.issuer
            && e.scope == entry.scope
        {
            let _ = std::fs::remove_file(&other);
        }
    }
    Ok(path)
}
