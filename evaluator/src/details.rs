//! An outcome's details ([`crate::verdict::Outcome::details`]): named values in the
//! order they were inserted, kept as a short list of pairs rather than a hashed map. A
//! check's details are a few dozen keys at most, looked up rarely, so a key is found by
//! comparing it with each in turn; a key that is a struct's field name (what
//! [`Details::from_facts`] reads) is borrowed, not copied. The values are
//! `serde_json::Value`s.

use std::borrow::Cow;
use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde::ser::{self, Impossible, Serialize, SerializeMap, Serializer};
use serde_json::Value;

/// A detail's name.
pub type Key = Cow<'static, str>;

/// Named values in insertion order, serialised as a JSON object in that order. Inserting
/// a name already present replaces its value where it stands, as `serde_json::Map` does
/// with its `preserve_order` feature; two details are equal when they hold the same names
/// with equal values, in any order, as two such maps are.
#[derive(Clone, Default)]
pub struct Details {
    pairs: Vec<(Key, Value)>,
}

/// What indexing by a missing name gives, as indexing a `serde_json::Value` does.
static NULL: Value = Value::Null;

impl Details {
    /// No details.
    pub fn new() -> Details {
        Details::default()
    }

    /// No details, with room for `n` without growing.
    pub fn with_capacity(n: usize) -> Details {
        Details {
            pairs: Vec::with_capacity(n),
        }
    }

    /// How many details there are.
    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// The value named `key`.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.pairs.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Whether a value is named `key`.
    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// `value` under `key`: a name already present keeps its place and gets the new value
    /// (the old one is returned); a new name goes last.
    pub fn insert(&mut self, key: Key, value: Value) -> Option<Value> {
        match self.pairs.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => Some(std::mem::replace(v, value)),
            None => {
                self.pairs.push((key, value));
                None
            }
        }
    }

    /// The details in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&str, &Value)> {
        self.pairs.iter().map(|(k, v)| (k.as_ref(), v))
    }

    /// The values in order, to change in place.
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut Value> {
        self.pairs.iter_mut().map(|(_, v)| v)
    }

    /// Each field of `facts` (a struct, or a map with string keys, serialising to a JSON
    /// object) as a detail, in field order, each value as `serde_json::to_value` makes
    /// it: the details `serde_json::to_value(facts)` would make as an object. `None` when
    /// that would be no object or fail.
    pub fn from_facts<T: Serialize + ?Sized>(facts: &T) -> Option<Details> {
        facts.serialize(Facts).ok()
    }
}

impl fmt::Debug for Details {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl PartialEq for Details {
    fn eq(&self, other: &Details) -> bool {
        self.len() == other.len() && self.iter().all(|(k, v)| other.get(k) == Some(v))
    }
}

impl std::ops::Index<&str> for Details {
    type Output = Value;

    /// The value named `key`, or null when there is none.
    fn index(&self, key: &str) -> &Value {
        self.get(key).unwrap_or(&NULL)
    }
}

impl<K: Into<Key>> Extend<(K, Value)> for Details {
    /// Each pair inserted in turn ([`Details::insert`]).
    fn extend<I: IntoIterator<Item = (K, Value)>>(&mut self, iter: I) {
        for (k, v) in iter {
            self.insert(k.into(), v);
        }
    }
}

impl<K: Into<Key>> FromIterator<(K, Value)> for Details {
    fn from_iter<I: IntoIterator<Item = (K, Value)>>(iter: I) -> Details {
        let mut d = Details::new();
        d.extend(iter);
        d
    }
}

impl IntoIterator for Details {
    type Item = (Key, Value);
    type IntoIter = std::vec::IntoIter<(Key, Value)>;

    fn into_iter(self) -> Self::IntoIter {
        self.pairs.into_iter()
    }
}

impl From<Details> for Value {
    /// The same details as a JSON object, in order.
    fn from(d: Details) -> Value {
        Value::Object(
            d.pairs
                .into_iter()
                .map(|(k, v)| (k.into_owned(), v))
                .collect(),
        )
    }
}

impl Serialize for Details {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.len()))?;
        for (k, v) in self.iter() {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

impl<'de> Deserialize<'de> for Details {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Details, D::Error> {
        struct Object;
        impl<'de> Visitor<'de> for Object {
            type Value = Details;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Details, A::Error> {
                let mut d = Details::with_capacity(a.size_hint().unwrap_or(0));
                while let Some((k, v)) = a.next_entry::<String, Value>()? {
                    d.insert(Cow::Owned(k), v);
                }
                Ok(d)
            }
        }
        d.deserialize_map(Object)
    }
}

/// The serializer behind [`Details::from_facts`]: takes a struct or a map at the top
/// and makes each field's value with `serde_json::to_value`.
struct Facts;

/// The error of anything that is not an object at the top.
fn not_an_object() -> serde_json::Error {
    ser::Error::custom("facts are not an object")
}

/// A struct's fields as they are serialised.
struct Fields(Details);

/// A map's entries as they are serialised, with the key waiting for its value.
struct Entries {
    details: Details,
    key: Option<String>,
}

impl ser::SerializeStruct for Fields {
    type Ok = Details;
    type Error = serde_json::Error;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), serde_json::Error> {
        self.0
            .insert(Cow::Borrowed(key), serde_json::to_value(value)?);
        Ok(())
    }

    fn end(self) -> Result<Details, serde_json::Error> {
        Ok(self.0)
    }
}

impl SerializeMap for Entries {
    type Ok = Details;
    type Error = serde_json::Error;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), serde_json::Error> {
        // A key as `serde_json` makes one of a map key: a string as it is, a number or
        // a boolean in its text; anything else is refused.
        self.key = Some(match serde_json::to_value(key)? {
            Value::String(s) => s,
            Value::Number(n) => n.to_string(),
            Value::Bool(b) => b.to_string(),
            _ => return Err(ser::Error::custom("key must be a string")),
        });
        Ok(())
    }

    fn serialize_value<T: Serialize + ?Sized>(
        &mut self,
        value: &T,
    ) -> Result<(), serde_json::Error> {
        let key = self
            .key
            .take()
            .ok_or_else(|| ser::Error::custom("a value without a key"))?;
        self.details
            .insert(Cow::Owned(key), serde_json::to_value(value)?);
        Ok(())
    }

    fn end(self) -> Result<Details, serde_json::Error> {
        Ok(self.details)
    }
}

impl Serializer for Facts {
    type Ok = Details;
    type Error = serde_json::Error;
    type SerializeSeq = Impossible<Details, serde_json::Error>;
    type SerializeTuple = Impossible<Details, serde_json::Error>;
    type SerializeTupleStruct = Impossible<Details, serde_json::Error>;
    type SerializeTupleVariant = Impossible<Details, serde_json::Error>;
    type SerializeMap = Entries;
    type SerializeStruct = Fields;
    type SerializeStructVariant = Impossible<Details, serde_json::Error>;

    fn serialize_struct(self, _: &'static str, len: usize) -> Result<Fields, serde_json::Error> {
        Ok(Fields(Details::with_capacity(len)))
    }

    fn serialize_map(self, len: Option<usize>) -> Result<Entries, serde_json::Error> {
        Ok(Entries {
            details: Details::with_capacity(len.unwrap_or(0)),
            key: None,
        })
    }

    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<Details, serde_json::Error> {
        v.serialize(self)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        v: &T,
    ) -> Result<Details, serde_json::Error> {
        v.serialize(self)
    }

    fn serialize_bool(self, _: bool) -> Result<Details, serde_json::Error> {
        Err(not_an_object())
    }
    fn serialize_i8(self, _: i8) -> Result<Details, serde_json::Error> {
        Err(not_an_object())
    }
    fn serialize_i16(self, _: i16) -> Result<Details, serde_json::Error> {
        Err(not_an_object())
    }
    fn serialize_i32(self, _: i32) -> Result<Details, serde_json::Error> {
        Err(not_an_object())
    }
    fn serialize_i64(self, _: i64) -> Result<Details, serde_json::Error> {
        Err(not_an_object())
    }
    fn serialize_u8(self, _: u8) -> Result<Details, serde_json::Error> {
        Err(not_an_object())
    }
    fn serialize_u16(self, _: u16) -> Result<Details, serde_json::Error> {
        Err(not_an_object())
    }
    fn serialize_u32(self, _: u32) -> Result<Details, serde_json::Error> {
        Err(not_an_object())
    }
    fn serialize_u64(self, _: u64) -> Result<Details, serde_json::Error> {
        Err(not_an_object())
    }
    fn serialize_f32(self, _: f32) -> Result<Details, serde_json::Error> {
        Err(not_an_object())
    }
    fn serialize_f64(self, _: f64) -> Result<Details, serde_json::Error> {
        Err(not_an_object())
    }
    fn serialize_char(self, _: char) -> Result<Details, serde_json::Error> {
        Err(not_an_object())
    }
    fn serialize_str(self, _: &str) -> Result<Details, serde_json::Error> {
        Err(not_an_object())
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<Details, serde_json::Error> {
        Err(not_an_object())
    }
    fn serialize_none(self) -> Result<Details, serde_json::Error> {
        Err(not_an_object())
    }
    fn serialize_unit(self) -> Result<Details, serde_json::Error> {
        Err(not_an_object())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<Details, serde_json::Error> {
        Err(not_an_object())
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
    ) -> Result<Details, serde_json::Error> {
        Err(not_an_object())
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<Details, serde_json::Error> {
        Err(not_an_object())
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, serde_json::Error> {
        Err(not_an_object())
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, serde_json::Error> {
        Err(not_an_object())
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, serde_json::Error> {
        Err(not_an_object())
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, serde_json::Error> {
        Err(not_an_object())
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, serde_json::Error> {
        Err(not_an_object())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(serde::Serialize)]
    struct Sample<'a> {
        n: u32,
        s: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        skipped: Option<u8>,
        nested: std::collections::BTreeMap<&'a str, Vec<i64>>,
        x: f64,
    }

    #[test]
    fn facts_make_the_object_to_value_makes() {
        let f = Sample {
            n: 3,
            s: "a\nb",
            skipped: None,
            nested: [("k", vec![-1, 2])].into_iter().collect(),
            x: 0.5,
        };
        let d = Details::from_facts(&f).expect("an object");
        assert_eq!(Value::from(d.clone()), serde_json::to_value(&f).unwrap());
        assert_eq!(
            serde_json::to_string(&d).unwrap(),
            serde_json::to_string(&f).unwrap()
        );
        let keys: Vec<&str> = d.iter().map(|(k, _)| k).collect();
        assert_eq!(keys, ["n", "s", "nested", "x"]);
        assert!(Details::from_facts(&3).is_none());
        assert!(Details::from_facts(&[1, 2]).is_none());
        assert_eq!(Details::from_facts(&Some(&f)), Some(d));
        let m = json!({"b": 1, "a": {"c": null}});
        let d = Details::from_facts(&m).expect("an object");
        assert_eq!(Value::from(d), m);
        let numbered: std::collections::BTreeMap<u16, bool> = [(7, true)].into_iter().collect();
        assert_eq!(
            Value::from(Details::from_facts(&numbered).expect("an object")),
            serde_json::to_value(&numbered).unwrap()
        );
    }

    #[test]
    fn insert_keeps_a_name_where_it_stands() {
        let mut d = Details::new();
        d.insert("a".into(), json!(1));
        d.insert("b".into(), json!(2));
        assert_eq!(d.insert("a".into(), json!(3)), Some(json!(1)));
        d.extend([("c", json!(4)), ("b", json!(5))]);
        assert_eq!(serde_json::to_string(&d).unwrap(), r#"{"a":3,"b":5,"c":4}"#);
        assert_eq!(d["b"], json!(5));
        assert!(d["missing"].is_null());
        assert_eq!(d.len(), 3);
        let back: Details = serde_json::from_str(r#"{"z":1,"a":[true]}"#).unwrap();
        let keys: Vec<&str> = back.iter().map(|(k, _)| k).collect();
        assert_eq!(keys, ["z", "a"]);
        let swapped: Details = serde_json::from_str(r#"{"a":[true],"z":1}"#).unwrap();
        assert_eq!(back, swapped);
    }
}
