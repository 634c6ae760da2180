//! Replies stop a sequence for the recipient who answered. There is no mailbox
//! integration in this version: a person or an integration marks the reply (the
//! authenticated server function `POST /api/mark_sequence_replied`, or the CLI
//! `luna-server mark-replied`); both call [`mark_in_workspace`]. The mark is stored
//! once per (sequence, recipient), the recipient's pending steps of that sequence are
//! cancelled in the same transaction (`respondió`), and the dispatcher checks the mark
//! again before every send.

use luna_protocol::error::ErrorCode;

use super::suppressions::{cancel_pending, normalize_email};
use super::Deps;
use crate::accounts::Caller;
use crate::base::clock::now_ms;
use crate::base::error::{EngineError, EngineResult};
use crate::base::store::Scope;

/// What the board says of a recipient who answered.
pub const REPLIED: &str = "respondió";

/// What marking did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marked {
    /// False when the reply was already marked.
    pub new: bool,
    /// Pending steps cancelled.
    pub cancelled: u64,
}

/// Marks that `email` answered sequence `sequence_id` of `workspace_id`; `by` names who
/// (a user id, or `cli`).
pub async fn mark_in_workspace(
    engine: &impl Deps,
    workspace_id: &str,
    sequence_id: &str,
    email: &str,
    by: &str,
) -> EngineResult<Marked> {
    let email = normalize_email(email)?;
    let s = {
        let mut conn = engine.store().pool().acquire().await?;
        super::rows::find(&mut conn, workspace_id, sequence_id)
            .await?
            .ok_or_else(|| EngineError::not_found("esa secuencia"))?
    };
    let mut tx = engine
        .store()
        .begin_write_in(Scope::Workspace(workspace_id))
        .await?;
    let known: i64 = sqlx::query_scalar(
        "select count(*) from sequence_sends where sequence_id = $1 and email = $2",
    )
    .bind(&s.id)
    .bind(&email)
    .fetch_one(&mut *tx)
    .await?;
    if known == 0 {
        return Err(EngineError::typed(
            ErrorCode::NotFound,
            "Ese correo no recibe esta secuencia.",
            "Revisa la dirección: debe ser de un destinatario autorizado.",
        ));
    }
    let new = sqlx::query(
        "insert into sequence_replies (sequence_id, email, workspace_id, marked_by, created_at)
         values ($1, $2, $3, $4, $5) on conflict (sequence_id, email) do nothing",
    )
    .bind(&s.id)
    .bind(&email)
    .bind(workspace_id)
    .bind(by)
    .bind(now_ms())
    .execute(&mut *tx)
    .await?
    .rows_affected()
        == 1;
    let cancelled = cancel_pending(&mut tx, workspace_id, &email, Some(&s.id), REPLIED).await?;
    tx.commit().await?;
    if let Err(e) = super::publish_board(engine, &s).await {
        tracing::warn!(sequence = %s.id, error = %e, "board update failed");
    }
    Ok(Marked { new, cancelled })
}

/// A person marks a reply from the app.
pub async fn mark(
    engine: &impl Deps,
    caller: &Caller,
    sequence_id: &str,
    email: &str,
) -> EngineResult<Marked> {
    mark_in_workspace(
        engine,
        &caller.workspace_id,
        sequence_id,
        email,
        &caller.user_id,
    )
    .await
}
