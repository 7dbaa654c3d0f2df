//! Small conversions for report details.

use serde_json::Value;

/// `value`, or JSON null when absent.
pub fn or_null<T: Into<Value>>(value: Option<T>) -> Value {
    value.map_or(Value::Null, Into::into)
}
