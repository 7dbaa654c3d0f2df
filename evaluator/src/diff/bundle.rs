//! `mcp-grade diff OLD.mcpev NEW.mcpev`: what changed between two bundles of one endpoint
//! (or, with `--match identity`, of one server on two endpoints), from the bundles
//! alone: the negotiated revision and the other eras served, the server's `serverInfo`,
//! the advertised capabilities leaf by leaf, the inventory (tool, resource, template and
//! prompt names) and the verdict of every check (each bundle graded on its own, without
//! baseline or policy). Text, or `--format json` (`mcp-grade-diff/1`). Both bundles must
//! verify (exit 3) and match (exit 2).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use super::{DiffError, DiffOptions, Identity, Match};
use crate::benchmark::Benchmark;
use crate::check::Context;
use crate::evidence::Bundle;
use crate::fmt::{escape_line, utc};
use crate::load::{for_grading, load_signers, read_verified};
use crate::output::Diag;
use crate::shared_items::SharedItems;
use mcp_probe_schema::tape::Json;

/// One side of the comparison.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Side {
    /// The bundle as given.
    pub bundle: String,
    /// Its endpoint (the target as typed when no endpoint answered).
    pub endpoint: String,
    /// Its run id.
    pub run_id: String,
    /// When it was collected (UTC).
    pub collected_at: String,
}

/// A value on each side.
#[derive(Debug, Serialize, PartialEq, schemars::JsonSchema)]
pub struct Change<T> {
    /// In OLD.
    pub old: T,
    /// In NEW.
    pub new: T,
}

/// Names added to and removed from one list.
#[derive(Debug, Default, Serialize, schemars::JsonSchema)]
pub struct Names {
    /// In NEW only.
    pub added: Vec<String>,
    /// In OLD only.
    pub removed: Vec<String>,
}

/// One capability leaf that differs.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Leaf {
    /// Dotted path (`tools.listChanged`).
    pub path: String,
    /// In OLD (`null` when absent).
    pub old: Option<Value>,
    /// In NEW (`null` when absent).
    pub new: Option<Value>,
}

/// One check whose verdict differs.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct VerdictChange {
    /// The check.
    pub check: &'static str,
    /// In OLD.
    pub old: &'static str,
    /// In NEW.
    pub new: &'static str,
}

/// What changed between two bundles of one endpoint, or of one server
/// (`diff --format json`).
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Diff {
    /// Always `mcp-grade-diff/1`.
    pub schema: &'static str,
    /// How the bundles were matched: `endpoint` (the default) or `identity`.
    #[serde(rename = "match")]
    pub by: Match,
    /// The endpoint both bundles are of; `null` when they are of two endpoints (only
    /// under `--match identity`: `old.endpoint` and `new.endpoint` name them).
    pub endpoint: Option<String>,
    /// The identity both bundles share (`serverInfo` name and transport); `null` under
    /// `--match endpoint`.
    pub identity: Option<Identity>,
    /// OLD.
    pub old: Side,
    /// NEW.
    pub new: Side,
    /// True when anything below differs.
    pub changed: bool,
    /// The negotiated revision, when it differs.
    pub revision: Option<Change<Option<String>>>,
    /// The other eras served, when they differ.
    pub other_eras: Option<Change<Vec<String>>>,
    /// `serverInfo`, when it differs.
    pub server_info: Option<Change<Option<Value>>>,
    /// Capability leaves that were added, removed or changed.
    pub capabilities: Vec<Leaf>,
    /// Inventory names per list: `tools`, `resources`, `resource_templates`, `prompts`.
    pub inventory: BTreeMap<&'static str, Names>,
    /// Checks whose verdict differs.
    pub verdicts: Vec<VerdictChange>,
}

fn names(ev: &Bundle) -> [(&'static str, BTreeSet<String>); 4] {
    let pick = |items: &SharedItems, key: &str| -> BTreeSet<String> {
        items
            .iter()
            .filter_map(|i| i.get(key).and_then(Json::as_str).map(str::to_string))
            .collect()
    };
    let inv = &ev.inventory;
    [
        ("tools", pick(&inv.tools.items, "name")),
        ("resources", pick(&inv.resources.items, "uri")),
        (
            "resource_templates",
            pick(&inv.resource_templates.items, "uriTemplate"),
        ),
        ("prompts", pick(&inv.prompts.items, "name")),
    ]
}

fn eras(ev: &Bundle) -> Vec<String> {
    ev.session()
        .map(|s| s.other_eras.iter().map(|o| o.revision.clone()).collect())
        .unwrap_or_default()
}

fn verdicts(bm: &'static Benchmark, ev: &Bundle) -> BTreeMap<&'static str, &'static str> {
    crate::benchmark::grade_bundle(bm, ev, &Context::default(), None)
        .into_iter()
        .filter_map(|r| Some((r.entry.id.as_str(), r.outcome?.verdict.mark())))
        .collect()
}

/// The identity of the server a bundle recorded.
pub fn identity(ev: &Bundle) -> Option<Identity> {
    Identity::of(
        ev.session().and_then(|s| s.server_info.as_ref()),
        ev.transport(),
    )
}

/// Compare two loaded bundles, matched `by` endpoint or identity (the caller checked that
/// they match). Under `--match identity` the endpoints are shown, not counted as a
/// change.
pub fn compare(bm: &'static Benchmark, old: &Bundle, new: &Bundle, by: Match) -> Diff {
    let side = |ev: &Bundle| Side {
        bundle: ev.path.clone(),
        endpoint: ev.endpoint(),
        run_id: ev.payload.run.run_id.clone(),
        collected_at: utc(ev.payload.run.started_at),
    };
    fn changed<T: PartialEq>(a: T, b: T) -> Option<Change<T>> {
        (a != b).then_some(Change { old: a, new: b })
    }
    let revision = changed(
        old.revision().map(str::to_string),
        new.revision().map(str::to_string),
    );
    let other_eras = changed(eras(old), eras(new));
    let server_info = changed(
        old.session().and_then(|s| s.server_info.clone()),
        new.session().and_then(|s| s.server_info.clone()),
    );
    let empty = Value::Object(Default::default());
    let lo = crate::checks::configuration::capabilities_match_baseline::leaves(
        old.capabilities().unwrap_or(&empty),
    );
    let ln = crate::checks::configuration::capabilities_match_baseline::leaves(
        new.capabilities().unwrap_or(&empty),
    );
    let paths: BTreeSet<&String> = lo.keys().chain(ln.keys()).collect();
    let capabilities: Vec<Leaf> = paths
        .into_iter()
        .filter(|p| lo.get(*p) != ln.get(*p))
        .map(|p| Leaf {
            path: p.clone(),
            old: lo.get(p).cloned(),
            new: ln.get(p).cloned(),
        })
        .collect();
    let mut inventory = BTreeMap::new();
    for ((k, a), (_, b)) in names(old).into_iter().zip(names(new)) {
        let n = Names {
            added: b.difference(&a).cloned().collect(),
            removed: a.difference(&b).cloned().collect(),
        };
        if !n.added.is_empty() || !n.removed.is_empty() {
            inventory.insert(k, n);
        }
    }
    let vo = verdicts(bm, old);
    let vn = verdicts(bm, new);
    let verdicts: Vec<VerdictChange> = bm
        .checks
        .iter()
        .map(|e| e.id.as_str())
        .filter_map(|id| {
            let (a, b) = (vo.get(id).copied()?, vn.get(id).copied()?);
            (a != b).then_some(VerdictChange {
                check: id,
                old: a,
                new: b,
            })
        })
        .collect();
    let any = revision.is_some()
        || other_eras.is_some()
        || server_info.is_some()
        || !capabilities.is_empty()
        || !inventory.is_empty()
        || !verdicts.is_empty();
    Diff {
        schema: "mcp-grade-diff/1",
        by,
        endpoint: (old.endpoint() == new.endpoint()).then(|| old.endpoint()),
        identity: match by {
            Match::Endpoint => None,
            Match::Identity => identity(old),
        },
        old: side(old),
        new: side(new),
        changed: any,
        revision,
        other_eras,
        server_info,
        capabilities,
        inventory,
        verdicts,
    }
}

fn show(v: &Option<Value>) -> String {
    v.as_ref()
        .map(|v| escape_line(&v.to_string()))
        .unwrap_or_else(|| "(absent)".into())
}

/// The diff as text.
pub fn text(d: &Diff) -> String {
    let mut s = String::new();
    let w = |s: &mut String, l: String| {
        s.push_str(&l);
        s.push('\n');
    };
    match &d.endpoint {
        Some(e) => w(&mut s, format!("endpoint  {}", escape_line(e))),
        None => w(
            &mut s,
            format!(
                "endpoint  {} -> {} (matched by identity; not counted as a change)",
                escape_line(&d.old.endpoint),
                escape_line(&d.new.endpoint)
            ),
        ),
    }
    if let Some(id) = &d.identity {
        w(&mut s, format!("server    {}", id.show()));
    }
    w(
        &mut s,
        format!(
            "old       {} (run {}, collected {})",
            escape_line(&d.old.bundle),
            escape_line(&d.old.run_id),
            d.old.collected_at
        ),
    );
    w(
        &mut s,
        format!(
            "new       {} (run {}, collected {})",
            escape_line(&d.new.bundle),
            escape_line(&d.new.run_id),
            d.new.collected_at
        ),
    );
    if !d.changed {
        w(&mut s, "no change".into());
        return s;
    }
    if let Some(c) = &d.revision {
        w(
            &mut s,
            format!(
                "revision  {} -> {}",
                escape_line(c.old.as_deref().unwrap_or("none")),
                escape_line(c.new.as_deref().unwrap_or("none"))
            ),
        );
    }
    if let Some(c) = &d.other_eras {
        w(
            &mut s,
            format!(
                "eras      also {} -> also {}",
                escape_line(&c.old.join(", ")),
                escape_line(&c.new.join(", "))
            ),
        );
    }
    if let Some(c) = &d.server_info {
        w(
            &mut s,
            format!("identity  {} -> {}", show(&c.old), show(&c.new)),
        );
    }
    for l in &d.capabilities {
        w(
            &mut s,
            format!(
                "capability {}: {} -> {}",
                escape_line(&l.path),
                show(&l.old),
                show(&l.new)
            ),
        );
    }
    for (k, n) in &d.inventory {
        for a in &n.added {
            w(&mut s, format!("{k}  + {}", escape_line(a)));
        }
        for r in &n.removed {
            w(&mut s, format!("{k}  - {}", escape_line(r)));
        }
    }
    for v in &d.verdicts {
        w(
            &mut s,
            format!("verdict   {}: {} -> {}", v.check, v.old, v.new),
        );
    }
    s
}

fn load(path: &Path, trust: &crate::trust_list::Signers) -> Result<Bundle, DiffError> {
    match read_verified(path, trust)? {
        Ok(v) => Ok(for_grading(path.display().to_string(), v.verified)),
        Err(e) => Err(DiffError::Invalid {
            path: escape_line(&path.display().to_string()),
            reason: e.to_string(),
        }),
    }
}

/// `mcp-grade diff OLD NEW` of two bundles: the output and whether anything changed.
pub fn run(opts: &DiffOptions, _err: &mut Diag<'_>) -> Result<(String, bool), DiffError> {
    let keys = load_signers(&opts.trust, opts.trust_list.as_deref(), &opts.tsa_certs)?;
    let a = load(&opts.old, &keys)?;
    let b = load(&opts.new, &keys)?;
    let shown = |p: &Path| escape_line(&p.display().to_string());
    match opts.by {
        Match::Endpoint if a.endpoint() != b.endpoint() => {
            return Err(DiffError::Endpoints {
                old: shown(&opts.old),
                old_endpoint: escape_line(&a.endpoint()),
                new: shown(&opts.new),
                new_endpoint: escape_line(&b.endpoint()),
            })
        }
        Match::Identity => {
            let (ia, ib) = (identity(&a), identity(&b));
            if ia.is_none() || ia != ib {
                return Err(DiffError::Identities {
                    old: shown(&opts.old),
                    old_identity: Identity::show_or_none(ia.as_ref()),
                    new: shown(&opts.new),
                    new_identity: Identity::show_or_none(ib.as_ref()),
                });
            }
        }
        Match::Endpoint => {}
    }
    let d = compare(Benchmark::newest()?, &a, &b, opts.by);
    let body = if opts.json {
        super::common::json_body(&d)
    } else {
        text(&d)
    };
    Ok((body, d.changed))
}

/// The JSON Schema of `diff --format json` of two bundles (`mcp-grade-diff/1`),
/// generated from [`Diff`].
pub fn schema() -> Value {
    let mut s = schemars::schema_for!(Diff).to_value();
    s["title"] = Value::String("mcp-grade diff of two bundles (mcp-grade-diff/1)".into());
    s
}
