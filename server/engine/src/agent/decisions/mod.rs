//! Decisions (CONTRACT §7.2, §8): where the person stays in charge. Luna's
//! `DecisionDraft` becomes a typed card ([`cards::prepare`]) stored with a
//! server-only target and an idempotency key the server mints; the card is offered
//! in the session log (`decision.proposed`) and resolved by a person
//! ([`resolve`]) — or, inside the budget the person set, by the auto policy
//! ([`auto`]). Resolving executes once (a guarded status change plus domain calls
//! keyed by the minted key), writes `decision.resolved` and the board patches in one
//! transaction, and audits who, when, what and the receipt. Declining writes nothing
//! but the log; an expired card cannot be accepted.

pub mod auto;
pub mod cards;
mod execute;
#[cfg(test)]
mod proposal_tests;
mod rows;
mod sequence_review;
#[cfg(test)]
mod tests;

use luna_protocol::board::Board;
use luna_protocol::decision::{DecisionCard, DecisionKind, DecisionOutcome, DecisionResult};
use luna_protocol::error::ErrorCode;
use luna_protocol::event::{BoardPatched, DecisionProposed, DecisionResolved, SessionEvent};
use luna_protocol::patch::PatchOp;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::accounts::{audit_in, Caller};
use crate::base::clock::now_ms;
use crate::base::error::{EngineError, EngineResult};
use crate::base::ids::random_token;
use crate::Engine;

pub use auto::Held;
pub use cards::prepare;
pub use sequence_review::{reissue_sequence_cards, sequence_recipient};

/// What accepting a card executes. Server-only: never sent to a browser or a model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "t", rename_all = "snake_case")]
pub enum Target {
    CrmSave {
        proposal_id: String,
    },
    CrmBulk {
        proposal_id: String,
    },
    /// Luna's note or suggested edit, a `borrador` until the tap.
    KnowledgeDraft {
        proposal_id: String,
    },
    KnowledgeMerge {
        proposal_id: String,
    },
    Reveal {
        quote_id: String,
    },
    /// A research run to start (the proposal `research_start` stored).
    Research {
        proposal_id: String,
    },
    /// The version the card showed and, once the person ticks them, the steps.
    Sequence {
        sequence_id: String,
        version: i64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        steps: Option<Vec<usize>>,
    },
}

impl Target {
    /// The proposal, quote or sequence id the card was prepared from.
    pub fn source_id(&self) -> Option<&str> {
        match self {
            Target::CrmSave { proposal_id }
            | Target::CrmBulk { proposal_id }
            | Target::KnowledgeDraft { proposal_id }
            | Target::KnowledgeMerge { proposal_id } => Some(proposal_id),
            Target::Reveal { quote_id } => Some(quote_id),
            Target::Sequence { sequence_id, .. } => Some(sequence_id),
            Target::Research { proposal_id } => Some(proposal_id),
        }
    }
}

/// A card ready to offer, with its target and what accepting it would spend.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub card: DecisionCard,
    pub target: Target,
    /// Credits accepting it costs (contact credits for reveals).
    pub credits: u32,
    /// People it reveals.
    pub contacts: u32,
}

impl Prepared {
    pub fn new(card: DecisionCard, target: Target) -> Self {
        Prepared {
            card,
            target,
            credits: 0,
            contacts: 0,
        }
    }
}

/// The person's answer and its outcome are wire types (the browser sends and reads
/// them); `Resolved` is the engine's name for the outcome.
pub use luna_protocol::decision::{DecisionResolution as Resolved, Resolution};

/// What offering a card did: left it for the person, or ran it in auto mode.
#[derive(Debug, Clone)]
pub struct Offered {
    pub card: DecisionCard,
    pub auto: Option<Resolved>,
    pub held: Option<Held>,
}

enum Via<'a> {
    Person,
    Auto(&'a auto::Reservation),
}

impl Via<'_> {
    fn as_str(&self) -> &'static str {
        match self {
            Via::Person => "person",
            Via::Auto(_) => "auto",
        }
    }
}

/// Offers a prepared card in the session: stores it and appends `decision.proposed`
/// in one transaction; then, if the session's auto policy covers it, runs it.
pub async fn offer(
    engine: &Engine,
    caller: &Caller,
    session_id: &str,
    turn_id: Option<&str>,
    prepared: Prepared,
) -> EngineResult<Offered> {
    let key = format!("decision:{}", random_token(24));
    let mut tx = engine.sessions.begin(session_id).await?;
    rows::insert(
        &mut tx,
        &rows::NewDecision {
            session_id,
            workspace_id: &caller.workspace_id,
            turn_id,
            target: &prepared.target,
            card: &prepared.card,
            idempotency_key: &key,
        },
    )
    .await?;
    let ev = SessionEvent::DecisionProposed(DecisionProposed {
        turn_id: turn_id.map(str::to_owned),
        card: prepared.card.clone(),
    });
    let appended = engine.sessions.append(&mut tx, session_id, &ev).await?;
    tx.commit().await?;
    engine.sessions.publish([appended]);

    let Some(turn_id) = turn_id else {
        return Ok(Offered {
            card: prepared.card,
            auto: None,
            held: Some(Held::Off),
        });
    };
    let view = engine
        .sessions
        .snapshot_at_latest(caller, session_id)
        .await?
        .view;
    let list_saved = view.board.saved.is_some();
    match auto::reserve(engine, caller, session_id, turn_id, &prepared, list_saved).await? {
        Ok(reservation) => {
            let done = resolve_as(
                engine,
                caller,
                session_id,
                &prepared.card.id,
                Resolution::Accept,
                Via::Auto(&reservation),
            )
            .await;
            // Only an acceptance this resolution wrote spends the reservation; anything
            // else (a failure, a person first, an expiry) gives it back.
            let spent =
                matches!(&done, Ok(r) if !r.already && r.outcome == DecisionOutcome::Accepted);
            if !spent {
                auto::release(engine, &reservation).await?;
            }
            match done {
                Ok(r) if spent => Ok(Offered {
                    card: prepared.card,
                    auto: Some(r),
                    held: None,
                }),
                Ok(_) => Ok(Offered {
                    card: prepared.card,
                    auto: None,
                    held: None,
                }),
                Err(e) => {
                    // The card stays pending for the person; auto never retries alone.
                    tracing::warn!(decision = %prepared.card.id, error = %e, "auto resolution failed");
                    Ok(Offered {
                        card: prepared.card,
                        auto: None,
                        held: None,
                    })
                }
            }
        }
        Err(held) => Ok(Offered {
            card: prepared.card,
            auto: None,
            held: Some(held),
        }),
    }
}

/// The decision `decision_id` of a session the caller may see, or `not_found`.
async fn find_in_session(
    engine: &Engine,
    caller: &Caller,
    session_id: &str,
    decision_id: &str,
) -> EngineResult<rows::DecisionRow> {
    engine.sessions.get(caller, session_id).await?;
    let mut conn = engine.store.pool().acquire().await?;
    rows::find(
        &mut conn,
        &caller.workspace_id,
        session_id,
        decision_id.trim(),
    )
    .await?
    .ok_or_else(|| EngineError::not_found("esa decisión"))
}

/// A person authorizes the ticked steps of a `revisar_secuencia` card and accepts it.
pub async fn authorize_steps(
    engine: &Engine,
    caller: &Caller,
    session_id: &str,
    decision_id: &str,
    steps: &[usize],
) -> EngineResult<Resolved> {
    if steps.is_empty() {
        return Err(no_steps_ticked());
    }
    let row = find_in_session(engine, caller, session_id, decision_id).await?;
    if let (
        Target::Sequence {
            sequence_id,
            version,
            ..
        },
        None,
    ) = (&row.target, row.outcome())
    {
        let target = Target::Sequence {
            sequence_id: sequence_id.clone(),
            version: *version,
            steps: Some(steps.to_vec()),
        };
        let mut conn = engine.store.pool().acquire().await?;
        rows::update_target(&mut conn, &row.id, &target).await?;
    }
    resolve(engine, caller, session_id, decision_id, Resolution::Accept).await
}

fn no_steps_ticked() -> EngineError {
    EngineError::typed(
        ErrorCode::InvalidArgument,
        "Marca al menos un paso de la secuencia para autorizarlo.",
        "Solo se autorizan y envían los pasos con la casilla marcada.",
    )
}

/// A person accepts or declines a card (the chat's buttons, the review page).
pub async fn resolve(
    engine: &Engine,
    caller: &Caller,
    session_id: &str,
    decision_id: &str,
    resolution: Resolution,
) -> EngineResult<Resolved> {
    resolve_as(
        engine,
        caller,
        session_id,
        decision_id,
        resolution,
        Via::Person,
    )
    .await
}

async fn resolve_as(
    engine: &Engine,
    caller: &Caller,
    session_id: &str,
    decision_id: &str,
    resolution: Resolution,
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
    if matches!(&row.target, Target::Sequence { steps, .. } if steps.as_ref().is_none_or(Vec::is_empty))
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
        &row.target,
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

fn already(row: &rows::DecisionRow) -> Resolved {
    Resolved {
        decision_id: row.id.clone(),
        outcome: row.outcome().unwrap_or(DecisionOutcome::Declined),
        result: row.result.clone(),
        already: true,
    }
}

/// Leaves `pending` in one transaction with `decision.resolved`, the board patches and
/// the audit line. `None` when someone else resolved it first.
async fn finish(
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
async fn finish_as(
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
async fn expire(
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

/// The pending cards of `kind` in a session, as stored.
async fn pending_rows(
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
async fn reoffer(
    engine: &Engine,
    session_id: &str,
    row: &rows::DecisionRow,
    mut next: Prepared,
) -> EngineResult<bool> {
    next.card.id = row.id.clone();
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
