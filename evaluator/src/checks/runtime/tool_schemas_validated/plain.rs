//! Plain schemas: a schema built only of keywords whose metaschema rules are simple (a
//! type, a string, a non-negative integer, a list of strings, subschemas) is told valid
//! by a direct walk instead of the metaschema validator.
//!
//! Almost every schema a server lists is of this kind: an object with `properties`,
//! `required`, `type`, `title` and `description`. Validating one against its dialect's
//! metaschema costs the validator tens of thousands of instructions (the 2020-12
//! metaschema is seven vocabularies joined by dynamic references), and building the
//! validator the first time costs millions; the walk costs hundreds.
//!
//! The walk only ever says "valid". Every keyword it knows has, in each dialect, a rule
//! at least as strict as the one that dialect's metaschema states (the metaschemas the
//! validator crate ships, which are the ones [`Dialect::validate`] validates against); a
//! keyword it does not know, a value it does not take, a reference, a very deep schema:
//! any of these, and it answers "not told", and the schema goes to the validator, which
//! also writes the first error of one that is invalid. So a schema the walk passes is one
//! the validator passes, and the evidence is the same either way. The property tests
//! below hold the walk to the validator on generated schemas of every dialect.
//!
//! The rules, by keyword (the metaschemas' own, or stricter where noted):
//! * `type`: one of the seven simple type names, or a non-empty list of distinct ones.
//! * `properties`: an object whose every member is a schema.
//! * `additionalProperties`, `items`: a schema, or `true`/`false` (for `items` a list
//!   of schemas, which the older drafts allow, is not told).
//! * `anyOf`, `oneOf`, `allOf`: a non-empty list of schemas.
//! * `required`: a list of distinct strings; in draft 4 a non-empty one.
//! * `title`, `description`, `format`: a string.
//! * `minLength`, `maxLength`, `minItems`, `maxItems`: a non-negative integer written
//!   as one (stricter: `1.0` is not told).
//! * `minimum`, `maximum`: a number.
//! * `enum`, `examples`: a list (any members; draft 4 has no `examples`, so anything is
//!   allowed there, and a list is).
//! * `default`, `const`: anything.
//! * `$schema`: at the root only, and only the dialect's own canonical address.
//! * a member whose name starts with `x-`: anything (no metaschema names one).
//!
//! A schema is an object or, from draft 6 on, `true` or `false`; draft 4 takes objects
//! only, at the root and below.

use mcp_probe_schema::tape::Json;

use super::drafts::Dialect;

/// How deep the walk goes before it stops telling (the validator takes deeper ones).
const DEPTH: u32 = 32;

/// The seven simple type names every dialect's `type` keyword takes.
const SIMPLE_TYPES: [&str; 7] = [
    "array", "boolean", "integer", "null", "number", "object", "string",
];

/// `true` when `schema` is plain and therefore validates against the metaschema of
/// `dialect`; `false` when the walk cannot tell (the schema may be valid or not: ask the
/// validator).
pub(super) fn valid(schema: Json<'_>, dialect: Dialect) -> bool {
    schema_at(schema, dialect, 0, true)
}

/// A subschema.
fn sub(v: Json<'_>, dialect: Dialect, depth: u32) -> bool {
    depth < DEPTH && schema_at(v, dialect, depth + 1, false)
}

/// A schema at `depth` (`root`: the document itself): an object of members the walk
/// takes, or a boolean where the dialect allows one.
fn schema_at(v: Json<'_>, dialect: Dialect, depth: u32, root: bool) -> bool {
    if v.is_object() {
        v.members().all(|(k, v)| member(k, v, dialect, depth, root))
    } else {
        v.is_boolean() && dialect != Dialect::Draft4
    }
}

fn member(key: &str, v: Json<'_>, dialect: Dialect, depth: u32, root: bool) -> bool {
    match key {
        "type" => type_keyword(v),
        "properties" => v.is_object() && v.members().all(|(_, s)| sub(s, dialect, depth)),
        // Draft 4 takes a boolean or an object here; the later drafts a schema, which
        // `true` and `false` are.
        "additionalProperties" => v.is_boolean() || sub(v, dialect, depth),
        "items" => sub(v, dialect, depth),
        "anyOf" | "oneOf" | "allOf" => {
            v.is_array() && !v.is_empty() && v.items().all(|s| sub(s, dialect, depth))
        }
        "required" => {
            v.is_array()
                && (dialect != Dialect::Draft4 || !v.is_empty())
                && v.items().all(Json::is_string)
                && distinct(v)
        }
        "title" | "description" | "format" => v.is_string(),
        "minLength" | "maxLength" | "minItems" | "maxItems" => v.as_u64().is_some(),
        "minimum" | "maximum" => v.is_number(),
        "enum" | "examples" => v.is_array(),
        "default" | "const" => true,
        "$schema" => root && v.as_str() == Some(canonical(dialect)),
        _ => key.starts_with("x-"),
    }
}

/// `type`: a simple type name, or a non-empty list of distinct ones.
fn type_keyword(v: Json<'_>) -> bool {
    let simple = |t: Json<'_>| t.as_str().is_some_and(|t| SIMPLE_TYPES.contains(&t));
    if v.is_string() {
        simple(v)
    } else {
        v.is_array() && !v.is_empty() && v.items().all(simple) && distinct(v)
    }
}

/// No two items of the array `a` are equal (here only strings are compared: every
/// caller has checked that each item is one).
fn distinct(a: Json<'_>) -> bool {
    a.items()
        .enumerate()
        .all(|(i, x)| a.items().take(i).all(|y| x.as_str() != y.as_str()))
}

/// The address by which each dialect names itself in `$schema`.
fn canonical(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Draft202012 => "https://json-schema.org/draft/2020-12/schema",
        Dialect::Draft201909 => "https://json-schema.org/draft/2019-09/schema",
        Dialect::Draft7 => "http://json-schema.org/draft-07/schema#",
        Dialect::Draft6 => "http://json-schema.org/draft-06/schema#",
        Dialect::Draft4 => "http://json-schema.org/draft-04/schema#",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_probe_schema::tape::Tape;
    use proptest::prelude::*;
    use proptest::strategy::ValueTree;
    use serde_json::{json, Value};

    /// The walk of `schema` read into a tape (as a list page's schemas are).
    fn valid(schema: &Value, dialect: Dialect) -> bool {
        super::valid(Tape::from_value(schema).root(), dialect)
    }

    const DIALECTS: [Dialect; 5] = [
        Dialect::Draft202012,
        Dialect::Draft201909,
        Dialect::Draft7,
        Dialect::Draft6,
        Dialect::Draft4,
    ];

    /// The validator's answer.
    fn by_validator(schema: &Value, dialect: Dialect) -> bool {
        dialect.validate(schema).is_ok()
    }

    #[test]
    fn the_schemas_servers_list_are_told_valid_by_the_walk() {
        let ordinary = [
            json!({"type": "object", "properties": {}}),
            json!({
                "type": "object",
                "title": "read_fileArguments",
                "properties": {
                    "path": {"type": "string", "title": "Path", "description": "the file"},
                    "limit": {"type": ["integer", "null"], "minimum": 0, "default": 10},
                    "mode": {"enum": ["r", "rb"]},
                    "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1}
                },
                "required": ["path"],
                "additionalProperties": false
            }),
            json!({
                "type": "object",
                "properties": {"result": {"anyOf": [{"type": "string"}, {"type": "null"}]}},
                "x-fastmcp-wrap-result": true
            }),
        ];
        for s in &ordinary {
            for d in DIALECTS {
                assert!(valid(s, d), "{s} under {}", d.name());
                assert!(by_validator(s, d), "{s} under {}", d.name());
            }
        }
        let own = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object"
        });
        assert!(valid(&own, Dialect::Draft202012));
    }

    #[test]
    fn each_dialects_own_address_is_valid_under_its_metaschema() {
        for d in DIALECTS {
            let s = json!({"$schema": canonical(d), "type": "object"});
            assert!(by_validator(&s, d), "{}", d.name());
            assert!(valid(&s, d), "{}", d.name());
            // Another dialect's address is left to the validator, as is the address
            // anywhere but the root.
            let other = if d == Dialect::Draft4 {
                Dialect::Draft7
            } else {
                Dialect::Draft4
            };
            assert!(!valid(&json!({"$schema": canonical(other)}), d));
            assert!(!valid(
                &json!({"properties": {"a": {"$schema": canonical(d)}}}),
                d
            ));
        }
    }

    #[test]
    fn what_the_walk_does_not_take_is_left_to_the_validator() {
        let untold = [
            json!({"type": "objekt"}),
            json!({"type": []}),
            json!({"type": ["string", "string"]}),
            json!({"required": ["a", "a"]}),
            json!({"required": "a"}),
            json!({"minLength": -1}),
            json!({"minLength": 1.0}),
            json!({"items": [{"type": "string"}]}),
            json!({"anyOf": []}),
            json!({"$ref": "#/definitions/x"}),
            json!({"pattern": "^a"}),
            json!({"exclusiveMinimum": 0}),
            json!({"properties": {"a": 3}}),
            json!({"nullable": true}),
            json!(3),
            json!("object"),
        ];
        for s in &untold {
            for d in DIALECTS {
                assert!(!valid(s, d), "{s} under {}", d.name());
            }
        }
        // Draft 4 takes no boolean schema, and no empty `required`.
        assert!(!valid(&json!(true), Dialect::Draft4));
        assert!(!valid(&json!({"items": true}), Dialect::Draft4));
        assert!(!valid(&json!({"required": []}), Dialect::Draft4));
        assert!(!by_validator(&json!({"required": []}), Dialect::Draft4));
        assert!(valid(&json!({"required": []}), Dialect::Draft7));
        assert!(valid(
            &json!({"additionalProperties": true}),
            Dialect::Draft4
        ));
        // Deeper than the walk goes.
        let mut deep = json!({"type": "string"});
        for _ in 0..DEPTH + 2 {
            deep = json!({"items": deep});
        }
        assert!(!valid(&deep, Dialect::Draft202012));
        assert!(by_validator(&deep, Dialect::Draft202012));
    }

    /// Values of every kind, some of which each keyword takes and some it does not.
    fn scalar() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            (-3i64..5).prop_map(|n| json!(n)),
            Just(json!(1.0)),
            Just(json!(2.5)),
            prop::sample::select(vec![
                "string", "object", "array", "integer", "null", "number", "boolean", "objekt", "",
                "a", "b", "uri", "x-",
            ])
            .prop_map(|s| json!(s)),
            prop::sample::select(vec![
                "https://json-schema.org/draft/2020-12/schema",
                "https://json-schema.org/draft/2019-09/schema",
                "http://json-schema.org/draft-07/schema#",
                "http://json-schema.org/draft-06/schema#",
                "http://json-schema.org/draft-04/schema#",
                "not a uri",
            ])
            .prop_map(|s| json!(s)),
        ]
    }

    fn keyword() -> impl Strategy<Value = String> {
        prop::sample::select(vec![
            "type",
            "properties",
            "additionalProperties",
            "items",
            "anyOf",
            "oneOf",
            "allOf",
            "required",
            "title",
            "description",
            "format",
            "minLength",
            "maxLength",
            "minItems",
            "maxItems",
            "minimum",
            "maximum",
            "enum",
            "examples",
            "default",
            "const",
            "$schema",
            "x-extension",
            "pattern",
            "$ref",
        ])
        .prop_map(String::from)
    }

    /// A member of a schema-like object: any keyword with any value, or a keyword with
    /// a value of the shape it takes (with its edge cases: empty lists, repeated names,
    /// negative and fractional numbers), so that the documents are often plain.
    fn member(
        inner: impl Strategy<Value = Value> + Clone,
    ) -> impl Strategy<Value = (String, Value)> {
        let name = || prop::sample::select(vec!["a", "b", "c"]).prop_map(|n| json!(n));
        let names = prop::collection::vec(name(), 0..3).prop_map(Value::Array);
        let simple = || {
            prop::sample::select(vec![
                "string", "object", "array", "integer", "null", "objekt",
            ])
            .prop_map(|t| json!(t))
        };
        let types = prop_oneof![
            simple(),
            prop::collection::vec(simple(), 0..3).prop_map(Value::Array),
        ];
        let schemas = prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array);
        let properties =
            prop::collection::vec((prop::sample::select(vec!["a", "b"]), inner.clone()), 0..3)
                .prop_map(|kv| {
                    Value::Object(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
                });
        let count = prop_oneof![(-1i64..3).prop_map(|n| json!(n)), Just(json!(1.0))];
        prop_oneof![
            (keyword(), inner.clone()),
            names.prop_map(|v| ("required".to_string(), v)),
            types.prop_map(|v| ("type".to_string(), v)),
            properties.prop_map(|v| ("properties".to_string(), v)),
            (
                prop::sample::select(vec!["anyOf", "oneOf", "allOf", "enum", "items"]),
                schemas
            )
                .prop_map(|(k, v)| (k.to_string(), v)),
            (
                prop::sample::select(vec!["items", "additionalProperties"]),
                inner
            )
                .prop_map(|(k, v)| (k.to_string(), v)),
            (prop::sample::select(vec!["minLength", "maxItems"]), count)
                .prop_map(|(k, v)| (k.to_string(), v)),
        ]
    }

    /// Schema-like documents: objects of the members above, whose values are scalars,
    /// lists or further such objects.
    fn document() -> impl Strategy<Value = Value> {
        scalar().prop_recursive(4, 48, 5, |inner| {
            prop_oneof![
                1 => prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                4 => prop::collection::vec(member(inner), 0..5)
                    .prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2048))]

        /// Whatever the walk tells valid, the validator validates, in every dialect.
        #[test]
        fn a_schema_the_walk_passes_the_validator_passes(doc in document()) {
            for d in DIALECTS {
                if valid(&doc, d) {
                    prop_assert!(by_validator(&doc, d), "{} under {}", doc, d.name());
                }
            }
        }
    }

    /// The generated documents reach the walk's "valid" often enough for the property
    /// above to say something.
    #[test]
    fn the_generated_documents_are_often_plain() {
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        let strategy = document();
        let (mut plain, mut objects) = (0, 0);
        for _ in 0..2048 {
            let doc = strategy.new_tree(&mut runner).unwrap().current();
            if doc.is_object() {
                objects += 1;
                plain += usize::from(valid(&doc, Dialect::Draft202012));
            }
        }
        assert!(
            objects > 200 && plain * 10 > objects,
            "{plain} of {objects}"
        );
    }
}
