//! Driving runs in the background: which process drives which run (leases), resuming
//! unfinished runs at start-up, and executing phases with one checkpoint each.

use super::*;
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use luna_protocol::event::SessionEvent;

use crate::base::clock::now_ms;
use crate::base::error::{EngineError, EngineResult};
use crate::base::store::{Conn, Scope};
use crate::billing::limits;
use crate::Engine;

use phases::PhaseOutcome;

/// The runs of this process: who drives which run, and whether accepting a card
/// starts the driver (tests drive phases themselves). `instance` names this process
/// in run leases.
#[derive(Debug, Clone)]
pub struct Research {
    manual: Arc<AtomicBool>,
    active: Arc<Mutex<HashSet<String>>>,
    instance: Arc<str>,
    /// How long this instance holds a run without renewing its lease (ms).
    lease_ms: i64,
}

impl Default for Research {
    fn default() -> Self {
        Research {
            manual: Arc::default(),
            active: Arc::default(),
            instance: crate::base::ids::new_id("inst").into(),
            lease_ms: LEASE_MS,
        }
    }
}

/// Which running runs [`resume_all`] takes over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Takeover {
    /// Every running run: one instance (SQLite) starting up drives none yet.
    All,
    /// Only runs whose lease expired: their instance died.
    Expired,
}

impl Research {
    /// Sets how long a run's lease lasts (`LUNA_RESEARCH_LEASE_SECS`); another instance
    /// takes over a run whose lease expired. Longer than any one phase.
    pub fn set_lease(&mut self, lease: std::time::Duration) {
        self.lease_ms = lease.as_millis() as i64;
    }

    pub fn new() -> Self {
        Self::default()
    }

    /// With `true`, accepted runs wait for an explicit [`drive`] (tests).
    pub fn set_manual(&self, manual: bool) {
        self.manual.store(manual, Ordering::Relaxed);
    }

    pub(super) fn is_manual(&self) -> bool {
        self.manual.load(Ordering::Relaxed)
    }

    fn claim(&self, run_id: &str) -> bool {
        self.active
            .lock()
            .map(|mut a| a.insert(run_id.to_owned()))
            .unwrap_or(false)
    }

    fn release(&self, run_id: &str) {
        if let Ok(mut a) = self.active.lock() {
            a.remove(run_id);
        }
    }
}

// ---------------------------------------------------------------- driving

/// Starts a background driver for `run_id` unless one already drives it here.
pub fn spawn(engine: &Engine, run_id: &str) -> Option<tokio::task::JoinHandle<()>> {
    if !engine.research.claim(run_id) {
        return None;
    }
    let (engine, run_id) = (engine.clone(), run_id.to_owned());
    Some(tokio::spawn(async move {
        if let Err(e) = drive(&engine, &run_id, None).await {
            tracing::error!(run = %run_id, error = %e, "research run failed");
            if let Err(e) = fail(
                &engine,
                &run_id,
                "Algo falló de nuestro lado y la investigación no pudo terminar; lo encontrado hasta aquí queda en la tarjeta.",
            )
            .await
            {
                tracing::error!(run = %run_id, error = %e, "could not fail a research run");
            }
        }
        engine.research.release(&run_id);
    }))
}

/// On start-up: every run left `running` is picked up at its next phase, or failed
/// (and reported on its card) once it was interrupted `MAX_RESUMES` times or the
/// person who started it no longer belongs to the workspace.
pub async fn resume_all(
    engine: &Engine,
    takeover: Takeover,
) -> EngineResult<Vec<tokio::task::JoinHandle<()>>> {
    let now = now_ms();
    let horizon = match takeover {
        Takeover::All => i64::MAX,
        Takeover::Expired => now,
    };
    let ids: Vec<String> = sqlx::query_scalar(
        "select id from research_runs
          where status = 'running' and coalesce(lease_until, 0) < $1 order by started_at",
    )
    .bind(horizon)
    .fetch_all(engine.store.pool())
    .await?;
    let mut handles = Vec::new();
    for id in ids {
        // Taken over by one instance only: the lease moves in the same guarded update.
        let resumes: Option<i64> = sqlx::query_scalar(
            "update research_runs set resumes = resumes + 1, updated_at = $1, runner = $2,
                    lease_until = $3
              where id = $4 and status = 'running' and coalesce(lease_until, 0) < $5
          returning resumes",
        )
        .bind(now)
        .bind(&*engine.research.instance)
        .bind(now + engine.research.lease_ms)
        .bind(&id)
        .bind(horizon)
        .fetch_optional(engine.store.pool())
        .await?;
        let Some(resumes) = resumes else {
            continue;
        };
        if resumes > MAX_RESUMES {
            fail(
                engine,
                &id,
                "La investigación se interrumpió varias veces y no se retomó; lo encontrado hasta aquí queda en la tarjeta.",
            )
            .await?;
            continue;
        }
        tracing::info!(run = %id, resumes, "resuming research run");
        if let Some(h) = spawn(engine, &id) {
            handles.push(h);
        }
    }
    Ok(handles)
}

/// Takes (or renews) this instance's lease on a running run: free, ours, or expired.
/// False when another live instance holds it.
async fn take_lease(engine: &Engine, run_id: &str) -> EngineResult<bool> {
    let now = now_ms();
    let done = sqlx::query(
        "update research_runs set runner = $1, lease_until = $2
          where id = $3 and status = 'running'
            and (runner is null or runner = $1 or coalesce(lease_until, 0) < $4)",
    )
    .bind(&*engine.research.instance)
    .bind(now + engine.research.lease_ms)
    .bind(run_id)
    .bind(now)
    .execute(engine.store.pool())
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Runs the next phases of `run_id` (at most `max_phases`, all if `None`), each
/// committed with its checkpoint and `run.progress`. Stops as soon as the run is no
/// longer running (cancelled, failed, finished).
pub async fn drive(engine: &Engine, run_id: &str, max_phases: Option<usize>) -> EngineResult<()> {
    let mut done = 0usize;
    loop {
        if max_phases.is_some_and(|m| done >= m) {
            return Ok(());
        }
        let Some(run) = load_run(engine, run_id).await? else {
            return Ok(());
        };
        if run.status != RunState::Running || run.next_phase >= PHASES.len() {
            return Ok(());
        }
        if !take_lease(engine, run_id).await? {
            // Another instance drives it; it will checkpoint the phases itself.
            return Ok(());
        }
        let Some(caller) = engine
            .accounts
            .caller_for(&run.user_id, &run.workspace_id)
            .await?
        else {
            fail(
                engine,
                run_id,
                "Quien lanzó la investigación ya no pertenece al espacio de trabajo; se detuvo.",
            )
            .await?;
            return Ok(());
        };
        if limits(caller.plan).research_runs == 0 {
            fail(
                engine,
                run_id,
                "El plan del espacio de trabajo ya no incluye investigaciones largas; se detuvo.",
            )
            .await?;
            return Ok(());
        }
        announce(engine, &run).await?;
        let k = run.next_phase;
        let outcome = phases::run_phase(engine, &caller, &run, k).await?;
        if !commit_phase(engine, &run, k, outcome).await? {
            return Ok(());
        }
        done += 1;
    }
}

/// `run.progress` for the phase that starts now (only while the run is running).
async fn announce(engine: &Engine, run: &Run) -> EngineResult<()> {
    let ev = SessionEvent::RunProgress(run.progress(Some(run.next_phase)));
    append_while_running(engine, run, &[ev]).await?;
    Ok(())
}

/// Whether the run is still running, read inside a write transaction of
/// [`Scope::Research`] (which every status change of the run takes), so the answer
/// holds until that transaction ends.
pub(super) async fn still_running(conn: &mut Conn, run_id: &str) -> EngineResult<bool> {
    let status: Option<String> =
        sqlx::query_scalar("select status from research_runs where id = $1")
            .bind(run_id)
            .fetch_optional(conn)
            .await?;
    Ok(status.as_deref() == Some(RunState::Running.as_str()))
}

/// Appends `events` to the run's session in one transaction, only while the run is
/// still running (a cancelled run shows nothing more). False when it did not.
pub(super) async fn append_while_running(
    engine: &Engine,
    run: &Run,
    events: &[SessionEvent],
) -> EngineResult<bool> {
    let Some(session_id) = &run.session_id else {
        return Ok(false);
    };
    let mut tx = engine
        .store
        .begin_write_in(Scope::Research(&run.id))
        .await?;
    if !still_running(&mut tx, &run.id).await? {
        tx.rollback().await?;
        return Ok(false);
    }
    let mut appended = Vec::with_capacity(events.len());
    for ev in events {
        appended.push(engine.sessions.append(&mut tx, session_id, ev).await?);
    }
    tx.commit().await?;
    engine.sessions.publish(appended);
    Ok(true)
}

/// Stores phase `k`'s checkpoint and appends its `run.progress` in one transaction,
/// only if the run is still running at phase `k`. The last phase also stores the
/// result and finishes the run. False when the run moved on without us.
async fn commit_phase(
    engine: &Engine,
    run: &Run,
    k: usize,
    outcome: PhaseOutcome,
) -> EngineResult<bool> {
    let used = outcome.used;
    let mut next = run.clone();
    next.checkpoints.push(outcome.checkpoint);
    next.next_phase = k + 1;
    next.inference_used = used;
    let last = k + 1 == PHASES.len();
    if last {
        next.result = outcome.result;
        next.status = RunState::Finished;
    }
    let mut tx = engine
        .store
        .begin_write_in(Scope::Research(&run.id))
        .await?;
    let now = now_ms();
    let moved = sqlx::query(
        "update research_runs set next_phase = $1, checkpoints = $2, inference_used = $3,
             status = $4, result = $5, finished_at = case when $6 then $7 else finished_at end,
             updated_at = $8
         where id = $9 and status = 'running' and next_phase = $10",
    )
    .bind(next.next_phase as i64)
    .bind(serde_json::to_string(&next.checkpoints).map_err(EngineError::internal)?)
    .bind(used)
    .bind(next.status.as_str())
    .bind(
        next.result
            .as_ref()
            .map(serde_json::to_string)
            .transpose()
            .map_err(EngineError::internal)?,
    )
    .bind(last)
    .bind(now)
    .bind(now)
    .bind(&run.id)
    .bind(k as i64)
    .execute(&mut *tx)
    .await?;
    if moved.rows_affected() == 0 {
        tx.rollback().await?;
        return Ok(false);
    }
    let upto = next.checkpoints[k].steering_upto;
    if upto > 0 {
        sqlx::query(
            "update research_steering set applied_phase = $1
             where run_id = $2 and applied_phase is null and id <= $3",
        )
        .bind(k as i64)
        .bind(&run.id)
        .bind(upto)
        .execute(&mut *tx)
        .await?;
    }
    let mut appended = Vec::new();
    if let Some(session_id) = &run.session_id {
        let ev = SessionEvent::RunProgress(next.progress(None));
        appended.push(engine.sessions.append(&mut tx, session_id, &ev).await?);
    }
    tx.commit().await?;
    engine.sessions.publish(appended);
    Ok(true)
}
