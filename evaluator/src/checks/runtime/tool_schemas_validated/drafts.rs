//! The JSON Schema dialects a tool schema is compiled under, and each one's metaschema
//! validation: what both the rule and its plain-schema walk ([`super::plain`]) read.

use serde_json::Value;

/// A JSON Schema draft this grader compiles against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Dialect {
    /// Draft 2020-12 (the default of MCP tool schemas).
    Draft202012,
    /// Draft 2019-09.
    Draft201909,
    /// Draft 7.
    Draft7,
    /// Draft 6.
    Draft6,
    /// Draft 4.
    Draft4,
}

impl Dialect {
    /// Every dialect, in the order the `$schema` value is matched.
    pub(super) const TABLE: [(&'static str, Dialect); 5] = [
        ("2020-12", Dialect::Draft202012),
        ("2019-09", Dialect::Draft201909),
        ("draft-07", Dialect::Draft7),
        ("draft-06", Dialect::Draft6),
        ("draft-04", Dialect::Draft4),
    ];

    /// The name used in evidence.
    pub(super) fn name(self) -> &'static str {
        match self {
            Dialect::Draft202012 => "2020-12",
            Dialect::Draft201909 => "2019-09",
            Dialect::Draft7 => "draft-07",
            Dialect::Draft6 => "draft-06",
            Dialect::Draft4 => "draft-04",
        }
    }

    /// Validate `schema` against this dialect's metaschema (the `jsonschema` crate's
    /// per-draft meta validation); `Err` is the first error.
    pub(super) fn validate(self, schema: &Value) -> Result<(), jsonschema::ValidationError<'_>> {
        match self {
            Dialect::Draft202012 => jsonschema::draft202012::meta::validate(schema),
            Dialect::Draft201909 => jsonschema::draft201909::meta::validate(schema),
            Dialect::Draft7 => jsonschema::draft7::meta::validate(schema),
            Dialect::Draft6 => jsonschema::draft6::meta::validate(schema),
            Dialect::Draft4 => jsonschema::draft4::meta::validate(schema),
        }
    }
}
