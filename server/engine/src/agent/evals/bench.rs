//! The brief bench: Spanish briefs run end to end through the local director on the
//! generated demo workspace (seeded, so two runs give the same report). Each brief
//! has turns with expected properties (intent kind, tools called, card kind, charge),
//! never exact text; every recorded trajectory also goes through the eight evals.
//!
//! A brief marked `pending` (with its reason) is run and reported but does not block:
//! its expectations describe behaviour another branch is building.

use std::collections::BTreeMap;
use std::path::Path;

use luna_protocol::account::{Plan, Role};
use serde::{Deserialize, Serialize};

use crate::accounts::Caller;
use crate::agent::decisions::{self, Resolution};
use crate::agent::director::planner::LocalDirector;
use crate::agent::turn::runner::run_turn;
use crate::agent::turn::trajectory::{self, Step, Trajectory};
use crate::base::catalog::text::fold;
use crate::base::error::{EngineError, EngineResult};
use crate::base::store::Store;
use crate::Engine;

use super::checks::{cheap_route, Eval};

/// The bench's briefs, embedded so the test and the command read the same file.
pub const BRIEFS_JSON: &str = include_str!("../../../evals/briefs.json");

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BriefFile {
    pub briefs: Vec<Brief>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Brief {
    pub id: String,
    /// What the brief covers (busqueda, conteo, comparacion, riesgo, …).
    pub topic: String,
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
}

pub fn briefs() -> EngineResult<Vec<Brief>> {
    serde_json::from_str::<BriefFile>(BRIEFS_JSON)
        .map(|f| f.briefs)
        .map_err(|e| EngineError::Internal(format!("evals/briefs.json: {e}")))
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Pass,
    Fail,
    Pending,
}

#[derive(Debug, Clone, Serialize)]
pub struct TurnReport {
    pub turn_id: String,
    pub message: String,
    pub intent: String,
    pub tools: Vec<String>,
    pub cards: Vec<String>,
    /// What the person read.
    pub narration: String,
    /// Expectations that did not hold.
    pub failures: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct BriefReport {
    pub id: String,
    pub topic: String,
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
            if *eval == Eval::CheapRoute {
                match cheap_route(set) {
                    Ok((cheap, total)) => {
                        detail = format!("{cheap} of {total} turns on the primary route")
                    }
                    Err(e) => failures.push(e),
                }
            }
            EvalReport {
                number: eval.number(),
                eval: *eval,
                title: eval.title().to_owned(),
                status: if failures.is_empty() {
                    Status::Pass
                } else {
                    Status::Fail
                },
                turns_checked: set.len(),
                failures,
                detail,
            }
        })
        .collect()
}

/// Checks one turn's expectations against its trajectory.
pub fn expectations(expect: &Expect, t: &Trajectory) -> Vec<String> {
    let mut failures = Vec::new();
    let intent = intent_name(t);
    if !expect.intent.is_empty() && !expect.intent.contains(&intent) {
        failures.push(format!(
            "intent {intent}, expected {}",
            expect.intent.join(" | ")
        ));
    }
    for tool in &expect.tools {
        if !t.tool_calls().any(|c| c.ok && c.tool == *tool) {
            failures.push(format!("{tool} was not called (or failed)"));
        }
    }
    for tool in &expect.tools_absent {
        if t.tool_calls().any(|c| c.tool == *tool) {
            failures.push(format!("{tool} was called"));
        }
    }
    let cards = t.decisions_proposed();
    match expect.card.as_deref() {
        Some("none") if !cards.is_empty() => {
            failures.push(format!("offered {}, expected no card", cards.join(", ")))
        }
        Some("none") | None => {}
        Some(kind) if !cards.contains(&kind) => failures.push(format!(
            "card {}, expected {kind}",
            if cards.is_empty() {
                "none".to_owned()
            } else {
                cards.join(", ")
            }
        )),
        Some(_) => {}
    }
    if let Some(tipo) = &expect.falta {
        match t.final_intent() {
            Some(crate::agent::turn::intent::TurnIntent::Limite { falta }) => {
                let got = serde_json::to_value(falta.tipo)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default();
                if got != *tipo {
                    failures.push(format!("falta {got}, expected {tipo}"));
                }
            }
            _ => failures.push(format!("expected a limite ({tipo})")),
        }
    }
    if let Some(campo) = &expect.pregunta {
        match t.final_intent() {
            Some(crate::agent::turn::intent::TurnIntent::Encuadre {
                pregunta: Some(p), ..
            }) => {
                let got = serde_json::to_value(p.campo)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default();
                if got != *campo {
                    failures.push(format!("asks about {got}, expected {campo}"));
                }
            }
            _ => failures.push(format!("expected a question about {campo}")),
        }
    }
    let charged: i64 = t.tool_calls().map(|c| c.charged).sum::<i64>()
        + t.steps
            .iter()
            .map(|s| match s {
                Step::DecisionResolved { credits, .. } => i64::from(*credits),
                _ => 0,
            })
            .sum::<i64>();
    if expect.charge && charged == 0 {
        failures.push("expected a charge after the person accepted, none happened".into());
    }
    if !expect.charge && charged > 0 {
        failures.push(format!("charged {charged} credits, expected no charge"));
    }
    // The director anchors every figure itself: a repaired or trimmed answer is a
    // director bug even when the delivered turn is valid.
    if let Some(Step::Finished {
        repaired, trimmed, ..
    }) = t
        .steps
        .iter()
        .rev()
        .find(|s| matches!(s, Step::Finished { .. }))
    {
        if *repaired || *trimmed {
            let problems: Vec<&str> = t
                .steps
                .iter()
                .filter_map(|s| match s {
                    Step::ModelAnswer {
                        accepted: false,
                        problems,
                        ..
                    } => Some(problems.iter().map(String::as_str)),
                    _ => None,
                })
                .flatten()
                .collect();
            failures.push(format!(
                "the answer needed a repair ({})",
                problems.join("; ")
            ));
        }
    }
    if let Some(via) = &expect.resolved_via {
        let vias: Vec<&str> = t
            .steps
            .iter()
            .filter_map(|s| match s {
                Step::DecisionResolved { via, .. } => Some(via.as_str()),
                _ => None,
            })
            .collect();
        if vias.is_empty() || vias.iter().any(|v| v != via) {
            failures.push(format!(
                "cards resolved by [{}], expected {via}",
                vias.join(", ")
            ));
        }
    }
    let narration = t.narration().map(|(n, _)| fold(n)).unwrap_or_default();
    for needle in &expect.narration_has {
        if !narration.contains(&fold(needle)) {
            failures.push(format!("the narration does not say «{needle}»"));
        }
    }
    failures
}

fn intent_name(t: &Trajectory) -> String {
    if t.refused() {
        return "refused".into();
    }
    t.final_intent()
        .map_or("unfinished", |i| i.kind())
        .to_owned()
}

/// A fresh engine on a temporary database with the generated demo data.
pub async fn demo_engine() -> EngineResult<Engine> {
    let engine = Engine::from_store(Store::open_temp().await?);
    engine.market.ensure_demo().await?;
    crate::crm::directory::ensure_demo(engine.crm.store()).await?;
    Ok(engine)
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
        for (i, turn) in brief.turns.iter().enumerate() {
            let turn_id = format!("{}-t{}", brief.id, i + 1);
            run_turn(
                engine,
                &LocalDirector,
                &caller,
                &session,
                &turn_id,
                &turn.message,
            )
            .await?;
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
                    decisions::resolve(engine, &caller, &session, &card.id, resolution).await?;
                }
            }
            turn_ids.push(turn_id);
        }
        let mut turns = Vec::new();
        let mut failed = false;
        for (turn, turn_id) in brief.turns.iter().zip(&turn_ids) {
            let t = trajectory::load(engine.store.pool(), &session, turn_id)
                .await?
                .ok_or_else(|| EngineError::Internal(format!("no trajectory for {turn_id}")))?;
            let failures = expectations(&turn.expect, &t);
            failed |= !failures.is_empty();
            turns.push(TurnReport {
                turn_id: turn_id.clone(),
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
            });
            all.push(t);
        }
        reports.push(BriefReport {
            id: brief.id.clone(),
            topic: brief.topic.clone(),
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
    let evals = evaluate(&set);
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
            evals_passed: evals.len() - evals_failed,
            evals_failed,
            green: failed == 0 && evals_failed == 0,
        },
        evals,
        briefs: reports,
    })
}

fn status_word(s: &Status) -> &'static str {
    match s {
        Status::Pass => "pass",
        Status::Fail => "**FAIL**",
        Status::Pending => "pending",
    }
}

/// The report as Markdown (no timestamps: two runs give the same text).
pub fn markdown(report: &Report) -> String {
    let s = &report.summary;
    let mut md = String::from("# Luna blocking evals and brief bench\n\n");
    md.push_str(
        "Generated by `cargo run -p luna-engine --bin evals` (local director, generated demo data).\n\n",
    );
    md.push_str(&format!(
        "**{}** — briefs: {} pass, {} fail, {} pending (of {}); turns: {}; evals: {} of {} pass.\n\n",
        if s.green { "GREEN" } else { "RED" },
        s.passed,
        s.failed,
        s.pending,
        s.briefs,
        s.turns,
        s.evals_passed,
        s.evals_passed + s.evals_failed
    ));
    md.push_str("## Evals\n\n| # | eval | result | turns | reason |\n|---|---|---|---|---|\n");
    for e in &report.evals {
        let reason = if e.failures.is_empty() {
            e.detail.clone()
        } else {
            e.failures.join("; ")
        };
        md.push_str(&format!(
            "| {} | {} | {} | {} | {} |\n",
            e.number,
            e.title,
            status_word(&e.status),
            e.turns_checked,
            reason.replace('|', "\\|")
        ));
    }
    md.push_str("\n## Briefs\n\n| brief | topic | result | turn | intent | cards | tools | narration | reason |\n|---|---|---|---|---|---|---|---|---|\n");
    for b in &report.briefs {
        for (i, t) in b.turns.iter().enumerate() {
            let mut reason = t.failures.join("; ");
            if i == 0 {
                if let Some(p) = &b.pending {
                    reason = format!("pending: {p}. {reason}");
                }
            }
            md.push_str(&format!(
                "| {} | {} | {} | {} «{}» | {} | {} | {} | {} | {} |\n",
                if i == 0 { b.id.as_str() } else { "" },
                if i == 0 { b.topic.as_str() } else { "" },
                if i == 0 { status_word(&b.status) } else { "" },
                t.turn_id,
                t.message.replace('|', "\\|"),
                t.intent,
                if t.cards.is_empty() {
                    "—".to_owned()
                } else {
                    t.cards.join(", ")
                },
                t.tools.join(", "),
                t.narration.replace('|', "\\|").replace('\n', " "),
                reason.replace('|', "\\|").trim()
            ));
        }
    }
    md
}

/// A short summary for the terminal.
pub fn summary_line(report: &Report) -> String {
    let s = &report.summary;
    let mut out = format!(
        "evals: {} — {} briefs ({} pass, {} fail, {} pending), {} turns, {}/8 evals pass\n",
        if s.green { "GREEN" } else { "RED" },
        s.briefs,
        s.passed,
        s.failed,
        s.pending,
        s.turns,
        s.evals_passed
    );
    for e in &report.evals {
        out.push_str(&format!(
            "  {} {:<62} {}\n",
            e.number,
            e.title,
            if e.status == Status::Pass {
                "pass"
            } else {
                "FAIL"
            }
        ));
    }
    let mut by_status: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for b in &report.briefs {
        let key = match b.status {
            Status::Pass => continue,
            Status::Fail => "failed",
            Status::Pending => "pending",
        };
        by_status.entry(key).or_default().push(&b.id);
    }
    for (k, ids) in by_status {
        out.push_str(&format!("  {k}: {}\n", ids.join(", ")));
    }
    out
}

/// Writes `report.md` and `report.json` into `dir`.
pub fn write(report: &Report, dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join("report.md"), markdown(report))?;
    let json = serde_json::to_string_pretty(report).map_err(std::io::Error::other)?;
    std::fs::write(dir.join("report.json"), json + "\n")
}
