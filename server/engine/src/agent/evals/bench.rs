//! The brief bench: Spanish briefs run end to end through the local director on the
//! generated demo workspace (seeded, so two runs give the same report). Each brief
//! has turns with expected properties (intent kind, tools called, card kind, charge),
//! never exact text; every recorded trajectory also goes through the eight evals.
//!
//! A brief marked `pending` (with its reason) is run and reported but does not block:
//! its expectations describe behaviour another branch is building.
//!
//! Three files: `briefs.json` (the regression set that keeps the eight evals green),
//! `briefs_public.json` and `briefs_heldout.json` (issue 22: requests typed as people
//! type, with expectations on meaning — see [`super::meaning`] — that measure the
//! director and never block). The held-out file is reported in aggregate only.

use luna_protocol::account::{Plan, Role};
use serde::{Deserialize, Serialize};

use crate::accounts::Caller;
use crate::agent::contract::trajectory::{self, Trajectory};
use crate::agent::decisions::{self, Resolution};
use crate::agent::director::planner::LocalDirector;
use crate::agent::turn::runner::run_turn;
use crate::base::error::{EngineError, EngineResult};
use crate::base::store::Store;
use crate::Engine;

use super::checks::{cheap_route, Eval};
use super::expect::intent_name;
pub use super::expect::{expectations, unasked_changes};
use super::meaning::{BoardDelta, ExpectedCall};
pub use super::report::{markdown, summary_line, write};
use super::undo;

/// The bench's briefs, embedded so the test and the command read the same file.
pub const BRIEFS_JSON: &str = include_str!("../../../evals/briefs.json");
/// Issue 22's public briefs (two thirds, stratified by kind).
pub const PUBLIC_JSON: &str = include_str!("../../../evals/briefs_public.json");
/// Issue 22's held-out briefs (one third): reported in aggregate only.
pub const HELDOUT_JSON: &str = include_str!("../../../evals/briefs_heldout.json");

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BriefFile {
    /// How the file was made (authors, split method and seed).
    #[serde(default)]
    pub about: Option<String>,
    pub briefs: Vec<Brief>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Brief {
    pub id: String,
    /// What the brief covers (busqueda, conteo, comparacion, riesgo, …).
    pub topic: String,
    /// The request kind (issue 22's list: search, count, …) for the per-kind table.
    #[serde(default)]
    pub kind: Option<String>,
    /// Set when the expected behaviour is not built yet: reported, not blocking.
    #[serde(default)]
    pub pending: Option<String>,
    /// Runs the session in *Automático con presupuesto* with these caps.
    #[serde(default)]
    pub auto: Option<AutoBudget>,
    pub turns: Vec<BriefTurn>,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AutoBudget {
    pub credit_cap: u32,
    pub contact_cap: u32,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BriefTurn {
    pub message: String,
    /// This turn's request kind when it differs from the brief's (a follow-up).
    #[serde(default)]
    pub kind: Option<String>,
    #[serde(default)]
    pub expect: Expect,
    /// What the person does with the cards left pending after this turn.
    #[serde(default)]
    pub then: Option<Then>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Then {
    Accept,
    Decline,
}

/// Expected properties of a turn. Empty/absent fields are not checked, except
/// `charge`: a turn is expected to charge nothing unless it says `charge: true`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// Allowed final intent kinds (`responder`, `encuadre`, `proponer_decision`,
    /// `cierre`, `limite`).
    #[serde(default)]
    pub intent: Vec<String>,
    /// Tools that must have been called successfully, in any order.
    #[serde(default)]
    pub tools: Vec<String>,
    /// Tools that must not have been called.
    #[serde(default)]
    pub tools_absent: Vec<String>,
    /// The card offered (a decision kind), or `"none"`.
    #[serde(default)]
    pub card: Option<String>,
    /// For a `limite`: the `falta.tipo`.
    #[serde(default)]
    pub falta: Option<String>,
    /// For an `encuadre` question: the field it asks about.
    #[serde(default)]
    pub pregunta: Option<String>,
    /// Whether credits are charged in this turn (after its cards are resolved).
    #[serde(default)]
    pub charge: bool,
    /// Who resolved this turn's cards (`person` or `auto`): at least one, all by it.
    #[serde(default)]
    pub resolved_via: Option<String>,
    /// Folded substrings the narration must contain.
    #[serde(default)]
    pub narration_has: Vec<String>,
    /// Tool calls that must have succeeded with (at least) these arguments.
    #[serde(default)]
    pub calls: Vec<ExpectedCall>,
    /// The board's selection after the turn equals the one before.
    #[serde(default)]
    pub selection_unchanged: bool,
    /// The saved list on the board after the turn equals the one before.
    #[serde(default)]
    pub saved_unchanged: bool,
    /// The sequence drafts on the board after the turn equal the ones before.
    #[serde(default)]
    pub drafts_unchanged: bool,
    /// How many companies the selection holds after the turn.
    #[serde(default)]
    pub selection_size: Option<usize>,
}

pub fn briefs() -> EngineResult<Vec<Brief>> {
    load(BRIEFS_JSON, "briefs.json").map(|f| f.briefs)
}

/// Parses one brief file (`name` only labels the error).
pub fn load(json: &str, name: &str) -> EngineResult<BriefFile> {
    serde_json::from_str::<BriefFile>(json)
        .map_err(|e| EngineError::Internal(format!("evals/{name}: {e}")))
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Pass,
    Fail,
    Pending,
    /// An eval with nothing to measure in this set (eval 7 on the local director).
    NotMeasured,
}

#[derive(Debug, Clone, Serialize)]
pub struct TurnReport {
    pub turn_id: String,
    /// The request kind (the turn's, else the brief's).
    pub kind: Option<String>,
    pub message: String,
    pub intent: String,
    pub tools: Vec<String>,
    pub cards: Vec<String>,
    /// What the person read.
    pub narration: String,
    /// Expectations that did not hold.
    pub failures: Vec<String>,
    /// What the turn changed although the brief says the person did not ask
    /// (`selection`, `saved`, `drafts`).
    pub unasked_changes: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct BriefReport {
    pub id: String,
    pub topic: String,
    pub kind: Option<String>,
    pub status: Status,
    pub pending: Option<String>,
    pub turns: Vec<TurnReport>,
}

#[derive(Debug, Clone, Serialize)]
pub struct EvalReport {
    pub number: u8,
    pub eval: Eval,
    pub title: String,
    pub status: Status,
    pub turns_checked: usize,
    /// `turn_id: reason`, for each turn that broke it (or the set's reason for 7).
    pub failures: Vec<String>,
    pub detail: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub briefs: usize,
    pub passed: usize,
    pub failed: usize,
    pub pending: usize,
    pub turns: usize,
    pub evals_passed: usize,
    pub evals_failed: usize,
    /// Evals with nothing to measure in this set (eval 7 on the local director).
    pub evals_not_measured: usize,
    /// True when nothing blocking failed.
    pub green: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub summary: Summary,
    pub evals: Vec<EvalReport>,
    pub briefs: Vec<BriefReport>,
}

/// Runs the eight evals over a set of trajectories.
pub fn evaluate(set: &[&Trajectory]) -> Vec<EvalReport> {
    Eval::ALL
        .iter()
        .map(|eval| {
            let mut failures: Vec<String> = set
                .iter()
                .filter_map(|t| {
                    eval.check(t)
                        .err()
                        .map(|reason| format!("{}: {reason}", t.turn_id))
                })
                .collect();
            let mut detail = String::new();
            let mut measured = true;
            if *eval == Eval::CheapRoute {
                match cheap_route(set) {
                    Ok(Some((primary, total))) => {
                        detail = format!("{primary} of {total} model turns on the primary route")
                    }
                    Ok(None) => {
                        measured = false;
                        detail = "not measured: no turn ran on a configured model (the local \
                                  director and scripted models take no route)"
                            .to_owned();
                    }
                    Err(e) => failures.push(e),
                }
            }
            EvalReport {
                number: eval.number(),
                eval: *eval,
                title: eval.title().to_owned(),
                status: match (failures.is_empty(), measured) {
                    (false, _) => Status::Fail,
                    (true, true) => Status::Pass,
                    (true, false) => Status::NotMeasured,
                },
                turns_checked: set.len(),
                failures,
                detail,
            }
        })
        .collect()
}

/// A fresh engine on a temporary database with the generated demo data.
pub async fn demo_engine() -> EngineResult<Engine> {
    let engine = Engine::from_store(Store::open_temp().await?);
    engine.market.ensure_demo().await?;
    crate::crm::directory::ensure_demo(engine.crm.store()).await?;
    Ok(engine)
}

/// The session's board as the person sees it now.
async fn board(
    engine: &Engine,
    caller: &Caller,
    session: &str,
) -> EngineResult<luna_protocol::board::Board> {
    Ok(engine
        .sessions
        .snapshot_at_latest(caller, session)
        .await?
        .view
        .board)
}

/// Runs every brief end to end through the local director, one workspace and
/// session each, then evaluates the persisted trajectories.
pub async fn run(engine: &Engine, briefs: &[Brief]) -> EngineResult<Report> {
    let user_id = engine
        .accounts
        .create_user(
            "banco@evals.luna.mx",
            "Banco de Pruebas",
            "banco-de-pruebas-1",
        )
        .await?;
    let mut reports = Vec::new();
    let mut all: Vec<Trajectory> = Vec::new();
    let mut probes = Vec::new();
    for brief in briefs {
        let name = format!("Banco {}", brief.id);
        let workspace_id = engine
            .accounts
            .create_workspace(&name, Plan::Founder)
            .await?;
        engine
            .accounts
            .add_member(&workspace_id, &user_id, Role::Member)
            .await?;
        crate::crm::demo::seed_workspace(&engine.store, &workspace_id).await?;
        crate::knowledge::demo::seed(&engine.knowledge, &workspace_id, &user_id).await?;
        let caller = Caller {
            user_id: user_id.clone(),
            email: "banco@evals.luna.mx".into(),
            display_name: "Banco de Pruebas".into(),
            workspace_id,
            workspace_name: name,
            role: Role::Member,
            plan: Plan::Founder,
            api_key: None,
        };
        let session = engine.sessions.create(&caller).await?.id;
        if let Some(budget) = brief.auto {
            decisions::auto::set_mode(
                engine,
                &caller,
                &session,
                &luna_protocol::session::ModeRequest {
                    mode: luna_protocol::session::SessionMode::Automatico,
                    credit_cap: Some(budget.credit_cap),
                    contact_cap: Some(budget.contact_cap),
                    classes: None,
                },
            )
            .await?;
        }
        let mut turn_ids = Vec::new();
        let mut deltas = Vec::new();
        for (i, turn) in brief.turns.iter().enumerate() {
            let turn_id = format!("{}-t{}", brief.id, i + 1);
            let before = board(engine, &caller, &session).await?;
            let crm_before = undo::CrmState::read(&engine.store, &caller.workspace_id).await?;
            run_turn(
                engine,
                &LocalDirector,
                &caller,
                &session,
                &turn_id,
                &turn.message,
            )
            .await?;
            deltas.push(BoardDelta::between(
                &before,
                &board(engine, &caller, &session).await?,
            ));
            // Before any card is resolved: the undos cover this turn's writes alone.
            if let Some(t) = trajectory::load(engine.store.pool(), &session, &turn_id).await? {
                let probe = undo::probe(engine, &caller, &session, &t, &crm_before).await?;
                probes.push((turn_id.clone(), probe));
            }
            if let Some(then) = turn.then {
                let pending = engine
                    .sessions
                    .snapshot_at_latest(&caller, &session)
                    .await?
                    .view
                    .board
                    .pending;
                for card in pending {
                    let resolution = match then {
                        Then::Accept => Resolution::Accept,
                        Then::Decline => Resolution::Decline,
                    };
                    decisions::resolve(engine, &caller, &session, &card.id, resolution, None)
                        .await?;
                }
            }
            turn_ids.push(turn_id);
        }
        let mut turns = Vec::new();
        let mut failed = false;
        for ((turn, turn_id), delta) in brief.turns.iter().zip(&turn_ids).zip(&deltas) {
            let t = trajectory::load(engine.store.pool(), &session, turn_id)
                .await?
                .ok_or_else(|| EngineError::Internal(format!("no trajectory for {turn_id}")))?;
            let failures = expectations(&turn.expect, &t, delta);
            failed |= !failures.is_empty();
            turns.push(TurnReport {
                turn_id: turn_id.clone(),
                kind: turn.kind.clone().or_else(|| brief.kind.clone()),
                message: turn.message.clone(),
                intent: intent_name(&t),
                tools: t.tool_names().iter().map(|s| (*s).to_owned()).collect(),
                cards: t
                    .decisions_proposed()
                    .iter()
                    .map(|s| (*s).to_owned())
                    .collect(),
                narration: t.narration().map(|(n, _)| n.to_owned()).unwrap_or_default(),
                failures,
                unasked_changes: unasked_changes(&turn.expect, delta),
            });
            all.push(t);
        }
        reports.push(BriefReport {
            id: brief.id.clone(),
            topic: brief.topic.clone(),
            kind: brief.kind.clone(),
            status: match (&brief.pending, failed) {
                (Some(_), _) => Status::Pending,
                (None, true) => Status::Fail,
                (None, false) => Status::Pass,
            },
            pending: brief.pending.clone(),
            turns,
        });
    }
    let set: Vec<&Trajectory> = all.iter().collect();
    let mut evals = evaluate(&set);
    undo::report(&mut evals, &probes);
    let count = |s: Status| reports.iter().filter(|b| b.status == s).count();
    let evals_failed = evals.iter().filter(|e| e.status == Status::Fail).count();
    let failed = count(Status::Fail);
    Ok(Report {
        summary: Summary {
            briefs: reports.len(),
            passed: count(Status::Pass),
            failed,
            pending: count(Status::Pending),
            turns: all.len(),
            evals_passed: evals.iter().filter(|e| e.status == Status::Pass).count(),
            evals_failed,
            evals_not_measured: evals
                .iter()
                .filter(|e| e.status == Status::NotMeasured)
                .count(),
            green: failed == 0 && evals_failed == 0,
        },
        evals,
        briefs: reports,
    })
}
