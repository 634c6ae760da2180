//! Resolving a card: a person's accept or decline (or the auto policy's), executed once
//! under the session's lock — the guarded status change, the domain call keyed by the
//! server-minted key, `decision.resolved` and the board patches in one transaction, the
//! audit row — and expiry.

use super::*;

/// A person accepts or declines a card (the chat's buttons, the review page). `seen`
/// is the fingerprint of the card the person looked at: when the card was issued
/// again since (a teammate's edit, a re-quote), the click is `VERSION_CONFLICT` and
/// nothing happens. The app always sends it; `None` is for the engine's own callers.
pub async fn resolve(
    engine: &Engine,
    caller: &Caller,
    session_id: &str,
    decision_id: &str,
    resolution: Resolution,
    seen: Option<&str>,
) -> EngineResult<Resolved> {
    resolve_as(
        engine,
        caller,
        session_id,
        decision_id,
        Click {
            resolution,
            seen,
            steps: None,
        },
        Via::Person,
    )
    .await
}

pub(super) async fn resolve_as(
    engine: &Engine,
    caller: &Caller,
    session_id: &str,
    decision_id: &str,
    click: Click<'_>,
    via: Via<'_>,
) -> EngineResult<Resolved> {
    let row = find_in_session(engine, caller, session_id, decision_id).await?;
    if let Some(outcome) = row.outcome() {
        return Ok(Resolved {
            decision_id: row.id,
            outcome,
            result: row.result,
            already: true,
        });
    }
    if click
        .seen
        .is_some_and(|seen| seen.trim() != row.fingerprint)
    {
        return Err(EngineError::typed(
            ErrorCode::VersionConflict,
            "La tarjeta cambió después de que la viste; no hice nada.",
            "Revisa la versión nueva de la tarjeta y vuelve a decidir.",
        ));
    }
    // The steps this request ticked, never ones stored by another request.
    let target = match (&row.target, click.steps) {
        (
            Target::Sequence {
                sequence_id,
                version,
                ..
            },
            Some(steps),
        ) => Target::Sequence {
            sequence_id: sequence_id.clone(),
            version: *version,
            steps: Some(steps.to_vec()),
        },
        _ => row.target.clone(),
    };
    let resolution = click.resolution;
    if resolution == Resolution::Decline {
        let done = finish(
            engine,
            caller,
            &row,
            rows::Finish {
                status: DecisionOutcome::Declined,
                resolved_by: &caller.user_id,
                via: via.as_str(),
                result: None,
                credits: 0,
                contacts: 0,
                receipt: None,
                target: None,
            },
            Vec::new(),
        )
        .await?;
        return Ok(done.unwrap_or_else(|| already(&row)));
    }
    if row.kind == DecisionKind::FusionarConocimiento && !caller.role.can_administer() {
        return Err(EngineError::forbidden(
            "Solo el dueño o un administrador puede fusionar en el conocimiento; la tarjeta queda en espera.",
        ));
    }
    if matches!(via, Via::Auto(_)) && !row.kind.auto_capable() {
        return Err(EngineError::forbidden(
            "Esta decisión nunca corre en automático.",
        ));
    }
    if row.expires_at.is_some_and(|at| now_ms() >= at) {
        return expire(engine, caller, &row, via.as_str()).await;
    }
    // A sequence card is accepted only with the steps the person ticked
    // (`authorize_steps`); a bare «aceptar» names none and authorizes nothing.
    if matches!(&target, Target::Sequence { steps, .. } if steps.as_ref().is_none_or(Vec::is_empty))
    {
        return Err(no_steps_ticked());
    }
    let auto_text = match &via {
        Via::Auto(r) => Some(auto::receipt_text(&r.counter)),
        Via::Person => None,
    };
    let executed = match execute::execute(
        engine,
        caller,
        &row.session_id,
        &target,
        &row.idempotency_key,
        auto_text.as_deref(),
    )
    .await
    {
        Ok(x) => x,
        // The quote or proposal behind the card expired meanwhile: so does the card.
        Err(e)
            if matches!(
                e.code(),
                ErrorCode::QuoteExpired | ErrorCode::DecisionExpired
            ) =>
        {
            return expire(engine, caller, &row, via.as_str()).await;
        }
        Err(e) => return Err(e),
    };
    let reserved = match via {
        Via::Auto(r) => Some(r),
        Via::Person => None,
    };
    let done = finish_as(
        engine,
        caller,
        &row,
        rows::Finish {
            status: DecisionOutcome::Accepted,
            resolved_by: &caller.user_id,
            via: via.as_str(),
            result: Some(&executed.result),
            credits: executed.credits,
            contacts: executed.contacts,
            receipt: executed.receipt.clone(),
            target: (target != row.target).then_some(&target),
        },
        executed.patch,
        reserved,
    )
    .await?;
    match done {
        Some(r) => Ok(r),
        // Another tab won the race: its execution and ours were the same keyed call.
        None => {
            let mut conn = engine.store.pool().acquire().await?;
            let now = rows::find(&mut conn, &caller.workspace_id, session_id, &row.id)
                .await?
                .ok_or_else(|| EngineError::not_found("esa decisión"))?;
            Ok(already(&now))
        }
    }
}

pub(super) fn already(row: &rows::DecisionRow) -> Resolved {
    Resolved {
        decision_id: row.id.clone(),
        outcome: row.outcome().unwrap_or(DecisionOutcome::Declined),
        result: row.result.clone(),
        already: true,
    }
}

/// Leaves `pending` in one transaction with `decision.resolved`, the board patches and
/// the audit line. `None` when someone else resolved it first.
pub(super) async fn finish(
    engine: &Engine,
    caller: &Caller,
    row: &rows::DecisionRow,
    f: rows::Finish<'_>,
    patch: Vec<PatchOp>,
) -> EngineResult<Option<Resolved>> {
    finish_as(engine, caller, row, f, patch, None).await
}

/// [`finish`], and for an auto acceptance the spend: the reservation taken before the
/// execution becomes what it actually spent, in the same transaction (a charge beyond
/// the reservation must still fit the cap, or nothing is written and the card stays
/// pending), and the result and board say how much of the budget is left.
pub(super) async fn finish_as(
    engine: &Engine,
    caller: &Caller,
    row: &rows::DecisionRow,
    f: rows::Finish<'_>,
    mut patch: Vec<PatchOp>,
    reserved: Option<&auto::Reservation>,
) -> EngineResult<Option<Resolved>> {
    let outcome = f.status;
    let status = rows::DecisionStatus::of(outcome).as_str();
    let mut tx = engine.sessions.begin(&row.session_id).await?;
    let mut decorated = None;
    if let (Some(r), DecisionOutcome::Accepted) = (reserved, outcome) {
        let fits = if f.credits <= r.credits && f.contacts <= r.contacts {
            rows::unspend(
                &mut tx,
                &row.session_id,
                r.credits - f.credits,
                r.contacts - f.contacts,
            )
            .await?;
            true
        } else {
            rows::unspend(&mut tx, &row.session_id, r.credits, r.contacts).await?;
            rows::spend(&mut tx, &row.session_id, f.credits, f.contacts).await?
        };
        if !fits {
            tx.rollback().await?;
            return Err(EngineError::typed(
                ErrorCode::MaxCreditsExceeded,
                "Esta acción costó más que el presupuesto automático que queda.",
                "La tarjeta queda en espera para que la aceptes tú.",
            ));
        }
        let s = rows::session_auto(&mut tx, &caller.workspace_id, &row.session_id).await?;
        let next = auto::counter_of(&s).unwrap_or_else(|| r.counter.clone());
        let mut result = f.result.cloned().unwrap_or_default();
        result.summary = format!(
            "{} Costo: {} créditos, {}; llevas {} de {} créditos.",
            result.summary,
            f.credits,
            auto::receipt_text(&next),
            next.credits_spent,
            next.credit_cap
        );
        patch.push(PatchOp::add(Board::AUTO, json!(next)));
        decorated = Some(result);
    }
    let f = rows::Finish {
        result: decorated.as_ref().or(f.result),
        ..f
    };
    if !rows::finish(&mut tx, &row.id, &f).await? {
        tx.rollback().await?;
        return Ok(None);
    }
    let mut events = vec![SessionEvent::DecisionResolved(DecisionResolved {
        decision_id: row.id.clone(),
        outcome,
        result: f.result.cloned(),
    })];
    if !patch.is_empty() {
        events.push(SessionEvent::BoardPatched(BoardPatched {
            turn_id: row.turn_id.clone(),
            patch,
        }));
    }
    let mut appended = Vec::new();
    for ev in &events {
        appended.push(engine.sessions.append(&mut tx, &row.session_id, ev).await?);
    }
    if let Some(turn_id) = &row.turn_id {
        crate::agent::contract::trajectory::append_in(
            &mut tx,
            &row.session_id,
            turn_id,
            &crate::agent::contract::trajectory::Step::DecisionResolved {
                decision_id: row.id.clone(),
                decision: row.kind.as_str().to_owned(),
                outcome: status.to_owned(),
                via: f.via.to_owned(),
                credits: f.credits,
                contacts: f.contacts,
                receipt: f.receipt.clone(),
            },
        )
        .await?;
    }
    audit_in(
        &mut tx,
        caller,
        &format!("decision.{status}"),
        &json!({
            "decision": row.id, "kind": row.kind.as_str(), "session": row.session_id,
            "via": f.via, "credits": f.credits, "contacts": f.contacts, "receipt": f.receipt,
            "result": f.result.map(|r| r.summary.clone()),
        }),
    )
    .await?;
    tx.commit().await?;
    engine.sessions.publish(appended);
    Ok(Some(Resolved {
        decision_id: row.id.clone(),
        outcome,
        result: f.result.cloned(),
        already: false,
    }))
}

/// Marks an expired card and refuses the acceptance (`DECISION_EXPIRED`).
pub(super) async fn expire(
    engine: &Engine,
    caller: &Caller,
    row: &rows::DecisionRow,
    via: &'static str,
) -> EngineResult<Resolved> {
    let result = DecisionResult {
        summary: match row.kind {
            DecisionKind::RevelarContactos => {
                "La cotización venció; pídele a Luna una nueva antes de revelar.".to_owned()
            }
            _ => "La propuesta venció; pídele a Luna que la prepare de nuevo.".to_owned(),
        },
        refs: Vec::new(),
    };
    finish(
        engine,
        caller,
        row,
        rows::Finish {
            status: DecisionOutcome::Expired,
            resolved_by: &caller.user_id,
            via,
            result: Some(&result),
            credits: 0,
            contacts: 0,
            receipt: None,
            target: None,
        },
        Vec::new(),
    )
    .await?;
    Err(EngineError::typed(
        ErrorCode::DecisionExpired,
        "Esta tarjeta ya venció y no se puede aceptar.",
        result.summary,
    ))
}
