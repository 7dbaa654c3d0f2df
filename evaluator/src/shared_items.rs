//! The items of an inventory list as the grader holds them ([`SharedItems`]): the
//! list pages they are in, read into tapes ([`mcp_probe_schema::tape`]) and shared with
//! the bundle's memo of parsed bodies, so no item is copied out of the page that
//! carries it, and no page is built as `serde_json::Value`s.

use mcp_probe_schema::derive::PageItems;
use mcp_probe_schema::tape::{Json, Messages, Place};
use serde_json::Value;
use std::sync::Arc;

/// The items of every page of one list, in order: each page held as its messages (the
/// memo's, shared) and where its item array is in them.
#[derive(Debug, Clone, Default)]
pub struct SharedItems {
    /// Pages with at least one item, in order.
    pages: Vec<Page>,
    /// Items across the pages.
    len: usize,
}

/// One page: its messages, and where the item array of the answer's `result` is.
#[derive(Debug, Clone)]
struct Page {
    msgs: Arc<Messages>,
    items: Place,
}

impl Page {
    /// The page's items.
    fn items(&self) -> impl Iterator<Item = Json<'_>> + '_ {
        self.msgs.at(self.items).items()
    }
}

impl SharedItems {
    /// Add a page: `msgs` are its messages, message `answer` the answer carrying the
    /// `result` whose `key` array lists the items. A page whose `result` has no `key`
    /// array, or an empty one, lists no item and is not kept.
    pub fn push_page(&mut self, msgs: Arc<Messages>, answer: usize, key: &str) {
        let Some(items) = msgs
            .get(answer)
            .and_then(|m| m.get("result"))
            .and_then(|r| r.get(key))
            .filter(|a| a.is_array() && !a.is_empty())
        else {
            return;
        };
        let Some(place) = msgs.place_of(items) else {
            return;
        };
        self.len += items.len();
        self.pages.push(Page {
            msgs: Arc::clone(&msgs),
            items: place,
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
    pub fn iter(&self) -> impl Iterator<Item = Json<'_>> + '_ {
        self.pages.iter().flat_map(Page::items)
    }

    /// The items as values of their own (the copies `derive::inventory` holds).
    pub fn to_vec(&self) -> Vec<Value> {
        self.iter().map(Json::to_value).collect()
    }
}

impl PageItems for SharedItems {
    fn take_page(&mut self, msgs: Vec<Value>, answer: usize, key: &'static str) {
        // A page read from a stdio exchange: its messages are values already (every one
        // an object, so their places are kept).
        let mut tapes = Messages::default();
        msgs.iter().for_each(|m| tapes.push_value(m));
        self.push_page(Arc::new(tapes), answer, key);
    }
}
