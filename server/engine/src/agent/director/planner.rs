//! The local director as a `ModelGateway`: it reads the compiled turn with the grammar,
//! plans tool calls step by step from what the transcript already holds, and ends with
//! a `TurnOutput` whose every figure is an `[[evidence:…]]` or `[[company:…]]` anchor.
//! It never invents data: what it cannot do ends in `limite` or an `encuadre` question.
//! It also plays the model in a research run's steps (framing, steering, write-up).

use serde_json::Value;

use crate::agent::contract::gateway::{
    Exchange, ModelGateway, ModelInput, ModelStep, Route, StepFuture, ToolCall,
};
use crate::agent::contract::intent::{Falta, FaltaTipo, TurnIntent, TurnOutput};

use super::grammar::parse;
use super::vocab::CatalogVocabulary;
use crate::agent::contract::input::Speaker;
use crate::base::catalog::text::fold;

/// Result pages the director reads before selecting (each page fits Luna's output budget).
pub const MAX_SEARCH_PAGES: usize = 6;

/// The pipeline Luna saves to when the team has several.
pub const PREFERRED_COLLECTION: &str = "Prospección";

/// Companies Luna puts in a selection when the person names no quantity.
pub const DEFAULT_SELECTION: u32 = 20;

mod chain;
mod market;
mod outreach;
mod records;
mod research;
mod select;
mod stage;
mod team;
mod usage;

#[derive(Debug, Clone, Copy, Default)]
pub struct LocalDirector;

fn final_(intent: TurnIntent, narracion: impl Into<String>) -> ModelStep {
    ModelStep::Final(TurnOutput {
        intent,
        narracion: narracion.into(),
    })
}

/// The current year and month (Mexico City), for «este año», «el año pasado».
fn today() -> (i32, u32) {
    use chrono::Datelike;
    let now = chrono::Utc::now() - chrono::Duration::hours(6);
    (now.year(), now.month())
}

/// Years written in the message (2000–2099), in order, without repeats.
fn years(message: &str) -> Vec<i32> {
    let mut out: Vec<i32> = Vec::new();
    for w in fold(message).split(' ') {
        if let Ok(y) = w.parse::<i32>() {
            if (2000..=2099).contains(&y) && !out.contains(&y) {
                out.push(y);
            }
        }
    }
    out
}

fn call(name: &str, args: Value) -> ToolCall {
    ToolCall {
        name: name.to_owned(),
        args,
    }
}

fn calls_of<'a>(transcript: &'a [Exchange], tool: &str) -> Vec<&'a Exchange> {
    transcript.iter().filter(|e| e.tool.name == tool).collect()
}

fn ok_rows(exchange: &Exchange) -> &[Value] {
    exchange
        .result
        .get("results")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// Whether a tool call was refused with a typed error (bad criteria, a limit): then
/// Luna says she could not do it, never «no encontré».
fn refused(exchange: &Exchange) -> bool {
    exchange.result.get("error").is_some()
}

/// What the person said earlier in this conversation, latest first.
fn said_before(input: &ModelInput) -> impl Iterator<Item = &str> {
    input
        .turn
        .thread
        .iter()
        .rev()
        .filter(|m| m.quien == Speaker::Persona)
        .map(|m| m.texto.as_str())
}

/// The kind of answer the person's previous message asked for, when it was a ranking
/// or records (not companies): what a follow-up to it keeps asking for.
fn earlier_records_ask(input: &ModelInput) -> Option<super::kinds::Ask> {
    let mut said = said_before(input);
    let mut previous = said.next()?;
    if previous == input.turn.message {
        previous = said.next()?;
    }
    Some(super::kinds::read(previous, today())).filter(super::kinds::Ask::is_records)
}

/// Whether the person's previous message asked «¿cuántos…?».
fn earlier_asked_count(input: &ModelInput) -> bool {
    let mut said = said_before(input);
    let previous = match said.next() {
        Some(m) if m == input.turn.message => said.next(),
        other => other,
    };
    previous.is_some_and(|m| parse(m, &CatalogVocabulary).asks_count)
}

/// Most words of an elliptic follow-up («¿y el ISSSTE?», «y de limpieza?»).
const ELLIPTIC_WORDS: usize = 6;

/// Whether a refined request is an elliptic follow-up that only swaps a segment: short,
/// with no quantity and no action of its own.
fn elliptic(req: &super::grammar::Request, message: &str) -> bool {
    fold(message).split(' ').filter(|w| !w.is_empty()).count() <= ELLIPTIC_WORDS
        && req.quantity.is_none()
        && !req.has_action()
        && !req.asks_usage
        && !req.risk_screen
}

/// The constraints (size, amounts, time window, procedure) the session's company
/// search carries: from the last message that named a giro, refined by each message
/// after it. «solo medianas» and then «¿y en SLP?» still wants medium companies.
fn session_constraints(input: &ModelInput) -> super::kinds::Ask {
    let mut said: Vec<&str> = said_before(input).collect();
    if said.first() == Some(&input.turn.message.as_str()) {
        said.remove(0);
    }
    let mut carried = super::kinds::Ask::default();
    for m in said.into_iter().rev() {
        let ask = super::kinds::read(m, today());
        carried = if parse(m, &CatalogVocabulary).giro.is_some() || ask.is_records() {
            ask
        } else {
            carried.refined_by(&ask)
        };
    }
    super::kinds::Ask {
        kind: super::kinds::RecordKind::Suppliers,
        rank: None,
        active: false,
        top: None,
        ..carried
    }
}

impl LocalDirector {
    fn plan(&self, input: &ModelInput) -> ModelStep {
        if let Some(step) = &input.turn.research {
            return self.research_step(input, step);
        }
        let req = parse(&input.turn.message, &CatalogVocabulary);
        // A follow-up refines the session's request: the fields it does not name come
        // from the ledger.
        let mut ask = super::kinds::read(&input.turn.message, today());
        // A ranking or a question about records is its own request, never a refinement.
        let req = if !ask.is_records() {
            match super::memory::recall(
                &req,
                &input.turn.facts,
                &input.turn.message,
                ask.has_constraint(),
            ) {
                Some(mut refined) => {
                    // A follow-up to a ranking or a records question asks for the same
                    // kind of answer («¿y al ISSSTE?»).
                    if let Some(earlier) = earlier_records_ask(input) {
                        ask = earlier.refined_by(&ask);
                    } else {
                        ask = session_constraints(input).refined_by(&ask);
                    }
                    // «¿cuántas hay en Jalisco?» then «¿y en Colima?»: a count again.
                    if ask.rank.is_none()
                        && elliptic(&refined, &input.turn.message)
                        && earlier_asked_count(input)
                    {
                        refined.asks_count = true;
                    }
                    refined
                }
                None => req,
            }
        } else {
            super::memory::complete(&req, &input.turn.facts, &input.turn.message)
        };
        // The next part of a chained request, after its card was accepted.
        if let Some(plan) = &input.turn.plan {
            if input.repair.is_none() {
                return self.continue_plan(input, &req, plan);
            }
        }
        if input.repair.is_some() {
            // The director's narrations are built from anchors; if one was rejected,
            // answer without figures rather than guess.
            return final_(TurnIntent::Responder {}, "Revisé lo que encontré; pídeme el detalle que necesites y te lo muestro con su evidencia.");
        }
        // A note is about what the person says, even when it names a giro, a state or
        // a program: it is never a search.
        if let Some(note) = &req.note {
            return self.note(input, note);
        }
        if req.knowledge_edit {
            return self.knowledge_edit(input);
        }
        if req.knowledge_ask {
            return self.knowledge_answer(input);
        }
        if req.merge {
            return self.merge_note(input);
        }
        if let Some(connector) = &req.connector {
            return final_(
                TurnIntent::Limite { falta: Falta { tipo: FaltaTipo::Conector, detalle: format!("Conectar con {connector}") } },
                format!("Todavía no puedo conectarme con {connector} desde el chat. Puedo dejar la lista guardada en tu CRM de Luna para que la consultes ahí."),
            );
        }
        if req.send_now {
            return final_(
                TurnIntent::Limite { falta: Falta { tipo: FaltaTipo::Permiso, detalle: "Enviar correos desde el chat".into() } },
                "No envío correos por mi cuenta: cada paso de una secuencia lo autorizas tú en su tarjeta de revisión.",
            );
        }
        if let Some(focus) = req.usage_focus {
            return self.usage(input, focus);
        }
        // RFCs written out: a risk screen of exactly those, whatever the board holds.
        if !req.rfcs.is_empty() {
            let refs: Vec<String> = req.rfcs.iter().map(|r| format!("company:{r}")).collect();
            let refs: Vec<&str> = refs.iter().map(String::as_str).collect();
            return self.screen(input, &refs);
        }
        if req.compare {
            let req = super::memory::against_session(&req, &input.turn.facts, &input.turn.message);
            return self.compare(input, &req);
        }
        if req.research {
            return self.research(input);
        }
        // «deja nomás las top 5»: the board's first companies stay, the rest leave it.
        if let Some(n) = super::trim::keep_first(&fold(&input.turn.message)).filter(|n| {
            !req.has_criterion()
                && !req.has_action()
                && !req.risk_screen
                && req.stage_move.is_none()
                && !super::kinds::read(&input.turn.message, today()).has_constraint()
                && (*n as usize) < input.turn.board.selection.len()
        }) {
            return self.cut_selection(input, n as usize);
        }
        // Rankings and Licitaciones/Adjudicaciones are answered with records; the board
        // stays as it is.
        let acts = req.has_action()
            || fold(&input.turn.message).split(' ').any(|w| {
                ["correo", "contacto", "mail", "telefono"]
                    .iter()
                    .any(|k| w.starts_with(k))
            });
        if !acts {
            if let Some(step) = self.records(input, &req, &ask) {
                return step;
            }
        }
        // A stage move needs a saved list. «Todas a Prospección» with a selection and
        // nothing saved yet is a save into that stage; otherwise say what is missing
        // instead of asking what was meant.
        if let Some(mv) = req.stage_move.as_ref().filter(|m| {
            m.all
                && !req.risk_screen
                && !req.has_criterion()
                && input.turn.board.saved_collection.is_none()
                && !input.turn.board.selection.is_empty()
        }) {
            if let Some(step) = self.save_selection_into(input, Some(&mv.stage)) {
                return step;
            }
        }
        if req.stage_move.is_some()
            && !req.has_criterion()
            && input.turn.board.saved_collection.is_none()
        {
            return final_(
                TurnIntent::Responder {},
                if input.turn.board.selection.is_empty() {
                    "Todavía no hay empresas guardadas que mover de etapa: busca y guarda una selección primero."
                } else {
                    "Para moverlas de etapa primero guarda la selección en el CRM: dime «guárdalas» y te dejo la tarjeta."
                },
            );
        }
        if !req.has_criterion() && !input.turn.board.selection.is_empty() {
            if req.risk_screen {
                // «las dos primeras pásalas por el filtro»: only those.
                let refs: Vec<&str> = input
                    .turn
                    .board
                    .selection
                    .iter()
                    .take(req.first.map_or(usize::MAX, |n| n as usize))
                    .map(|i| i.reference.as_str())
                    .collect();
                return self.screen(input, &refs);
            }
            if req.save && input.turn.board.saved_collection.is_none() {
                if let Some(step) = self.save_selection(input) {
                    return step;
                }
            }
            if let (Some(mv), Some(_)) = (&req.stage_move, &input.turn.board.saved_collection) {
                return self.move_stage(input, mv);
            }
            if let Some(whose) = outreach::Whose::of(&req) {
                let then = req.sequence_steps.map(|n| (n, req.stage_named.as_deref()));
                return self.contacts_or_next(input, whose, then);
            }
            if let (Some(n), Some(_)) = (req.sequence_steps, &input.turn.board.saved_collection) {
                return self.sequence(input, n, req.stage_named.as_deref());
            }
        }
        self.search_and_select(input, &req, &ask)
    }
}

impl ModelGateway for LocalDirector {
    fn route(&self) -> Route {
        Route::Local
    }

    fn step<'a>(&'a self, input: &'a ModelInput) -> StepFuture<'a> {
        Box::pin(async move { Ok(self.plan(input)) })
    }
}
