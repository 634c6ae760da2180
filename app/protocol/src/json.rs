//! How the browser reads JSON, and the decoding of the internally tagged enums.
//!
//! The browser's wasm pays for every `Deserialize` implementation once per deserializer it
//! is used with. Reading a frame straight from text compiles each wire type for serde_json's
//! reader (once for `&str`, once more for `&[u8]`), and serde's derive for an internally
//! tagged enum (`#[serde(tag = "…")]`) buffers the object in its private `Content` type and
//! compiles every variant's type a second time for that buffer. So the browser reads every
//! payload — websocket frames, server-function answers, hydrated resources — in two steps:
//! text → `serde_json::Value` → wire type ([`from_slice`], [`from_str`]), and the second
//! step goes through [`read`], this module's own small `Deserializer` over a `Value`. Each
//! type's derived `Deserialize` is then compiled once.
//!
//! `read` accepts what `serde_json::from_value` accepts for these types (the tests compare
//! the two), with one deliberate difference that keeps it small: a struct must be a JSON
//! object (serde_json also takes an array of the fields in order, which nothing sends), so
//! no struct's `visit_seq` is compiled in.
//!
//! The four internally tagged enums (`SessionEvent`, `StreamMessage`, `ChatMessage`,
//! `PatchOp`) implement `Deserialize` by hand with [`untag`]: the tag is taken out of the
//! object and the rest is read as the variant's type with [`read`], so serde's `Content`
//! buffer is never compiled in. The JSON they accept and produce is unchanged (their
//! `Serialize` is still derived); the server uses the same implementations.
//!
//! `read`'s errors are its own [`ReadError`] (turned into a `serde_json::Error` at the
//! edge): serde's message for an unexpected value prints floats with `f64`'s `Display`,
//! which would link the float printer (about 20 KB) into the browser's main module.

use serde::de::value::StringDeserializer;
use serde::de::{
    DeserializeOwned, DeserializeSeed, EnumAccess, Error as _, IntoDeserializer, MapAccess,
    SeqAccess, Unexpected, VariantAccess, Visitor,
};
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};
use std::fmt;

/// What `read` and `untag` report: a message, as serde_json's would read except that a
/// float is named, not printed (see the module docs).
#[derive(Debug)]
pub struct ReadError(String);

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ReadError {}

impl serde::de::Error for ReadError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        ReadError(msg.to_string())
    }

    fn invalid_type(unexp: Unexpected<'_>, exp: &dyn serde::de::Expected) -> Self {
        ReadError(format!(
            "invalid type: {}, expected {exp}",
            describe(&unexp)
        ))
    }

    fn invalid_value(unexp: Unexpected<'_>, exp: &dyn serde::de::Expected) -> Self {
        ReadError(format!(
            "invalid value: {}, expected {exp}",
            describe(&unexp)
        ))
    }
}

impl From<ReadError> for serde_json::Error {
    fn from(e: ReadError) -> Self {
        serde_json::Error::custom(e.0)
    }
}

/// serde's `Unexpected` as text, without printing a float.
fn describe(unexp: &Unexpected<'_>) -> String {
    match *unexp {
        Unexpected::Bool(b) => format!("boolean `{b}`"),
        Unexpected::Unsigned(u) => format!("integer `{u}`"),
        Unexpected::Signed(i) => format!("integer `{i}`"),
        Unexpected::Float(_) => "floating point number".into(),
        Unexpected::Char(c) => format!("character `{c}`"),
        Unexpected::Str(s) => format!("string {s:?}"),
        Unexpected::Bytes(_) => "byte array".into(),
        Unexpected::Unit => "null".into(),
        Unexpected::Option => "Option value".into(),
        Unexpected::NewtypeStruct => "newtype struct".into(),
        Unexpected::Seq => "sequence".into(),
        Unexpected::Map => "map".into(),
        Unexpected::Enum => "enum".into(),
        Unexpected::UnitVariant => "unit variant".into(),
        Unexpected::NewtypeVariant => "newtype variant".into(),
        Unexpected::TupleVariant => "tuple variant".into(),
        Unexpected::StructVariant => "struct variant".into(),
        Unexpected::Other(other) => other.into(),
    }
}

type Error = ReadError;

/// Parses JSON bytes into `T` through a `serde_json::Value` (see the module docs).
pub fn from_slice<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, serde_json::Error> {
    read(serde_json::from_slice::<Value>(bytes)?)
}

/// Parses JSON text into `T` through a `serde_json::Value` (see the module docs).
pub fn from_str<T: DeserializeOwned>(text: &str) -> Result<T, serde_json::Error> {
    from_slice(text.as_bytes())
}

/// Reads `T` from a `Value`, like `serde_json::from_value` (see the module docs).
pub fn read<T: DeserializeOwned>(value: Value) -> Result<T, serde_json::Error> {
    T::deserialize(ValueDe(value)).map_err(Into::into)
}

/// Reads an internally tagged object: returns the value of its `tag` field and the
/// object without it, which the caller reads as the variant's own type with [`read`].
pub(crate) fn untag<'de, D: Deserializer<'de>>(
    deserializer: D,
    tag: &'static str,
) -> Result<(String, Value), D::Error> {
    split(Value::deserialize(deserializer)?, tag).map_err(D::Error::custom)
}

fn split(mut value: Value, tag: &'static str) -> Result<(String, Value), Error> {
    let Some(object) = value.as_object_mut() else {
        return Err(Error::invalid_type(unexpected(&value), &"a JSON object"));
    };
    match object.remove(tag) {
        Some(Value::String(name)) => Ok((name, value)),
        Some(other) => Err(Error::invalid_type(unexpected(&other), &"a string tag")),
        None => Err(Error::missing_field(tag)),
    }
}

fn unexpected(value: &Value) -> Unexpected<'_> {
    match value {
        Value::Null => Unexpected::Unit,
        Value::Bool(b) => Unexpected::Bool(*b),
        Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
            (Some(u), _, _) => Unexpected::Unsigned(u),
            (None, Some(i), _) => Unexpected::Signed(i),
            (None, None, f) => Unexpected::Float(f.unwrap_or(f64::NAN)),
        },
        Value::String(s) => Unexpected::Str(s),
        Value::Array(_) => Unexpected::Seq,
        Value::Object(_) => Unexpected::Map,
    }
}

/// The `Deserializer` behind [`read`]: an owned `Value`.
struct ValueDe(Value);

type Key = StringDeserializer<Error>;

impl<'de> Deserializer<'de> for ValueDe {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(b),
            Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
                (Some(u), _, _) => visitor.visit_u64(u),
                (None, Some(i), _) => visitor.visit_i64(i),
                (None, None, f) => visitor.visit_f64(f.unwrap_or(f64::NAN)),
            },
            Value::String(s) => visitor.visit_string(s),
            Value::Array(items) => {
                let len = items.len();
                let mut seq = Seq(items.into_iter());
                let out = visitor.visit_seq(&mut seq)?;
                match seq.0.len() {
                    0 => Ok(out),
                    _ => Err(Error::invalid_length(len, &"fewer elements in array")),
                }
            }
            Value::Object(map) => visit_object(map, visitor),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Null => visitor.visit_none(),
            value => visitor.visit_some(ValueDe(value)),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.0 {
            Value::Object(map) => visit_object(map, visitor),
            other => Err(Error::invalid_type(unexpected(&other), &visitor)),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.0 {
            Value::String(variant) => {
                visitor.visit_enum(IntoDeserializer::<Error>::into_deserializer(variant))
            }
            Value::Object(map) if map.len() == 1 => {
                let (variant, value) = map.into_iter().next().expect("one entry");
                visitor.visit_enum(Variant { variant, value })
            }
            other => Err(Error::invalid_type(
                unexpected(&other),
                &"a string or an object with one key",
            )),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map identifier
    }
}

fn visit_object<'de, V: Visitor<'de>>(
    map: Map<String, Value>,
    visitor: V,
) -> Result<V::Value, Error> {
    let mut access = Object {
        entries: map.into_iter(),
        value: None,
    };
    visitor.visit_map(&mut access)
}

struct Seq(std::vec::IntoIter<Value>);

impl<'de> SeqAccess<'de> for Seq {
    type Error = Error;

    fn next_element_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, Error> {
        self.0
            .next()
            .map(|v| seed.deserialize(ValueDe(v)))
            .transpose()
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.0.len())
    }
}

struct Object {
    entries: serde_json::map::IntoIter,
    value: Option<Value>,
}

impl<'de> MapAccess<'de> for Object {
    type Error = Error;

    fn next_key_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, Error> {
        match self.entries.next() {
            Some((key, value)) => {
                self.value = Some(value);
                seed.deserialize(Key::new(key)).map(Some)
            }
            None => Ok(None),
        }
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, Error> {
        match self.value.take() {
            Some(value) => seed.deserialize(ValueDe(value)),
            None => Err(Error::custom("value is missing")),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len())
    }
}

/// `{"Variant": value}`: an externally tagged enum's variant with data.
struct Variant {
    variant: String,
    value: Value,
}

impl<'de> EnumAccess<'de> for Variant {
    type Error = Error;
    type Variant = ValueDe;

    fn variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<(S::Value, ValueDe), Error> {
        Ok((
            seed.deserialize(Key::new(self.variant))?,
            ValueDe(self.value),
        ))
    }
}

impl<'de> VariantAccess<'de> for ValueDe {
    type Error = Error;

    fn unit_variant(self) -> Result<(), Error> {
        match self.0 {
            Value::Null => Ok(()),
            other => Err(Error::invalid_type(unexpected(&other), &"unit variant")),
        }
    }

    fn newtype_variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<S::Value, Error> {
        seed.deserialize(self)
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Array(_) => self.deserialize_any(visitor),
            other => Err(Error::invalid_type(unexpected(&other), &"tuple variant")),
        }
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_struct("", fields, visitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::ChatMessage;
    use crate::event::SessionEvent;
    use crate::patch::PatchOp;
    use crate::stream::StreamMessage;
    use serde_json::json;

    #[test]
    fn text_and_bytes_read_the_same_value() {
        let text = r#"{"type":"turn.accepted","turn_id":"t1","stage":"buscando"}"#;
        let a: SessionEvent = from_str(text).unwrap();
        let b: SessionEvent = serde_json::from_str(text).unwrap();
        let c: SessionEvent = from_slice(text.as_bytes()).unwrap();
        assert_eq!(a, b);
        assert_eq!(a, c);
        assert!(from_str::<SessionEvent>("{").is_err());
    }

    /// The derived `Deserialize` the hand-written ones replace, kept as the reference.
    mod derived {
        use serde::{Deserialize, Serialize};
        use serde_json::Value;

        use crate::board::RunStatus;
        use crate::chat::ToolLine;
        use crate::decision::{DecisionKind, DecisionOutcome, DecisionResult};
        use crate::event::*;
        use crate::stream::Thinking;

        #[derive(Serialize, Deserialize)]
        #[serde(tag = "type")]
        pub enum Event {
            #[serde(rename = "user.message")]
            UserMessage(UserMessage),
            #[serde(rename = "turn.accepted")]
            TurnAccepted(TurnAccepted),
            #[serde(rename = "narration.delta")]
            NarrationDelta(NarrationDelta),
            #[serde(rename = "tool.started")]
            ToolStarted(ToolStarted),
            #[serde(rename = "tool.finished")]
            ToolFinished(ToolFinished),
            #[serde(rename = "board.patched")]
            BoardPatched(BoardPatched),
            #[serde(rename = "decision.proposed")]
            DecisionProposed(DecisionProposed),
            #[serde(rename = "decision.resolved")]
            DecisionResolved(DecisionResolved),
            #[serde(rename = "run.progress")]
            RunProgress(RunProgress),
            #[serde(rename = "turn.finished")]
            TurnFinished(TurnFinished),
            #[serde(rename = "turn.refused")]
            TurnRefused(TurnRefused),
            #[serde(rename = "undo.applied")]
            UndoApplied(UndoApplied),
        }

        #[derive(Serialize, Deserialize)]
        #[serde(tag = "type", rename_all = "snake_case")]
        pub enum Stream {
            Event {
                seq: u64,
                event: crate::event::SessionEvent,
            },
            Snapshot {
                seq: u64,
                view: crate::view::SessionView,
            },
            Thinking(Thinking),
        }

        #[derive(Serialize, Deserialize)]
        #[serde(tag = "kind", rename_all = "snake_case")]
        pub enum Chat {
            Person {
                turn_id: String,
                text: String,
                steering: bool,
            },
            Luna {
                turn_id: String,
                text: String,
                #[serde(default)]
                anchors: Vec<Anchor>,
            },
            Tool(ToolLine),
            Decision {
                decision_id: String,
                decision_kind: DecisionKind,
                title: String,
                #[serde(default, skip_serializing_if = "Option::is_none")]
                outcome: Option<DecisionOutcome>,
                #[serde(default, skip_serializing_if = "Option::is_none")]
                result: Option<DecisionResult>,
            },
            Refused {
                turn_id: String,
                code: RefusalCode,
                message: String,
            },
            Run {
                run_id: String,
                title: String,
                status: RunStatus,
            },
        }

        #[derive(Serialize, Deserialize)]
        #[serde(tag = "op", rename_all = "snake_case")]
        pub enum Patch {
            Add { path: String, value: Value },
            Remove { path: String },
            Replace { path: String, value: Value },
            Move { from: String, path: String },
            Copy { from: String, path: String },
            Test { path: String, value: Value },
        }
    }

    /// Decodes `input` with the hand-written `T` and with the derived reference `R`:
    /// both accept it or both refuse it, and accepted values serialize alike.
    fn same<T, R>(input: &Value)
    where
        T: DeserializeOwned + serde::Serialize,
        R: DeserializeOwned + serde::Serialize,
    {
        let ours = serde_json::from_value::<T>(input.clone());
        let reference = serde_json::from_value::<R>(input.clone());
        match (ours, reference) {
            (Ok(a), Ok(b)) => assert_eq!(
                serde_json::to_value(a).unwrap(),
                serde_json::to_value(b).unwrap(),
                "{input}"
            ),
            (Err(_), Err(_)) => {}
            (a, b) => panic!("{input}: ours ok={} derived ok={}", a.is_ok(), b.is_ok()),
        }
        let text = input.to_string();
        assert_eq!(
            from_str::<T>(&text).is_ok(),
            serde_json::from_str::<R>(&text).is_ok(),
            "{text}"
        );
    }

    #[test]
    fn hand_written_decoders_match_the_derived_ones() {
        let events = [
            json!({"type": "user.message", "turn_id": "t", "text": "hola"}),
            json!({"type": "user.message", "turn_id": "t", "text": "hola", "steering": true, "extra": 1}),
            json!({"type": "turn.accepted", "turn_id": "t", "stage": "buscando"}),
            json!({"type": "turn.accepted", "turn_id": "t", "stage": "otra"}),
            json!({"type": "narration.delta", "turn_id": "t", "text": "Hay 3",
                   "anchors": [{"start": 4, "end": 5, "label": "3", "ref": "record:r"}]}),
            json!({"type": "narration.delta", "turn_id": "t", "text": "x"}),
            json!({"type": "tool.started", "turn_id": "t", "call_ref": "c", "label": "Buscando"}),
            json!({"type": "tool.finished", "turn_id": "t", "call_ref": "c", "label": "l", "summary": "s"}),
            json!({"type": "tool.finished", "turn_id": "t", "call_ref": "c", "label": "l", "summary": "s",
                   "refs": ["a"], "reads_counted": 2, "ok": false, "undo_token": "u"}),
            json!({"type": "board.patched", "patch": [{"op": "add", "path": "/selection/-", "value": {"a": 1}}]}),
            json!({"type": "board.patched", "turn_id": "t", "patch": [{"op": "remove"}]}),
            json!({"type": "decision.proposed", "card": {"id": "d", "kind": "dejar_nota", "title": "T",
                   "consequence": "c", "resolves_in": "chat"}}),
            json!({"type": "decision.resolved", "decision_id": "d", "outcome": "accepted",
                   "result": {"summary": "s"}}),
            json!({"type": "run.progress", "run_id": "r", "title": "t", "phase": "p", "status": "running"}),
            json!({"type": "run.progress", "run_id": "r", "title": "t", "phase": "p", "status": "finished",
                   "summary": "s", "refs": ["x"], "phases": [{"key": "k", "label": "l", "status": "done"}]}),
            json!({"type": "turn.finished", "turn_id": "t", "intent_kind": "responder"}),
            json!({"type": "turn.refused", "turn_id": "t", "code": "cap", "http_status": 429}),
            json!({"type": "undo.applied", "undo_token": "u", "summary": "s"}),
            json!({"type": "undo.applied", "undo_token": "u"}),
            json!({"type": "nope"}),
            json!({"turn_id": "t"}),
            json!("user.message"),
            json!(null),
        ];
        for e in &events {
            same::<SessionEvent, derived::Event>(e);
        }

        let frames = [
            json!({"type": "event", "seq": 3, "event": events[2]}),
            json!({"type": "event", "seq": 3}),
            json!({"type": "snapshot", "seq": 0, "view": {}}),
            json!({"type": "thinking", "turn_id": "t", "text": "pienso"}),
            json!({"type": "thinking", "text": "pienso"}),
            json!({"type": "other"}),
        ];
        for f in &frames {
            same::<StreamMessage, derived::Stream>(f);
        }

        let chat = [
            json!({"kind": "person", "turn_id": "t", "text": "x", "steering": false}),
            json!({"kind": "person", "turn_id": "t", "text": "x"}),
            json!({"kind": "luna", "turn_id": "t", "text": "x"}),
            json!({"kind": "tool", "turn_id": "t", "call_ref": "c", "label": "l", "status": "done"}),
            json!({"kind": "decision", "decision_id": "d", "decision_kind": "investigar", "title": "T"}),
            json!({"kind": "decision", "decision_id": "d", "decision_kind": "investigar", "title": "T",
                   "outcome": "declined", "result": {"summary": "s", "refs": []}}),
            json!({"kind": "refused", "turn_id": "t", "code": "credits", "message": "m"}),
            json!({"kind": "run", "run_id": "r", "title": "t", "status": "cancelled"}),
            json!({"kind": "run", "run_id": "r", "title": "t", "status": "paused"}),
            json!({"kind": "robot"}),
        ];
        for c in &chat {
            same::<ChatMessage, derived::Chat>(c);
        }

        let ops = [
            json!({"op": "add", "path": "/a", "value": [1]}),
            json!({"op": "add", "path": "/a", "value": null}),
            json!({"op": "add", "path": "/a"}),
            json!({"op": "remove", "path": "/a"}),
            json!({"op": "replace", "path": "/a", "value": "x"}),
            json!({"op": "move", "from": "/a", "path": "/b"}),
            json!({"op": "copy", "from": "/a", "path": "/b"}),
            json!({"op": "copy", "path": "/b"}),
            json!({"op": "test", "path": "/a", "value": {"k": 1}}),
            json!({"op": "frobnicate", "path": "/a"}),
        ];
        for o in &ops {
            same::<PatchOp, derived::Patch>(o);
        }
    }

    /// `read` answers like `serde_json::from_value`: the same value, or an error for both.
    /// Returns whether the input was accepted.
    fn like_serde_json<T>(input: Value) -> bool
    where
        T: DeserializeOwned + PartialEq + std::fmt::Debug,
    {
        let ours = read::<T>(input.clone());
        let theirs = serde_json::from_value::<T>(input.clone());
        match (ours, theirs) {
            (Ok(a), Ok(b)) => {
                assert_eq!(a, b, "{input}");
                true
            }
            (Err(_), Err(_)) => false,
            (a, b) => panic!("{input}: read {a:?}, serde_json {b:?}"),
        }
    }

    #[test]
    fn read_matches_serde_json_from_value() {
        use crate::crm::{CollectionBoard, SortKey};
        use crate::event::StoredEvent;
        use crate::evidence::CompanyFile;
        use crate::session::SessionInfo;
        use crate::view::SessionView;

        let events: Value =
            serde_json::from_str(include_str!("../tests/golden/scene.events.json")).unwrap();
        assert!(like_serde_json::<Vec<StoredEvent>>(events.clone()));
        for e in events.as_array().unwrap() {
            assert!(like_serde_json::<StoredEvent>(e.clone()));
            assert!(like_serde_json::<SessionEvent>(e["event"].clone()));
        }
        let view: Value =
            serde_json::from_str(include_str!("../tests/golden/scene.view.json")).unwrap();
        assert!(like_serde_json::<SessionView>(view.clone()));
        assert!(like_serde_json::<SessionView>(json!({})));
        like_serde_json::<SessionView>(json!({"stage": null, "rejected": 2}));
        like_serde_json::<SessionView>(json!({"stage": "buscando", "rejected": -1}));
        like_serde_json::<SessionView>(json!({"rejected": 1.5}));
        like_serde_json::<SessionView>(json!("view"));

        assert!(like_serde_json::<CompanyFile>(json!({
            "ref": "company:c1", "name": "Cartones", "awards_count": 2,
            "awards_total_mxn": 1500, "awards": [], "by_buyer": [],
            "marks": [], "permits": [], "crm": [],
            "by_year": [{"label": "2024", "amount_mxn": 12.5, "count": 1}]
        })));
        like_serde_json::<CompanyFile>(json!({"name": "x"}));
        assert!(like_serde_json::<CollectionBoard>(json!({
            "collection_id": "col_1", "name": "Lista", "stages": ["Nuevo"],
            "records": [{"record_ref": "record:r", "title": "T", "stage": "Nuevo",
                         "version": 3, "updated_at": 1700000000000_i64, "company_ref": null}]
        })));
        assert!(like_serde_json::<SessionInfo>(json!({
            "id": "ses_1", "stage": "sin_criterio", "mode": "automatico",
            "budget": {"credit_cap": 1, "contact_cap": 2, "credits_spent": 0, "contacts_spent": 0},
            "created_at": 1, "last_seq": 0
        })));
        like_serde_json::<Option<SessionInfo>>(Value::Null);
        for key in [
            json!("Title"),
            json!({"Title": null}),
            json!({"Column": 2}),
            json!({"Column": "x"}),
            json!({"Column": 1, "Title": null}),
            json!("Column"),
            json!(3),
        ] {
            like_serde_json::<SortKey>(key);
        }
        like_serde_json::<(u32, String)>(json!([1, "a"]));
        like_serde_json::<(u32, String)>(json!([1, "a", 2]));
        like_serde_json::<Vec<u8>>(json!([1, 256]));
        like_serde_json::<i64>(json!(-5));
        like_serde_json::<f64>(json!(-5));
        like_serde_json::<String>(json!(null));
    }

    #[test]
    fn read_takes_structs_only_as_objects() {
        use crate::stream::Thinking;
        let array = json!(["t1", "pienso"]);
        assert!(serde_json::from_value::<Thinking>(array.clone()).is_ok());
        assert!(read::<Thinking>(array).is_err());
    }

    #[test]
    fn tagged_enums_report_what_is_wrong() {
        let err = |v: Value| {
            serde_json::from_value::<SessionEvent>(v)
                .unwrap_err()
                .to_string()
        };
        assert!(err(json!({"turn_id": "t"})).contains("missing field `type`"));
        assert!(err(json!({"type": "nope"})).contains("unknown variant `nope`"));
        assert!(err(json!({"type": 3})).contains("a string tag"));
        assert!(err(json!([1])).contains("a JSON object"));
        assert!(
            err(json!({"type": "turn.accepted", "turn_id": "t"})).contains("missing field `stage`")
        );
        let e = serde_json::from_value::<ChatMessage>(json!({"kind": "person", "text": "x"}));
        assert!(e
            .unwrap_err()
            .to_string()
            .contains("missing field `turn_id`"));
        let e = serde_json::from_value::<PatchOp>(json!({"op": "add", "path": "/a"}));
        assert!(e.unwrap_err().to_string().contains("missing field `value`"));
        let e = serde_json::from_value::<StreamMessage>(json!({"type": "event", "seq": 1}));
        assert!(e.unwrap_err().to_string().contains("missing field `event`"));
    }
}
