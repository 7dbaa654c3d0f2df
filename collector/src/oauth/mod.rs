//! The OAuth layer: everything that reaches an authorization server.
//!
//! * [`discovery`]: protected-resource (RFC 9728) and authorization-server (RFC 8414,
//!   OpenID Connect discovery) metadata.
//! * [`guard`]: the network guard for server-supplied URLs and the credential gate.
//! * [`login`]: [`Login::obtain`], cache first, then a refresh, then an interactive
//!   login.
//!
//! The login is split further by concern: [`metadata`] (what the AS metadata must
//! name, the RFC 8707 resource and the scope), [`cache`] (the 0600 token cache),
//! [`callback`] (the loopback redirect server), [`registration`] (RFC 7591),
//! [`pkce`] (RFC 7636), [`response`] (token endpoint answers) and [`grants`] (token
//! requests, and the raw grants the audience legs send); [`error`] says why a login
//! gave no token. [`dpop`] decides on RFC 9449 DPoP and sends the token endpoint's
//! proofs; [`proof`] holds the run's key and signs them.

pub mod cache;
pub mod callback;
pub mod discovery;
pub mod dpop;
pub mod error;
pub mod flow;
pub mod grants;
pub mod guard;
pub mod jose;
pub mod login;
pub mod metadata;
pub mod pkce;
pub mod proof;
pub mod registration;
pub mod response;
pub mod unattended;

pub use cache::{
    cache_file_name, forget, pre_registered_auth_method, PreRegistered, CREDENTIALS_DIR,
};
pub use callback::{validate_callback, CALLBACK_PATH};
pub use error::{CallbackError, LoginError};
pub use flow::{Enterprise, Grant, Unattended};
pub use grants::{CachedRefresh, RawGrant};
pub use jose::SigningKey;
pub use login::{
    Credential, Login, Obtained, SchemeRefusal, CALLBACK_TIMEOUT, MIN_VALIDITY, URL_LINE,
};
pub use metadata::{resource_for, scope_for, AsMetadata};
pub use pkce::pkce_challenge;
pub use registration::CLIENT_NAME;
