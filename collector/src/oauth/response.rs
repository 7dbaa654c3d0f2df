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
