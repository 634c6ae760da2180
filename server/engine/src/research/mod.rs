//! Long research runs (SPEC §10, seed 004 §4.8).
//!
//! `research_start` (level 1) only previews: it frames the brief, stores a proposal
//! and returns its `proposal_id`; the `investigar` card starts the run when a person
//! accepts it ([`start`], guarded so a second acceptance starts nothing). A run then
//! executes real phases in the background ([`drive`]): framing, Proveedores,
//! Adjudicaciones, marcas de riesgo, segments and the write-up. Every tool call goes
//! through `registry::pipeline::call` as Luna, keyed by run, phase and call so a retried
//! call never charges twice. Each phase ends with one transaction that stores its
//! checkpoint (the envelopes it read, what it found) and appends its `run.progress`
//! event, only while the run is still `running`; a start-up resumes every unfinished
//! run at its next phase ([`resume_all`]), so finished phases are never repeated.
//!
//! The model plays its part through the same `ModelGateway` turns use (`model`): it
//! frames the brief into the search the phases make (validated against the catalogues,
//! `frame`) and writes the result. Every gateway call spends one step of the run's
//! inference cap (plans: `billing::plans`); with the cap used up the run frames with the
//! grammar and writes with the code template (`writeup`), and the result says so. Each
//! phase's tool calls appear in the chat as tool lines, like a turn's (`phases`).
//!
//! What a phase found and the final result are written with `[[kind:id]]` markers and
//! resolved like narration (`turn::narration`) against the envelopes the run read: no
//! figure reaches the person without its anchor. A person can cancel a run ([`cancel`])
//! and steer it ([`steer`]): a message sent while it runs is stored and picked up at
//! the next phase, which re-frames the criterion. A proposal expires
//! ([`PROPOSAL_TTL_MS`]) like a quote; accepting it later is `DECISION_EXPIRED`. Plans
//! cap how many runs a workspace has at once and how many model steps one run spends.

mod frame;
pub mod model;
mod phases;
pub mod tools;
pub mod writeup;

#[cfg(test)]
mod model_tests;
#[cfg(test)]
mod tests;

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use luna_protocol::board::{PhaseStatus, RunPhase, RunStatus};
use luna_protocol::error::ErrorCode;
use luna_protocol::event::{Anchor, RunProgress, SessionEvent};
use luna_protocol::tool::Envelope;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use sqlx::Row;

use crate::accounts::Caller;
use crate::billing::limits;
use crate::clock::now_ms;
use crate::error::{EngineError, EngineResult};
use crate::ids::new_id;
use crate::registry::Registry;
use crate::turn::gateway::{Exchange, ToolCall};
use crate::turn::narration::{self, KnownRefs, ResolvedNarration};
use crate::turn::runner::harvest;
use crate::Engine;

pub use frame::Frame;
pub use model::ModelStepNote;
use phases::PhaseOutcome;

/// The real phases of a run, in order: (key, Spanish label).
pub const PHASES: [(&str, &str); 6] = [
    ("encuadre", "Encuadre del criterio"),
    ("proveedores", "Buscando Proveedores"),
    ("adjudicaciones", "Leyendo Adjudicaciones"),
    ("riesgos", "Revisando marcas de riesgo"),
    ("segmentos", "Comparando segmentos"),
    ("informe", "Escribiendo el resultado"),
];

/// Start-ups that may pick an interrupted run up again before it is failed.
pub const MAX_RESUMES: i64 = 3;
/// Longest brief, in characters.
pub const MAX_BRIEF_CHARS: usize = 2_000;
/// Most refs a brief may start from.
pub const MAX_REFS: usize = 20;
/// Proveedores a run names and screens.
const TOP: usize = 5;
/// A proposal (and its `investigar` card) expires after 30 minutes: the plan it shows
/// was framed from the market as it was then.
pub const PROPOSAL_TTL_MS: i64 = 30 * 60 * 1000;

/// How long a run's lease lasts without renewal; it is renewed before every phase.
pub const LEASE_MS: i64 = 5 * 60 * 1000;

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
            instance: crate::ids::new_id("inst").into(),
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

    fn is_manual(&self) -> bool {
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

// ---------------------------------------------------------------- checkpoints

/// One tool call of a phase, as stored in its checkpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredCall {
    /// Run-local handle (`p1c1`), used in evidence markers.
    pub call: String,
    pub tool: String,
    pub args: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub envelope: Option<Envelope>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl StoredCall {
    /// The call as a model transcript entry: its envelope, or `{error:{message}}`.
    pub fn exchange(&self) -> Exchange {
        let result = match (&self.envelope, &self.error) {
            (Some(env), _) => serde_json::to_value(env).unwrap_or_default(),
            (None, e) => json!({"error": {"message": e.clone().unwrap_or_default()}}),
        };
        Exchange {
            call: self.call.clone(),
            tool: ToolCall {
                name: self.tool.clone(),
                args: self.args.clone(),
            },
            result,
        }
    }
}

/// A finished phase: what it read and what it found (already resolved).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    pub key: String,
    pub found: String,
    #[serde(default)]
    pub anchors: Vec<Anchor>,
    #[serde(default)]
    pub calls: Vec<StoredCall>,
    /// The criterion from this phase on, when the phase set or changed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame: Option<Frame>,
    /// Steering messages this phase applied.
    #[serde(default)]
    pub steering: Vec<String>,
    /// The last steering row this phase read (rows after it wait for the next phase).
    #[serde(default)]
    pub steering_upto: i64,
    /// The model steps this phase took (or would have taken, past the cap).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub model_steps: Vec<ModelStepNote>,
}

/// The final result: resolved text, its anchors and every ref it cites.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    pub text: String,
    pub anchors: Vec<Anchor>,
    pub refs: Vec<String>,
}

/// A run as stored.
#[derive(Debug, Clone)]
pub struct Run {
    pub id: String,
    pub proposal_id: String,
    pub workspace_id: String,
    pub session_id: Option<String>,
    pub user_id: String,
    pub brief: String,
    pub refs: Vec<String>,
    pub title: String,
    /// `propuesta` | `running` | `finished` | `failed` | `cancelled`.
    pub status: String,
    pub inference_cap: i64,
    pub inference_used: i64,
    pub next_phase: usize,
    pub checkpoints: Vec<Checkpoint>,
    pub result: Option<RunResult>,
    pub error: Option<String>,
    pub resumes: i64,
    pub created_at: i64,
}

impl Run {
    pub fn run_status(&self) -> RunStatus {
        match self.status.as_str() {
            "finished" => RunStatus::Finished,
            "failed" => RunStatus::Failed,
            "cancelled" => RunStatus::Cancelled,
            _ => RunStatus::Running,
        }
    }

    fn frame(&self) -> Frame {
        self.checkpoints
            .iter()
            .rev()
            .find_map(|c| c.frame.clone())
            .unwrap_or_else(|| Frame::of_text(&self.brief))
    }

    /// Every model step of the run, with the key of the phase that took it.
    pub fn model_steps(&self) -> impl Iterator<Item = (&str, &ModelStepNote)> {
        self.checkpoints
            .iter()
            .flat_map(|c| c.model_steps.iter().map(move |n| (c.key.as_str(), n)))
    }

    /// When the proposal expires (unix milliseconds).
    pub fn expires_at(&self) -> i64 {
        self.created_at.saturating_add(PROPOSAL_TTL_MS)
    }

    /// What the run read, as the model sees tool results (the write-up's transcript).
    pub fn exchanges(&self) -> Vec<Exchange> {
        self.calls().map(StoredCall::exchange).collect()
    }

    /// Every phase with what it found; `current` is running, the rest pending (or
    /// skipped once the run stopped).
    pub fn phases(&self, current: Option<usize>) -> Vec<RunPhase> {
        let stopped = self.run_status().is_done();
        PHASES
            .iter()
            .enumerate()
            .map(|(i, (key, label))| match self.checkpoints.get(i) {
                Some(c) => RunPhase {
                    key: (*key).to_owned(),
                    label: (*label).to_owned(),
                    status: PhaseStatus::Done,
                    found: c.found.clone(),
                    anchors: c.anchors.clone(),
                },
                None => RunPhase {
                    key: (*key).to_owned(),
                    label: (*label).to_owned(),
                    status: if current == Some(i) {
                        PhaseStatus::Running
                    } else if stopped {
                        PhaseStatus::Skipped
                    } else {
                        PhaseStatus::Pending
                    },
                    found: String::new(),
                    anchors: Vec::new(),
                },
            })
            .collect()
    }

    /// The `run.progress` event for the run's state (`current`: the phase starting).
    pub fn progress(&self, current: Option<usize>) -> RunProgress {
        let status = self.run_status();
        let phase = match (status, current) {
            (RunStatus::Running, Some(i)) => PHASES[i].1.to_owned(),
            (RunStatus::Running, None) => PHASES
                .get(self.next_phase)
                .map(|p| p.1.to_owned())
                .unwrap_or_else(|| "Resultado listo".to_owned()),
            (RunStatus::Finished, _) => "Resultado listo".to_owned(),
            (s, _) => s.label().to_owned(),
        };
        let (summary, anchors, refs) = match (&self.result, status) {
            (Some(r), _) => (Some(r.text.clone()), r.anchors.clone(), r.refs.clone()),
            (None, RunStatus::Failed | RunStatus::Cancelled) => {
                (self.error.clone(), Vec::new(), Vec::new())
            }
            _ => (None, Vec::new(), Vec::new()),
        };
        RunProgress {
            run_id: self.id.clone(),
            title: self.title.clone(),
            phase,
            status,
            summary,
            refs,
            phases: self.phases(current),
            anchors,
        }
    }

    /// Every object the run has read, for resolving markers.
    fn known(&self, reg: &Registry, more: &[StoredCall]) -> KnownRefs {
        let mut calls: Vec<StoredCall> = self.calls().cloned().collect();
        calls.extend(more.iter().cloned());
        let mut known = KnownRefs::new();
        add_known(&mut known, reg, &calls);
        known
    }

    fn calls(&self) -> impl Iterator<Item = &StoredCall> {
        self.checkpoints.iter().flat_map(|c| c.calls.iter())
    }
}

fn add_known(known: &mut KnownRefs, reg: &Registry, calls: &[StoredCall]) {
    // Screens and comparisons label rows with their verdict ("RFC: con marcas…"); the
    // names from searches and aggregates win, so they are harvested last.
    let mut ordered: Vec<&StoredCall> = calls.iter().collect();
    ordered.sort_by_key(|c| !matches!(c.tool.as_str(), "market_screen" | "market_compare"));
    for c in ordered {
        let Some(env) = &c.envelope else { continue };
        let citations = reg
            .get(&c.tool)
            .map(|e| e.def.citations.clone())
            .unwrap_or_default();
        harvest(known, &c.call, &citations, env);
        // Aggregate rows read "Nombre: N adjudicaciones por $X" and screen rows
        // "RFC: nivel"; the name alone reads better where figures are anchored apart.
        if matches!(c.tool.as_str(), "market_aggregate" | "market_screen") {
            for row in &env.results {
                if row.ref_.starts_with("company:") {
                    if let Some((name, _)) = row.ref_label.split_once(": ") {
                        known.insert(row.ref_.clone(), name.to_owned());
                    }
                }
            }
        }
    }
}

fn to_anchors(r: &ResolvedNarration) -> Vec<Anchor> {
    r.anchors
        .iter()
        .map(|a| Anchor {
            start: a.start as u32,
            end: a.end as u32,
            label: r.text[a.start..a.end].to_owned(),
            reference: a.reference.clone(),
        })
        .collect()
}

/// Resolves marked-up text against what the run read; a sentence that does not
/// resolve is dropped (never shown with a bare figure).
fn resolve_markup(markup: &str, known: &KnownRefs) -> (String, Vec<Anchor>) {
    let resolved = match narration::resolve(markup, known) {
        Ok(r) => r,
        Err(_) => narration::trim_to_anchored(markup, known),
    };
    let anchors = to_anchors(&resolved);
    (resolved.text, anchors)
}

// ---------------------------------------------------------------- rows

fn decode<T: serde::de::DeserializeOwned + Default>(text: Option<String>) -> T {
    text.and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default()
}

fn run_from_row(row: &crate::store::DbRow) -> EngineResult<Run> {
    let result: Option<String> = row.try_get("result")?;
    Ok(Run {
        id: row.try_get("id")?,
        proposal_id: row.try_get("proposal_id")?,
        workspace_id: row.try_get("workspace_id")?,
        session_id: row.try_get("session_id")?,
        user_id: row.try_get("user_id")?,
        brief: row.try_get("brief")?,
        refs: decode(row.try_get("refs")?),
        title: row.try_get("title")?,
        status: row.try_get("status")?,
        inference_cap: row.try_get("inference_cap")?,
        inference_used: row.try_get("inference_used")?,
        next_phase: usize::try_from(row.try_get::<i64, _>("next_phase")?).unwrap_or(0),
        checkpoints: decode(row.try_get("checkpoints")?),
        result: result.and_then(|t| serde_json::from_str(&t).ok()),
        error: row.try_get("error")?,
        resumes: row.try_get("resumes")?,
        created_at: row.try_get("created_at")?,
    })
}

async fn load(
    conn: &mut crate::store::Conn,
    column: &str,
    value: &str,
) -> EngineResult<Option<Run>> {
    let sql = format!("select * from research_runs where {column} = ?");
    let sql = crate::store::numbered(&sql);
    let row = sqlx::query(&sql)
        .bind(value)
        .fetch_optional(&mut *conn)
        .await?;
    row.as_ref().map(run_from_row).transpose()
}

async fn load_run(engine: &Engine, run_id: &str) -> EngineResult<Option<Run>> {
    let mut conn = engine.store.pool().acquire().await?;
    load(&mut conn, "id", run_id).await
}

/// A run of the caller's workspace, by run id (`run:` prefix allowed).
pub async fn get(engine: &Engine, caller: &Caller, run_id: &str) -> EngineResult<Run> {
    let id = run_id.trim().trim_start_matches("run:");
    match load_run(engine, id).await? {
        Some(r) if r.workspace_id == caller.workspace_id && r.status != "propuesta" => Ok(r),
        _ => Err(EngineError::not_found("esa investigación")),
    }
}

/// A proposal of the caller's workspace that has not started yet.
pub async fn proposal(engine: &Engine, caller: &Caller, proposal_id: &str) -> EngineResult<Run> {
    let mut conn = engine.store.pool().acquire().await?;
    match load(&mut conn, "proposal_id", proposal_id.trim()).await? {
        Some(r) if r.workspace_id == caller.workspace_id => Ok(r),
        _ => Err(EngineError::not_found("esa propuesta de investigación")),
    }
}

async fn running_in(conn: &mut crate::store::Conn, workspace_id: &str) -> EngineResult<i64> {
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

// ---------------------------------------------------------------- propose / start

/// What `research_start` previews.
#[derive(Debug, Clone)]
pub struct Proposal {
    pub proposal_id: String,
    pub title: String,
    pub criterion: String,
    pub inference_cap: u32,
    /// Tool calls the run will make (each counts like a chat call).
    pub calls_estimate: u32,
    /// Créditos de inteligencia the searches and counts spend.
    pub credits_estimate: u32,
    /// When the proposal (and its card) expires, unix milliseconds.
    pub expires_at: i64,
}

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
    let mut tx = engine.sessions.begin().await?;
    let run = match load(&mut tx, "proposal_id", proposal_id.trim()).await? {
        Some(r) if r.workspace_id == caller.workspace_id => r,
        _ => return Err(EngineError::not_found("esa propuesta de investigación")),
    };
    if run.status != "propuesta" {
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

async fn stop(engine: &Engine, run_id: &str, status: &str, why: &str) -> EngineResult<Option<Run>> {
    let mut tx = engine.sessions.begin().await?;
    let moved = sqlx::query(
        "update research_runs set status = $1, error = $2, finished_at = $3, updated_at = $4
         where id = $5 and status = 'running'",
    )
    .bind(status)
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
        "cancelled",
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
    stop(engine, run_id, "failed", why).await?;
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
    let mut tx = engine.sessions.begin().await?;
    let run_id: Option<String> = sqlx::query_scalar(
        "select id from research_runs
         where workspace_id = $1 and session_id = $2 and status = 'running'
         order by started_at desc limit 1",
    )
    .bind(&caller.workspace_id)
    .bind(session_id)
    .fetch_optional(&mut *tx)
    .await?;
    let Some(run_id) = run_id else {
        tx.rollback().await?;
        return Ok(None);
    };
    sqlx::query("insert into research_steering (run_id, text, created_at) values ($1, $2, $3)")
        .bind(&run_id)
        .bind(text.trim())
        .bind(now_ms())
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(Some(run_id))
}

async fn pending_steering(engine: &Engine, run_id: &str) -> EngineResult<Vec<(i64, String)>> {
    let rows = sqlx::query(
        "select id, text from research_steering where run_id = $1 and applied_phase is null order by id",
    )
    .bind(run_id)
    .fetch_all(engine.store.pool())
    .await?;
    rows.iter()
        .map(|r| Ok((r.try_get("id")?, r.try_get("text")?)))
        .collect()
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
    let rows = sqlx::query(
        "select id from research_runs
          where status = 'running' and coalesce(lease_until, 0) < $1 order by started_at",
    )
    .bind(horizon)
    .fetch_all(engine.store.pool())
    .await?;
    let mut handles = Vec::new();
    for row in rows {
        let id: String = row.try_get("id")?;
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
        if run.status != "running" || run.next_phase >= PHASES.len() {
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

/// Appends `events` to the run's session in one transaction, only while the run is
/// still running (a cancelled run shows nothing more). False when it did not.
async fn append_while_running(
    engine: &Engine,
    run: &Run,
    events: &[SessionEvent],
) -> EngineResult<bool> {
    let Some(session_id) = &run.session_id else {
        return Ok(false);
    };
    let mut tx = engine.sessions.begin().await?;
    let status: Option<String> =
        sqlx::query_scalar("select status from research_runs where id = $1")
            .bind(&run.id)
            .fetch_optional(&mut *tx)
            .await?;
    if status.as_deref() != Some("running") {
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
        next.status = "finished".to_owned();
    }
    let mut tx = engine.sessions.begin().await?;
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
    .bind(&next.status)
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
