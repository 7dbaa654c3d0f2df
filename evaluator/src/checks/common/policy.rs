//! Reading the operator's policy (`mcp-grade --policy`) in a check: the approved list a
//! key names for this bundle's endpoint, and the leg that compares what the wire showed
//! with it. The leg's note names the key and the policy file, so the evidence says
//! which decision the verdict rests on.

use crate::check::Context;
use crate::fmt::escape_line;
use crate::policy::Decisions;
use crate::verdict::{SubOutcome, SubVerdict};

/// An approved list from the policy.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Approved<'a> {
    /// The values.
    pub list: &'a [String],
    /// The policy key.
    pub key: &'static str,
    /// The policy file.
    pub file: &'a str,
}

/// The approved list under `key` for this bundle, when the policy states one.
pub(crate) fn approved<'a>(
    cx: &Context<'a>,
    key: &'static str,
    pick: fn(&Decisions) -> Option<&Vec<String>>,
) -> Option<Approved<'a>> {
    let p = cx.policy?;
    Some(Approved {
        list: pick(&p.decisions)?.as_slice(),
        key,
        file: &p.file,
    })
}

/// `id` passes when every `observed` value is approved (`same` compares an approved value
/// with an observed one), and fails naming the ones that are not.
pub(crate) fn judge(
    id: &str,
    noun: &str,
    observed: &[String],
    a: Approved<'_>,
    same: impl Fn(&str, &str) -> bool,
) -> SubVerdict {
    let list = |v: &[String]| escape_line(&v.join(", "));
    let unapproved: Vec<String> = observed
        .iter()
        .filter(|o| !a.list.iter().any(|x| same(x, o)))
        .cloned()
        .collect();
    let source = crate::format_exact!(
        "the policy's {} ({}: {})",
        a.key,
        crate::fmt::Line(a.file),
        list(a.list)
    );
    if unapproved.is_empty() {
        SubVerdict::new(
            id,
            SubOutcome::Pass,
            crate::format_exact!("{noun} {} all among {source}", list(observed)),
        )
    } else {
        SubVerdict::new(
            id,
            SubOutcome::Fail,
            crate::format_exact!("{noun} {} not among {source}", list(&unapproved)),
        )
    }
}

/// Why no policy value under `key` applies to this bundle, for a reduction or a note:
/// `no --policy given`, or `policy FILE states no KEY for this endpoint`. Texts that
/// stand in for a policy decision name this, so they never claim a policy was absent
/// when one was given.
pub(crate) fn absent(cx: &Context<'_>, key: &str) -> String {
    match cx.policy {
        None => "no --policy given".to_string(),
        Some(p) => crate::format_exact!(
            "policy {} states no {key} for this endpoint",
            crate::fmt::Line(&p.file)
        ),
    }
}
