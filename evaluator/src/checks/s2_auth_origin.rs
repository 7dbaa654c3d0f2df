//! Section 2 (2.3, 2.5) checks.

use crate::check::Check;

/// The checks of this module this build grades.
pub static CHECKS: &[&dyn Check] = &[];
