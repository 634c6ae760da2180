//! The sequence's card on the board: status, steps, recipients and, once authorized,
//! per-recipient progress — sent and waiting steps, why the rest stopped, and when the
//! next step goes out in the recipient's local time (the sending window's projection).

use std::collections::BTreeMap;

use luna_protocol::board::{Board, RecipientProgress, SequenceCard, SequenceStatus, StepDraft};
use luna_protocol::event::{BoardPatched, SessionEvent};
use luna_protocol::patch::PatchOp;

use crate::base::clock::now_ms;
use crate::base::error::{EngineError, EngineResult};

use super::{recipients, rows, window, zones, Deps, Sequence, Status};

/// The board card of a sequence, with per-recipient progress once authorized.
pub async fn card(engine: &impl Deps, s: &Sequence) -> EngineResult<SequenceCard> {
    card_at(engine, s, now_ms()).await
}

/// [`card`] as of `now`: when each recipient's next step goes out is the soonest
/// pending attempt (not before `now`) moved into the sending window in their zone.
pub async fn card_at(engine: &impl Deps, s: &Sequence, now: i64) -> EngineResult<SequenceCard> {
    let mut conn = engine.store().pool().acquire().await?;
    let w = window::load(
        &mut conn,
        &s.workspace_id,
        engine.sequences().default_window,
    )
    .await?;
    let next: BTreeMap<String, (i64, Option<String>)> = rows::next_sends(&mut conn, &s.id)
        .await?
        .into_iter()
        .map(|(email, at, tz)| (email, (at, tz)))
        .collect();
    let progress: Vec<RecipientProgress> = rows::progress(&mut conn, &s.id)
        .await?
        .into_iter()
        .map(|(email, sent, pending, stopped)| {
            let when = next.get(&email).map(|(at, tz)| {
                let tz = tz.as_deref().and_then(zones::parse).unwrap_or(w.time_zone);
                let at = w.send_time((*at).max(now), tz);
                (at, zones::local_words(at, tz))
            });
            RecipientProgress {
                email,
                sent: sent.max(0) as u32,
                pending: pending.max(0) as u32,
                stopped,
                next_send_at: when.as_ref().map(|(at, _)| *at),
                next_send: when.map(|(_, words)| words),
            }
        })
        .collect();
    let voided = s.status == Status::Borrador
        && rows::authorized_before(&mut conn, &s.id, s.version).await?;
    drop(conn);
    let recipients = match s.status {
        Status::Borrador => recipients(engine, s).await?.len(),
        _ => progress.len(),
    };
    Ok(SequenceCard {
        sequence_id: s.id.clone(),
        name: s.name.clone(),
        steps: s.steps.len() as u32,
        recipients: recipients as u32,
        status: match s.status {
            Status::Borrador => SequenceStatus::Borrador,
            Status::Activa => SequenceStatus::Activa,
            Status::Terminada => SequenceStatus::Autorizada,
        },
        progress,
        version: s.version,
        drafts: match s.status {
            Status::Terminada => Vec::new(),
            _ => s
                .steps
                .iter()
                .map(|st| StepDraft {
                    delay_days: st.delay_days,
                    subject: st.subject.clone(),
                    body: st.body.clone(),
                })
                .collect(),
        },
        notice: voided.then(|| VOIDED.to_owned()),
    })
}

/// What the card says once an edit voided the authorization of an earlier version.
pub const VOIDED: &str = "Se editó después de autorizarla: la autorización anterior ya no vale y no se enviará nada hasta que la revises y autorices de nuevo.";

/// Replaces the sequence's card on the board of the session it was drafted in.
pub async fn publish_board(engine: &impl Deps, s: &Sequence) -> EngineResult<()> {
    let Some(session_id) = &s.session_id else {
        return Ok(());
    };
    let view = engine.sessions().view_of(session_id).await?;
    let card = card(engine, s).await?;
    let mut cards = view.board.sequences.clone();
    match cards.iter_mut().find(|c| c.sequence_id == s.id) {
        Some(c) if *c == card => return Ok(()),
        Some(c) => *c = card,
        None => cards.push(card),
    }
    let ev = SessionEvent::BoardPatched(BoardPatched {
        turn_id: None,
        patch: vec![PatchOp::add(
            Board::SEQUENCES,
            serde_json::to_value(&cards).map_err(|e| EngineError::Internal(e.to_string()))?,
        )],
    });
    engine.sessions().append_one(session_id, ev).await?;
    Ok(())
}
