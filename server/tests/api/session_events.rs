//! The events websocket: order, no gaps, no duplicates, resume, snapshots, access.

use std::time::Duration;

use luna_protocol::stream::{Replica, StreamMessage};

use crate::helpers::{handshake_status, message, next_message, read_until, seqs, spawn_app};

#[tokio::test]
async fn a_live_stream_has_no_gaps_or_duplicates_while_events_are_appended() {
    let app = spawn_app().await;
    let (token, owner) = app.login("duena@demo.luna.mx").await;
    let session = app.engine.sessions.create(&owner).await.unwrap().id;
    for i in 1..=30 {
        app.engine
            .sessions
            .append_one(&session, message(i))
            .await
            .unwrap();
    }

    let mut socket = app.connect(Some(&token), &session, 0).await.unwrap();
    // Append from another task while the socket catches up and then streams live.
    let writer = {
        let (sessions, session) = (app.engine.sessions.clone(), session.clone());
        tokio::spawn(async move {
            for i in 31..=130 {
                sessions.append_one(&session, message(i)).await.unwrap();
                if i % 10 == 0 {
                    tokio::task::yield_now().await;
                }
            }
        })
    };
    let received = read_until(&mut socket, 130).await;
    writer.await.unwrap();
    assert_eq!(seqs(&received), (1..=130).collect::<Vec<u64>>());
    assert!(received
        .iter()
        .all(|m| matches!(m, StreamMessage::Event { .. })));
    assert_eq!(
        next_message(&mut socket, Duration::from_millis(300)).await,
        None
    );

    // What the client folded equals the server's snapshot.
    let mut replica = Replica::default();
    for m in &received {
        assert_eq!(replica.receive(m), Ok(true));
    }
    let snapshot = app
        .engine
        .sessions
        .snapshot_at_latest(&owner, &session)
        .await
        .unwrap();
    assert_eq!((replica.seq, &replica.view), (snapshot.seq, &snapshot.view));

    // Reconnecting with since=k yields exactly the remainder.
    let mut again = app.connect(Some(&token), &session, 57).await.unwrap();
    let rest = read_until(&mut again, 130).await;
    assert_eq!(seqs(&rest), (58..=130).collect::<Vec<u64>>());
    assert_eq!(
        next_message(&mut again, Duration::from_millis(300)).await,
        None
    );
}

#[tokio::test]
async fn two_tabs_of_two_members_see_the_same_events() {
    let app = spawn_app().await;
    let (owner_token, owner) = app.login("duena@demo.luna.mx").await;
    let (member_token, _) = app.login("ventas@demo.luna.mx").await;
    let session = app.engine.sessions.create(&owner).await.unwrap().id;
    let mut tab_a = app.connect(Some(&owner_token), &session, 0).await.unwrap();
    let mut tab_b = app.connect(Some(&member_token), &session, 0).await.unwrap();
    // Give both sockets time to subscribe; either way they must not miss anything.
    tokio::time::sleep(Duration::from_millis(50)).await;
    for i in 1..=20 {
        app.engine
            .sessions
            .append_one(&session, message(i))
            .await
            .unwrap();
    }
    let a = read_until(&mut tab_a, 20).await;
    let b = read_until(&mut tab_b, 20).await;
    assert_eq!(seqs(&a), (1..=20).collect::<Vec<u64>>());
    assert_eq!(a, b);
}

#[tokio::test]
async fn a_client_far_behind_gets_a_snapshot_and_then_live_events() {
    let app = spawn_app().await;
    let (token, owner) = app.login("duena@demo.luna.mx").await;
    let session = app.engine.sessions.create(&owner).await.unwrap().id;
    let batch: Vec<_> = (1..=250).map(message).collect();
    app.engine
        .sessions
        .append_all(&session, &batch)
        .await
        .unwrap();

    let mut socket = app.connect(Some(&token), &session, 10).await.unwrap();
    let first = next_message(&mut socket, Duration::from_secs(10))
        .await
        .expect("a snapshot");
    let StreamMessage::Snapshot { seq, view } = first else {
        panic!("expected a snapshot first, got {first:?}");
    };
    assert_eq!(seq, 250);
    assert_eq!(view.chat.messages.len(), 250);

    for i in 251..=253 {
        app.engine
            .sessions
            .append_one(&session, message(i))
            .await
            .unwrap();
    }
    let tail = read_until(&mut socket, 253).await;
    assert_eq!(seqs(&tail), vec![251, 252, 253]);
}

#[tokio::test]
async fn another_workspace_gets_404_and_no_cookie_gets_401() {
    let app = spawn_app().await;
    let (_, owner) = app.login("duena@demo.luna.mx").await;
    let (outsider_token, _) = app.login("explorer@demo.luna.mx").await;
    let session = app.engine.sessions.create(&owner).await.unwrap().id;

    let err = app
        .connect(Some(&outsider_token), &session, 0)
        .await
        .unwrap_err();
    assert_eq!(handshake_status(err), 404);
    let err = app.connect(None, &session, 0).await.unwrap_err();
    assert_eq!(handshake_status(err), 401);
    let err = app.connect(Some("forged"), &session, 0).await.unwrap_err();
    assert_eq!(handshake_status(err), 401);
    let err = app
        .connect(Some(&outsider_token), "ses_missing", 0)
        .await
        .unwrap_err();
    assert_eq!(handshake_status(err), 404);
}

#[tokio::test]
async fn a_research_run_streams_its_phases_in_order_over_the_websocket() {
    use luna_protocol::board::{PhaseStatus, RunStatus};
    use luna_protocol::event::SessionEvent;

    let app = spawn_app().await;
    assert!(app.engine.market.ensure_demo().await.unwrap());
    let (token, owner) = app.login("duena@demo.luna.mx").await;
    let session = app.engine.sessions.create(&owner).await.unwrap().id;
    let mut socket = app.connect(Some(&token), &session, 0).await.unwrap();
    let p = luna_engine::research::propose(
        &app.engine,
        &owner,
        Some(&session),
        "investiga quién domina las adjudicaciones de insumos médicos en Nuevo León",
        &[],
    )
    .await
    .unwrap();
    // Accepting starts the run in the background (as the `investigar` card does).
    luna_engine::research::start(&app.engine, &owner, &p.proposal_id)
        .await
        .unwrap();
    let phases = luna_engine::research::PHASES.len() as u64;
    // Each phase's tool calls stream as tool lines too: count, search, aggregate,
    // screen and compare, each started and finished.
    let lines = 2 * 5;
    let total = 1 + 2 * phases + lines;
    let received = read_until(&mut socket, total).await;
    assert_eq!(seqs(&received), (1..=total).collect::<Vec<u64>>());
    let tool_events = received
        .iter()
        .filter(|m| {
            matches!(
                m,
                StreamMessage::Event {
                    event: SessionEvent::ToolStarted(_) | SessionEvent::ToolFinished(_),
                    ..
                }
            )
        })
        .count() as u64;
    assert_eq!(tool_events, lines);
    let progress: Vec<_> = received
        .iter()
        .filter_map(|m| match m {
            StreamMessage::Event {
                event: SessionEvent::RunProgress(p),
                ..
            } => Some(p.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(progress.len() as u64, 1 + 2 * phases);
    // Phase k is running in event 1+2k and done in event 2+2k, in order.
    for k in 0..phases as usize {
        assert_eq!(progress[1 + 2 * k].phases[k].status, PhaseStatus::Running);
        assert_eq!(progress[2 + 2 * k].phases[k].status, PhaseStatus::Done);
        assert!(!progress[2 + 2 * k].phases[k].found.is_empty());
    }
    let last = progress.last().unwrap();
    assert_eq!(last.status, RunStatus::Finished);
    assert!(last.summary.as_deref().is_some_and(|s| !s.contains("[[")));
}

/// A closed websocket leaves no channel behind in the hub, even when the session never
/// gets another event (a channel used to live until the next publish, so every
/// session ever watched kept its buffers for the life of the process).
#[tokio::test]
async fn a_closed_socket_frees_the_sessions_channels() {
    let app = spawn_app().await;
    let (token, owner) = app.login("duena@demo.luna.mx").await;
    let session = app.engine.sessions.create(&owner).await.unwrap().id;
    app.engine
        .sessions
        .append_one(&session, message(1))
        .await
        .unwrap();
    let mut socket = app.connect(Some(&token), &session, 0).await.unwrap();
    read_until(&mut socket, 1).await;
    let hub = app.engine.sessions.hub();
    assert_eq!((hub.channel_count(), hub.live_count()), (1, 1));

    socket.close(None).await.unwrap();
    drop(socket);
    let mut freed = false;
    for _ in 0..50 {
        if (hub.channel_count(), hub.live_count()) == (0, 0) {
            freed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        freed,
        "channels left after the socket closed: {} event, {} reasoning",
        hub.channel_count(),
        hub.live_count()
    );
}
