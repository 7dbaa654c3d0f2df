//! Section 5 (5.2.3) checks.

use crate::check::Check;

/// The checks of this module this build grades.
pub static CHECKS: &[&dyn Check] = &[];
