//! Server functions for sequences on the board and their review card: edit one step
//! of a draft (the engine's one edit path, the same as Luna's `sequence_update_draft`),
//! render one recipient's email for the card's pager, and mark that a recipient
//! replied (the same engine call as the CLI `mark-replied`). Thin wrappers over
//! `luna_engine::sequences`.

use leptos::prelude::*;
use luna_protocol::decision::RecipientEmail;
use serde::{Deserialize, Serialize};

use crate::error::AppError;

#[cfg(feature = "ssr")]
use crate::server::{caller, engine, fail};

/// What an edit from the board did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, luna_protocol::json::FromJson)]
pub struct StepSaved {
    /// The sequence's version after the edit.
    pub version: i64,
    /// Pending sends the edit stopped (an authorized sequence).
    pub invalidated_sends: u64,
    /// The sequence was authorized: its authorization no longer holds.
    pub voided: bool,
}

/// Edits step `index` (0-based) of version `version` of a sequence: subject, body and
/// days after activation. Bad input is a typed error in Spanish; editing an authorized
/// sequence voids its authorization, and a review card waiting in the sequence's
/// session is issued again over the new version.
#[server(prefix = "/api", endpoint = "edit_sequence_step", output = crate::codec::Answer)]
pub async fn edit_sequence_step(
    sequence_id: String,
    version: i64,
    index: u32,
    delay_days: i64,
    subject: String,
    body: String,
) -> Result<StepSaved, AppError> {
    use luna_engine::sequences::drafts::{edit_step, StepEdit};
    let caller = caller()?;
    let edit = StepEdit {
        index: index as usize,
        delay_days,
        subject,
        body,
    };
    let engine = engine()?;
    let out = edit_step(&engine, &caller, &sequence_id, version, &edit)
        .await
        .map_err(fail)?;
    // A review card waiting in the session shows the new version at once.
    if let Some(session_id) = &out.sequence.session_id {
        luna_engine::decisions::reissue_sequence_cards(
            &engine,
            &caller,
            session_id,
            &out.sequence.id,
        )
        .await
        .map_err(fail)?;
    }
    Ok(StepSaved {
        version: out.sequence.version,
        invalidated_sends: out.invalidated_sends,
        voided: out.was_active,
    })
}

/// Recipient `position` (1-based) of the sequence a review card shows, every step
/// rendered by the server as that person would read it.
#[server(prefix = "/api", endpoint = "sequence_recipient_email", output = crate::codec::Answer)]
pub async fn sequence_recipient_email(
    session_id: String,
    decision_id: String,
    position: u32,
) -> Result<RecipientEmail, AppError> {
    let caller = caller()?;
    luna_engine::decisions::sequence_recipient(
        &engine()?,
        &caller,
        &session_id,
        &decision_id,
        position,
    )
    .await
    .map_err(fail)
}

/// What marking a reply did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, luna_protocol::json::FromJson)]
pub struct ReplyMarked {
    /// False when the reply had been marked before (marking is idempotent).
    pub new: bool,
    /// The recipient's pending steps this call cancelled.
    pub cancelled: u64,
}

/// Marks that `email` answered sequence `sequence_id`: their remaining steps of it
/// are cancelled and the dispatcher skips them. Marking twice changes nothing.
#[server(prefix = "/api", endpoint = "mark_sequence_replied", output = crate::codec::Answer)]
pub async fn mark_sequence_replied(
    sequence_id: String,
    email: String,
) -> Result<ReplyMarked, AppError> {
    let caller = caller()?;
    let m = luna_engine::sequences::replies::mark(&engine()?, &caller, &sequence_id, &email)
        .await
        .map_err(fail)?;
    Ok(ReplyMarked {
        new: m.new,
        cancelled: m.cancelled,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use luna_protocol::json::conformance::check;
    use serde_json::json;

    /// The browser reads these with `FromJson`: it must read what serde reads.
    #[test]
    fn answers_read_in_the_browser_as_serde_reads_them() {
        check::<StepSaved>(&json!({"version": 3, "invalidated_sends": 4, "voided": true}));
        check::<ReplyMarked>(&json!({"new": false, "cancelled": 0}));
        check::<RecipientEmail>(&json!({
            "position": 3, "total": 10, "email": "ana@empresa.mx",
            "skipped": "se dio de baja",
            "steps": [{"subject": "Hola Ana", "body": "Texto"}]
        }));
    }
}
