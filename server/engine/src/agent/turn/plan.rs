//! Chained requests (CONTRACT §7.6): one message that asks for several things
//! («guárdalos, consígueme el correo de los 10 mejores y arma una secuencia de tres
//! correos») leaves a pending plan in the session's memory when Luna offers the card
//! for one part. When the person (or the auto policy) accepts that card, Luna continues
//! with the next part on its own — a new turn, started by the resolution, visible in
//! the chat — until every part has had its card. Declining or letting a card expire
//! ends the plan with a short note.
//!
//! The parts of a request, in the order they build on each other, are `PARTS`: saving
//! the selection, revealing contacts, drafting a sequence. A card ends a part; the
//! plan remembers which kinds were accepted (`done`) so no part runs twice.

use luna_protocol::decision::DecisionKind;

use crate::agent::director::grammar::Request;
use crate::base::clock::now_ms;
use crate::base::error::{EngineError, EngineResult};
use crate::Engine;

/// Most turns one plan runs (a guard; three parts need three).
pub const MAX_CHAIN: i64 = 5;

/// The parts a request can chain, in order, with the card that ends each.
fn parts(req: &Request) -> Vec<DecisionKind> {
    let mut out = Vec::new();
    if req.save {
        out.push(DecisionKind::GuardarEnCrm);
    }
    if req.contacts_top.is_some() {
        out.push(DecisionKind::RevelarContactos);
    }
    if req.sequence_steps.is_some() {
        out.push(DecisionKind::RevisarSecuencia);
    }
    out
}

pub use crate::agent::contract::input::PlanBrief;

/// A pending plan as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub message: String,
    pub awaiting: String,
    pub done: Vec<DecisionKind>,
    pub chain: i64,
}

/// After a turn for `req` (continuing a plan, or not) offered a card (`offered`: its id
/// and kind) or none: keeps a plan when a later part of the request is still to do,
/// and drops any plan otherwise.
pub async fn leave(
    engine: &Engine,
    workspace_id: &str,
    session_id: &str,
    message: &str,
    req: &Request,
    offered: Option<(&str, DecisionKind)>,
    continuing: Option<(&PlanBrief, i64)>,
) -> EngineResult<()> {
    let done: Vec<DecisionKind> = continuing.map(|(p, _)| p.hecho.clone()).unwrap_or_default();
    let chain = continuing.map_or(0, |(_, c)| c);
    let pending = offered.filter(|(_, kind)| {
        let all = parts(req);
        all.iter()
            .position(|k| k == kind)
            .is_some_and(|at| all[at + 1..].iter().any(|k| !done.contains(k)))
    });
    let pool = engine.store.pool();
    sqlx::query("delete from session_plans where session_id = $1")
        .bind(session_id)
        .execute(pool)
        .await?;
    let Some((card, _)) = pending else {
        return Ok(());
    };
    sqlx::query(
        "insert into session_plans (session_id, workspace_id, message, awaiting, done, chain, created_at)
         values ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(session_id)
    .bind(workspace_id)
    .bind(message)
    .bind(card)
    .bind(serde_json::to_string(&done).map_err(|e| EngineError::Internal(e.to_string()))?)
    .bind(chain)
    .bind(now_ms())
    .execute(pool)
    .await?;
    Ok(())
}

/// The session's pending plan, if any.
pub async fn pending(engine: &Engine, session_id: &str) -> EngineResult<Option<Plan>> {
    let row: Option<(String, String, String, i64)> = sqlx::query_as(
        "select message, awaiting, done, chain from session_plans where session_id = $1",
    )
    .bind(session_id)
    .fetch_optional(engine.store.pool())
    .await?;
    let Some((message, awaiting, done, chain)) = row else {
        return Ok(None);
    };
    Ok(Some(Plan {
        message,
        awaiting,
        done: crate::base::stored::json("session_plans.done", &done)?,
        chain,
    }))
}

/// What became of the card a plan waits on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Next {
    /// Nothing to do: no plan, or its card is still open.
    Wait,
    /// Accepted: continue with this brief (the plan is taken out; the next turn
    /// leaves a new one if parts remain).
    Continue { brief: PlanBrief, chain: i64 },
    /// Declined or expired: the plan ended.
    Ended,
}

/// Takes the session's plan out when its card was resolved.
pub async fn take(engine: &Engine, session_id: &str) -> EngineResult<Next> {
    let Some(plan) = pending(engine, session_id).await? else {
        return Ok(Next::Wait);
    };
    let row: Option<(String, String)> =
        sqlx::query_as("select kind, status from decisions where id = $1 and session_id = $2")
            .bind(&plan.awaiting)
            .bind(session_id)
            .fetch_optional(engine.store.pool())
            .await?;
    let (kind, status) = row.unwrap_or_else(|| ("".into(), "expired".into()));
    // A card resolved while its turn still runs: that turn's task resumes the plan
    // when it ends (`service::start`), after its row leaves 'running'.
    let running: i64 = sqlx::query_scalar(
        "select count(*) from turns where session_id = $1 and status = 'running'",
    )
    .bind(session_id)
    .fetch_one(engine.store.pool())
    .await?;
    if status == "pending" || running > 0 {
        return Ok(Next::Wait);
    }
    let taken = sqlx::query("delete from session_plans where session_id = $1 and awaiting = $2")
        .bind(session_id)
        .bind(&plan.awaiting)
        .execute(engine.store.pool())
        .await?
        .rows_affected();
    if taken == 0 {
        return Ok(Next::Wait); // another resolution took it first
    }
    if status != "accepted" || plan.chain >= MAX_CHAIN {
        return Ok(Next::Ended);
    }
    let mut done = plan.done;
    if let Some(kind) = DecisionKind::parse(&kind) {
        done.push(kind);
    }
    Ok(Next::Continue {
        brief: PlanBrief {
            pedido: plan.message,
            hecho: done,
        },
        chain: plan.chain + 1,
    })
}
