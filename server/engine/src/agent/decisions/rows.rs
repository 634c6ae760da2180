//! SQL for decisions and auto mode: the `decisions` table, the session's auto columns
//! and the workspace's auto policy. Every query of this aggregate lives here.

use luna_protocol::decision::{DecisionCard, DecisionKind, DecisionOutcome, DecisionResult};
use luna_protocol::session::{AutoPolicy, SessionMode};

use crate::base::store::Conn;

use crate::base::clock::now_ms;
use crate::base::error::{EngineError, EngineResult};
use crate::base::stored::{self, count, text_enum};

use super::Target;

fn to_json(v: &impl serde::Serialize) -> EngineResult<String> {
    serde_json::to_string(v).map_err(EngineError::internal)
}

text_enum! {
    /// Where a decision stands (`decisions.status`): `pending` until it leaves it once.
    pub enum DecisionStatus {
        Pending = "pending",
        Accepted = "accepted",
        Declined = "declined",
        Expired = "expired",
    }
}

impl DecisionStatus {
    /// The outcome once resolved; `None` while pending.
    pub fn outcome(self) -> Option<DecisionOutcome> {
        match self {
            DecisionStatus::Pending => None,
            DecisionStatus::Accepted => Some(DecisionOutcome::Accepted),
            DecisionStatus::Declined => Some(DecisionOutcome::Declined),
            DecisionStatus::Expired => Some(DecisionOutcome::Expired),
        }
    }

    /// The final status a resolution stores.
    pub fn of(outcome: DecisionOutcome) -> DecisionStatus {
        match outcome {
            DecisionOutcome::Accepted => DecisionStatus::Accepted,
            DecisionOutcome::Declined => DecisionStatus::Declined,
            DecisionOutcome::Expired => DecisionStatus::Expired,
        }
    }
}

/// A stored decision.
#[derive(Debug, Clone)]
pub struct DecisionRow {
    pub id: String,
    pub session_id: String,
    pub turn_id: Option<String>,
    pub kind: DecisionKind,
    pub target: Target,
    pub idempotency_key: String,
    pub expires_at: Option<i64>,
    pub status: DecisionStatus,
    pub result: Option<DecisionResult>,
    /// The fingerprint of the card as last offered (empty for cards stored before
    /// fingerprints existed).
    pub fingerprint: String,
}

impl DecisionRow {
    /// The outcome once resolved; `None` while pending.
    pub fn outcome(&self) -> Option<DecisionOutcome> {
        self.status.outcome()
    }
}

/// `decisions` as stored; [`DecisionRow`] is it decoded.
#[derive(sqlx::FromRow)]
struct StoredDecision {
    id: String,
    session_id: String,
    turn_id: Option<String>,
    kind: String,
    target: String,
    idempotency_key: String,
    expires_at: Option<i64>,
    status: String,
    result: Option<String>,
    card: String,
}

/// The one field of the stored card the resolution reads.
#[derive(serde::Deserialize)]
struct SealedCard {
    #[serde(default)]
    fingerprint: String,
}

impl TryFrom<StoredDecision> for DecisionRow {
    type Error = EngineError;

    fn try_from(r: StoredDecision) -> EngineResult<DecisionRow> {
        Ok(DecisionRow {
            kind: stored::parse("decisions.kind", &r.kind, DecisionKind::parse)?,
            target: stored::json("decisions.target", &r.target)?,
            status: r.status.parse()?,
            result: stored::opt_json("decisions.result", r.result.as_deref())?,
            fingerprint: stored::json::<SealedCard>("decisions.card", &r.card)?.fingerprint,
            id: r.id,
            session_id: r.session_id,
            turn_id: r.turn_id,
            idempotency_key: r.idempotency_key,
            expires_at: r.expires_at,
        })
    }
}

/// What the new row holds.
pub struct NewDecision<'a> {
    pub session_id: &'a str,
    pub workspace_id: &'a str,
    pub turn_id: Option<&'a str>,
    pub target: &'a Target,
    pub card: &'a DecisionCard,
    pub idempotency_key: &'a str,
}

pub async fn insert(conn: &mut Conn, d: &NewDecision<'_>) -> EngineResult<()> {
    sqlx::query(
        "insert into decisions (id, session_id, workspace_id, turn_id, kind, target, card,
                                idempotency_key, expires_at, created_at)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
    )
    .bind(&d.card.id)
    .bind(d.session_id)
    .bind(d.workspace_id)
    .bind(d.turn_id)
    .bind(d.card.kind.as_str())
    .bind(to_json(d.target)?)
    .bind(to_json(d.card)?)
    .bind(d.idempotency_key)
    .bind(d.card.expires_at)
    .bind(now_ms())
    .execute(conn)
    .await?;
    Ok(())
}

/// The decision if it belongs to `session_id` in `workspace_id`.
pub async fn find(
    conn: &mut Conn,
    workspace_id: &str,
    session_id: &str,
    id: &str,
) -> EngineResult<Option<DecisionRow>> {
    sqlx::query_as::<_, StoredDecision>(
        "select id, session_id, turn_id, kind, target, idempotency_key, expires_at,
                status, result, card
           from decisions where id = $1 and session_id = $2 and workspace_id = $3",
    )
    .bind(id)
    .bind(session_id)
    .bind(workspace_id)
    .fetch_optional(conn)
    .await?
    .map(DecisionRow::try_from)
    .transpose()
}

/// Replaces a pending card (a re-quote keeps the decision's id).
pub async fn update_card(
    conn: &mut Conn,
    id: &str,
    target: &Target,
    card: &DecisionCard,
) -> EngineResult<bool> {
    let done = sqlx::query(
        "update decisions set target = $1, card = $2, expires_at = $3
          where id = $4 and status = 'pending'",
    )
    .bind(to_json(target)?)
    .bind(to_json(card)?)
    .bind(card.expires_at)
    .bind(id)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// How a decision left `pending`.
pub struct Finish<'a> {
    pub status: DecisionOutcome,
    pub resolved_by: &'a str,
    pub via: &'static str,
    pub result: Option<&'a DecisionResult>,
    pub credits: u32,
    pub contacts: u32,
    /// The billing receipt, when the execution charged (audit only).
    pub receipt: Option<String>,
    /// What was executed, when it differs from the stored target (the steps a person
    /// ticked on a sequence card): stored with the status, in the same statement.
    pub target: Option<&'a Target>,
}

/// Moves a pending decision to its final status. False when it was not pending any
/// more (another tab or the auto policy resolved it first).
pub async fn finish(conn: &mut Conn, id: &str, f: &Finish<'_>) -> EngineResult<bool> {
    let done = sqlx::query(
        "update decisions set status = $1, resolved_by = $2, resolved_via = $3, resolved_at = $4,
                              result = $5, credits = $6, contacts = $7,
                              target = coalesce($9, target)
          where id = $8 and status = 'pending'",
    )
    .bind(DecisionStatus::of(f.status).as_str())
    .bind(f.resolved_by)
    .bind(f.via)
    .bind(now_ms())
    .bind(f.result.map(to_json).transpose()?)
    .bind(i64::from(f.credits))
    .bind(i64::from(f.contacts))
    .bind(id)
    .bind(f.target.map(to_json).transpose()?)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Contacts revealed by auto mode in one turn, or reserved by an auto resolution still
/// under way (the ≤ 10 per turn lock).
pub async fn auto_contacts_in_turn(
    conn: &mut Conn,
    session_id: &str,
    turn_id: &str,
) -> EngineResult<u32> {
    let n: i64 = sqlx::query_scalar(
        "select cast(coalesce(sum(contacts), 0) as bigint) from decisions
          where session_id = $1 and turn_id = $2 and resolved_via = 'auto'
            and status in ('accepted', 'pending')",
    )
    .bind(session_id)
    .bind(turn_id)
    .fetch_one(conn)
    .await?;
    Ok(u32::try_from(n.max(0)).unwrap_or(u32::MAX))
}

/// Pending decisions of a kind in a session (re-quotes when the selection changes).
pub async fn pending_of_kind(
    conn: &mut Conn,
    session_id: &str,
    kind: DecisionKind,
) -> EngineResult<Vec<String>> {
    Ok(sqlx::query_scalar(
        "select id from decisions where session_id = $1 and kind = $2 and status = 'pending'
          order by created_at",
    )
    .bind(session_id)
    .bind(kind.as_str())
    .fetch_all(conn)
    .await?)
}

// ------------------------------------------------------------------ auto mode

/// The session's auto settings as stored.
#[derive(Debug, Clone)]
pub struct SessionAuto {
    pub mode: SessionMode,
    pub credit_cap: u32,
    pub contact_cap: u32,
    pub credits_spent: u32,
    pub contacts_spent: u32,
    pub classes: Vec<DecisionKind>,
    pub set_by: Option<String>,
    pub set_at: Option<i64>,
}

/// The auto columns of `work_sessions` as stored.
#[derive(sqlx::FromRow)]
struct StoredSessionAuto {
    mode: String,
    credit_cap: i64,
    contact_cap: i64,
    credits_spent: i64,
    contacts_spent: i64,
    auto_classes: String,
    auto_set_by: Option<String>,
    auto_set_at: Option<i64>,
}

impl TryFrom<StoredSessionAuto> for SessionAuto {
    type Error = EngineError;

    fn try_from(r: StoredSessionAuto) -> EngineResult<SessionAuto> {
        Ok(SessionAuto {
            mode: stored::parse("work_sessions.mode", &r.mode, SessionMode::parse)?,
            credit_cap: count(r.credit_cap),
            contact_cap: count(r.contact_cap),
            credits_spent: count(r.credits_spent),
            contacts_spent: count(r.contacts_spent),
            classes: stored::json("work_sessions.auto_classes", &r.auto_classes)?,
            set_by: r.auto_set_by,
            set_at: r.auto_set_at,
        })
    }
}

/// `workspace_auto_policy` as stored.
#[derive(sqlx::FromRow)]
struct StoredPolicy {
    allowed: i64,
    default_credit_cap: i64,
    default_contact_cap: i64,
    max_credit_cap: i64,
    max_contact_cap: i64,
    classes: String,
}

impl TryFrom<StoredPolicy> for AutoPolicy {
    type Error = EngineError;

    fn try_from(r: StoredPolicy) -> EngineResult<AutoPolicy> {
        Ok(AutoPolicy {
            allowed: r.allowed != 0,
            default_credit_cap: count(r.default_credit_cap),
            default_contact_cap: count(r.default_contact_cap),
            max_credit_cap: count(r.max_credit_cap),
            max_contact_cap: count(r.max_contact_cap),
            classes: stored::json("workspace_auto_policy.classes", &r.classes)?,
        })
    }
}

pub async fn session_auto(
    conn: &mut Conn,
    workspace_id: &str,
    session_id: &str,
) -> EngineResult<SessionAuto> {
    sqlx::query_as::<_, StoredSessionAuto>(
        "select mode, credit_cap, contact_cap, credits_spent, contacts_spent, auto_classes,
                auto_set_by, auto_set_at
           from work_sessions where id = $1 and workspace_id = $2",
    )
    .bind(session_id)
    .bind(workspace_id)
    .fetch_optional(conn)
    .await?
    .ok_or_else(|| EngineError::not_found("esa sesión de trabajo"))?
    .try_into()
}

/// Stores the person's mode choice. What auto already spent in the session stays: the
/// caps bound the session's total auto spend, whatever the mode changes in between.
#[allow(clippy::too_many_arguments)]
pub async fn set_session_auto(
    conn: &mut Conn,
    session_id: &str,
    mode: SessionMode,
    credit_cap: u32,
    contact_cap: u32,
    classes: &[DecisionKind],
    set_by: Option<&str>,
    set_at: i64,
) -> EngineResult<()> {
    sqlx::query(
        "update work_sessions set mode = $1, credit_cap = $2, contact_cap = $3, auto_classes = $4, auto_set_by = $5, auto_set_at = $6,
                updated_at = $7
          where id = $8",
    )
    .bind(mode.as_str())
    .bind(i64::from(credit_cap))
    .bind(i64::from(contact_cap))
    .bind(to_json(&classes)?)
    .bind(set_by)
    .bind(set_at)
    .bind(set_at)
    .bind(session_id)
    .execute(conn)
    .await?;
    Ok(())
}

/// Records what an auto action spent. Guarded so the cap can never be crossed, even
/// by two auto actions racing: false when it would exceed a cap.
pub async fn spend(
    conn: &mut Conn,
    session_id: &str,
    credits: u32,
    contacts: u32,
) -> EngineResult<bool> {
    let done = sqlx::query(
        "update work_sessions set credits_spent = credits_spent + $1,
                                  contacts_spent = contacts_spent + $2
          where id = $3 and credits_spent + $4 <= credit_cap and contacts_spent + $5 <= contact_cap",
    )
    .bind(i64::from(credits))
    .bind(i64::from(contacts))
    .bind(session_id)
    .bind(i64::from(credits))
    .bind(i64::from(contacts))
    .execute(conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Gives back what an auto resolution reserved and did not spend (it failed, or a
/// person resolved the card first). Never below zero.
pub async fn unspend(
    conn: &mut Conn,
    session_id: &str,
    credits: u32,
    contacts: u32,
) -> EngineResult<()> {
    sqlx::query(
        "update work_sessions
            set credits_spent = case when credits_spent > $1 then credits_spent - $2 else 0 end,
                contacts_spent = case when contacts_spent > $3 then contacts_spent - $4 else 0 end
          where id = $5",
    )
    .bind(i64::from(credits))
    .bind(i64::from(credits))
    .bind(i64::from(contacts))
    .bind(i64::from(contacts))
    .bind(session_id)
    .execute(conn)
    .await?;
    Ok(())
}

/// Marks a pending decision as being resolved by auto mode with what it reserved
/// (counted by the per-turn lock). False when it is not pending or already reserved.
pub async fn reserve(conn: &mut Conn, id: &str, credits: u32, contacts: u32) -> EngineResult<bool> {
    let done = sqlx::query(
        "update decisions set resolved_via = 'auto', credits = $1, contacts = $2
          where id = $3 and status = 'pending' and resolved_via is null",
    )
    .bind(i64::from(credits))
    .bind(i64::from(contacts))
    .bind(id)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Clears an auto reservation on a decision that is still pending (the card stays for
/// the person).
pub async fn unreserve(conn: &mut Conn, id: &str) -> EngineResult<()> {
    sqlx::query(
        "update decisions set resolved_via = null, credits = 0, contacts = 0
          where id = $1 and status = 'pending' and resolved_via = 'auto'",
    )
    .bind(id)
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn workspace_policy(conn: &mut Conn, workspace_id: &str) -> EngineResult<AutoPolicy> {
    sqlx::query_as::<_, StoredPolicy>(
        "select allowed, default_credit_cap, default_contact_cap, max_credit_cap,
                max_contact_cap, classes
           from workspace_auto_policy where workspace_id = $1",
    )
    .bind(workspace_id)
    .fetch_optional(conn)
    .await?
    .map_or(Ok(AutoPolicy::default()), AutoPolicy::try_from)
}

pub async fn set_workspace_policy(
    conn: &mut Conn,
    workspace_id: &str,
    policy: &AutoPolicy,
    updated_by: &str,
) -> EngineResult<()> {
    sqlx::query(
        "insert into workspace_auto_policy (workspace_id, allowed, default_credit_cap,
                                            default_contact_cap, classes, updated_by, updated_at,
                                            max_credit_cap, max_contact_cap)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9)
         on conflict (workspace_id) do update set allowed = excluded.allowed,
             default_credit_cap = excluded.default_credit_cap,
             default_contact_cap = excluded.default_contact_cap,
             max_credit_cap = excluded.max_credit_cap,
             max_contact_cap = excluded.max_contact_cap,
             classes = excluded.classes, updated_by = excluded.updated_by,
             updated_at = excluded.updated_at",
    )
    .bind(workspace_id)
    .bind(policy.allowed as i64)
    .bind(i64::from(policy.default_credit_cap))
    .bind(i64::from(policy.default_contact_cap))
    .bind(to_json(&policy.classes)?)
    .bind(updated_by)
    .bind(now_ms())
    .bind(i64::from(policy.max_credit_cap))
    .bind(i64::from(policy.max_contact_cap))
    .execute(conn)
    .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_decision_status_round_trips_and_unknown_text_is_an_error() {
        stored::assert_round_trips::<DecisionStatus>();
        for o in [
            DecisionOutcome::Accepted,
            DecisionOutcome::Declined,
            DecisionOutcome::Expired,
        ] {
            assert_eq!(DecisionStatus::of(o).outcome(), Some(o));
        }
        assert_eq!(DecisionStatus::Pending.outcome(), None);
    }
}
