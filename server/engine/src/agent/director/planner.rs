//! The local director as a `ModelGateway`: it reads the compiled turn with the grammar,
//! plans tool calls step by step from what the transcript already holds, and ends with
//! a `TurnOutput` whose every figure is an `[[evidence:…]]` or `[[company:…]]` anchor.
//! It never invents data: what it cannot do ends in `limite` or an `encuadre` question.
//! It also plays the model in a research run's steps (framing, steering, write-up).

use serde_json::{json, Value};

use crate::agent::contract::gateway::{
    Exchange, ModelGateway, ModelInput, ModelStep, Route, StepFuture, ToolCall,
};
use crate::agent::contract::intent::{
    CierreVariante, DecisionDraft, FactField, FactStatus, Falta, FaltaTipo, Pregunta, TurnIntent,
    TurnOutput,
};

use super::criteria::{count_args, describe, market_args, why_for};
use super::grammar::parse;
use super::intent;
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

/// Whether the message asks for prospects or clients (who to sell to) rather than
/// for suppliers of the market data.
fn asks_for_prospects(message: &str) -> bool {
    super::words::tokens(message).iter().any(|t| {
        // «busca empresas en Monterrey»: companies of any giro are not a list anyone
        // works; «proveedores en Nuevo León» (who sells) is searched.
        [
            "prospect", "cliente", "lead", "empresa", "compan", "negocio",
        ]
        .iter()
        .any(|p| t.word.starts_with(p))
    })
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
            let constraint = ask.size_band.is_some()
                || ask.amount_min.is_some()
                || ask.amount_max.is_some()
                || ask.date_from.is_some();
            match super::memory::recall(&req, &input.turn.facts, &input.turn.message, constraint) {
                Some(refined) => {
                    // A follow-up to a ranking or a records question asks for the same
                    // kind of answer («¿y al ISSSTE?»).
                    if let Some(earlier) = earlier_records_ask(input) {
                        ask = earlier.refined_by(&ask);
                    } else {
                        ask = session_constraints(input).refined_by(&ask);
                    }
                    refined
                }
                None => req,
            }
        } else {
            super::memory::complete(&req, &input.turn.facts, &input.turn.message)
        };
        let t = &input.transcript;
        let visible = |name: &str| input.tools.iter().any(|tool| tool.name == name);

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
            if let Some(top) = req.contacts_top {
                let then = req.sequence_steps.map(|n| (n, req.stage_named.as_deref()));
                return self.contacts_or_next(input, top, then);
            }
            if let (Some(n), Some(_)) = (req.sequence_steps, &input.turn.board.saved_collection) {
                return self.sequence(input, n, req.stage_named.as_deref());
            }
        }
        // Never destroy: small talk and unclear messages change nothing.
        // Decided at the turn's first step: later steps see the selection this turn made.
        let has_selection = t.is_empty() && !input.turn.board.selection.is_empty();
        let greets = matches!(
            req.small_talk,
            Some(intent::SmallTalk::Greeting | intent::SmallTalk::Help)
        );
        // «¿cómo funciona esto? soy nuevo»: a question about Luna, whatever else it names.
        let help = req.small_talk == Some(intent::SmallTalk::Help) && !req.search_cue;
        if let Some(kind) = req
            .small_talk
            .filter(|_| t.is_empty() && (has_selection || !greets || help))
        {
            let may_ask = input.turn.facts.is_missing(FactField::Giro);
            return ModelStep::Final(intent::small_talk_answer(kind, may_ask));
        }
        if !req.has_criterion() && has_selection {
            return ModelStep::Final(intent::unclear_answer(&req, true));
        }
        if let Some((city, states)) = req
            .ambiguous_city
            .as_ref()
            .filter(|_| t.is_empty() && req.states.is_empty())
        {
            let may_ask = input.turn.facts.is_missing(FactField::Estado);
            return ModelStep::Final(intent::ambiguous_city_answer(&req, city, states, may_ask));
        }
        if req.has_criterion() && has_selection && !req.search_cue && !req.asks_count {
            return ModelStep::Final(intent::unclear_answer(&req, true));
        }
        // An action on «them» with nothing selected, when the person already said what
        // to look for in this session (so the search found nobody): say so, never ask
        // what is known. A giro known only from the profile was never searched.
        let on_companies = req.save
            || req.contacts_top.is_some()
            || req.sequence_steps.is_some()
            || req.stage_move.is_some()
            || req.risk_screen;
        if !req.has_criterion()
            && input.turn.board.selection.is_empty()
            && input.turn.board.saved_collection.is_none()
            && on_companies
            && matches!(
                input.turn.facts.status(FactField::Giro),
                FactStatus::Dicho { .. } | FactStatus::Inferido { .. }
            )
        {
            return final_(
                TurnIntent::Responder {},
                "Todavía no hay empresas en la selección para eso: con esos criterios no encontré ninguna. Prueba con otro estado o un giro más amplio y seguimos.",
            );
        }
        // Nothing asked and nothing selected, but the giro is known (the last search
        // found nobody, say): never ask it again; say what was understood.
        if !req.has_criterion()
            && input.turn.board.selection.is_empty()
            && !input.turn.facts.is_missing(FactField::Giro)
        {
            return ModelStep::Final(intent::unclear_answer(&req, false));
        }
        if !req.has_criterion() && input.turn.board.selection.is_empty() {
            return final_(
                TurnIntent::Encuadre {
                    criterio: String::new(),
                    pregunta: Some(Pregunta {
                        texto: "¿Qué giro buscas y en qué estado? Por ejemplo: fabricantes de empaque en Jalisco que ya le vendieron a gobierno.".into(),
                        campo: FactField::Giro,
                        opciones: None,
                    }),
                },
                "Cuéntame qué empresas buscas: el giro, el estado y si ya le vendieron a gobierno.",
            );
        }

        // «prospectos en Saltillo»: prospects (who to sell to) named only by a place,
        // and no giro anywhere in the session or the profile — ask which giro instead of
        // listing every giro there. («Busca proveedores en Jalisco» asks for the
        // market's own data and is searched.)
        let prospects = asks_for_prospects(&input.turn.message);
        let only_a_place = prospects
            && req.giro.is_none()
            && req.giros.is_empty()
            && req.query.is_none()
            && req.buyers.is_empty()
            && !req.states.is_empty()
            && !req.asks_count
            && !req.has_action()
            && ask.kind == super::kinds::RecordKind::Suppliers
            && ask.rank.is_none();
        if t.is_empty() && only_a_place && input.turn.facts.is_missing(FactField::Giro) {
            return ModelStep::Final(intent::giro_question(&req));
        }
        let args = records::with_ask(market_args(&req), &ask);
        let wanted = req
            .quantity
            .or(ask.top)
            .unwrap_or(DEFAULT_SELECTION)
            .min(crate::tools::board::MAX_SELECTION as u32) as usize;
        let counts = calls_of(t, "market_count");
        let searches = calls_of(t, "market_search");

        // Step 1: count exactly and search the first page together.
        if counts.is_empty() && searches.is_empty() {
            let mut step = Vec::new();
            if let Some(count) = count_args(&req)
                .map(|c| records::with_ask(c, &ask))
                .filter(|_| visible("market_count"))
            {
                step.push(call("market_count", count));
            }
            if (!req.asks_count || req.query.is_some()) && visible("market_search") {
                let mut search = args.clone();
                search["limit"] = json!(wanted.min(50));
                step.push(call("market_search", search));
            }
            // Where to save, looked up alongside the first search.
            if req.save && visible("crm_collections") {
                step.push(call("crm_collections", json!({})));
            }
            if step.is_empty() {
                return final_(
                    TurnIntent::Limite {
                        falta: Falta {
                            tipo: FaltaTipo::Operacion,
                            detalle: "Buscar Proveedores".into(),
                        },
                    },
                    "En este momento no puedo buscar Proveedores.",
                );
            }
            return ModelStep::Tools(step);
        }
        let count_ref = counts
            .first()
            .filter(|c| !ok_rows(c).is_empty())
            .map(|c| format!("[[evidence:{}.0.total]]", c.call));
        if req.asks_count {
            return match count_ref {
                Some(r) => final_(
                    TurnIntent::Responder {},
                    format!("Hay {r} {}.", describe(&req)),
                ),
                None => final_(
                    TurnIntent::Cierre {
                        variante: CierreVariante::SinCobertura,
                        salidas: vec![],
                    },
                    "No pude contar esos Proveedores con la cobertura que tengo.",
                ),
            };
        }

        // Step 2: page through the search until the quantity is reached (honouring has_more).
        let found: Vec<&Value> = searches.iter().flat_map(|s| ok_rows(s).iter()).collect();
        if let Some(last) = searches.last() {
            let has_more = last
                .result
                .get("has_more")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            let cursor = last.result.get("cursor").and_then(Value::as_str);
            if found.len() < wanted && has_more && searches.len() < MAX_SEARCH_PAGES {
                if let Some(cursor) = cursor {
                    let mut next = args.clone();
                    next["limit"] = json!((wanted - found.len()).min(50));
                    next["cursor"] = json!(cursor);
                    return ModelStep::Tools(vec![call("market_search", next)]);
                }
            }
        }
        if found.is_empty() {
            return final_(
                TurnIntent::Cierre { variante: CierreVariante::SinCobertura, salidas: vec![] },
                format!("No encontré {} con la cobertura que tengo. Prueba con otro estado o un giro más amplio.", describe(&req)),
            );
        }

        // Step 3: the selection, each company with its why; the first ones as priority.
        let selections = calls_of(t, "selection_update");
        if selections.is_empty() && visible("selection_update") {
            let top = req.contacts_top.unwrap_or(0) as usize;
            let items: Vec<Value> = found
                .iter()
                .take(wanted)
                .enumerate()
                .filter_map(|(i, row)| {
                    let r = row.get("ref")?.as_str()?;
                    let mut item = json!({"ref": r, "why": why_for(row)});
                    if i < top {
                        item["priority"] = json!(1);
                    }
                    Some(item)
                })
                .collect();
            let mut step = vec![call(
                "selection_update",
                json!({"op": "replace", "items": items}),
            )];
            // To save, Luna needs the team's collection: look it up in the same step.
            if req.save && visible("crm_collections") {
                step.push(call("crm_collections", json!({})));
            }
            return ModelStep::Tools(step);
        }
        let selection = selections.last().filter(|s| !ok_rows(s).is_empty());

        // Step 4: save when asked (a level-1 preview that becomes a card).
        let saves = calls_of(t, "crm_save_companies");
        let collection = calls_of(t, "crm_collections").last().and_then(|c| {
            let rows = ok_rows(c);
            rows.iter()
                .find(|r| r.get("ref_label").and_then(Value::as_str) == Some(PREFERRED_COLLECTION))
                .or_else(|| rows.first())
        });
        if req.save
            && saves.is_empty()
            && selection.is_some()
            && calls_of(t, "crm_collections").is_empty()
            && visible("crm_collections")
        {
            return ModelStep::Tools(vec![call("crm_collections", json!({}))]);
        }
        if req.save && saves.is_empty() && selection.is_some() && visible("crm_save_companies") {
            if let Some(save) =
                collection.and_then(|c| stage::save_call(c, &input.turn.message, None))
            {
                return ModelStep::Tools(vec![save]);
            }
        }

        // Screening asked with the search: over the companies found, before narrating.
        let screen_sentence = if req.risk_screen && visible("market_screen") {
            let refs: Vec<&str> = found
                .iter()
                .take(wanted.min(50))
                .filter_map(|r| r.get("ref").and_then(Value::as_str))
                .collect();
            match self.screen(input, &refs) {
                ModelStep::Tools(calls) => return ModelStep::Tools(calls),
                ModelStep::Final(out) => Some(out.narracion),
            }
        } else {
            None
        };

        let mut narration = String::new();
        match &count_ref {
            Some(r) => narration.push_str(&format!("Hay {r} {}.", describe(&req))),
            None => narration.push_str(&format!("Busqué {}.", describe(&req))),
        }
        if let Some(sel) = selection {
            let rows = ok_rows(sel);
            let names: Vec<String> = rows
                .iter()
                .skip(1)
                .take(2)
                .filter_map(|r| {
                    r.get("ref")
                        .and_then(Value::as_str)
                        .map(|x| format!("[[{x}]]"))
                })
                .collect();
            narration.push_str(&format!(
                " Armé una selección de [[evidence:{}.0.total]] con su porqué, empezando por {}.",
                sel.call,
                names.join(" y ")
            ));
        }
        if let Some(save) = saves.last() {
            if let Some(pid) = ok_rows(save)
                .iter()
                .find_map(|r| r.get("proposal_id").and_then(Value::as_str))
            {
                narration.push_str(" Te dejo la tarjeta para guardarlas en el CRM.");
                return final_(
                    TurnIntent::ProponerDecision {
                        decision: DecisionDraft::GuardarEnCrm {
                            proposal_id: pid.to_owned(),
                        },
                    },
                    narration,
                );
            }
        }
        if let Some(sentence) = screen_sentence {
            narration.push(' ');
            narration.push_str(&sentence);
        }
        let mut missing = Vec::new();
        if req.save && !(visible("crm_save_companies") && visible("crm_collections")) {
            missing.push("guardar en el CRM");
        } else if req.save && saves.is_empty() {
            narration.push_str(" No encontré una colección del CRM donde guardarlas; crea una y lo intento de nuevo.");
        }
        if req.contacts_top.is_some() && !visible("people_quote") {
            missing.push("conseguir correos de contacto");
        }
        if req.sequence_steps.is_some() && !visible("sequence_draft") {
            missing.push("armar la secuencia de correos");
        }
        if !missing.is_empty() {
            narration.push_str(&format!(
                " Todavía no puedo {} desde este chat.",
                missing.join(", ni ")
            ));
            return final_(
                TurnIntent::Limite {
                    falta: Falta {
                        tipo: FaltaTipo::Operacion,
                        detalle: missing.join(", "),
                    },
                },
                narration,
            );
        }
        final_(
            TurnIntent::Cierre {
                variante: CierreVariante::Completo,
                salidas: vec![],
            },
            narration,
        )
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
