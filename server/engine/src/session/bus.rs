//! Fan-out between app instances sharing one PostgreSQL database. Appending an event
//! also sends `NOTIFY luna_events, '<session> <seq>'` in the same statement
//! (`rows::append_event`), so it is delivered only if the append commits, after it is
//! visible. Every instance
//! listens ([`listen`]); for a session someone on this instance follows, it reads the
//! events it has not carried yet from the log and hands them to the local hub. The
//! log stays the source of truth: a lost notification (a reconnect) is made good by
//! catching up every followed session, and the websocket drops seqs it already sent.
//! Live frames (a streaming model's `thinking` and the `narrating` it is writing),
//! never stored, travel the same way on their own channel (`luna_live`), best effort:
//! a frame is dropped rather than delayed.
//! SQLite is one process by design and needs none of this.

use std::time::Duration;

use sqlx::postgres::PgListener;

use super::{rows, Sessions, PAGE};
use crate::base::error::EngineResult;

/// The channel every instance listens on.
pub(super) const CHANNEL: &str = "luna_events";
/// Live frames relayed between instances: `{"o": origin, "s": session, "m": frame}`.
const LIVE: &str = "luna_live";
/// PostgreSQL refuses payloads of 8000 bytes or more; a longer frame is not relayed.
const MAX_PAYLOAD: usize = 7_900;

/// Follows the other instances' appends until the process ends, reconnecting after
/// any failure. `url` is the PostgreSQL database URL the store was opened with.
pub async fn listen(sessions: Sessions, url: String) {
    let origin = crate::base::ids::random_token(12);
    tokio::spawn(relay_live(sessions.clone(), origin.clone()));
    loop {
        if let Err(e) = follow(&sessions, &url, &origin).await {
            tracing::warn!(error = %e, "event bus: listener lost, reconnecting");
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Sends this instance's live frames to the others, in order, one `NOTIFY` per frame.
async fn relay_live(sessions: Sessions, origin: String) {
    let mut frames = sessions.hub.relay_live();
    while let Some((session_id, frame)) = frames.recv().await {
        let payload = serde_json::json!({"o": origin, "s": session_id, "m": frame}).to_string();
        if payload.len() >= MAX_PAYLOAD {
            continue;
        }
        let sent = sqlx::query("select cast(pg_notify($1, $2) as text)")
            .bind(LIVE)
            .bind(payload)
            .execute(sessions.store.pool())
            .await;
        if let Err(e) = sent {
            tracing::debug!(error = %e, "event bus: a live frame was not relayed");
        }
    }
}

/// A live frame another instance relayed, for this instance's watchers.
fn receive_live(sessions: &Sessions, origin: &str, payload: &str) {
    #[derive(serde::Deserialize)]
    struct Relayed {
        o: String,
        s: String,
        m: luna_protocol::stream::StreamMessage,
    }
    let Ok(r) = serde_json::from_str::<Relayed>(payload) else {
        return;
    };
    // Only live frames travel here; an event always comes from the log.
    if r.o != origin && r.m.seq().is_none() {
        sessions.hub.live_here(&r.s, r.m);
    }
}

async fn follow(sessions: &Sessions, url: &str, origin: &str) -> EngineResult<()> {
    let mut listener = PgListener::connect(url).await?;
    listener.listen_all([CHANNEL, LIVE]).await?;
    // Whatever was appended while we were not listening.
    for session_id in sessions.hub.listened() {
        sessions.catch_up(&session_id, None).await?;
    }
    loop {
        match listener.try_recv().await? {
            Some(n) if n.channel() == LIVE => receive_live(sessions, origin, n.payload()),
            Some(n) => {
                let Some((session_id, seq)) = n.payload().split_once(' ') else {
                    continue;
                };
                let Ok(seq) = seq.parse::<u64>() else {
                    continue;
                };
                sessions.catch_up(session_id, Some(seq)).await?;
            }
            // The connection dropped; notifications may have been lost meanwhile.
            None => {
                for session_id in sessions.hub.listened() {
                    sessions.catch_up(&session_id, None).await?;
                }
            }
        }
    }
}

impl Sessions {
    /// Publishes the session's events this instance has not carried yet, if anyone
    /// here follows it. `notified` is the seq another instance announced; with nothing
    /// carried yet, reading starts just before it (a new follower read its backlog
    /// from the log already).
    pub(crate) async fn catch_up(
        &self,
        session_id: &str,
        notified: Option<u64>,
    ) -> EngineResult<()> {
        let Some(last) = self.hub.last_published(session_id) else {
            return Ok(());
        };
        // Already carried (this instance's own appends): no connection needed.
        if notified.is_some_and(|seq| seq <= last) {
            return Ok(());
        }
        let mut conn = self.store.pool().acquire().await?;
        let mut after = match notified {
            Some(seq) if last == 0 => seq - 1,
            // After a reconnect: the newest event is enough to show a follower a gap,
            // which it then fills from the log itself.
            None if last == 0 => rows::last_seq(&mut conn, session_id)
                .await?
                .saturating_sub(1),
            _ => last,
        };
        loop {
            let page = rows::events_after(&mut conn, session_id, after, PAGE).await?;
            let Some(newest) = page.last() else { break };
            after = newest.seq;
            self.hub.publish(session_id, page);
        }
        Ok(())
    }
}
