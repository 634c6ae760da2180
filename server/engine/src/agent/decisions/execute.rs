//! Executing an accepted decision: the domain call each target maps to, always with
//! the key the server minted when the card was proposed, so a replay (a second tab, a
//! retry, a crash between execution and the log) executes nothing twice.

use luna_protocol::board::Board;
use luna_protocol::decision::DecisionResult;
use luna_protocol::event::SessionEvent;
use luna_protocol::patch::PatchOp;

use crate::accounts::Caller;
use crate::base::error::{EngineError, EngineResult};
use crate::people::RevealVia;
use crate::tools::board::{saved_refresh, saved_summary};
use crate::Engine;

use super::Target;

/// What an execution produced: the result line, the board patches and what it spent.
#[derive(Debug, Default)]
pub struct Executed {
    pub result: DecisionResult,
    pub patch: Vec<PatchOp>,
    pub credits: u32,
    pub contacts: u32,
    /// The billing receipt of a charge, for the audit line.
    pub receipt: Option<String>,
}

/// Runs `target` for `caller` in the card's session. `auto_policy` is the receipt text
/// when auto mode runs it ("automático por la política que … fijó a las …").
pub async fn execute(
    engine: &Engine,
    caller: &Caller,
    session_id: &str,
    target: &Target,
    key: &str,
    auto_policy: Option<&str>,
) -> EngineResult<Executed> {
    match target {
        Target::CrmSave { proposal_id } => {
            let out = crate::tools::crm::execute_save_proposal(engine, caller, proposal_id).await?;
            let created = out.created.len();
            let there = out.already_there.len() + out.refreshed.len();
            let saved =
                saved_summary(engine, caller, &out.collection_id, &out.collection_name).await?;
            let summary = match there {
                0 => format!("Guardé {created} empresas en «{}».", out.collection_name),
                n => format!(
                    "Guardé {created} empresas en «{}»; {n} ya estaban y no se duplicaron.",
                    out.collection_name
                ),
            };
            Ok(Executed {
                result: DecisionResult {
                    summary,
                    refs: out
                        .created
                        .iter()
                        .map(|r| format!("record:{}", r.record_id))
                        .collect(),
                },
                patch: vec![PatchOp::add(
                    Board::SAVED,
                    serde_json::to_value(&saved).map_err(EngineError::internal)?,
                )],
                ..Executed::default()
            })
        }
        Target::CrmBulk { proposal_id } => {
            let out = crate::tools::crm::execute_bulk_proposal(engine, caller, proposal_id).await?;
            let summary = match out.conflicts.len() {
                0 => format!("Actualicé {} registros.", out.updated.len()),
                n => format!(
                    "Actualicé {} registros; {n} cambiaron después de la vista previa y no los toqué.",
                    out.updated.len()
                ),
            };
            // Records may have moved between stages: the saved list's counts follow.
            let board = engine.sessions.view_of(session_id).await?.board;
            let patch = match saved_refresh(engine, caller, &board, None).await? {
                Some(SessionEvent::BoardPatched(p)) => p.patch,
                _ => Vec::new(),
            };
            Ok(Executed {
                result: DecisionResult {
                    summary,
                    refs: out
                        .updated
                        .iter()
                        .map(|r| format!("record:{}", r.record_id))
                        .collect(),
                },
                patch,
                ..Executed::default()
            })
        }
        Target::KnowledgeDraft { proposal_id } => {
            let p = engine.knowledge.apply_draft(caller, proposal_id).await?;
            Ok(Executed {
                result: DecisionResult {
                    summary: format!(
                        "«{}» quedó en revisión; el dueño o un administrador decide si se fusiona.",
                        p.title
                    ),
                    refs: p
                        .topic_slug
                        .map(|s| format!("topic:{s}"))
                        .into_iter()
                        .collect(),
                },
                ..Executed::default()
            })
        }
        Target::KnowledgeMerge { proposal_id } => {
            let p = engine.knowledge.merge(caller, proposal_id).await?;
            Ok(Executed {
                result: DecisionResult {
                    summary: format!("«{}» ya es conocimiento del equipo.", p.title),
                    refs: p
                        .topic_slug
                        .map(|s| format!("topic:{s}"))
                        .into_iter()
                        .collect(),
                },
                ..Executed::default()
            })
        }
        Target::Research { proposal_id } => {
            let started = crate::agent::research::start(engine, caller, proposal_id).await?;
            Ok(Executed {
                result: DecisionResult {
                    summary: format!(
                        "Lancé «{}»; cada fase aparece en su tarjeta del tablero y puedes cancelarla ahí.",
                        started.title
                    ),
                    refs: vec![format!("run:{}", started.run_id)],
                },
                ..Executed::default()
            })
        }
        Target::Sequence {
            sequence_id,
            version,
            steps,
        } => {
            let s = crate::sequences::get(engine, caller, sequence_id).await?;
            // `resolve_as` refuses a sequence card without ticked steps.
            let chosen = steps.as_deref().unwrap_or_default();
            let out =
                crate::sequences::authorize(engine, caller, sequence_id, *version, chosen).await?;
            let days: Vec<String> = out
                .steps
                .iter()
                .filter_map(|i| s.steps.get(*i))
                .map(|st| st.delay_days.to_string())
                .collect();
            Ok(Executed {
                result: DecisionResult {
                    summary: format!(
                        "Autoricé {} de «{}» para {} destinatarios (días {}); el dispatcher los envía en su fecha.",
                        if out.steps.len() == 1 { "1 paso".to_owned() } else { format!("{} pasos", out.steps.len()) },
                        s.name,
                        out.recipients,
                        days.join(", ")
                    ),
                    refs: vec![s.ref_()],
                },
                ..Executed::default()
            })
        }
        Target::Reveal { quote_id } => {
            let via = RevealVia {
                surface: if auto_policy.is_some() { "luna" } else { "ui" },
                auto_policy,
                call_ref: None,
            };
            let out = engine
                .people
                .execute_reveal(caller, quote_id, key, via)
                .await?;
            let revealed = out.people.iter().filter(|p| p.charged).count() as u32;
            let charged = u32::try_from(out.charged.max(0)).unwrap_or(u32::MAX);
            Ok(Executed {
                result: DecisionResult {
                    summary: format!(
                        "Revelé {} contactos por {charged} créditos de contacto; te quedan {}.",
                        out.people.len(),
                        out.balance
                    ),
                    refs: out
                        .people
                        .iter()
                        .map(|p| format!("company:{}", p.card.company_id))
                        .collect(),
                },
                patch: Vec::new(),
                credits: charged,
                contacts: revealed,
                receipt: out.receipt_id,
            })
        }
    }
}
