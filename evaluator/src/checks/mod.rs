//! The implemented checks. Each is registered by its row of
//! [`crate::rules::RULES`].

pub mod common;
pub mod s1;
pub mod s10;
pub mod s2;
pub mod s3;
pub mod s5;
pub mod s7;
