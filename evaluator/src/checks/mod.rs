//! The implemented checks. Each is registered by its row of
//! [`crate::catalogue::CATALOGUE`].

pub mod common;
pub mod s1;
pub mod s10;
pub mod s10_limits;
pub mod s1_versions;
pub mod s2;
pub mod s2_auth_origin;
pub mod s2_headers;
pub mod s2_tls;
pub mod s3;
pub mod s5;
pub mod s7;
