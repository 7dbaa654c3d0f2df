//! `--from-config`: collect every server that MCP client configuration files name
//! ([`super::client_config`]), each as if it were given as a target: a remote entry as
//! its URL, a stdio entry as a `--stdio` target (docs/collector.md, "From client
//! configurations").
//!
//! * A stdio entry runs only with the operator's consent: `--allow-exec NAME` (or
//!   `all`), or a yes to the question asked on stderr when stdin and stderr are a
//!   terminal. Without it the entry is skipped, with one line saying how to allow it.
//! * Placeholders are resolved from the operator's environment: `${env:VAR}`, `${VAR}`,
//!   `${VAR:-default}` (Claude Code), `$VAR` (Gemini CLI), `${userHome}` and
//!   `${workspaceFolder}` (the working directory). `${input:ID}` (VS Code asks the user)
//!   and unset variables stay unresolved: the entry is collected without the value (the
//!   header or variable is left out, the argument's placeholder is dropped) and the
//!   bundle says which were unresolved.
//! * Credentials (secret-looking header and environment values, sensitive URL query
//!   parameters) are given to the server only with `--use-config-credentials`, each
//!   registered with the run's redactor first; without it the entry is collected without
//!   them and the bundle records that a credential was configured but not supplied.
//! * An entry that cannot be collected is one line on stderr naming the file, the entry
//!   and the reason; the others go on.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};

use mcp_probe_schema::bundle::{fingerprint, sha256};
use mcp_probe_schema::model::{ConfigSource, ConfigValue, Header};

use super::cli::{Printer, UsageError};
use super::client_config::{
    classify, known_locations, looks_like_token, parse, sensitive_name, Client, Entry, Inventory,
    Problem, Transport,
};
use super::stdio::StdioPlan;
use super::target::Target;

/// What `--from-config` needs from the command line.
#[derive(Debug, Clone, Default)]
pub struct FromConfig {
    /// FILE, or `auto`.
    pub source: String,
    /// `--allow-exec`: entry names, or `all`.
    pub allow_exec: Vec<String>,
    /// `--use-config-credentials`.
    pub use_credentials: bool,
}

/// One entry made a target: what the run does differently for it.
#[derive(Debug, Clone)]
pub struct Configured {
    /// The bundle's `target.source`.
    pub source: ConfigSource,
    /// stdio entries: the launch.
    pub stdio: Option<StdioPlan>,
    /// Remote entries: the bearer token of an `Authorization: Bearer` header
    /// (`--use-config-credentials` only).
    pub token: Option<String>,
    /// Remote entries: the other headers sent to the target's origin.
    pub headers: Vec<Header>,
}

/// The environment and places placeholders are resolved from.
pub struct Env<'a> {
    /// A variable of the operator's environment.
    pub var: &'a dyn Fn(&str) -> Option<String>,
    /// The home directory (`${userHome}`).
    pub home: Option<PathBuf>,
    /// The working directory (`${workspaceFolder}`).
    pub cwd: PathBuf,
}

/// Asks the operator whether a stdio entry may run: `None` when nobody can be asked
/// (stdin or stderr is not a terminal).
pub type Ask<'a> = &'a mut dyn FnMut(&str) -> Option<bool>;

/// The y/N question on stderr when stdin and stderr are terminals (default No).
pub fn terminal_ask(printer: &Printer) -> impl FnMut(&str) -> Option<bool> + '_ {
    move |question: &str| {
        if !(std::io::stdin().is_terminal() && std::io::stderr().is_terminal()) {
            return None;
        }
        {
            let mut e = std::io::stderr().lock();
            let _ = write!(e, "{} [y/N] ", printer.safe(question));
            let _ = e.flush();
        }
        let mut answer = String::new();
        if std::io::stdin().lock().read_line(&mut answer).is_err() {
            return Some(false);
        }
        Some(matches!(
            answer.trim().to_ascii_lowercase().as_str(),
            "y" | "yes"
        ))
    }
}

/// Read the configuration files of `fc.source`, and make each entry a target, or say
/// on stderr why it cannot be one. `Err` when a file named explicitly cannot be read or
/// parsed, or no entry is left to collect.
pub fn plan_targets(
    fc: &FromConfig,
    env: &Env<'_>,
    printer: &Printer,
    ask: Ask<'_>,
) -> Result<Vec<(Target, Configured)>, UsageError> {
    let mut inv = Inventory::default();
    let mut hashes: Vec<(PathBuf, String)> = Vec::new();
    let mut read_one = |path: &Path, client, scope, inv: &mut Inventory| -> Result<(), String> {
        let bytes = std::fs::read(path).map_err(|e| format!("cannot read: {e}"))?;
        let text = String::from_utf8(bytes.clone()).map_err(|_| "not UTF-8 text".to_string())?;
        parse(&text, path, client, scope, inv)?;
        hashes.push((path.to_path_buf(), hex::encode(sha256(&bytes))));
        Ok(())
    };
    if fc.source == "auto" {
        let config_home = (env.var)("XDG_CONFIG_HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from);
        for (path, client, scope) in
            known_locations(env.home.as_deref(), config_home.as_deref(), &env.cwd)
        {
            if !path.is_file() {
                continue;
            }
            if let Err(reason) = read_one(&path, client, scope, &mut inv) {
                inv.problems.push(Problem {
                    file: path,
                    entry: None,
                    reason,
                });
            }
        }
    } else {
        let path = PathBuf::from(&fc.source);
        let (client, scope) = classify(&path, env.home.as_deref());
        if let Err(reason) = read_one(&path, client, scope, &mut inv) {
            return Err(UsageError::Invalid {
                path,
                reason: format!("--from-config: {reason}"),
            });
        }
    }
    for p in &inv.problems {
        printer.warn(&format!("{p}: not collected"));
    }
    let unknown: Vec<&String> = fc
        .allow_exec
        .iter()
        .filter(|n| *n != "all" && !inv.entries.iter().any(|e| &e.name == *n))
        .collect();
    for n in unknown {
        printer.warn(&format!(
            "--allow-exec {n:?}: no entry of that name in the configuration file(s)"
        ));
    }
    let mut out = Vec::new();
    let total = inv.entries.len();
    let mut skipped = inv.problems.len();
    for e in &inv.entries {
        let sha = hashes
            .iter()
            .find(|(p, _)| *p == e.file)
            .map(|(_, h)| h.clone())
            .unwrap_or_default();
        match prepare(e, &sha, fc, env, printer, &mut *ask) {
            Ok(x) => out.push(x),
            Err(reason) => {
                skipped += 1;
                printer.warn(&format!(
                    "{}",
                    Problem {
                        file: e.file.clone(),
                        entry: Some(e.name.clone()),
                        reason,
                    }
                ));
            }
        }
    }
    printer.progress(&format!(
        "--from-config: {} file(s), {total} server entr{}: {} to collect, {skipped} skipped",
        inv.files_read,
        if total == 1 { "y" } else { "ies" },
        out.len()
    ));
    if out.is_empty() {
        return Err(UsageError::FromConfig(format!(
            "no entry to collect ({} file(s) read, {total} entr{}, {skipped} skipped; each is named above)",
            inv.files_read,
            if total == 1 { "y" } else { "ies" },
        )));
    }
    Ok(out)
}

/// A placeholder-resolved text, and the placeholders that could not be resolved.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Resolved {
    /// The text, each unresolved placeholder dropped.
    pub text: String,
    /// The unresolved placeholders as written.
    pub unresolved: Vec<String>,
    /// The text held a placeholder.
    pub any: bool,
}

/// Resolve the placeholders in `text` (module docs); `$VAR` only for Gemini CLI files.
pub fn resolve(text: &str, client: Client, env: &Env<'_>) -> Resolved {
    let mut r = Resolved::default();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    let var = |name: &str| (env.var)(name).filter(|v| !v.is_empty());
    while i < chars.len() {
        let c = chars[i];
        if c == '$' && chars.get(i + 1) == Some(&'{') {
            if let Some(len) = chars[i + 2..].iter().position(|c| *c == '}') {
                let inner: String = chars[i + 2..i + 2 + len].iter().collect();
                let written: String = chars[i..i + 3 + len].iter().collect();
                r.any = true;
                let value = if let Some(v) = inner.strip_prefix("env:") {
                    var(v)
                } else if inner.starts_with("input:") {
                    None
                } else if inner == "userHome" {
                    env.home.as_ref().map(|h| h.display().to_string())
                } else if inner == "workspaceFolder" {
                    Some(env.cwd.display().to_string())
                } else if let Some((v, default)) = inner.split_once(":-") {
                    var(v).or_else(|| Some(default.to_string()))
                } else if valid_name(&inner) {
                    var(&inner)
                } else {
                    None
                };
                match value {
                    Some(v) => r.text.push_str(&v),
                    None => r.unresolved.push(written),
                }
                i += 3 + len;
                continue;
            }
        }
        if c == '$' && client == Client::Gemini {
            let len = chars[i + 1..]
                .iter()
                .take_while(|c| c.is_ascii_alphanumeric() || **c == '_')
                .count();
            let name: String = chars[i + 1..i + 1 + len].iter().collect();
            if len > 0 && valid_name(&name) {
                r.any = true;
                match var(&name) {
                    Some(v) => r.text.push_str(&v),
                    None => r.unresolved.push(format!("${name}")),
                }
                i += 1 + len;
                continue;
            }
        }
        r.text.push(c);
        i += 1;
    }
    r
}

fn valid_name(n: &str) -> bool {
    !n.is_empty()
        && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !n.starts_with(|c: char| c.is_ascii_digit())
}

/// One entry as a target, or why it cannot be one.
fn prepare(
    e: &Entry,
    file_sha256: &str,
    fc: &FromConfig,
    env: &Env<'_>,
    printer: &Printer,
    ask: Ask<'_>,
) -> Result<(Target, Configured), String> {
    if e.disabled {
        return Err("disabled in the file: not collected".into());
    }
    let mut source = ConfigSource {
        client: e.client.name().into(),
        scope: e.scope.name().into(),
        file: std::fs::canonicalize(&e.file)
            .unwrap_or_else(|_| e.file.clone())
            .display()
            .to_string(),
        file_sha256: file_sha256.into(),
        project: e.project.clone(),
        entry: e.name.clone(),
        transport: e.transport.name().into(),
        ..Default::default()
    };
    let redactor = printer.redactor();
    match e.transport {
        Transport::Stdio => {
            let command = e.raw.command.clone().unwrap_or_default();
            let mut argv = Vec::new();
            for (i, a) in std::iter::once(&command).chain(&e.raw.args).enumerate() {
                let r = resolve(a, e.client, env);
                let at = if i == 0 {
                    "command".to_string()
                } else {
                    format!("args[{}]", i - 1)
                };
                if i == 0 && !r.unresolved.is_empty() {
                    return Err(format!(
                        "the command holds a placeholder that cannot be resolved: {}",
                        r.unresolved.join(", ")
                    ));
                }
                source
                    .unresolved
                    .extend(r.unresolved.iter().map(|u| format!("{at}: {u}")));
                argv.push(r.text);
            }
            let mut pairs = Vec::new();
            for (name, value) in &e.raw.env {
                let r = resolve(value, e.client, env);
                let secret_like = sensitive_name(name) || looks_like_token(&r.text);
                let resolved = r.unresolved.is_empty();
                if secret_like && !r.text.is_empty() {
                    // Registered whether or not it is supplied: a value in the file
                    // never reaches the bundle, stdout or stderr in clear.
                    redactor.add_given_secret(r.text.as_bytes(), "config-environment-value");
                }
                if secret_like && resolved {
                    source.credential_configured = true;
                }
                let supplied = resolved && (!secret_like || fc.use_credentials);
                if supplied {
                    pairs.push((name.clone(), r.text.clone()));
                }
                source
                    .unresolved
                    .extend(r.unresolved.iter().map(|u| format!("env.{name}: {u}")));
                source.env.push(ConfigValue {
                    name: name.clone(),
                    written: if r.any { "reference" } else { "literal" }.into(),
                    fingerprint: resolved.then(|| fingerprint(r.text.as_bytes())),
                    secret_like,
                    supplied,
                });
            }
            source.credential_supplied = source.credential_configured && fc.use_credentials;
            let (sp, target) =
                super::stdio::plan_launch(&argv, pairs, redactor).map_err(|e| e.to_string())?;
            let line = sp.shown.argv.join(" ");
            let allowed = fc.allow_exec.iter().any(|n| n == "all" || *n == e.name);
            source.consent = if allowed {
                Some("allow-exec".into())
            } else {
                let names = sp.env_names();
                let question = format!(
                    "{}: entry {:?} runs `{line}`{}. Run it?",
                    e.file.display(),
                    e.name,
                    if names.is_empty() {
                        String::new()
                    } else {
                        format!(" with {}", names.join(", "))
                    }
                );
                match ask(&question) {
                    Some(true) => Some("prompt".into()),
                    Some(false) => return Err("not run: the operator answered no".into()),
                    None => {
                        return Err(format!(
                            "not run: a stdio entry runs a command on this machine (`{line}`) only with consent: --allow-exec {} (or --allow-exec all)",
                            e.name
                        ))
                    }
                }
            };
            Ok((
                target,
                Configured {
                    source,
                    stdio: Some(sp),
                    token: None,
                    headers: Vec::new(),
                },
            ))
        }
        Transport::StreamableHttp | Transport::Sse => {
            let url = e.raw.url.clone().unwrap_or_default();
            let r = resolve(&url, e.client, env);
            if !r.unresolved.is_empty() {
                return Err(format!(
                    "the url holds a placeholder that cannot be resolved: {}",
                    r.unresolved.join(", ")
                ));
            }
            let (url, query_secrets) = split_query_secrets(&r.text);
            for s in &query_secrets {
                redactor.add_given_secret(s.as_bytes(), "config-url-credential");
            }
            let use_query = fc.use_credentials && !query_secrets.is_empty();
            let url = if use_query { r.text.clone() } else { url };
            if !query_secrets.is_empty() {
                source.credential_configured = true;
                source.credential_supplied = use_query;
            }
            let target = Target::parse(&url).map_err(|e| e.reason)?;
            let plain_remote = target.base_url.scheme() == "http" && !target.is_loopback();
            let mut token = None;
            let mut headers = Vec::new();
            let mut refused = Vec::new();
            for (name, value) in &e.raw.headers {
                let r = resolve(value, e.client, env);
                let resolved = r.unresolved.is_empty();
                let value = r.text.trim().to_string();
                let secret_like = super::net::is_sensitive(name)
                    || sensitive_name(name)
                    || looks_like_token(&value);
                if secret_like && !value.is_empty() {
                    redactor.add_given_secret(value.as_bytes(), &format!("config-header:{name}"));
                    if let Some(t) = bearer(&value) {
                        redactor.add_given_secret(t.as_bytes(), "config-bearer-token");
                    }
                }
                if secret_like && resolved {
                    source.credential_configured = true;
                }
                source
                    .unresolved
                    .extend(r.unresolved.iter().map(|u| format!("headers.{name}: {u}")));
                let lower = name.to_ascii_lowercase();
                let mut supplied = false;
                let bad_value = value.bytes().any(|b| (b < 0x20 && b != b'\t') || b == 0x7f);
                if resolved && !bad_value && (!secret_like || fc.use_credentials) {
                    if secret_like && plain_remote {
                        refused.push(format!(
                            "{name}: not sent to {} over plain http",
                            target.as_typed
                        ));
                    } else if lower == "authorization" {
                        match bearer(&value) {
                            Some(t) => {
                                token = Some(t.to_string());
                                supplied = true;
                            }
                            None => refused.push(format!(
                                "{name}: only a Bearer credential can be used (the probe controls Authorization)"
                            )),
                        }
                    } else if super::net::REFUSED_HEADERS.contains(&lower.as_str()) {
                        refused.push(format!(
                            "{name}: the probe sets or varies this header itself"
                        ));
                    } else if secret_like && value.len() < 6 {
                        refused.push(format!(
                            "{name}: a sensitive value must be at least 6 bytes so that it can be redacted"
                        ));
                    } else if !name.is_empty()
                        && !headers
                            .iter()
                            .any(|h: &Header| h.name.eq_ignore_ascii_case(name))
                    {
                        headers.push(Header::new(name, value.as_bytes().to_vec()));
                        supplied = true;
                    }
                }
                if secret_like && supplied {
                    source.credential_supplied = true;
                }
                source.headers.push(ConfigValue {
                    name: name.clone(),
                    written: if r.any { "reference" } else { "literal" }.into(),
                    fingerprint: resolved.then(|| fingerprint(value.as_bytes())),
                    secret_like,
                    supplied,
                });
            }
            for why in refused {
                printer.warn(&format!(
                    "{}: entry {:?}: header {why}",
                    e.file.display(),
                    e.name
                ));
            }
            if source.credential_configured && !fc.use_credentials {
                printer.notice(&format!(
                    "{}: entry {:?}: the configured credential is not used (--use-config-credentials uses it)",
                    e.file.display(),
                    e.name
                ));
            }
            Ok((
                target,
                Configured {
                    source,
                    stdio: None,
                    token,
                    headers,
                },
            ))
        }
    }
}

/// The token of `Bearer TOKEN` (any letter case of the scheme).
fn bearer(value: &str) -> Option<&str> {
    let (scheme, rest) = value.split_once(' ')?;
    (scheme.eq_ignore_ascii_case("bearer") && !rest.trim().is_empty()).then(|| rest.trim())
}

/// The URL without its sensitive query parameters, and their values.
fn split_query_secrets(u: &str) -> (String, Vec<String>) {
    let Some((head, rest)) = u.split_once('?') else {
        return (u.to_string(), Vec::new());
    };
    let (query, fragment) = match rest.split_once('#') {
        Some((q, f)) => (q, Some(f)),
        None => (rest, None),
    };
    let mut kept = Vec::new();
    let mut secrets = Vec::new();
    for p in query.split('&') {
        match p.split_once('=') {
            Some((n, v)) if sensitive_name(n) => secrets.push(v.to_string()),
            _ => kept.push(p),
        }
    }
    if secrets.is_empty() {
        return (u.to_string(), secrets);
    }
    let mut out = head.to_string();
    if !kept.is_empty() {
        out.push('?');
        out.push_str(&kept.join("&"));
    }
    if let Some(f) = fragment {
        out.push('#');
        out.push_str(f);
    }
    (out, secrets)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of<'a>(vars: &'a dyn Fn(&str) -> Option<String>) -> Env<'a> {
        Env {
            var: vars,
            home: Some(PathBuf::from("/home/u")),
            cwd: PathBuf::from("/src/p"),
        }
    }

    #[test]
    fn placeholders_resolve_from_the_environment_and_inputs_stay_unresolved() {
        let vars = |n: &str| match n {
            "TOKEN" => Some("t0k".to_string()),
            "EMPTY" => Some(String::new()),
            _ => None,
        };
        let env = env_of(&vars);
        let r = resolve("Bearer ${env:TOKEN}", Client::Vscode, &env);
        assert_eq!(r.text, "Bearer t0k");
        assert!(r.unresolved.is_empty() && r.any);
        let r = resolve("${TOKEN}/${MISSING}/${input:key}", Client::ClaudeCode, &env);
        assert_eq!(r.text, "t0k//");
        assert_eq!(r.unresolved, ["${MISSING}", "${input:key}"]);
        let r = resolve(
            "${EMPTY:-dflt} ${userHome} ${workspaceFolder}",
            Client::ClaudeCode,
            &env,
        );
        assert_eq!(r.text, "dflt /home/u /src/p");
        // `$VAR` is Gemini CLI's; elsewhere a dollar is a dollar.
        assert_eq!(resolve("$TOKEN", Client::Gemini, &env).text, "t0k");
        assert_eq!(resolve("$TOKEN", Client::Cursor, &env).text, "$TOKEN");
        assert!(!resolve("plain", Client::Cursor, &env).any);
    }

    #[test]
    fn sensitive_query_parameters_are_split_off() {
        assert_eq!(
            split_query_secrets("https://h/mcp?api_key=s3cret&v=1#f"),
            (
                "https://h/mcp?v=1#f".to_string(),
                vec!["s3cret".to_string()]
            )
        );
        assert_eq!(
            split_query_secrets("https://h/mcp?v=1"),
            ("https://h/mcp?v=1".to_string(), vec![])
        );
        assert_eq!(bearer("bearer  abc "), Some("abc"));
        assert_eq!(bearer("Basic abc"), None);
    }
}
