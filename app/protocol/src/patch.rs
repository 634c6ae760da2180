//! JSON Patch (RFC 6902) over `serde_json::Value`, with JSON Pointers (RFC 6901).
//!
//! `board.patched` carries one of these. It is small enough to own (six operations)
//! and keeps the protocol crate free of dependencies that may not build for wasm32.
//! A patch applies atomically: if any operation fails, the document is left unchanged.

use crate::json::FromJson;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

/// One operation, serialized exactly as RFC 6902: `{"op":"add","path":"/a","value":1}`.
/// `Deserialize` goes through `FromJson` (`crate::json::deserialize`), as `SessionEvent`.
#[derive(Debug, Clone, PartialEq, Serialize, FromJson)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum PatchOp {
    Add { path: String, value: Value },
    Remove { path: String },
    Replace { path: String, value: Value },
    Move { from: String, path: String },
    Copy { from: String, path: String },
    Test { path: String, value: Value },
}

impl<'de> Deserialize<'de> for PatchOp {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        crate::json::deserialize(deserializer)
    }
}

impl PatchOp {
    pub fn add(path: impl Into<String>, value: Value) -> Self {
        PatchOp::Add {
            path: path.into(),
            value,
        }
    }

    pub fn remove(path: impl Into<String>) -> Self {
        PatchOp::Remove { path: path.into() }
    }

    pub fn replace(path: impl Into<String>, value: Value) -> Self {
        PatchOp::Replace {
            path: path.into(),
            value,
        }
    }
}

/// Why a patch did not apply. The index is the failing operation's position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchError {
    pub op_index: usize,
    pub reason: &'static str,
}

impl std::fmt::Display for PatchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "patch operation {} failed: {}",
            self.op_index, self.reason
        )
    }
}

impl std::error::Error for PatchError {}

/// Escapes one token for use inside a JSON Pointer (`~` → `~0`, `/` → `~1`).
pub fn escape_token(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// Applies `ops` to `doc` in order. On error `doc` is untouched.
pub fn apply_patch(doc: &mut Value, ops: &[PatchOp]) -> Result<(), PatchError> {
    let mut work = doc.clone();
    for (i, op) in ops.iter().enumerate() {
        apply_op(&mut work, op).map_err(|reason| PatchError {
            op_index: i,
            reason,
        })?;
    }
    *doc = work;
    Ok(())
}

fn apply_op(doc: &mut Value, op: &PatchOp) -> Result<(), &'static str> {
    match op {
        PatchOp::Add { path, value } => add(doc, path, value.clone()),
        PatchOp::Remove { path } => remove(doc, path).map(drop),
        PatchOp::Replace { path, value } => {
            let target = pointer_mut(doc, path).ok_or("path does not exist")?;
            *target = value.clone();
            Ok(())
        }
        PatchOp::Move { from, path } => {
            if path.starts_with(from.as_str())
                && path.len() > from.len()
                && path.as_bytes()[from.len()] == b'/'
            {
                return Err("cannot move a value into one of its children");
            }
            let value = remove(doc, from)?;
            add(doc, path, value)
        }
        PatchOp::Copy { from, path } => {
            let value = pointer(doc, from).ok_or("from does not exist")?.clone();
            add(doc, path, value)
        }
        PatchOp::Test { path, value } => match pointer(doc, path) {
            Some(found) if found == value => Ok(()),
            _ => Err("test failed"),
        },
    }
}

/// Splits a pointer into unescaped tokens. `""` is the whole document.
fn tokens(path: &str) -> Result<Vec<String>, &'static str> {
    if path.is_empty() {
        return Ok(Vec::new());
    }
    let rest = path.strip_prefix('/').ok_or("pointer must start with /")?;
    Ok(rest
        .split('/')
        .map(|t| t.replace("~1", "/").replace("~0", "~"))
        .collect())
}

fn array_index(token: &str, len: usize) -> Option<usize> {
    if token.is_empty() || (token.len() > 1 && token.starts_with('0')) {
        return None;
    }
    token.parse::<usize>().ok().filter(|i| *i < len)
}

fn pointer<'a>(doc: &'a Value, path: &str) -> Option<&'a Value> {
    let mut cur = doc;
    for t in tokens(path).ok()? {
        cur = match cur {
            Value::Object(map) => map.get(&t)?,
            Value::Array(items) => items.get(array_index(&t, items.len())?)?,
            _ => return None,
        };
    }
    Some(cur)
}

fn pointer_mut<'a>(doc: &'a mut Value, path: &str) -> Option<&'a mut Value> {
    let mut cur = doc;
    for t in tokens(path).ok()? {
        cur = match cur {
            Value::Object(map) => map.get_mut(&t)?,
            Value::Array(items) => {
                let i = array_index(&t, items.len())?;
                items.get_mut(i)?
            }
            _ => return None,
        };
    }
    Some(cur)
}

/// Splits `path` into (parent pointer, last token). Fails for the root.
fn split_last(path: &str) -> Result<(String, String), &'static str> {
    let mut toks = tokens(path)?;
    let last = toks.pop().ok_or("the root has no parent")?;
    let parent: String = toks
        .iter()
        .map(|t| format!("/{}", escape_token(t)))
        .collect();
    Ok((parent, last))
}

fn add(doc: &mut Value, path: &str, value: Value) -> Result<(), &'static str> {
    if path.is_empty() {
        *doc = value;
        return Ok(());
    }
    let (parent, last) = split_last(path)?;
    match pointer_mut(doc, &parent).ok_or("parent does not exist")? {
        Value::Object(map) => {
            map.insert(last, value);
            Ok(())
        }
        Value::Array(items) => {
            if last == "-" {
                items.push(value);
                return Ok(());
            }
            let i = array_index(&last, items.len() + 1).ok_or("array index out of bounds")?;
            items.insert(i, value);
            Ok(())
        }
        _ => Err("parent is not a container"),
    }
}

fn remove(doc: &mut Value, path: &str) -> Result<Value, &'static str> {
    let (parent, last) = split_last(path)?;
    match pointer_mut(doc, &parent).ok_or("parent does not exist")? {
        Value::Object(map) => map.remove(&last).ok_or("path does not exist"),
        Value::Array(items) => {
            let i = array_index(&last, items.len()).ok_or("array index out of bounds")?;
            Ok(items.remove(i))
        }
        _ => Err("parent is not a container"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ops(v: Value) -> Vec<PatchOp> {
        serde_json::from_value(v).expect("valid patch")
    }

    #[test]
    fn the_six_operations_follow_rfc_6902() {
        let mut doc = json!({"a": [1, 2], "b": {"c": "x"}, "k~/": 0});
        let patch = ops(json!([
            {"op": "add", "path": "/a/1", "value": 9},
            {"op": "add", "path": "/a/-", "value": 3},
            {"op": "remove", "path": "/a/0"},
            {"op": "replace", "path": "/b/c", "value": "y"},
            {"op": "copy", "from": "/b", "path": "/d"},
            {"op": "move", "from": "/b/c", "path": "/e"},
            {"op": "test", "path": "/k~0~1", "value": 0}
        ]));
        apply_patch(&mut doc, &patch).unwrap();
        assert_eq!(
            doc,
            json!({"a": [9, 2, 3], "b": {}, "d": {"c": "y"}, "e": "y", "k~/": 0})
        );
    }

    #[test]
    fn a_failing_operation_leaves_the_document_unchanged() {
        let mut doc = json!({"a": 1});
        let patch = ops(json!([
            {"op": "replace", "path": "/a", "value": 2},
            {"op": "test", "path": "/a", "value": 1}
        ]));
        let err = apply_patch(&mut doc, &patch).unwrap_err();
        assert_eq!(err.op_index, 1);
        assert_eq!(doc, json!({"a": 1}));
        assert!(apply_patch(&mut doc, &[PatchOp::remove("/missing")]).is_err());
        assert!(apply_patch(
            &mut doc,
            &ops(json!([{"op":"add","path":"/a/b","value":1}]))
        )
        .is_err());
    }

    #[test]
    fn array_indices_are_strict() {
        let mut doc = json!([1, 2]);
        assert!(apply_patch(&mut doc, &[PatchOp::replace("/01", json!(0))]).is_err());
        assert!(apply_patch(&mut doc, &[PatchOp::add("/3", json!(0))]).is_err());
        apply_patch(&mut doc, &[PatchOp::add("/2", json!(3))]).unwrap();
        assert_eq!(doc, json!([1, 2, 3]));
    }

    #[test]
    fn a_value_cannot_move_into_its_own_child() {
        let mut doc = json!({"a": {"b": {}}});
        let patch = ops(json!([{"op": "move", "from": "/a", "path": "/a/b/c"}]));
        assert!(apply_patch(&mut doc, &patch).is_err());
    }
}
