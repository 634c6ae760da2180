//! `GET /api/sessions/{id}/events?since=<seq>`: a work session's events over a
//! websocket (CONTRACT §12). The caller comes from the session cookie (401 without one);
//! a session of another workspace is 404. The stream sends a snapshot when the client
//! is far behind, then the backlog, then live events — in `seq` order, with no gaps
//! and no duplicates, even while events are appended during the catch-up.
//!
//! A socket lives only as long as its caller's right to it: it re-checks the session
//! token and membership every `Sockets::recheck_every` and closes (1008, with the
//! reason) once the person logged out, their session expired or was revoked, or they
//! left the workspace. One person holds at most `MAX_SOCKETS_PER_USER` sockets, and a
//! client frame over `MAX_INCOMING` closes the connection (see `sockets`).

use axum::extract::rejection::ExtensionRejection;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::{close_code, CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use futures_util::{Sink, SinkExt, StreamExt};
use luna_engine::accounts::{Accounts, Caller};
use luna_engine::session::Sessions;
use luna_engine::EngineError;
use luna_protocol::error::ErrorEnvelope;
use luna_protocol::event::StoredEvent;
use luna_protocol::stream::StreamMessage;
use serde::Deserialize;
use tokio::sync::broadcast;
use tracing::Instrument;

use crate::routes::AppState;
use crate::session::SessionToken;
use crate::sockets::{SocketSlot, MAX_INCOMING};

/// A client further behind than this many events gets a snapshot instead of the log.
pub const SNAPSHOT_AFTER: u64 = 200;

/// The socket's read buffer. Clients send nothing but close and control frames, and
/// tungstenite zero-fills the whole buffer on its first read, so its 128 KiB default
/// stayed resident for every open socket (the load bench measured 205 KiB per idle
/// session with it). A larger frame still grows the buffer as needed.
pub const READ_BUFFER: usize = 4 * 1024;

#[derive(Debug, Deserialize)]
pub struct Since {
    #[serde(default)]
    pub since: u64,
}

/// The JSON error response for an engine error (5xx details stay in the logs).
pub fn error_response(err: EngineError) -> Response {
    let body = err.body();
    let status =
        StatusCode::from_u16(body.code.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (status, Json(ErrorEnvelope { error: body })).into_response()
}

/// The close reason when the caller's session or membership ended (≤ 123 bytes).
pub const SESSION_ENDED: &str = "Tu sesión terminó. Vuelve a iniciar sesión.";
/// The close reason when the re-check itself failed (the client reconnects).
const CHECK_FAILED: &str = "No pudimos verificar tu sesión. Reconectando…";

pub async fn session_events(
    State(AppState {
        engine, sockets, ..
    }): State<AppState>,
    Path(session_id): Path<String>,
    Query(Since { since }): Query<Since>,
    headers: HeaderMap,
    caller: Result<Extension<Caller>, ExtensionRejection>,
    token: Option<Extension<SessionToken>>,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Response {
    let (Ok(Extension(caller)), Some(Extension(token))) = (caller, token) else {
        return error_response(EngineError::typed(
            luna_protocol::error::ErrorCode::Unauthorized,
            SESSION_ENDED,
            "Entra de nuevo con tu correo y contraseña.",
        ));
    };
    // Before subscribing: a refused socket leaves no channels behind.
    let slot = match sockets.acquire(&caller.user_id) {
        Ok(slot) => slot,
        Err(e) => return error_response(e),
    };
    // Subscribe before the upgrade: this checks access (404 for another workspace)
    // and guarantees nothing appended from now on is missed.
    let live = match engine.sessions.subscribe(&caller, &session_id).await {
        Ok(rx) => rx,
        Err(e) => return error_response(e),
    };
    let frames = engine.sessions.hub().subscribe_live(&session_id);
    let upgrade = match upgrade {
        Ok(u) => u
            .read_buffer_size(READ_BUFFER)
            .max_frame_size(MAX_INCOMING)
            .max_message_size(MAX_INCOMING),
        Err(rejection) => return rejection.into_response(),
    };
    let request_id = headers
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("-")
        .to_owned();
    let span = tracing::info_span!(
        "session_events",
        session = %session_id,
        workspace = %caller.workspace_id,
        request_id = %request_id,
        since
    );
    let follower = Follower {
        sessions: engine.sessions.clone(),
        accounts: engine.accounts.clone(),
        caller,
        token,
        recheck_every: sockets.recheck_every,
        _slot: slot,
    };
    upgrade.on_upgrade(move |socket| {
        serve_socket(socket, follower, session_id, since, (live, frames)).instrument(span)
    })
}

/// Who follows a session over one socket, and what it needs to re-check them.
struct Follower {
    sessions: Sessions,
    accounts: Accounts,
    caller: Caller,
    token: SessionToken,
    recheck_every: std::time::Duration,
    /// Held for the socket's life: one of the user's `MAX_SOCKETS_PER_USER`.
    _slot: SocketSlot,
}

/// Why a socket ended.
enum End {
    /// The stream finished or the client went away.
    Done,
    /// The server closes it with this code and reason.
    Close(u16, &'static str),
}

async fn serve_socket(
    socket: WebSocket,
    follower: Follower,
    session_id: String,
    since: u64,
    live: Live,
) {
    let Follower {
        sessions,
        accounts,
        caller,
        token,
        recheck_every,
        _slot,
    } = follower;
    let (sender, mut receiver) = socket.split();
    // `ready` (not an async block) keeps the adapted sink `Unpin`.
    let mut sink = sender.with(|msg: StreamMessage| {
        std::future::ready(
            serde_json::to_string(&msg)
                .map(|json| Message::Text(json.into()))
                .map_err(axum::Error::new),
        )
    });
    // The client sends nothing we need; reading only tells us when it leaves (or
    // breaks the rules: a frame over `MAX_INCOMING` is an error that ends the read).
    let closed = async {
        loop {
            match receiver.next().await {
                Some(Ok(Message::Close(_))) | None => break,
                Some(Ok(_)) => {}
                Some(Err(e)) => {
                    tracing::info!(error = %e, "client broke the stream");
                    break;
                }
            }
        }
    };
    let end = tokio::select! {
        result = stream_events(&sessions, &caller, &session_id, since, live, &mut sink) => {
            if let Err(e) = result {
                tracing::warn!(error = %e, "session stream ended");
            }
            End::Done
        }
        () = closed => {
            tracing::debug!("client closed the stream");
            End::Done
        }
        end = until_access_ends(&accounts, &token, &caller, recheck_every) => end,
    };
    if let End::Close(code, reason) = end {
        tracing::info!(reason, "closing the stream");
        let frame = CloseFrame {
            code,
            reason: reason.into(),
        };
        // Best effort: the client may be gone already; dropping the socket ends it.
        let _ = sink.get_mut().send(Message::Close(Some(frame))).await;
    }
    // Both receivers are dropped now: free the session's channels if nobody else here
    // follows it (the next subscriber creates them again).
    sessions.hub().release(&session_id);
}

/// Re-checks the caller's session token and membership every `every` (through the
/// same lookup that resolved the cookie) and returns once either no longer holds.
/// A failed check closes too: the client reconnects, and the reconnect checks again.
async fn until_access_ends(
    accounts: &Accounts,
    token: &SessionToken,
    caller: &Caller,
    every: std::time::Duration,
) -> End {
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        match accounts.session_caller(token.secret()).await {
            Ok(Some(now))
                if now.user_id == caller.user_id && now.workspace_id == caller.workspace_id => {}
            Ok(_) => return End::Close(close_code::POLICY, SESSION_ENDED),
            Err(e) => {
                tracing::warn!(error = %e, "could not re-check the stream's caller");
                return End::Close(close_code::ERROR, CHECK_FAILED);
            }
        }
    }
}

/// What a socket follows: committed events, and the running turn's live frames (the
/// model's reasoning and the narration it is writing).
pub type Live = (
    broadcast::Receiver<StoredEvent>,
    broadcast::Receiver<StreamMessage>,
);

/// Why a stream stopped.
#[derive(Debug, thiserror::Error)]
pub enum StreamError {
    #[error("engine: {0}")]
    Engine(#[from] EngineError),
    #[error("the client is gone")]
    Sink,
}

/// Streams a session into `sink`: a snapshot if the client is more than
/// `SNAPSHOT_AFTER` events behind (or ahead of the log), then every event after the
/// last one sent, then live events. `live` must be subscribed before this is called.
/// A live event past a gap (a lagging receiver, a missed publish) is recovered from
/// the log, and one already sent is dropped, so the client sees each seq exactly once.
pub async fn stream_events<S>(
    sessions: &Sessions,
    caller: &Caller,
    session_id: &str,
    since: u64,
    (mut live, frames): Live,
    sink: &mut S,
) -> Result<(), StreamError>
where
    S: Sink<StreamMessage> + Unpin,
{
    let mut last = since;
    let latest = sessions.get(caller, session_id).await?.last_seq;
    if since > latest || latest - since > SNAPSHOT_AFTER {
        let snapshot = sessions.snapshot_at_latest(caller, session_id).await?;
        last = snapshot.seq;
        send(
            sink,
            StreamMessage::Snapshot {
                seq: snapshot.seq,
                view: snapshot.view,
            },
        )
        .await?;
    }
    catch_up(sessions, caller, session_id, &mut last, sink).await?;
    let mut frames = Some(frames);
    loop {
        // Committed events first; live frames are best effort and may be skipped.
        let received = tokio::select! {
            biased;
            event = live.recv() => event,
            frame = next_frame(&mut frames) => {
                match frame {
                    Ok(f) => send(sink, f).await?,
                    Err(broadcast::error::RecvError::Lagged(_)) => {}
                    Err(broadcast::error::RecvError::Closed) => frames = None,
                }
                continue;
            }
        };
        match received {
            Ok(e) if e.seq <= last => {}
            Ok(e) if e.seq == last + 1 => {
                last = e.seq;
                send(
                    sink,
                    StreamMessage::Event {
                        seq: e.seq,
                        event: e.event,
                    },
                )
                .await?;
            }
            Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {
                catch_up(sessions, caller, session_id, &mut last, sink).await?;
            }
            Err(broadcast::error::RecvError::Closed) => return Ok(()),
        }
    }
}

/// The next live frame, or never once the channel closed.
async fn next_frame(
    frames: &mut Option<broadcast::Receiver<StreamMessage>>,
) -> Result<StreamMessage, broadcast::error::RecvError> {
    match frames {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}

async fn catch_up<S>(
    sessions: &Sessions,
    caller: &Caller,
    session_id: &str,
    last: &mut u64,
    sink: &mut S,
) -> Result<(), StreamError>
where
    S: Sink<StreamMessage> + Unpin,
{
    for e in sessions.events_since(caller, session_id, *last).await? {
        *last = e.seq;
        send(
            sink,
            StreamMessage::Event {
                seq: e.seq,
                event: e.event,
            },
        )
        .await?;
    }
    Ok(())
}

async fn send<S>(sink: &mut S, msg: StreamMessage) -> Result<(), StreamError>
where
    S: Sink<StreamMessage> + Unpin,
{
    sink.send(msg).await.map_err(|_| StreamError::Sink)
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use luna_engine::demo::{seed_if_empty, DEMO_PASSWORD};
    use luna_engine::{Engine, Store};
    use luna_protocol::event::{SessionEvent, UserMessage};

    use super::*;

    fn message(i: u64) -> SessionEvent {
        SessionEvent::UserMessage(UserMessage {
            turn_id: format!("turn_{i}"),
            text: format!("Mensaje {i}"),
            steering: false,
        })
    }

    /// Live events can arrive past a gap (a missed publish) or twice; the stream
    /// recovers the gap from the log and drops what it already sent.
    #[tokio::test]
    async fn gaps_in_live_events_are_filled_from_the_log_and_duplicates_dropped() {
        let engine = Engine::from_store(Store::open_temp().await.unwrap());
        seed_if_empty(&engine.accounts).await.unwrap();
        let (_, caller) = engine
            .accounts
            .login(
                "duena@demo.luna.mx",
                DEMO_PASSWORD,
                luna_engine::accounts::ClientIp::LOCAL,
            )
            .await
            .unwrap();
        let sessions = engine.sessions.clone();
        let id = sessions.create(&caller).await.unwrap().id;
        let backlog: Vec<_> = (1..=3).map(message).collect();
        sessions.append_all(&id, &backlog).await.unwrap();

        let (tx, live) = broadcast::channel(16);
        let sent = Arc::new(Mutex::new(Vec::new()));
        let sink = futures_util::sink::unfold(
            (Some(tx), sent.clone(), sessions.clone(), id.clone()),
            |(mut tx, sent, sessions, id), msg: StreamMessage| async move {
                let seq = msg.seq().unwrap();
                sent.lock().unwrap().push(seq);
                // Once the backlog is out, append 4..=6 but only "publish" 6, then 5 again.
                if seq == 3 {
                    if let Some(sender) = tx.take() {
                        let more: Vec<_> = (4..=6).map(message).collect();
                        let stored = sessions.append_all(&id, &more).await.unwrap();
                        sender.send(stored[2].clone()).unwrap();
                        sender.send(stored[1].clone()).unwrap();
                    }
                }
                Ok::<_, std::convert::Infallible>((tx, sent, sessions, id))
            },
        );
        let mut sink = Box::pin(sink);
        let (_thinker, thoughts) = broadcast::channel(4);
        stream_events(&sessions, &caller, &id, 1, (live, thoughts), &mut sink)
            .await
            .unwrap();
        assert_eq!(*sent.lock().unwrap(), vec![2, 3, 4, 5, 6]);
    }

    #[tokio::test]
    async fn live_reasoning_is_forwarded_without_a_seq_between_committed_events() {
        let engine = luna_engine::testkit::engine().await.unwrap();
        let caller = luna_engine::testkit::caller(
            &engine,
            luna_protocol::account::Plan::Founder,
            luna_protocol::account::Role::Member,
        )
        .await
        .unwrap();
        let sessions = engine.sessions.clone();
        let id = sessions.create(&caller).await.unwrap().id;
        let (events, live) = broadcast::channel(16);
        let (thinker, thoughts) = broadcast::channel(16);
        let sent = Arc::new(Mutex::new(Vec::new()));
        let sink =
            futures_util::sink::unfold(sent.clone(), |sent, msg: StreamMessage| async move {
                sent.lock().unwrap().push(msg);
                Ok::<_, std::convert::Infallible>(sent)
            });
        let mut sink = Box::pin(sink);
        let stored = sessions.append_all(&id, &[message(1)]).await.unwrap();
        thinker
            .send(StreamMessage::Thinking(luna_protocol::stream::Thinking {
                turn_id: "turn_1".into(),
                text: "pensando…".into(),
            }))
            .unwrap();
        // Let the thought through first, then the event, then close the stream.
        let feeder = async {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            events.send(stored[0].clone()).unwrap();
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            drop(events);
        };
        let (result, ()) = tokio::join!(
            stream_events(&sessions, &caller, &id, 0, (live, thoughts), &mut sink),
            feeder
        );
        result.unwrap();
        let sent = sent.lock().unwrap();
        // The backlog (seq 1), the thought (no seq); the live copy of seq 1 is dropped.
        assert_eq!(sent.len(), 2, "{sent:?}");
        assert_eq!(sent[0].seq(), Some(1));
        assert!(matches!(&sent[1], StreamMessage::Thinking(t) if t.text == "pensando…"));
        assert_eq!(sent[1].seq(), None);
    }
}
