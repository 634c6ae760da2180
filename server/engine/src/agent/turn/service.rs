//! The turn API (CONTRACT §7): submit a message to a session. The same Idempotency-Key
//! returns the same turn; a message while a turn runs is steering, not a second turn,
//! and so is a message while a research run runs (the run picks it up at its next phase).
//! A session runs one turn at a time, held by the database (a unique index over its
//! running turn): two messages racing start one turn, the other steers it.
//! Accepted turns run in the background and report through the session log; while one
//! runs its process bumps a heartbeat, and [`close_interrupted`] closes the turns of a
//! process that died (a crash, a deploy) so no session waits on them forever.

use std::sync::Arc;
use std::time::Duration;

use luna_protocol::error::ErrorCode;
use luna_protocol::event::{SessionEvent, UserMessage};
use sqlx::Row;

use crate::accounts::Caller;
use crate::base::clock::now_ms;
use crate::base::error::{EngineError, EngineResult};
use crate::base::ids::new_id;
use crate::Engine;

use super::plan::{self, Next, PlanBrief};
use super::runner::run_turn_in;
use crate::agent::contract::gateway::ModelGateway;

/// By default, a running turn silent for this long belongs to a process that died
/// (`Engine::turn_stale`); it says it is alive six times as often.
pub const STALE_AFTER_MS: i64 = 60_000;

/// Longest message a person may send.
pub const MAX_MESSAGE_CHARS: usize = 4_000;

pub use luna_protocol::session::TurnAck;

/// Submits `message`. Returns at once; the turn's events stream over the websocket.
pub async fn submit(
    engine: &Engine,
    model: Arc<dyn ModelGateway>,
    caller: &Caller,
    session_id: &str,
    message: &str,
    idempotency_key: &str,
) -> EngineResult<TurnAck> {
    let message = message.trim();
    if message.is_empty() || message.chars().count() > MAX_MESSAGE_CHARS {
        return Err(EngineError::typed(
            ErrorCode::InvalidArgument,
            "El mensaje está vacío o es demasiado largo.",
            format!("Escribe entre 1 y {MAX_MESSAGE_CHARS} caracteres."),
        ));
    }
    let key = idempotency_key.trim();
    if key.is_empty() || key.len() > 200 {
        return Err(EngineError::typed(
            ErrorCode::InvalidArgument,
            "Falta la clave de idempotencia del mensaje.",
            "Envía una Idempotency-Key única por mensaje (de 1 a 200 caracteres).",
        ));
    }
    let session = engine.sessions.get(caller, session_id).await?;
    let pool = engine.store.pool();

    if let Some(row) =
        sqlx::query("select id from turns where session_id = $1 and idempotency_key = $2")
            .bind(&session.id)
            .bind(key)
            .fetch_optional(pool)
            .await?
    {
        return Ok(TurnAck {
            turn_id: row.get("id"),
            steering: false,
        });
    }

    let snapshot = engine
        .sessions
        .snapshot_at_latest(caller, &session.id)
        .await?;
    if let Some(active) = snapshot.view.active_turn {
        // The turn may have closed since the snapshot: then the message is a turn
        // of its own.
        if let Some(ack) = steer_turn(engine, &session.id, &active, message).await? {
            return Ok(ack);
        }
    }
    // A message while a research run of this session runs is steering for its next
    // phase (seed 004 §4.8), not a new turn.
    if let Some(run_id) =
        crate::agent::research::steer(engine, caller, &session.id, message).await?
    {
        return steer(engine, &session.id, run_id, message).await;
    }

    start(engine, model, caller, &session.id, message, key, None).await
}

/// Starts a turn of `session_id` for `message` under `key` and runs it in the
/// background; `plan` is set for a turn that continues a chained request. Returns the
/// turn's id: a new one, or the one the same key started. A turn already running
/// (another message won the race) gets `message` as steering instead.
async fn start(
    engine: &Engine,
    model: Arc<dyn ModelGateway>,
    caller: &Caller,
    session_id: &str,
    message: &str,
    key: &str,
    plan: Option<(PlanBrief, i64)>,
) -> EngineResult<TurnAck> {
    let pool = engine.store.pool();
    let turn_id = new_id("turn");
    // One running turn per session is a unique index (migration 0022/0007): of two
    // submits racing here, one inserts; the other inserts nothing and returns the same
    // turn (same key) or steers the one that won.
    let mut attempts = 0;
    loop {
        let inserted = sqlx::query(
            "insert into turns (id, session_id, workspace_id, idempotency_key, message, status, created_at, heartbeat_at)
             values ($1, $2, $3, $4, $5, 'running', $6, $6) on conflict do nothing",
        )
        .bind(&turn_id)
        .bind(session_id)
        .bind(&caller.workspace_id)
        .bind(key)
        .bind(message)
        .bind(now_ms())
        .execute(pool)
        .await?;
        if inserted.rows_affected() == 1 {
            break;
        }
        let same: Option<String> = sqlx::query_scalar(
            "select id from turns where session_id = $1 and idempotency_key = $2",
        )
        .bind(session_id)
        .bind(key)
        .fetch_optional(pool)
        .await?;
        if let Some(id) = same {
            return Ok(TurnAck {
                turn_id: id,
                steering: false,
            });
        }
        let running: Option<String> =
            sqlx::query_scalar("select id from turns where session_id = $1 and status = 'running'")
                .bind(session_id)
                .fetch_optional(pool)
                .await?;
        match running {
            // A plan's next part never steers: the person is talking to Luna already.
            Some(id) if plan.is_some() => {
                return Ok(TurnAck {
                    turn_id: id,
                    steering: true,
                })
            }
            Some(id) => {
                if let Some(ack) = steer_turn(engine, session_id, &id, message).await? {
                    return Ok(ack);
                }
            }
            None => {}
        }
        // The running turn closed between the insert and the read: try again.
        attempts += 1;
        if attempts >= 3 {
            return Err(EngineError::typed(
                ErrorCode::Conflict,
                "Luna está terminando otro mensaje de esta sesión.",
                "Envía tu mensaje de nuevo en un momento.",
            ));
        }
    }

    let (engine, caller, session_id, message, id) = (
        engine.clone(),
        caller.clone(),
        session_id.to_owned(),
        message.to_owned(),
        turn_id.clone(),
    );
    tokio::spawn(async move {
        let beat = tokio::spawn(heartbeat(
            engine.store.clone(),
            id.clone(),
            engine.turn_stale / 6,
        ));
        let outcome = run_turn_in(
            &engine,
            model.as_ref(),
            &caller,
            &session_id,
            &id,
            &message,
            plan,
        )
        .await;
        beat.abort();
        let (status, route, steps) = match &outcome {
            Ok(o) => (
                "finished",
                Some(format!("{:?}", o.route).to_lowercase()),
                Some(o.steps as i64),
            ),
            Err(e) => {
                tracing::error!(error = %e, turn = %id, "turn failed");
                // Close the turn in the log so the session is not left "running".
                let closing = vec![
                    SessionEvent::NarrationDelta(luna_protocol::event::NarrationDelta {
                        turn_id: id.clone(),
                        text: "Algo falló de nuestro lado y no pude terminar. Intenta de nuevo en un momento.".into(),
                        anchors: Vec::new(),
                    }),
                    SessionEvent::TurnFinished(luna_protocol::event::TurnFinished {
                        turn_id: id.clone(),
                        intent_kind: luna_protocol::event::IntentKind::Cierre,
                    }),
                ];
                let inbox = super::steering::Inbox::unread(&id);
                if let Err(e) =
                    close_turn(&engine, &session_id, &id, closing, "failed", &inbox).await
                {
                    tracing::error!(error = %e, turn = %id, "could not close a failed turn");
                }
                ("failed", None, None)
            }
        };
        if let Err(e) = sqlx::query(
            "update turns set status = $1, route = $2, steps = $3, finished_at = $4 where id = $5",
        )
        .bind(status)
        .bind(route)
        .bind(steps)
        .bind(now_ms())
        .bind(&id)
        .execute(engine.store.pool())
        .await
        {
            tracing::error!(error = %e, turn = %id, "could not record the end of a turn");
        }
        // A card this turn offered may have been accepted already (auto mode): the
        // plan goes on.
        if outcome.is_ok() {
            if let Err(e) = resume(engine.clone(), model, caller, session_id).await {
                tracing::error!(error = %e, turn = %id, "could not continue the plan");
            }
        }
    });
    Ok(TurnAck {
        turn_id,
        steering: false,
    })
}

/// After a person resolved a card of the session: continues its chained request in
/// the background if one waits on that card (CONTRACT §7.6). The server functions
/// that resolve cards call it; the resolution itself never waits for the next turn.
pub fn continue_after(engine: &Engine, caller: &Caller, session_id: &str) {
    let (engine, caller, session_id) = (engine.clone(), caller.clone(), session_id.to_owned());
    let model = engine.model.0.clone();
    tokio::spawn(async move {
        if let Err(e) = resume(engine, model, caller, session_id).await {
            tracing::warn!(error = %e, "could not continue the plan");
        }
    });
}

/// Continues the session's chained request once the card it waits on is resolved
/// (CONTRACT §7.6): accepted, the next part runs as a new turn (its key is the card's,
/// so two resolutions start it once); declined or expired, the plan ends with a short
/// note in the chat. Called after every resolution and after every turn.
pub fn resume(
    engine: Engine,
    model: Arc<dyn ModelGateway>,
    caller: Caller,
    session_id: String,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = EngineResult<()>> + Send>> {
    // Boxed with its type spelled out: a turn's task calls this and this starts a turn.
    Box::pin(async move {
        match plan::take(&engine, &session_id).await? {
            Next::Wait => Ok(()),
            Next::Ended => {
                engine
                    .sessions
                    .append_one(
                        &session_id,
                        SessionEvent::NarrationDelta(luna_protocol::event::NarrationDelta {
                            turn_id: new_id("plan"),
                            text: "Dejé ahí lo demás de tu pedido. Si quieres retomarlo, dímelo."
                                .into(),
                            anchors: Vec::new(),
                        }),
                    )
                    .await?;
                Ok(())
            }
            Next::Continue { brief, chain } => {
                let key = format!("plan:{session_id}:{chain}");
                let message = brief.pedido.clone();
                start(
                    &engine,
                    model,
                    &caller,
                    &session_id,
                    &message,
                    &key,
                    Some((brief, chain)),
                )
                .await
                .map(|_| ())
            }
        }
    })
}

/// `message` steers the chat turn `turn_id` if it still runs: checked in the write
/// transaction of the session, which the turn's close takes too, so the message is
/// either logged before the close (and the close says it came late) or, with `None`,
/// left for a turn of its own.
async fn steer_turn(
    engine: &Engine,
    session_id: &str,
    turn_id: &str,
    message: &str,
) -> EngineResult<Option<TurnAck>> {
    let mut tx = engine.sessions.begin(session_id).await?;
    let running: Option<String> =
        sqlx::query_scalar("select id from turns where id = $1 and status = 'running'")
            .bind(turn_id)
            .fetch_optional(&mut *tx)
            .await?;
    let known: Option<String> = sqlx::query_scalar("select id from turns where id = $1")
        .bind(turn_id)
        .fetch_optional(&mut *tx)
        .await?;
    // A turn without a row is one a test drives through the runner: it runs.
    if running.is_none() && known.is_some() {
        return Ok(None);
    }
    let appended = engine
        .sessions
        .append(
            &mut tx,
            session_id,
            &SessionEvent::UserMessage(UserMessage {
                turn_id: turn_id.to_owned(),
                text: message.to_owned(),
                steering: true,
            }),
        )
        .await?;
    tx.commit().await?;
    engine.sessions.publish([appended]);
    Ok(Some(TurnAck {
        turn_id: turn_id.to_owned(),
        steering: true,
    }))
}

/// `message` steers the research run `turn_id` of the session.
async fn steer(
    engine: &Engine,
    session_id: &str,
    turn_id: String,
    message: &str,
) -> EngineResult<TurnAck> {
    engine
        .sessions
        .append_one(
            session_id,
            SessionEvent::UserMessage(UserMessage {
                turn_id: turn_id.clone(),
                text: message.to_owned(),
                steering: true,
            }),
        )
        .await?;
    Ok(TurnAck {
        turn_id,
        steering: true,
    })
}

/// Appends the events that close `turn_id` in the log and takes its row out of
/// 'running' (to `status`) in the same write transaction, so the log and the
/// one-running-turn index agree: a message before this steers the turn, one after it
/// starts the next turn. Steering in `inbox` that the loop never read is logged
/// `turn_ended` first. A turn without a row (tests driving the runner) only logs.
#[tracing::instrument(level = "trace", name = "session.append", skip_all)]
pub(crate) async fn close_turn(
    engine: &Engine,
    session_id: &str,
    turn_id: &str,
    events: Vec<SessionEvent>,
    status: &str,
    inbox: &super::steering::Inbox,
) -> EngineResult<()> {
    let mut tx = engine.sessions.begin(session_id).await?;
    let mut appended = Vec::with_capacity(events.len());
    // Steering nobody read is answered before the turn's last event.
    let late = inbox.late(&mut tx, session_id).await?;
    for event in late.iter().chain(&events) {
        appended.push(engine.sessions.append(&mut tx, session_id, event).await?);
    }
    sqlx::query(
        "update turns set status = $1, finished_at = $2 where id = $3 and status = 'running'",
    )
    .bind(status)
    .bind(now_ms())
    .bind(turn_id)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    engine.sessions.publish(appended);
    Ok(())
}

/// Bumps the turn's heartbeat until aborted (when the turn ends).
async fn heartbeat(store: crate::base::store::Store, turn_id: String, every: Duration) {
    let mut tick = tokio::time::interval(every.max(Duration::from_millis(100)));
    loop {
        tick.tick().await;
        let beat =
            sqlx::query("update turns set heartbeat_at = $1 where id = $2 and status = 'running'")
                .bind(now_ms())
                .bind(&turn_id)
                .execute(store.pool())
                .await;
        if let Err(e) = beat {
            tracing::warn!(error = %e, turn = %turn_id, "turn heartbeat failed");
        }
    }
}

/// Closes every turn still 'running' whose heartbeat is older than `silent_ms`: its
/// process died. The turn is marked failed and its session's log gets a plain message
/// and `turn.finished`, in one write transaction (a turn is closed once, whichever
/// instance sweeps first). Returns how many were closed. One instance on SQLite
/// passes 0 at start-up (nothing of its own runs yet); otherwise `Engine::turn_stale`.
pub async fn close_interrupted(engine: &Engine, silent_ms: i64) -> EngineResult<usize> {
    let cutoff = now_ms() - silent_ms;
    let stale: Vec<(String, String)> = sqlx::query_as(
        "select id, session_id from turns
          where status = 'running' and coalesce(heartbeat_at, created_at) <= $1",
    )
    .bind(cutoff)
    .fetch_all(engine.store.pool())
    .await?;
    let mut closed = 0;
    for (turn_id, session_id) in stale {
        let mut tx = engine.sessions.begin(&session_id).await?;
        let won = sqlx::query(
            "update turns set status = 'failed', finished_at = $1
              where id = $2 and status = 'running' and coalesce(heartbeat_at, created_at) <= $3",
        )
        .bind(now_ms())
        .bind(&turn_id)
        .bind(cutoff)
        .execute(&mut *tx)
        .await?
        .rows_affected()
            == 1;
        if !won {
            continue;
        }
        let mut appended = Vec::new();
        for event in [
            SessionEvent::NarrationDelta(luna_protocol::event::NarrationDelta {
                turn_id: turn_id.clone(),
                text: "Me interrumpí antes de terminar: el servidor se reinició. Vuelve a enviar tu mensaje si aún lo necesitas.".into(),
                anchors: Vec::new(),
            }),
            SessionEvent::TurnFinished(luna_protocol::event::TurnFinished {
                turn_id: turn_id.clone(),
                intent_kind: luna_protocol::event::IntentKind::Cierre,
            }),
        ] {
            appended.push(engine.sessions.append(&mut tx, &session_id, &event).await?);
        }
        tx.commit().await?;
        engine.sessions.publish(appended);
        tracing::warn!(turn = %turn_id, session = %session_id, "closed a turn whose process died");
        closed += 1;
    }
    Ok(closed)
}
