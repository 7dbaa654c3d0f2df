//! The plan of a run: every flag and input validated before any traffic (targets,
//! `--token-env`, probe inputs, `--ca-file`, the signing key, the trust store).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use mcp_probe_schema::bundle::SecretKey;
use mcp_probe_schema::model::{CaFile, Options};

use super::cli::{Printer, UsageError};
use super::flags::Flags;
use super::target::{dedup, read_servers_file, Target};
use crate::transport::http::Client;

fn read(path: &Path) -> Result<Vec<u8>, UsageError> {
    std::fs::read(path).map_err(|source| UsageError::Read {
        path: path.into(),
        source,
    })
}

/// Everything validated, ready to collect.
pub struct Plan {
    pub(super) targets: Vec<Target>,
    pub(super) key: SecretKey,
    pub(super) client: Arc<Client>,
    pub(super) token: Option<(String, String)>,
    /// `--client-id` / `--client-secret-env`: the pre-registered OAuth client.
    pub(super) oauth_client: Option<crate::oauth::PreRegistered>,
    /// The login flags (the grant, CIMD, audience, resource indicator).
    pub(super) login: super::login_plan::LoginPlan,
    pub(super) inputs: Option<serde_json::Value>,
    pub(super) options: Options,
    pub(super) out: PathBuf,
    pub(super) concurrency: usize,
    pub(super) info: bool,
    /// `--verbose`: the probe-inputs notice says what each missing input is.
    pub(super) verbose: bool,
    pub(super) plaintext_port: u16,
    pub(super) no_browser: bool,
    pub(super) reauth: bool,
    /// `--baseline FILE` (1.3's selection).
    pub(super) baseline: Option<PathBuf>,
    /// `--manifest FILE`.
    pub(super) manifest: Option<PathBuf>,
    /// `--tsa URL`: the time-stamping authority every sealed bundle is sent to.
    pub(super) tsa: Option<Arc<crate::transport::tsa::Tsa>>,
    /// `--stdio`: the server to launch (the plan's one target).
    pub(super) stdio: Option<super::stdio::StdioPlan>,
    /// `--from-config`: for each target (same order), its entry; empty otherwise.
    pub(super) configured: Vec<Option<PerTarget>>,
}

/// A `--from-config` target's entry, and the HTTP client that sends its headers.
pub(super) struct PerTarget {
    pub(super) config: super::from_config::Configured,
    /// A client of its own when the entry gives headers (they go to its origin only).
    pub(super) client: Option<Arc<Client>>,
}

impl Plan {
    /// Target `i`'s `--from-config` entry.
    pub(super) fn configured(&self, i: usize) -> Option<&PerTarget> {
        self.configured.get(i).and_then(Option::as_ref)
    }
}

/// The shard a target falls in among `n`: the first 8 bytes of SHA-256 of the target as
/// typed, big-endian, modulo `n` (stable across machines, runs and versions).
pub fn shard_of(as_typed: &str, n: u32) -> u32 {
    let h = mcp_probe_schema::bundle::sha256(as_typed.as_bytes());
    let mut b = [0u8; 8];
    b.copy_from_slice(&h[..8]);
    (u64::from_be_bytes(b) % u64::from(n)) as u32
}

impl std::fmt::Debug for Plan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Plan({} targets)", self.targets.len())
    }
}

/// Validate flags and inputs. Nothing touches the network here.
pub fn plan(flags: &Flags, printer: &Printer) -> Result<Plan, UsageError> {
    if !flags.command.is_empty() && !flags.stdio {
        return Err(UsageError::Stdio(
            "a command after `--` needs --stdio (mcp-collect --stdio -- COMMAND ARGS...)".into(),
        ));
    }
    let stdio = if flags.stdio {
        Some(super::stdio::plan_stdio(
            &flags.command,
            &flags.env,
            printer.redactor(),
        )?)
    } else {
        None
    };
    let configured = match &flags.from_config {
        Some(source) => {
            let fc = super::from_config::FromConfig {
                source: source.clone(),
                allow_exec: flags.allow_exec.clone(),
                use_credentials: flags.use_config_credentials,
            };
            let var = |k: &str| std::env::var(k).ok();
            let env = super::from_config::Env {
                var: &var,
                home: std::env::var_os("HOME")
                    .filter(|h| !h.is_empty())
                    .map(PathBuf::from),
                cwd: std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
            };
            let mut ask = super::from_config::terminal_ask(printer);
            Some(super::from_config::plan_targets(
                &fc, &env, printer, &mut ask,
            )?)
        }
        None => None,
    };
    let mut raw = flags.targets.clone();
    if let Some((_, t)) = &stdio {
        raw.push(t.as_typed.clone());
    }
    if let Some(p) = &flags.servers_file {
        let bytes = read(p)?;
        let text = String::from_utf8(bytes).map_err(|_| UsageError::Invalid {
            path: p.clone(),
            reason: "not UTF-8 text".into(),
        })?;
        // Each line is checked here, so its error names the file and the line.
        for (line, t) in read_servers_file(&text) {
            if let Err(e) = Target::parse(&t) {
                return Err(UsageError::ServersFile {
                    path: p.clone(),
                    line,
                    source: e,
                });
            }
            raw.push(t);
        }
    }
    if let Some(b) = &flags.baseline {
        if !b.is_file() {
            return Err(UsageError::Invalid {
                path: b.clone(),
                reason: "--baseline names no readable bundle file".into(),
            });
        }
    }
    let raw = dedup(raw);
    if raw.is_empty() && configured.is_none() {
        return Err(UsageError::NoTargets);
    }
    let raw = match flags.shard {
        Some((k, n)) => {
            let all = raw.len();
            let mine: Vec<String> = raw.into_iter().filter(|t| shard_of(t, n) == k).collect();
            printer.progress(&format!(
                "--shard {k}/{n}: {} of the {all} target(s) fall in this shard",
                mine.len()
            ));
            mine
        }
        None => raw,
    };
    let targets = match (&stdio, &configured) {
        (Some((_, t)), _) => vec![t.clone()],
        (None, Some(c)) => c.iter().map(|(t, _)| t.clone()).collect(),
        (None, None) => raw
            .iter()
            .map(|t| Target::parse(t))
            .collect::<Result<Vec<_>, _>>()?,
    };

    let token = match &flags.token_env {
        Some(var) => match std::env::var(var) {
            Ok(v) if !v.trim().is_empty() => Some((var.clone(), v.trim().to_string())),
            _ => return Err(UsageError::TokenEnv(var.clone())),
        },
        None => None,
    };
    let login = super::login_plan::plan_login(flags, printer)?;
    let oauth_client = login.client.clone();
    if token.is_some() {
        if let Some(t) = targets
            .iter()
            .find(|t| t.base_url.scheme() == "http" && !t.is_loopback())
        {
            return Err(UsageError::PlaintextToken(t.as_typed.clone()));
        }
    }

    let net = super::net::plan(flags, &targets, printer.redactor(), |k| {
        std::env::var(k).ok()
    })?;
    // A loopback plain-http target may carry a credential only while the bytes stay on
    // this host: through a proxy they do not.
    let sensitive = net
        .net
        .headers
        .iter()
        .find(|h| super::net::is_sensitive(&h.name));
    let what = match (&token, sensitive) {
        (Some(_), _) => Some("the --token-env credential".to_string()),
        (None, Some(h)) => Some(format!("the --header {}", h.name)),
        (None, None) => None,
    };
    if let Some(what) = what {
        if let Some((t, p)) = targets
            .iter()
            .filter(|t| t.base_url.scheme() == "http")
            .find_map(|t| net.net.proxies.for_url(&t.base_url).map(|p| (t, p)))
        {
            return Err(UsageError::ProxiedPlaintextCredential {
                what,
                target: t.as_typed.clone(),
                proxy: p.display(),
            });
        }
    }

    // The same rule for a credential a configuration entry supplies.
    for (t, c) in configured.iter().flatten() {
        let credential =
            c.token.is_some() || c.source.headers.iter().any(|h| h.secret_like && h.supplied);
        if !credential || t.base_url.scheme() != "http" {
            continue;
        }
        if let Some(p) = net.net.proxies.for_url(&t.base_url) {
            return Err(UsageError::ProxiedPlaintextCredential {
                what: format!(
                    "the credential of the configuration entry {:?}",
                    c.source.entry
                ),
                target: t.as_typed.clone(),
                proxy: p.display(),
            });
        }
    }

    let (inputs, warnings) = super::inputs::load(flags.inputs.as_deref(), &targets)?;
    warnings.iter().for_each(|w| printer.warn(w));

    let (ca_record, ca_certs) = match &flags.ca_file {
        Some(p) => {
            let bytes = read(p)?;
            let certs: Vec<rustls_pki_types::CertificateDer<'static>> = {
                use rustls_pki_types::pem::PemObject;
                rustls_pki_types::CertificateDer::pem_slice_iter(&bytes)
                    .collect::<Result<_, _>>()
                    .map_err(|e| UsageError::Invalid {
                        path: p.clone(),
                        reason: format!("not PEM certificates: {e}"),
                    })?
            };
            if certs.is_empty() {
                return Err(UsageError::Invalid {
                    path: p.clone(),
                    reason: "no PEM certificate in the file".into(),
                });
            }
            let rec = CaFile {
                path: p.display().to_string(),
                sha256: hex::encode(mcp_probe_schema::bundle::sha256(&bytes)),
                certificates: certs
                    .iter()
                    .map(|c| serde_bytes::ByteBuf::from(c.as_ref().to_vec()))
                    .collect(),
            };
            (Some(rec), certs)
        }
        None => (None, Vec::new()),
    };
    let key = match &flags.key {
        Some(p) => crate::keys::load(p)?,
        None => {
            let (k, path, created) = crate::keys::load_or_create_default()?;
            if created {
                printer.progress(&format!(
                    "created signing key {} (key id {}); public key in {}",
                    path.display(),
                    k.public().key_id(),
                    path.with_extension("pub").display()
                ));
            }
            k
        }
    };

    let tsa_url = match &flags.tsa {
        Some(u) => Some(
            crate::transport::tsa::parse_url(u).map_err(|reason| UsageError::Tsa {
                url: crate::transport::tsa::shown_url(u),
                reason,
            })?,
        ),
        None => None,
    };
    let ca_path = flags.ca_file.as_ref().map(|p| p.display().to_string());
    let trust =
        crate::transport::tls::Trust::load(ca_path.as_deref().map(|p| (p, ca_certs.as_slice())))?;
    let configured = configured
        .unwrap_or_default()
        .into_iter()
        .map(|(t, config)| {
            let client = (!config.headers.is_empty()).then(|| {
                let mut n = net.net.clone();
                for h in &config.headers {
                    if !n
                        .headers
                        .iter()
                        .any(|x| x.name.eq_ignore_ascii_case(&h.name))
                    {
                        n.headers.push(h.clone());
                    }
                }
                n.origins = std::iter::once(&t.base_url)
                    .chain(t.candidates.iter())
                    .map(crate::transport::net::origin)
                    .collect();
                Arc::new(
                    Client::new(
                        trust.clone(),
                        Duration::from_secs(flags.timeout),
                        flags.body_cap,
                    )
                    .with_net(n),
                )
            });
            Some(PerTarget { config, client })
        })
        .collect();
    let tsa = tsa_url.map(|u| {
        Arc::new(crate::transport::tsa::Tsa::new(
            u,
            trust.clone(),
            Duration::from_secs(flags.timeout),
        ))
    });
    let options = Options {
        timeout_ms: flags.timeout * 1000,
        body_cap: flags.body_cap,
        max_pages: flags.max_pages,
        info_only: flags.info,
        token_env: flags.token_env.clone(),
        ca_file: ca_record,
        plaintext_port: flags.plaintext_port,
        target_timeout_ms: Some(flags.target_timeout * 1000),
        bundle_cap: Some(flags.bundle_cap),
        connectivity: net.record,
        pre_registered_client: flags.client_id.as_ref().map(|id| {
            mcp_probe_schema::model::PreRegisteredClient {
                client_id: id.trim().to_string(),
                secret_env: flags.client_secret_env.clone(),
            }
        }),
        login: login.record(flags),
    };
    Ok(Plan {
        stdio: stdio.map(|(p, _)| p),
        configured,
        manifest: flags.manifest.clone(),
        targets,
        key,
        client: Arc::new(
            Client::new(trust, Duration::from_secs(flags.timeout), flags.body_cap)
                .with_net(net.net),
        ),
        token,
        oauth_client,
        login,
        inputs,
        options,
        out: flags.out.clone(),
        concurrency: flags.concurrency as usize,
        info: flags.info,
        verbose: flags.verbose,
        plaintext_port: flags.plaintext_port,
        no_browser: flags.no_browser,
        reauth: flags.reauth,
        baseline: flags.baseline.clone(),
        tsa,
    })
}

#[cfg(test)]
mod shard_tests {
    use super::shard_of;
    use crate::run::flags::parse_shard;

    #[test]
    fn shards_partition_targets_stably() {
        let targets: Vec<String> = (0..500)
            .map(|i| format!("https://mcp{i}.example/mcp"))
            .collect();
        for n in [1, 2, 3, 7] {
            let mut seen = vec![0u32; n as usize];
            for t in &targets {
                let k = shard_of(t, n);
                assert!(k < n);
                seen[k as usize] += 1;
                assert_eq!(shard_of(t, n), k, "stable");
            }
            assert_eq!(seen.iter().sum::<u32>(), 500);
            // No shard is starved (a hash, not a sequence): each holds at least half its share.
            assert!(seen.iter().all(|c| *c >= 500 / n / 2), "{n}: {seen:?}");
        }
        // Fixed values: a change of the hash would reshuffle every fleet.
        assert_eq!(
            shard_of("https://mcp.example/mcp", 4),
            shard_of("https://mcp.example/mcp", 4)
        );
        assert_eq!(parse_shard("0/4"), Ok((0, 4)));
        assert_eq!(parse_shard(" 3 / 4 "), Ok((3, 4)));
        for bad in ["4/4", "1/0", "a/2", "2", "-1/3", "0/100001"] {
            assert!(parse_shard(bad).is_err(), "{bad}");
        }
    }
}
