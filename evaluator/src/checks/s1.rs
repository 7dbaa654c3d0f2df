//! Section 1 checks.

use crate::check::Check;

/// The checks of this section this build grades.
pub static CHECKS: &[&dyn Check] = &[];
