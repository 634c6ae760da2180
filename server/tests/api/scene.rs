//! The seed scene (004 §1) through the real server on the local director: a person
//! signs in, opens a session and sends the scene's request over the server functions;
//! the turn's events stream over the websocket in order and build the argued
//! selection and the save card. Resuming from every `since` yields the same board.

use std::time::Duration;

use axum::http::header;
use luna_protocol::decision::DecisionKind;
use luna_protocol::event::{IntentKind, SessionEvent};
use luna_protocol::session::TurnAck;
use luna_protocol::stream::{Replica, StreamMessage};
use luna_protocol::view::{apply, SessionView};

use crate::helpers::{next_message, read_until, spawn_app, spawn_instance_of, TestApp};

pub(crate) const SCENE: &str = "Quiero 40 fabricantes de empaque en Jalisco que ya le hayan vendido a gobierno. Guárdamelos, consígueme el correo de los 10 mejores y ármame una secuencia de tres correos.";

/// Calls a server function the way the browser does (form in, JSON out).
pub(crate) async fn server_fn(
    app: &TestApp,
    token: &str,
    endpoint: &str,
    form: &[(&str, &str)],
) -> (u16, String) {
    let body: String = form
        .iter()
        .map(|(k, v)| format!("{k}={}", urlencode(v)))
        .collect::<Vec<_>>()
        .join("&");
    let mut stream = tokio::net::TcpStream::connect(app.addr).await.unwrap();
    let request = format!(
        "POST /api/{endpoint} HTTP/1.1\r\nHost: {}\r\n{}: application/x-www-form-urlencoded\r\n{}: luna_session={token}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        app.addr,
        header::CONTENT_TYPE,
        header::COOKIE,
        body.len()
    );
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await.unwrap();
    let text = String::from_utf8_lossy(&raw).into_owned();
    let status: u16 = text[9..12].parse().unwrap();
    let (head, rest) = text.split_once("\r\n\r\n").unwrap();
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(rest)
    } else {
        rest.to_owned()
    };
    (status, body)
}

fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn dechunk(mut rest: &str) -> String {
    let mut out = String::new();
    while let Some((size, tail)) = rest.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 {
            break;
        }
        out.push_str(&tail[..n]);
        rest = &tail[n + 2..];
    }
    out
}

#[tokio::test]
async fn the_seed_scene_streams_in_order_and_builds_the_board() {
    let app = spawn_app().await;
    app.engine.market.ensure_demo().await.unwrap();
    luna_engine::crm::demo::seed(&app.engine.store)
        .await
        .unwrap();
    let (token, caller) = app.login("ventas@demo.luna.mx").await;

    let (code, body) = server_fn(&app, &token, "create_session", &[]).await;
    assert_eq!(code, 200, "{body}");
    let session: String = serde_json::from_str(&body).unwrap();
    let mut socket = app.connect(Some(&token), &session, 0).await.unwrap();

    let form = [
        ("session_id", session.as_str()),
        ("text", SCENE),
        ("idempotency_key", "escena-1"),
    ];
    let (code, body) = server_fn(&app, &token, "send_message", &form).await;
    assert_eq!(code, 200, "{body}");
    let ack: TurnAck = serde_json::from_str(&body).unwrap();
    assert!(!ack.steering);

    // Follow the websocket until the turn finishes.
    let mut received = Vec::new();
    loop {
        let msg = next_message(&mut socket, Duration::from_secs(60))
            .await
            .expect("the turn finished before the stream went silent");
        let done = matches!(
            &msg,
            StreamMessage::Event {
                event: SessionEvent::TurnFinished(_),
                ..
            }
        );
        received.push(msg);
        if done {
            break;
        }
    }
    // The same Idempotency-Key returns the same turn and starts nothing new.
    let (_, body) = server_fn(&app, &token, "send_message", &form).await;
    let again: TurnAck = serde_json::from_str(&body).unwrap();
    assert_eq!(again.turn_id, ack.turn_id);

    let events: Vec<&SessionEvent> = received
        .iter()
        .map(|m| match m {
            StreamMessage::Event { event, .. } => event,
            other => panic!("a live client gets events, not {other:?}"),
        })
        .collect();
    let kinds: Vec<&str> = events.iter().map(|e| e.kind()).collect();

    // turn.accepted → tool.started/finished pairs (board patches among them) →
    // narration → decision.proposed → turn.finished.
    assert_eq!(&kinds[..2], ["user.message", "turn.accepted"], "{kinds:?}");
    assert_eq!(
        &kinds[kinds.len() - 3..],
        ["narration.delta", "decision.proposed", "turn.finished"],
        "{kinds:?}"
    );
    let middle = &events[2..events.len() - 3];
    let mut open: Option<&str> = None;
    let mut labels = Vec::new();
    for e in middle {
        match e {
            SessionEvent::ToolStarted(t) => {
                assert_eq!(
                    open, None,
                    "a tool starts only after the previous one finished"
                );
                open = Some(&t.call_ref);
                labels.push(t.label.clone());
            }
            SessionEvent::ToolFinished(t) => {
                assert_eq!(open, Some(t.call_ref.as_str()));
                assert!(t.ok, "{}: {}", t.label, t.summary);
                open = None;
            }
            SessionEvent::BoardPatched(_) => {
                assert!(open.is_some(), "the board moves while a tool runs")
            }
            other => panic!("unexpected {} in the middle of the turn", other.kind()),
        }
    }
    assert_eq!(open, None);
    assert!(labels.len() >= 3, "count, search and select: {labels:?}");
    assert_eq!(labels[0], "Contando proveedores en Jalisco", "{labels:?}");
    assert!(
        labels
            .iter()
            .any(|l| l == "Buscando proveedores en Jalisco"),
        "{labels:?}"
    );
    assert!(kinds.contains(&"board.patched"));
    let SessionEvent::NarrationDelta(narration) = events[events.len() - 3] else {
        unreachable!()
    };
    assert!(
        narration.text.contains("Armé una selección de 40"),
        "{}",
        narration.text
    );
    assert!(!narration.text.contains("[["));
    let SessionEvent::DecisionProposed(proposed) = events[events.len() - 2] else {
        unreachable!()
    };
    assert_eq!(proposed.card.kind, DecisionKind::GuardarEnCrm);
    let SessionEvent::TurnFinished(finished) = events[events.len() - 1] else {
        unreachable!()
    };
    assert_eq!(finished.intent_kind, IntentKind::ProponerDecision);
    assert_eq!(finished.turn_id, ack.turn_id);

    // The final board: forty argued cards, ten priorities, one save card, nothing saved.
    let mut live = Replica::default();
    for m in &received {
        assert_eq!(live.receive(m), Ok(true));
    }
    let board = &live.view.board;
    assert_eq!(board.selection.len(), 40);
    assert!(board.selection.iter().all(|s| !s.why.is_empty()));
    assert_eq!(
        board
            .selection
            .iter()
            .filter(|s| s.priority.is_some())
            .count(),
        10
    );
    assert_eq!(board.pending.len(), 1);
    assert_eq!(board.pending[0].kind, DecisionKind::GuardarEnCrm);
    assert!(board.saved.is_none(), "saving waits for the person's tap");
    assert_eq!(live.view.active_turn, None);
    let snapshot = app
        .engine
        .sessions
        .snapshot_at_latest(&caller, &session)
        .await
        .unwrap();
    assert_eq!((live.seq, &live.view), (snapshot.seq, &snapshot.view));

    // Resume from every `since`: the client holds the view folded up to `since` and
    // the stream brings it to the same final board, with nothing missed or repeated.
    let last = live.seq;
    let stored = app
        .engine
        .sessions
        .events_since(&caller, &session, 0)
        .await
        .unwrap();
    assert_eq!(stored.len() as u64, last);
    for since in 0..=last {
        let mut view = SessionView::default();
        for e in &stored[..since as usize] {
            apply(&mut view, &e.event);
        }
        let mut replica = Replica::new(since, view);
        if since < last {
            let mut socket = app.connect(Some(&token), &session, since).await.unwrap();
            for m in read_until(&mut socket, last).await {
                assert_eq!(replica.receive(&m), Ok(true), "since={since}");
            }
        }
        assert_eq!(replica.seq, last);
        assert_eq!(replica.view, live.view, "resumed from since={since}");
    }
}

/// Sends `text` as a turn and follows the socket until that turn finishes.
pub(crate) async fn turn_over_socket(
    app: &TestApp,
    token: &str,
    socket: &mut crate::helpers::Socket,
    session: &str,
    text: &str,
    key: &str,
) -> Vec<SessionEvent> {
    let form = [
        ("session_id", session),
        ("text", text),
        ("idempotency_key", key),
    ];
    let (code, body) = server_fn(app, token, "send_message", &form).await;
    assert_eq!(code, 200, "{body}");
    let ack: TurnAck = serde_json::from_str(&body).unwrap();
    let mut events = Vec::new();
    loop {
        let msg = next_message(socket, Duration::from_secs(60))
            .await
            .expect("the turn finished before the stream went silent");
        if let StreamMessage::Event { event, .. } = msg {
            let done = matches!(&event, SessionEvent::TurnFinished(f) if f.turn_id == ack.turn_id);
            events.push(event);
            if done {
                return events;
            }
        }
    }
}

/// Follows the socket through the next turn that starts (one Luna begins on her own,
/// e.g. the next part of a chained request) until it finishes.
pub(crate) async fn next_turn(socket: &mut crate::helpers::Socket) -> Vec<SessionEvent> {
    let mut events = Vec::new();
    let mut turn: Option<String> = None;
    loop {
        let msg = next_message(socket, Duration::from_secs(60))
            .await
            .expect("a turn started and finished");
        if let StreamMessage::Event { event, .. } = msg {
            if let SessionEvent::TurnAccepted(a) = &event {
                turn.get_or_insert_with(|| a.turn_id.clone());
            }
            let done = matches!(&event, SessionEvent::TurnFinished(f) if Some(&f.turn_id) == turn.as_ref());
            events.push(event);
            if done {
                return events;
            }
        }
    }
}

/// Resolves a card over the server function and returns the events it streamed.
pub(crate) async fn resolve_over_socket(
    app: &TestApp,
    token: &str,
    socket: &mut crate::helpers::Socket,
    session: &str,
    card: &luna_protocol::decision::DecisionCard,
    endpoint: &str,
    extra: &[(&str, &str)],
) -> Vec<SessionEvent> {
    // The click carries the card as the person saw it (its fingerprint), as the
    // browser's does.
    let decision = card.id.as_str();
    let mut form = vec![
        ("session_id", session),
        ("decision_id", decision),
        ("fingerprint", card.fingerprint.as_str()),
    ];
    form.extend_from_slice(extra);
    let (code, body) = server_fn(app, token, endpoint, &form).await;
    assert_eq!(code, 200, "{body}");
    let mut events = Vec::new();
    loop {
        let msg = next_message(socket, Duration::from_secs(30))
            .await
            .expect("the resolution streamed");
        if let StreamMessage::Event { event, .. } = msg {
            let done =
                matches!(&event, SessionEvent::DecisionResolved(r) if r.decision_id == decision);
            events.push(event);
            if done {
                return events;
            }
        }
    }
}

pub(crate) fn pending_card(events: &[SessionEvent]) -> &luna_protocol::decision::DecisionCard {
    events
        .iter()
        .find_map(|e| match e {
            SessionEvent::DecisionProposed(p) => Some(&p.card),
            _ => None,
        })
        .expect("the turn proposed a card")
}

/// The whole scene from its one message, through the real server and the websocket,
/// the person only tapping cards: accepting the save card makes Luna go on with the
/// contacts of the ten best (a priced card, charged only on the tap), accepting that
/// one with a sequence of three emails (a draft and a card with one checkbox per
/// step); the board a reconnecting client folds is the server's.
#[tokio::test]
async fn the_scene_continues_through_contacts_to_the_sequence_card_over_the_socket() {
    let app = spawn_app().await;
    app.engine.market.ensure_demo().await.unwrap();
    luna_engine::crm::demo::seed(&app.engine.store)
        .await
        .unwrap();
    let (token, caller) = app.login("ventas@demo.luna.mx").await;
    let (_, body) = server_fn(&app, &token, "create_session", &[]).await;
    let session: String = serde_json::from_str(&body).unwrap();
    let mut socket = app.connect(Some(&token), &session, 0).await.unwrap();

    let first = turn_over_socket(&app, &token, &mut socket, &session, SCENE, "e-1").await;
    let save = pending_card(&first);
    assert_eq!(save.kind, DecisionKind::GuardarEnCrm);
    let saved = resolve_over_socket(
        &app,
        &token,
        &mut socket,
        &session,
        &save.clone(),
        "resolve_decision",
        &[("resolution", "accept")],
    )
    .await;
    assert!(
        matches!(saved.last(), Some(SessionEvent::DecisionResolved(r))
        if r.outcome == luna_protocol::decision::DecisionOutcome::Accepted)
    );

    // The message asked for three things: the accepted card starts the next part, a
    // turn of its own (no new message from the person).
    let contacts = next_turn(&mut socket).await;
    assert!(
        !contacts
            .iter()
            .any(|e| matches!(e, SessionEvent::UserMessage(_))),
        "Luna goes on by herself"
    );
    let labels: Vec<&str> = contacts
        .iter()
        .filter_map(|e| match e {
            SessionEvent::ToolStarted(t) => Some(t.label.as_str()),
            _ => None,
        })
        .collect();
    assert!(
        labels.iter().position(|l| l.contains("Cotizando"))
            > labels.iter().position(|l| l.contains("Buscando personas")),
        "quote after the people search: {labels:?}"
    );
    let reveal = pending_card(&contacts);
    assert_eq!(reveal.kind, DecisionKind::RevelarContactos);
    assert_eq!(reveal.preview.len(), 10);
    let price = reveal.price.expect("a reveal card has a price");
    let balance = || async {
        app.engine
            .billing
            .balance(&caller, luna_engine::billing::Ledger::Contact)
            .await
            .unwrap()
            .left()
    };
    let balance_before = balance().await;
    let revealed = resolve_over_socket(
        &app,
        &token,
        &mut socket,
        &session,
        &reveal.clone(),
        "resolve_decision",
        &[("resolution", "accept")],
    )
    .await;
    assert!(
        matches!(revealed.last(), Some(SessionEvent::DecisionResolved(r))
        if r.outcome == luna_protocol::decision::DecisionOutcome::Accepted)
    );
    assert_eq!(
        balance().await,
        balance_before - price.amount as i64,
        "charged once, on the tap"
    );

    let sequence = next_turn(&mut socket).await;
    let card = pending_card(&sequence);
    assert_eq!(card.kind, DecisionKind::RevisarSecuencia);
    assert_eq!(card.steps.len(), 3);

    // A client that reconnects from the start folds the same board the server holds.
    let snapshot = app
        .engine
        .sessions
        .snapshot_at_latest(&caller, &session)
        .await
        .unwrap();
    let mut replica = Replica::default();
    let mut fresh = app.connect(Some(&token), &session, 0).await.unwrap();
    for m in read_until(&mut fresh, snapshot.seq).await {
        replica.receive(&m).unwrap();
    }
    assert_eq!(replica.view, snapshot.view);
    let board = &replica.view.board;
    assert_eq!(board.saved.as_ref().map(|s| s.total), Some(40));
    assert_eq!(board.sequences.len(), 1);
    assert_eq!(board.pending.len(), 1);
    assert_eq!(board.pending[0].kind, DecisionKind::RevisarSecuencia);
    assert!(board.selection.len() == 40);
}

/// Two app instances on one PostgreSQL database (CONTRACT §2): the browser's websocket is
/// on instance A while the turn and the card's resolution run on instance B. A sees
/// every event B appends, live and in order, and folds the board B's database holds.
/// The login cookie works on both. (SQLite runs one instance: ignored there.)
#[tokio::test]
#[ignore = "needs PostgreSQL: .ci/test runs it with LUNA_TEST_DATABASE_URL (.ci/postgres)"]
async fn pg_only_the_scene_completes_with_the_browser_on_one_instance_and_the_turn_on_another() {
    let a = spawn_app().await;
    if a.engine.store.backend() != luna_engine::store::Backend::Postgres {
        panic!("this test needs PostgreSQL: run it with LUNA_TEST_DATABASE_URL=postgres://… (.ci/postgres)");
    }
    a.engine.market.ensure_demo().await.unwrap();
    luna_engine::crm::demo::seed(&a.engine.store).await.unwrap();
    let b = spawn_instance_of(&a).await;
    let (token, caller) = a.login("ventas@demo.luna.mx").await;

    let (code, body) = server_fn(&b, &token, "create_session", &[]).await;
    assert_eq!(code, 200, "a cookie minted on A works on B: {body}");
    let session: String = serde_json::from_str(&body).unwrap();
    let mut socket = a.connect(Some(&token), &session, 0).await.unwrap();
    // Let A's listener subscribe before B starts appending.
    tokio::time::sleep(Duration::from_millis(300)).await;

    let first = turn_over_socket(&b, &token, &mut socket, &session, SCENE, "dos-1").await;
    let kinds: Vec<&str> = first.iter().map(|e| e.kind()).collect();
    assert_eq!(&kinds[..2], ["user.message", "turn.accepted"], "{kinds:?}");
    let save = pending_card(&first);
    assert_eq!(save.kind, DecisionKind::GuardarEnCrm);
    let saved = resolve_over_socket(
        &b,
        &token,
        &mut socket,
        &session,
        &save.clone(),
        "resolve_decision",
        &[("resolution", "accept")],
    )
    .await;
    assert!(
        matches!(saved.last(), Some(SessionEvent::DecisionResolved(r))
        if r.outcome == luna_protocol::decision::DecisionOutcome::Accepted)
    );

    // A reconnecting client on A folds exactly the board B's database holds.
    let snapshot = b
        .engine
        .sessions
        .snapshot_at_latest(&caller, &session)
        .await
        .unwrap();
    let mut replica = Replica::default();
    let mut again = a.connect(Some(&token), &session, 0).await.unwrap();
    for m in read_until(&mut again, snapshot.seq).await {
        replica.receive(&m).unwrap();
    }
    assert_eq!(replica.view, snapshot.view);
    assert_eq!(replica.view.board.saved.as_ref().map(|s| s.total), Some(40));
}
