//! Which check of OLD is which check of NEW, for [`super::report`]. When both reports
//! carry rule ids (`checks[].rule`), checks are mapped through the rule, so a check that
//! was renumbered is still the same check; otherwise by check id. Pure: reads only the
//! id, rule and params of each check.

use serde::Serialize;
use serde_json::Value;

/// The part of a check the mapping reads.
#[derive(Debug, Clone, PartialEq)]
pub struct Key {
    /// `checks[].id`.
    pub id: String,
    /// `checks[].rule`, when the report carries it.
    pub rule: Option<String>,
    /// `checks[].params`, when the report carries it.
    pub params: Option<Value>,
}

/// How checks were mapped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum MappedBy {
    /// Through `checks[].rule` (and `params` for a rule graded by several checks).
    Rule,
    /// By `checks[].id`: at least one report carries no rule ids.
    Id,
}

/// What became of one check between OLD and NEW.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    /// The same check: same id, and the same rule and params when carried.
    Same,
    /// The same rule under another check id.
    Renumbered,
    /// The same rule with other parameter values (both reports carry them).
    ParamsChanged,
    /// Only in NEW.
    Added,
    /// Only in OLD.
    Removed,
}

/// One check of OLD, of NEW, or of both (indices into the two lists of checks).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pair {
    /// Its index in OLD's checks.
    pub old: Option<usize>,
    /// Its index in NEW's checks.
    pub new: Option<usize>,
}

impl Pair {
    /// What became of the check: `added`, `removed`, `same`, or one or both of
    /// `renumbered` and `params-changed`.
    pub fn class(&self, old: &[Key], new: &[Key]) -> Vec<Class> {
        match (self.old.map(|i| &old[i]), self.new.map(|j| &new[j])) {
            (Some(a), Some(b)) => {
                let mut c = Vec::new();
                if a.id != b.id {
                    c.push(Class::Renumbered);
                }
                // Params a report does not carry are unknown, not changed.
                if a.params.is_some() && b.params.is_some() && a.params != b.params {
                    c.push(Class::ParamsChanged);
                }
                if c.is_empty() {
                    c.push(Class::Same);
                }
                c
            }
            (Some(_), None) => vec![Class::Removed],
            _ => vec![Class::Added],
        }
    }
}

/// The mapping, and why checks were matched by id when they were.
#[derive(Debug)]
pub struct Mapping {
    /// Rule or id.
    pub by: MappedBy,
    /// Why by id (which report lacks rule ids); `None` when by rule.
    pub note: Option<String>,
    /// Every check of either side once, in check-id order.
    pub pairs: Vec<Pair>,
}

/// Map the checks of OLD onto those of NEW. By rule when both carry at least one rule id
/// (checks without one, in either, are matched by id among themselves); else by id.
pub fn map(old: &[Key], new: &[Key]) -> Mapping {
    let has_rules = |ks: &[Key]| ks.iter().any(|k| k.rule.is_some());
    let (ro, rn) = (has_rules(old), has_rules(new));
    let mut pairs = Vec::new();
    let (by, note) = if ro && rn {
        for rule in rules(old, new) {
            let a: Vec<usize> = indices(old, |k| k.rule.as_deref() == Some(rule));
            let b: Vec<usize> = indices(new, |k| k.rule.as_deref() == Some(rule));
            pairs.extend(within_rule(old, new, a, b));
        }
        let a = indices(old, |k| k.rule.is_none());
        let b = indices(new, |k| k.rule.is_none());
        pairs.extend(by_id(old, new, &a, &b));
        (MappedBy::Rule, None)
    } else {
        let why = match (ro, rn) {
            (false, false) => "neither report carries rule ids",
            (false, true) => "OLD carries no rule ids",
            _ => "NEW carries no rule ids",
        };
        let a: Vec<usize> = (0..old.len()).collect();
        let b: Vec<usize> = (0..new.len()).collect();
        pairs.extend(by_id(old, new, &a, &b));
        (
            MappedBy::Id,
            Some(format!(
                "matched by check id, not rule id ({why}: reports from before benchmark definitions; a renumbered check shows as removed and added)"
            )),
        )
    };
    pairs.sort_by_key(|x| order(x, old, new));
    Mapping { by, note, pairs }
}

fn indices(ks: &[Key], f: impl Fn(&Key) -> bool) -> Vec<usize> {
    (0..ks.len()).filter(|&i| f(&ks[i])).collect()
}

/// Every rule id of either side, once, in the order first seen (OLD first).
fn rules<'a>(old: &'a [Key], new: &'a [Key]) -> Vec<&'a str> {
    let mut seen: Vec<&str> = Vec::new();
    for k in old.iter().chain(new) {
        if let Some(r) = k.rule.as_deref() {
            if !seen.contains(&r) {
                seen.push(r);
            }
        }
    }
    seen
}

/// Pair the checks of one rule. A rule graded by one check on each side: that pair,
/// whatever its id and params. A rule graded by several checks: the key is the rule with
/// its params, so first the checks with equal params pair, then those with an equal id
/// (params changed), then, when exactly one is left on each side, those two; the rest are
/// removed (OLD) and added (NEW).
fn within_rule(old: &[Key], new: &[Key], mut a: Vec<usize>, mut b: Vec<usize>) -> Vec<Pair> {
    let mut out = Vec::new();
    let mut take = |a: &mut Vec<usize>, b: &mut Vec<usize>, same: &dyn Fn(&Key, &Key) -> bool| {
        let mut i = 0;
        while i < a.len() {
            if let Some(p) = b.iter().position(|&j| same(&old[a[i]], &new[j])) {
                out.push(Pair {
                    old: Some(a.remove(i)),
                    new: Some(b.remove(p)),
                });
            } else {
                i += 1;
            }
        }
    };
    if a.len() > 1 || b.len() > 1 {
        take(&mut a, &mut b, &|x, y| x.params == y.params);
        take(&mut a, &mut b, &|x, y| x.id == y.id);
    }
    if let ([i], [j]) = (a.as_slice(), b.as_slice()) {
        out.push(Pair {
            old: Some(*i),
            new: Some(*j),
        });
        a.clear();
        b.clear();
    }
    out.extend(a.into_iter().map(|i| Pair {
        old: Some(i),
        new: None,
    }));
    out.extend(b.into_iter().map(|j| Pair {
        old: None,
        new: Some(j),
    }));
    out
}

/// Pair checks of equal id (the first of each id; a repeated id is an extra check).
fn by_id(old: &[Key], new: &[Key], a: &[usize], b: &[usize]) -> Vec<Pair> {
    let mut left: Vec<usize> = b.to_vec();
    let mut out = Vec::new();
    for &i in a {
        let j = left
            .iter()
            .position(|&j| new[j].id == old[i].id)
            .map(|p| left.remove(p));
        out.push(Pair {
            old: Some(i),
            new: j,
        });
    }
    out.extend(left.into_iter().map(|j| Pair {
        old: None,
        new: Some(j),
    }));
    out
}

/// Sort key of a pair: its NEW id in numeric order (`1.4` < `2.1` < `10.1`), else its OLD
/// id; a removed check sorts after a check of NEW with the same id.
fn order(p: &Pair, old: &[Key], new: &[Key]) -> (Vec<(u64, String)>, bool) {
    let id = match (p.new, p.old) {
        (Some(j), _) => &new[j].id,
        (None, Some(i)) => &old[i].id,
        (None, None) => "",
    };
    (id_order(id), p.new.is_none())
}

/// A check id as a numeric sort key: each dotted part by its leading number, then text.
pub fn id_order(id: &str) -> Vec<(u64, String)> {
    id.split('.')
        .map(|part| {
            let digits: String = part.chars().take_while(char::is_ascii_digit).collect();
            (
                digits.parse().unwrap_or(u64::MAX),
                part[digits.len()..].to_string(),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A check number of a made-up definition: `n(3, 3)` is `3.3`.
    fn n(section: u32, check: u32) -> String {
        format!("{section}.{check}")
    }

    fn k(id: String, rule: Option<&str>, params: Option<Value>) -> Key {
        Key {
            id,
            rule: rule.map(str::to_string),
            params,
        }
    }

    /// (old id, new id, classes) of every pair.
    fn pair_ids(old: &[Key], new: &[Key]) -> Vec<(Option<String>, Option<String>, Vec<Class>)> {
        map(old, new)
            .pairs
            .iter()
            .map(|p| {
                (
                    p.old.map(|i| old[i].id.clone()),
                    p.new.map(|j| new[j].id.clone()),
                    p.class(old, new),
                )
            })
            .collect()
    }

    fn s(x: String) -> Option<String> {
        Some(x)
    }

    #[test]
    fn a_rule_used_once_on_each_side_pairs_whatever_its_id_and_params() {
        let old = [
            k(n(1, 1), Some("a"), None),
            k(n(2, 2), Some("b"), Some(json!({"n": 1}))),
        ];
        let new = [
            k(n(1, 2), Some("a"), None),
            k(n(2, 2), Some("b"), Some(json!({"n": 2}))),
        ];
        assert_eq!(
            pair_ids(&old, &new),
            [
                (s(n(1, 1)), s(n(1, 2)), vec![Class::Renumbered]),
                (s(n(2, 2)), s(n(2, 2)), vec![Class::ParamsChanged]),
            ]
        );
        assert_eq!(map(&old, &new).by, MappedBy::Rule);
    }

    #[test]
    fn a_rule_graded_by_two_checks_is_two_checks_keyed_by_params() {
        // v1 grades 3.3 with lifetime 3600; v2 keeps 3.3 at 900 and adds 3.9 at 86400.
        let old = [k(n(3, 3), Some("t"), Some(json!({"max": 3600})))];
        let new = [
            k(n(3, 3), Some("t"), Some(json!({"max": 900}))),
            k(n(3, 9), Some("t"), Some(json!({"max": 86400}))),
        ];
        assert_eq!(
            pair_ids(&old, &new),
            [
                (s(n(3, 3)), s(n(3, 3)), vec![Class::ParamsChanged]),
                (None, s(n(3, 9)), vec![Class::Added]),
            ]
        );
        // Equal params win over equal ids: 2.5 moved to 2.6 and a new 2.5 was added.
        let old = [k(n(2, 5), Some("t"), Some(json!({"a": 1})))];
        let new = [
            k(n(2, 5), Some("t"), Some(json!({"a": 2}))),
            k(n(2, 6), Some("t"), Some(json!({"a": 1}))),
        ];
        assert_eq!(
            pair_ids(&old, &new),
            [
                (None, s(n(2, 5)), vec![Class::Added]),
                (s(n(2, 5)), s(n(2, 6)), vec![Class::Renumbered]),
            ]
        );
        // Nothing to tell them apart: not guessed.
        let old = [k(n(2, 5), Some("t"), Some(json!({"a": 1})))];
        let new = [
            k(n(2, 6), Some("t"), Some(json!({"a": 2}))),
            k(n(2, 7), Some("t"), Some(json!({"a": 3}))),
        ];
        assert_eq!(
            pair_ids(&old, &new),
            [
                (s(n(2, 5)), None, vec![Class::Removed]),
                (None, s(n(2, 6)), vec![Class::Added]),
                (None, s(n(2, 7)), vec![Class::Added]),
            ]
        );
    }

    #[test]
    fn another_rule_under_the_same_id_is_a_removed_and_an_added_check() {
        let old = [k(n(4, 1), Some("x"), None)];
        let new = [k(n(4, 1), Some("y"), None)];
        assert_eq!(
            pair_ids(&old, &new),
            [
                (None, s(n(4, 1)), vec![Class::Added]),
                (s(n(4, 1)), None, vec![Class::Removed]),
            ]
        );
    }

    #[test]
    fn without_rule_ids_checks_match_by_id_and_say_so() {
        let old = [k(n(1, 1), None, None), k(n(1, 2), None, None)];
        let new = [k(n(1, 1), Some("a"), None), k(n(1, 3), Some("b"), None)];
        let m = map(&old, &new);
        assert_eq!(m.by, MappedBy::Id);
        assert!(
            m.note
                .as_deref()
                .is_some_and(|n| n.contains("OLD carries no rule ids")),
            "{:?}",
            m.note
        );
        assert_eq!(
            pair_ids(&old, &new),
            [
                (s(n(1, 1)), s(n(1, 1)), vec![Class::Same]),
                (s(n(1, 2)), None, vec![Class::Removed]),
                (None, s(n(1, 3)), vec![Class::Added]),
            ]
        );
    }

    #[test]
    fn params_carried_by_one_side_only_are_unknown_not_changed() {
        let old = [k(n(1, 1), Some("a"), None)];
        let new = [k(n(1, 1), Some("a"), Some(json!({"n": 1})))];
        assert_eq!(
            pair_ids(&old, &new),
            [(s(n(1, 1)), s(n(1, 1)), vec![Class::Same])]
        );
    }

    #[test]
    fn ids_sort_numerically() {
        let dotted = |p: &[u32]| p.iter().map(u32::to_string).collect::<Vec<_>>().join(".");
        let want: Vec<String> = [&[1, 4][..], &[2, 1], &[3, 3, 2], &[3, 3, 10], &[10, 1]]
            .iter()
            .map(|p| dotted(p))
            .collect();
        let mut ids = want.clone();
        ids.reverse();
        ids.sort_by_key(|i| id_order(i));
        assert_eq!(ids, want);
        // Text after the number sorts within it (`1.1a` < `1.1b` < `1.2`).
        let mut legs = [format!("{}b", n(1, 1)), n(1, 2), format!("{}a", n(1, 1))];
        legs.sort_by_key(|i| id_order(i));
        assert_eq!(
            legs,
            [format!("{}a", n(1, 1)), format!("{}b", n(1, 1)), n(1, 2)]
        );
    }
}
