//! Checks named by rule id, for the tests: a test that means a rule names it by its
//! stable id and reads its number, when it must, through a definition; a test that means
//! the numbering of cis-mcp-server-1.0.0 pins that definition by id ([`V1`]).

use mcp_probe_evaluator::benchmark::{Benchmark, Entry};
use mcp_probe_evaluator::check::{Check, Context};
use mcp_probe_evaluator::evidence::Bundle;
use mcp_probe_evaluator::verdict::Outcome;
use serde_json::Value;

/// The id of the first benchmark definition, embedded in every build.
pub const V1: &str = "cis-mcp-server-1.0.0";

/// The embedded definition [`V1`], by id (not "the newest").
pub fn v1() -> &'static Benchmark {
    Benchmark::embedded()
        .expect("the embedded definitions load")
        .iter()
        .copied()
        .find(|b| b.id == V1)
        .unwrap_or_else(|| panic!("{V1} is not embedded"))
}

/// The row of [`V1`] graded by rule `rule` (the first, when it grades several).
pub fn row(rule: &str) -> &'static Entry {
    v1().checks
        .iter()
        .find(|e| e.rule == rule)
        .unwrap_or_else(|| panic!("{V1} grades nothing by rule {rule}"))
}

/// Rule `rule`'s number under [`V1`] (`2.4` for `metadata-headers`).
pub fn number(rule: &str) -> &'static str {
    row(rule).id.as_str()
}

/// Sub-verdict `sub` of rule `rule` as [`V1`] prints it (`"a"` → `2.4a`).
pub fn leg_id(rule: &str, sub: &str) -> String {
    format!("{}{sub}", number(rule))
}

/// The code of rule `rule`.
pub fn rule(rule: &str) -> &'static dyn Check {
    mcp_probe_evaluator::rules::rule(rule).unwrap_or_else(|| panic!("no rule {rule}"))
}

/// Rule `rule` run on `ev` with `cx` (one era, no row), rendered outside any definition:
/// sub-verdicts by their local names (`a`), other rules as `[rule-id]`.
pub fn run(rule_id: &str, ev: &Bundle, cx: &Context<'_>) -> Outcome {
    mcp_probe_evaluator::fixture::local(mcp_probe_evaluator::preconditions::run_rule(
        rule(rule_id),
        ev,
        cx,
    ))
}

/// Rule `rule`'s row of the newest definition graded on `ev` by the runner (every era the
/// row asks for), rendered outside any definition ([`run`]).
pub fn graded(ev: &Bundle, rule: &str) -> Outcome {
    mcp_probe_evaluator::fixture::graded(ev, rule)
}

/// The check of a JSON report (`mcp-grade --format json`) graded by rule `rule`.
pub fn check<'a>(report: &'a Value, rule: &str) -> &'a Value {
    report["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .find(|c| c["rule"] == rule)
        .unwrap_or_else(|| panic!("no check graded by {rule} in the report"))
}

/// Where `text` prints check number `num` as a check or sub-verdict id: `num` itself or
/// `num` and one sub-verdict letter (`2.4`, `2.4a`, `2.4a@2025-11-25`), as byte ranges of
/// that token (`2.4a`). Not counted: `num` inside a longer number or version (`12.4`,
/// `2.4.1`, `10.2.4.5`), after a letter (`v2.4`), and the wire leg ids of the bundle
/// vocabulary (`2.4.no_method`, `10.2a.padded`: historical names the bundle format fixes,
/// which no definition renumbers).
pub fn number_spans(text: &str, num: &str) -> Vec<std::ops::Range<usize>> {
    let b = text.as_bytes();
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = text[from..].find(num).map(|i| i + from) {
        from = i + 1;
        if i > 0 && (word(b[i - 1]) || b[i - 1] == b'.') {
            continue;
        }
        let mut end = i + num.len();
        if b.get(end).is_some_and(u8::is_ascii_lowercase)
            && !b.get(end + 1).is_some_and(|&c| word(c))
        {
            end += 1;
        }
        match b.get(end) {
            Some(&c) if word(c) => continue,
            Some(b'.') if b.get(end + 1).is_some_and(|&c| word(c)) => continue,
            _ => {}
        }
        out.push(i..end);
        from = end;
    }
    out
}

/// The tokens of [`number_spans`] (`2.4`, `2.4a`), in order.
pub fn number_tokens(text: &str, num: &str) -> Vec<String> {
    number_spans(text, num)
        .into_iter()
        .map(|r| text[r].to_string())
        .collect()
}

/// `text` with every [`number_spans`] occurrence of `old` written as `new` (`2.4a` →
/// `2.6a`); everything else, wire leg ids included, unchanged.
pub fn swap_number(text: &str, old: &str, new: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for r in number_spans(text, old) {
        out.push_str(&text[last..r.start]);
        out.push_str(new);
        last = r.start + old.len();
    }
    out.push_str(&text[last..]);
    out
}
