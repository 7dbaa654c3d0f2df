//! Target normalisation (docs/collector.md, "Pipeline per target").
//!
//! A bare domain becomes `https://domain`; a URL keeps its scheme. With no path (or
//! `/`) the endpoint candidates are `/mcp` then `/`; with a path, the URL as given is
//! the only candidate. Userinfo, fragments and schemes other than http(s) are refused
//! before any traffic, with an error naming the input.

use url::Url;

/// How a `--stdio` target's `as_typed` starts.
pub const STDIO_PREFIX: &str = "stdio: ";

/// A normalised target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// As typed.
    pub as_typed: String,
    /// `scheme://host[:port]`.
    pub base_url: Url,
    /// Endpoint candidates in order.
    pub candidates: Vec<Url>,
}

/// Why a target was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("invalid target {input:?}: {reason}")]
pub struct TargetError {
    /// The input as it may be shown: a `user:password@` in it is replaced by
    /// `<credentials>@` ([`shown_input`]), so the refusal of a credential in a URL does
    /// not print the credential.
    pub input: String,
    /// Why.
    pub reason: String,
}

/// `input` with the userinfo of its authority (`user[:password]@`) replaced by
/// `<credentials>@`; anything else as typed.
pub fn shown_input(input: &str) -> String {
    let start = input.find("://").map_or(0, |i| i + 3);
    let rest = &input[start..];
    let end = rest.find(['/', '?', '#', ' ']).unwrap_or(rest.len());
    match rest[..end].rfind('@') {
        Some(at) => format!("{}<credentials>{}", &input[..start], &rest[at..]),
        None => input.to_string(),
    }
}

impl Target {
    /// Parse one target.
    pub fn parse(input: &str) -> Result<Target, TargetError> {
        let err = |reason: &str| TargetError {
            input: shown_input(input),
            reason: reason.to_string(),
        };
        let t = input.trim();
        if t.is_empty() {
            return Err(err("empty"));
        }
        // The first problem in the input is the one named: a bad scheme, host or port
        // before a space is reported as such, not as the space.
        if let Some(at) = t.find(|c: char| c.is_whitespace() || c.is_control()) {
            if let Err(e) = Target::parse(&t[..at]) {
                return Err(err(&e.reason));
            }
            return Err(err("contains whitespace or control characters"));
        }
        let with_scheme = if t.contains("://") {
            t.to_string()
        } else {
            format!("https://{t}")
        };
        let url = Url::parse(&with_scheme).map_err(|e| err(&e.to_string()))?;
        if url.scheme() != "https" && url.scheme() != "http" {
            return Err(err(&format!(
                "scheme {:?} is not http or https",
                url.scheme()
            )));
        }
        if url.host().is_none() {
            return Err(err("no host"));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(err("credentials in the URL are refused (use --token-env)"));
        }
        if url.fragment().is_some() {
            return Err(err("a fragment has no meaning for an endpoint"));
        }
        let mut base = url.clone();
        base.set_path("");
        base.set_query(None);
        let candidates = if url.path() == "/" && url.query().is_none() {
            vec![
                base.join("/mcp").map_err(|e| err(&e.to_string()))?,
                base.join("/").map_err(|e| err(&e.to_string()))?,
            ]
        } else {
            vec![url.clone()]
        };
        Ok(Target {
            as_typed: input.to_string(),
            base_url: base,
            candidates,
        })
    }

    /// The `--stdio` target: typed as `stdio: ` and the command line as it may be
    /// recorded (credentials replaced by fingerprints); no HTTP candidate.
    pub fn stdio(shown_argv: &[String]) -> Target {
        Target {
            as_typed: format!("{STDIO_PREFIX}{}", shown_argv.join(" ")),
            base_url: Url::parse("stdio:").expect("a constant URL"),
            candidates: Vec::new(),
        }
    }

    /// True for a `--stdio` target.
    pub fn is_stdio(&self) -> bool {
        self.base_url.scheme() == "stdio"
    }

    /// The endpoint a stdio session records: `stdio:` and the program's file name.
    pub fn stdio_endpoint(&self) -> Url {
        let program = self
            .as_typed
            .strip_prefix(STDIO_PREFIX)
            .and_then(|c| c.split(' ').next())
            .and_then(|p| p.rsplit('/').next())
            .unwrap_or("server");
        Url::parse(&format!("stdio:{program}"))
            .unwrap_or_else(|_| Url::parse("stdio:server").expect("a constant URL"))
    }

    /// A file-name-safe slug of the target (`host_port_path`; `stdio_<program>`).
    pub fn slug(&self) -> String {
        let Some(u) = self.candidates.first() else {
            let e = self.stdio_endpoint();
            return format!("stdio_{}", e.path())
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '.' || c == '-' || c == '_' {
                        c
                    } else {
                        '_'
                    }
                })
                .take(80)
                .collect();
        };
        let mut s = u.host_str().unwrap_or("target").to_string();
        if let Some(p) = u.port() {
            s.push_str(&format!("_{p}"));
        }
        if self.candidates.len() == 1 && u.path() != "/" {
            s.push_str(&u.path().replace('/', "_"));
        }
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '.' || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .take(80)
            .collect()
    }

    /// True when the host is a loopback address literal or `localhost`
    /// ([`mcp_probe_schema::host::is_local_host`]: the reading for a gate that allows a
    /// credential over plain http, so `*.localhost` does not count).
    pub fn is_loopback(&self) -> bool {
        mcp_probe_schema::host::is_local_url(&self.base_url)
    }
}

/// Read a `--servers-file`: one target per line, `#` comments, blank lines ignored.
/// Each target comes with its line number (1-based), for errors naming `FILE:LINE`.
pub fn read_servers_file(text: &str) -> Vec<(usize, String)> {
    text.lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.split('#').next().unwrap_or("").trim()))
        .filter(|(_, l)| !l.is_empty())
        .map(|(n, l)| (n, l.to_string()))
        .collect()
}

/// De-duplicate, keeping the first occurrence.
pub fn dedup(targets: Vec<String>) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    targets
        .into_iter()
        .filter(|t| seen.insert(t.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_credential_in_a_refused_url_is_not_shown() {
        let e = Target::parse("https://user:hunter2secret@127.0.0.1:2/mcp").unwrap_err();
        assert_eq!(e.input, "https://<credentials>@127.0.0.1:2/mcp");
        assert!(!e.to_string().contains("hunter2secret"), "{e}");
        assert_eq!(
            shown_input("ftp://a:b@x/p@q two"),
            "ftp://<credentials>@x/p@q two"
        );
        assert_eq!(shown_input("mcp.example.com/mcp"), "mcp.example.com/mcp");
    }

    #[test]
    fn domain_gets_https_and_two_candidates() {
        let t = Target::parse("mcp.example.com").unwrap();
        assert_eq!(t.base_url.as_str(), "https://mcp.example.com/");
        let c: Vec<&str> = t.candidates.iter().map(Url::as_str).collect();
        assert_eq!(
            c,
            ["https://mcp.example.com/mcp", "https://mcp.example.com/"]
        );
    }

    #[test]
    fn explicit_path_is_the_only_candidate() {
        let t = Target::parse("http://127.0.0.1:8080/v1/mcp").unwrap();
        assert_eq!(t.candidates.len(), 1);
        assert_eq!(t.candidates[0].as_str(), "http://127.0.0.1:8080/v1/mcp");
        assert_eq!(t.slug(), "127.0.0.1_8080_v1_mcp");
        assert!(t.is_loopback());
        // schema::host::is_local_host: a trailing dot counts; `*.localhost` does not (the
        // --token-env plain-http gate must not trust a name a resolver may send to DNS).
        assert!(Target::parse("http://localhost.:1/mcp")
            .unwrap()
            .is_loopback());
        assert!(!Target::parse("http://mcp.localhost:8080/mcp")
            .unwrap()
            .is_loopback());
        assert!(!Target::parse("http://localhost.example/mcp")
            .unwrap()
            .is_loopback());
    }

    #[test]
    fn bad_inputs_are_refused_with_the_input_named() {
        for bad in [
            "",
            "ftp://x",
            "https://user:pw@h/",
            "a b",
            "http://",
            "https://h/#frag",
        ] {
            let e = Target::parse(bad).unwrap_err();
            assert_eq!(e.input, shown_input(bad));
            assert!(e.to_string().contains("invalid target"), "{e}");
        }
        // The first problem is named: the scheme before the space, not the space.
        for (bad, reason) in [
            ("ftp://x.example/a b", "scheme \"ftp\" is not http or https"),
            ("http://h:99999/a b", "invalid port number"),
            ("http://h/a b", "contains whitespace or control characters"),
        ] {
            assert_eq!(Target::parse(bad).unwrap_err().reason, reason, "{bad}");
        }
    }

    #[test]
    fn servers_file_comments_and_dedup() {
        let lines = read_servers_file("# fleet\na.example\n\nb.example # second\na.example\n");
        assert_eq!(lines.iter().map(|(n, _)| *n).collect::<Vec<_>>(), [2, 4, 5]);
        let t = dedup(lines.into_iter().map(|(_, t)| t).collect());
        assert_eq!(t, ["a.example", "b.example"]);
    }
}
