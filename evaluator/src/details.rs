//! An outcome's details ([`crate::verdict::Outcome::details`]): named values in the
//! order they were inserted, kept as a short list of pairs rather than a hashed map. A
//! check's details are a few dozen keys at most, looked up rarely, so a key is found by
//! comparing it with each in turn; a key that is a struct's field name (what
//! [`Details::from_facts`] reads) is borrowed, not copied. The values are [`Detail`]s,
//! JSON values whose objects are [`Details`] again, so no hashed map is built for
//! details at any depth.

use std::borrow::Cow;
use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{self, Serialize, SerializeMap, Serializer};
use serde_json::{Number, Value};

/// A detail's name.
pub type Key = Cow<'static, str>;

/// A JSON value of the details: what a `serde_json::Value` holds, with [`Details`] for
/// an object. It serialises, deserialises and compares as the `serde_json::Value` of the
/// same JSON does (numbers are `serde_json::Number`s).
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Detail {
    /// `null`.
    #[default]
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number.
    Number(Number),
    /// A string.
    String(String),
    /// A list.
    Array(Vec<Detail>),
    /// An object, in insertion order.
    Object(Details),
}

/// Named values in insertion order, serialised as a JSON object in that order. Inserting
/// a name already present replaces its value where it stands, as `serde_json::Map` does
/// with its `preserve_order` feature; two details are equal when they hold the same names
/// with equal values, in any order, as two such maps are.
#[derive(Clone, Default)]
pub struct Details {
    pairs: Vec<(Key, Detail)>,
}

/// What indexing by a missing name or position gives, as indexing a `serde_json::Value`
/// does.
static NULL: Detail = Detail::Null;

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
    pub fn get(&self, key: &str) -> Option<&Detail> {
        self.pairs.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Whether a value is named `key`.
    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// `value` under `key`: a name already present keeps its place and gets the new value
    /// (the old one is returned); a new name goes last.
    pub fn insert(&mut self, key: Key, value: Detail) -> Option<Detail> {
        match self.pairs.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => Some(std::mem::replace(v, value)),
            None => {
                self.pairs.push((key, value));
                None
            }
        }
    }

    /// `value` under `key` last, without looking for the name: what [`Details::settle`]
    /// puts right, for pairs read from a serialisation, which may be many.
    pub fn push(&mut self, key: Key, value: Detail) {
        self.pairs.push((key, value));
    }

    /// The pairs appended by [`Details::push`] made what inserting them in turn would
    /// have made: a name that repeats keeps its first place and gets its last value. A
    /// few pairs are compared with each other; more are sorted by name, so an object of
    /// many names costs no more than sorting them.
    pub fn settle(&mut self) {
        /// Up to this many pairs, each is compared with those before it.
        const FEW: usize = 16;
        let n = self.pairs.len();
        let p = &self.pairs;
        let repeats = if n <= FEW {
            (1..n).any(|i| p[..i].iter().any(|(k, _)| *k == p[i].0))
        } else {
            let mut order: Vec<usize> = (0..n).collect();
            order.sort_unstable_by(|&a, &b| p[a].0.cmp(&p[b].0));
            order.windows(2).any(|w| p[w[0]].0 == p[w[1]].0)
        };
        if repeats {
            self.merge_repeats();
        }
    }

    /// [`Details::settle`] for pairs where a name repeats.
    #[cold]
    fn merge_repeats(&mut self) {
        let n = self.pairs.len();
        let mut order: Vec<usize> = (0..n).collect();
        // Stable: among equal names, the first pair stays first and the last last.
        order.sort_by(|&a, &b| self.pairs[a].0.cmp(&self.pairs[b].0));
        // For the first pair of each name, the pair whose value it gets.
        let mut last_of: Vec<Option<usize>> = vec![None; n];
        for same in order.chunk_by(|&a, &b| self.pairs[a].0 == self.pairs[b].0) {
            last_of[same[0]] = same.last().copied();
        }
        let mut slots: Vec<Option<(Key, Detail)>> = std::mem::take(&mut self.pairs)
            .into_iter()
            .map(Some)
            .collect();
        for (i, last) in last_of.into_iter().enumerate() {
            let Some(last) = last else { continue };
            let Some((k, first)) = slots[i].take() else {
                continue;
            };
            let v = match slots[last].take() {
                Some((_, v)) if last != i => v,
                _ => first,
            };
            self.pairs.push((k, v));
        }
    }

    /// A copy of these details with room for `extra` more without growing.
    pub fn clone_with_room(&self, extra: usize) -> Details {
        let mut pairs = Vec::with_capacity(self.pairs.len() + extra);
        pairs.extend(self.pairs.iter().cloned());
        Details { pairs }
    }

    /// The details in order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&str, &Detail)> + ExactSizeIterator {
        self.pairs.iter().map(|(k, v)| (k.as_ref(), v))
    }

    /// The values in order, to change in place.
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut Detail> {
        self.pairs.iter_mut().map(|(_, v)| v)
    }

    /// Each field of `facts` (a struct, or a map with string keys, serialising to a JSON
    /// object) as a detail, in field order: the object `serde_json::to_value(facts)`
    /// would make, made by [`Detail::of`]. `None` when that would be no object or fail.
    pub fn from_facts<T: Serialize + ?Sized>(facts: &T) -> Option<Details> {
        match Detail::of(facts) {
            Ok(Detail::Object(d)) => Some(d),
            _ => None,
        }
    }
}

impl fmt::Debug for Details {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl PartialEq for Details {
    fn eq(&self, other: &Details) -> bool {
        if self.len() != other.len() {
            return false;
        }
        if self.pairs == other.pairs {
            return true;
        }
        // The same names in another order: compared by name (names are unique).
        fn by_name(d: &Details) -> Vec<(&str, &Detail)> {
            let mut v: Vec<(&str, &Detail)> = d.iter().collect();
            v.sort_unstable_by(|a, b| a.0.cmp(b.0));
            v
        }
        by_name(self) == by_name(other)
    }
}

impl std::ops::Index<&str> for Details {
    type Output = Detail;

    /// The value named `key`, or null when there is none.
    fn index(&self, key: &str) -> &Detail {
        self.get(key).unwrap_or(&NULL)
    }
}

impl<K: Into<Key>> Extend<(K, Detail)> for Details {
    /// Each pair inserted in turn ([`Details::insert`]).
    fn extend<I: IntoIterator<Item = (K, Detail)>>(&mut self, iter: I) {
        for (k, v) in iter {
            self.insert(k.into(), v);
        }
    }
}

impl<K: Into<Key>> FromIterator<(K, Detail)> for Details {
    fn from_iter<I: IntoIterator<Item = (K, Detail)>>(iter: I) -> Details {
        let mut d = Details::new();
        d.extend(iter);
        d
    }
}

impl IntoIterator for Details {
    type Item = (Key, Detail);
    type IntoIter = std::vec::IntoIter<(Key, Detail)>;

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
                .map(|(k, v)| (k.into_owned(), Value::from(v)))
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
            fn visit_map<A: MapAccess<'de>>(self, a: A) -> Result<Details, A::Error> {
                read_object(a)
            }
        }
        d.deserialize_map(Object)
    }
}

/// The pairs of a serialised object in order, settled ([`Details::settle`]): what
/// [`Details`] and [`Detail`] read an object as.
fn read_object<'de, A: MapAccess<'de>>(mut a: A) -> Result<Details, A::Error> {
    let mut d = Details::with_capacity(a.size_hint().unwrap_or(0));
    while let Some((k, v)) = a.next_entry::<String, Detail>()? {
        d.push(Cow::Owned(k), v);
    }
    d.settle();
    Ok(d)
}

impl Detail {
    /// `value` as a detail: the value `serde_json::to_value(value)` makes, built without
    /// a `serde_json::Value` (objects keep a struct's field names borrowed). Fails where
    /// `to_value` fails.
    pub fn of<T: Serialize + ?Sized>(value: &T) -> Result<Detail, serde_json::Error> {
        value.serialize(ToDetail)
    }

    /// Whether it is null.
    pub fn is_null(&self) -> bool {
        matches!(self, Detail::Null)
    }

    /// The boolean, if it is one.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Detail::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The number as a `u64`, if it is one that fits.
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Detail::Number(n) => n.as_u64(),
            _ => None,
        }
    }

    /// The number as an `i64`, if it is one that fits.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Detail::Number(n) => n.as_i64(),
            _ => None,
        }
    }

    /// The number as an `f64`, if it is a number.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Detail::Number(n) => n.as_f64(),
            _ => None,
        }
    }

    /// The string, if it is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Detail::String(s) => Some(s),
            _ => None,
        }
    }

    /// The list, if it is one.
    pub fn as_array(&self) -> Option<&Vec<Detail>> {
        match self {
            Detail::Array(a) => Some(a),
            _ => None,
        }
    }

    /// The object, if it is one.
    pub fn as_object(&self) -> Option<&Details> {
        match self {
            Detail::Object(d) => Some(d),
            _ => None,
        }
    }

    /// Whether it is an object.
    pub fn is_object(&self) -> bool {
        matches!(self, Detail::Object(_))
    }

    /// Whether it is a list.
    pub fn is_array(&self) -> bool {
        matches!(self, Detail::Array(_))
    }

    /// The value named `key` of an object.
    pub fn get(&self, key: &str) -> Option<&Detail> {
        self.as_object().and_then(|d| d.get(key))
    }
}

impl std::ops::Index<&str> for Detail {
    type Output = Detail;

    /// The value named `key` of an object, or null (also when it is no object).
    fn index(&self, key: &str) -> &Detail {
        self.get(key).unwrap_or(&NULL)
    }
}

impl std::ops::Index<usize> for Detail {
    type Output = Detail;

    /// The item at `i` of a list, or null (also when it is no list).
    fn index(&self, i: usize) -> &Detail {
        self.as_array().and_then(|a| a.get(i)).unwrap_or(&NULL)
    }
}

impl fmt::Display for Detail {
    /// Compact JSON, as a `serde_json::Value` displays.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = serde_json::to_string(self).map_err(|_| fmt::Error)?;
        f.write_str(&s)
    }
}

impl PartialEq<Value> for Detail {
    /// Whether both hold the same JSON (objects in any order).
    fn eq(&self, other: &Value) -> bool {
        match (self, other) {
            (Detail::Null, Value::Null) => true,
            (Detail::Bool(a), Value::Bool(b)) => a == b,
            (Detail::Number(a), Value::Number(b)) => a == b,
            (Detail::String(a), Value::String(b)) => a == b,
            (Detail::Array(a), Value::Array(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
            }
            (Detail::Object(a), Value::Object(b)) => {
                a.len() == b.len() && a.iter().all(|(k, v)| b.get(k).is_some_and(|w| v == w))
            }
            _ => false,
        }
    }
}

impl PartialEq<Detail> for Value {
    fn eq(&self, other: &Detail) -> bool {
        other == self
    }
}

impl PartialEq<str> for Detail {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == Some(other)
    }
}

impl PartialEq<&str> for Detail {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == Some(*other)
    }
}

impl PartialEq<String> for Detail {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == Some(other.as_str())
    }
}

impl PartialEq<bool> for Detail {
    fn eq(&self, other: &bool) -> bool {
        self.as_bool() == Some(*other)
    }
}

impl PartialEq<f64> for Detail {
    fn eq(&self, other: &f64) -> bool {
        self.as_f64() == Some(*other)
    }
}

/// Comparisons and conversions of the integer types, as `serde_json::Value` has them.
macro_rules! integers {
    ($as:ident, $wide:ty: $($t:ty),*) => {$(
        impl PartialEq<$t> for Detail {
            fn eq(&self, other: &$t) -> bool {
                self.$as() == <$wide>::try_from(*other).ok()
            }
        }

        impl From<$t> for Detail {
            fn from(n: $t) -> Detail {
                Detail::Number(Number::from(n))
            }
        }
    )*};
}
integers!(as_u64, u64: u8, u16, u32, u64, usize);
integers!(as_i64, i64: i8, i16, i32, i64, isize);

impl From<bool> for Detail {
    fn from(b: bool) -> Detail {
        Detail::Bool(b)
    }
}

impl From<f64> for Detail {
    /// A finite number; null for NaN and the infinities, as `serde_json` makes them.
    fn from(f: f64) -> Detail {
        Number::from_f64(f).map_or(Detail::Null, Detail::Number)
    }
}

impl From<&str> for Detail {
    fn from(s: &str) -> Detail {
        Detail::String(s.to_string())
    }
}

impl From<String> for Detail {
    fn from(s: String) -> Detail {
        Detail::String(s)
    }
}

impl<T: Into<Detail>> From<Option<T>> for Detail {
    /// The value, or null.
    fn from(v: Option<T>) -> Detail {
        v.map_or(Detail::Null, Into::into)
    }
}

impl From<Details> for Detail {
    fn from(d: Details) -> Detail {
        Detail::Object(d)
    }
}

impl From<Value> for Detail {
    /// The same JSON, objects in their order.
    fn from(v: Value) -> Detail {
        match v {
            Value::Null => Detail::Null,
            Value::Bool(b) => Detail::Bool(b),
            Value::Number(n) => Detail::Number(n),
            Value::String(s) => Detail::String(s),
            Value::Array(a) => Detail::Array(a.into_iter().map(Detail::from).collect()),
            Value::Object(m) => {
                // A map's names are unique: no name to look for.
                let mut d = Details::with_capacity(m.len());
                for (k, v) in m {
                    d.push(Key::Owned(k), Detail::from(v));
                }
                Detail::Object(d)
            }
        }
    }
}

impl From<Detail> for Value {
    /// The same JSON, objects in their order.
    fn from(v: Detail) -> Value {
        match v {
            Detail::Null => Value::Null,
            Detail::Bool(b) => Value::Bool(b),
            Detail::Number(n) => Value::Number(n),
            Detail::String(s) => Value::String(s),
            Detail::Array(a) => Value::Array(a.into_iter().map(Value::from).collect()),
            Detail::Object(d) => Value::from(d),
        }
    }
}

impl Serialize for Detail {
    /// As the `serde_json::Value` of the same JSON serialises.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Detail::Null => s.serialize_unit(),
            Detail::Bool(b) => s.serialize_bool(*b),
            Detail::Number(n) => n.serialize(s),
            Detail::String(t) => s.serialize_str(t),
            Detail::Array(a) => a.serialize(s),
            Detail::Object(d) => d.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Detail {
    /// As a `serde_json::Value` deserialises, objects in their order.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Detail, D::Error> {
        struct Any;
        impl<'de> Visitor<'de> for Any {
            type Value = Detail;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any valid JSON value")
            }
            fn visit_bool<E>(self, b: bool) -> Result<Detail, E> {
                Ok(Detail::Bool(b))
            }
            fn visit_i64<E>(self, n: i64) -> Result<Detail, E> {
                Ok(Detail::Number(n.into()))
            }
            fn visit_u64<E>(self, n: u64) -> Result<Detail, E> {
                Ok(Detail::Number(n.into()))
            }
            fn visit_f64<E>(self, f: f64) -> Result<Detail, E> {
                Ok(Detail::from(f))
            }
            fn visit_str<E>(self, s: &str) -> Result<Detail, E> {
                Ok(Detail::String(s.to_string()))
            }
            fn visit_string<E>(self, s: String) -> Result<Detail, E> {
                Ok(Detail::String(s))
            }
            fn visit_none<E>(self) -> Result<Detail, E> {
                Ok(Detail::Null)
            }
            fn visit_unit<E>(self) -> Result<Detail, E> {
                Ok(Detail::Null)
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Detail, D::Error> {
                Deserialize::deserialize(d)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Detail, A::Error> {
                let mut v = Vec::with_capacity(a.size_hint().unwrap_or(0));
                while let Some(x) = a.next_element()? {
                    v.push(x);
                }
                Ok(Detail::Array(v))
            }
            fn visit_map<A: MapAccess<'de>>(self, a: A) -> Result<Detail, A::Error> {
                read_object(a).map(Detail::Object)
            }
        }
        d.deserialize_any(Any)
    }
}

/// The serializer behind [`Detail::of`]: it makes what `serde_json`'s value serializer makes, as
/// [`Detail`]s (a struct's field names borrowed as keys).
struct ToDetail;

/// A map key as `serde_json` makes one: a string as it is, a number or a boolean in its
/// text; anything else is refused.
fn map_key<T: Serialize + ?Sized>(key: &T) -> Result<Key, serde_json::Error> {
    match serde_json::to_value(key)? {
        Value::String(s) => Ok(Key::Owned(s)),
        Value::Number(n) => Ok(Key::Owned(n.to_string())),
        Value::Bool(b) => Ok(Key::Borrowed(if b { "true" } else { "false" })),
        _ => Err(ser::Error::custom("key must be a string")),
    }
}

/// The error of a number `serde_json` cannot hold.
fn out_of_range() -> serde_json::Error {
    ser::Error::custom("number out of range")
}

/// A list as it is serialised.
struct List(Vec<Detail>);

/// A tuple variant as it is serialised: `{variant: [...]}`.
struct VariantList(&'static str, Vec<Detail>);

/// A map or struct as it is serialised, with the key waiting for its value.
struct Object {
    details: Details,
    key: Option<Key>,
}

/// A struct variant as it is serialised: `{variant: {...}}`.
struct VariantObject(&'static str, Details);

/// `{variant: value}`.
fn variant(name: &'static str, value: Detail) -> Detail {
    let mut d = Details::with_capacity(1);
    d.insert(Key::Borrowed(name), value);
    Detail::Object(d)
}

impl ser::SerializeSeq for List {
    type Ok = Detail;
    type Error = serde_json::Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Self::Error> {
        self.0.push(Detail::of(v)?);
        Ok(())
    }
    fn end(self) -> Result<Detail, Self::Error> {
        Ok(Detail::Array(self.0))
    }
}

impl ser::SerializeTuple for List {
    type Ok = Detail;
    type Error = serde_json::Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Self::Error> {
        ser::SerializeSeq::serialize_element(self, v)
    }
    fn end(self) -> Result<Detail, Self::Error> {
        ser::SerializeSeq::end(self)
    }
}

impl ser::SerializeTupleStruct for List {
    type Ok = Detail;
    type Error = serde_json::Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Self::Error> {
        ser::SerializeSeq::serialize_element(self, v)
    }
    fn end(self) -> Result<Detail, Self::Error> {
        ser::SerializeSeq::end(self)
    }
}

impl ser::SerializeTupleVariant for VariantList {
    type Ok = Detail;
    type Error = serde_json::Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Self::Error> {
        self.1.push(Detail::of(v)?);
        Ok(())
    }
    fn end(self) -> Result<Detail, Self::Error> {
        Ok(variant(self.0, Detail::Array(self.1)))
    }
}

impl SerializeMap for Object {
    type Ok = Detail;
    type Error = serde_json::Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Self::Error> {
        self.key = Some(map_key(key)?);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Self::Error> {
        let key = self
            .key
            .take()
            .ok_or_else(|| ser::Error::custom("a value without a key"))?;
        self.details.push(key, Detail::of(v)?);
        Ok(())
    }
    fn end(self) -> Result<Detail, Self::Error> {
        Ok(settled(self.details))
    }
}

/// A struct's field as a detail, its name borrowed.
fn field<T: Serialize + ?Sized>(
    d: &mut Details,
    key: &'static str,
    v: &T,
) -> Result<(), serde_json::Error> {
    d.push(Key::Borrowed(key), Detail::of(v)?);
    Ok(())
}

/// The object of the pairs pushed into `d`, settled ([`Details::settle`]).
fn settled(mut d: Details) -> Detail {
    d.settle();
    Detail::Object(d)
}

impl ser::SerializeStruct for Object {
    type Ok = Detail;
    type Error = serde_json::Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        v: &T,
    ) -> Result<(), Self::Error> {
        field(&mut self.details, key, v)
    }
    fn end(self) -> Result<Detail, Self::Error> {
        Ok(settled(self.details))
    }
}

impl ser::SerializeStructVariant for VariantObject {
    type Ok = Detail;
    type Error = serde_json::Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        v: &T,
    ) -> Result<(), Self::Error> {
        field(&mut self.1, key, v)
    }
    fn end(self) -> Result<Detail, Self::Error> {
        Ok(variant(self.0, settled(self.1)))
    }
}

impl Serializer for ToDetail {
    type Ok = Detail;
    type Error = serde_json::Error;
    type SerializeSeq = List;
    type SerializeTuple = List;
    type SerializeTupleStruct = List;
    type SerializeTupleVariant = VariantList;
    type SerializeMap = Object;
    type SerializeStruct = Object;
    type SerializeStructVariant = VariantObject;

    fn serialize_bool(self, b: bool) -> Result<Detail, Self::Error> {
        Ok(Detail::Bool(b))
    }
    fn serialize_i8(self, n: i8) -> Result<Detail, Self::Error> {
        Ok(n.into())
    }
    fn serialize_i16(self, n: i16) -> Result<Detail, Self::Error> {
        Ok(n.into())
    }
    fn serialize_i32(self, n: i32) -> Result<Detail, Self::Error> {
        Ok(n.into())
    }
    fn serialize_i64(self, n: i64) -> Result<Detail, Self::Error> {
        Ok(n.into())
    }
    fn serialize_i128(self, n: i128) -> Result<Detail, Self::Error> {
        if let Ok(u) = u64::try_from(n) {
            Ok(u.into())
        } else if let Ok(i) = i64::try_from(n) {
            Ok(i.into())
        } else {
            Err(out_of_range())
        }
    }
    fn serialize_u8(self, n: u8) -> Result<Detail, Self::Error> {
        Ok(n.into())
    }
    fn serialize_u16(self, n: u16) -> Result<Detail, Self::Error> {
        Ok(n.into())
    }
    fn serialize_u32(self, n: u32) -> Result<Detail, Self::Error> {
        Ok(n.into())
    }
    fn serialize_u64(self, n: u64) -> Result<Detail, Self::Error> {
        Ok(n.into())
    }
    fn serialize_u128(self, n: u128) -> Result<Detail, Self::Error> {
        u64::try_from(n)
            .map(Detail::from)
            .map_err(|_| out_of_range())
    }
    fn serialize_f32(self, f: f32) -> Result<Detail, Self::Error> {
        // The number `serde_json` makes of an `f32`.
        Ok(match Value::from(f) {
            Value::Number(n) => Detail::Number(n),
            _ => Detail::Null,
        })
    }
    fn serialize_f64(self, f: f64) -> Result<Detail, Self::Error> {
        Ok(f.into())
    }
    fn serialize_char(self, c: char) -> Result<Detail, Self::Error> {
        Ok(Detail::String(c.to_string()))
    }
    fn serialize_str(self, s: &str) -> Result<Detail, Self::Error> {
        Ok(Detail::String(s.to_owned()))
    }
    fn serialize_bytes(self, b: &[u8]) -> Result<Detail, Self::Error> {
        Ok(Detail::Array(b.iter().map(|&b| b.into()).collect()))
    }
    fn serialize_none(self) -> Result<Detail, Self::Error> {
        Ok(Detail::Null)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<Detail, Self::Error> {
        v.serialize(self)
    }
    fn serialize_unit(self) -> Result<Detail, Self::Error> {
        Ok(Detail::Null)
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<Detail, Self::Error> {
        Ok(Detail::Null)
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        name: &'static str,
    ) -> Result<Detail, Self::Error> {
        Ok(Detail::String(name.to_owned()))
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        v: &T,
    ) -> Result<Detail, Self::Error> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        name: &'static str,
        v: &T,
    ) -> Result<Detail, Self::Error> {
        Ok(variant(name, Detail::of(v)?))
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<List, Self::Error> {
        Ok(List(Vec::with_capacity(len.unwrap_or(0))))
    }
    fn serialize_tuple(self, len: usize) -> Result<List, Self::Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _: &'static str, len: usize) -> Result<List, Self::Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        name: &'static str,
        len: usize,
    ) -> Result<VariantList, Self::Error> {
        Ok(VariantList(name, Vec::with_capacity(len)))
    }
    fn serialize_map(self, len: Option<usize>) -> Result<Object, Self::Error> {
        Ok(Object {
            details: Details::with_capacity(len.unwrap_or(0)),
            key: None,
        })
    }
    fn serialize_struct(self, _: &'static str, len: usize) -> Result<Object, Self::Error> {
        self.serialize_map(Some(len))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        name: &'static str,
        _: usize,
    ) -> Result<VariantObject, Self::Error> {
        Ok(VariantObject(name, Details::new()))
    }
    fn collect_str<T: fmt::Display + ?Sized>(self, v: &T) -> Result<Detail, Self::Error> {
        Ok(Detail::String(v.to_string()))
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
        d.insert("a".into(), json!(1).into());
        d.insert("b".into(), 2.into());
        assert_eq!(d.insert("a".into(), 3.into()), Some(Detail::from(1)));
        d.extend([("c", Detail::from(4)), ("b", json!(5).into())]);
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

    #[derive(serde::Serialize)]
    enum Shape {
        Unit,
        Newtype(u8),
        Tuple(i8, &'static str),
        Struct { a: Option<u32>, b: char },
    }

    #[derive(serde::Serialize)]
    struct Wrapped(Vec<Shape>);

    #[derive(serde::Serialize)]
    struct Everything {
        shapes: Wrapped,
        unit: (),
        none: Option<u8>,
        floats: (f32, f64, f64),
        wide: (i128, u128),
        bytes: serde_bytes::ByteBuf,
        keyed: std::collections::BTreeMap<i32, &'static str>,
        flags: std::collections::BTreeMap<bool, u8>,
        value: Value,
    }

    /// `Detail::of` makes what `serde_json::to_value` makes, for every shape serde has,
    /// and a detail written as JSON reads back as the same detail.
    #[test]
    fn every_shape_is_made_as_to_value_makes_it() {
        let e = Everything {
            shapes: Wrapped(vec![
                Shape::Unit,
                Shape::Newtype(7),
                Shape::Tuple(-1, "t"),
                Shape::Struct { a: None, b: 'c' },
            ]),
            unit: (),
            none: None,
            floats: (0.1, 1e300, f64::NAN),
            wide: (-5, u128::from(u64::MAX)),
            bytes: serde_bytes::ByteBuf::from(vec![0, 255]),
            keyed: [(-3, "m"), (4, "p")].into_iter().collect(),
            flags: [(true, 1)].into_iter().collect(),
            value: json!({"z": [1.5, -2, null], "a": {"k": "v"}}),
        };
        let made = Detail::of(&e).expect("made");
        let value = serde_json::to_value(&e).expect("value");
        assert_eq!(made, value);
        assert_eq!(Value::from(made.clone()), value);
        let text = serde_json::to_string(&made).expect("json");
        assert_eq!(text, serde_json::to_string(&value).expect("json"));
        let back: Detail = serde_json::from_str(&text).expect("read back");
        assert_eq!(back, made);
        assert_eq!(Detail::from(value.clone()), made);
        assert!(Detail::of(&i128::MAX).is_err() && serde_json::to_value(i128::MAX).is_err());
        assert_eq!(made["shapes"][1]["Newtype"], 7);
        assert_eq!(made["keyed"]["-3"], "m");
        assert!(made["shapes"][9].is_null() && made["none"].is_null());
    }

    /// Pairs pushed and settled end as inserting them in turn ends, with few names and
    /// with many, repeated or not; a JSON object read back keeps its order.
    #[test]
    fn settled_pairs_are_inserted_pairs() {
        for n in [0usize, 1, 2, 5, 16, 17, 40, 300] {
            for spread in [1usize, 3, 7, n.max(1)] {
                let names: Vec<String> = (0..n)
                    .map(|i| format!("k{}", (i * 7919) % (n / spread + 1)))
                    .collect();
                let mut inserted = Details::new();
                let mut pushed = Details::new();
                for (i, k) in names.iter().enumerate() {
                    inserted.insert(Key::Owned(k.clone()), i.into());
                    pushed.push(Key::Owned(k.clone()), i.into());
                }
                pushed.settle();
                assert_eq!(pushed.pairs, inserted.pairs, "{n} {spread}");
            }
        }
        let text = r#"{"b":1,"a":2,"b":3,"c":{"x":1,"x":2}}"#;
        let d: Details = serde_json::from_str(text).expect("object");
        let v: Value = serde_json::from_str(text).expect("object");
        assert_eq!(
            serde_json::to_string(&d).unwrap(),
            serde_json::to_string(&v).unwrap()
        );
        let mut shuffled = Details::new();
        for (k, v) in d.iter().rev() {
            shuffled.insert(Key::Owned(k.to_string()), v.clone());
        }
        assert_eq!(shuffled, d);
        shuffled.insert("a".into(), Detail::Null);
        assert_ne!(shuffled, d);
    }
}
