//! Work sessions (CONTRACT §2, §12): the one owner of a conversation's state.
//!
//! A session is a row (workspace, user, stage, mode, budget), an append-only event
//! log with a gap-free `seq`, and cached snapshots of the reducer's view. Board and
//! chat are never stored as tables: they are `luna_protocol::view::apply` folded over
//! the log, here for snapshots and in the browser for live updates.
//!
//! Writing: open a transaction with [`Sessions::begin`], [`Sessions::append`] the
//! events (and update any derived rows in the same transaction), commit, then
//! [`Sessions::publish`] what was appended so live subscribers see it:
//!
//! ```ignore
//! let mut tx = engine.sessions.begin(session_id).await?;
//! let a = engine.sessions.append(&mut tx, &session_id, &event).await?;
//! /* …update derived rows with `&mut *tx`… */
//! tx.commit().await?;
//! engine.sessions.publish([a]);
//! ```
//!
//! Reading is scoped to the caller's workspace: another workspace's session is
//! `NOT_FOUND`, never data.

pub mod bus;
mod follow;
mod hub;
mod rows;

use crate::base::store::Conn;
use luna_protocol::event::{SessionEvent, StoredEvent};
use luna_protocol::session::{SessionInfo, SessionSnapshot};
use luna_protocol::view::{apply, SessionView};
use tokio::sync::broadcast;

use crate::accounts::Caller;
use crate::base::error::{EngineError, EngineResult};
use crate::base::ids::new_id;
use crate::base::store::{Outcome, Scope, Store, Ticket, WriteBatch};

pub use follow::Follow;
pub use hub::Hub;
pub use rows::Tx;

/// A snapshot of the view is cached every this many events.
pub const SNAPSHOT_EVERY: u64 = 50;
/// Events read per query when folding or catching up.
const PAGE: u64 = 500;

/// An event appended inside a transaction that has not been published yet. Hand it
/// to [`Sessions::publish`] after the transaction commits.
#[derive(Debug, Clone, PartialEq)]
#[must_use = "publish appended events after the transaction commits"]
pub struct Appended {
    pub session_id: String,
    pub event: StoredEvent,
}

/// An event queued in a [`WriteBatch`] ([`Sessions::queue`]), waiting for its seq.
pub struct Queued {
    ticket: Ticket,
    session_id: String,
    event: SessionEvent,
}

/// The work-session service. Cheap to clone; clones share the fan-out hub.
#[derive(Clone, Debug)]
pub struct Sessions {
    store: Store,
    hub: Hub,
}

impl Sessions {
    pub fn new(store: Store) -> Self {
        Sessions {
            store,
            hub: Hub::default(),
        }
    }

    /// Opens a new, empty session for the caller.
    pub async fn create(&self, caller: &Caller) -> EngineResult<SessionInfo> {
        let id = new_id("ses");
        let mut conn = self.store.pool().acquire().await?;
        rows::insert_session(&mut conn, &id, &caller.workspace_id, &caller.user_id).await?;
        tracing::info!(session = %id, workspace = %caller.workspace_id, "work session created");
        self.load(&mut conn, caller, &id).await
    }

    /// The session, if the caller's workspace owns it; otherwise `NOT_FOUND`.
    pub async fn get(&self, caller: &Caller, session_id: &str) -> EngineResult<SessionInfo> {
        let mut conn = self.store.pool().acquire().await?;
        self.load(&mut conn, caller, session_id).await
    }

    /// The caller's most recent session in this workspace, so a reload returns to it.
    pub async fn latest(&self, caller: &Caller) -> EngineResult<Option<SessionInfo>> {
        let mut conn = self.store.pool().acquire().await?;
        rows::latest_session(&mut conn, &caller.workspace_id, &caller.user_id)
            .await?
            .map(rows::SessionRow::into_info)
            .transpose()
    }

    async fn load(
        &self,
        conn: &mut Conn,
        caller: &Caller,
        session_id: &str,
    ) -> EngineResult<SessionInfo> {
        rows::find_session(conn, &caller.workspace_id, session_id)
            .await?
            .ok_or_else(|| EngineError::not_found("esa sesión de trabajo"))?
            .into_info()
    }

    /// Begins the write transaction of `session_id` that `append` takes: on PostgreSQL
    /// it waits only for other writes to this session ([`Scope::Session`]), on SQLite
    /// it is the database's write lock taken up front. A transaction begun in another
    /// scope (e.g. a workspace's) may append too: `seq` is claimed with a row-locking
    /// update of the session, so it stays gap-free and unique either way.
    pub async fn begin(&self, session_id: &str) -> EngineResult<Tx<'static>> {
        self.store.begin_write_in(Scope::Session(session_id)).await
    }

    /// Begins a [`WriteBatch`] of `session_id`, locked as [`Sessions::begin`] is: for a
    /// turn step, whose events, trajectory step and telemetry row go to SQLite with the
    /// commit in one round trip.
    pub async fn begin_batch(&self, session_id: &str) -> EngineResult<WriteBatch> {
        self.store
            .begin_batch(Some(Scope::Session(session_id)))
            .await
    }

    /// Queues `event` in `batch`; its seq is known once the batch has run
    /// ([`Sessions::committed`]).
    pub async fn queue(
        &self,
        batch: &mut WriteBatch,
        session_id: &str,
        event: &SessionEvent,
    ) -> EngineResult<Queued> {
        event.validate().map_err(|e| {
            EngineError::Internal(format!("refusing to append {}: {e}", event.kind()))
        })?;
        let mut first = None;
        for statement in
            rows::append_statements(self.store.backend(), session_id, event, stage_of(event))?
        {
            let ticket = batch.push(statement).await?;
            first.get_or_insert(ticket);
        }
        Ok(Queued {
            ticket: first.ok_or_else(|| EngineError::Internal("append queued nothing".into()))?,
            session_id: session_id.to_owned(),
            event: event.clone(),
        })
    }

    /// The events `queued` in a batch that committed with `outcomes`, with their seqs.
    /// A view snapshot that falls due is cached after the commit, as for an event
    /// appended on its own: a failure is logged and a later append caches it.
    pub async fn committed(
        &self,
        outcomes: &[Outcome],
        queued: Vec<Queued>,
    ) -> EngineResult<Vec<Appended>> {
        let mut appended = Vec::with_capacity(queued.len());
        for q in queued {
            let outcome = outcomes
                .get(q.ticket.index())
                .ok_or_else(|| EngineError::Internal("queued event did not run".into()))?;
            let seq = rows::appended_seq(outcome)?
                .ok_or_else(|| EngineError::not_found("esa sesión de trabajo"))?;
            if seq % SNAPSHOT_EVERY == 0 {
                let mut conn = self.store.pool().acquire().await?;
                cache_view(&mut conn, &q.session_id, seq, Snapshot::BestEffort).await?;
            }
            appended.push(Appended {
                session_id: q.session_id,
                event: StoredEvent {
                    seq,
                    event: q.event,
                },
            });
        }
        Ok(appended)
    }

    /// Appends `event` to the session's log inside `tx` and returns it with its seq.
    /// The seq is assigned in the same transaction (gap-free, unique per session);
    /// every `SNAPSHOT_EVERY` events the view is cached. Callers have authorized the
    /// session already (e.g. with [`Sessions::get`]).
    pub async fn append(
        &self,
        tx: &mut Tx<'_>,
        session_id: &str,
        event: &SessionEvent,
    ) -> EngineResult<Appended> {
        append_in(tx, session_id, event, Snapshot::InTransaction).await
    }

    /// Hands committed events to live subscribers. Call only after the commit.
    pub fn publish(&self, appended: impl IntoIterator<Item = Appended>) {
        for a in appended {
            self.hub.publish(&a.session_id, [a.event]);
        }
    }

    /// Appends `events` atomically, commits and publishes. One event is one statement
    /// on its own (no transaction to open and commit); several share a transaction.
    #[tracing::instrument(level = "trace", name = "session.append", skip_all)]
    pub async fn append_all(
        &self,
        session_id: &str,
        events: &[SessionEvent],
    ) -> EngineResult<Vec<StoredEvent>> {
        let appended = match events {
            [event] if !rows::needs_transaction(self.store.backend(), stage_of(event)) => {
                let mut conn = self.store.pool().acquire().await?;
                vec![append_in(&mut conn, session_id, event, Snapshot::BestEffort).await?]
            }
            _ => {
                let mut tx = self.begin(session_id).await?;
                let mut appended = Vec::with_capacity(events.len());
                for event in events {
                    appended.push(
                        append_in(&mut tx, session_id, event, Snapshot::InTransaction).await?,
                    );
                }
                tx.commit().await?;
                appended
            }
        };
        let stored = appended.iter().map(|a| a.event.clone()).collect();
        self.publish(appended);
        Ok(stored)
    }

    /// Appends one event on its own, commits and publishes.
    pub async fn append_one(
        &self,
        session_id: &str,
        event: SessionEvent,
    ) -> EngineResult<StoredEvent> {
        let mut stored = self.append_all(session_id, &[event]).await?;
        stored
            .pop()
            .ok_or_else(|| EngineError::Internal("append returned nothing".into()))
    }

    /// The session's events with `seq > since`, in order.
    #[tracing::instrument(level = "trace", name = "session.read", skip_all)]
    pub async fn events_since(
        &self,
        caller: &Caller,
        session_id: &str,
        since: u64,
    ) -> EngineResult<Vec<StoredEvent>> {
        let mut conn = self.store.pool().acquire().await?;
        self.load(&mut conn, caller, session_id).await?;
        read_after(&mut conn, session_id, since).await
    }

    /// The session's events with `seq > since`, for a caller that has authorized the
    /// session already (the turn loop following its own session): no workspace check.
    #[tracing::instrument(level = "trace", name = "session.read", skip_all)]
    pub(crate) async fn tail(
        &self,
        session_id: &str,
        since: u64,
    ) -> EngineResult<Vec<StoredEvent>> {
        let mut conn = self.store.pool().acquire().await?;
        read_after(&mut conn, session_id, since).await
    }

    /// The view as of the newest event: the latest cached snapshot plus the tail.
    #[tracing::instrument(level = "trace", name = "session.snapshot", skip_all)]
    pub async fn snapshot_at_latest(
        &self,
        caller: &Caller,
        session_id: &str,
    ) -> EngineResult<SessionSnapshot> {
        let mut conn = self.store.pool().acquire().await?;
        self.load(&mut conn, caller, session_id).await?;
        let (seq, view) = fold_latest(&mut conn, session_id).await?;
        Ok(SessionSnapshot { seq, view })
    }

    /// Live events of the session, for the websocket. Subscribe BEFORE reading the
    /// backlog, then drop live events whose seq was already sent.
    pub async fn subscribe(
        &self,
        caller: &Caller,
        session_id: &str,
    ) -> EngineResult<broadcast::Receiver<StoredEvent>> {
        self.get(caller, session_id).await?;
        Ok(self.hub.subscribe(session_id))
    }

    /// Follows the session's committed events from here on (see [`Follow`]), for a
    /// caller that has authorized the session already (the turn loop). Call it before
    /// reading the state to follow from.
    pub(crate) fn follow(&self, session_id: &str) -> Follow {
        Follow::new(&self.hub, session_id)
    }

    /// The view of a session as of its newest event, for background workers that act
    /// on a session they already own (the dispatcher). Not for requests: use
    /// [`Sessions::snapshot_at_latest`], which checks the caller's workspace.
    pub async fn view_of(&self, session_id: &str) -> EngineResult<SessionView> {
        let mut conn = self.store.pool().acquire().await?;
        Ok(fold_latest(&mut conn, session_id).await?.1)
    }

    /// The fan-out hub (tests and metrics).
    pub fn hub(&self) -> &Hub {
        &self.hub
    }
}

/// The stage an event sets on the session row (`turn.accepted`'s).
fn stage_of(event: &SessionEvent) -> Option<luna_protocol::session::Stage> {
    match event {
        SessionEvent::TurnAccepted(t) => Some(t.stage),
        _ => None,
    }
}

/// How an append writes the cached view when one is due.
#[derive(Clone, Copy, PartialEq)]
enum Snapshot {
    /// In the append's transaction: a failure fails the append (and rolls it back).
    InTransaction,
    /// After a lone event committed on its own: the event is in the log whatever
    /// happens, so a failure is logged and the cache is written by a later append.
    BestEffort,
}

/// Appends `event` on `conn` (a transaction, or a connection when the append is one
/// statement, see [`rows::needs_transaction`]) and caches the view every
/// `SNAPSHOT_EVERY` events.
async fn append_in(
    conn: &mut Conn,
    session_id: &str,
    event: &SessionEvent,
    snapshot: Snapshot,
) -> EngineResult<Appended> {
    event
        .validate()
        .map_err(|e| EngineError::Internal(format!("refusing to append {}: {e}", event.kind())))?;
    let seq = rows::append_event(conn, session_id, event, stage_of(event))
        .await?
        .ok_or_else(|| EngineError::not_found("esa sesión de trabajo"))?;
    if seq % SNAPSHOT_EVERY == 0 {
        cache_view(conn, session_id, seq, snapshot).await?;
    }
    Ok(Appended {
        session_id: session_id.to_owned(),
        event: StoredEvent {
            seq,
            event: event.clone(),
        },
    })
}

/// Caches the session's view as of `seq`, the snapshot that falls due every
/// `SNAPSHOT_EVERY` events.
async fn cache_view(
    conn: &mut Conn,
    session_id: &str,
    seq: u64,
    snapshot: Snapshot,
) -> EngineResult<()> {
    let cached = async {
        let (at, view) = fold_latest(conn, session_id).await?;
        rows::insert_snapshot(conn, session_id, at, &view).await
    }
    .await;
    match (cached, snapshot) {
        (Ok(()), _) => Ok(()),
        (Err(e), Snapshot::InTransaction) => Err(e),
        (Err(e), Snapshot::BestEffort) => {
            tracing::warn!(error = %e, session = session_id, seq, "view snapshot not cached");
            Ok(())
        }
    }
}

/// Every event with `seq > since`, page by page (a short page is the last).
async fn read_after(
    conn: &mut Conn,
    session_id: &str,
    since: u64,
) -> EngineResult<Vec<StoredEvent>> {
    let mut out = Vec::new();
    let mut after = since;
    loop {
        let page = rows::events_after(conn, session_id, after, PAGE).await?;
        let Some(last) = page.last() else { break };
        after = last.seq;
        let done = (page.len() as u64) < PAGE;
        out.extend(page);
        if done {
            break;
        }
    }
    Ok(out)
}

/// Folds the newest cached snapshot and every event after it.
async fn fold_latest(conn: &mut Conn, session_id: &str) -> EngineResult<(u64, SessionView)> {
    let (mut seq, mut view) = rows::snapshot_before(conn, session_id, u64::MAX)
        .await?
        .unwrap_or_default();
    loop {
        let page = rows::events_after(conn, session_id, seq, PAGE).await?;
        let Some(last) = page.last() else { break };
        seq = last.seq;
        for e in &page {
            apply(&mut view, &e.event);
        }
        if (page.len() as u64) < PAGE {
            break;
        }
    }
    Ok((seq, view))
}

#[cfg(test)]
mod tests;
