//! How the browser reads JSON: [`FromJson`], a decoder per wire type generated from its
//! serde attributes (`#[derive(FromJson)]`, crate `luna-protocol-derive`).
//!
//! The browser's wasm pays for every decoder it contains. serde's derived `Deserialize`,
//! monomorphized for a `Deserializer`, compiles a field-name visitor, a map visitor and
//! an inlined copy of each field's reader per type: that was a sixth of the main module
//! (docs/BENCH.md, "Browser bundle"). So the browser parses text into a
//! `serde_json::Value` ([`from_slice`], [`from_str`]) and reads the type from it with
//! [`FromJson`], whose generated code is a few calls per field into the small, shared
//! helpers below ([`Fields`], [`variant`], [`split`]). The server keeps serde's derived
//! `Deserialize`; the tests check that both accept the same JSON and read the same value.
//!
//! Differences from `serde_json::from_value`, all on input nothing sends: a struct must be
//! a JSON object (serde also takes an array of the fields in order), and the error
//! messages are shorter. Errors are [`ReadError`], turned into a `serde_json::Error` at
//! the edge; a float in the input is named, never printed, so the float printer (about
//! 20 KB) stays out of the browser.
//!
//! The four internally tagged enums (`SessionEvent`, `StreamMessage`, `ChatMessage`,
//! `PatchOp`) implement `Deserialize` with [`deserialize`], their `FromJson`, so serde's
//! `Content` buffer is compiled nowhere; their JSON is unchanged (`Serialize` is derived).

use serde::de::Error as _;
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};
use std::fmt;

pub use luna_protocol_derive::FromJson;

/// A type the browser reads from a `serde_json::Value`; derive it with
/// `#[derive(FromJson)]` next to `Deserialize` (see the module docs):
///
/// ```
/// use luna_protocol::json::{read, FromJson};
///
/// #[derive(serde::Deserialize, FromJson, Debug, PartialEq)]
/// struct Line {
///     #[serde(rename = "ref")]
///     reference: String,
///     #[serde(default)]
///     count: u32,
///     note: Option<String>,
/// }
///
/// let line: Line = read(serde_json::json!({"ref": "company:c1"})).unwrap();
/// assert_eq!(line, Line { reference: "company:c1".into(), count: 0, note: None });
/// assert!(read::<Line>(serde_json::json!({"count": 1})).is_err());
/// ```
///
/// A serde attribute the derive does not know is a compile error, so the two decoders
/// cannot drift apart unnoticed:
///
/// ```compile_fail
/// use luna_protocol::json::FromJson;
///
/// #[derive(serde::Deserialize, FromJson)]
/// struct Line {
///     #[serde(alias = "referencia")]
///     reference: String,
/// }
/// ```
pub trait FromJson: Sized {
    fn from_json(value: Value) -> Result<Self, ReadError>;

    /// What a struct field of this type is when its key is missing and it has no
    /// `#[serde(default)]`: an error, except for `Option` (serde's rule).
    fn absent(field: &'static str) -> Result<Self, ReadError> {
        Err(ReadError::missing_field(field))
    }
}

/// Why a `Value` is not the type asked for; the messages read like serde's.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadError(String);

impl ReadError {
    pub fn missing_field(field: &str) -> Self {
        ReadError(format!("missing field `{field}`"))
    }

    /// `value` is not what `expected` describes.
    pub fn invalid_type(value: &Value, expected: &str) -> Self {
        ReadError(format!(
            "invalid type: {}, expected {expected}",
            describe(value)
        ))
    }

    pub fn unknown_variant(variant: &str, expected: &[&str]) -> Self {
        let names: Vec<String> = expected.iter().map(|v| format!("`{v}`")).collect();
        ReadError(format!(
            "unknown variant `{variant}`, expected one of {}",
            names.join(", ")
        ))
    }

    pub fn untagged(name: &str) -> Self {
        ReadError(format!(
            "data did not match any variant of untagged enum {name}"
        ))
    }
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ReadError {}

impl From<ReadError> for serde_json::Error {
    fn from(e: ReadError) -> Self {
        serde_json::Error::custom(e.0)
    }
}

/// A value as serde's messages name it, without printing a float.
fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("boolean `{b}`"),
        Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => format!("integer `{u}`"),
            (None, Some(i)) => format!("integer `{i}`"),
            (None, None) => "floating point number".into(),
        },
        Value::String(s) => format!("string {s:?}"),
        Value::Array(_) => "sequence".into(),
        Value::Object(_) => "map".into(),
    }
}

/// Parses JSON bytes into `T` through a `serde_json::Value` (see the module docs).
pub fn from_slice<T: FromJson>(bytes: &[u8]) -> Result<T, serde_json::Error> {
    read(serde_json::from_slice::<Value>(bytes)?)
}

/// Parses JSON text into `T` through a `serde_json::Value` (see the module docs).
pub fn from_str<T: FromJson>(text: &str) -> Result<T, serde_json::Error> {
    from_slice(text.as_bytes())
}

/// Reads `T` from a `Value`, like `serde_json::from_value` (see the module docs).
pub fn read<T: FromJson>(value: Value) -> Result<T, serde_json::Error> {
    T::from_json(value).map_err(Into::into)
}

/// serde's `Deserialize` through `FromJson`, for the types whose serde derive would
/// buffer (the internally tagged enums): the same JSON, decoded by one implementation.
pub fn deserialize<'de, D: Deserializer<'de>, T: FromJson>(deserializer: D) -> Result<T, D::Error> {
    T::from_json(Value::deserialize(deserializer)?).map_err(D::Error::custom)
}

/// The fields of a JSON object being read into a struct; what the derive calls.
pub struct Fields(Map<String, Value>);

impl Fields {
    /// `value` must be an object; `expected` names the struct in the error.
    pub fn new(value: Value, expected: &'static str) -> Result<Self, ReadError> {
        match value {
            Value::Object(map) => Ok(Fields(map)),
            other => Err(ReadError::invalid_type(&other, expected)),
        }
    }

    fn take(&mut self, key: &str) -> Option<Value> {
        self.0.remove(key)
    }

    /// A field without a default: `T::absent` when the key is missing.
    pub fn field<T: FromJson>(&mut self, key: &'static str) -> Result<T, ReadError> {
        match self.take(key) {
            Some(value) => T::from_json(value),
            None => T::absent(key),
        }
    }

    /// A field with `#[serde(default)]` or `#[serde(default = "…")]`.
    pub fn or_else<T: FromJson>(&mut self, key: &str, default: fn() -> T) -> Result<T, ReadError> {
        match self.take(key) {
            Some(value) => T::from_json(value),
            None => Ok(default()),
        }
    }

    /// What is left once the named fields are read: a `#[serde(flatten)]` map.
    pub fn rest(&mut self) -> Map<String, Value> {
        std::mem::take(&mut self.0)
    }
}

/// An externally tagged enum: `"variant"` or `{"variant": payload}`.
pub fn variant(value: Value) -> Result<(String, Option<Value>), ReadError> {
    match value {
        Value::String(name) => Ok((name, None)),
        Value::Object(map) if map.len() == 1 => {
            let mut entries = map.into_iter();
            match entries.next() {
                Some((name, payload)) => Ok((name, Some(payload))),
                None => Err(ReadError::missing_field("variant")),
            }
        }
        other => Err(ReadError::invalid_type(
            &other,
            "a string or an object with one key",
        )),
    }
}

/// A unit variant: written as a bare string or with `null`.
pub fn unit_variant(payload: Option<Value>) -> Result<(), ReadError> {
    match payload {
        None | Some(Value::Null) => Ok(()),
        Some(other) => Err(ReadError::invalid_type(&other, "unit variant")),
    }
}

/// The payload of a variant with data: a bare string is refused.
pub fn payload(payload: Option<Value>) -> Result<Value, ReadError> {
    payload.ok_or_else(|| ReadError::invalid_type(&Value::Null, "a variant with data"))
}

/// An internally tagged object: returns the value of its `tag` field and the object
/// without it, which is read as the variant.
pub fn split(mut value: Value, tag: &'static str) -> Result<(String, Value), ReadError> {
    let Some(object) = value.as_object_mut() else {
        return Err(ReadError::invalid_type(&value, "a JSON object"));
    };
    match object.remove(tag) {
        Some(Value::String(name)) => Ok((name, value)),
        Some(other) => Err(ReadError::invalid_type(&other, "a string tag")),
        None => Err(ReadError::missing_field(tag)),
    }
}

impl FromJson for Value {
    fn from_json(value: Value) -> Result<Self, ReadError> {
        Ok(value)
    }
}

impl FromJson for Map<String, Value> {
    fn from_json(value: Value) -> Result<Self, ReadError> {
        match value {
            Value::Object(map) => Ok(map),
            other => Err(ReadError::invalid_type(&other, "a map")),
        }
    }
}

impl FromJson for String {
    fn from_json(value: Value) -> Result<Self, ReadError> {
        match value {
            Value::String(s) => Ok(s),
            other => Err(ReadError::invalid_type(&other, "a string")),
        }
    }
}

impl FromJson for bool {
    fn from_json(value: Value) -> Result<Self, ReadError> {
        match value {
            Value::Bool(b) => Ok(b),
            other => Err(ReadError::invalid_type(&other, "a boolean")),
        }
    }
}

impl FromJson for () {
    fn from_json(value: Value) -> Result<Self, ReadError> {
        match value {
            Value::Null => Ok(()),
            other => Err(ReadError::invalid_type(&other, "unit")),
        }
    }
}

impl FromJson for f64 {
    fn from_json(value: Value) -> Result<Self, ReadError> {
        match value.as_f64() {
            Some(f) => Ok(f),
            None => Err(ReadError::invalid_type(&value, "f64")),
        }
    }
}

/// An integer of any width: JSON integers that fit (`1.0` is refused, as serde does).
fn integer<T: TryFrom<u64> + TryFrom<i64>>(value: Value, expected: &str) -> Result<T, ReadError> {
    let fits = match &value {
        Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => Some(T::try_from(u).ok()),
            (None, Some(i)) => Some(T::try_from(i).ok()),
            (None, None) => None,
        },
        _ => None,
    };
    match fits {
        Some(Some(n)) => Ok(n),
        Some(None) => Err(ReadError(format!(
            "invalid value: {}, expected {expected}",
            describe(&value)
        ))),
        None => Err(ReadError::invalid_type(&value, expected)),
    }
}

macro_rules! integers {
    ($($t:ty),*) => {$(
        impl FromJson for $t {
            fn from_json(value: Value) -> Result<Self, ReadError> {
                integer(value, stringify!($t))
            }
        }
    )*};
}

integers!(u8, u16, u32, u64, usize, i64);

impl<T: FromJson> FromJson for Option<T> {
    fn from_json(value: Value) -> Result<Self, ReadError> {
        match value {
            Value::Null => Ok(None),
            value => T::from_json(value).map(Some),
        }
    }

    fn absent(_: &'static str) -> Result<Self, ReadError> {
        Ok(None)
    }
}

impl<T: FromJson> FromJson for Vec<T> {
    fn from_json(value: Value) -> Result<Self, ReadError> {
        match value {
            Value::Array(items) => items.into_iter().map(T::from_json).collect(),
            other => Err(ReadError::invalid_type(&other, "a sequence")),
        }
    }
}

/// serde's form of a `Result`: `{"Ok": value}` or `{"Err": error}`.
impl<T: FromJson, E: FromJson> FromJson for Result<T, E> {
    fn from_json(value: Value) -> Result<Self, ReadError> {
        let (name, data) = variant(value)?;
        match name.as_str() {
            "Ok" => T::from_json(payload(data)?).map(Ok),
            "Err" => E::from_json(payload(data)?).map(Err),
            other => Err(ReadError::unknown_variant(other, &["Ok", "Err"])),
        }
    }
}

/// Checks that [`FromJson`] reads what serde's derived `Deserialize` reads, for a sample
/// and for every variation of it that drops a key or a list item, or replaces a value
/// with `null`, text, a negative, a fraction or an empty object, at any depth. The tests
/// of this crate and of `app` run it over a sample of every type the browser reads.
#[doc(hidden)]
pub mod conformance {
    use super::FromJson;
    use serde::de::DeserializeOwned;
    use serde::Serialize;
    use serde_json::{json, Value};

    /// Panics where the two decoders disagree on the sample or a variation of it (see
    /// [`agree`]); serde must accept the sample itself. Returns how many inputs were
    /// compared.
    pub fn check<T>(sample: &Value) -> usize
    where
        T: FromJson + DeserializeOwned + Serialize,
    {
        let inputs = variations(sample);
        let (sample, changed) = inputs.split_first().expect("the sample comes first");
        assert!(
            agree::<T>(sample),
            "serde refuses the sample itself: {sample}"
        );
        for input in changed {
            agree::<T>(input);
        }
        inputs.len()
    }

    /// Panics where the two decoders disagree on `input`: one accepts it and the other
    /// refuses it, or both accept it and the values differ. Returns whether they accept.
    pub fn agree<T>(input: &Value) -> bool
    where
        T: FromJson + DeserializeOwned + Serialize,
    {
        let ours = T::from_json(input.clone());
        let theirs = serde_json::from_value::<T>(input.clone());
        match (ours, theirs) {
            (Ok(a), Ok(b)) => {
                assert_eq!(
                    serde_json::to_value(a).ok(),
                    serde_json::to_value(b).ok(),
                    "read differently: {input}"
                );
                true
            }
            (Err(_), Err(_)) => false,
            (a, b) => panic!(
                "{input}: FromJson {}, serde {}",
                a.map(|_| "accepts".to_owned())
                    .unwrap_or_else(|e| e.to_string()),
                b.map(|_| "accepts".to_owned())
                    .unwrap_or_else(|e| e.to_string()),
            ),
        }
    }

    /// The sample, first, and its variations, as `check` compares them.
    pub fn variations(sample: &Value) -> Vec<Value> {
        let mut out = vec![sample.clone()];
        let mut paths = Vec::new();
        walk(sample, &mut Vec::new(), &mut paths);
        for path in paths {
            let mut removed = sample.clone();
            if remove(&mut removed, &path) {
                out.push(removed);
            }
            // No array: serde also reads a struct from an array of its fields, which
            // `FromJson` refuses on purpose (see the module docs).
            for replacement in [json!(null), json!("x"), json!(-1), json!(1.5), json!({})] {
                let mut changed = sample.clone();
                if let Some(slot) = pointer(&mut changed, &path) {
                    *slot = replacement;
                    out.push(changed);
                }
            }
        }
        if let Value::Object(map) = sample {
            let mut extra = map.clone();
            extra.insert("unknown_key".into(), json!(1));
            out.push(Value::Object(extra));
        }
        out
    }

    #[derive(Clone)]
    enum Step {
        Key(String),
        Index(usize),
    }

    fn walk(value: &Value, at: &mut Vec<Step>, paths: &mut Vec<Vec<Step>>) {
        match value {
            Value::Object(map) => {
                for (k, v) in map {
                    at.push(Step::Key(k.clone()));
                    paths.push(at.clone());
                    walk(v, at, paths);
                    at.pop();
                }
            }
            Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    at.push(Step::Index(i));
                    paths.push(at.clone());
                    walk(v, at, paths);
                    at.pop();
                }
            }
            _ => {}
        }
    }

    fn pointer<'a>(value: &'a mut Value, path: &[Step]) -> Option<&'a mut Value> {
        path.iter().try_fold(value, |v, step| match step {
            Step::Key(k) => v.get_mut(k.as_str()),
            Step::Index(i) => v.get_mut(*i),
        })
    }

    fn remove(value: &mut Value, path: &[Step]) -> bool {
        let Some((last, parent)) = path.split_last() else {
            return false;
        };
        match (pointer(value, parent), last) {
            (Some(Value::Object(map)), Step::Key(k)) => map.remove(k).is_some(),
            (Some(Value::Array(items)), Step::Index(i)) if *i < items.len() => {
                items.remove(*i);
                true
            }
            _ => false,
        }
    }
}

#[cfg(test)]
#[path = "json_tests.rs"]
mod tests;
