//! Offering a pending card again: a changed selection re-quotes the session's
//! `revelar_contactos` cards (or expires them), and an edited sequence re-issues its
//! review card, both under the same card id. A newer save proposal retires the older one.

use super::*;

/// A changed selection re-quotes (CONTRACT §8): every pending `revelar_contactos` card of
/// the session is quoted again over the people whose company is still selected —
/// same card id, new price, balance and 10-minute expiry — or expires when none is.
pub async fn requote_on_selection(
    engine: &Engine,
    caller: &Caller,
    session_id: &str,
    selected_companies: &[String],
) -> EngineResult<()> {
    for row in pending_rows(engine, caller, session_id, DecisionKind::RevelarContactos).await? {
        let Target::Reveal { quote_id } = &row.target else {
            continue;
        };
        let quote = engine.people.status(caller, quote_id).await?;
        let keep: Vec<String> = quote
            .people
            .iter()
            .filter(|p| {
                selected_companies
                    .iter()
                    .any(|c| *c == format!("company:{}", p.company_id))
            })
            .map(|p| p.handle.clone())
            .collect();
        if keep.len() == quote.people.len() {
            continue;
        }
        if keep.is_empty() {
            let result = DecisionResult {
                summary: "La selección cambió y ya no incluye a estas personas; la cotización se canceló.".to_owned(),
                refs: Vec::new(),
            };
            finish(
                engine,
                caller,
                &row,
                rows::Finish {
                    status: DecisionOutcome::Expired,
                    resolved_by: &caller.user_id,
                    via: "person",
                    result: Some(&result),
                    credits: 0,
                    contacts: 0,
                    receipt: None,
                    target: None,
                },
                Vec::new(),
            )
            .await?;
            continue;
        }
        let fresh = engine.people.quote(caller, &keep).await?;
        let next = cards::reveal_card(engine, caller, &fresh.id).await?;
        reoffer(engine, session_id, &row, next).await?;
    }
    Ok(())
}

/// A newer `guardar_en_crm` proposal replaces the session's pending one: the older card
/// ends `expired` with a line saying why, so the board never offers two saves at once.
pub(super) async fn supersede_saves(
    engine: &Engine,
    caller: &Caller,
    session_id: &str,
) -> EngineResult<()> {
    let result = DecisionResult {
        summary: "La reemplazó una propuesta más reciente para guardar la selección.".to_owned(),
        refs: Vec::new(),
    };
    for row in pending_rows(engine, caller, session_id, DecisionKind::GuardarEnCrm).await? {
        finish(
            engine,
            caller,
            &row,
            rows::Finish {
                status: DecisionOutcome::Expired,
                resolved_by: &caller.user_id,
                via: "person",
                result: Some(&result),
                credits: 0,
                contacts: 0,
                receipt: None,
                target: None,
            },
            Vec::new(),
        )
        .await?;
    }
    Ok(())
}

/// The pending cards of `kind` in a session, as stored.
pub(super) async fn pending_rows(
    engine: &Engine,
    caller: &Caller,
    session_id: &str,
    kind: DecisionKind,
) -> EngineResult<Vec<rows::DecisionRow>> {
    let mut conn = engine.store.pool().acquire().await?;
    let ids = rows::pending_of_kind(&mut conn, session_id, kind).await?;
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        if let Some(row) = rows::find(&mut conn, &caller.workspace_id, session_id, &id).await? {
            out.push(row);
        }
    }
    Ok(out)
}

/// Offers a pending card again with newly prepared content under the same id (a new
/// quote, a new sequence version): stores it and appends `decision.proposed` in one
/// transaction. False when the card stopped being pending meanwhile.
pub(super) async fn reoffer(
    engine: &Engine,
    session_id: &str,
    row: &rows::DecisionRow,
    mut next: Prepared,
) -> EngineResult<bool> {
    next.card.id = row.id.clone();
    next.seal()?;
    let mut tx = engine.sessions.begin(session_id).await?;
    if !rows::update_card(&mut tx, &row.id, &next.target, &next.card).await? {
        tx.rollback().await?;
        return Ok(false);
    }
    let ev = SessionEvent::DecisionProposed(DecisionProposed {
        turn_id: row.turn_id.clone(),
        card: next.card,
    });
    let appended = engine.sessions.append(&mut tx, session_id, &ev).await?;
    tx.commit().await?;
    engine.sessions.publish([appended]);
    Ok(true)
}
