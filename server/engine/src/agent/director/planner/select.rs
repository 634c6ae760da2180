//! The director's search chain: whether a request can be searched at all (never
//! destroying a selection on small talk or an unclear message, asking for what is
//! missing), then count and search, page to the quantity wanted, build the selection
//! with a why per company, save when asked, screen when asked, and narrate with
//! anchors.

use serde_json::{json, Value};

use super::{
    call, calls_of, final_, ok_rows, records, stage, LocalDirector, DEFAULT_SELECTION,
    MAX_SEARCH_PAGES, PREFERRED_COLLECTION,
};
use crate::agent::contract::gateway::{Exchange, ModelInput, ModelStep};
use crate::agent::contract::intent::{
    CierreVariante, DecisionDraft, FactField, FactStatus, Falta, FaltaTipo, Pregunta, TurnIntent,
};
use crate::agent::director::criteria::{count_args, describe, market_args, why_for};
use crate::agent::director::grammar::Request;
use crate::agent::director::intent;
use crate::agent::director::kinds::{Ask, RecordKind};

impl LocalDirector {
    /// The search chain's next step for `req` (the parsed, recalled request) and `ask`
    /// (the kind of answer and its constraints): the first tool step not yet taken, or
    /// the narration once every step has run.
    pub(super) fn search_and_select(
        &self,
        input: &ModelInput,
        req: &Request,
        ask: &Ask,
    ) -> ModelStep {
        if let Some(step) = unsearchable(input, req, ask) {
            return step;
        }
        let chain = Chain::new(input, req, ask);
        if let Some(step) = chain
            .count_and_search()
            .or_else(|| chain.count_answer())
            .or_else(|| chain.next_page())
            .or_else(|| chain.nobody_found())
            .or_else(|| chain.select())
            .or_else(|| chain.save())
        {
            return step;
        }
        // Screening asked with the search: over the companies found, before narrating.
        let screened = if req.risk_screen && chain.visible("market_screen") {
            let refs: Vec<&str> = chain
                .found
                .iter()
                .take(chain.wanted.min(50))
                .filter_map(|r| r.get("ref").and_then(Value::as_str))
                .collect();
            match self.screen(input, &refs) {
                ModelStep::Tools(calls) => return ModelStep::Tools(calls),
                ModelStep::Final(out) => Some(out.narracion),
            }
        } else {
            None
        };
        chain.narrate(screened)
    }
}

impl LocalDirector {
    /// «con las 6 mejores basta»: the selection keeps its first `keep` companies (in
    /// the board's order) and the rest leave it; no search, nothing charged.
    pub(super) fn cut_selection(&self, input: &ModelInput, keep: usize) -> ModelStep {
        let Some(done) = calls_of(&input.transcript, "selection_update").pop() else {
            let items: Vec<Value> = input
                .turn
                .board
                .selection
                .iter()
                .skip(keep)
                .map(|i| json!({"ref": i.reference, "why": format!("Fuera de las primeras {keep} de la selección")}))
                .collect();
            return ModelStep::Tools(vec![call(
                "selection_update",
                json!({"op": "remove", "items": items}),
            )]);
        };
        if super::refused(done) || ok_rows(done).is_empty() {
            return final_(
                TurnIntent::Responder {},
                "No pude recortar la selección en este momento; no cambié nada.",
            );
        }
        final_(
            TurnIntent::Cierre { variante: CierreVariante::Completo, salidas: vec![] },
            format!("Listo: tu selección quedó con [[evidence:{}.0.total]] empresas, las primeras que tenías; quité el resto.", done.call),
        )
    }
}

/// What the chain knows at one step: the request, the tools the caller may see, and
/// what this turn's earlier steps returned.
struct Chain<'a> {
    input: &'a ModelInput,
    req: &'a Request,
    ask: &'a Ask,
    /// The search's arguments (criteria and the ask's constraints).
    args: Value,
    /// How many companies the selection should hold.
    wanted: usize,
    counts: Vec<&'a Exchange>,
    searches: Vec<&'a Exchange>,
    /// Every row the searches returned, in order.
    found: Vec<&'a Value>,
}

impl<'a> Chain<'a> {
    fn new(input: &'a ModelInput, req: &'a Request, ask: &'a Ask) -> Self {
        let t = &input.transcript;
        let searches = calls_of(t, "market_search");
        Chain {
            input,
            req,
            ask,
            args: records::with_ask(market_args(req), ask),
            wanted: req
                .quantity
                .or(ask.top)
                .unwrap_or(DEFAULT_SELECTION)
                .min(crate::tools::board::MAX_SELECTION as u32) as usize,
            counts: calls_of(t, "market_count"),
            found: searches.iter().flat_map(|s| ok_rows(s).iter()).collect(),
            searches,
        }
    }

    fn visible(&self, name: &str) -> bool {
        self.input.tools.iter().any(|tool| tool.name == name)
    }

    fn calls(&self, tool: &str) -> Vec<&'a Exchange> {
        calls_of(&self.input.transcript, tool)
    }

    /// The anchor of the exact count, once a count returned one.
    fn count_ref(&self) -> Option<String> {
        self.counts
            .first()
            .filter(|c| !ok_rows(c).is_empty())
            .map(|c| format!("[[evidence:{}.0.total]]", c.call))
    }

    /// Step 1: count exactly and search the first page together (and look up where to
    /// save alongside).
    fn count_and_search(&self) -> Option<ModelStep> {
        if !(self.counts.is_empty() && self.searches.is_empty()) {
            return None;
        }
        let (req, ask) = (self.req, self.ask);
        let mut step = Vec::new();
        if let Some(count) = count_args(req)
            .map(|c| records::with_ask(c, ask))
            .filter(|_| self.visible("market_count"))
        {
            step.push(call("market_count", count));
        }
        if (!req.asks_count || req.query.is_some()) && self.visible("market_search") {
            let mut search = self.args.clone();
            search["limit"] = json!(self.wanted.min(50));
            step.push(call("market_search", search));
        }
        if req.save && self.visible("crm_collections") {
            step.push(call("crm_collections", json!({})));
        }
        if step.is_empty() {
            return Some(final_(
                TurnIntent::Limite {
                    falta: Falta {
                        tipo: FaltaTipo::Operacion,
                        detalle: "Buscar Proveedores".into(),
                    },
                },
                "En este momento no puedo buscar Proveedores.",
            ));
        }
        Some(ModelStep::Tools(step))
    }

    /// «¿cuántos…?»: the count is the answer.
    fn count_answer(&self) -> Option<ModelStep> {
        if !self.req.asks_count {
            return None;
        }
        Some(match self.count_ref() {
            Some(r) => final_(
                TurnIntent::Responder {},
                format!("Hay {r} {}.", describe(self.req)),
            ),
            None => final_(
                TurnIntent::Cierre {
                    variante: CierreVariante::SinCobertura,
                    salidas: vec![],
                },
                "No pude contar esos Proveedores con la cobertura que tengo.",
            ),
        })
    }

    /// Step 2: page through the search until the quantity is reached (honouring
    /// has_more).
    fn next_page(&self) -> Option<ModelStep> {
        let last = self.searches.last()?;
        let has_more = last
            .result
            .get("has_more")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let cursor = last.result.get("cursor").and_then(Value::as_str)?;
        if self.found.len() >= self.wanted || !has_more || self.searches.len() >= MAX_SEARCH_PAGES {
            return None;
        }
        let mut next = self.args.clone();
        next["limit"] = json!((self.wanted - self.found.len()).min(50));
        next["cursor"] = json!(cursor);
        Some(ModelStep::Tools(vec![call("market_search", next)]))
    }

    fn nobody_found(&self) -> Option<ModelStep> {
        self.found.is_empty().then(|| final_(
            TurnIntent::Cierre { variante: CierreVariante::SinCobertura, salidas: vec![] },
            format!("No encontré {} con la cobertura que tengo. Prueba con otro estado o un giro más amplio.", describe(self.req)),
        ))
    }

    /// Step 3: the selection, each company with its why; the first ones as priority.
    fn select(&self) -> Option<ModelStep> {
        if !self.calls("selection_update").is_empty() || !self.visible("selection_update") {
            return None;
        }
        let top = self.req.contacts_top.unwrap_or(0) as usize;
        let items: Vec<Value> = self
            .found
            .iter()
            .take(self.wanted)
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
        if self.req.save && self.visible("crm_collections") {
            step.push(call("crm_collections", json!({})));
        }
        Some(ModelStep::Tools(step))
    }

    /// The selection this turn made, when it holds companies.
    fn selection(&self) -> Option<&'a Exchange> {
        self.calls("selection_update")
            .last()
            .copied()
            .filter(|s| !ok_rows(s).is_empty())
    }

    /// Step 4: save when asked (a level-1 preview that becomes a card).
    fn save(&self) -> Option<ModelStep> {
        if !self.req.save || !self.calls("crm_save_companies").is_empty() {
            return None;
        }
        self.selection()?;
        let collections = self.calls("crm_collections");
        if collections.is_empty() {
            return self
                .visible("crm_collections")
                .then(|| ModelStep::Tools(vec![call("crm_collections", json!({}))]));
        }
        if !self.visible("crm_save_companies") {
            return None;
        }
        let rows = ok_rows(collections.last()?);
        let collection = rows
            .iter()
            .find(|r| r.get("ref_label").and_then(Value::as_str) == Some(PREFERRED_COLLECTION))
            .or_else(|| rows.first())?;
        stage::save_call(collection, &self.input.turn.message, None)
            .map(|save| ModelStep::Tools(vec![save]))
    }

    /// The answer once every step ran: the count, the selection, the save card, the
    /// screening's sentence, and what this chat cannot do yet.
    fn narrate(&self, screened: Option<String>) -> ModelStep {
        let req = self.req;
        let mut narration = match self.count_ref() {
            Some(r) => format!("Hay {r} {}.", describe(req)),
            None => format!("Busqué {}.", describe(req)),
        };
        if let Some(sel) = self.selection() {
            let names: Vec<String> = ok_rows(sel)
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
        let saves = self.calls("crm_save_companies");
        if let Some(pid) = saves.last().and_then(|save| {
            ok_rows(save)
                .iter()
                .find_map(|r| r.get("proposal_id").and_then(Value::as_str))
        }) {
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
        if let Some(sentence) = screened {
            narration.push(' ');
            narration.push_str(&sentence);
        }
        let mut missing = Vec::new();
        if req.save && !(self.visible("crm_save_companies") && self.visible("crm_collections")) {
            missing.push("guardar en el CRM");
        } else if req.save && saves.is_empty() {
            narration.push_str(" No encontré una colección del CRM donde guardarlas; crea una y lo intento de nuevo.");
        }
        if req.contacts_top.is_some() && !self.visible("people_quote") {
            missing.push("conseguir correos de contacto");
        }
        if req.sequence_steps.is_some() && !self.visible("sequence_draft") {
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

/// The answer when the request cannot be searched (yet), so that nothing is
/// destroyed: small talk and unclear messages change nothing, an ambiguous city or a
/// missing giro is asked, an action on an empty selection says why it cannot act.
fn unsearchable(input: &ModelInput, req: &Request, ask: &Ask) -> Option<ModelStep> {
    let t = &input.transcript;
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
        return Some(ModelStep::Final(intent::small_talk_answer(kind, may_ask)));
    }
    if !req.has_criterion() && has_selection {
        return Some(ModelStep::Final(intent::unclear_answer(req, true)));
    }
    if let Some((city, states)) = req
        .ambiguous_city
        .as_ref()
        .filter(|_| t.is_empty() && req.states.is_empty())
    {
        let may_ask = input.turn.facts.is_missing(FactField::Estado);
        return Some(ModelStep::Final(intent::ambiguous_city_answer(
            req, city, states, may_ask,
        )));
    }
    if req.has_criterion() && has_selection && !req.search_cue && !req.asks_count {
        return Some(ModelStep::Final(intent::unclear_answer(req, true)));
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
        return Some(final_(
                TurnIntent::Responder {},
                "Todavía no hay empresas en la selección para eso: con esos criterios no encontré ninguna. Prueba con otro estado o un giro más amplio y seguimos.",
            ));
    }
    // Nothing asked and nothing selected, but the giro is known (the last search
    // found nobody, say): never ask it again; say what was understood.
    if !req.has_criterion()
        && input.turn.board.selection.is_empty()
        && !input.turn.facts.is_missing(FactField::Giro)
    {
        return Some(ModelStep::Final(intent::unclear_answer(req, false)));
    }
    if !req.has_criterion() && input.turn.board.selection.is_empty() {
        return Some(final_(
                TurnIntent::Encuadre {
                    criterio: String::new(),
                    pregunta: Some(Pregunta {
                        texto: "¿Qué giro buscas y en qué estado? Por ejemplo: fabricantes de empaque en Jalisco que ya le vendieron a gobierno.".into(),
                        campo: FactField::Giro,
                        opciones: None,
                    }),
                },
                "Cuéntame qué empresas buscas: el giro, el estado y si ya le vendieron a gobierno.",
            ));
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
        && ask.kind == RecordKind::Suppliers
        && ask.rank.is_none();
    if t.is_empty() && only_a_place && input.turn.facts.is_missing(FactField::Giro) {
        return Some(ModelStep::Final(intent::giro_question(req)));
    }
    None
}

/// Whether the message asks for prospects or clients (who to sell to) rather than
/// for suppliers of the market data.
fn asks_for_prospects(message: &str) -> bool {
    crate::agent::director::words::tokens(message)
        .iter()
        .any(|t| {
            // «busca empresas en Monterrey»: companies of any giro are not a list anyone
            // works; «proveedores en Nuevo León» (who sells) is searched.
            [
                "prospect", "cliente", "lead", "empresa", "compan", "negocio",
            ]
            .iter()
            .any(|p| t.word.starts_with(p))
        })
}
