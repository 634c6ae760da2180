//! Unit tests of `json`: the hand-written readers agree with serde's derived ones on
//! every shape, good and bad.

use super::*;
use crate::chat::ChatMessage;
use crate::event::SessionEvent;
use crate::patch::PatchOp;
use crate::stream::StreamMessage;
use serde::de::DeserializeOwned;
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
        #[serde(rename = "steering.resolved")]
        SteeringResolved(SteeringResolved),
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
        Narrating(NarrationDelta),
    }

    #[derive(Serialize, Deserialize)]
    #[serde(tag = "kind", rename_all = "snake_case")]
    pub enum Chat {
        Person {
            turn_id: String,
            text: String,
            steering: bool,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            steering_outcome: Option<SteeringOutcome>,
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
    T: FromJson + DeserializeOwned + serde::Serialize,
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
        json!({"type": "steering.resolved", "turn_id": "t", "text": "x", "outcome": "applied"}),
        json!({"type": "steering.resolved", "turn_id": "t", "text": "x", "outcome": "turn_ended"}),
        json!({"type": "steering.resolved", "turn_id": "t", "text": "x", "outcome": "lost"}),
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
        json!({"type": "narrating", "turn_id": "t", "text": "Listo."}),
        json!({"type": "narrating", "text": "Listo."}),
        json!({"type": "other"}),
    ];
    for f in &frames {
        same::<StreamMessage, derived::Stream>(f);
    }

    let chat = [
        json!({"kind": "person", "turn_id": "t", "text": "x", "steering": false}),
        json!({"kind": "person", "turn_id": "t", "text": "x"}),
        json!({"kind": "person", "turn_id": "t", "text": "x", "steering": true, "steering_outcome": "applied"}),
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

    // And every variation of the golden session's events, frames, chat and patches.
    let golden: Value =
        serde_json::from_str(include_str!("../tests/golden/scene.events.json")).unwrap();
    let view: Value =
        serde_json::from_str(include_str!("../tests/golden/scene.view.json")).unwrap();
    let mut compared = 0;
    for stored in golden.as_array().unwrap() {
        let event = &stored["event"];
        let mut frame = stored.clone();
        frame["type"] = json!("event");
        for (input, kind) in conformance::variations(event)
            .into_iter()
            .map(|v| (v, 0))
            .chain(conformance::variations(&frame).into_iter().map(|v| (v, 1)))
        {
            match kind {
                0 => same::<SessionEvent, derived::Event>(&input),
                _ => same::<StreamMessage, derived::Stream>(&input),
            }
            compared += 1;
        }
        for op in event["patch"].as_array().into_iter().flatten() {
            for input in conformance::variations(op) {
                same::<PatchOp, derived::Patch>(&input);
                compared += 1;
            }
        }
    }
    for message in view["chat"]["messages"].as_array().unwrap() {
        for input in conformance::variations(message) {
            same::<ChatMessage, derived::Chat>(&input);
            compared += 1;
        }
    }
    assert!(compared > 1000, "only {compared} inputs compared");
}

#[test]
fn read_matches_serde_json_from_value() {
    use crate::crm::{CollectionBoard, SortKey};
    use crate::event::StoredEvent;
    use crate::evidence::CompanyFile;
    use crate::session::SessionInfo;
    use crate::view::SessionView;
    use conformance::agree;

    let events: Value =
        serde_json::from_str(include_str!("../tests/golden/scene.events.json")).unwrap();
    assert!(agree::<Vec<StoredEvent>>(&events));
    for e in events.as_array().unwrap() {
        assert!(agree::<StoredEvent>(e));
        assert!(agree::<SessionEvent>(&e["event"]));
    }
    let view: Value =
        serde_json::from_str(include_str!("../tests/golden/scene.view.json")).unwrap();
    assert!(agree::<SessionView>(&view));
    assert!(agree::<SessionView>(&json!({})));
    agree::<SessionView>(&json!({"stage": null, "rejected": 2}));
    agree::<SessionView>(&json!({"stage": "buscando", "rejected": -1}));
    agree::<SessionView>(&json!({"rejected": 1.5}));
    agree::<SessionView>(&json!("view"));

    assert!(agree::<CompanyFile>(&json!({
        "ref": "company:c1", "name": "Cartones", "awards_count": 2,
        "awards_total_mxn": 1500, "awards": [], "by_buyer": [],
        "marks": [], "permits": [], "crm": [],
        "by_year": [{"label": "2024", "amount_mxn": 12.5, "count": 1}]
    })));
    agree::<CompanyFile>(&json!({"name": "x"}));
    assert!(agree::<CollectionBoard>(&json!({
        "collection_id": "col_1", "name": "Lista", "stages": ["Nuevo"],
        "records": [{"record_ref": "record:r", "title": "T", "stage": "Nuevo",
                     "version": 3, "updated_at": 1700000000000_i64, "company_ref": null}]
    })));
    assert!(agree::<SessionInfo>(&json!({
        "id": "ses_1", "stage": "sin_criterio", "mode": "automatico",
        "budget": {"credit_cap": 1, "contact_cap": 2, "credits_spent": 0, "contacts_spent": 0},
        "created_at": 1, "last_seq": 0
    })));
    agree::<Option<SessionInfo>>(&Value::Null);
    for key in [
        json!("Title"),
        json!({"Title": null}),
        json!({"Column": 2}),
        json!({"Column": "x"}),
        json!({"Column": 1, "Title": null}),
        json!("Column"),
        json!(3),
    ] {
        agree::<SortKey>(&key);
    }
    agree::<Vec<u8>>(&json!([1, 256]));
    agree::<i64>(&json!(-5));
    agree::<f64>(&json!(-5));
    agree::<String>(&json!(null));
}

/// Every type the browser reads, over a sample and its variations
/// ([`conformance::check`]): the golden session covers the events, the board, the
/// chat and the cards; the samples cover what server functions answer.
#[test]
fn from_json_reads_what_serde_reads() {
    use crate::account::Me;
    use crate::board::{AutoCounter, Board};
    use crate::crm::{CollectionBoard, Moved, SortKey, UndoReceipt};
    use crate::decision::DecisionResolution;
    use crate::event::StoredEvent;
    use crate::evidence::CompanyFile;
    use crate::knowledge::{Resolution, ReviewBoard};
    use crate::session::{AutoPolicy, SessionInfo, SessionSnapshot, TurnAck};
    use crate::tool::{ToolOutcome, ToolSummary};
    use crate::view::SessionView;
    use conformance::check;

    let mut compared = 0;
    let events: Value =
        serde_json::from_str(include_str!("../tests/golden/scene.events.json")).unwrap();
    for e in events.as_array().unwrap() {
        compared += check::<StoredEvent>(e);
        compared += check::<StreamMessage>(&{
            let mut frame = e.clone();
            frame["type"] = json!("event");
            frame
        });
    }
    let view: Value =
        serde_json::from_str(include_str!("../tests/golden/scene.view.json")).unwrap();
    compared += check::<SessionView>(&view);
    compared += check::<SessionSnapshot>(&json!({"seq": 27, "view": view}));
    compared += check::<StreamMessage>(&json!({"type": "snapshot", "seq": 2, "view": view}));
    compared += check::<StreamMessage>(&json!({"type": "thinking", "turn_id": "t", "text": "x"}));
    compared += check::<StreamMessage>(&json!({"type": "narrating", "turn_id": "t",
        "text": "Hay Empaques Tapatíos.",
        "anchors": [{"start": 4, "end": 21, "label": "Empaques Tapatíos", "ref": "company:E1"}]}));
    compared += check::<Board>(&json!({"auto": {
        "credit_cap": 50, "credits_spent": 3, "contact_cap": 10, "contacts_spent": 0,
        "classes": ["guardar_en_crm", "revelar_contactos"], "set_by": "Ana", "set_at": 1
    }}));
    compared += check::<Board>(&json!({"sequences": [{
        "sequence_id": "seq_1", "name": "Empaque", "steps": 3, "recipients": 2,
        "status": "activa",
        "progress": [
            {"email": "a@b.mx", "sent": 1, "pending": 0, "stopped": "se dio de baja"},
            {"email": "c@d.mx", "sent": 1, "pending": 2}
        ]
    }]}));
    compared += check::<AutoCounter>(&json!({
        "credit_cap": 1, "credits_spent": 0, "contact_cap": 2, "contacts_spent": 0,
        "classes": [], "set_by": "Ana", "set_at": -5
    }));
    compared += check::<Me>(&json!({
        "user_id": "u", "email": "a@b.mx", "display_name": "Ana", "workspace_id": "w",
        "workspace_name": "Empaques", "role": "owner", "plan": "founder"
    }));
    compared += check::<SessionInfo>(&json!({
        "id": "ses_1", "stage": "sin_criterio", "mode": "automatico",
        "budget": {"credit_cap": 1, "contact_cap": 2, "credits_spent": 0, "contacts_spent": 0},
        "created_at": 1, "last_seq": 0
    }));
    compared += check::<Option<SessionInfo>>(&Value::Null);
    compared += check::<TurnAck>(&json!({"turn_id": "t", "steering": true}));
    compared += check::<AutoPolicy>(&json!({
        "allowed": true, "default_credit_cap": 50, "default_contact_cap": 10,
        "max_credit_cap": 200, "max_contact_cap": 40, "classes": ["dejar_nota"]
    }));
    compared += check::<CompanyFile>(&json!({
        "ref": "company:c1", "name": "Cartones", "rfc": "CAR010101AAA", "place": "Jalisco",
        "activity": "Empaque", "awards_count": 2, "awards_total_mxn": 1500.5,
        "awards": [{"ref": "award:a", "title": "Cajas", "buyer": "IMSS",
                    "amount_mxn": 10, "date": "2024-01-02"}],
        "awards_truncated": true,
        "by_year": [{"label": "2024", "amount_mxn": 12.5, "count": 1}],
        "by_buyer": [{"label": "IMSS", "amount_mxn": 12, "count": 1}],
        "marks": [{"ref": "mark:m", "label": "69-B", "adverse": true, "source": "SAT",
                   "date": null}],
        "permits": [{"ref": "permit:p", "permit_type": "Sanitario", "number": "1",
                     "status": "vigente", "date": "2020-01-01"}],
        "crm": [{"record_ref": "record:r", "collection": "Lista", "stage": "Nuevo",
                 "entries": [{"at": 1, "who": "Ana", "what": "guardó"}]}]
    }));
    compared += check::<CollectionBoard>(&json!({
        "collection_id": "col_1", "name": "Lista", "stages": ["Nuevo", "Ganado"],
        "columns": [{"key": "monto", "label": "Monto"}], "truncated": false,
        "records": [{"record_ref": "record:r", "title": "T", "stage": "Nuevo",
                     "version": 3, "updated_at": 1700000000000_i64, "company_ref": null,
                     "values": ["x"]}]
    }));
    compared += check::<Moved>(&json!({"record_ref": "record:r", "stage": "Ganado",
                                       "version": 4, "undo_token": "u"}));
    compared += check::<UndoReceipt>(&json!({"restored": 1, "removed": 0, "cancelled": 2,
                                             "summary": "s"}));
    compared += check::<DecisionResolution>(&json!({"decision_id": "d", "outcome": "accepted",
        "result": {"summary": "s", "refs": ["record:r"]}, "already": false}));
    compared += check::<ReviewBoard>(&json!({
        "pending": [{"id": "p", "kind": "edit", "title": "T", "area": "Ventas",
                     "summary": "s", "topic_ref": "topic:t", "body": null, "diff": "-a\n+b",
                     "proposed_by": "Ana", "proposed_ago": "hace 1 h"}],
        "recent": [{"topic_ref": "topic:t", "title": "T", "area": "Ventas", "badge": "nuevo"}]
    }));
    compared += check::<Resolution>(&json!({"id": "p", "title": "T", "outcome": "merged",
                                            "topic_ref": null}));
    compared += check::<Vec<ToolSummary>>(&json!([{"name": "market_search",
        "family": "Mercado", "label": "Buscar", "level": "read", "read_only": true}]));
    compared += check::<ToolOutcome>(&json!({"ref": "call:1", "results": [
        {"ref": "company:c", "ref_label": "Cartones", "plan": "founder", "n": 2}],
        "shown": 1, "has_more": true, "cursor": "c", "coverage": {"a": 1},
        "status": "ok", "next_action": "x"}));
    compared += check::<ToolOutcome>(&json!({"error": {"code": "INVALID_ARGUMENT",
        "message": "m", "hint": "h", "allowed_values": ["a"], "retry_after": 3}}));
    for key in [json!("Title"), json!({"Title": null}), json!({"Column": 2})] {
        compared += check::<SortKey>(&key);
    }
    assert!(compared > 1500, "only {compared} inputs compared");
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
    assert!(err(json!({"type": "turn.accepted", "turn_id": "t"})).contains("missing field `stage`"));
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
