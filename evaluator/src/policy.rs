//! The operator's policy: decisions the wire cannot show (approved revisions, approved
//! authorization servers, approved scopes, allowed origins, the longest acceptable token
//! lifetime), read from `mcp-grade --policy FILE` (TOML, or JSON when the file ends in
//! `.json`). A `[all]` table applies to every endpoint; `[[endpoint]]` tables with a
//! `url` override it, key by key, for one endpoint. Every key is optional: a check whose
//! key is absent grades with its benchmark default and says so.
//!
//! The published JSON Schema is docs/schemas/policy.schema.json; a test keeps it and
//! these types in step. An invalid policy is a usage error naming the file and the key.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use mcp_probe_schema::vocab::REVISIONS;

/// One set of decisions (the `[all]` table or one `[[endpoint]]`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Decisions {
    /// The endpoint URL an `[[endpoint]]` table applies to, as bundles record it
    /// (`target.endpoint`); required there, refused in `[all]`.
    pub url: Option<String>,
    /// Protocol revisions the operator approved (1.1).
    pub approved_revisions: Option<Vec<String>>,
    /// Issuer URLs of the approved authorization servers (3.3.2).
    pub approved_authorization_servers: Option<Vec<String>>,
    /// OAuth scopes the operator approved (3.3.4).
    pub approved_scopes: Option<Vec<String>>,
    /// Origins allowed to call the endpoint (2.5), `scheme://host[:port]`.
    pub allowed_origins: Option<Vec<String>>,
    /// The longest acceptable access-token lifetime, in seconds (3.1.2).
    pub max_token_lifetime_seconds: Option<u64>,
}

/// The policy file's contents.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyDoc {
    /// Decisions for every endpoint.
    #[serde(default)]
    pub all: Decisions,
    /// Per-endpoint overrides, each with its `url`.
    #[serde(default)]
    pub endpoint: Vec<Decisions>,
}

/// A loaded, validated policy and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    /// The file as given.
    pub path: PathBuf,
    /// SHA-256 of the file's bytes, hex.
    pub sha256: String,
    /// What it says.
    pub doc: PolicyDoc,
}

/// Why a policy file cannot be used (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    /// The file could not be read.
    #[error("--policy {}: cannot read it: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not valid TOML or JSON of the policy's shape.
    #[error("--policy {}: {message}", path.display())]
    Syntax {
        /// The file.
        path: PathBuf,
        /// The parser's message (it names the key and the line).
        message: String,
    },
    /// A value is not acceptable.
    #[error("--policy {}: {key}: {message}", path.display())]
    Value {
        /// The file.
        path: PathBuf,
        /// The key, as a path (`all.approved_revisions[1]`).
        key: String,
        /// What is wrong.
        message: String,
    },
}

impl Policy {
    /// Read and validate `path`.
    pub fn load(path: &Path) -> Result<Policy, PolicyError> {
        let bytes = std::fs::read(path).map_err(|source| PolicyError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let doc = Self::parse(path, &bytes)?;
        validate(&doc).map_err(|(key, message)| PolicyError::Value {
            path: path.to_path_buf(),
            key,
            message,
        })?;
        Ok(Policy {
            path: path.to_path_buf(),
            sha256: hex::encode(mcp_probe_schema::bundle::sha256(&bytes)),
            doc,
        })
    }

    fn parse(path: &Path, bytes: &[u8]) -> Result<PolicyDoc, PolicyError> {
        let syntax = |message: String| PolicyError::Syntax {
            path: path.to_path_buf(),
            message: message.lines().map(str::trim).collect::<Vec<_>>().join(" "),
        };
        let text = std::str::from_utf8(bytes).map_err(|e| syntax(format!("not UTF-8: {e}")))?;
        if path
            .extension()
            .is_some_and(|x| x.eq_ignore_ascii_case("json"))
        {
            serde_json::from_str(text).map_err(|e| syntax(e.to_string()))
        } else {
            toml::from_str(text).map_err(|e| {
                let at = e.span().map(|s| s.start.min(text.len()));
                match at {
                    Some(at) => {
                        let n = text[..at].matches('\n').count();
                        let source = text.lines().nth(n).unwrap_or_default().trim();
                        syntax(format!("line {} (`{source}`): {}", n + 1, e.message()))
                    }
                    None => syntax(e.message().to_string()),
                }
            })
        }
    }

    /// The decisions that apply to `endpoint`: its `[[endpoint]]` entry's keys, else the
    /// `[all]` keys.
    pub fn for_endpoint(&self, endpoint: &str) -> Decisions {
        let all = self.doc.all.clone();
        let Some(d) = self
            .doc
            .endpoint
            .iter()
            .find(|e| e.url.as_deref() == Some(endpoint))
            .cloned()
        else {
            return all;
        };
        Decisions {
            url: d.url,
            approved_revisions: d.approved_revisions.or(all.approved_revisions),
            approved_authorization_servers: d
                .approved_authorization_servers
                .or(all.approved_authorization_servers),
            approved_scopes: d.approved_scopes.or(all.approved_scopes),
            allowed_origins: d.allowed_origins.or(all.allowed_origins),
            max_token_lifetime_seconds: d
                .max_token_lifetime_seconds
                .or(all.max_token_lifetime_seconds),
        }
    }
}

/// The policy as it applies to one endpoint, for the checks that read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    /// The policy file as given (checks name it in their evidence).
    pub file: String,
    /// The decisions for the endpoint.
    pub decisions: Decisions,
}

impl Policy {
    /// The decisions for `endpoint`, with the file they came from.
    pub fn applied(&self, endpoint: &str) -> Applied {
        Applied {
            file: self.path.display().to_string(),
            decisions: self.for_endpoint(endpoint),
        }
    }
}

type Invalid = (String, String);

fn validate(doc: &PolicyDoc) -> Result<(), Invalid> {
    if doc.all.url.is_some() {
        return Err((
            "all.url".into(),
            "[all] applies to every endpoint; name one endpoint in an [[endpoint]] table".into(),
        ));
    }
    validate_decisions("all", &doc.all)?;
    let mut seen: Vec<&str> = Vec::new();
    for (i, e) in doc.endpoint.iter().enumerate() {
        let at = format!("endpoint[{i}]");
        let Some(u) = e.url.as_deref() else {
            return Err((
                format!("{at}.url"),
                "missing: an [[endpoint]] names its url".into(),
            ));
        };
        match url::Url::parse(u) {
            Ok(p) if matches!(p.scheme(), "http" | "https") => {}
            Ok(_) => return Err((format!("{at}.url"), format!("{u:?} is not an http(s) URL"))),
            Err(err) => return Err((format!("{at}.url"), format!("{u:?} is not a URL: {err}"))),
        }
        if seen.contains(&u) {
            return Err((format!("{at}.url"), format!("{u:?} is listed twice")));
        }
        seen.push(u);
        validate_decisions(&at, e)?;
    }
    Ok(())
}

fn validate_decisions(at: &str, d: &Decisions) -> Result<(), Invalid> {
    each(at, "approved_revisions", &d.approved_revisions, |r| {
        if REVISIONS.contains(&r) {
            Ok(())
        } else {
            Err(format!(
                "{r:?} is not an MCP revision (known: {})",
                REVISIONS.join(", ")
            ))
        }
    })?;
    each(
        at,
        "approved_authorization_servers",
        &d.approved_authorization_servers,
        |s| match url::Url::parse(s) {
            Ok(u) if matches!(u.scheme(), "http" | "https") => Ok(()),
            Ok(_) => Err(format!("{s:?} is not an http(s) issuer URL")),
            Err(e) => Err(format!("{s:?} is not a URL: {e}")),
        },
    )?;
    each(at, "approved_scopes", &d.approved_scopes, |s| {
        if !s.is_empty() && !s.contains(char::is_whitespace) {
            Ok(())
        } else {
            Err(format!(
                "{s:?} is not one scope (empty, or contains white space)"
            ))
        }
    })?;
    each(at, "allowed_origins", &d.allowed_origins, origin)?;
    if d.max_token_lifetime_seconds == Some(0) {
        return Err((
            format!("{at}.max_token_lifetime_seconds"),
            "must be at least 1".into(),
        ));
    }
    Ok(())
}

/// An origin is `scheme://host[:port]`: no path, query, fragment or user.
fn origin(s: &str) -> Result<(), String> {
    let u = url::Url::parse(s).map_err(|e| format!("{s:?} is not an origin: {e}"))?;
    let bare = u.path() == "/" && !s.ends_with('/');
    if !matches!(u.scheme(), "http" | "https")
        || u.host().is_none()
        || !bare
        || u.query().is_some()
        || u.fragment().is_some()
        || !u.username().is_empty()
    {
        return Err(format!(
            "{s:?} is not an origin (scheme://host[:port], nothing after)"
        ));
    }
    Ok(())
}

fn each(
    at: &str,
    key: &str,
    values: &Option<Vec<String>>,
    ok: impl Fn(&str) -> Result<(), String>,
) -> Result<(), Invalid> {
    for (i, v) in values.iter().flatten().enumerate() {
        ok(v).map_err(|m| (format!("{at}.{key}[{i}]"), m))?;
    }
    Ok(())
}

/// The published JSON Schema of the policy file.
pub const SCHEMA: &str = include_str!("../../docs/schemas/policy.schema.json");

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn root() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
    }

    fn schema_accepts(v: &Value) -> bool {
        let schema: Value = serde_json::from_str(SCHEMA).expect("schema is JSON");
        jsonschema::draft202012::new(&schema)
            .expect("schema compiles")
            .is_valid(v)
    }

    #[test]
    fn the_examples_load_alike_and_the_schema_accepts_them() {
        let t = Policy::load(&root().join("examples/policy/policy.toml")).expect("toml example");
        let j = Policy::load(&root().join("examples/policy/policy.json")).expect("json example");
        assert_eq!(t.doc, j.doc);
        let text =
            std::fs::read_to_string(root().join("examples/policy/policy.json")).expect("read");
        assert!(schema_accepts(&serde_json::from_str(&text).expect("json")));
    }

    #[test]
    fn the_schema_and_the_types_agree_on_every_key() {
        let full = json!({
            "approved_revisions": ["2026-07-28"],
            "approved_authorization_servers": ["https://auth.example"],
            "approved_scopes": ["mcp:tools"],
            "allowed_origins": ["https://app.example:8443"],
            "max_token_lifetime_seconds": 600
        });
        let mut endpoint = full.clone();
        endpoint["url"] = json!("https://mcp.example/mcp");
        let doc = json!({"all": full, "endpoint": [endpoint]});
        assert!(schema_accepts(&doc));
        let parsed: PolicyDoc = serde_json::from_value(doc.clone()).expect("types accept it");
        validate(&parsed).expect("valid");
        for (at, key) in [("all", "approved_revision"), ("all", "url")] {
            let mut bad = doc.clone();
            bad[at][key] = json!(["x"]);
            assert!(!schema_accepts(&bad), "{at}.{key}");
            let typed = serde_json::from_value::<PolicyDoc>(bad).map_err(|e| e.to_string());
            assert!(
                typed.map(|d| validate(&d).is_err()).unwrap_or(true),
                "{at}.{key}"
            );
        }
        let mut no_url = doc;
        no_url["endpoint"][0]
            .as_object_mut()
            .expect("object")
            .remove("url");
        assert!(!schema_accepts(&no_url));
    }

    fn load(name: &str, text: &str) -> Result<Policy, PolicyError> {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join(name);
        std::fs::write(&p, text).expect("write");
        Policy::load(&p)
    }

    const TOML: &str = r#"
[all]
approved_revisions = ["2025-11-25", "2026-07-28"]
allowed_origins = ["https://app.example.com"]
max_token_lifetime_seconds = 3600

[[endpoint]]
url = "https://mcp.example.com/mcp"
allowed_origins = ["https://console.example.com", "http://localhost:3000"]
approved_scopes = ["mcp:tools"]
"#;

    #[test]
    fn endpoint_overrides_all_key_by_key() {
        let p = load("policy.toml", TOML).expect("valid");
        assert_eq!(p.sha256.len(), 64);
        let e = p.for_endpoint("https://mcp.example.com/mcp");
        assert_eq!(
            e.allowed_origins.as_deref(),
            Some(
                &[
                    "https://console.example.com".to_string(),
                    "http://localhost:3000".into()
                ][..]
            )
        );
        assert_eq!(
            e.max_token_lifetime_seconds,
            Some(3600),
            "inherited from [all]"
        );
        assert_eq!(
            e.approved_scopes.as_deref(),
            Some(&["mcp:tools".to_string()][..])
        );
        let other = p.for_endpoint("https://other.example/mcp");
        assert_eq!(other, p.doc.all);
    }

    #[test]
    fn json_reads_the_same() {
        let json = r#"{"all": {"approved_revisions": ["2025-11-25", "2026-07-28"],
            "allowed_origins": ["https://app.example.com"], "max_token_lifetime_seconds": 3600},
            "endpoint": [{"url": "https://mcp.example.com/mcp",
            "allowed_origins": ["https://console.example.com", "http://localhost:3000"],
            "approved_scopes": ["mcp:tools"]}]}"#;
        let j = load("policy.json", json).expect("valid json");
        let t = load("policy.toml", TOML).expect("valid toml");
        assert_eq!(j.doc, t.doc);
    }

    #[test]
    fn errors_name_the_key() {
        let cases = [
            ("[all]\napproved_revison = []\n", "approved_revison"),
            (
                "[all]\napproved_revisions = [\"2025-11-25\", \"2024-13-01\"]\n",
                "all.approved_revisions[1]",
            ),
            (
                "[all]\nallowed_origins = [\"https://a.example/path\"]\n",
                "all.allowed_origins[0]",
            ),
            (
                "[all]\nmax_token_lifetime_seconds = 0\n",
                "all.max_token_lifetime_seconds",
            ),
            (
                "[all]\nmax_token_lifetime_seconds = \"1h\"\n",
                "max_token_lifetime_seconds",
            ),
            ("[[endpoint]]\nurl = \"ftp://x\"\n", "endpoint[0].url"),
            ("[[endpoint]]\nallowed_origins = []\n", "endpoint[0].url"),
            ("[all]\nurl = \"https://a.example/mcp\"\n", "all.url"),
            (
                "[all]\napproved_scopes = [\"a b\"]\n",
                "all.approved_scopes[0]",
            ),
            (
                "[all]\napproved_authorization_servers = [\"auth.example\"]\n",
                "all.approved_authorization_servers[0]",
            ),
        ];
        for (text, key) in cases {
            let e = load("p.toml", text).expect_err(text).to_string();
            assert!(e.starts_with("--policy "), "{e}");
            assert!(e.contains(key), "{text:?}: {e}");
            assert!(!e.contains('\n'), "one line: {e}");
        }
        let e = load("p.json", "{\"all\": {\"x\": 1}}")
            .expect_err("unknown key")
            .to_string();
        assert!(e.contains("unknown field `x`"), "{e}");
        let e = load("p.toml", "[all]\n\napproved_revison = []\n")
            .expect_err("line")
            .to_string();
        assert!(
            e.contains("line 3 (`approved_revison = []`): unknown field `approved_revison`"),
            "{e}"
        );
    }
}
