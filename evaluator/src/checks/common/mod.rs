//! Helpers shared by checks of more than one file. A helper used by one check lives
//! in that check's file.

pub mod baseline;
pub mod inventory;
pub mod oauth;
pub mod policy;
pub mod refusal;
pub mod reported;
pub mod response;
pub mod stdio;
pub mod text;
pub mod transport;
pub mod values;
pub mod wire;
