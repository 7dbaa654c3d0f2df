//! The leg index of a bundle ([`crate::evidence::Bundle::records_for`]): each recorded
//! leg name, with the positions of the records naming it.
//!
//! The names come from the bundle, so the index must not degrade on names chosen to
//! collide. A hash table of the bundle's names would need a secret key for that (a
//! multiply-and-rotate hash such as FxHash has collisions whatever its seed, and a bundle
//! of many colliding names would make building the table quadratic), and std's keyed
//! SipHash costs more than the rest of a lookup. This index hashes no name of the bundle
//! into a table of its own:
//!
//! * The legs this build knows ([`leg::ALL`]) are placed once per process in a fixed
//!   open-addressed table ([`KnownLegs`]). A name is looked up there by a cheap unkeyed
//!   hash, then compared with the known legs of the slots it probes, up to the first
//!   empty slot. The table holds only the build's own names, so however a bundle's names
//!   collide, a lookup probes at most the table's longest run of full slots (fixed when
//!   the program is built), and nothing of the bundle is ever inserted.
//! * The positions of each known leg's records are found by its position in
//!   [`leg::ALL`]: a counting sort of the bundle's known names, linear in them.
//! * Every other name (a leg of another revision, `<leg>@<revision>`, or a name this
//!   build does not know) is kept sorted ([`SortedLegs`]) and found by binary search:
//!   logarithmic whatever the names.

use mcp_probe_schema::model::Record;
use mcp_probe_schema::vocab::leg;
use std::cmp::Ordering;
use std::sync::OnceLock;

/// Leg names to the positions of their records (each position once, in order).
#[derive(Debug, Default)]
pub(crate) struct LegIndex {
    /// For each leg of [`leg::ALL`], by its position there: where the positions of its
    /// records lie in `at` (empty when no record names it).
    known: Vec<(u32, u32)>,
    /// The positions of the known legs' records, one leg's after the other.
    at: Vec<u32>,
    /// Every name that is not a leg of [`leg::ALL`].
    other: SortedLegs,
}

impl LegIndex {
    /// The positions of the records naming `name`, in order (none when no record does).
    pub(crate) fn get(&self, name: &str) -> &[u32] {
        match known_legs().find(name) {
            Some(k) => self
                .known
                .get(k)
                .and_then(|&(from, to)| self.at.get(from as usize..to as usize))
                .unwrap_or_default(),
            None => self.other.get(name),
        }
    }

    /// The index of `known` (a leg's position in [`leg::ALL`] and the position of a
    /// record naming it, each leg's positions in increasing order) and `other` (every
    /// other name and a position): a position given twice for one name counts once.
    fn build(known: &[(u32, u32)], other: &mut [(Probe, &str, u32)]) -> LegIndex {
        let legs = leg::ALL.len();
        // A counting sort by leg: where each leg's positions start in `at`.
        let mut start = vec![0u32; legs + 1];
        for &(k, _) in known {
            if let Some(n) = start.get_mut(k as usize + 1) {
                *n += 1;
            }
        }
        for k in 1..start.len() {
            start[k] += start[k - 1];
        }
        let mut end = start.clone();
        let mut at = vec![0u32; known.len()];
        for &(k, i) in known {
            let (Some(&from), Some(to)) = (start.get(k as usize), end.get_mut(k as usize)) else {
                continue;
            };
            // The same position again (a record naming the leg twice) leaves a gap
            // after the leg's positions, never read.
            if *to > from && at.get(*to as usize - 1) == Some(&i) {
                continue;
            }
            if let Some(slot) = at.get_mut(*to as usize) {
                *slot = i;
                *to += 1;
            }
        }
        LegIndex {
            known: start
                .iter()
                .zip(&end)
                .take(legs)
                .map(|(&a, &b)| (a, b))
                .collect(),
            at,
            other: SortedLegs::build(other),
        }
    }

    /// The legs recorded for `revision` (`<leg>@<revision>`), by the leg's own name: the
    /// index another era's view reads its per-era legs from.
    pub(crate) fn on_revision(&self, revision: &str) -> LegIndex {
        let mut known = Vec::new();
        let mut other = Vec::new();
        for key in &self.other.keys {
            let Some(name) = self
                .other
                .name(key)
                .strip_suffix(revision)
                .and_then(|l| l.strip_suffix('@'))
            else {
                continue;
            };
            let positions = self.other.positions(key);
            match known_legs().find(name).and_then(|k| u32::try_from(k).ok()) {
                Some(k) => known.extend(positions.iter().map(|&i| (k, i))),
                None => {
                    let probe = Probe::of(name.as_bytes());
                    other.extend(positions.iter().map(|&i| (probe, name, i)));
                }
            }
        }
        LegIndex::build(&known, &mut other)
    }
}

/// [`crate::evidence::Bundle`]'s leg index: each recorded leg name, with the positions
/// of the records naming it.
pub(crate) fn leg_index(records: &[Record]) -> LegIndex {
    let table = known_legs();
    let mut known = Vec::with_capacity(records.len() * 2);
    let mut other = Vec::new();
    for (i, r) in records.iter().enumerate() {
        let Ok(i) = u32::try_from(i) else { break };
        for l in &r.legs {
            match table.find(l).and_then(|k| u32::try_from(k).ok()) {
                Some(k) => known.push((k, i)),
                None => other.push((Probe::of(l.as_bytes()), l.as_str(), i)),
            }
        }
    }
    LegIndex::build(&known, &mut other)
}

/// What is compared of a name before its bytes: its length, its first eight bytes and
/// its last eight (each read as one integer, zero-padded when the name is shorter). Also
/// what [`KnownLegs`] hashes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Probe {
    len: usize,
    head: u64,
    tail: u64,
}

impl Probe {
    fn of(name: &[u8]) -> Probe {
        let (head, tail) = match (name.first_chunk::<8>(), name.last_chunk::<8>()) {
            (Some(h), Some(t)) => (u64::from_le_bytes(*h), u64::from_le_bytes(*t)),
            _ => {
                let w = name
                    .iter()
                    .enumerate()
                    .fold(0u64, |w, (i, &b)| w | u64::from(b) << (8 * i));
                (w, w)
            }
        };
        Probe {
            len: name.len(),
            head,
            tail,
        }
    }

    /// An unkeyed hash of the probe (multiply and shift): only ever used on
    /// [`KnownLegs`]'s fixed table.
    fn hash(self) -> u64 {
        (self.head ^ self.tail.rotate_left(32) ^ self.len as u64)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }
}

/// The legs of [`leg::ALL`] in an open-addressed table (linear probing), built once per
/// process: a slot holds a leg's position in [`leg::ALL`] plus one, or 0 when empty. At
/// most a quarter of the slots are full.
struct KnownLegs {
    slots: Vec<u16>,
    bits: u32,
}

fn known_legs() -> &'static KnownLegs {
    static TABLE: OnceLock<KnownLegs> = OnceLock::new();
    TABLE.get_or_init(KnownLegs::new)
}

impl KnownLegs {
    fn new() -> KnownLegs {
        let bits = (leg::ALL.len() * 4)
            .next_power_of_two()
            .trailing_zeros()
            .max(4);
        let mut table = KnownLegs {
            slots: vec![0; 1 << bits],
            bits,
        };
        for (i, l) in leg::ALL.iter().enumerate() {
            // A leg past the 65,534th is not placed: it is read as any other name.
            let Ok(v) = u16::try_from(i + 1) else { break };
            if table.find(l.as_str()).is_some() {
                continue;
            }
            let mut s = table.first_slot(l.as_str());
            while table.slots.get(s).is_some_and(|&v| v != 0) {
                s = table.next_slot(s);
            }
            if let Some(slot) = table.slots.get_mut(s) {
                *slot = v;
            }
        }
        table
    }

    fn first_slot(&self, name: &str) -> usize {
        (Probe::of(name.as_bytes()).hash() >> (64 - self.bits)) as usize
    }

    fn next_slot(&self, s: usize) -> usize {
        (s + 1) & (self.slots.len() - 1)
    }

    /// The position in [`leg::ALL`] of the leg recorded as `name`, if it is one.
    fn find(&self, name: &str) -> Option<usize> {
        let mut s = self.first_slot(name);
        loop {
            let v = *self.slots.get(s)?;
            let k = usize::from(v).checked_sub(1)?;
            if leg::ALL.get(k)?.as_str() == name {
                return Some(k);
            }
            s = self.next_slot(s);
        }
    }

    /// The longest run of full slots (what a lookup probes at most, plus one).
    #[cfg(test)]
    fn longest_run(&self) -> usize {
        let (mut longest, mut run) = (0, 0);
        // Twice round: a run may wrap past the last slot.
        for v in self.slots.iter().chain(&self.slots) {
            run = if *v == 0 { 0 } else { run + 1 };
            longest = longest.max(run);
        }
        longest
    }
}

/// Names in a fixed order, found by binary search: each name's [`Probe`] is compared
/// first (integers) and only names with equal probes byte by byte.
#[derive(Debug, Default)]
struct SortedLegs {
    /// Every distinct name, one after the other.
    names: String,
    /// One per distinct name, in [`SortedLegs::order`]: its probe, where it lies in
    /// `names`, and where the positions of its records lie in `at`.
    keys: Vec<SortedKey>,
    /// The positions of the records naming each name, one name's after the other.
    at: Vec<u32>,
}

/// One name of a [`SortedLegs`]: its bytes `names[name.0..name.1]`, its records'
/// positions `at[at.0..at.1]`.
#[derive(Debug, Clone, Copy)]
struct SortedKey {
    probe: Probe,
    name: (u32, u32),
    at: (u32, u32),
}

impl SortedLegs {
    /// The order of the names: by [`Probe`], then by bytes (a total order: the bytes
    /// decide between names whose probes are equal).
    fn order(a: (Probe, &[u8]), b: (Probe, &[u8])) -> Ordering {
        a.0.cmp(&b.0).then_with(|| a.1.cmp(b.1))
    }

    /// The names of `entries` (a name, its probe and the position of a record naming
    /// it), which it sorts; a position given twice for one name counts once.
    fn build(entries: &mut [(Probe, &str, u32)]) -> SortedLegs {
        entries.sort_unstable_by(|a, b| {
            SortedLegs::order((a.0, a.1.as_bytes()), (b.0, b.1.as_bytes())).then(a.2.cmp(&b.2))
        });
        let mut sorted = SortedLegs {
            names: String::new(),
            keys: Vec::new(),
            at: Vec::with_capacity(entries.len()),
        };
        let mut last: Option<&str> = None;
        for &(probe, name, i) in entries.iter() {
            if last != Some(name) {
                let (Ok(from), Ok(to), Ok(at)) = (
                    u32::try_from(sorted.names.len()),
                    u32::try_from(sorted.names.len() + name.len()),
                    u32::try_from(sorted.at.len()),
                ) else {
                    break;
                };
                sorted.names.push_str(name);
                sorted.keys.push(SortedKey {
                    probe,
                    name: (from, to),
                    at: (at, at),
                });
                last = Some(name);
            } else if sorted.at.last() == Some(&i) {
                continue;
            }
            let Some(key) = sorted.keys.last_mut() else {
                break;
            };
            let Ok(end) = u32::try_from(sorted.at.len() + 1) else {
                break;
            };
            sorted.at.push(i);
            key.at.1 = end;
        }
        sorted
    }

    /// The name of `key`.
    fn name(&self, key: &SortedKey) -> &str {
        self.names
            .get(key.name.0 as usize..key.name.1 as usize)
            .unwrap_or_default()
    }

    /// The positions of `key`'s records.
    fn positions(&self, key: &SortedKey) -> &[u32] {
        self.at
            .get(key.at.0 as usize..key.at.1 as usize)
            .unwrap_or_default()
    }

    /// The positions of the records naming `name`, in order (none when no record does).
    fn get(&self, name: &str) -> &[u32] {
        let probe = Probe::of(name.as_bytes());
        let found = self.keys.binary_search_by(|k| {
            SortedLegs::order((k.probe, self.name(k).as_bytes()), (probe, name.as_bytes()))
        });
        match found {
            Ok(k) => self.keys.get(k).map_or(&[], |k| self.positions(k)),
            Err(_) => &[],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_probe_schema::vocab::LegId;

    /// The index read the slow way: every record scanned for the name.
    fn scan(legs: &[Vec<String>], name: &str) -> Vec<u32> {
        (0u32..)
            .zip(legs)
            .filter(|(_, l)| l.iter().any(|l| l == name))
            .map(|(i, _)| i)
            .collect()
    }

    fn records(legs: &[Vec<String>]) -> Vec<Record> {
        legs.iter()
            .map(|l| crate::fixture::exchange(l, "{}", 200, "application/json", "{}", &[]))
            .collect()
    }

    /// A small generator (xorshift), so that the cases are the same at every run.
    struct Gen(u64);

    impl Gen {
        fn next(&mut self, below: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % below as u64) as usize
        }
    }

    /// Names to draw from: every known leg, some of them on two revisions, and names
    /// no build knows, among them names of one length that share their first and last
    /// eight bytes (equal probes), and short ones.
    fn pool() -> Vec<String> {
        let mut pool: Vec<String> = leg::ALL.iter().map(|l| l.as_str().to_string()).collect();
        for l in leg::ALL.iter().take(12) {
            pool.push(l.on_revision("2025-11-25"));
            pool.push(l.on_revision("2025-06-18"));
        }
        for c in 'a'..='p' {
            pool.push(format!("unknown.{c}{c}.same-tail"));
        }
        pool.extend(["", "a", "ab", "abcdefg", "abcdefgh", "abcdefghi"].map(String::from));
        pool
    }

    /// Every name of the pool, and the era view of each revision, reads the records the
    /// slow scan finds, in order and each once, over bundles of records naming one to
    /// six names drawn at random (repeats within a record included).
    #[test]
    fn the_index_reads_what_a_scan_of_the_records_reads() {
        let pool = pool();
        let mut g = Gen(0x2545_F491_4F6C_DD1D);
        for case in 0..200 {
            let n = g.next(40);
            let legs: Vec<Vec<String>> = (0..n)
                .map(|_| {
                    (0..1 + g.next(6))
                        .map(|_| pool[g.next(pool.len())].clone())
                        .collect()
                })
                .collect();
            let index = leg_index(&records(&legs));
            for name in &pool {
                assert_eq!(index.get(name), scan(&legs, name), "case {case}: {name:?}");
            }
            assert_eq!(index.get("never.recorded"), [0u32; 0]);
            for rev in ["2025-11-25", "2025-06-18", "1999-01-01"] {
                let era = index.on_revision(rev);
                for name in &pool {
                    let want = scan(&legs, &format!("{name}@{rev}"));
                    assert_eq!(era.get(name), want, "case {case}: {name:?} on {rev}");
                }
            }
        }
    }

    /// A leg made by a fixture, known to no table, is read like any other name.
    #[test]
    fn a_leg_this_build_does_not_know_is_found_by_its_name() {
        let odd = LegId::new("fixture.only");
        assert!(!leg::ALL.contains(&odd));
        let legs = vec![
            vec!["fixture.only".to_string()],
            vec![leg::ENDPOINT_DETECT.to_string()],
        ];
        let index = leg_index(&records(&legs));
        assert_eq!(index.get(odd.as_str()), [0]);
        assert_eq!(index.get(leg::ENDPOINT_DETECT.as_str()), [1]);
    }

    /// Every known leg is found in the fixed table at its position in `leg::ALL`, no
    /// other name is, and a lookup probes few slots whatever it looks up.
    #[test]
    fn the_fixed_table_finds_every_known_leg_and_only_those() {
        let table = known_legs();
        for (i, l) in leg::ALL.iter().enumerate() {
            let k = table.find(l.as_str()).expect("known");
            assert_eq!(leg::ALL[k].as_str(), l.as_str(), "{i}");
        }
        for name in ["", "endpoint", "endpoint.detect@2025-11-25", "fixture.only"] {
            assert_eq!(table.find(name), None, "{name}");
        }
        assert!(table.slots.iter().filter(|&&v| v != 0).count() * 4 <= table.slots.len());
        assert!(table.longest_run() <= 16, "{}", table.longest_run());
    }

    /// Many names that one unkeyed hash sends to one slot cost a lookup no more than
    /// the table's longest run: nothing of the bundle is inserted in that table.
    #[test]
    fn colliding_names_do_not_grow_the_fixed_table() {
        let table = known_legs();
        let before = table.slots.clone();
        let target = table.first_slot(leg::ENDPOINT_DETECT.as_str());
        let colliding: Vec<String> = (0..200_000u32)
            .map(|i| format!("x{i:08}"))
            .filter(|n| table.first_slot(n) == target)
            .take(64)
            .collect();
        assert!(colliding.len() > 1);
        let legs: Vec<Vec<String>> = colliding.iter().map(|n| vec![n.clone()]).collect();
        let index = leg_index(&records(&legs));
        for (i, n) in colliding.iter().enumerate() {
            assert_eq!(index.get(n), [i as u32]);
        }
        assert_eq!(table.slots, before);
    }
}
