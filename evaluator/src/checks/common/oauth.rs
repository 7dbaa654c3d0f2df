//! (being filled in)
