//! The trajectory of a turn (issues 6 and 11): every step — tool calls with arguments
//! and results, the model's answers (accepted or sent to repair), the narration with
//! its anchors, the decisions offered and how they were resolved, the route — in one
//! serialisable type that the blocking evals (the agent's `evals`) read.
//!
//! The runner records it while the turn runs ([`Recorder`]), in the same places it
//! appends session events, and persists each step in `trajectory_steps`; resolving a
//! decision later appends its step to the turn that proposed it ([`append_in`]).
//! [`load`] reads a trajectory back. Server-only: it never reaches a browser or a model.

use luna_protocol::session::Stage;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sqlx::{AnyPool, Row};

use crate::base::store::{Conn, Statement, WriteBatch};

use crate::base::clock::now_ms;
use crate::base::error::{EngineError, EngineResult};

use super::gateway::Route;
use super::intent::{FactLedger, TurnIntent};
use super::narration::AnchorSpan;

/// One turn, step by step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trajectory {
    pub session_id: String,
    pub turn_id: String,
    pub message: String,
    pub stage: Stage,
    /// The fact ledger the question governor used for this turn.
    pub facts: FactLedger,
    pub steps: Vec<Step>,
}

/// A tool call as the runner made it and what came back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolStep {
    /// The turn-local handle (`c1`, `c2`, …) that evidence refs cite.
    pub call: String,
    pub tool: String,
    pub args: Value,
    /// Authorization level of the tool (0, 1, 2; 3 = never from chat; 0 if unknown).
    pub level: u8,
    /// True when the tool writes or deletes (its side effect is not `None`).
    pub writes: bool,
    pub ok: bool,
    pub error_code: Option<String>,
    /// The client-safe envelope or `{error:{…}}`, as the model saw it.
    pub result: Value,
    /// Créditos de contacto (prepaid money) the call itself charged.
    pub charged: i64,
    /// Créditos de inteligencia (the plan's monthly allowance) the call consumed:
    /// metering of free-by-design navigation, not a charge.
    #[serde(default)]
    pub metered: i64,
    /// The undo token the `tool.finished` event carried, if any.
    pub undo_token: Option<String>,
}

/// One model attempt of the turn (from `model_attempts`; empty for local/scripted).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attempt {
    pub route: String,
    pub reason: Option<String>,
    pub outcome: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Step {
    ToolCall(ToolStep),
    /// A final answer from the model; `accepted` false means it went to repair or was
    /// trimmed (`problems` says why).
    ModelAnswer {
        intent: TurnIntent,
        narracion: String,
        accepted: bool,
        problems: Vec<String>,
    },
    /// The narration the person read (resolved text and its anchors).
    Narration {
        text: String,
        anchors: Vec<AnchorSpan>,
    },
    /// A card offered in the session.
    DecisionProposed {
        decision_id: String,
        /// `DecisionKind` in snake case (`revelar_contactos`, …).
        decision: String,
        level: u8,
        /// The proposal, quote or sequence id the card was prepared from.
        source: Option<String>,
        credits: u32,
        contacts: u32,
    },
    /// A card resolved, by a person or by the auto policy.
    DecisionResolved {
        decision_id: String,
        decision: String,
        outcome: String,
        /// `person` or `auto`.
        via: String,
        credits: u32,
        contacts: u32,
        receipt: Option<String>,
    },
    /// How the turn ended.
    Finished {
        intent: TurnIntent,
        route: Route,
        attempts: Vec<Attempt>,
        repaired: bool,
        trimmed: bool,
        model_steps: usize,
    },
    /// The model gates refused the turn.
    Refused {
        code: String,
        route: Route,
        attempts: Vec<Attempt>,
    },
}

impl Step {
    pub fn kind(&self) -> &'static str {
        match self {
            Step::ToolCall(_) => "tool_call",
            Step::ModelAnswer { .. } => "model_answer",
            Step::Narration { .. } => "narration",
            Step::DecisionProposed { .. } => "decision_proposed",
            Step::DecisionResolved { .. } => "decision_resolved",
            Step::Finished { .. } => "finished",
            Step::Refused { .. } => "refused",
        }
    }
}

impl Trajectory {
    pub fn new(session_id: &str, turn_id: &str, message: &str, stage: Stage) -> Self {
        Trajectory {
            session_id: session_id.to_owned(),
            turn_id: turn_id.to_owned(),
            message: message.to_owned(),
            stage,
            facts: FactLedger::default(),
            steps: Vec::new(),
        }
    }

    pub fn push(&mut self, step: Step) -> &mut Self {
        self.steps.push(step);
        self
    }

    pub fn tool_calls(&self) -> impl Iterator<Item = &ToolStep> {
        self.steps.iter().filter_map(|s| match s {
            Step::ToolCall(t) => Some(t),
            _ => None,
        })
    }

    pub fn tool_names(&self) -> Vec<&str> {
        self.tool_calls().map(|t| t.tool.as_str()).collect()
    }

    pub fn call(&self, handle: &str) -> Option<&ToolStep> {
        self.tool_calls().find(|t| t.call == handle)
    }

    /// The intent the person got (`limite` for a refused turn), if the turn ended.
    pub fn final_intent(&self) -> Option<&TurnIntent> {
        self.steps.iter().rev().find_map(|s| match s {
            Step::Finished { intent, .. } => Some(intent),
            _ => None,
        })
    }

    pub fn refused(&self) -> bool {
        self.steps.iter().any(|s| matches!(s, Step::Refused { .. }))
    }

    /// The route that finally answered the turn.
    pub fn route(&self) -> Option<Route> {
        self.steps.iter().rev().find_map(|s| match s {
            Step::Finished { route, .. } | Step::Refused { route, .. } => Some(*route),
            _ => None,
        })
    }

    pub fn attempts(&self) -> &[Attempt] {
        self.steps
            .iter()
            .rev()
            .find_map(|s| match s {
                Step::Finished { attempts, .. } | Step::Refused { attempts, .. } => {
                    Some(attempts.as_slice())
                }
                _ => None,
            })
            .unwrap_or(&[])
    }

    /// The narration the person read.
    pub fn narration(&self) -> Option<(&str, &[AnchorSpan])> {
        self.steps.iter().rev().find_map(|s| match s {
            Step::Narration { text, anchors } => Some((text.as_str(), anchors.as_slice())),
            _ => None,
        })
    }

    /// The kinds of the cards offered in this turn.
    pub fn decisions_proposed(&self) -> Vec<&str> {
        self.steps
            .iter()
            .filter_map(|s| match s {
                Step::DecisionProposed { decision, .. } => Some(decision.as_str()),
                _ => None,
            })
            .collect()
    }
}

/// Records a running turn: keeps the trajectory in memory and persists every step.
pub struct Recorder {
    pool: AnyPool,
    pub trajectory: Trajectory,
}

impl Recorder {
    /// Starts the trajectory of a turn (its header row).
    #[tracing::instrument(level = "trace", name = "turn.trajectory", skip_all)]
    pub async fn start(
        pool: &AnyPool,
        workspace_id: &str,
        trajectory: Trajectory,
    ) -> EngineResult<Recorder> {
        sqlx::query(
            "insert into turn_trajectories (session_id, turn_id, workspace_id, message, stage, facts, created_at)
             values ($1, $2, $3, $4, $5, $6, $7) on conflict (session_id, turn_id) do nothing",
        )
        .bind(&trajectory.session_id)
        .bind(&trajectory.turn_id)
        .bind(workspace_id)
        .bind(&trajectory.message)
        .bind(trajectory.stage.as_str())
        .bind(to_json(&trajectory.facts)?)
        .bind(now_ms())
        .execute(pool)
        .await?;
        Ok(Recorder {
            pool: pool.clone(),
            trajectory,
        })
    }

    /// Replaces the turn's fact ledger (what the turn ended knowing).
    #[tracing::instrument(level = "trace", name = "turn.trajectory", skip_all)]
    pub async fn set_facts(&mut self, facts: &FactLedger) -> EngineResult<()> {
        sqlx::query(
            "update turn_trajectories set facts = $1 where session_id = $2 and turn_id = $3",
        )
        .bind(to_json(facts)?)
        .bind(&self.trajectory.session_id)
        .bind(&self.trajectory.turn_id)
        .execute(&self.pool)
        .await?;
        self.trajectory.facts = facts.clone();
        Ok(())
    }

    /// Appends `events` to the session's log and `step` to the trajectory in one
    /// transaction, commits, then publishes the events and keeps the step in memory.
    pub async fn log(
        &mut self,
        sessions: &crate::session::Sessions,
        events: &[luna_protocol::event::SessionEvent],
        step: Step,
    ) -> EngineResult<()> {
        let batch = sessions.begin_batch(&self.trajectory.session_id).await?;
        self.log_in(sessions, batch, events, step).await
    }

    /// [`Recorder::log`] in `batch`, the session's write transaction the caller began
    /// ([`crate::session::Sessions::begin_batch`]) and may have written in already (a
    /// tool call's charges and telemetry row): all of it commits here, together, and on
    /// SQLite what is still queued goes in the commit's round trip.
    #[tracing::instrument(level = "trace", name = "session.append", skip_all)]
    pub async fn log_in(
        &mut self,
        sessions: &crate::session::Sessions,
        mut batch: WriteBatch,
        events: &[luna_protocol::event::SessionEvent],
        step: Step,
    ) -> EngineResult<()> {
        let session_id = self.trajectory.session_id.as_str();
        let mut queued = Vec::with_capacity(events.len());
        for event in events {
            queued.push(sessions.queue(&mut batch, session_id, event).await?);
        }
        batch
            .push(step_statement(session_id, &self.trajectory.turn_id, &step)?)
            .await?;
        let outcomes = batch.commit().await?;
        let appended = sessions.committed(&outcomes, queued).await?;
        sessions.publish(appended);
        self.trajectory.steps.push(step);
        Ok(())
    }

    /// Appends a step, in memory and in the table.
    #[tracing::instrument(level = "trace", name = "turn.trajectory", skip_all)]
    pub async fn push(&mut self, step: Step) -> EngineResult<()> {
        let mut conn = self.pool.acquire().await?;
        append_in(
            &mut conn,
            &self.trajectory.session_id,
            &self.trajectory.turn_id,
            &step,
        )
        .await?;
        self.trajectory.steps.push(step);
        Ok(())
    }
}

fn to_json<T: Serialize>(value: &T) -> EngineResult<String> {
    serde_json::to_string(value).map_err(|e| EngineError::Internal(format!("trajectory: {e}")))
}

/// Appends a step to the trajectory of `(session_id, turn_id)` on `conn` (inside the
/// caller's transaction when it has one).
pub async fn append_in(
    conn: &mut Conn,
    session_id: &str,
    turn_id: &str,
    step: &Step,
) -> EngineResult<()> {
    step_statement(session_id, turn_id, step)?.run(conn).await?;
    Ok(())
}

/// The insert of one step, to run or to send in a [`WriteBatch`].
fn step_statement(session_id: &str, turn_id: &str, step: &Step) -> EngineResult<Statement> {
    Ok(Statement::new(
        "insert into trajectory_steps (session_id, turn_id, kind, body, created_at) values ($1, $2, $3, $4, $5)",
    )
    .bind(session_id)
    .bind(turn_id)
    .bind(step.kind())
    .bind(to_json(step)?)
    .bind(now_ms()))
}

/// Reads a persisted trajectory (`None` if the turn recorded none).
pub async fn load(
    pool: &AnyPool,
    session_id: &str,
    turn_id: &str,
) -> EngineResult<Option<Trajectory>> {
    let Some(head) = sqlx::query(
        "select message, stage, facts from turn_trajectories where session_id = $1 and turn_id = $2",
    )
    .bind(session_id)
    .bind(turn_id)
    .fetch_optional(pool)
    .await?
    else {
        return Ok(None);
    };
    let stage: String = head.get("stage");
    let stage = serde_json::from_value(Value::String(stage))
        .map_err(|e| EngineError::Internal(format!("trajectory stage: {e}")))?;
    let facts: String = head.get("facts");
    let facts = serde_json::from_str(&facts)
        .map_err(|e| EngineError::Internal(format!("trajectory facts: {e}")))?;
    let rows = sqlx::query(
        "select body from trajectory_steps where session_id = $1 and turn_id = $2 order by id",
    )
    .bind(session_id)
    .bind(turn_id)
    .fetch_all(pool)
    .await?;
    let mut steps = Vec::with_capacity(rows.len());
    for row in rows {
        let body: String = row.get("body");
        steps.push(
            serde_json::from_str(&body)
                .map_err(|e| EngineError::Internal(format!("trajectory step: {e}")))?,
        );
    }
    Ok(Some(Trajectory {
        session_id: session_id.to_owned(),
        turn_id: turn_id.to_owned(),
        message: head.get("message"),
        stage,
        facts,
        steps,
    }))
}

/// The model attempts `model_attempts` holds for a turn, in order.
#[tracing::instrument(level = "trace", name = "turn.trajectory", skip_all)]
pub async fn attempts_of(pool: &AnyPool, turn_id: &str) -> EngineResult<Vec<Attempt>> {
    let rows = sqlx::query(
        "select route, reason, outcome from model_attempts where turn_id = $1 order by id",
    )
    .bind(turn_id)
    .fetch_all(pool)
    .await?;
    Ok(rows
        .iter()
        .map(|r| Attempt {
            route: r.get("route"),
            reason: r.get("reason"),
            outcome: r.get("outcome"),
        })
        .collect())
}
