//! SQL for work sessions: the session row, the event log and snapshots. Every query
//! of this aggregate lives here; callers above pass the transaction or the pool.

use crate::base::store::{Conn, Outcome, Statement};
use luna_protocol::event::{SessionEvent, StoredEvent};
use luna_protocol::session::{SessionBudget, SessionInfo, SessionMode, Stage};
use luna_protocol::view::SessionView;

use crate::base::clock::now_ms;
use crate::base::error::{EngineError, EngineResult};
use crate::base::store::Backend;

pub type Tx<'c> = crate::base::store::Tx<'c>;

#[derive(Debug, sqlx::FromRow)]
pub struct SessionRow {
    pub id: String,
    pub stage: String,
    pub mode: String,
    pub credit_cap: i64,
    pub contact_cap: i64,
    pub credits_spent: i64,
    pub contacts_spent: i64,
    pub last_seq: i64,
    pub created_at: i64,
}

fn count(v: i64) -> u32 {
    u32::try_from(v.max(0)).unwrap_or(u32::MAX)
}

impl SessionRow {
    pub fn into_info(self) -> EngineResult<SessionInfo> {
        let stage = Stage::parse(&self.stage)
            .ok_or_else(|| EngineError::Internal(format!("bad stage {:?}", self.stage)))?;
        let mode = SessionMode::parse(&self.mode)
            .ok_or_else(|| EngineError::Internal(format!("bad mode {:?}", self.mode)))?;
        Ok(SessionInfo {
            id: self.id,
            stage,
            mode,
            budget: SessionBudget {
                credit_cap: count(self.credit_cap),
                contact_cap: count(self.contact_cap),
                credits_spent: count(self.credits_spent),
                contacts_spent: count(self.contacts_spent),
            },
            created_at: self.created_at,
            last_seq: self.last_seq.max(0) as u64,
        })
    }
}

const SESSION_COLUMNS: &str = "id, stage, mode, credit_cap, contact_cap, \
     credits_spent, contacts_spent, last_seq, created_at";

pub async fn insert_session(
    conn: &mut Conn,
    id: &str,
    workspace_id: &str,
    user_id: &str,
) -> EngineResult<()> {
    let now = now_ms();
    sqlx::query(
        "insert into work_sessions (id, workspace_id, user_id, created_at, updated_at)
         values ($1, $2, $3, $4, $5)",
    )
    .bind(id)
    .bind(workspace_id)
    .bind(user_id)
    .bind(now)
    .bind(now)
    .execute(conn)
    .await?;
    Ok(())
}

/// The session if it belongs to `workspace_id`; another workspace's session is `None`.
pub async fn find_session(
    conn: &mut Conn,
    workspace_id: &str,
    id: &str,
) -> EngineResult<Option<SessionRow>> {
    Ok(sqlx::query_as::<_, SessionRow>(&format!(
        "select {SESSION_COLUMNS} from work_sessions where id = $1 and workspace_id = $2"
    ))
    .bind(id)
    .bind(workspace_id)
    .fetch_optional(conn)
    .await?)
}

/// The user's most recent session in the workspace.
pub async fn latest_session(
    conn: &mut Conn,
    workspace_id: &str,
    user_id: &str,
) -> EngineResult<Option<SessionRow>> {
    // Two sessions made in one millisecond: the later insert wins (`rowid` on SQLite,
    // the identity column `ord` on PostgreSQL).
    let order = match crate::base::store::backend_of(conn) {
        crate::base::store::Backend::Sqlite => "rowid",
        crate::base::store::Backend::Postgres => "ord",
    };
    Ok(sqlx::query_as::<_, SessionRow>(&format!(
        "select {SESSION_COLUMNS} from work_sessions
          where workspace_id = $1 and user_id = $2
          order by created_at desc, {order} desc limit 1"
    ))
    .bind(workspace_id)
    .bind(user_id)
    .fetch_optional(conn)
    .await?)
}

/// Appends `event` as the session's next seq in ONE statement and returns the seq
/// (`None`: no such session). The counter `work_sessions.last_seq` is claimed in the
/// same statement, so the append is atomic inside a transaction or on its own, and
/// concurrent appenders to one session queue on its row: on PostgreSQL a data-modifying
/// CTE bumps the counter (row lock), inserts the event and queues `NOTIFY` for the other
/// instances (`session::bus`, delivered at commit); on SQLite the insert reads the
/// counter under the database's write lock and the trigger `session_events_claim_seq`
/// (migration 0036) moves it. `stage` keeps the derived column in step with
/// `turn.accepted`: on SQLite that is a second statement, so the caller appends an
/// event with a stage inside a transaction ([`needs_transaction`]).
pub async fn append_event(
    conn: &mut Conn,
    session_id: &str,
    event: &SessionEvent,
    stage: Option<Stage>,
) -> EngineResult<Option<u64>> {
    let backend = crate::base::store::backend_of(conn);
    let mut seq = None;
    for (i, statement) in append_statements(backend, session_id, event, stage)?
        .iter()
        .enumerate()
    {
        let outcome = statement.run(&mut *conn).await?;
        if i == 0 {
            seq = appended_seq(&outcome)?;
            if seq.is_none() {
                break;
            }
        }
    }
    Ok(seq)
}

/// The statements of [`append_event`] on `backend`, to run in order (or send in one
/// [`crate::base::store::WriteBatch`]); the first one answers the seq
/// ([`appended_seq`]).
pub fn append_statements(
    backend: Backend,
    session_id: &str,
    event: &SessionEvent,
    stage: Option<Stage>,
) -> EngineResult<Vec<Statement>> {
    let payload = serde_json::to_string(event)
        .map_err(|e| EngineError::Internal(format!("event json: {e}")))?;
    let now = now_ms();
    Ok(match backend {
        Backend::Postgres => vec![Statement::new(format!(
            "with claimed as (
                 update work_sessions
                    set last_seq = last_seq + 1, stage = coalesce($5, stage), updated_at = $4
                  where id = $1
              returning id, last_seq
             ), appended as (
                 insert into session_events (session_id, seq, kind, payload, created_at)
                 select id, last_seq, $2, $3, $4 from claimed
              returning seq
             )
             select seq, cast(pg_notify('{channel}', $1 || ' ' || seq) as text) from appended",
            channel = super::bus::CHANNEL
        ))
        .bind(session_id)
        .bind(event.kind())
        .bind(payload)
        .bind(now)
        .bind(stage.map(Stage::as_str))],
        Backend::Sqlite => {
            let insert = Statement::new(
                "insert into session_events (session_id, seq, kind, payload, created_at)
                 select id, last_seq + 1, $2, $3, $4 from work_sessions where id = $1
                 returning seq",
            )
            .bind(session_id)
            .bind(event.kind())
            .bind(payload)
            .bind(now);
            match stage {
                None => vec![insert],
                Some(stage) => vec![
                    insert,
                    Statement::new("update work_sessions set stage = $1 where id = $2")
                        .bind(stage.as_str())
                        .bind(session_id),
                ],
            }
        }
    })
}

/// The seq the first statement of [`append_statements`] answered (`None`: no such
/// session).
pub fn appended_seq(outcome: &Outcome) -> EngineResult<Option<u64>> {
    match outcome.rows.first() {
        Some(row) => {
            let seq: i64 = sqlx::Row::try_get(row, 0)?;
            Ok(Some(seq as u64))
        }
        None => Ok(None),
    }
}

/// True when appending an event with this `stage` takes more than one statement on
/// this backend (see [`append_event`]), so it must run inside a transaction.
pub fn needs_transaction(backend: Backend, stage: Option<Stage>) -> bool {
    backend == Backend::Sqlite && stage.is_some()
}

/// The newest seq of a session (0 when it has none or does not exist).
pub async fn last_seq(conn: &mut Conn, session_id: &str) -> EngineResult<u64> {
    let seq: Option<i64> = sqlx::query_scalar("select last_seq from work_sessions where id = $1")
        .bind(session_id)
        .fetch_optional(conn)
        .await?;
    Ok(seq.unwrap_or(0).max(0) as u64)
}

/// Events with `seq > since`, in order (at most `limit`).
pub async fn events_after(
    conn: &mut Conn,
    session_id: &str,
    since: u64,
    limit: u64,
) -> EngineResult<Vec<StoredEvent>> {
    let rows: Vec<(i64, String)> = sqlx::query_as(
        "select seq, payload from session_events
          where session_id = $1 and seq > $2 order by seq limit $3",
    )
    .bind(session_id)
    .bind(since.min(i64::MAX as u64) as i64)
    .bind(limit.min(i64::MAX as u64) as i64)
    .fetch_all(conn)
    .await?;
    rows.into_iter()
        .map(|(seq, payload)| {
            let event = serde_json::from_str(&payload).map_err(|e| {
                EngineError::Internal(format!("stored event {session_id}#{seq}: {e}"))
            })?;
            Ok(StoredEvent {
                seq: seq as u64,
                event,
            })
        })
        .collect()
}

/// The newest snapshot at or before `at_most`, if any.
pub async fn snapshot_before(
    conn: &mut Conn,
    session_id: &str,
    at_most: u64,
) -> EngineResult<Option<(u64, SessionView)>> {
    let row: Option<(i64, String)> = sqlx::query_as(
        "select seq, view from session_snapshots
          where session_id = $1 and seq <= $2 order by seq desc limit 1",
    )
    .bind(session_id)
    .bind(at_most.min(i64::MAX as u64) as i64)
    .fetch_optional(conn)
    .await?;
    row.map(|(seq, view)| {
        let view = serde_json::from_str(&view)
            .map_err(|e| EngineError::Internal(format!("snapshot {session_id}@{seq}: {e}")))?;
        Ok((seq as u64, view))
    })
    .transpose()
}

pub async fn insert_snapshot(
    conn: &mut Conn,
    session_id: &str,
    seq: u64,
    view: &SessionView,
) -> EngineResult<()> {
    let json = serde_json::to_string(view)
        .map_err(|e| EngineError::Internal(format!("snapshot json: {e}")))?;
    sqlx::query(
        "insert into session_snapshots (session_id, seq, view, created_at) values ($1, $2, $3, $4)
         on conflict (session_id, seq) do nothing",
    )
    .bind(session_id)
    .bind(seq as i64)
    .bind(json)
    .bind(now_ms())
    .execute(conn)
    .await?;
    Ok(())
}
