//! Check ids: the 36 recommendations of the CIS MCP Server Benchmark v1.0.0 that this
//! tool grades or reports, as one closed type, so a misspelt id does not compile and a
//! `match` over ids is checked for completeness. Both binaries use it: the grader's
//! catalogue and the collector's notices name checks by these values.

use std::fmt;

/// One benchmark check, by its benchmark number (`C5_1_1` is `5.1.1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum CheckId {
    C1_1,
    C1_2,
    C1_3,
    C1_4,
    C2_1,
    C2_2,
    C2_3,
    C2_4,
    C2_5,
    C3_1_1,
    C3_1_2,
    C3_2_1,
    C3_2_2,
    C3_2_3,
    C3_3_1,
    C3_3_2,
    C3_3_3,
    C3_3_4,
    C3_3_5,
    C5_1_1,
    C5_1_2,
    C5_1_3,
    C5_2_1,
    C5_2_2,
    C5_2_3,
    C5_3_1,
    C5_4_1,
    C5_5_1,
    C5_6_1,
    C7_1_1,
    C7_1_2,
    C7_1_3,
    C7_2_1,
    C7_2_2,
    C10_1,
    C10_2,
}

impl CheckId {
    /// Every check, in benchmark order.
    pub const ALL: [CheckId; 36] = [
        CheckId::C1_1,
        CheckId::C1_2,
        CheckId::C1_3,
        CheckId::C1_4,
        CheckId::C2_1,
        CheckId::C2_2,
        CheckId::C2_3,
        CheckId::C2_4,
        CheckId::C2_5,
        CheckId::C3_1_1,
        CheckId::C3_1_2,
        CheckId::C3_2_1,
        CheckId::C3_2_2,
        CheckId::C3_2_3,
        CheckId::C3_3_1,
        CheckId::C3_3_2,
        CheckId::C3_3_3,
        CheckId::C3_3_4,
        CheckId::C3_3_5,
        CheckId::C5_1_1,
        CheckId::C5_1_2,
        CheckId::C5_1_3,
        CheckId::C5_2_1,
        CheckId::C5_2_2,
        CheckId::C5_2_3,
        CheckId::C5_3_1,
        CheckId::C5_4_1,
        CheckId::C5_5_1,
        CheckId::C5_6_1,
        CheckId::C7_1_1,
        CheckId::C7_1_2,
        CheckId::C7_1_3,
        CheckId::C7_2_1,
        CheckId::C7_2_2,
        CheckId::C10_1,
        CheckId::C10_2,
    ];

    /// The benchmark number (`5.1.1`).
    pub const fn as_str(self) -> &'static str {
        match self {
            CheckId::C1_1 => "1.1",
            CheckId::C1_2 => "1.2",
            CheckId::C1_3 => "1.3",
            CheckId::C1_4 => "1.4",
            CheckId::C2_1 => "2.1",
            CheckId::C2_2 => "2.2",
            CheckId::C2_3 => "2.3",
            CheckId::C2_4 => "2.4",
            CheckId::C2_5 => "2.5",
            CheckId::C3_1_1 => "3.1.1",
            CheckId::C3_1_2 => "3.1.2",
            CheckId::C3_2_1 => "3.2.1",
            CheckId::C3_2_2 => "3.2.2",
            CheckId::C3_2_3 => "3.2.3",
            CheckId::C3_3_1 => "3.3.1",
            CheckId::C3_3_2 => "3.3.2",
            CheckId::C3_3_3 => "3.3.3",
            CheckId::C3_3_4 => "3.3.4",
            CheckId::C3_3_5 => "3.3.5",
            CheckId::C5_1_1 => "5.1.1",
            CheckId::C5_1_2 => "5.1.2",
            CheckId::C5_1_3 => "5.1.3",
            CheckId::C5_2_1 => "5.2.1",
            CheckId::C5_2_2 => "5.2.2",
            CheckId::C5_2_3 => "5.2.3",
            CheckId::C5_3_1 => "5.3.1",
            CheckId::C5_4_1 => "5.4.1",
            CheckId::C5_5_1 => "5.5.1",
            CheckId::C5_6_1 => "5.6.1",
            CheckId::C7_1_1 => "7.1.1",
            CheckId::C7_1_2 => "7.1.2",
            CheckId::C7_1_3 => "7.1.3",
            CheckId::C7_2_1 => "7.2.1",
            CheckId::C7_2_2 => "7.2.2",
            CheckId::C10_1 => "10.1",
            CheckId::C10_2 => "10.2",
        }
    }

    /// The check numbered `id` (`5.1.1`).
    pub fn parse(id: &str) -> Option<CheckId> {
        CheckId::ALL.iter().copied().find(|c| c.as_str() == id)
    }

    /// The section number (`5` for `5.1.1`).
    pub fn section(self) -> &'static str {
        let s = self.as_str();
        s.split('.').next().unwrap_or(s)
    }

    /// Numeric sort key (`1.4` < `2.1` < `10.1`, never string order).
    pub fn key(self) -> Vec<u32> {
        self.as_str()
            .split('.')
            .map(|p| p.parse().unwrap_or(u32::MAX))
            .collect()
    }
}

impl fmt::Display for CheckId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::ops::Deref for CheckId {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq<str> for CheckId {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for CheckId {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl serde::Serialize for CheckId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_and_sort_numerically() {
        for c in CheckId::ALL {
            assert_eq!(CheckId::parse(c.as_str()), Some(c));
        }
        let keys: Vec<Vec<u32>> = CheckId::ALL.iter().map(|c| c.key()).collect();
        let mut sorted = keys.clone();
        sorted.sort();
        assert_eq!(keys, sorted);
        assert_eq!(CheckId::parse("5.1"), None);
    }
}
