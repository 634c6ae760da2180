//! How the browser reads JSON, and the decoding of the internally tagged enums.
//!
//! The browser's wasm pays for every `Deserialize` implementation once per deserializer it
//! is used with. Reading a frame straight from text compiles each wire type for serde_json's
//! reader (once for `&str`, once more for `&[u8]`), and serde's derive for an internally
//! tagged enum (`#[serde(tag = "…")]`) buffers the object in its private `Content` type and
//! compiles every variant's type a second time for that buffer. So the browser reads every
//! payload — websocket frames, server-function answers, hydrated resources — in two steps:
//! text → `serde_json::Value` → wire type ([`from_slice`], [`from_str`]). Each type's
//! derived `Deserialize` is then compiled once, for `Value`.
//!
//! The four internally tagged enums (`SessionEvent`, `StreamMessage`, `ChatMessage`,
//! `PatchOp`) implement `Deserialize` by hand with [`untag`]: the tag is taken out of the
//! object and the rest is read as the variant's type from the same `Value`, so serde's
//! `Content` buffer is never compiled in. The JSON they accept and produce is unchanged
//! (their `Serialize` is still derived); the server uses the same implementations.

use serde::de::{DeserializeOwned, Error as _, Unexpected};
use serde::{Deserialize, Deserializer};
use serde_json::{Error, Value};

/// Parses JSON bytes into `T` through a `serde_json::Value` (see the module docs).
pub fn from_slice<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, Error> {
    T::deserialize(serde_json::from_slice::<Value>(bytes)?)
}

/// Parses JSON text into `T` through a `serde_json::Value` (see the module docs).
pub fn from_str<T: DeserializeOwned>(text: &str) -> Result<T, Error> {
    from_slice(text.as_bytes())
}

/// Reads an internally tagged object: returns the value of its `tag` field and the
/// object without it, which the caller reads as the variant's own type.
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
        Value::Number(_) => Unexpected::Other("a number"),
        Value::String(s) => Unexpected::Str(s),
        Value::Array(_) => Unexpected::Seq,
        Value::Object(_) => Unexpected::Map,
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
