//! What an OAuth endpoint's JSON answer holds: a successful token response, string
//! fields, and the secrets to register with the redactor before the answer is recorded.

use serde_json::Value;

/// What a token endpoint answered, when it was a success.
pub(super) struct TokenResponse {
    pub(super) access_token: String,
    pub(super) token_type: String,
    pub(super) expires_in: Option<i64>,
    pub(super) refresh_token: Option<String>,
    pub(super) scope: Option<String>,
}

pub(super) fn str_field(v: &Value, name: &str) -> Option<String> {
    v.get(name).and_then(Value::as_str).map(str::to_string)
}

/// The refusal an OAuth endpoint's JSON answer names: RFC 6749's `error` and
/// `error_description`, else the fields some identity providers send instead (Okta's
/// `errorCode` and `errorSummary`).
pub(super) fn refusal_fields(v: &Value) -> (Option<String>, Option<String>) {
    let pick = |a: &str, b: &str| str_field(v, a).or_else(|| str_field(v, b));
    (
        pick("error", "errorCode"),
        pick("error_description", "errorSummary"),
    )
}

/// Whether a token endpoint's refusal is about the RFC 8707 `resource` parameter itself:
/// `invalid_target`, or Microsoft Entra ID's AADSTS901002 ("the 'resource' request
/// parameter is not supported") and AADSTS9010010 (`resource` beside a scope).
pub(super) fn refuses_resource(v: &Value) -> bool {
    let (error, description) = refusal_fields(v);
    error.as_deref() == Some("invalid_target")
        || description
            .as_deref()
            .is_some_and(|d| d.contains("AADSTS901002") || d.contains("AADSTS9010010"))
}

/// Values of an OAuth JSON response that are not credentials and that the collector
/// sends back as they are (`client_id`): registered as public with the redactor before
/// the response's secrets, so no piece of a secret they share is replaced inside them.
pub(super) fn response_publics(v: &Value) -> Vec<String> {
    str_field(v, "client_id")
        .filter(|s| !s.is_empty())
        .into_iter()
        .collect()
}

/// Secrets of an OAuth JSON response (registered before the response is recorded).
pub(super) fn response_secrets(v: &Value) -> Vec<(String, &'static str)> {
    [
        ("access_token", "access-token"),
        ("refresh_token", "refresh-token"),
        ("id_token", "id-token"),
        ("client_secret", "client-secret"),
        ("registration_access_token", "registration-access-token"),
    ]
    .iter()
    .filter_map(|(k, what)| str_field(v, k).map(|s| (s, *what)))
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn refusals_are_read_from_oauth_and_okta_fields() {
        assert_eq!(
            refusal_fields(&json!({"error": "invalid_client", "error_description": "no"})),
            (Some("invalid_client".into()), Some("no".into()))
        );
        assert_eq!(
            refusal_fields(
                &json!({"errorCode": "E0000011", "errorSummary": "Invalid token provided"})
            ),
            (
                Some("E0000011".into()),
                Some("Invalid token provided".into())
            )
        );
        assert_eq!(refusal_fields(&json!(null)), (None, None));
    }

    #[test]
    fn a_refused_resource_parameter_is_recognised() {
        assert!(refuses_resource(&json!({"error": "invalid_target"})));
        assert!(refuses_resource(&json!({"error": "invalid_request",
            "error_description": "AADSTS901002: The 'resource' request parameter is not supported."})));
        assert!(refuses_resource(&json!({"error": "invalid_request",
            "error_description": "AADSTS9010010: The resource parameter provided in the request doesn't match with the requested scopes."})));
        assert!(!refuses_resource(&json!({"error": "invalid_grant"})));
    }
}
