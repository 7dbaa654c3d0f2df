//! Renewed timestamps: the detached RFC 3161 tokens beside a bundle
//! (`<bundle>.tsr`, `<bundle>.tsr.2`, …; [`mcp_probe_schema::renewal`]), which
//! `mcp-collect timestamp` writes and `mcp-grade verify` checks.
//!
//! Each sidecar is checked with the seven steps of [`crate::timestamp`], its imprint over
//! the bundle file and every sidecar before it; then the link rule: its genTime is no
//! earlier than the previous token's genTime and no later than the previous token's TSA
//! certificate's `notAfter` (the previous token of the first sidecar is the bundle's
//! embedded one, when it has a valid one). A chain whose every link holds proves the
//! first token's genTime: [`Renewal::Valid`]. The first sidecar that fails a step or a
//! link names itself and the step ([`Renewal::Invalid`]), and the bundle fails
//! verification.

use std::path::{Path, PathBuf};

use mcp_probe_schema::renewal::{self, check_link, Imprints, LinkError, ReadError};
use mcp_probe_schema::tsp::{stamp_of, Stamp};

use crate::load::Error;
use crate::timestamp::{gen_time_text, verify_over, TimestampState, TsaTrust, VerifiedToken};

/// One link of a chain: a token that passed every step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// The sidecar it was read from; `None` for the bundle's embedded token.
    pub file: Option<PathBuf>,
    /// What it says, and its TSA certificate's `notAfter`.
    pub token: VerifiedToken,
}

impl Link {
    /// The link's name in a line: the sidecar's path, or `embedded`.
    fn name(&self) -> String {
        self.file
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "embedded".into())
    }
}

/// What the sidecars of a bundle came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Renewal {
    /// No sidecar: nothing more is said of the bundle.
    None,
    /// Every sidecar passed every step and every link holds; the links in order (the
    /// embedded token first, when the bundle has a valid one).
    Valid(Vec<Link>),
    /// A sidecar failed.
    Invalid {
        /// The links that held before it.
        links: Vec<Link>,
        /// The sidecar.
        sidecar: PathBuf,
        /// The step it failed: one of the token steps ([`crate::timestamp`]), `link`
        /// (the link rule), or `sequence` (a slot missing before it).
        step: &'static str,
        /// Why, one line.
        detail: String,
    },
}

impl Renewal {
    /// The sidecars of the bundle at `path` (its bytes `bundle`, its embedded timestamp
    /// already checked: `embedded`) against `trust`. Called only for a bundle whose own
    /// checks passed. A sidecar that exists and cannot be read is an [`Error::Read`]
    /// naming it.
    pub fn check(
        path: &Path,
        bundle: &[u8],
        embedded: &TimestampState,
        trust: &TsaTrust,
    ) -> Result<Renewal, Error> {
        let sidecars = match renewal::read_all(path) {
            Ok(s) => s,
            Err(ReadError::Read { path, source }) => return Err(Error::Read { path, source }),
            Err(ReadError::TooLarge { path }) => {
                return Ok(Renewal::Invalid {
                    links: Vec::new(),
                    sidecar: path,
                    step: "decode",
                    detail: format!(
                        "larger than {} KiB, not a timestamp token",
                        renewal::MAX_SIDECAR_BYTES / 1024
                    ),
                });
            }
            Err(ReadError::Gap { present, missing }) => {
                return Ok(Renewal::Invalid {
                    links: Vec::new(),
                    detail: format!(
                    "{} does not exist: a renewal never skips a slot, so one was lost or removed",
                    missing.display()
                ),
                    sidecar: present,
                    step: "sequence",
                })
            }
            Err(e) => {
                return Ok(Renewal::Invalid {
                    links: Vec::new(),
                    sidecar: renewal::path(path, 1),
                    step: "decode",
                    detail: e.to_string(),
                })
            }
        };
        if sidecars.is_empty() {
            return Ok(Renewal::None);
        }
        let mut links = Vec::with_capacity(sidecars.len() + 1);
        if let (TimestampState::Valid(_), Ok(Stamp::Token { token, signature })) =
            (embedded, stamp_of(bundle))
        {
            // Checked already (it is valid); again here for its certificate's notAfter.
            if let Ok(token) = verify_over(
                &token,
                &mcp_probe_schema::tsp::imprint(&signature),
                "the bundle's COSE signature",
                trust,
            ) {
                links.push(Link { file: None, token });
            }
        }
        let mut imprints = Imprints::new(bundle);
        for s in sidecars {
            let token = match verify_over(
                &s.token,
                &imprints.next(),
                renewal::imprint_over(s.slot),
                trust,
            ) {
                Ok(t) => t,
                Err(f) => {
                    return Ok(Renewal::Invalid {
                        links,
                        sidecar: s.path,
                        step: f.step.name(),
                        detail: f.detail,
                    })
                }
            };
            if let Some(prev) = links.last() {
                let p = &prev.token;
                if let Err(e) =
                    check_link(p.timestamp.gen_time, p.not_after, token.timestamp.gen_time)
                {
                    let detail = link_failure(e, &prev.name());
                    return Ok(Renewal::Invalid {
                        links,
                        sidecar: s.path,
                        step: "link",
                        detail,
                    });
                }
            }
            imprints.push(&s.token);
            links.push(Link {
                file: Some(s.path),
                token,
            });
        }
        Ok(Renewal::Valid(links))
    }

    /// The failure line when a sidecar failed: `<sidecar>: timestamp <step>: <why>`.
    pub fn failure(&self) -> Option<String> {
        match self {
            Renewal::Invalid {
                sidecar,
                step,
                detail,
                ..
            } => Some(format!("{}: timestamp {step}: {detail}", sidecar.display())),
            _ => None,
        }
    }

    /// What the `OK` line of `verify` adds: nothing without sidecars, else `; proven
    /// since <genTime> by <n> linked timestamps: <link> -> <link> …` (`by 1 timestamp`
    /// for one), each link `<name> by <TSA subject> at <genTime>, certificate until
    /// <notAfter>`.
    pub fn suffix(&self) -> String {
        let Renewal::Valid(links) = self else {
            return String::new();
        };
        let Some(first) = links.first() else {
            return String::new();
        };
        let each: Vec<String> = links
            .iter()
            .map(|l| {
                format!(
                    "{} by {} at {}, certificate until {}",
                    l.name(),
                    l.token.timestamp.tsa,
                    gen_time_text(l.token.timestamp.gen_time),
                    gen_time_text(l.token.not_after)
                )
            })
            .collect();
        let by = match links.len() {
            1 => "1 timestamp".to_string(),
            n => format!("{n} linked timestamps"),
        };
        format!(
            "; proven since {} by {by}: {}",
            gen_time_text(first.token.timestamp.gen_time),
            each.join(" -> ")
        )
    }
}

/// The line of a broken link; `previous` names the token before.
fn link_failure(e: LinkError, previous: &str) -> String {
    match e {
        LinkError::Earlier { gen_time, previous: p } => format!(
            "its genTime {} is before the genTime of {previous} ({})",
            gen_time_text(gen_time),
            gen_time_text(p)
        ),
        LinkError::Late {
            gen_time,
            not_after,
        } => format!(
            "its genTime {} is after the TSA certificate of {previous} expired ({}): the renewal came too late to extend it",
            gen_time_text(gen_time),
            gen_time_text(not_after)
        ),
    }
}

/// The `renewal` object of a `verify --json` line: present only when the bundle has
/// sidecars and its own checks passed.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct RenewalJson {
    /// `valid` (every sidecar passed every step and every link holds) or `invalid`.
    pub state: &'static str,
    /// The earliest time the chain proves: the first link's genTime, RFC 3339 UTC (valid
    /// chains only).
    pub proven_since: Option<String>,
    /// The links that held, in order: the bundle's embedded token first when it is
    /// valid, then each sidecar.
    pub links: Vec<LinkJson>,
    /// The sidecar that failed (invalid chains only).
    pub sidecar: Option<String>,
    /// The step it failed: a token step (`decode`, `imprint`, `message-digest`,
    /// `certificate`, `signature`, `usage`, `chain`), `link` or `sequence` (invalid
    /// chains only).
    pub step: Option<&'static str>,
    /// Why (invalid chains only).
    pub reason: Option<String>,
}

/// One link of [`RenewalJson`].
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct LinkJson {
    /// The sidecar's path; null for the bundle's embedded token.
    pub file: Option<String>,
    /// The TSA certificate's subject.
    pub tsa: String,
    /// genTime, RFC 3339 UTC.
    pub gen_time: String,
    /// The TSA certificate's `notAfter`, RFC 3339 UTC: the next renewal had to be made
    /// by then.
    pub certificate_until: String,
    /// The token's serial number, hex.
    pub serial: String,
    /// The TSA policy OID.
    pub policy: String,
}

impl RenewalJson {
    /// The JSON of a chain; `None` without sidecars.
    pub fn of(r: &Renewal) -> Option<RenewalJson> {
        let links = |links: &[Link]| {
            links
                .iter()
                .map(|l| LinkJson {
                    file: l.file.as_ref().map(|p| p.display().to_string()),
                    tsa: l.token.timestamp.tsa.clone(),
                    gen_time: gen_time_text(l.token.timestamp.gen_time),
                    certificate_until: gen_time_text(l.token.not_after),
                    serial: l.token.timestamp.serial.clone(),
                    policy: l.token.timestamp.policy.clone(),
                })
                .collect()
        };
        match r {
            Renewal::None => None,
            Renewal::Valid(l) => Some(RenewalJson {
                state: "valid",
                proven_since: l.first().map(|f| gen_time_text(f.token.timestamp.gen_time)),
                links: links(l),
                sidecar: None,
                step: None,
                reason: None,
            }),
            Renewal::Invalid {
                links: l,
                sidecar,
                step,
                detail,
            } => Some(RenewalJson {
                state: "invalid",
                proven_since: None,
                links: links(l),
                sidecar: Some(sidecar.display().to_string()),
                step: Some(step),
                reason: Some(detail.clone()),
            }),
        }
    }
}
