//! Section 2 (2.4) checks.

use crate::check::Check;

/// The checks of this module this build grades.
pub static CHECKS: &[&dyn Check] = &[];
