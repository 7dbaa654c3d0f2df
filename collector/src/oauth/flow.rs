//! How a login obtains its token (`--grant`) and what the unattended grants are given:
//! the types only, shared by the login and the unattended grants themselves.

/// `grant_type` of RFC 7523's JWT-bearer authorization grant.
pub const JWT_BEARER_GRANT: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
/// `grant_type` of an RFC 8693 token exchange.
pub const TOKEN_EXCHANGE_GRANT: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
/// RFC 8693 token type of an OpenID Connect ID token.
pub const ID_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:id_token";
/// The token type of an identity assertion JWT authorization grant (ID-JAG).
pub const ID_JAG_TYPE: &str = "urn:ietf:params:oauth:token-type:id-jag";

/// How the login obtains its token (`--grant`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Grant {
    /// The browser login: authorization code with PKCE (the default).
    #[default]
    AuthorizationCode,
    /// OAuth client credentials: a machine client with a secret or a key.
    ClientCredentials,
    /// RFC 7523 JWT bearer: a workload identity token as the assertion.
    JwtBearer,
    /// Enterprise-managed authorization: token exchange at the identity provider, then a
    /// JWT-bearer grant with the identity assertion.
    EnterpriseManaged,
}

impl Grant {
    /// The flag value (`--grant`), as messages and the bundle name it.
    pub fn as_str(self) -> &'static str {
        match self {
            Grant::AuthorizationCode => "authorization-code",
            Grant::ClientCredentials => "client-credentials",
            Grant::JwtBearer => "jwt-bearer",
            Grant::EnterpriseManaged => "enterprise-managed",
        }
    }

    /// The `grant_type` sent to the authorization server's token endpoint.
    pub fn grant_type(self) -> &'static str {
        match self {
            Grant::AuthorizationCode => "authorization_code",
            Grant::ClientCredentials => "client_credentials",
            Grant::JwtBearer | Grant::EnterpriseManaged => JWT_BEARER_GRANT,
        }
    }

    /// A grant that needs no person.
    pub fn unattended(self) -> bool {
        self != Grant::AuthorizationCode
    }
}

/// The enterprise identity provider of [`Grant::EnterpriseManaged`].
#[derive(Clone)]
pub struct Enterprise {
    /// The identity provider's token endpoint (`--idp-token-endpoint`).
    pub token_endpoint: url::Url,
    /// The operator's ID token (`--id-token-env`): the exchange's `subject_token`.
    pub id_token: String,
    /// The client id at the identity provider (`--idp-client-id`), if it needs one.
    pub client_id: Option<String>,
    /// Its secret (`--idp-client-secret-env`), sent as `client_secret_basic`.
    pub client_secret: Option<String>,
}

impl std::fmt::Debug for Enterprise {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Enterprise")
            .field("token_endpoint", &self.token_endpoint.as_str())
            .field("client_id", &self.client_id)
            .field("secret", &self.client_secret.is_some())
            .finish()
    }
}

/// What an unattended grant needs beyond the client (`--client-id` and its secret or
/// key): the assertion or the identity provider.
#[derive(Clone, Default)]
pub struct Unattended {
    /// `--assertion-env`: the workload identity token of [`Grant::JwtBearer`].
    pub assertion: Option<String>,
    /// [`Grant::EnterpriseManaged`]'s identity provider.
    pub enterprise: Option<Enterprise>,
}

impl std::fmt::Debug for Unattended {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Unattended")
            .field("assertion", &self.assertion.is_some())
            .field("enterprise", &self.enterprise)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_grant_names_its_grant_type() {
        assert_eq!(Grant::default(), Grant::AuthorizationCode);
        assert!(!Grant::AuthorizationCode.unattended());
        assert_eq!(Grant::ClientCredentials.grant_type(), "client_credentials");
        assert_eq!(Grant::JwtBearer.grant_type(), JWT_BEARER_GRANT);
        assert_eq!(Grant::EnterpriseManaged.grant_type(), JWT_BEARER_GRANT);
        for g in [
            Grant::ClientCredentials,
            Grant::JwtBearer,
            Grant::EnterpriseManaged,
        ] {
            assert!(g.unattended());
            use clap::ValueEnum;
            assert_eq!(
                g.to_possible_value().unwrap().get_name(),
                g.as_str(),
                "the flag value is the name messages use"
            );
        }
    }
}
