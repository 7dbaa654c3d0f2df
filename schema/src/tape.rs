//! JSON documents read once into a flat tape ([`Tape`]) and read through borrowing
//! views ([`Json`]), for the bodies a grader reads but never changes (the inventory's
//! list pages, which every inventory check walks, and results read for a few members).
//!
//! A `serde_json::Value` holds every string, array and object in an allocation of its
//! own, and with `preserve_order` (which this workspace needs: reports quote server
//! objects in their order) every object is an `IndexMap` that hashes each name with
//! SipHash into a table of its own. Building one costs several times the parse itself,
//! and freeing it walks it again. A tape is one vector of nodes in document order, one
//! string holding the text of every string, and one vector of numbers: three
//! allocations a document, whatever its shape.
//!
//! **The same reading as `serde_json::Value`.** The tape is built by serde_json's own
//! parser (the document is handed to a visitor that appends nodes, [`Tape::parse`]), so
//! what it accepts, refuses, and reads as a number is exactly what parsing into a
//! `Value` does. Numbers are kept as the `serde_json::Number` that parse makes (a float
//! that is not finite becomes null, as in a `Value`). An object that repeats a name is
//! read as a `Value` reads it: the name in its first place, with its last value
//! ([`Json::members`], [`Json::get`]). [`Json::to_value`] gives the `Value` back, and the
//! tests hold it equal to serde_json's on generated and hostile documents.
//!
//! **Messages.** [`messages_in`] reads a response body as
//! [`derive::messages_in`](crate::derive::messages_in) does (an SSE body event by event,
//! arrays flattened, what is not an object skipped), each message a view into the tape
//! of its document.

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Number, Value};

use crate::derive::{ErrorHead, MessageHead};
use crate::vocab::meta;

/// What a node is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Null,
    False,
    True,
    /// `a`: index in [`Tape::numbers`].
    Number,
    /// `a`, `b`: start and length of its text in [`Tape::text`].
    String,
    /// `a`: items; `b`: the node after its last item's subtree.
    Array,
    /// `a`: members as written (a repeated name counted each time); `b`: the node after
    /// its last member. Members are laid out as a name (a `String` node) followed by
    /// the value's subtree.
    Object,
    /// An [`Kind::Object`] that repeats a name: its members as read are in
    /// [`Tape::settled`].
    ObjectRepeated,
}

/// An object member as a `Value` holds it: (name node, value node).
type Member = (u32, u32);

#[derive(Debug, Clone, Copy)]
struct Node {
    kind: Kind,
    a: u32,
    b: u32,
}

/// One JSON document, parsed ([`Tape::parse`]) into nodes in document order.
#[derive(Debug, Clone, Default)]
pub struct Tape {
    nodes: Vec<Node>,
    /// The text of every string (names included), unescaped, one after the other.
    text: String,
    numbers: Vec<Number>,
    /// Per object that repeats a name (by node, ascending): its members as a `Value`
    /// reads them, each name once in its first place with its last value, as (name
    /// node, value node).
    settled: Vec<(u32, Box<[Member]>)>,
    /// While parsing: the name nodes of the members of the objects open, innermost
    /// last (one list for the whole document, so no object makes one of its own to be
    /// checked for a repeated name).
    names: Vec<u32>,
}

impl Tape {
    /// `doc` parsed as serde_json parses it into a `Value` (the same errors), into a tape.
    pub fn parse(doc: &[u8]) -> Result<Tape, serde_json::Error> {
        // Room made once from the document's length: its text is at most the
        // document's, and a node takes at least two of its bytes but for a few lone
        // digits, so these vectors are rarely grown.
        let mut tape = Tape {
            nodes: Vec::with_capacity(doc.len() / 8 + 1),
            text: String::with_capacity(doc.len()),
            ..Tape::default()
        };
        match std::str::from_utf8(doc) {
            // Checked once here rather than string by string as the parse goes (invalid
            // UTF-8 is refused by either reading), as `derive::messages_in` does.
            Ok(text) => {
                let mut de = serde_json::Deserializer::from_str(text);
                Build(&mut tape).deserialize(&mut de)?;
                de.end()?;
            }
            Err(_) => {
                let mut de = serde_json::Deserializer::from_slice(doc);
                Build(&mut tape).deserialize(&mut de)?;
                de.end()?;
            }
        }
        // The parse's own list, empty now, is not kept with the document, nor room the
        // document did not use (a page of one long string needs few nodes).
        tape.names = Vec::new();
        if tape.nodes.capacity() > 2 * tape.nodes.len() + 64 {
            tape.nodes.shrink_to_fit();
        }
        if tape.text.capacity() > 2 * tape.text.len() + 1024 {
            tape.text.shrink_to_fit();
        }
        Ok(tape)
    }

    /// The tape of `value` (what parsing its JSON text gives).
    pub fn from_value(value: &Value) -> Tape {
        let mut tape = Tape::default();
        tape.push_value(value);
        tape
    }

    fn push_value(&mut self, v: &Value) {
        match v {
            Value::Null => self.push(Kind::Null, 0, 0),
            Value::Bool(false) => self.push(Kind::False, 0, 0),
            Value::Bool(true) => self.push(Kind::True, 0, 0),
            Value::Number(n) => self.push_number(n.clone()),
            Value::String(s) => self.push_str(s),
            Value::Array(items) => {
                let at = self.open(Kind::Array);
                items.iter().for_each(|x| self.push_value(x));
                self.close(at, items.len());
            }
            Value::Object(m) => {
                let at = self.open(Kind::Object);
                for (k, x) in m {
                    self.push_str(k);
                    self.push_value(x);
                }
                // A map has no repeated name: nothing to settle.
                self.close(at, m.len());
            }
        }
    }

    /// The document's value.
    pub fn root(&self) -> Json<'_> {
        Json { tape: self, at: 0 }
    }

    fn push(&mut self, kind: Kind, a: u32, b: u32) {
        self.nodes.push(Node { kind, a, b });
    }

    fn push_number(&mut self, n: Number) {
        let at = index(self.numbers.len());
        self.numbers.push(n);
        self.push(Kind::Number, at, 0);
    }

    fn push_str(&mut self, s: &str) {
        let start = index(self.text.len());
        self.text.push_str(s);
        self.push(Kind::String, start, index(s.len()));
    }

    /// A container's node, its counts written when it is closed.
    fn open(&mut self, kind: Kind) -> u32 {
        let at = index(self.nodes.len());
        self.push(kind, 0, 0);
        at
    }

    fn close(&mut self, at: u32, n: usize) {
        let end = index(self.nodes.len());
        let node = &mut self.nodes[at as usize];
        node.a = index(n);
        node.b = end;
    }

    /// The node after node `at`'s subtree.
    fn end(&self, at: u32) -> u32 {
        let n = self.nodes[at as usize];
        match n.kind {
            Kind::Array | Kind::Object | Kind::ObjectRepeated => n.b,
            _ => at + 1,
        }
    }

    fn str_at(&self, at: u32) -> &str {
        let n = self.nodes[at as usize];
        &self.text[n.a as usize..(n.a + n.b) as usize]
    }

    /// Close the object at `at`, whose `n` members' names are the last `n` of
    /// [`Tape::names`] (taken off it); when it repeats a name, keep its members as a
    /// `Value` reads them (first place, last value).
    fn close_object(&mut self, at: u32, n: usize) {
        self.close(at, n);
        let from = self.names.len() - n;
        let names = &self.names[from..];
        let repeated = if n <= 16 {
            // Names are compared by their length first: most differ there.
            let node = |k: u32| self.nodes[k as usize];
            (1..n).any(|i| {
                let a = node(names[i]);
                names[..i].iter().any(|&k| {
                    let b = node(k);
                    a.b == b.b
                        && self.text.as_bytes()[a.a as usize..(a.a + a.b) as usize]
                            == self.text.as_bytes()[b.a as usize..(b.a + b.b) as usize]
                })
            })
        } else {
            let mut sorted: Vec<&str> = names.iter().map(|&k| self.str_at(k)).collect();
            sorted.sort_unstable();
            sorted.windows(2).any(|w| w[0] == w[1])
        };
        if !repeated {
            self.names.truncate(from);
            return;
        }
        let members: Vec<(u32, u32)> = self.names[from..].iter().map(|&k| (k, k + 1)).collect();
        self.names.truncate(from);
        let mut settled: Vec<(u32, u32)> = Vec::with_capacity(n);
        let mut first: std::collections::HashMap<&str, usize> = Default::default();
        for (name, value) in members {
            match first.entry(self.str_at(name)) {
                std::collections::hash_map::Entry::Occupied(e) => settled[*e.get()].1 = value,
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(settled.len());
                    settled.push((name, value));
                }
            }
        }
        drop(first);
        self.nodes[at as usize].kind = Kind::ObjectRepeated;
        // Objects close inner first; the list is kept in node order for the search.
        let place = self.settled.partition_point(|(o, _)| *o < at);
        self.settled.insert(place, (at, settled.into_boxed_slice()));
    }

    fn settled_of(&self, at: u32) -> &[Member] {
        self.settled
            .binary_search_by_key(&at, |(o, _)| *o)
            .map_or(&[], |i| &self.settled[i].1)
    }
}

/// A position or count as the tape keeps it. A body is at most a bundle (1 GiB), so
/// every count of its nodes and bytes fits.
fn index(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The visitor that appends what serde_json reads to a tape: a `Value`'s visitor, with
/// nodes for values.
struct Build<'t>(&'t mut Tape);

impl<'de> DeserializeSeed<'de> for Build<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Build<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any valid JSON value")
    }

    fn visit_bool<E>(self, b: bool) -> Result<(), E> {
        self.0.push(if b { Kind::True } else { Kind::False }, 0, 0);
        Ok(())
    }

    fn visit_i64<E>(self, n: i64) -> Result<(), E> {
        self.0.push_number(n.into());
        Ok(())
    }

    fn visit_u64<E>(self, n: u64) -> Result<(), E> {
        self.0.push_number(n.into());
        Ok(())
    }

    fn visit_f64<E>(self, f: f64) -> Result<(), E> {
        // As a `Value` reads it: a float that is not finite is null.
        match Number::from_f64(f) {
            Some(n) => self.0.push_number(n),
            None => self.0.push(Kind::Null, 0, 0),
        }
        Ok(())
    }

    fn visit_str<E>(self, s: &str) -> Result<(), E> {
        self.0.push_str(s);
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        self.0.push(Kind::Null, 0, 0);
        Ok(())
    }

    fn visit_none<E>(self) -> Result<(), E> {
        self.0.push(Kind::Null, 0, 0);
        Ok(())
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let tape = self.0;
        let at = tape.open(Kind::Array);
        let mut n = 0;
        while seq.next_element_seed(Build(&mut *tape))?.is_some() {
            n += 1;
        }
        tape.close(at, n);
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let tape = self.0;
        let at = tape.open(Kind::Object);
        let mut n = 0;
        while map.next_key_seed(Name(&mut *tape))?.is_some() {
            tape.names.push(index(tape.nodes.len() - 1));
            map.next_value_seed(Build(&mut *tape))?;
            n += 1;
        }
        tape.close_object(at, n);
        Ok(())
    }
}

/// A member's name, appended as a string node.
struct Name<'t>(&'t mut Tape);

impl<'de> DeserializeSeed<'de> for Name<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Name<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a member name")
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<(), E> {
        self.0.push_str(s);
        Ok(())
    }
}

/// A value in a [`Tape`]: the reading side of a `serde_json::Value`, borrowed.
#[derive(Clone, Copy)]
pub struct Json<'t> {
    tape: &'t Tape,
    at: u32,
}

impl fmt::Debug for Json<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.to_value())
    }
}

impl PartialEq for Json<'_> {
    /// As the two values compare (objects as maps, in any order).
    fn eq(&self, other: &Json<'_>) -> bool {
        self.to_value() == other.to_value()
    }
}

impl<'t> Json<'t> {
    fn node(self) -> Node {
        self.tape.nodes[self.at as usize]
    }

    pub fn is_null(self) -> bool {
        self.node().kind == Kind::Null
    }

    pub fn is_boolean(self) -> bool {
        matches!(self.node().kind, Kind::True | Kind::False)
    }

    pub fn is_number(self) -> bool {
        self.node().kind == Kind::Number
    }

    pub fn is_string(self) -> bool {
        self.node().kind == Kind::String
    }

    pub fn is_array(self) -> bool {
        self.node().kind == Kind::Array
    }

    pub fn is_object(self) -> bool {
        matches!(self.node().kind, Kind::Object | Kind::ObjectRepeated)
    }

    pub fn as_bool(self) -> Option<bool> {
        match self.node().kind {
            Kind::True => Some(true),
            Kind::False => Some(false),
            _ => None,
        }
    }

    pub fn as_str(self) -> Option<&'t str> {
        self.is_string().then(|| self.tape.str_at(self.at))
    }

    pub fn as_number(self) -> Option<&'t Number> {
        let n = self.node();
        (n.kind == Kind::Number).then(|| &self.tape.numbers[n.a as usize])
    }

    pub fn as_u64(self) -> Option<u64> {
        self.as_number()?.as_u64()
    }

    pub fn as_i64(self) -> Option<i64> {
        self.as_number()?.as_i64()
    }

    pub fn as_f64(self) -> Option<f64> {
        self.as_number()?.as_f64()
    }

    /// Member `key` of an object (`None` for anything else): of a repeated name, the
    /// last value, as a `Value` reads it.
    pub fn get(self, key: &str) -> Option<Json<'t>> {
        let tape = self.tape;
        // Names compared as bytes, their lengths first: no string is made of a name
        // that is not the one asked for.
        let named = |k: u32| {
            let n = tape.nodes[k as usize];
            n.b as usize == key.len()
                && tape.text.as_bytes()[n.a as usize..(n.a + n.b) as usize] == *key.as_bytes()
        };
        let at = match self.node().kind {
            Kind::Object => {
                let mut k = self.at + 1;
                let mut found = None;
                for _ in 0..self.node().a {
                    if named(k) {
                        found = Some(k + 1);
                        break;
                    }
                    k = tape.end(k + 1);
                }
                found
            }
            Kind::ObjectRepeated => tape
                .settled_of(self.at)
                .iter()
                .find(|(k, _)| named(*k))
                .map(|&(_, v)| v),
            _ => None,
        }?;
        Some(Json { tape, at })
    }

    /// The members of an object as a `Value` holds them (none for anything else):
    /// in document order, a repeated name once, in its first place, with its last value.
    pub fn members(self) -> Members<'t> {
        let n = self.node();
        let settled = if n.kind == Kind::ObjectRepeated {
            self.tape.settled_of(self.at)
        } else {
            &[]
        };
        Members {
            tape: self.tape,
            next: self.at + 1,
            left: if n.kind == Kind::Object { n.a } else { 0 },
            settled: settled.iter(),
        }
    }

    /// The items of an array (none for anything else), in order.
    pub fn items(self) -> Items<'t> {
        let n = self.node();
        Items {
            tape: self.tape,
            next: self.at + 1,
            left: if n.kind == Kind::Array { n.a } else { 0 },
        }
    }

    /// Items of an array, or members of an object as a `Value` holds them; 0 for
    /// anything else.
    pub fn len(self) -> usize {
        let n = self.node();
        match n.kind {
            Kind::Array | Kind::Object => n.a as usize,
            Kind::ObjectRepeated => self.tape.settled_of(self.at).len(),
            _ => 0,
        }
    }

    /// True when [`Json::len`] is 0.
    pub fn is_empty(self) -> bool {
        self.len() == 0
    }

    /// The `Value` this is (what serde_json parses the same text into).
    pub fn to_value(self) -> Value {
        let n = self.node();
        match n.kind {
            Kind::Null => Value::Null,
            Kind::False => Value::Bool(false),
            Kind::True => Value::Bool(true),
            Kind::Number => Value::Number(self.tape.numbers[n.a as usize].clone()),
            Kind::String => Value::String(self.tape.str_at(self.at).to_owned()),
            Kind::Array => Value::Array(self.items().map(Json::to_value).collect()),
            Kind::Object | Kind::ObjectRepeated => Value::Object(
                self.members()
                    .map(|(k, v)| (k.to_owned(), v.to_value()))
                    .collect(),
            ),
        }
    }

    /// True when this is the value `v` (as `Value`'s equality: objects as maps, numbers
    /// by their kind and value), without building a `Value`.
    pub fn eq_value(self, v: &Value) -> bool {
        let n = self.node();
        match (n.kind, v) {
            (Kind::Null, Value::Null) => true,
            (Kind::False, Value::Bool(false)) | (Kind::True, Value::Bool(true)) => true,
            (Kind::Number, Value::Number(x)) => self.tape.numbers[n.a as usize] == *x,
            (Kind::String, Value::String(s)) => self.tape.str_at(self.at) == s,
            (Kind::Array, Value::Array(xs)) => {
                xs.len() == n.a as usize && self.items().zip(xs).all(|(a, b)| a.eq_value(b))
            }
            (Kind::Object | Kind::ObjectRepeated, Value::Object(m)) => {
                self.len() == m.len()
                    && self
                        .members()
                        .all(|(k, a)| m.get(k).is_some_and(|b| a.eq_value(b)))
            }
            _ => false,
        }
    }
}

/// The members of an object ([`Json::members`]).
#[derive(Clone)]
pub struct Members<'t> {
    tape: &'t Tape,
    next: u32,
    left: u32,
    settled: std::slice::Iter<'t, (u32, u32)>,
}

impl<'t> Iterator for Members<'t> {
    type Item = (&'t str, Json<'t>);

    fn next(&mut self) -> Option<Self::Item> {
        let (name, value) = match self.settled.next() {
            Some(&(name, value)) => (name, value),
            None => {
                if self.left == 0 {
                    return None;
                }
                self.left -= 1;
                let name = self.next;
                self.next = self.tape.end(name + 1);
                (name, name + 1)
            }
        };
        Some((
            self.tape.str_at(name),
            Json {
                tape: self.tape,
                at: value,
            },
        ))
    }
}

/// The items of an array ([`Json::items`]).
#[derive(Clone)]
pub struct Items<'t> {
    tape: &'t Tape,
    next: u32,
    left: u32,
}

impl<'t> Iterator for Items<'t> {
    type Item = Json<'t>;

    fn next(&mut self) -> Option<Json<'t>> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let at = self.next;
        self.next = self.tape.end(at);
        Some(Json {
            tape: self.tape,
            at,
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left as usize, Some(self.left as usize))
    }
}

impl ExactSizeIterator for Items<'_> {}

/// The JSON-RPC messages of a body, each in the tape of its document ([`messages_in`]).
#[derive(Debug, Clone, Default)]
pub struct Messages {
    tapes: Vec<Tape>,
    /// Per message, in order: its tape and node.
    at: Vec<(u32, u32)>,
}

impl Messages {
    /// How many messages.
    pub fn len(&self) -> usize {
        self.at.len()
    }

    /// True when there is none.
    pub fn is_empty(&self) -> bool {
        self.at.is_empty()
    }

    /// Message `i`.
    pub fn get(&self, i: usize) -> Option<Json<'_>> {
        let &(t, at) = self.at.get(i)?;
        Some(Json {
            tape: &self.tapes[t as usize],
            at,
        })
    }

    /// The messages, in order.
    pub fn iter(&self) -> impl Iterator<Item = Json<'_>> + '_ {
        self.at.iter().map(|&(t, at)| Json {
            tape: &self.tapes[t as usize],
            at,
        })
    }

    /// The messages as values (what [`crate::derive::messages_in`] gives).
    pub fn to_values(&self) -> Vec<Value> {
        self.iter().map(Json::to_value).collect()
    }

    /// Where value `j` of one of these messages is, to be read again with
    /// [`Messages::at`] by a holder of these messages that cannot borrow them; `None`
    /// when `j` is not in them.
    pub fn place_of(&self, j: Json<'_>) -> Option<Place> {
        let t = self.tapes.iter().position(|t| std::ptr::eq(t, j.tape))?;
        Some(Place {
            tape: index(t),
            node: j.at,
        })
    }

    /// The places of the items of `array`, one of these messages' values (none when it
    /// is not an array or not theirs): found once for the array, not once per item.
    pub fn item_places<'m>(&'m self, array: Json<'m>) -> impl Iterator<Item = Place> + 'm {
        let tape = self.place_of(array).map(|p| p.tape);
        tape.into_iter()
            .flat_map(move |tape| array.items().map(move |v| Place { tape, node: v.at }))
    }

    /// The value at `place` ([`Messages::place_of`]).
    ///
    /// # Panics
    /// When `place` was not made by these messages.
    pub fn at(&self, place: Place) -> Json<'_> {
        Json {
            tape: &self.tapes[place.tape as usize],
            at: place.node,
        }
    }

    /// Add a message that is already a value (what an HTTP+SSE stream carried for a
    /// request, parsed when the stream was read), as it is: the value lists keep every
    /// one they are given (those a stream carries are objects), and the places of the
    /// messages after it must stay those of the values.
    pub fn push_value(&mut self, v: &Value) {
        self.at.push((index(self.tapes.len()), 0));
        self.tapes.push(Tape::from_value(v));
    }

    /// Add the messages of one document: the document when it is an object, the objects
    /// among its items when it is an array.
    fn push(&mut self, tape: Tape) {
        let t = index(self.tapes.len());
        let root = tape.root();
        match root.node().kind {
            Kind::Object | Kind::ObjectRepeated => self.at.push((t, 0)),
            Kind::Array => self
                .at
                .extend(root.items().filter(|m| m.is_object()).map(|m| (t, m.at))),
            _ => return,
        }
        self.tapes.push(tape);
    }
}

/// Where a value is among [`Messages`] ([`Messages::place_of`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place {
    tape: u32,
    node: u32,
}

/// Every JSON-RPC message in a body, as [`crate::derive::messages_in`] reads them: the
/// events of an SSE body (`media_type` `text/event-stream`), or the JSON body itself;
/// arrays flattened to their objects; unparseable parts skipped.
pub fn messages_in(media_type: Option<&str>, body: &[u8]) -> Messages {
    let mut out = Messages::default();
    if media_type == Some("text/event-stream") {
        for ev in crate::sse::parse(body).events {
            if let Ok(t) = Tape::parse(ev.data.as_bytes()) {
                out.push(t);
            }
        }
    } else if let Ok(t) = Tape::parse(body) {
        out.push(t);
    }
    out
}

/// The JSON-RPC messages answering an HTTP response, read into tapes, as
/// [`crate::derive::answer_messages`] reads them: those of its body (a whole one only;
/// an event stream event by event) and, on HTTP+SSE, those the stream carried for it
/// (`stream`).
pub fn answer_messages(
    resp: &crate::model::HttpResponse,
    stream: Option<&crate::derive::StreamAnswer>,
) -> Messages {
    let mut msgs = if crate::derive::body_cut(&resp.body).is_none() {
        let sse = crate::derive::media_type_is(&resp.headers, "text/event-stream");
        messages_in(sse.then_some("text/event-stream"), &resp.body.bytes)
    } else {
        Messages::default()
    };
    if let Some(s) = stream {
        s.messages.iter().for_each(|m| msgs.push_value(m));
    }
    msgs
}

/// Whether message `m` answers request `id` ([`crate::derive::response_to`]): an object
/// whose `id` is `id` and that has a `result` or an `error`.
pub fn answers(m: Json<'_>, id: &Value) -> bool {
    let (mut same, mut answer) = (false, false);
    for (k, v) in m.members() {
        match k {
            "id" => same = v.eq_value(id),
            "result" | "error" => answer = true,
            _ => {}
        }
    }
    same && answer
}

/// The head of message `m` ([`MessageHead`]): what [`MessageHead::of`] reads of the
/// message parsed as a value, read in one pass over the message's members and one over
/// its result's (a member looked up by name is a pass of its own).
pub fn head_of(m: Json<'_>) -> MessageHead {
    let (mut id, mut result, mut error) = (None, None, None);
    for (k, v) in m.members() {
        match k {
            "id" => id = Some(v),
            "result" => result = Some(v),
            "error" => error = Some(v),
            _ => {}
        }
    }
    let mut head = MessageHead {
        id: id.map(Json::to_value),
        result: result.map(Json::is_null),
        error: error.map(|e| match e.is_object() {
            true => ErrorHead {
                object: true,
                code: e.get("code").map(Json::to_value),
                message: e.get("message").map(Json::to_value),
                data: e.get("data").map(Json::to_value),
            },
            false => ErrorHead::default(),
        }),
        ..MessageHead::default()
    };
    for (k, v) in result.iter().flat_map(|r| r.members()) {
        match k {
            "_meta" => {
                head.result_names_server = v
                    .get(meta::SERVER_INFO)
                    .is_some_and(|o| o.is_object() && !o.is_empty());
            }
            "isError" => head.result_is_error = v.as_bool().unwrap_or(false),
            "protocolVersion" => head.result_protocol_version = Some(v.to_value()),
            "supportedVersions" => head.result_supported_versions = Some(v.to_value()),
            _ => {}
        }
        if v.is_array() {
            head.result_arrays.push((k.to_owned(), v.len()));
        }
    }
    head.result_arrays.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    head
}

/// The answer to request `id` among a list page's messages when it carries a `result`:
/// its index, and whether the page was the last (its result has no string
/// `nextCursor`), as [`crate::derive::list_page`] reads it.
pub fn list_page(msgs: &Messages, id: &Value) -> Option<(usize, bool)> {
    let index = msgs.iter().position(|m| answers(m, id))?;
    let result = msgs.get(index)?.get("result")?;
    let last = !result.get("nextCursor").is_some_and(Json::is_string);
    Some((index, last))
}

#[cfg(test)]
mod tests;
