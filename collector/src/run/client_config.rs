//! `--list-config`: the MCP servers that MCP client configuration files name (Claude
//! Desktop, Claude Code, Cursor, Windsurf, Kiro, VS Code, OpenCode, Gemini CLI), read
//! without contacting or running anything (docs/collector.md, "From client
//! configurations").
//!
//! Files are JSON, or JSONC as VS Code and Cursor write them (comments, trailing
//! commas). Secret-looking values (header and environment values, secret arguments,
//! sensitive URL query parameters) appear only as fingerprints
//! ([`mcp_probe_schema::bundle::fingerprint`]); `${env:VAR}`, `${VAR}` and `${input:ID}`
//! placeholders are references, shown as written.

use std::path::{Path, PathBuf};

use mcp_probe_schema::bundle::fingerprint;
use serde::Serialize;
use serde_json::{Map, Value};

use super::cli::{ExitStatus, Printer};
use super::flags::Format;

/// The client a configuration file belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Client {
    /// Claude Desktop (`claude_desktop_config.json`).
    ClaudeDesktop,
    /// Claude Code (`~/.claude.json`, a project's `.mcp.json`).
    ClaudeCode,
    /// Cursor (`~/.cursor/mcp.json`, `.cursor/mcp.json`).
    Cursor,
    /// Windsurf (`~/.codeium/windsurf/mcp_config.json`).
    Windsurf,
    /// Kiro (`~/.kiro/settings/mcp.json`).
    Kiro,
    /// VS Code (`.vscode/mcp.json`, the user `mcp.json` and `settings.json`).
    Vscode,
    /// OpenCode (`opencode.json`).
    Opencode,
    /// Gemini CLI (`~/.gemini/settings.json`).
    Gemini,
    /// A file of none of the known names, read by its contents.
    Unknown,
}

impl Client {
    /// The name in the table and the JSON output.
    pub fn name(self) -> &'static str {
        match self {
            Client::ClaudeDesktop => "claude-desktop",
            Client::ClaudeCode => "claude-code",
            Client::Cursor => "cursor",
            Client::Windsurf => "windsurf",
            Client::Kiro => "kiro",
            Client::Vscode => "vscode",
            Client::Opencode => "opencode",
            Client::Gemini => "gemini",
            Client::Unknown => "unknown",
        }
    }
}

/// Where an entry applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scope {
    /// The user's own configuration, every project.
    User,
    /// A project's file, shared with the project.
    Project,
    /// One project, kept in the user's file (Claude Code's `projects.<path>`).
    Local,
}

impl Scope {
    /// The name in the table and the JSON output.
    pub fn name(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Project => "project",
            Scope::Local => "local",
        }
    }
}

/// How the client reaches the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Transport {
    /// Streamable HTTP.
    #[serde(rename = "streamable-http")]
    StreamableHttp,
    /// The legacy HTTP+SSE transport.
    #[serde(rename = "sse")]
    Sse,
    /// A local process over stdin and stdout.
    #[serde(rename = "stdio")]
    Stdio,
}

impl Transport {
    /// The name in the table and the JSON output.
    pub fn name(self) -> &'static str {
        match self {
            Transport::StreamableHttp => "streamable-http",
            Transport::Sse => "sse",
            Transport::Stdio => "stdio",
        }
    }
}

/// A named value (an environment variable, a header): the value as written when it is a
/// placeholder reference, else its fingerprint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Named {
    /// The variable's or header's name.
    pub name: String,
    /// `redacted:sha256:<hex>`, or the placeholder as written.
    pub value: String,
    /// The value is a placeholder (`${env:VAR}`, `${VAR}`, `${input:ID}`), not a secret.
    pub reference: bool,
}

/// One server entry of one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Entry {
    /// The client whose file it is.
    pub client: Client,
    /// Where it applies.
    pub scope: Scope,
    /// The file.
    pub file: PathBuf,
    /// For [`Scope::Local`]: the project path it is kept under.
    pub project: Option<String>,
    /// The entry's name in the file.
    pub name: String,
    /// How the client reaches it.
    pub transport: Transport,
    /// Remote servers: the URL (sensitive query values fingerprinted).
    pub url: Option<String>,
    /// Local servers: the command.
    pub command: Option<String>,
    /// Local servers: the arguments (secret-looking ones fingerprinted).
    pub args: Vec<String>,
    /// The environment variables the client sets.
    pub env: Vec<Named>,
    /// The headers the client sends.
    pub headers: Vec<Named>,
    /// The file marks the entry disabled.
    pub disabled: bool,
    /// The values as written, for `--from-config` (never serialized or printed).
    #[serde(skip)]
    pub raw: Raw,
}

/// An entry's values as the file writes them, secrets included: what `--from-config`
/// launches or connects with. Its `Debug` shows no value.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Raw {
    /// The URL.
    pub url: Option<String>,
    /// The command.
    pub command: Option<String>,
    /// The arguments.
    pub args: Vec<String>,
    /// The environment variables, in file order.
    pub env: Vec<(String, String)>,
    /// The headers, in file order.
    pub headers: Vec<(String, String)>,
}

impl std::fmt::Debug for Raw {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Raw({} arg(s), {} env, {} header(s))",
            self.args.len(),
            self.env.len(),
            self.headers.len()
        )
    }
}

impl Entry {
    /// The URL, or the command with its arguments.
    pub fn target(&self) -> String {
        match (&self.url, &self.command) {
            (Some(u), _) => u.clone(),
            (None, Some(c)) => std::iter::once(c)
                .chain(&self.args)
                .map(|a| quoted(a))
                .collect::<Vec<_>>()
                .join(" "),
            (None, None) => String::new(),
        }
    }
}

/// An argument as a shell would need it: in single quotes when it is empty or holds
/// whitespace or quotes.
fn quoted(a: &str) -> String {
    if a.is_empty() || a.contains(|c: char| c.is_whitespace() || c == '\'' || c == '"') {
        format!("'{}'", a.replace('\'', "'\\''"))
    } else {
        a.to_string()
    }
}

/// A problem with one file or one entry; the rest go on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The file.
    pub file: PathBuf,
    /// The entry, when the problem is one entry's.
    pub entry: Option<String>,
    /// Why.
    pub reason: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.entry {
            Some(e) => write!(f, "{}: entry {e:?}: {}", self.file.display(), self.reason),
            None => write!(f, "{}: {}", self.file.display(), self.reason),
        }
    }
}

/// What the files held.
#[derive(Debug, Default)]
pub struct Inventory {
    /// Every entry, in file order.
    pub entries: Vec<Entry>,
    /// Files that were read and parsed.
    pub files_read: usize,
    /// Unparsable files and entries that were skipped.
    pub problems: Vec<Problem>,
}

/// The well-known configuration files for the user `home` and the project `cwd`, with
/// their client and scope (macOS paths on macOS, Linux paths elsewhere); `config_home`
/// is `$XDG_CONFIG_HOME` when set (Linux's Claude Desktop and VS Code, and OpenCode, keep
/// their files under it; `~/.config` without it).
pub fn known_locations(
    home: Option<&Path>,
    config_home: Option<&Path>,
    cwd: &Path,
) -> Vec<(PathBuf, Client, Scope)> {
    let mut out = Vec::new();
    if let Some(h) = home {
        let user = |p: PathBuf, c| (p, c, Scope::User);
        out.push(user(h.join(".claude.json"), Client::ClaudeCode));
        out.push(user(h.join(".cursor/mcp.json"), Client::Cursor));
        out.push(user(
            h.join(".codeium/windsurf/mcp_config.json"),
            Client::Windsurf,
        ));
        out.push(user(h.join(".kiro/settings/mcp.json"), Client::Kiro));
        out.push(user(h.join(".gemini/settings.json"), Client::Gemini));
        if cfg!(target_os = "macos") {
            let support = h.join("Library/Application Support");
            out.push(user(
                support.join("Claude/claude_desktop_config.json"),
                Client::ClaudeDesktop,
            ));
            out.push(user(support.join("Code/User/mcp.json"), Client::Vscode));
            out.push(user(
                support.join("Code/User/settings.json"),
                Client::Vscode,
            ));
        } else {
            let config = config_home
                .map(Path::to_path_buf)
                .unwrap_or_else(|| h.join(".config"));
            out.push(user(
                config.join("Claude/claude_desktop_config.json"),
                Client::ClaudeDesktop,
            ));
            out.push(user(config.join("Code/User/mcp.json"), Client::Vscode));
            out.push(user(config.join("Code/User/settings.json"), Client::Vscode));
        }
        // OpenCode follows the XDG layout on macOS too.
        let config = config_home
            .map(Path::to_path_buf)
            .unwrap_or_else(|| h.join(".config"));
        out.push(user(
            config.join("opencode/opencode.json"),
            Client::Opencode,
        ));
    }
    let project = |p: &str, c| (cwd.join(p), c, Scope::Project);
    out.push(project(".mcp.json", Client::ClaudeCode));
    out.push(project(".cursor/mcp.json", Client::Cursor));
    out.push(project(".vscode/mcp.json", Client::Vscode));
    out.push(project("opencode.json", Client::Opencode));
    out.push(project(".gemini/settings.json", Client::Gemini));
    // The working directory may be the home directory: one file, read once (as the
    // user's).
    let mut seen = std::collections::BTreeSet::new();
    out.retain(|(p, _, _)| seen.insert(p.clone()));
    out
}

/// The client and scope of a file named on the command line, from its path.
pub fn classify(path: &Path, home: Option<&Path>) -> (Client, Scope) {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let parent = path.parent();
    let parent_name = parent
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // A `.cursor`, `.gemini` or `.kiro` folder directly in the home directory is the
    // user's; elsewhere a project's.
    let scope_of = |dot_dir: Option<&Path>| match (dot_dir.and_then(Path::parent), home) {
        (Some(d), Some(h)) if d == h => Scope::User,
        _ => Scope::Project,
    };
    let text = path.to_string_lossy().replace('\\', "/");
    match (name.as_str(), parent_name.as_str()) {
        (".claude.json", _) => (Client::ClaudeCode, Scope::User),
        (".mcp.json", _) => (Client::ClaudeCode, Scope::Project),
        ("claude_desktop_config.json", _) => (Client::ClaudeDesktop, Scope::User),
        ("mcp_config.json", _) => (Client::Windsurf, Scope::User),
        ("mcp.json", ".cursor") => (Client::Cursor, scope_of(parent)),
        ("mcp.json", ".vscode") => (Client::Vscode, Scope::Project),
        ("mcp.json", "settings") if text.contains("/.kiro/") || text.starts_with(".kiro/") => {
            (Client::Kiro, scope_of(parent.and_then(Path::parent)))
        }
        ("mcp.json" | "settings.json", "User") => (Client::Vscode, Scope::User),
        ("settings.json", ".gemini") => (Client::Gemini, scope_of(parent)),
        ("opencode.json" | "opencode.jsonc", _) => {
            if text.contains("/.config/opencode/") {
                (Client::Opencode, Scope::User)
            } else {
                (Client::Opencode, Scope::Project)
            }
        }
        _ => (Client::Unknown, Scope::User),
    }
}

/// Read one file into `inv`: `Err` (the reason) when it cannot be read or parsed.
pub fn read_file(
    path: &Path,
    client: Client,
    scope: Scope,
    inv: &mut Inventory,
) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read: {e}"))?;
    parse(&text, path, client, scope, inv)
}

/// Parse one file's text into `inv`: `Err` (the reason) when it is not a JSON object.
pub fn parse(
    text: &str,
    path: &Path,
    client: Client,
    scope: Scope,
    inv: &mut Inventory,
) -> Result<(), String> {
    let clean = strip_jsonc(text.trim_start_matches('\u{feff}'));
    let doc: Value =
        serde_json::from_str(&clean).map_err(|e| format!("not JSON (or JSONC): {e}"))?;
    let Value::Object(doc) = doc else {
        return Err("not a JSON object".into());
    };
    inv.files_read += 1;
    let file = path.to_path_buf();
    let mut ctx = Ctx {
        client,
        scope,
        file: &file,
        project: None,
        inv,
    };
    if let Some(servers) = doc.get("mcpServers") {
        ctx.servers(servers, "mcpServers");
    }
    // VS Code's mcp.json.
    if let Some(servers) = doc.get("servers") {
        ctx.servers(servers, "servers");
    }
    // VS Code's settings.json: `"mcp": {"servers": ...}` or the dotted `"mcp.servers"`.
    if let Some(servers) = doc.get("mcp.servers") {
        ctx.servers(servers, "mcp.servers");
    }
    if let Some(mcp) = doc.get("mcp") {
        match mcp.get("servers") {
            Some(servers) => ctx.servers(servers, "mcp.servers"),
            // OpenCode's `mcp.<name>`.
            None => ctx.servers(mcp, "mcp"),
        }
    }
    // Claude Code's `projects.<path>.mcpServers` (local scope).
    if let Some(Value::Object(projects)) = doc.get("projects") {
        for (project, p) in projects {
            if let Some(servers) = p.get("mcpServers") {
                let mut local = Ctx {
                    client: ctx.client,
                    scope: Scope::Local,
                    file: &file,
                    project: Some(project.clone()),
                    inv: ctx.inv,
                };
                local.servers(servers, "mcpServers");
            }
        }
    }
    Ok(())
}

struct Ctx<'a> {
    client: Client,
    scope: Scope,
    file: &'a PathBuf,
    project: Option<String>,
    inv: &'a mut Inventory,
}

impl Ctx<'_> {
    fn problem(&mut self, entry: Option<&str>, reason: String) {
        self.inv.problems.push(Problem {
            file: self.file.clone(),
            entry: entry.map(str::to_string),
            reason,
        });
    }

    fn servers(&mut self, servers: &Value, key: &str) {
        if servers.is_null() {
            return;
        }
        let Value::Object(map) = servers else {
            self.problem(None, format!("{key} is not an object"));
            return;
        };
        for (name, v) in map {
            match self.entry(name, v) {
                Ok(e) => self.inv.entries.push(e),
                Err(reason) => self.problem(Some(name), reason),
            }
        }
    }

    fn entry(&self, name: &str, v: &Value) -> Result<Entry, String> {
        let Value::Object(o) = v else {
            return Err("not an object".into());
        };
        let kind = match (o.get("type"), o.get("transport")) {
            (Some(t), _) | (None, Some(t)) => Some(
                t.as_str()
                    .ok_or_else(|| "type is not a string".to_string())?
                    .to_string(),
            ),
            _ => None,
        };
        let url = ["httpUrl", "url", "serverUrl"]
            .iter()
            .find_map(|k| o.get(*k).map(|u| (*k, u)));
        let url = match url {
            Some((k, u)) => Some((
                k,
                u.as_str()
                    .ok_or_else(|| format!("{k} is not a string"))?
                    .to_string(),
            )),
            None => None,
        };
        let (command, mut args) = command_of(o)?;
        let transport = match kind.as_deref() {
            Some("http" | "streamable-http" | "streamableHttp" | "streamable_http") => {
                Transport::StreamableHttp
            }
            Some("sse") => Transport::Sse,
            Some("stdio" | "local") => Transport::Stdio,
            Some("remote") => Transport::StreamableHttp,
            Some(other) => return Err(format!("unknown type {other:?}")),
            None => match (&url, &command) {
                (Some(("httpUrl", _)), _) => Transport::StreamableHttp,
                // Gemini CLI's `url` is the SSE transport; everyone else's Streamable HTTP.
                (Some(("url", _)), _) if self.client == Client::Gemini => Transport::Sse,
                (Some(_), _) => Transport::StreamableHttp,
                (None, Some(_)) => Transport::Stdio,
                (None, None) => return Err("neither a url nor a command".into()),
            },
        };
        let raw_url = url.as_ref().map(|(_, u)| u.clone());
        let (url, command) = match transport {
            Transport::Stdio => match command {
                Some(c) => (None, Some(c)),
                None => {
                    return Err(format!(
                        "type {:?} without a command",
                        kind.unwrap_or_default()
                    ))
                }
            },
            _ => match url {
                Some((_, u)) => (Some(scrub_url(&u)), None),
                None => return Err(format!("type {:?} without a url", kind.unwrap_or_default())),
            },
        };
        if command.is_none() {
            args.clear();
        }
        let (env, raw_env) = match o.get("env").or_else(|| o.get("environment")) {
            Some(v) => named(v, "env")?,
            None => Default::default(),
        };
        let (headers, raw_headers) = match o.get("headers") {
            Some(v) => named(v, "headers")?,
            None => Default::default(),
        };
        let raw = Raw {
            url: if command.is_none() { raw_url } else { None },
            command: command.clone(),
            args: args.clone(),
            env: raw_env,
            headers: raw_headers,
        };
        let disabled = o.get("disabled").and_then(Value::as_bool) == Some(true)
            || o.get("enabled").and_then(Value::as_bool) == Some(false);
        Ok(Entry {
            client: self.client,
            scope: self.scope,
            file: self.file.clone(),
            project: self.project.clone(),
            name: name.to_string(),
            transport,
            url,
            command,
            args: scrub_args(&args),
            env,
            headers,
            disabled,
            raw,
        })
    }
}

/// The command and arguments: `command` a string with `args`, or (OpenCode) an array.
fn command_of(o: &Map<String, Value>) -> Result<(Option<String>, Vec<String>), String> {
    let strings = |v: &Value, what: &str| -> Result<Vec<String>, String> {
        v.as_array()
            .ok_or_else(|| format!("{what} is not an array"))?
            .iter()
            .map(|a| {
                a.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| format!("{what} holds a non-string"))
            })
            .collect()
    };
    let mut args = match o.get("args") {
        Some(a) => strings(a, "args")?,
        None => Vec::new(),
    };
    let command = match o.get("command") {
        None => None,
        Some(Value::String(c)) => Some(c.clone()),
        Some(a @ Value::Array(_)) => {
            let mut all = strings(a, "command")?;
            if all.is_empty() {
                return Err("command is empty".into());
            }
            let c = all.remove(0);
            all.append(&mut args);
            args = all;
            Some(c)
        }
        Some(_) => return Err("command is neither a string nor an array".into()),
    };
    if command.as_deref() == Some("") {
        return Err("command is empty".into());
    }
    Ok((command, args))
}

/// Named values as shown and as written.
type NamedPairs = (Vec<Named>, Vec<(String, String)>);

/// An object of string values (env, headers), each value a reference or a fingerprint;
/// and the values as written.
fn named(v: &Value, what: &str) -> Result<NamedPairs, String> {
    let Value::Object(m) = v else {
        return Err(format!("{what} is not an object"));
    };
    let mut raw = Vec::new();
    let shown = m
        .iter()
        .map(|(k, v)| {
            let text = match v {
                Value::String(s) => s.clone(),
                Value::Number(_) | Value::Bool(_) => v.to_string(),
                _ => return Err(format!("{what}.{k} is not a string")),
            };
            let reference = is_reference(&text);
            raw.push((k.clone(), text.clone()));
            Ok(Named {
                name: k.clone(),
                value: if reference {
                    text.clone()
                } else {
                    fingerprint(text.as_bytes())
                },
                reference,
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok((shown, raw))
}

/// `true` when the value is only placeholders (`${env:VAR}`, `${VAR}`, `${input:ID}`),
/// perhaps after an authorization scheme word (`Bearer ${env:TOKEN}`).
pub fn is_reference(value: &str) -> bool {
    let mut rest = String::new();
    let mut s = value;
    let mut any = false;
    while let Some(i) = s.find("${") {
        let Some(j) = s[i..].find('}') else {
            return false;
        };
        let inner = &s[i + 2..i + j];
        let ok = !inner.is_empty()
            && inner
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | ':' | '-' | '.'));
        if !ok {
            return false;
        }
        any = true;
        rest.push_str(&s[..i]);
        rest.push(' ');
        s = &s[i + j + 1..];
    }
    rest.push_str(s);
    any && rest.split_whitespace().all(|w| {
        matches!(
            w.to_ascii_lowercase().as_str(),
            "bearer" | "basic" | "token"
        )
    })
}

/// A name that suggests its value is a secret: the rule of `--header`
/// ([`super::net::is_sensitive`]: token, secret, key, auth, session, password, cookie),
/// and `passwd` and `credential`.
pub fn sensitive_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    super::net::is_sensitive(&n) || n.contains("passwd") || n.contains("credential")
}

/// Well-known credential shapes, secrets wherever they stand: GitHub, GitLab, Slack,
/// OpenAI-style and AWS access keys, and JWTs.
pub fn looks_like_token(value: &str) -> bool {
    const PREFIXES: &[&str] = &[
        "ghp_",
        "gho_",
        "ghu_",
        "ghs_",
        "ghr_",
        "github_pat_",
        "glpat-",
        "xoxb-",
        "xoxp-",
        "xoxa-",
        "sk-",
        "sk_live_",
        "AKIA",
    ];
    let v = value.trim();
    let shaped = v.len() >= 16
        && !v.contains(char::is_whitespace)
        && !v.contains('/')
        && PREFIXES.iter().any(|p| v.starts_with(p));
    let jwt = v.starts_with("eyJ") && v.matches('.').count() == 2 && v.len() >= 20;
    shaped || jwt
}

fn hide(value: &str) -> String {
    if is_reference(value) {
        value.to_string()
    } else {
        fingerprint(value.as_bytes())
    }
}

/// Arguments with secret-looking values fingerprinted: the value after a flag with a
/// sensitive name (`--token`, `--api-key`, ...), `NAME=value` with a sensitive name,
/// `Bearer x`, a `Name: value` header with a sensitive name, and sensitive URL query
/// values.
pub fn scrub_args(args: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len());
    let mut secret_next = false;
    for a in args {
        if secret_next {
            secret_next = false;
            out.push(hide(a));
            continue;
        }
        if let Some(flag) = a.strip_prefix('-') {
            let flag = flag.trim_start_matches('-');
            match flag.split_once('=') {
                Some((n, v)) if sensitive_name(n) => {
                    out.push(format!("{}={}", &a[..a.len() - v.len() - 1], hide(v)));
                }
                Some(_) => out.push(a.clone()),
                None => {
                    secret_next = sensitive_name(flag);
                    out.push(a.clone());
                }
            }
            continue;
        }
        out.push(scrub_value(a));
    }
    out
}

/// One free-standing value: a well-known token shape, `Bearer x`, `Name: value`,
/// `name=value`, a URL.
fn scrub_value(a: &str) -> String {
    if looks_like_token(a) {
        return fingerprint(a.as_bytes());
    }
    for scheme in ["Bearer ", "bearer ", "Basic ", "basic "] {
        if let Some(v) = a.strip_prefix(scheme) {
            return format!("{scheme}{}", hide(v.trim()));
        }
    }
    if let Some((n, v)) = a.split_once(':') {
        if !n.is_empty()
            && !n.contains(char::is_whitespace)
            && !v.starts_with("//")
            && sensitive_name(n)
        {
            return format!("{n}: {}", scrub_value_whole(v.trim_start()));
        }
    }
    if a.contains("://") {
        return scrub_url(a);
    }
    if let Some((n, v)) = a.split_once('=') {
        if sensitive_name(n) && !n.contains(char::is_whitespace) {
            return format!("{n}={}", hide(v));
        }
    }
    a.to_string()
}

/// A header value given in an argument: the scheme kept, the rest fingerprinted.
fn scrub_value_whole(v: &str) -> String {
    for scheme in ["Bearer ", "bearer ", "Basic ", "basic "] {
        if let Some(t) = v.strip_prefix(scheme) {
            return format!("{scheme}{}", hide(t.trim()));
        }
    }
    hide(v)
}

/// A URL with the values of sensitive query parameters, and any userinfo password,
/// fingerprinted.
pub fn scrub_url(u: &str) -> String {
    let (base, fragment) = match u.split_once('#') {
        Some((b, f)) => (b, Some(f)),
        None => (u, None),
    };
    let (head, query) = match base.split_once('?') {
        Some((h, q)) => (h, Some(q)),
        None => (base, None),
    };
    let mut head = head.to_string();
    // userinfo: scheme://user:password@host
    if let Some(i) = head.find("://") {
        let after = &head[i + 3..];
        let authority_end = after.find('/').unwrap_or(after.len());
        if let Some(at) = after[..authority_end].rfind('@') {
            if let Some((user, pass)) = after[..at].split_once(':') {
                head = format!("{}{user}:{}{}", &head[..i + 3], hide(pass), &after[at..]);
            }
        }
    }
    let mut out = head;
    if let Some(q) = query {
        let pairs: Vec<String> = q
            .split('&')
            .map(|p| match p.split_once('=') {
                Some((n, v)) if sensitive_name(n) => format!("{n}={}", hide(v)),
                _ => p.to_string(),
            })
            .collect();
        out.push('?');
        out.push_str(&pairs.join("&"));
    }
    if let Some(f) = fragment {
        out.push('#');
        out.push_str(f);
    }
    out
}

/// JSONC to JSON: `//` and `/* */` comments outside strings removed, and commas before a
/// closing `}` or `]`.
pub fn strip_jsonc(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut no_comments = String::with_capacity(text.len());
    let mut i = 0;
    let mut in_string = false;
    while i < chars.len() {
        let c = chars[i];
        if in_string {
            no_comments.push(c);
            if c == '\\' && i + 1 < chars.len() {
                no_comments.push(chars[i + 1]);
                i += 2;
                continue;
            }
            if c == '"' {
                in_string = false;
            }
            i += 1;
            continue;
        }
        match (c, chars.get(i + 1)) {
            ('"', _) => {
                in_string = true;
                no_comments.push(c);
                i += 1;
            }
            ('/', Some('/')) => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            ('/', Some('*')) => {
                i += 2;
                while i < chars.len() && !(chars[i] == '*' && chars.get(i + 1) == Some(&'/')) {
                    // Keep line breaks, so a parse error's line number stays the file's.
                    if chars[i] == '\n' {
                        no_comments.push('\n');
                    }
                    i += 1;
                }
                i += 2;
                no_comments.push(' ');
            }
            _ => {
                no_comments.push(c);
                i += 1;
            }
        }
    }
    // Trailing commas.
    let chars: Vec<char> = no_comments.chars().collect();
    let mut out = String::with_capacity(no_comments.len());
    let mut in_string = false;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if in_string {
            out.push(c);
            if c == '\\' && i + 1 < chars.len() {
                out.push(chars[i + 1]);
                i += 2;
                continue;
            }
            if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
            out.push(c);
        } else if c == ',' {
            let next = chars[i + 1..].iter().find(|c| !c.is_whitespace());
            if !matches!(next, Some('}' | ']')) {
                out.push(c);
            }
        } else {
            out.push(c);
        }
        i += 1;
    }
    out
}

/// `--list-config SOURCE`: `auto` reads the well-known files of the user (`HOME`) and
/// the working directory, skipping missing ones; anything else is one file, which must
/// be readable and parse (else exit 2). Entries go to stdout (a table, or a JSON array
/// with `--format json`); problems to stderr, one line each; a summary line to stderr.
pub fn list(source: &str, format: Format, printer: &Printer) -> ExitStatus {
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from);
    let mut inv = Inventory::default();
    if source == "auto" {
        let config_home = std::env::var_os("XDG_CONFIG_HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from);
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        for (path, client, scope) in known_locations(home.as_deref(), config_home.as_deref(), &cwd)
        {
            if !path.is_file() {
                continue;
            }
            if let Err(reason) = read_file(&path, client, scope, &mut inv) {
                inv.problems.push(Problem {
                    file: path,
                    entry: None,
                    reason,
                });
            }
        }
    } else {
        let path = PathBuf::from(source);
        let (client, scope) = classify(&path, home.as_deref());
        if let Err(reason) = read_file(&path, client, scope, &mut inv) {
            printer.error(&format!("--list-config {}: {reason}", path.display()));
            return ExitStatus::Usage;
        }
    }
    for p in &inv.problems {
        printer.warn(&p.to_string());
    }
    match format {
        Format::Text => {
            for line in table(&inv.entries) {
                printer.out(line.trim_end());
            }
        }
        Format::Json => match serde_json::to_string_pretty(&inv.entries) {
            Ok(json) => printer.out(&json),
            Err(e) => {
                printer.error(&format!("cannot write the JSON output: {e}"));
                return ExitStatus::Internal;
            }
        },
    }
    printer.progress(&format!(
        "read {} client configuration file(s): {} server entr{}, {} skipped",
        inv.files_read,
        inv.entries.len(),
        if inv.entries.len() == 1 { "y" } else { "ies" },
        inv.problems.len()
    ));
    ExitStatus::Ok
}

/// The table: a header line and one line per entry (client, scope, entry, transport,
/// target or command, file), columns padded.
pub fn table(entries: &[Entry]) -> Vec<String> {
    let rows: Vec<[String; 6]> = entries
        .iter()
        .map(|e| {
            let mut file = e.file.display().to_string();
            if let Some(p) = &e.project {
                file.push_str(&format!(" (project {p})"));
            }
            let mut name = e.name.clone();
            if e.disabled {
                name.push_str(" (disabled)");
            }
            [
                e.client.name().to_string(),
                e.scope.name().to_string(),
                name,
                e.transport.name().to_string(),
                e.target(),
                file,
            ]
        })
        .collect();
    let head = ["CLIENT", "SCOPE", "ENTRY", "TRANSPORT", "TARGET", "FILE"].map(String::from);
    let mut width = [0usize; 5];
    for r in std::iter::once(&head).chain(&rows) {
        for (w, cell) in width.iter_mut().zip(r.iter()) {
            *w = (*w).max(cell.chars().count());
        }
    }
    std::iter::once(&head)
        .chain(&rows)
        .map(|r| {
            let mut line = String::new();
            for (i, cell) in r.iter().enumerate() {
                if i < 5 {
                    line.push_str(&format!("{cell:<w$}  ", w = width[i]));
                } else {
                    line.push_str(cell);
                }
            }
            line
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jsonc_comments_and_trailing_commas_go_but_strings_keep_theirs() {
        let text = r#"{
  // a comment
  "a": "http://x/*not*/ // kept", /* block
  comment */ "b": [1, 2,],
}"#;
        let v: Value = serde_json::from_str(&strip_jsonc(text)).expect("json");
        assert_eq!(v["a"], "http://x/*not*/ // kept");
        assert_eq!(v["b"], serde_json::json!([1, 2]));
    }

    #[test]
    fn secret_arguments_become_fingerprints_and_placeholders_stay() {
        let args: Vec<String> = [
            "--token",
            "s3cret",
            "--api-key=k3y",
            "--port",
            "8080",
            "API_KEY=abc",
            "Bearer xyz",
            "--header",
            "Authorization: Bearer hdr",
            "--password",
            "${env:PW}",
            "https://h/p?api_key=q1&x=1",
        ]
        .map(String::from)
        .to_vec();
        let out = scrub_args(&args);
        let fp = |s: &str| fingerprint(s.as_bytes());
        assert_eq!(out[1], fp("s3cret"));
        assert_eq!(out[2], format!("--api-key={}", fp("k3y")));
        assert_eq!(out[4], "8080");
        assert_eq!(out[5], format!("API_KEY={}", fp("abc")));
        assert_eq!(out[6], format!("Bearer {}", fp("xyz")));
        assert_eq!(out[8], format!("Authorization: Bearer {}", fp("hdr")));
        assert_eq!(out[10], "${env:PW}");
        assert_eq!(out[11], format!("https://h/p?api_key={}&x=1", fp("q1")));
        assert!(is_reference("Bearer ${env:TOKEN}"));
        assert!(is_reference("${input:api-key}"));
        assert!(!is_reference("Bearer abc ${X}"));
        let bare = [
            "ghp_0123456789abcdefghij".to_string(),
            "README.md".to_string(),
        ];
        assert_eq!(
            scrub_args(&bare),
            [fp("ghp_0123456789abcdefghij"), "README.md".to_string()]
        );
    }

    #[test]
    fn a_vscode_settings_file_and_an_opencode_file_parse_into_entries() {
        let mut inv = Inventory::default();
        let settings = r#"{"mcp": {"servers": {"a": {"command": "run me", "args": ["x y", ""]}}}}"#;
        parse(
            settings,
            Path::new("s.json"),
            Client::Vscode,
            Scope::User,
            &mut inv,
        )
        .expect("parses");
        let opencode = r#"{"mcp": {"b": {"type": "remote", "url": "https://b.example/mcp"},
                                    "c": {"type": "local"}}, "x": null}"#;
        parse(
            opencode,
            Path::new("o.json"),
            Client::Opencode,
            Scope::Project,
            &mut inv,
        )
        .expect("parses");
        assert_eq!(inv.files_read, 2);
        assert_eq!(inv.entries.len(), 2);
        assert_eq!(inv.entries[0].target(), "'run me' 'x y' ''");
        assert_eq!(inv.entries[1].transport, Transport::StreamableHttp);
        assert_eq!(inv.entries[1].target(), "https://b.example/mcp");
        assert_eq!(inv.problems.len(), 1);
        assert_eq!(
            inv.problems[0].to_string(),
            "o.json: entry \"c\": type \"local\" without a command"
        );
        assert!(parse(
            "[1]",
            Path::new("l.json"),
            Client::Unknown,
            Scope::User,
            &mut inv
        )
        .is_err());
        assert!(parse(
            "{",
            Path::new("l.json"),
            Client::Unknown,
            Scope::User,
            &mut inv
        )
        .is_err());
    }

    #[test]
    fn paths_name_their_client_and_scope() {
        let home = Path::new("/home/u");
        assert_eq!(
            classify(Path::new("/home/u/.cursor/mcp.json"), Some(home)),
            (Client::Cursor, Scope::User)
        );
        assert_eq!(
            classify(Path::new("/src/p/.cursor/mcp.json"), Some(home)),
            (Client::Cursor, Scope::Project)
        );
        assert_eq!(
            classify(Path::new("/home/u/.kiro/settings/mcp.json"), Some(home)),
            (Client::Kiro, Scope::User)
        );
        assert_eq!(
            classify(
                Path::new("/home/u/.config/Code/User/settings.json"),
                Some(home)
            ),
            (Client::Vscode, Scope::User)
        );
    }
}
