//! Small conversions for report details.

use serde::{Serialize, Serializer};
use serde_json::Value;

use crate::verdict::{SubOutcome, SubVerdict};

/// `value`, or JSON null when absent.
pub fn or_null<T: Into<Value>>(value: Option<T>) -> Value {
    value.map_or(Value::Null, Into::into)
}

/// Entries kept in order and serialised as one JSON object (`{key: value, …}`), for
/// details keyed by leg id, revision or collector leg.
#[derive(Debug, Clone, PartialEq)]
pub struct Keyed<K, V>(pub Vec<(K, V)>);

impl<K, V> Default for Keyed<K, V> {
    fn default() -> Self {
        Keyed(Vec::new())
    }
}

impl<K, V> Keyed<K, V> {
    /// Add an entry after the others.
    pub fn push(&mut self, key: K, value: V) {
        self.0.push((key, value));
    }
}

impl<K: Serialize, V: Serialize> Serialize for Keyed<K, V> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().map(|(k, v)| (k, v)))
    }
}

/// Each leg's outcome by leg id, in leg order: the `legs` detail of a multi-leg check,
/// keyed by references the runner renders (`2.4a`, [`crate::refs::here`]).
pub fn leg_outcomes<'a>(
    legs: impl IntoIterator<Item = &'a SubVerdict>,
) -> Keyed<String, SubOutcome> {
    Keyed(
        legs.into_iter()
            .map(|l| (crate::refs::here(&l.id), l.outcome))
            .collect(),
    )
}
