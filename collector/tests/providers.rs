//! The provider matrix: the real `mcp-collect` against lab authorization servers that
//! answer MCP clients as named identity providers do (lab/providers/as.py, each in front
//! of a real MCP resource server, lab/py2-auth/server.py), and the outcome each must
//! give: Okta's and Keycloak's refusals of dynamic client registration and GitHub's
//! lack of it name the refusal and `--client-id`, and a pre-registered client then logs
//! in; Entra's refusal of the RFC 8707 `resource` parameter is retried once without it;
//! Auth0's opaque token without `--audience` and Hydra's `aud: []` are refused by the
//! resource server. The user is played by following the printed authorization URL
//! (the fixtures approve at once). No code, token or secret the fixture issued may
//! reach a bundle or an output line.

mod support;

use base64::Engine as _;
use mcp_probe_schema::model::{HttpOutcome, Observation};
use mcp_probe_schema::vocab::leg;
use support::follow::{collect_following, get_json, Outcome};
use support::lab;

const PUBLIC_APP: &str = "provider-app";
const SECRET_APP: &str = "provider-secret-app";
const SECRET: &str = "provider-app-secret-0123456789";
const SECRET_VAR: &str = "PROVIDER_MATRIX_CLIENT_SECRET";
const ENTRA_APP_ID: &str = "6731de76-14a6-49ae-97bc-6eba6914391e";
const NO_TOKEN: &str = "the endpoint refused the OAuth access token of this run's browser login";

fn find(hay: &[u8], needle: &str) -> Option<usize> {
    if needle.is_empty() {
        return None;
    }
    hay.windows(needle.len())
        .position(|w| w == needle.as_bytes())
}

/// Where `needle` sits in `hay`: the bytes around it, for a failure message.
fn around(hay: &[u8], at: usize) -> String {
    String::from_utf8_lossy(&hay[at.saturating_sub(200)..(at + 200).min(hay.len())]).into_owned()
}

/// The authorization server the resource server's RFC 9728 metadata names.
fn issuer_of(rs: &str) -> String {
    let u = url::Url::parse(rs).expect("RS URL");
    let prm = get_json(&format!(
        "{}/.well-known/oauth-protected-resource{}",
        u.origin().ascii_serialization(),
        u.path()
    ));
    prm["authorization_servers"][0]
        .as_str()
        .expect("authorization_servers")
        .trim_end_matches('/')
        .to_string()
}

/// Run, play the user, and check that nothing the fixture issued (codes, access and
/// refresh tokens, client secrets; `also` besides) appears in the bundle or the output,
/// and that every credential header the bundle holds is a fingerprint.
fn run(rs: &str, args: &[&str], envs: &[(&str, &str)], also: &[&str]) -> (Outcome, Vec<u8>) {
    let o = collect_following(rs, args, envs);
    let bytes = o.bundle_bytes();
    let issued = get_json(&format!("{}/_lab/issued", issuer_of(rs)));
    let mut secrets: Vec<String> = also.iter().map(|s| s.to_string()).collect();
    for list in ["codes", "access_tokens", "refresh_tokens", "client_secrets"] {
        for v in issued[list].as_array().expect("issued list") {
            secrets.push(v.as_str().expect("issued value").to_string());
        }
    }
    for s in &secrets {
        if let Some(at) = find(&bytes, s) {
            panic!("{s} is in the bundle: …{}…", around(&bytes, at));
        }
        assert!(
            !o.stdout.contains(s.as_str()) && !o.stderr.contains(s.as_str()),
            "{s} was printed\n{}",
            o.describe()
        );
    }
    let v = mcp_probe_schema::open(&bytes, &[]).expect("the bundle verifies");
    for r in &v.records {
        let Observation::Http(x) = &r.observation else {
            continue;
        };
        for h in &x.request.headers {
            if h.name.eq_ignore_ascii_case("authorization") {
                let value = h.value_str();
                let (scheme, rest) = value.split_once(' ').unwrap_or(("", &value));
                assert!(
                    rest.starts_with("redacted:sha256:"),
                    "{scheme} credential not redacted in record {}: {value}",
                    r.seq
                );
            }
        }
    }
    (o, bytes)
}

/// The `aud` of every JWT access token the resource server's authorization server
/// issued so far (opaque tokens are left out).
fn issued_audiences(rs: &str) -> Vec<serde_json::Value> {
    let issued = get_json(&format!("{}/_lab/issued", issuer_of(rs)));
    issued["access_tokens"]
        .as_array()
        .expect("access_tokens")
        .iter()
        .filter_map(|t| t.as_str()?.split('.').nth(1).map(str::to_string))
        .filter_map(|p| {
            base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(p)
                .ok()
        })
        .filter_map(|p| serde_json::from_slice::<serde_json::Value>(&p).ok())
        .map(|c| c["aud"].clone())
        .collect()
}

fn verified(bytes: &[u8]) -> mcp_probe_schema::Verified {
    mcp_probe_schema::open(bytes, &[]).expect("the bundle verifies")
}

/// Exit 0, the user reached the callback, and the session is authenticated.
fn assert_logged_in(o: &Outcome, bytes: &[u8]) {
    assert_eq!(o.code, 0, "{}", o.describe());
    assert!(
        o.delivered(),
        "the login never reached the callback\n{}",
        o.describe()
    );
    let v = verified(bytes);
    assert!(
        v.evidence.session.as_ref().is_some_and(|s| s.authenticated),
        "no authenticated session\n{}",
        o.describe()
    );
}

/// Exit 3 (sealed without an MCP session); stderr holds every one of `words`, and the
/// recorded failure the first.
fn assert_refused(o: &Outcome, bytes: &[u8], words: &[&str]) {
    assert_eq!(o.code, 3, "{}", o.describe());
    for w in words {
        assert!(o.stderr.contains(w), "stderr lacks {w:?}\n{}", o.describe());
    }
    let failure = verified(bytes).evidence.run.failure.unwrap_or_default();
    assert!(
        failure.contains(words[0]),
        "run.failure {failure:?} lacks {:?}",
        words[0]
    );
}

/// The token-endpoint exchanges of the login (leg `oauth.token`), in order: request
/// body and response status and body (status 0: no response).
fn token_requests(bytes: &[u8]) -> Vec<(String, u16, String)> {
    verified(bytes)
        .records
        .iter()
        .filter(|r| r.legs.iter().any(|l| l == leg::OAUTH_TOKEN))
        .filter_map(|r| match &r.observation {
            Observation::Http(x) => {
                let req = String::from_utf8_lossy(&x.request.body.bytes).into_owned();
                Some(match &x.outcome {
                    HttpOutcome::Response(resp) => (
                        req,
                        resp.status,
                        String::from_utf8_lossy(&resp.body.bytes).into_owned(),
                    ),
                    HttpOutcome::Error(e) => (req, 0, format!("{e:?}")),
                })
            }
            _ => None,
        })
        .collect()
}

#[test]
fn okta_refuses_registration_and_names_the_way_out() {
    let Some(rs) = lab("LAB_PROVIDER_OKTA_RS") else {
        return;
    };
    let (o, bytes) = run(&rs, &[], &[], &[]);
    assert_refused(
        &o,
        &bytes,
        &[
            "refused dynamic client registration",
            "HTTP 401",
            "E0000011",
            "Invalid token provided",
            "--client-id",
        ],
    );
}

#[test]
fn okta_with_a_pre_registered_public_client_logs_in() {
    let Some(rs) = lab("LAB_PROVIDER_OKTA_RS") else {
        return;
    };
    let (o, bytes) = run(&rs, &["--client-id", PUBLIC_APP], &[], &[]);
    assert_logged_in(&o, &bytes);
}

#[test]
fn keycloak_refuses_registration_and_names_the_way_out() {
    let Some(rs) = lab("LAB_PROVIDER_KEYCLOAK_RS") else {
        return;
    };
    let (o, bytes) = run(&rs, &[], &[], &[]);
    assert_refused(
        &o,
        &bytes,
        &[
            "refused dynamic client registration",
            "HTTP 403",
            "insufficient_scope",
            "Trusted Hosts",
            "--client-id",
        ],
    );
}

#[test]
fn keycloak_with_a_pre_registered_public_client_logs_in() {
    let Some(rs) = lab("LAB_PROVIDER_KEYCLOAK_RS") else {
        return;
    };
    let (o, bytes) = run(&rs, &["--client-id", PUBLIC_APP], &[], &[]);
    assert_logged_in(&o, &bytes);
}

#[test]
fn github_without_registration_names_the_way_out() {
    let Some(rs) = lab("LAB_PROVIDER_GITHUB_RS") else {
        return;
    };
    let (o, bytes) = run(&rs, &[], &[], &[]);
    assert_refused(&o, &bytes, &["has no registration_endpoint", "--client-id"]);
}

#[test]
fn github_with_a_pre_registered_confidential_client_logs_in() {
    let Some(rs) = lab("LAB_PROVIDER_GITHUB_RS") else {
        return;
    };
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("{SECRET_APP}:{SECRET}"));
    let (o, bytes) = run(
        &rs,
        &["--client-id", SECRET_APP, "--client-secret-env", SECRET_VAR],
        &[(SECRET_VAR, SECRET)],
        &[SECRET, &basic],
    );
    assert_logged_in(&o, &bytes);
}

#[test]
fn entra_refusing_the_resource_parameter_is_retried_without_it() {
    let Some(rs) = lab("LAB_PROVIDER_ENTRA_RS") else {
        return;
    };
    let (o, bytes) = run(&rs, &["--client-id", PUBLIC_APP], &[], &[]);
    assert_logged_in(&o, &bytes);
    assert!(
        o.stderr.contains("refuses the RFC 8707 resource parameter"),
        "{}",
        o.describe()
    );
    let tokens = token_requests(&bytes);
    let refused = tokens
        .iter()
        .position(|(_, status, body)| *status == 400 && body.contains("AADSTS901002"))
        .unwrap_or_else(|| panic!("no AADSTS901002 refusal recorded: {tokens:?}"));
    assert!(tokens[refused].0.contains("resource="), "{tokens:?}");
    let retry = tokens
        .get(refused + 1)
        .unwrap_or_else(|| panic!("no token request after the refusal: {tokens:?}"));
    assert_eq!(retry.1, 200, "the retry failed: {tokens:?}");
    assert!(
        !retry.0.contains("resource="),
        "the retry named a resource: {tokens:?}"
    );
    // What the server accepted names Entra's application id, not the resource URL.
    let auds = issued_audiences(&rs);
    assert!(
        !auds.is_empty() && auds.iter().all(|a| a == ENTRA_APP_ID),
        "{auds:?}"
    );
}

#[test]
fn entra_without_resource_indicators_needs_no_retry() {
    let Some(rs) = lab("LAB_PROVIDER_ENTRA_RS") else {
        return;
    };
    let (o, bytes) = run(
        &rs,
        &["--client-id", PUBLIC_APP, "--no-resource-indicator"],
        &[],
        &[],
    );
    assert_logged_in(&o, &bytes);
    let tokens = token_requests(&bytes);
    assert_eq!(tokens.len(), 1, "one token request expected: {tokens:?}");
    assert!(
        tokens.iter().all(|(req, _, _)| !req.contains("resource=")),
        "{tokens:?}"
    );
    assert_eq!(tokens[0].1, 200, "{tokens:?}");
}

#[test]
fn auth0_without_an_audience_gets_an_opaque_token_the_server_refuses() {
    let Some(rs) = lab("LAB_PROVIDER_AUTH0_RS") else {
        return;
    };
    let (o, bytes) = run(&rs, &[], &[], &[]);
    assert!(o.delivered(), "{}", o.describe());
    assert_refused(&o, &bytes, &[NO_TOKEN]);
}

#[test]
fn auth0_with_the_server_as_audience_logs_in() {
    let Some(rs) = lab("LAB_PROVIDER_AUTH0_RS") else {
        return;
    };
    let (o, bytes) = run(&rs, &["--audience", &rs], &[], &[]);
    assert_logged_in(&o, &bytes);
    let auth = o.auth_url.as_ref().expect("an authorization URL");
    assert!(
        auth.query_pairs()
            .any(|(k, v)| k == "audience" && v == rs.as_str()),
        "{auth}"
    );
}

#[test]
fn hydra_token_without_audience_is_refused_by_the_server() {
    let Some(rs) = lab("LAB_PROVIDER_HYDRA_RS") else {
        return;
    };
    let (o, bytes) = run(&rs, &[], &[], &[]);
    assert!(o.delivered(), "{}", o.describe());
    assert_refused(&o, &bytes, &[NO_TOKEN]);
}
