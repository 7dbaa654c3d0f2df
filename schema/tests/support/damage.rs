//! Damage done to encoded bytes by the property tests (`robust.rs`, `decode_equiv.rs`):
//! a byte flipped, the bytes cut short, bytes inserted or deleted.

use proptest::prelude::*;

#[derive(Debug, Clone)]
pub(crate) enum Mutation {
    Flip { at: usize, mask: u8 },
    Truncate { len: usize },
    Insert { at: usize, bytes: Vec<u8> },
    Delete { at: usize, n: usize },
}

/// One mutation: inserting fewer than `insert` bytes, deleting fewer than `delete`.
pub(crate) fn mutation(insert: usize, delete: usize) -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 1u8..=255).prop_map(|(at, mask)| Mutation::Flip { at, mask }),
        any::<usize>().prop_map(|len| Mutation::Truncate { len }),
        (
            any::<usize>(),
            prop::collection::vec(any::<u8>(), 1..insert)
        )
            .prop_map(|(at, bytes)| Mutation::Insert { at, bytes }),
        (any::<usize>(), 1usize..delete).prop_map(|(at, n)| Mutation::Delete { at, n }),
    ]
}

/// Apply `m` to `bytes` (not empty); positions are taken modulo the length.
pub(crate) fn apply(bytes: &mut Vec<u8>, m: &Mutation) {
    let len = bytes.len();
    match m {
        Mutation::Flip { at, mask } => bytes[at % len] ^= mask,
        Mutation::Truncate { len: l } => bytes.truncate(l % len),
        Mutation::Insert { at, bytes: b } => {
            let at = at % (len + 1);
            bytes.splice(at..at, b.iter().copied());
        }
        Mutation::Delete { at, n } => {
            let at = at % len;
            bytes.drain(at..(at + n).min(len));
        }
    }
}

/// The item `pick` (modulo their count) of `from`, with `ms` applied in turn while it is
/// not empty.
#[allow(dead_code)] // used by some of the test crates that include this module
pub(crate) fn damaged(from: &[Vec<u8>], pick: usize, ms: &[Mutation]) -> Vec<u8> {
    let mut b = from[pick % from.len()].clone();
    for m in ms {
        if !b.is_empty() {
            apply(&mut b, m);
        }
    }
    b
}
