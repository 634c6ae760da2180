//! Building a decision card from Luna's `DecisionDraft` (CONTRACT §7.2): the code looks
//! up what the draft points at (a CRM proposal, a contact quote, a knowledge
//! proposal), and the card carries what the person needs to decide — preview, price,
//! balance, expiry and consequence. The model's draft never reaches the person as is.

use luna_protocol::decision::{Credits, DecisionCard, DecisionKind, Ledger, PreviewLine, StepLine};
use luna_protocol::error::ErrorCode;
use luna_protocol::tool::Envelope;
use serde::de::DeserializeOwned;

use crate::accounts::Caller;
use crate::agent::contract::intent::DecisionDraft;
use crate::base::error::{EngineError, EngineResult};
use crate::base::ids::new_id;
use crate::crm::proposals::{is_stored, BULK_KIND, SAVE_KIND};
use crate::knowledge::{NewTopic, ProposalStatus, TopicChanges};
use crate::registry::typed;
use crate::tools::crm::rows::{BulkProposalRow, SaveProposalRow};
use crate::Engine;

use super::{Prepared, Target};

/// Most people listed on a reveal card.
const PREVIEW_LINES: usize = 12;

fn card(kind: DecisionKind, title: &str, consequence: String) -> DecisionCard {
    DecisionCard {
        id: new_id("dec"),
        kind,
        title: title.to_owned(),
        preview: Vec::new(),
        price: None,
        balance: None,
        expires_at: None,
        consequence,
        resolves_in: kind.resolves_in(),
        steps: Vec::new(),
        recipients: None,
        fingerprint: String::new(),
    }
}

fn line(
    label: impl Into<String>,
    detail: Option<String>,
    reference: Option<String>,
) -> PreviewLine {
    PreviewLine {
        label: label.into(),
        detail,
        reference,
    }
}

fn names(list: &[impl AsRef<str>]) -> Option<String> {
    let list: Vec<&str> = list.iter().map(AsRef::as_ref).collect();
    (!list.is_empty()).then(|| list.join(", "))
}

/// The save card's preview from the proposal's own typed row: what will be created,
/// what already existed, what was not found.
fn save_preview(ref_: &str, row: &SaveProposalRow) -> Vec<PreviewLine> {
    let into = if row.stage.is_empty() {
        String::new()
    } else {
        format!(" en «{}»", row.stage)
    };
    let mut lines = vec![line(
        format!("Se crearán {} registros{into}", row.to_create),
        names(&row.sample_to_create),
        Some(ref_.to_owned()),
    )];
    if row.already_there > 0 {
        lines.push(line(
            format!(
                "{} ya estaban en la colección y no se duplican",
                row.already_there
            ),
            names(&row.sample_already_there),
            None,
        ));
    }
    if !row.not_found.is_empty() {
        lines.push(line(
            format!("{} no se encontraron", row.not_found.len()),
            None,
            None,
        ));
    }
    lines
}

/// The bulk card's preview: how many records change, how many stay, and the locked
/// fields that will not be touched.
fn bulk_preview(ref_: &str, row: &BulkProposalRow) -> Vec<PreviewLine> {
    let mut lines = vec![line(
        format!("Cambiarán {} registros", row.will_change),
        None,
        Some(ref_.to_owned()),
    )];
    if row.unchanged > 0 {
        lines.push(line(
            format!("{} ya tenían esos valores", row.unchanged),
            None,
            None,
        ));
    }
    if let Some(dropped) = names(&row.dropped_names()) {
        lines.push(line(
            "Campos bloqueados que no se tocarán",
            Some(dropped),
            None,
        ));
    }
    lines
}

fn title_from(text: &str) -> String {
    let first = text.lines().next().unwrap_or(text).trim();
    let mut title: String = first.chars().take(70).collect();
    if first.chars().count() > 70 {
        title.push('…');
    }
    title
}

/// The typed row of the CRM proposal `proposal_id` in this turn, with its `ref`. The
/// id is looked up, never trusted: `source` (the tool call of this turn that returned
/// it) must carry it as its `proposal_id`, and it must be stored in the caller's
/// workspace as a proposal of `kind`. An id from another turn or session, a forged one
/// or another kind's is `NOT_FOUND`, and no card is offered; a row that does not
/// decode into `T` is a typed internal error.
async fn crm_proposal_of_turn<T: DeserializeOwned + ProposalRow>(
    engine: &Engine,
    caller: &Caller,
    kind: &str,
    proposal_id: &str,
    source: Option<&Envelope>,
) -> EngineResult<(String, T)> {
    let not_found = || {
        EngineError::typed(
            ErrorCode::NotFound,
            "Esa propuesta no salió de este turno.",
            if kind == SAVE_KIND {
                "Llama a crm_save_companies en este turno y usa el proposal_id que devuelve."
            } else {
                "Llama a crm_bulk_update en este turno y usa el proposal_id que devuelve."
            },
        )
    };
    let row = source
        .and_then(|env| env.results.first())
        .ok_or_else(not_found)?;
    if !is_stored(engine.crm.store(), &caller.workspace_id, kind, proposal_id).await? {
        return Err(not_found());
    }
    let value: T = typed::read(row)?;
    if value.proposal_id() != proposal_id {
        return Err(not_found());
    }
    Ok((row.ref_.clone(), value))
}

/// The CRM proposal rows a card is prepared from.
trait ProposalRow {
    fn proposal_id(&self) -> &str;
}

impl ProposalRow for SaveProposalRow {
    fn proposal_id(&self) -> &str {
        &self.proposal_id
    }
}

impl ProposalRow for BulkProposalRow {
    fn proposal_id(&self) -> &str {
        &self.proposal_id
    }
}

/// Builds the card and the server-only target for `draft`. `source` is the envelope
/// of the tool call that produced the draft's proposal id in this turn, if any.
pub async fn prepare(
    engine: &Engine,
    caller: &Caller,
    draft: &DecisionDraft,
    source: Option<&Envelope>,
) -> EngineResult<Prepared> {
    match draft {
        DecisionDraft::GuardarEnCrm { proposal_id } => {
            let (ref_, row) = crm_proposal_of_turn::<SaveProposalRow>(
                engine,
                caller,
                SAVE_KIND,
                proposal_id,
                source,
            )
            .await?;
            let mut c = card(
                DecisionKind::GuardarEnCrm,
                "Guardar la selección en el CRM",
                "Se crearán los registros en la colección; los que ya existían no se duplican."
                    .to_owned(),
            );
            c.preview = save_preview(&ref_, &row);
            Ok(Prepared::new(
                c,
                Target::CrmSave {
                    proposal_id: proposal_id.clone(),
                },
            ))
        }
        DecisionDraft::CambiosMasivos { proposal_id } => {
            let (ref_, row) = crm_proposal_of_turn::<BulkProposalRow>(
                engine,
                caller,
                BULK_KIND,
                proposal_id,
                source,
            )
            .await?;
            let mut c = card(
                DecisionKind::CambiosMasivos,
                "Aplicar cambios masivos",
                "Se aplicarán los cambios mostrados; los registros que alguien cambió después no se tocan."
                    .to_owned(),
            );
            c.preview = bulk_preview(&ref_, &row);
            Ok(Prepared::new(
                c,
                Target::CrmBulk {
                    proposal_id: proposal_id.clone(),
                },
            ))
        }
        DecisionDraft::DejarNota { draft } => {
            // The draft is either the proposal id `context_note` returned, or the text.
            let existing = match engine.knowledge.proposal(caller, draft).await {
                Ok(p) if p.status == ProposalStatus::Borrador => Some(p),
                _ => None,
            };
            let p = match existing {
                Some(p) => p,
                None => {
                    let topic = NewTopic {
                        title: title_from(draft),
                        area: "ventas".to_owned(),
                        body: draft.trim().to_owned(),
                        patterns: Vec::new(),
                    };
                    engine.knowledge.draft_note(caller, &topic, "luna").await?
                }
            };
            let mut c = card(
                DecisionKind::DejarNota,
                "Dejar una nota para el equipo",
                "La nota nace «en revisión» hasta que el dueño o un administrador la fusione."
                    .to_owned(),
            );
            c.preview = vec![line(p.title.clone(), p.body.clone(), None)];
            Ok(Prepared::new(
                c,
                Target::KnowledgeDraft { proposal_id: p.id },
            ))
        }
        DecisionDraft::SugerirEdicion {
            topic,
            summary,
            patch,
        } => {
            let changes = TopicChanges {
                body: patch.clone(),
                ..TopicChanges::default()
            };
            let p = engine
                .knowledge
                .suggest_edit(caller, topic, summary, &changes, true, "luna")
                .await?;
            let mut c = card(
                DecisionKind::SugerirEdicion,
                "Sugerir una edición al conocimiento",
                "La sugerencia queda en revisión; no cambia el conocimiento hasta que se fusione."
                    .to_owned(),
            );
            c.preview = vec![line(
                p.title.clone(),
                Some(p.diff.clone().unwrap_or_else(|| summary.clone())),
                p.topic_slug.as_ref().map(|s| format!("topic:{s}")),
            )];
            Ok(Prepared::new(
                c,
                Target::KnowledgeDraft { proposal_id: p.id },
            ))
        }
        DecisionDraft::FusionarConocimiento { topic } => {
            let wanted = crate::knowledge::topic_slug(topic);
            let pending = engine.knowledge.pending(caller).await?;
            let p = pending
                .into_iter()
                .find(|p| p.topic_slug.as_deref() == Some(wanted) || p.id == *topic)
                .ok_or_else(|| EngineError::not_found("una propuesta pendiente de ese tema"))?;
            let mut c = card(
                DecisionKind::FusionarConocimiento,
                "Fusionar en el conocimiento del equipo",
                format!("«{}» pasará a ser conocimiento del equipo.", p.title),
            );
            c.preview = vec![line(
                p.title.clone(),
                p.diff.clone().or_else(|| p.body.clone()),
                p.topic_slug.as_ref().map(|s| format!("topic:{s}")),
            )];
            Ok(Prepared::new(
                c,
                Target::KnowledgeMerge { proposal_id: p.id },
            ))
        }
        DecisionDraft::RevelarContactos { quote_id } => reveal_card(engine, caller, quote_id).await,
        DecisionDraft::Investigar { proposal_id } => {
            research_card(engine, caller, proposal_id).await
        }
        DecisionDraft::RevisarSecuencia { sequence_id } => {
            sequence_card(engine, caller, sequence_id).await
        }
    }
}

/// The `investigar` card: what the run will look at (its phases), the criterion, the
/// inference cap and what its searches spend; accepting starts it.
async fn research_card(
    engine: &Engine,
    caller: &Caller,
    proposal_id: &str,
) -> EngineResult<Prepared> {
    let p = crate::agent::research::proposal(engine, caller, proposal_id).await?;
    if p.status != crate::agent::research::RunState::Propuesta {
        return Err(EngineError::typed(
            ErrorCode::Conflict,
            "Esa investigación ya se lanzó.",
            "Consulta su avance con research_status.",
        ));
    }
    if crate::base::clock::now_ms() >= p.expires_at() {
        return Err(crate::agent::research::expired_refusal());
    }
    let mut c = card(
        DecisionKind::Investigar,
        "Lanzar una investigación larga",
        format!(
            "Correrá en segundo plano: el modelo encuadra la búsqueda y escribe el resultado con un tope de {} pasos; las búsquedas y conteos aparecen en el chat y cuentan como ahí (unos 2 créditos de inteligencia). Puedes cancelarla desde el tablero.",
            p.inference_cap
        ),
    );
    // Like a quote, the proposal expires; accepting it later is `DECISION_EXPIRED`.
    c.expires_at = Some(p.expires_at());
    c.preview = vec![line(p.title.clone(), Some(p.brief.clone()), None)];
    c.preview.extend(
        crate::agent::research::PHASES
            .iter()
            .map(|(_, label)| line(*label, None, None)),
    );
    Ok(Prepared::new(
        c,
        Target::Research {
            proposal_id: p.proposal_id,
        },
    ))
}

/// The `revelar_contactos` card from the quote as it stands now: price, contact-credit
/// balance, who will be revealed, and the quote's expiry (10 minutes).
pub async fn reveal_card(
    engine: &Engine,
    caller: &Caller,
    quote_id: &str,
) -> EngineResult<Prepared> {
    let q = engine.people.status(caller, quote_id).await?;
    if q.expired {
        return Err(EngineError::typed(
            ErrorCode::QuoteExpired,
            "La cotización de contactos ya venció.",
            "Vuelve a cotizar con people_quote.",
        ));
    }
    let contacts = q.people.len().saturating_sub(q.already_revealed) as u32;
    let price = u32::try_from(q.price.max(0)).unwrap_or(u32::MAX);
    let balance = u32::try_from(q.balance.max(0)).unwrap_or(u32::MAX);
    let mut c = card(
        DecisionKind::RevelarContactos,
        "Revelar contactos",
        format!(
            "Se cobrarán {price} créditos de contacto por {contacts} personas (te quedan {balance}); verás su nombre y correo completos."
        ),
    );
    c.price = Some(Credits {
        amount: price,
        ledger: Ledger::Contacto,
    });
    c.balance = Some(Credits {
        amount: balance,
        ledger: Ledger::Contacto,
    });
    c.expires_at = Some(q.expires_at);
    c.preview = q
        .people
        .iter()
        .take(PREVIEW_LINES)
        .map(|p| {
            line(
                format!("{} · {}", p.name_masked, p.role),
                Some(p.company_name.clone()),
                Some(format!("company:{}", p.company_id)),
            )
        })
        .collect();
    let mut prepared = Prepared::new(c, Target::Reveal { quote_id: q.id });
    prepared.credits = price;
    prepared.contacts = contacts;
    Ok(prepared)
}

/// The `revisar_secuencia` card: every step (one checkbox each), the audience, the
/// first recipients' version, the warnings and what the product does not do.
async fn sequence_card(
    engine: &Engine,
    caller: &Caller,
    sequence_id: &str,
) -> EngineResult<Prepared> {
    let p = crate::sequences::preview(engine, caller, sequence_id, None).await?;
    let s = &p.sequence;
    if s.status != crate::sequences::Status::Borrador {
        return Err(EngineError::typed(
            ErrorCode::Conflict,
            "Esa secuencia ya está autorizada.",
            "Si hay que cambiarla, edítala con sequence_update_draft y vuelve a proponerla.",
        ));
    }
    if p.recipients.is_empty() {
        return Err(EngineError::typed(
            ErrorCode::InvalidArgument,
            "Nadie recibiría esta secuencia todavía.",
            "Revela primero el contacto de las empresas de la audiencia.",
        ));
    }
    let first = p
        .recipients
        .iter()
        .find(|r| !r.suppressed)
        .or(p.recipients.first());
    let mut c = card(
        DecisionKind::RevisarSecuencia,
        "Revisar y autorizar la secuencia",
        format!(
            "Cada paso que marques se enviará en su día a {} destinatarios desde {}; un cambio posterior anula la autorización.",
            p.recipients.len(),
            s.sender
        ),
    );
    c.steps = s
        .steps
        .iter()
        .enumerate()
        .map(|(i, st)| StepLine {
            index: i as u32,
            label: format!("Paso {} · día {} · {}", i + 1, st.delay_days, st.subject),
            detail: first
                .and_then(|r| r.steps.get(i))
                .map(|r| format!("{}\n\n{}", r.subject, r.body)),
        })
        .collect();
    c.recipients = Some(u32::try_from(p.recipients.len()).unwrap_or(u32::MAX));
    c.preview = p
        .recipients
        .iter()
        .take(PREVIEW_LINES)
        .map(|r| {
            line(
                r.email.clone(),
                r.skip_reason
                    .as_ref()
                    .map(|why| format!("se omitirá: {why}")),
                None,
            )
        })
        .collect();
    c.preview.extend(
        p.warnings
            .iter()
            .take(5)
            .map(|w| line(w.clone(), None, None)),
    );
    c.preview
        .extend(crate::sequences::GAPS.iter().map(|g| line(*g, None, None)));
    Ok(Prepared::new(
        c,
        Target::Sequence {
            sequence_id: s.id.clone(),
            version: s.version,
            steps: None,
        },
    ))
}
