//! The implemented checks, one module per benchmark section. Each section module owns
//! its `CHECKS` list; [`registry`] joins them in benchmark order. A catalogue check that
//! no section lists is reported as not graded, never given a made-up verdict.

use std::sync::OnceLock;

use crate::catalogue::id_key;
use crate::check::Check;

pub mod s1;
pub mod s10;
pub mod s10_limits;
pub mod s1_versions;
pub mod s2;
pub mod s2_auth_origin;
pub mod s2_headers;
pub mod s2_tls;
pub mod s3;
pub mod s3_audience;
pub mod s3_deputy;
pub mod s3_oauth;
pub mod s3_scope_probe;
pub mod s5;
pub mod s5_session;
pub mod s7;

/// Every implemented check, in benchmark order.
pub fn registry() -> &'static [&'static dyn Check] {
    static REG: OnceLock<Vec<&'static dyn Check>> = OnceLock::new();
    REG.get_or_init(|| {
        let mut all: Vec<&'static dyn Check> = [
            s1::CHECKS,
            s1_versions::CHECKS,
            s2::CHECKS,
            s2_tls::CHECKS,
            s2_auth_origin::CHECKS,
            s2_headers::CHECKS,
            s3::CHECKS,
            s3_oauth::CHECKS,
            s3_audience::CHECKS,
            s3_deputy::CHECKS,
            s5::CHECKS,
            s5_session::CHECKS,
            s7::CHECKS,
            s10::CHECKS,
            s10_limits::CHECKS,
        ]
        .iter()
        .flat_map(|s| s.iter().copied())
        .collect();
        all.sort_by_key(|c| id_key(c.entry().id));
        all
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::CATALOGUE;

    #[test]
    fn every_registered_check_is_in_the_catalogue_once() {
        let ids: Vec<&str> = registry().iter().map(|c| c.entry().id).collect();
        for id in &ids {
            assert!(CATALOGUE.iter().any(|e| e.id == *id), "{id}");
            assert_eq!(
                ids.iter().filter(|i| *i == id).count(),
                1,
                "{id} registered twice"
            );
        }
    }
}
