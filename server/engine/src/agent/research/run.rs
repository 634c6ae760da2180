//! A run as stored: its checkpoints (the calls each phase made and what it found), its
//! result, and reading it back from `research_runs`.

use super::*;

use luna_protocol::board::{PhaseStatus, RunPhase, RunStatus};
use luna_protocol::event::{Anchor, RunProgress};
use luna_protocol::tool::Envelope;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::accounts::Caller;
use crate::agent::contract::gateway::{Exchange, ToolCall};
use crate::agent::contract::narration::{self, KnownRefs};
use crate::agent::contract::results::harvest;
use crate::base::error::{EngineError, EngineResult};
use crate::base::stored::{self, text_enum};
use crate::registry::Registry;
use crate::Engine;

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

text_enum! {
    /// Where a run stands (`research_runs.status`): a proposal until accepted, then
    /// running until it finishes, fails or is cancelled.
    pub enum RunState {
        Propuesta = "propuesta",
        Running = "running",
        Finished = "finished",
        Failed = "failed",
        Cancelled = "cancelled",
    }
}

impl RunState {
    /// The board's status (a proposal not started yet shows as running).
    pub fn run_status(self) -> RunStatus {
        match self {
            RunState::Propuesta | RunState::Running => RunStatus::Running,
            RunState::Finished => RunStatus::Finished,
            RunState::Failed => RunStatus::Failed,
            RunState::Cancelled => RunStatus::Cancelled,
        }
    }
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
    pub status: RunState,
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
        self.status.run_status()
    }

    pub(super) fn frame(&self) -> Frame {
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
    pub(super) fn known(&self, reg: &Registry, more: &[StoredCall]) -> KnownRefs {
        let mut calls: Vec<StoredCall> = self.calls().cloned().collect();
        calls.extend(more.iter().cloned());
        let mut known = KnownRefs::new();
        add_known(&mut known, reg, &calls);
        known
    }

    pub(super) fn calls(&self) -> impl Iterator<Item = &StoredCall> {
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

/// Resolves marked-up text against what the run read; a sentence that does not
/// resolve is dropped (never shown with a bare figure).
pub(super) fn resolve_markup(markup: &str, known: &KnownRefs) -> (String, Vec<Anchor>) {
    let resolved = match narration::resolve(markup, known) {
        Ok(r) => r,
        Err(_) => narration::trim_to_anchored(markup, known),
    };
    let anchors = resolved.wire_anchors();
    (resolved.text, anchors)
}

// ---------------------------------------------------------------- rows

/// `research_runs` as stored; [`Run`] is it decoded. `refs`, `checkpoints` and (once
/// finished) `result` are JSON text.
#[derive(sqlx::FromRow)]
struct StoredRun {
    id: String,
    proposal_id: String,
    workspace_id: String,
    session_id: Option<String>,
    user_id: String,
    brief: String,
    refs: String,
    title: String,
    status: String,
    inference_cap: i64,
    inference_used: i64,
    next_phase: i64,
    checkpoints: String,
    result: Option<String>,
    error: Option<String>,
    resumes: i64,
    created_at: i64,
}

impl TryFrom<StoredRun> for Run {
    type Error = EngineError;

    fn try_from(r: StoredRun) -> EngineResult<Run> {
        Ok(Run {
            refs: stored::json("research_runs.refs", &r.refs)?,
            status: r.status.parse()?,
            next_phase: usize::try_from(r.next_phase).unwrap_or(0),
            checkpoints: stored::json("research_runs.checkpoints", &r.checkpoints)?,
            result: stored::opt_json("research_runs.result", r.result.as_deref())?,
            id: r.id,
            proposal_id: r.proposal_id,
            workspace_id: r.workspace_id,
            session_id: r.session_id,
            user_id: r.user_id,
            brief: r.brief,
            title: r.title,
            inference_cap: r.inference_cap,
            inference_used: r.inference_used,
            error: r.error,
            resumes: r.resumes,
            created_at: r.created_at,
        })
    }
}

pub(super) async fn load(
    conn: &mut crate::base::store::Conn,
    column: &str,
    value: &str,
) -> EngineResult<Option<Run>> {
    let sql = format!("select * from research_runs where {column} = ?");
    let sql = crate::base::store::numbered(&sql);
    sqlx::query_as::<_, StoredRun>(&sql)
        .bind(value)
        .fetch_optional(&mut *conn)
        .await?
        .map(Run::try_from)
        .transpose()
}

pub(super) async fn load_run(engine: &Engine, run_id: &str) -> EngineResult<Option<Run>> {
    let mut conn = engine.store.pool().acquire().await?;
    load(&mut conn, "id", run_id).await
}

/// A run of the caller's workspace, by run id (`run:` prefix allowed).
pub async fn get(engine: &Engine, caller: &Caller, run_id: &str) -> EngineResult<Run> {
    let id = run_id.trim().trim_start_matches("run:");
    match load_run(engine, id).await? {
        Some(r) if r.workspace_id == caller.workspace_id && r.status != RunState::Propuesta => {
            Ok(r)
        }
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

#[cfg(test)]
mod state_tests {
    use super::*;

    #[test]
    fn a_run_state_round_trips_and_unknown_text_is_an_error() {
        stored::assert_round_trips::<RunState>();
        assert_eq!(RunState::Propuesta.run_status(), RunStatus::Running);
        assert_eq!(RunState::Cancelled.run_status(), RunStatus::Cancelled);
    }
}
