//! The `revisar_secuencia` card after it is offered: its pager renders one recipient's
//! email on demand (the version the card shows, never a newer one), and an edit of the
//! draft from the board issues the pending card again over the new version — same
//! card id — so the person reviews and authorizes what they just wrote.

use luna_protocol::decision::{DecisionKind, RecipientEmail};
use luna_protocol::error::ErrorCode;

use super::{cards, find_in_session, pending_rows, reoffer, Target};
use crate::accounts::Caller;
use crate::agent::contract::intent::DecisionDraft;
use crate::base::error::{EngineError, EngineResult};
use crate::Engine;

/// Recipient `position` (1-based) of the sequence a `revisar_secuencia` card reviews,
/// rendered by the server for the card's pager.
pub async fn sequence_recipient(
    engine: &Engine,
    caller: &Caller,
    session_id: &str,
    decision_id: &str,
    position: u32,
) -> EngineResult<RecipientEmail> {
    let row = find_in_session(engine, caller, session_id, decision_id).await?;
    let Target::Sequence {
        sequence_id,
        version,
        ..
    } = &row.target
    else {
        return Err(EngineError::typed(
            ErrorCode::InvalidArgument,
            "Esa decisión no es la revisión de una secuencia.",
            "Solo la tarjeta «Revisar y autorizar la secuencia» muestra destinatarios.",
        ));
    };
    crate::sequences::drafts::recipient_email(engine, caller, sequence_id, *version, position).await
}

/// Issues every pending review card of `sequence_id` in `session_id` again over the
/// sequence's current version (after an edit); returns how many.
pub async fn reissue_sequence_cards(
    engine: &Engine,
    caller: &Caller,
    session_id: &str,
    sequence_id: &str,
) -> EngineResult<usize> {
    let mut reissued = 0;
    for row in pending_rows(engine, caller, session_id, DecisionKind::RevisarSecuencia).await? {
        match &row.target {
            Target::Sequence { sequence_id: s, .. } if s == sequence_id => {}
            _ => continue,
        }
        let draft = DecisionDraft::RevisarSecuencia {
            sequence_id: sequence_id.to_owned(),
        };
        let next = cards::prepare(engine, caller, &draft, None).await?;
        if reoffer(engine, session_id, &row, next).await? {
            reissued += 1;
        }
    }
    Ok(reissued)
}
