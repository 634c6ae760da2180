//! Store tests of the work session: scoping, gap-free seqs under concurrency,
//! atomic appends, snapshots and resuming from every `since` point.

use luna_protocol::event::{NarrationDelta, SessionEvent, StoredEvent, TurnAccepted, UserMessage};
use luna_protocol::session::Stage;
use luna_protocol::stream::{Replica, StreamMessage};
use luna_protocol::view::{fold, SessionView};

use super::*;
use crate::accounts::Accounts;
use crate::demo::{seed_if_empty, DEMO_PASSWORD};

const RECORDED: &str = include_str!("../../../../app/protocol/tests/golden/scene.events.json");

async fn engine_with_callers() -> (Sessions, Caller, Caller, Caller) {
    let store = Store::open_temp().await.unwrap();
    let accounts = Accounts::new(store.clone());
    seed_if_empty(&accounts).await.unwrap();
    let login = |email: &'static str| {
        let accounts = accounts.clone();
        async move {
            accounts
                .login(email, DEMO_PASSWORD, crate::accounts::ClientIp::LOCAL)
                .await
                .unwrap()
                .1
        }
    };
    let owner = login("duena@demo.luna.mx").await;
    let member = login("ventas@demo.luna.mx").await;
    let outsider = login("explorer@demo.luna.mx").await;
    (Sessions::new(store), owner, member, outsider)
}

fn message(i: usize) -> SessionEvent {
    SessionEvent::UserMessage(UserMessage {
        turn_id: format!("turn_{i}"),
        text: format!("mensaje {i}"),
        steering: false,
    })
}

/// The recorded scene, repeated until the log is longer than two snapshot periods.
fn long_session() -> Vec<SessionEvent> {
    let scene: Vec<StoredEvent> = serde_json::from_str(RECORDED).unwrap();
    scene
        .iter()
        .cycle()
        .take(scene.len() * 5)
        .map(|e| e.event.clone())
        .collect()
}

#[tokio::test]
async fn members_of_the_workspace_read_a_session_and_other_workspaces_get_not_found() {
    let (sessions, owner, member, outsider) = engine_with_callers().await;
    let info = sessions.create(&owner).await.unwrap();
    assert_eq!(info.last_seq, 0);
    assert_eq!(info.stage, Stage::SinCriterio);
    assert_eq!(info.budget.credit_cap, 50);
    assert_eq!(sessions.get(&member, &info.id).await.unwrap().id, info.id);

    use luna_protocol::error::ErrorCode::{self, NotFound};
    fn code<T>(r: EngineResult<T>) -> ErrorCode {
        r.map(|_| ()).unwrap_err().code()
    }
    assert_eq!(code(sessions.get(&outsider, &info.id).await), NotFound);
    assert_eq!(
        code(sessions.events_since(&outsider, &info.id, 0).await),
        NotFound
    );
    assert_eq!(
        code(sessions.snapshot_at_latest(&outsider, &info.id).await),
        NotFound
    );
    assert_eq!(
        code(sessions.subscribe(&outsider, &info.id).await),
        NotFound
    );
    assert_eq!(code(sessions.get(&owner, "ses_nope").await), NotFound);
}

#[tokio::test]
async fn latest_returns_the_callers_newest_session_only() {
    let (sessions, owner, member, _) = engine_with_callers().await;
    assert_eq!(sessions.latest(&owner).await.unwrap(), None);
    let _first = sessions.create(&owner).await.unwrap();
    let second = sessions.create(&owner).await.unwrap();
    let _theirs = sessions.create(&member).await.unwrap();
    assert_eq!(
        sessions.latest(&owner).await.unwrap().unwrap().id,
        second.id
    );
}

#[tokio::test]
async fn concurrent_appends_get_gap_free_unique_seqs() {
    let (sessions, owner, _, _) = engine_with_callers().await;
    let id = sessions.create(&owner).await.unwrap().id;
    let mut tasks = Vec::new();
    for w in 0..8 {
        let (sessions, id) = (sessions.clone(), id.clone());
        tasks.push(tokio::spawn(async move {
            let mut seqs = Vec::new();
            for i in 0..25 {
                seqs.push(
                    sessions
                        .append_one(&id, message(w * 100 + i))
                        .await
                        .unwrap()
                        .seq,
                );
            }
            seqs
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        let seqs = t.await.unwrap();
        // Each writer sees its own appends in increasing order.
        assert!(seqs.windows(2).all(|w| w[0] < w[1]));
        all.extend(seqs);
    }
    all.sort_unstable();
    assert_eq!(all, (1..=200).collect::<Vec<u64>>());
    let log = sessions.events_since(&owner, &id, 0).await.unwrap();
    assert_eq!(
        log.iter().map(|e| e.seq).collect::<Vec<_>>(),
        (1..=200).collect::<Vec<u64>>()
    );
    assert_eq!(sessions.get(&owner, &id).await.unwrap().last_seq, 200);
}

#[tokio::test]
async fn a_rolled_back_append_leaves_no_gap_and_publishes_nothing() {
    let (sessions, owner, _, _) = engine_with_callers().await;
    let id = sessions.create(&owner).await.unwrap().id;
    let mut live = sessions.subscribe(&owner, &id).await.unwrap();

    let mut tx = sessions.begin(&id).await.unwrap();
    let dropped = sessions.append(&mut tx, &id, &message(1)).await.unwrap();
    assert_eq!(dropped.event.seq, 1);
    tx.rollback().await.unwrap();

    let kept = sessions.append_one(&id, message(2)).await.unwrap();
    assert_eq!(kept.seq, 1);
    let got = live.recv().await.unwrap();
    assert_eq!(got, kept);
    assert!(live.try_recv().is_err());
}

#[tokio::test]
async fn append_updates_the_derived_stage_in_the_same_transaction() {
    let (sessions, owner, _, _) = engine_with_callers().await;
    let id = sessions.create(&owner).await.unwrap().id;
    let accepted = SessionEvent::TurnAccepted(TurnAccepted {
        turn_id: "turn_1".into(),
        stage: Stage::ConSeleccion,
    });
    sessions.append_one(&id, accepted).await.unwrap();
    assert_eq!(
        sessions.get(&owner, &id).await.unwrap().stage,
        Stage::ConSeleccion
    );
}

#[tokio::test]
async fn malformed_events_and_unknown_sessions_are_refused() {
    let (sessions, owner, _, _) = engine_with_callers().await;
    let id = sessions.create(&owner).await.unwrap().id;
    let raw = SessionEvent::NarrationDelta(NarrationDelta::new("t").text("hay [[record:x]]"));
    assert!(sessions.append_one(&id, raw).await.is_err());
    assert!(sessions
        .append_one("ses_missing", message(1))
        .await
        .is_err());
    assert_eq!(sessions.get(&owner, &id).await.unwrap().last_seq, 0);
}

#[tokio::test]
async fn snapshots_are_cached_and_resuming_from_every_since_point_matches_the_full_fold() {
    let (sessions, owner, _, _) = engine_with_callers().await;
    let id = sessions.create(&owner).await.unwrap().id;
    let events = long_session();
    // Append in a few transactions of different sizes.
    for chunk in events.chunks(17) {
        sessions.append_all(&id, chunk).await.unwrap();
    }
    let log = sessions.events_since(&owner, &id, 0).await.unwrap();
    assert_eq!(log.len(), events.len());
    let mut full = SessionView::default();
    fold(&mut full, &log);

    let cached: i64 =
        sqlx::query_scalar("select count(*) from session_snapshots where session_id = $1")
            .bind(&id)
            .fetch_one(sessions.store.pool())
            .await
            .unwrap();
    assert_eq!(cached as u64, events.len() as u64 / SNAPSHOT_EVERY);

    let latest = sessions.snapshot_at_latest(&owner, &id).await.unwrap();
    assert_eq!(latest.seq, events.len() as u64);
    assert_eq!(latest.view, full);

    for k in 0..=log.len() {
        let mut start = SessionView::default();
        fold(&mut start, &log[..k]);
        let mut replica = Replica::new(k as u64, start);
        for e in sessions.events_since(&owner, &id, k as u64).await.unwrap() {
            let msg = StreamMessage::Event {
                seq: e.seq,
                event: e.event,
            };
            assert_eq!(replica.receive(&msg), Ok(true), "since={k}");
        }
        assert_eq!(replica.view, full, "since={k}");
    }
}

#[tokio::test]
async fn the_hub_drops_a_channel_nobody_listens_to() {
    let (sessions, owner, _, _) = engine_with_callers().await;
    let id = sessions.create(&owner).await.unwrap().id;
    let live = sessions.subscribe(&owner, &id).await.unwrap();
    assert_eq!(sessions.hub().channel_count(), 1);
    drop(live);
    sessions.append_one(&id, message(1)).await.unwrap();
    assert_eq!(sessions.hub().channel_count(), 0);
}

/// Two app instances on one PostgreSQL database: a follower on instance A receives,
/// live, the events instance B appends (through NOTIFY), each once and in order. On
/// SQLite (one process by design) there is no second instance to test.
/// Live reasoning of a turn running on instance B reaches a browser on instance A,
/// in order, and A's own reasoning reaches its watchers once.
#[tokio::test]
#[ignore = "needs PostgreSQL: .ci/test runs it with LUNA_TEST_DATABASE_URL (.ci/postgres)"]
async fn pg_only_reasoning_on_one_instance_reaches_watchers_on_another() {
    use luna_protocol::event::NarrationDelta;
    use luna_protocol::stream::{StreamMessage, Thinking};
    let (a, owner, _, _) = engine_with_callers().await;
    if a.store.backend() != crate::base::store::Backend::Postgres {
        panic!("this test needs PostgreSQL: run it with LUNA_TEST_DATABASE_URL=postgres://… (.ci/postgres)");
    }
    let b = Sessions::new(Store::open(a.store.url()).await.unwrap());
    let la = tokio::spawn(bus::listen(a.clone(), a.store.url().to_string()));
    let lb = tokio::spawn(bus::listen(b.clone(), a.store.url().to_string()));
    let id = a.create(&owner).await.unwrap().id;
    let mut watching = a.hub().subscribe_live(&id);
    let piece = |text: &str| {
        StreamMessage::Thinking(Thinking {
            turn_id: "turn_b".into(),
            text: text.into(),
        })
    };
    let text_of = |frame: StreamMessage| match frame {
        StreamMessage::Thinking(t) => (t.turn_id, t.text),
        StreamMessage::Narrating(n) => (n.turn_id, n.text),
        other => panic!("an event on the live channel: {other:?}"),
    };
    let wait = std::time::Duration::from_millis(300);
    // Until both listeners are live: B thinks probes until A hears one.
    let started = std::time::Instant::now();
    while tokio::time::timeout(wait, watching.recv()).await.is_err() {
        b.hub().live(&id, piece("…"));
        assert!(
            started.elapsed().as_secs() < 20,
            "A never heard B's reasoning"
        );
    }
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    while watching.try_recv().is_ok() {}
    for text in ["Busco ", "proveedores ", "en Jalisco"] {
        b.hub().live(&id, piece(text));
    }
    // The narration being written travels the same way.
    b.hub().live(
        &id,
        StreamMessage::Narrating(NarrationDelta {
            turn_id: "turn_b".into(),
            text: "Listo.".into(),
            anchors: Vec::new(),
        }),
    );
    let mut heard = String::new();
    for _ in 0..4 {
        let frame = tokio::time::timeout(std::time::Duration::from_secs(5), watching.recv())
            .await
            .expect("A's watcher got B's live frames")
            .unwrap();
        let (turn, text) = text_of(frame);
        assert_eq!(turn, "turn_b");
        heard.push_str(&text);
    }
    assert_eq!(
        heard, "Busco proveedores en JaliscoListo.",
        "in order, each once"
    );
    // A's own reasoning: once, not again through the bus.
    a.hub().live(&id, piece("propio"));
    assert_eq!(text_of(watching.recv().await.unwrap()).1, "propio");
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(watching.try_recv().is_err(), "a piece was delivered twice");
    la.abort();
    lb.abort();
}

#[tokio::test]
#[ignore = "needs PostgreSQL: .ci/test runs it with LUNA_TEST_DATABASE_URL (.ci/postgres)"]
async fn pg_only_a_follower_on_one_instance_gets_what_another_instance_appends() {
    let (a, owner, _, _) = engine_with_callers().await;
    if a.store.backend() != crate::base::store::Backend::Postgres {
        panic!("this test needs PostgreSQL: run it with LUNA_TEST_DATABASE_URL=postgres://… (.ci/postgres)");
    }
    let b = Sessions::new(Store::open(a.store.url()).await.unwrap());
    let listener = tokio::spawn(bus::listen(a.clone(), a.store.url().to_string()));
    let id = b.create(&owner).await.unwrap().id;
    b.append_one(&id, message(0)).await.unwrap();
    let mut live = a.subscribe(&owner, &id).await.unwrap();
    // Wait until A's listener is live: B appends probes until A hears one, then let
    // whatever is still in flight arrive.
    let started = std::time::Instant::now();
    let last = loop {
        let probe = b.append_one(&id, message(100)).await.unwrap().seq;
        let heard = tokio::time::timeout(std::time::Duration::from_millis(300), live.recv()).await;
        if heard.is_ok() {
            break probe;
        }
        assert!(
            started.elapsed().as_secs() < 20,
            "instance A never heard of B's appends"
        );
    };
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    while live.try_recv().is_ok() {}
    for i in 1..=3 {
        b.append_one(&id, message(i)).await.unwrap();
    }
    let mut seqs = Vec::new();
    while seqs.len() < 3 {
        let e = tokio::time::timeout(std::time::Duration::from_secs(5), live.recv())
            .await
            .expect("instance A never heard of B's append")
            .unwrap();
        seqs.push(e.seq);
    }
    assert_eq!(
        seqs,
        vec![last + 1, last + 2, last + 3],
        "each once, in order"
    );
    // A's own appends reach its followers once, not again through the bus.
    a.append_one(&id, message(9)).await.unwrap();
    let own = live.recv().await.unwrap();
    assert_eq!(own.seq, last + 4);
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(live.try_recv().is_err(), "an event was delivered twice");
    listener.abort();
}
