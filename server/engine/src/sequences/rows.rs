//! SQL for sequences: drafts, authorizations, the frozen audience, the send log and
//! replies. Every query of this aggregate lives here (the suppression list: `suppressions`).

use crate::base::store::Conn;

use crate::base::clock::now_ms;
use crate::base::error::{EngineError, EngineResult};
use crate::base::stored::{self, text_enum};

use super::model::{Audience, Recipient, Sequence, Status, Step};

fn json(v: &impl serde::Serialize) -> EngineResult<String> {
    serde_json::to_string(v).map_err(EngineError::internal)
}

const COLS: &str =
    "id, workspace_id, session_id, name, audience, steps, sender, status, version, activated_at";

/// `sequences` as stored (`COLS`); [`Sequence`] is it decoded.
#[derive(sqlx::FromRow)]
struct StoredSequence {
    id: String,
    workspace_id: String,
    session_id: Option<String>,
    name: String,
    audience: String,
    steps: String,
    sender: String,
    status: String,
    version: i64,
    activated_at: Option<i64>,
}

impl TryFrom<StoredSequence> for Sequence {
    type Error = EngineError;

    fn try_from(r: StoredSequence) -> EngineResult<Sequence> {
        Ok(Sequence {
            audience: stored::json::<Audience>("sequences.audience", &r.audience)?,
            steps: stored::json::<Vec<Step>>("sequences.steps", &r.steps)?,
            status: stored::parse("sequences.status", &r.status, Status::parse)?,
            id: r.id,
            workspace_id: r.workspace_id,
            session_id: r.session_id,
            name: r.name,
            sender: r.sender,
            version: r.version,
            activated_at: r.activated_at,
        })
    }
}

text_enum! {
    /// Where one scheduled step to one recipient stands (`sequence_sends.status`).
    pub enum SendStatus {
        Pending = "pending",
        /// Claimed by a dispatcher.
        Sending = "sending",
        Sent = "sent",
        Failed = "failed",
        Suppressed = "suppressed",
        /// Will never go out (the recipient unsubscribed, bounced or replied).
        Cancelled = "cancelled",
        /// Voided by an edit after authorization (rescheduled under the new version).
        Blocked = "blocked",
        /// A dispatcher stopped mid-send: never retried.
        Unknown = "unknown",
    }
}

pub struct NewSequence<'a> {
    pub id: &'a str,
    pub workspace_id: &'a str,
    pub session_id: Option<&'a str>,
    pub name: &'a str,
    pub audience: &'a Audience,
    pub steps: &'a [Step],
    pub sender: &'a str,
    pub created_by: &'a str,
}

pub async fn insert(conn: &mut Conn, s: &NewSequence<'_>) -> EngineResult<()> {
    let now = now_ms();
    sqlx::query(
        "insert into sequences (id, workspace_id, session_id, name, collection_id, audience, steps,
                                sender, created_by, created_at, updated_at)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
    )
    .bind(s.id)
    .bind(s.workspace_id)
    .bind(s.session_id)
    .bind(s.name)
    .bind(&s.audience.collection_id)
    .bind(json(s.audience)?)
    .bind(json(&s.steps)?)
    .bind(s.sender)
    .bind(s.created_by)
    .bind(now)
    .bind(now)
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn find(conn: &mut Conn, workspace_id: &str, id: &str) -> EngineResult<Option<Sequence>> {
    sqlx::query_as::<_, StoredSequence>(&format!(
        "select {COLS} from sequences where id = $1 and workspace_id = $2"
    ))
    .bind(id.trim().trim_start_matches("sequence:"))
    .bind(workspace_id)
    .fetch_optional(conn)
    .await?
    .map(Sequence::try_from)
    .transpose()
}

pub async fn list(
    conn: &mut Conn,
    workspace_id: &str,
    status: Option<Status>,
) -> EngineResult<Vec<Sequence>> {
    sqlx::query_as::<_, StoredSequence>(&format!(
        "select {COLS} from sequences where workspace_id = $1 and ($2 is null or status = $3)
          order by updated_at desc limit 50"
    ))
    .bind(workspace_id)
    .bind(status.map(Status::as_str))
    .bind(status.map(Status::as_str))
    .fetch_all(conn)
    .await?
    .into_iter()
    .map(Sequence::try_from)
    .collect()
}

/// Stores an edit: new content, a new version, back to `borrador`. Returns false when
/// the sequence changed since `version` was read.
pub async fn update_content(
    conn: &mut Conn,
    s: &Sequence,
    expected_version: i64,
) -> EngineResult<bool> {
    let done = sqlx::query(
        "update sequences set name = $1, audience = $2, collection_id = $3, steps = $4, sender = $5,
                version = version + 1, status = 'borrador', updated_at = $6
          where id = $7 and workspace_id = $8 and version = $9",
    )
    .bind(&s.name)
    .bind(json(&s.audience)?)
    .bind(&s.audience.collection_id)
    .bind(json(&s.steps)?)
    .bind(&s.sender)
    .bind(now_ms())
    .bind(&s.id)
    .bind(&s.workspace_id)
    .bind(expected_version)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Pending sends of older versions can never go out once the content changed.
pub async fn block_stale_sends(
    conn: &mut Conn,
    sequence_id: &str,
    current_version: i64,
) -> EngineResult<u64> {
    let done = sqlx::query(
        "update sequence_sends set status = 'blocked', error = 'la secuencia cambió después de autorizarla'
          where sequence_id = $1 and version < $2 and status = 'pending'",
    )
    .bind(sequence_id)
    .bind(current_version)
    .execute(conn)
    .await?;
    Ok(done.rows_affected())
}

pub async fn activate(
    conn: &mut Conn,
    sequence_id: &str,
    version: i64,
    at: i64,
) -> EngineResult<bool> {
    let done = sqlx::query(
        "update sequences set status = 'activa', activated_at = $1, updated_at = $2
          where id = $3 and version = $4 and status = 'borrador'",
    )
    .bind(at)
    .bind(at)
    .bind(sequence_id)
    .bind(version)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

pub async fn insert_authorization(
    conn: &mut Conn,
    sequence_id: &str,
    version: i64,
    step: usize,
    fingerprint: &str,
    by: &str,
) -> EngineResult<()> {
    sqlx::query(
        "insert into sequence_authorizations (sequence_id, version, step, fingerprint, authorized_by, authorized_at)
         values ($1, $2, $3, $4, $5, $6)",
    )
    .bind(sequence_id)
    .bind(version)
    .bind(step as i64)
    .bind(fingerprint)
    .bind(by)
    .bind(now_ms())
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn authorization(
    conn: &mut Conn,
    sequence_id: &str,
    version: i64,
    step: i64,
) -> EngineResult<Option<String>> {
    Ok(sqlx::query_scalar(
        "select fingerprint from sequence_authorizations where sequence_id = $1 and version = $2 and step = $3",
    )
    .bind(sequence_id)
    .bind(version)
    .bind(step)
    .fetch_optional(conn)
    .await?)
}

pub async fn insert_audience(
    conn: &mut Conn,
    sequence_id: &str,
    version: i64,
    r: &Recipient,
) -> EngineResult<()> {
    sqlx::query(
        "insert into sequence_audience (sequence_id, version, email, record_id, vars, time_zone)
         values ($1, $2, $3, $4, $5, $6)",
    )
    .bind(sequence_id)
    .bind(version)
    .bind(&r.email)
    .bind(&r.record_id)
    .bind(json(&r.vars)?)
    .bind(&r.time_zone)
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn audience(
    conn: &mut Conn,
    sequence_id: &str,
    version: i64,
) -> EngineResult<Vec<Recipient>> {
    sqlx::query_as::<_, StoredRecipient>(
        "select email, record_id, vars, time_zone from sequence_audience
          where sequence_id = $1 and version = $2 order by email",
    )
    .bind(sequence_id)
    .bind(version)
    .fetch_all(conn)
    .await?
    .into_iter()
    .map(|r| {
        Ok(Recipient {
            vars: stored::json("sequence_audience.vars", &r.vars)?,
            email: r.email,
            record_id: r.record_id,
            time_zone: r.time_zone,
        })
    })
    .collect()
}

/// `sequence_audience` as stored; `vars` is JSON text.
#[derive(sqlx::FromRow)]
struct StoredRecipient {
    email: String,
    record_id: String,
    vars: String,
    time_zone: Option<String>,
}

/// Schedules one (step, recipient). A step that already went out (or is on its way)
/// to that person is never scheduled again; one blocked by an edit is rescheduled
/// under the new version.
#[allow(clippy::too_many_arguments)]
pub async fn insert_send(
    conn: &mut Conn,
    id: &str,
    workspace_id: &str,
    sequence_id: &str,
    version: i64,
    step: usize,
    email: &str,
    due_at: i64,
) -> EngineResult<bool> {
    let done = sqlx::query(
        "insert into sequence_sends (id, workspace_id, sequence_id, version, step, email, due_at, next_attempt_at)
         values ($1, $2, $3, $4, $5, $6, $7, $8)
         on conflict (sequence_id, step, email) do update
            set version = excluded.version, due_at = excluded.due_at,
                next_attempt_at = excluded.next_attempt_at, status = 'pending', attempts = 0,
                error = null, claimed_by = null, claimed_at = null
          where sequence_sends.status = 'blocked'",
    )
    .bind(id)
    .bind(workspace_id)
    .bind(sequence_id)
    .bind(version)
    .bind(step as i64)
    .bind(email)
    .bind(due_at)
    .bind(due_at)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// A send the dispatcher works on.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct SendRow {
    pub id: String,
    pub workspace_id: String,
    pub sequence_id: String,
    pub version: i64,
    pub step: i64,
    pub email: String,
    pub attempts: i64,
    /// The recipient's zone as authorized (`None`: the workspace's).
    pub time_zone: Option<String>,
}

/// Sends due at `now`, oldest first, with the recipient's zone.
pub async fn due(conn: &mut Conn, now: i64, limit: i64) -> EngineResult<Vec<SendRow>> {
    Ok(sqlx::query_as::<_, SendRow>(
        "select s.id, s.workspace_id, s.sequence_id, s.version, s.step, s.email, s.attempts,
                a.time_zone
           from sequence_sends s
           left join sequence_audience a
             on a.sequence_id = s.sequence_id and a.version = s.version and a.email = s.email
          where s.status = 'pending' and s.next_attempt_at <= $1
          order by s.next_attempt_at, s.id limit $2",
    )
    .bind(now)
    .bind(limit)
    .fetch_all(conn)
    .await?)
}

/// The claim: `pending` → `sending` for one dispatcher only.
pub async fn claim(conn: &mut Conn, id: &str, worker: &str, now: i64) -> EngineResult<bool> {
    let done = sqlx::query(
        "update sequence_sends set status = 'sending', claimed_by = $1, claimed_at = $2, attempts = attempts + 1
          where id = $3 and status = 'pending'",
    )
    .bind(worker)
    .bind(now)
    .bind(id)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Where a claimed send ends: sent, failed, suppressed, cancelled, blocked, or back to
/// pending. `now` is the dispatcher's clock (a sent step counts towards that day's cap).
pub async fn settle(
    conn: &mut Conn,
    id: &str,
    status: SendStatus,
    message_id: Option<&str>,
    error: Option<&str>,
    next_attempt_at: Option<i64>,
    now: i64,
) -> EngineResult<()> {
    sqlx::query(
        "update sequence_sends set status = $1, message_id = coalesce($2, message_id), error = $3,
                sent_at = case when $4 = 'sent' then $5 else sent_at end,
                next_attempt_at = coalesce($6, next_attempt_at)
          where id = $7 and status = 'sending'",
    )
    .bind(status.as_str())
    .bind(message_id)
    .bind(error)
    .bind(status.as_str())
    .bind(now)
    .bind(next_attempt_at)
    .bind(id)
    .execute(conn)
    .await?;
    Ok(())
}

/// Claims left in `sending` by a dispatcher that stopped before `before`.
pub async fn stuck(conn: &mut Conn, before: i64) -> EngineResult<Vec<String>> {
    Ok(sqlx::query_scalar(
        "select id from sequence_sends where status = 'sending' and claimed_at < $1",
    )
    .bind(before)
    .fetch_all(conn)
    .await?)
}

/// Sends of a workspace since `since` (the per-workspace rate).
pub async fn sent_since(conn: &mut Conn, workspace_id: &str, since: i64) -> EngineResult<i64> {
    Ok(sqlx::query_scalar(
        "select count(*) from sequence_sends where workspace_id = $1 and status = 'sent' and sent_at >= $2",
    )
    .bind(workspace_id)
    .bind(since)
    .fetch_one(conn)
    .await?)
}

/// Moves a pending send to `at` (the sending window's next opening).
pub async fn defer(conn: &mut Conn, id: &str, at: i64) -> EngineResult<()> {
    sqlx::query(
        "update sequence_sends set next_attempt_at = $1 where id = $2 and status = 'pending'",
    )
    .bind(at)
    .bind(id)
    .execute(conn)
    .await?;
    Ok(())
}

/// Steps a workspace sent (or is sending) since `since`, per sequence sender: the
/// daily cap adds them up per mailbox.
pub async fn sent_by_sender_since(
    conn: &mut Conn,
    workspace_id: &str,
    since: i64,
) -> EngineResult<Vec<(String, i64)>> {
    Ok(sqlx::query_as::<_, (String, i64)>(
        "select q.sender, count(*) as n from sequence_sends s join sequences q on q.id = s.sequence_id
          where s.workspace_id = $1
            and ((s.status = 'sent' and s.sent_at >= $2)
                 or (s.status in ('sending', 'unknown') and s.claimed_at >= $3))
          group by q.sender",
    )
    .bind(workspace_id)
    .bind(since)
    .bind(since)
    .fetch_all(conn)
    .await?)
}

/// Per recipient with steps waiting: (email, the soonest attempt, their zone).
pub async fn next_sends(
    conn: &mut Conn,
    sequence_id: &str,
) -> EngineResult<Vec<(String, i64, Option<String>)>> {
    Ok(sqlx::query_as::<_, (String, i64, Option<String>)>(
        "select s.email, min(s.next_attempt_at) as next_at, max(a.time_zone) as time_zone
           from sequence_sends s
           left join sequence_audience a
             on a.sequence_id = s.sequence_id and a.version = s.version and a.email = s.email
          where s.sequence_id = $1 and s.status = 'pending'
          group by s.email",
    )
    .bind(sequence_id)
    .fetch_all(conn)
    .await?)
}

/// Per-recipient progress: (email, steps sent, steps pending, why the rest stopped).
pub async fn progress(
    conn: &mut Conn,
    sequence_id: &str,
) -> EngineResult<Vec<(String, i64, i64, Option<String>)>> {
    Ok(sqlx::query_as::<_, (String, i64, i64, Option<String>)>(
        "select email, sum(case when status = 'sent' then 1 else 0 end) as sent,
                sum(case when status in ('pending', 'sending') then 1 else 0 end) as waiting,
                max(case when status in ('cancelled', 'suppressed') then error end) as stopped
           from sequence_sends where sequence_id = $1 group by email order by email",
    )
    .bind(sequence_id)
    .fetch_all(conn)
    .await?)
}

/// Whether the recipient answered this sequence (`replies`).
pub async fn replied(conn: &mut Conn, sequence_id: &str, email: &str) -> EngineResult<bool> {
    let n: i64 = sqlx::query_scalar(
        "select count(*) from sequence_replies where sequence_id = $1 and email = $2",
    )
    .bind(sequence_id)
    .bind(email.trim().to_lowercase())
    .fetch_one(conn)
    .await?;
    Ok(n > 0)
}

/// A contact the workspace revealed.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct RevealedContact {
    pub company_ref: String,
    pub company_name: String,
    pub role: String,
    pub full_name: String,
    pub email: String,
}

/// Revealed contacts of the workspace. Read here because a sequence's audience is
/// made of them.
pub async fn revealed_contacts(
    conn: &mut Conn,
    workspace_id: &str,
) -> EngineResult<Vec<RevealedContact>> {
    Ok(sqlx::query_as::<_, RevealedContact>(
        "select company_ref, company_name, role, full_name, email from people_reveals
          where workspace_id = $1 order by revealed_at, person_id",
    )
    .bind(workspace_id)
    .fetch_all(conn)
    .await?)
}

/// Whether an older version of the sequence was authorized (an edit since voided it).
pub async fn authorized_before(
    conn: &mut Conn,
    sequence_id: &str,
    version: i64,
) -> EngineResult<bool> {
    let n: i64 = sqlx::query_scalar(
        "select count(*) from sequence_authorizations where sequence_id = $1 and version < $2",
    )
    .bind(sequence_id)
    .bind(version)
    .fetch_one(conn)
    .await?;
    Ok(n > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_send_status_round_trips_and_unknown_text_is_an_error() {
        stored::assert_round_trips::<SendStatus>();
    }
}
