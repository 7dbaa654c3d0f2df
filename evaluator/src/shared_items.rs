//! The items of an inventory list as the grader holds them ([`SharedItems`]): the
//! parsed pages they are in, shared with the bundle's memo of parsed bodies, so no item
//! is copied out of the page that carries it.

use mcp_probe_schema::derive::PageItems;
use serde_json::Value;
use std::sync::Arc;

/// The items of every page of one list, in order: each page held as its parsed JSON-RPC
/// messages (the memo's, shared) and which of them is the answer whose `result` lists
/// the items.
#[derive(Debug, Clone, Default)]
pub struct SharedItems {
    /// Pages with at least one item, in order.
    pages: Vec<Page>,
    /// Items across the pages.
    len: usize,
}

/// One page: its messages, and where its items are in them: the answer
/// `msgs[answer]`, the `result` member at position `result_at` of that object, and the
/// item array at position `items_at` of the result. Positions, not keys: reaching the
/// items hashes no key.
#[derive(Debug, Clone)]
struct Page {
    msgs: Arc<Vec<Value>>,
    answer: usize,
    result_at: usize,
    items_at: usize,
}

/// The value at position `i` of object `v` (none when `v` is not an object).
fn member(v: &Value, i: usize) -> Option<&Value> {
    v.as_object()?.values().nth(i)
}

/// The position of member `key` of object `v`, and its value.
fn position<'v>(v: &'v Value, key: &str) -> Option<(usize, &'v Value)> {
    v.as_object()?
        .iter()
        .enumerate()
        .find_map(|(i, (k, x))| (k == key).then_some((i, x)))
}

impl Page {
    /// The page's items.
    fn items(&self) -> &[Value] {
        self.msgs
            .get(self.answer)
            .and_then(|m| member(m, self.result_at))
            .and_then(|r| member(r, self.items_at))
            .and_then(Value::as_array)
            .map_or(&[], Vec::as_slice)
    }
}

impl SharedItems {
    /// Add a page: `msgs` are its messages, `msgs[answer]` the answer carrying the
    /// `result` whose `key` array lists the items. A page whose `result` has no `key`
    /// array, or an empty one, lists no item and is not kept.
    pub fn push_page(&mut self, msgs: Arc<Vec<Value>>, answer: usize, key: &str) {
        let Some((result_at, result)) = msgs.get(answer).and_then(|m| position(m, "result")) else {
            return;
        };
        let Some((items_at, Value::Array(items))) = position(result, key) else {
            return;
        };
        if items.is_empty() {
            return;
        }
        self.len += items.len();
        self.pages.push(Page {
            msgs,
            answer,
            result_at,
            items_at,
        });
    }

    /// How many items every page listed.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when no page listed an item.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The items of every page, in order.
    pub fn iter(&self) -> impl Iterator<Item = &Value> + '_ {
        self.pages.iter().flat_map(Page::items)
    }

    /// The items as values of their own (the copies `derive::inventory` holds).
    pub fn to_vec(&self) -> Vec<Value> {
        self.iter().cloned().collect()
    }
}

impl PageItems for SharedItems {
    fn take_page(&mut self, msgs: Vec<Value>, answer: usize, key: &'static str) {
        self.push_page(Arc::new(msgs), answer, key);
    }
}
