//! Golden tests of the reducer: a recorded session (`golden/scene.events.json`) folds
//! to the recorded view (`golden/scene.view.json`). Regenerate the view after an
//! intended change with `LUNA_BLESS=1 cargo test -p luna-protocol --test reducer_golden`.

use luna_protocol::board::{RunStatus, SequenceStatus};
use luna_protocol::chat::{segments, ChatMessage, Segment, ToolStatus};
use luna_protocol::decision::{DecisionKind, DecisionOutcome};
use luna_protocol::event::{RefusalCode, StoredEvent};
use luna_protocol::session::Stage;
use luna_protocol::stream::{Replica, StreamGap, StreamMessage};
use luna_protocol::view::{fold, SessionView};

const EVENTS: &str = include_str!("golden/scene.events.json");
const VIEW_PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/scene.view.json");

fn recorded() -> Vec<StoredEvent> {
    serde_json::from_str(EVENTS).expect("the recorded events parse")
}

fn folded(events: &[StoredEvent]) -> SessionView {
    let mut view = SessionView::default();
    fold(&mut view, events);
    view
}

#[test]
fn the_recorded_session_folds_to_the_recorded_view() {
    let view = folded(&recorded());
    let json = serde_json::to_string_pretty(&view).unwrap() + "\n";
    if std::env::var_os("LUNA_BLESS").is_some() {
        std::fs::write(VIEW_PATH, &json).unwrap();
    }
    let expected = std::fs::read_to_string(VIEW_PATH).expect("golden view exists");
    let expected: SessionView = serde_json::from_str(&expected).unwrap();
    assert_eq!(view, expected);
}

#[test]
fn the_board_holds_selection_saved_list_pending_runs_and_sequences() {
    let view = folded(&recorded());
    let board = &view.board;
    assert_eq!(board.selection.len(), 2);
    assert_eq!(board.selection[0].reference, "company:c1");
    assert_eq!(
        board.selection[0].why,
        "Le vendió cajas al IMSS en 2024 y 2025"
    );
    assert_eq!(board.selection[0].evidence[0].reference, "record:aw1");
    assert_eq!(board.selection[1].priority, None);
    let saved = board.saved.as_ref().expect("saved collection");
    assert_eq!((saved.collection_id.as_str(), saved.total), ("col_1", 2));
    // The accepted save card left the board; the reveal card still waits.
    assert_eq!(board.pending.len(), 1);
    assert_eq!(board.pending[0].kind, DecisionKind::RevelarContactos);
    assert_eq!(board.pending[0].price.map(|p| p.amount), Some(4));
    assert_eq!(board.runs.len(), 1);
    assert_eq!(board.runs[0].status, RunStatus::Finished);
    assert_eq!(board.runs[0].phase, "Resultado listo");
    assert_eq!(board.sequences[0].status, SequenceStatus::Borrador);
    // The patch removing a non-existent item (seq 20) changed nothing and was counted.
    assert_eq!(view.rejected, 1);
    assert_eq!(view.stage, Some(Stage::ConListaGuardada));
    assert_eq!(view.active_turn, None);
}

#[test]
fn the_chat_merges_narration_and_pairs_tool_lines() {
    let view = folded(&recorded());
    let kinds: Vec<&str> = view
        .chat
        .messages
        .iter()
        .map(|m| match m {
            ChatMessage::Person { steering: true, .. } => "steer",
            ChatMessage::Person { .. } => "person",
            ChatMessage::Luna { .. } => "luna",
            ChatMessage::Tool(_) => "tool",
            ChatMessage::Decision { .. } => "decision",
            ChatMessage::Refused { .. } => "refused",
            ChatMessage::Run { .. } => "run",
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "person", "tool", "tool", "steer", "luna", "decision", "person", "tool", "decision",
            "luna", "run", "person", "refused"
        ]
    );
    let ChatMessage::Luna { text, anchors, .. } = &view.chat.messages[4] else {
        panic!("expected narration");
    };
    assert_eq!(text, "Elegí a Cartones Tapatíos y a Empaques de Occidente.");
    assert_eq!(
        segments(text, anchors),
        [
            Segment::Text("Elegí a "),
            Segment::Link {
                label: "Cartones Tapatíos",
                reference: "company:c1"
            },
            Segment::Text(" y a "),
            Segment::Link {
                label: "Empaques de Occidente",
                reference: "company:c2"
            },
            Segment::Text("."),
        ]
    );
    let ChatMessage::Tool(line) = &view.chat.messages[7] else {
        panic!("expected a tool line");
    };
    assert_eq!(line.status, ToolStatus::Done);
    assert_eq!(line.undo_token.as_deref(), Some("undo_s1"));
    let ChatMessage::Decision { outcome, .. } = &view.chat.messages[5] else {
        panic!("expected a decision line");
    };
    assert_eq!(*outcome, Some(DecisionOutcome::Accepted));
    // The run's progress left one link in the chat, following the run's status.
    let ChatMessage::Run { status, .. } = &view.chat.messages[10] else {
        panic!("expected a run link");
    };
    assert_eq!(*status, RunStatus::Finished);
    let ChatMessage::Refused { code, .. } = &view.chat.messages[12] else {
        panic!("expected a refusal");
    };
    assert_eq!(*code, RefusalCode::Credits);
}

#[test]
fn a_tool_still_running_shows_as_running() {
    let events = recorded();
    let view = folded(&events[..5]);
    let ChatMessage::Tool(line) = view.chat.messages.last().unwrap() else {
        panic!("expected a tool line");
    };
    assert_eq!(line.status, ToolStatus::Running);
    assert_eq!(view.active_turn.as_deref(), Some("turn_1"));
}

#[test]
fn resuming_from_every_since_point_gives_the_same_view() {
    let events = recorded();
    let full = folded(&events);
    for k in 0..=events.len() {
        let mut replica = Replica::new(k as u64, folded(&events[..k]));
        // A reconnecting client may see a few events twice; they change nothing.
        for e in &events[k.saturating_sub(2)..] {
            replica
                .receive(&StreamMessage::Event {
                    seq: e.seq,
                    event: e.event.clone(),
                })
                .unwrap();
        }
        assert_eq!(replica.seq, events.len() as u64, "since={k}");
        assert_eq!(replica.view, full, "since={k}");
    }
}

#[test]
fn a_replica_reports_a_gap_and_accepts_a_newer_snapshot() {
    let events = recorded();
    let mut replica = Replica::default();
    let msg = |e: &StoredEvent| StreamMessage::Event {
        seq: e.seq,
        event: e.event.clone(),
    };
    assert_eq!(replica.receive(&msg(&events[0])), Ok(true));
    assert_eq!(
        replica.receive(&msg(&events[2])),
        Err(StreamGap {
            expected: 2,
            got: 3
        })
    );
    let snapshot = StreamMessage::Snapshot {
        seq: events.len() as u64,
        view: folded(&events),
    };
    assert_eq!(replica.receive(&snapshot), Ok(true));
    assert_eq!(replica.receive(&msg(&events[3])), Ok(false));
    assert_eq!(replica.view, folded(&events));
}

#[test]
fn the_view_survives_a_json_round_trip() {
    let view = folded(&recorded());
    let json = serde_json::to_string(&StreamMessage::Snapshot {
        seq: 27,
        view: view.clone(),
    })
    .unwrap();
    assert!(json.starts_with(r#"{"type":"snapshot","seq":27,"view":"#));
    let back: StreamMessage = serde_json::from_str(&json).unwrap();
    assert_eq!(back, StreamMessage::Snapshot { seq: 27, view });
}

#[test]
fn tool_lines_pair_within_their_turn_or_run() {
    use luna_protocol::event::{SessionEvent, ToolFinished, ToolStarted};
    // Two research runs of one session both name their first call `p1c1`.
    let started = |owner: &str| {
        SessionEvent::ToolStarted(ToolStarted {
            turn_id: owner.into(),
            call_ref: "p1c1".into(),
            label: format!("Contando proveedores ({owner})"),
        })
    };
    let mut view = SessionView::default();
    for ev in [
        started("run_a"),
        started("run_b"),
        SessionEvent::ToolFinished(ToolFinished {
            turn_id: "run_a".into(),
            call_ref: "p1c1".into(),
            label: "Contando proveedores (run_a)".into(),
            summary: "1 resultado".into(),
            refs: Vec::new(),
            reads_counted: 1,
            ok: true,
            undo_token: None,
        }),
    ] {
        luna_protocol::view::apply(&mut view, &ev);
    }
    let lines: Vec<_> = view
        .chat
        .messages
        .iter()
        .filter_map(|m| match m {
            ChatMessage::Tool(l) => Some((l.turn_id.as_str(), l.status)),
            _ => None,
        })
        .collect();
    assert_eq!(
        lines,
        vec![("run_a", ToolStatus::Done), ("run_b", ToolStatus::Running)]
    );
}

#[test]
fn a_call_started_again_keeps_its_one_line() {
    use luna_protocol::event::{SessionEvent, ToolStarted};
    // A research phase interrupted by a restart runs its calls again.
    let started = SessionEvent::ToolStarted(ToolStarted {
        turn_id: "run_a".into(),
        call_ref: "p1c1".into(),
        label: "Contando proveedores".into(),
    });
    let mut view = SessionView::default();
    luna_protocol::view::apply(&mut view, &started);
    luna_protocol::view::apply(&mut view, &started);
    assert_eq!(view.chat.messages.len(), 1);
}
