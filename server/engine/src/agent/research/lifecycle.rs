//! What a person does to a run: `research_start` proposes it, the `investigar` card
//! starts it, and it can be cancelled, failed or steered while it runs.

use super::*;

use luna_protocol::error::ErrorCode;
use luna_protocol::event::SessionEvent;

use crate::accounts::Caller;
use crate::agent::contract::narration;
use crate::base::clock::now_ms;
use crate::base::error::{EngineError, EngineResult};
use crate::base::ids::new_id;
use crate::base::store::Scope;
use crate::billing::limits;
use crate::Engine;

// ---------------------------------------------------------------- propose / start

/// What `research_start` previews (the tools' type).
pub use crate::tools::ResearchProposal as Proposal;

/// The typed refusal of a proposal that expired before it was accepted.
pub fn expired_refusal() -> EngineError {
    EngineError::typed(
        ErrorCode::DecisionExpired,
        "Esa propuesta de investigación ya venció y no se lanzó.",
        "Pídele a Luna que la prepare de nuevo.",
    )
}

fn check_brief(brief: &str, refs: &[String]) -> EngineResult<()> {
    let n = brief.trim().chars().count();
    if !(10..=MAX_BRIEF_CHARS).contains(&n) {
        return Err(EngineError::typed(
            ErrorCode::InvalidArgument,
            "El encargo de la investigación es demasiado corto o demasiado largo.",
            format!(
                "Escribe entre 10 y {MAX_BRIEF_CHARS} caracteres: qué quiere saber la persona."
            ),
        ));
    }
    let bad = refs.iter().find(|r| {
        !r.split_once(':').is_some_and(|(k, id)| {
            narration::REF_KINDS.contains(&k) && !id.is_empty() && !id.contains(char::is_whitespace)
        })
    });
    if refs.len() > MAX_REFS || bad.is_some() {
        return Err(EngineError::typed(
            ErrorCode::InvalidArgument,
            "Las referencias de la investigación no son válidas.",
            format!("Usa hasta {MAX_REFS} refs como company:… o record:… tomados de resultados."),
        ));
    }
    Ok(())
}

/// Frames the brief and stores a proposal (nothing runs, nothing is charged).
pub async fn propose(
    engine: &Engine,
    caller: &Caller,
    session_id: Option<&str>,
    brief: &str,
    refs: &[String],
) -> EngineResult<Proposal> {
    let (max_runs, cap) = plan_limits(caller)?;
    check_brief(brief, refs)?;
    {
        let mut conn = engine.store.pool().acquire().await?;
        if running_in(&mut conn, &caller.workspace_id).await? >= i64::from(max_runs) {
            return Err(concurrency_refusal(max_runs));
        }
    }
    let frame = Frame::of_text(brief);
    let criterion = frame.describe();
    let title: String = format!("Investigación: {criterion}")
        .chars()
        .take(120)
        .collect();
    let proposal_id = new_id("rsp");
    let now = now_ms();
    sqlx::query(
        "insert into research_runs (id, proposal_id, workspace_id, session_id, user_id, brief, refs,
             title, status, inference_cap, created_at, updated_at)
         values ($1, $2, $3, $4, $5, $6, $7, $8, 'propuesta', $9, $10, $11)",
    )
    .bind(new_id("run"))
    .bind(&proposal_id)
    .bind(&caller.workspace_id)
    .bind(session_id)
    .bind(&caller.user_id)
    .bind(brief.trim())
    .bind(serde_json::to_string(refs).map_err(EngineError::internal)?)
    .bind(&title)
    .bind(i64::from(cap))
    .bind(now)
    .bind(now)
    .execute(engine.store.pool())
    .await?;
    Ok(Proposal {
        proposal_id,
        title,
        criterion,
        inference_cap: cap,
        calls_estimate: 6,
        credits_estimate: 2,
        expires_at: now + PROPOSAL_TTL_MS,
    })
}

/// What accepting the card did.
#[derive(Debug, Clone)]
pub struct Started {
    pub run_id: String,
    pub title: String,
    /// True when the proposal had already started (a second acceptance).
    pub already: bool,
}

/// Starts the proposed run: one guarded update `propuesta → running` with the first
/// `run.progress` in the same transaction, under the plan's concurrency limit. A second
/// call returns the same run and starts nothing.
pub async fn start(engine: &Engine, caller: &Caller, proposal_id: &str) -> EngineResult<Started> {
    let (max_runs, cap) = plan_limits(caller)?;
    // The plan's limit of concurrent runs is counted over the workspace.
    let mut tx = engine
        .store
        .begin_write_in(Scope::Workspace(&caller.workspace_id))
        .await?;
    let run = match load(&mut tx, "proposal_id", proposal_id.trim()).await? {
        Some(r) if r.workspace_id == caller.workspace_id => r,
        _ => return Err(EngineError::not_found("esa propuesta de investigación")),
    };
    if run.status != RunState::Propuesta {
        tx.rollback().await?;
        return Ok(Started {
            run_id: run.id,
            title: run.title,
            already: true,
        });
    }
    let now = now_ms();
    if now >= run.expires_at() {
        tx.rollback().await?;
        return Err(expired_refusal());
    }
    if running_in(&mut tx, &caller.workspace_id).await? >= i64::from(max_runs) {
        tx.rollback().await?;
        return Err(concurrency_refusal(max_runs));
    }
    let moved = sqlx::query(
        "update research_runs set status = 'running', user_id = $1, inference_cap = $2,
             started_at = $3, updated_at = $4
         where id = $5 and status = 'propuesta' and created_at > $6",
    )
    .bind(&caller.user_id)
    .bind(i64::from(cap))
    .bind(now)
    .bind(now)
    .bind(&run.id)
    .bind(now - PROPOSAL_TTL_MS)
    .execute(&mut *tx)
    .await?;
    if moved.rows_affected() == 0 {
        tx.rollback().await?;
        return Ok(Started {
            run_id: run.id,
            title: run.title,
            already: true,
        });
    }
    let mut appended = Vec::new();
    if let Some(session_id) = &run.session_id {
        let fresh = load(&mut tx, "id", &run.id)
            .await?
            .ok_or_else(|| EngineError::internal("run vanished"))?;
        let ev = SessionEvent::RunProgress(fresh.progress(None));
        appended.push(engine.sessions.append(&mut tx, session_id, &ev).await?);
    }
    tx.commit().await?;
    engine.sessions.publish(appended);
    if !engine.research.is_manual() {
        spawn(engine, &run.id);
    }
    Ok(Started {
        run_id: run.id,
        title: run.title,
        already: false,
    })
}

// ---------------------------------------------------------------- cancel / fail / steer

async fn stop(
    engine: &Engine,
    run_id: &str,
    status: RunState,
    why: &str,
) -> EngineResult<Option<Run>> {
    let mut tx = engine.store.begin_write_in(Scope::Research(run_id)).await?;
    let moved = sqlx::query(
        "update research_runs set status = $1, error = $2, finished_at = $3, updated_at = $4
         where id = $5 and status = 'running'",
    )
    .bind(status.as_str())
    .bind(why)
    .bind(now_ms())
    .bind(now_ms())
    .bind(run_id)
    .execute(&mut *tx)
    .await?;
    if moved.rows_affected() == 0 {
        tx.rollback().await?;
        return Ok(None);
    }
    let run = load(&mut tx, "id", run_id)
        .await?
        .ok_or_else(|| EngineError::internal("run vanished"))?;
    let mut appended = Vec::new();
    if let Some(session_id) = &run.session_id {
        let ev = SessionEvent::RunProgress(run.progress(None));
        appended.push(engine.sessions.append(&mut tx, session_id, &ev).await?);
    }
    tx.commit().await?;
    engine.sessions.publish(appended);
    Ok(Some(run))
}

/// A person cancels a run (the board's "Cancelar"). The phase in flight finishes its
/// calls but never writes its checkpoint; what earlier phases found stays on the card.
/// Cancelling a run that already ended returns it as it is.
pub async fn cancel(engine: &Engine, caller: &Caller, run_id: &str) -> EngineResult<Run> {
    let run = get(engine, caller, run_id).await?;
    match stop(
        engine,
        &run.id,
        RunState::Cancelled,
        "La cancelaste; lo que encontraron las fases terminadas queda en la tarjeta.",
    )
    .await?
    {
        Some(r) => Ok(r),
        None => get(engine, caller, &run.id).await,
    }
}

/// Fails a run cleanly: the board shows why; nothing else is written.
pub async fn fail(engine: &Engine, run_id: &str, why: &str) -> EngineResult<()> {
    stop(engine, run_id, RunState::Failed, why).await?;
    Ok(())
}

/// A message sent while a run of this session is running: stored as steering for the
/// next phase. Returns the run it went to, or `None` when no run is running.
pub async fn steer(
    engine: &Engine,
    caller: &Caller,
    session_id: &str,
    text: &str,
) -> EngineResult<Option<String>> {
    let run_id: Option<String> = sqlx::query_scalar(
        "select id from research_runs
         where workspace_id = $1 and session_id = $2 and status = 'running'
         order by started_at desc limit 1",
    )
    .bind(&caller.workspace_id)
    .bind(session_id)
    .fetch_optional(engine.store.pool())
    .await?;
    let Some(run_id) = run_id else {
        return Ok(None);
    };
    // Stored only while the run still runs: a run stopped meanwhile takes no steering.
    let mut tx = engine
        .store
        .begin_write_in(Scope::Research(&run_id))
        .await?;
    if !super::driver::still_running(&mut tx, &run_id).await? {
        tx.rollback().await?;
        return Ok(None);
    }
    sqlx::query("insert into research_steering (run_id, text, created_at) values ($1, $2, $3)")
        .bind(&run_id)
        .bind(text.trim())
        .bind(now_ms())
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(Some(run_id))
}

pub(super) async fn pending_steering(
    engine: &Engine,
    run_id: &str,
) -> EngineResult<Vec<(i64, String)>> {
    Ok(sqlx::query_as(
        "select id, text from research_steering where run_id = $1 and applied_phase is null order by id",
    )
    .bind(run_id)
    .fetch_all(engine.store.pool())
    .await?)
}

async fn running_in(conn: &mut crate::base::store::Conn, workspace_id: &str) -> EngineResult<i64> {
    Ok(sqlx::query_scalar(
        "select count(*) from research_runs where workspace_id = $1 and status = 'running'",
    )
    .bind(workspace_id)
    .fetch_one(&mut *conn)
    .await?)
}

fn concurrency_refusal(limit: u32) -> EngineError {
    let (n, noun) = if limit == 1 {
        (limit, "investigación")
    } else {
        (limit, "investigaciones")
    };
    EngineError::typed(
        ErrorCode::PlanLimit,
        format!("Tu plan permite {n} {noun} a la vez y ya están en curso."),
        "Espera a que termine una o cancélala desde su tarjeta en el tablero.",
    )
}

/// The plan's research limits, or the typed refusal of a plan without runs.
fn plan_limits(caller: &Caller) -> EngineResult<(u32, u32)> {
    let plan = limits(caller.plan);
    if plan.research_runs == 0 {
        return Err(crate::registry::policy::plan_refusal(
            "investigaciones largas",
        ));
    }
    Ok((plan.research_runs, plan.research_inference))
}
