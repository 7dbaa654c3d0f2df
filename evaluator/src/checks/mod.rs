//! The implemented checks. Each is registered by its row of
//! [`crate::rules::RULES`].

pub mod audit;
pub mod authorization;
pub mod common;
pub mod configuration;
pub mod limits;
pub mod runtime;
pub mod transport;
