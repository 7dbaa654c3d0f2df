//! Section 1 (1.1) checks.

use crate::check::Check;

/// The checks of this module this build grades.
pub static CHECKS: &[&dyn Check] = &[];
