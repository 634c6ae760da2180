//! The local director as a `ModelGateway`: it reads the compiled turn with the grammar,
//! plans tool calls step by step from what the transcript already holds, and ends with
//! a `TurnOutput` whose every figure is an `[[evidence:…]]` or `[[company:…]]` anchor.
//! It never invents data: what it cannot do ends in `limite` or an `encuadre` question.
//! It also plays the model in a research run's steps (framing, steering, write-up).

use serde_json::{json, Map, Value};

use crate::agent::turn::gateway::{
    Exchange, ModelGateway, ModelInput, ModelStep, Route, StepFuture, ToolCall,
};
use crate::agent::turn::input::{ResearchStep, ResearchTask};
use crate::agent::turn::intent::{
    CierreVariante, DecisionDraft, FactField, Falta, FaltaTipo, Pregunta, TurnIntent, TurnOutput,
};

use super::criteria::{count_args, describe, market_args, supplier_filters, why_for};
use super::grammar::{parse, Request, StageMove};
use super::intent;
use super::vocab::CatalogVocabulary;
use crate::base::catalog::text::fold;

/// Result pages the director reads before selecting (each page fits Luna's output budget).
pub const MAX_SEARCH_PAGES: usize = 6;

/// The pipeline Luna saves to when the team has several.
pub const PREFERRED_COLLECTION: &str = "Prospección";

/// Companies Luna puts in a selection when the person names no quantity.
pub const DEFAULT_SELECTION: u32 = 20;

mod chain;
mod records;
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

/// The director's sequence steps: (day, subject, body), personalised with variables.
const SEQUENCE_TEMPLATES: [(u32, &str, &str); 4] = [
    (
        0,
        "{{empresa}} y sus ventas a gobierno",
        "Hola {{nombre}}:\n\nVi que {{empresa}} ya le vende a gobierno ({{adjudicacion}}). Trabajamos con fabricantes como ustedes para llegar a más compradores. ¿Platicamos 15 minutos esta semana?\n\nSaludos,\n{{remitente}}",
    ),
    (
        3,
        "Seguimiento para {{empresa}}",
        "Hola {{nombre}}, te escribo de nuevo por si mi correo anterior se perdió. ¿Tienes 15 minutos esta semana?\n\n{{remitente}}",
    ),
    (
        7,
        "¿Lo dejamos para después, {{nombre}}?",
        "Hola {{nombre}}, no quiero llenar tu bandeja: si no es buen momento para {{empresa}}, lo retomamos más adelante.\n\n{{remitente}}",
    ),
    (
        14,
        "Una última idea para {{empresa}}",
        "Hola {{nombre}}, si en algún momento buscan nuevos compradores en {{estado}}, aquí estoy.\n\n{{remitente}}",
    ),
];

/// Most companies whose contacts one turn quotes (the auto lock is 10 per turn too).
const MAX_CONTACT_COMPANIES: usize = 10;

impl LocalDirector {
    /// «consígueme el correo de los 10 mejores» over the board's selection: find the
    /// people of the priority companies, quote the most senior one of each, and leave
    /// the `revelar_contactos` card (nothing is charged before the person accepts, or
    /// the auto budget covers it).
    /// «mueve los 5 mejores a Contactado»: finds the saved list and the stage, reads
    /// the chosen companies' records, then moves one with `crm_record` (level 0, with
    /// «deshacer») or several with `crm_bulk_update` (a card of one tap).
    fn move_stage(&self, input: &ModelInput, mv: &StageMove) -> ModelStep {
        let t = &input.transcript;
        let visible = |name: &str| input.tools.iter().any(|tool| tool.name == name);
        if ![
            "crm_collections",
            "collection_query",
            "crm_record",
            "crm_bulk_update",
        ]
        .iter()
        .all(|n| visible(n))
        {
            return final_(
                TurnIntent::Limite {
                    falta: Falta {
                        tipo: FaltaTipo::Operacion,
                        detalle: "Mover empresas de etapa".into(),
                    },
                },
                "Todavía no puedo mover empresas de etapa desde aquí; hazlo desde el tablero.",
            );
        }
        let Some(lookup) = calls_of(t, "crm_collections").last().copied() else {
            return ModelStep::Tools(vec![call("crm_collections", json!({}))]);
        };
        let rows = ok_rows(lookup);
        let saved = input.turn.board.saved_collection.as_deref();
        let Some(collection) = rows
            .iter()
            .find(|r| r.get("ref_label").and_then(Value::as_str) == saved)
            .or_else(|| rows.first())
        else {
            return final_(
                TurnIntent::Responder {},
                "No encontré la lista guardada; guárdala primero y luego la muevo.",
            );
        };
        let collection_ref = collection
            .get("ref")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let name = collection
            .get("ref_label")
            .and_then(Value::as_str)
            .unwrap_or("tu lista");
        let stages: Vec<&str> = collection
            .get("stages")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let Some(stage) = stages
            .iter()
            .find(|s| fold(s) == mv.stage)
            .or_else(|| stages.iter().find(|s| fold(s).starts_with(&mv.stage)))
            .or_else(|| stages.iter().find(|s| fold(s).contains(&mv.stage)))
        else {
            return final_(
                TurnIntent::Responder {},
                format!(
                    "En «{name}» no hay una etapa «{}». Sus etapas son: {}.",
                    mv.stage,
                    stages.join(", ")
                ),
            );
        };

        // The chosen companies: priorities first, in the selection's order.
        let selection = &input.turn.board.selection;
        let ordered = selection
            .iter()
            .filter(|i| i.priority)
            .chain(selection.iter().filter(|i| !i.priority));
        let wanted = match (mv.top, mv.all) {
            (Some(n), _) => n as usize,
            (None, true) => selection.len(),
            (None, false) => selection.iter().filter(|i| i.priority).count().max(1),
        };
        let chosen: Vec<&str> = ordered
            .take(wanted)
            .filter_map(|i| i.reference.strip_prefix("company:"))
            .collect();
        let queries = calls_of(t, "collection_query");
        if queries.is_empty() {
            return ModelStep::Tools(
                chosen
                    .iter()
                    .map(|entity| {
                        call(
                            "collection_query",
                            json!({"collection_id": collection_ref, "op": "query", "filter": {"entity_id": entity}, "limit": 1}),
                        )
                    })
                    .collect(),
            );
        }
        let records: Vec<(&str, i64)> = queries
            .iter()
            .filter_map(|ex| ok_rows(ex).first())
            .filter_map(|r| Some((r.get("ref")?.as_str()?, r.get("version")?.as_i64()?)))
            .collect();
        if records.is_empty() {
            return final_(
                TurnIntent::Responder {},
                format!("No encontré esas empresas en «{name}»."),
            );
        }
        if let [(record, version)] = records.as_slice() {
            return match calls_of(t, "crm_record").last() {
                None => ModelStep::Tools(vec![call(
                    "crm_record",
                    json!({"op": "update", "record_id": record, "version": version, "stage": stage}),
                )]),
                Some(ex) if !ok_rows(ex).is_empty() => final_(
                    TurnIntent::Responder {},
                    format!("Moví [[{record}]] a «{stage}». Si no era así, toca «deshacer»."),
                ),
                Some(_) => final_(
                    TurnIntent::Responder {},
                    "No pude moverla: alguien la cambió hace un momento. Revisa el tablero y dime de nuevo.",
                ),
            };
        }
        let Some(bulk) = calls_of(t, "crm_bulk_update").last().copied() else {
            let changes: Vec<Value> = records
                .iter()
                .map(|(record, version)| json!({"record_id": record, "version": version, "stage": stage}))
                .collect();
            return ModelStep::Tools(vec![call(
                "crm_bulk_update",
                json!({"collection_id": collection_ref, "changes": changes}),
            )]);
        };
        match ok_rows(bulk)
            .first()
            .and_then(|r| r.get("proposal_id"))
            .and_then(Value::as_str)
        {
            Some(pid) => final_(
                TurnIntent::ProponerDecision {
                    decision: DecisionDraft::CambiosMasivos {
                        proposal_id: pid.to_owned(),
                    },
                },
                format!(
                    "Te propongo pasar [[evidence:{c}.0.will_change]] empresas de «{name}» a «{stage}». Confírmalo en la tarjeta.",
                    c = bulk.call
                ),
            ),
            None => final_(
                TurnIntent::Responder {},
                "No pude preparar el cambio de etapa; revisa el tablero y dime de nuevo.",
            ),
        }
    }

    fn contacts(&self, input: &ModelInput, top: u32) -> ModelStep {
        let t = &input.transcript;
        let visible = |name: &str| input.tools.iter().any(|tool| tool.name == name);
        if !visible("people_search") || !visible("people_quote") {
            return final_(
                TurnIntent::Limite {
                    falta: Falta {
                        tipo: FaltaTipo::Operacion,
                        detalle: "Conseguir correos de contacto".into(),
                    },
                },
                "Todavía no puedo conseguir correos de contacto desde este chat.",
            );
        }
        let board = &input.turn.board.selection;
        let n = (top as usize).clamp(1, MAX_CONTACT_COMPANIES);
        let mut targets: Vec<&str> = board
            .iter()
            .filter(|i| i.priority)
            .map(|i| i.reference.as_str())
            .collect();
        targets.extend(
            board
                .iter()
                .filter(|i| !i.priority)
                .map(|i| i.reference.as_str()),
        );
        targets.truncate(n);
        let searches = calls_of(t, "people_search");
        if searches.is_empty() {
            return ModelStep::Tools(
                targets
                    .iter()
                    .map(|r| call("people_search", json!({"company_ref": r})))
                    .collect(),
            );
        }
        let quotes = calls_of(t, "people_quote");
        if quotes.is_empty() {
            // The first person listed for each company is its most senior contact.
            let handles: Vec<String> = searches
                .iter()
                .filter_map(|s| {
                    ok_rows(s)
                        .first()
                        .and_then(|r| r.get("ref"))
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                })
                .collect();
            if handles.is_empty() {
                return final_(
                    TurnIntent::Cierre {
                        variante: CierreVariante::SinCobertura,
                        salidas: vec![],
                    },
                    "No encontré contactos para esas empresas en el directorio de personas.",
                );
            }
            return ModelStep::Tools(vec![call("people_quote", json!({"handles": handles}))]);
        }
        match quotes.last().and_then(|q| {
            ok_rows(q)
                .first()
                .and_then(|r| r.get("quote_id"))
                .and_then(Value::as_str)
                .map(str::to_owned)
        }) {
            Some(quote_id) => {
                let c = &quotes[quotes.len() - 1].call;
                final_(
                    TurnIntent::ProponerDecision { decision: DecisionDraft::RevelarContactos { quote_id } },
                    format!(
                        "Coticé el contacto principal de [[evidence:{c}.0.people]] empresas de tu selección: cuesta [[evidence:{c}.0.price]] créditos de contacto. Te dejo la tarjeta para revelarlos."
                    ),
                )
            }
            None => final_(
                TurnIntent::Responder {},
                "No pude cotizar los contactos en este momento; intenta de nuevo en un momento.",
            ),
        }
    }

    /// «ármame una secuencia de tres correos» over the saved list: draft it (inert),
    /// preview it, and leave the `revisar_secuencia` card; nothing is sent from here.
    fn sequence(&self, input: &ModelInput, n: u32, stage: Option<&str>) -> ModelStep {
        let t = &input.transcript;
        let visible = |name: &str| input.tools.iter().any(|tool| tool.name == name);
        if !visible("sequence_draft") || !visible("sequence_preview") {
            return final_(
                TurnIntent::Limite {
                    falta: Falta {
                        tipo: FaltaTipo::Operacion,
                        detalle: "Armar la secuencia de correos".into(),
                    },
                },
                "Todavía no puedo armar secuencias desde este chat.",
            );
        }
        let collections = calls_of(t, "crm_collections");
        let Some(lookup) = collections.last() else {
            return ModelStep::Tools(vec![call("crm_collections", json!({}))]);
        };
        let rows = ok_rows(lookup);
        let row = rows
            .iter()
            .find(|r| r.get("ref_label").and_then(Value::as_str) == Some(PREFERRED_COLLECTION))
            .or_else(|| rows.first());
        let Some(collection) = row.and_then(|r| r.get("ref").and_then(Value::as_str)) else {
            return final_(
                TurnIntent::Responder {},
                "No encontré la colección guardada para armar la secuencia.",
            );
        };
        // «para los que están en Nuevo»: the audience is that stage of the list.
        let stage = stage.and_then(|wanted| {
            let stages: Vec<&str> = row?
                .get("stages")?
                .as_array()?
                .iter()
                .filter_map(Value::as_str)
                .collect();
            stages
                .iter()
                .find(|s| fold(s) == wanted)
                .or_else(|| stages.iter().find(|s| fold(s).starts_with(wanted)))
                .map(|s| (*s).to_owned())
        });
        let mut audience = json!({"collection_id": collection});
        if let Some(stage) = stage {
            audience["stage"] = json!(stage);
        }
        let drafts = calls_of(t, "sequence_draft");
        let Some(draft) = drafts.last() else {
            let steps: Vec<Value> = SEQUENCE_TEMPLATES
                .iter()
                .take((n as usize).clamp(1, SEQUENCE_TEMPLATES.len()))
                .map(|(day, subject, body)| json!({"delay_days": day, "subject": subject, "body": body}))
                .collect();
            return ModelStep::Tools(vec![call(
                "sequence_draft",
                json!({"name": "Seguimiento a la lista guardada", "audience": audience, "steps": steps}),
            )]);
        };
        let Some(sequence_id) = ok_rows(draft)
            .first()
            .and_then(|r| r.get("sequence_id"))
            .and_then(Value::as_str)
            .map(str::to_owned)
        else {
            return final_(TurnIntent::Responder {}, "No pude guardar el borrador de la secuencia; revisa la colección e intenta de nuevo.");
        };
        let previews = calls_of(t, "sequence_preview");
        let Some(preview) = previews.last() else {
            return ModelStep::Tools(vec![call("sequence_preview", json!({"id": sequence_id}))]);
        };
        let (d, p) = (&draft.call, &preview.call);
        if ok_rows(preview)
            .first()
            .and_then(|r| r.get("recipients"))
            .and_then(Value::as_u64)
            .unwrap_or(0)
            == 0
        {
            return final_(
                TurnIntent::Cierre { variante: CierreVariante::Parcial, salidas: vec![] },
                format!("Dejé el borrador de [[evidence:{d}.0.steps]] correos, pero todavía nadie lo recibiría: primero consigue el correo de las empresas de la lista."),
            );
        }
        final_(
            TurnIntent::ProponerDecision { decision: DecisionDraft::RevisarSecuencia { sequence_id } },
            format!(
                "Armé un borrador de [[evidence:{d}.0.steps]] correos para [[evidence:{p}.0.recipients]] destinatarios. Nada se envía hasta que autorices cada paso en la tarjeta."
            ),
        )
    }

    /// «investiga … y dime quién domina»: preview a long research run and leave the
    /// `investigar` card; nothing runs before the person accepts it.
    fn research(&self, input: &ModelInput) -> ModelStep {
        let visible = |name: &str| input.tools.iter().any(|tool| tool.name == name);
        if !visible("research_start") {
            return final_(
                TurnIntent::Limite {
                    falta: Falta {
                        tipo: FaltaTipo::Operacion,
                        detalle: "Lanzar una investigación larga".into(),
                    },
                },
                "Todavía no puedo lanzar investigaciones largas desde aquí.",
            );
        }
        let starts = calls_of(&input.transcript, "research_start");
        let Some(ex) = starts.last() else {
            let brief: String = input.turn.message.chars().take(2_000).collect();
            return ModelStep::Tools(vec![call("research_start", json!({"brief": brief}))]);
        };
        if let Some(pid) = ok_rows(ex)
            .first()
            .and_then(|r| r.get("proposal_id"))
            .and_then(Value::as_str)
        {
            return final_(
                TurnIntent::ProponerDecision {
                    decision: DecisionDraft::Investigar {
                        proposal_id: pid.to_owned(),
                    },
                },
                "Te propongo una investigación larga: revisaré Proveedores, Adjudicaciones, marcas de riesgo y segmentos, y te dejaré el resultado con su evidencia. Te dejo la tarjeta para lanzarla.",
            );
        }
        let code = ex
            .result
            .pointer("/error/code")
            .and_then(Value::as_str)
            .unwrap_or("");
        if code == "PLAN_LIMIT" {
            return final_(
                TurnIntent::Limite {
                    falta: Falta {
                        tipo: FaltaTipo::Permiso,
                        detalle: "Investigaciones largas".into(),
                    },
                },
                "Tu plan no permite lanzar esta investigación ahora: o no incluye investigaciones largas, o ya tienes las que permite en curso.",
            );
        }
        final_(
            TurnIntent::Responder {},
            "No pude preparar la investigación; dime qué giro y qué estado quieres que revise.",
        )
    }

    /// «compara empaque en Jalisco contra Nuevo León»: one `market_compare` over the
    /// segments named (two or more buyers, else two or more states), narrated from the
    /// segment rows.
    fn compare(&self, input: &ModelInput, req: &Request) -> ModelStep {
        let t = &input.transcript;
        let giro = req.giro.as_ref().map(|(key, _)| key.clone());
        let segment = |key: &str, value: &str, label: &str| {
            let mut filters = Map::new();
            if let Some(g) = &giro {
                filters.insert("giro".into(), json!(g));
            }
            filters.insert(key.into(), json!(value));
            json!({"filters": filters, "label": label})
        };
        let segments: Vec<Value> = if req.buyers.len() >= 2 {
            req.buyers
                .iter()
                .take(5)
                .map(|b| segment("buyer", b, b))
                .collect()
        } else if req.states.len() >= 2 {
            req.states
                .iter()
                .take(5)
                .map(|(key, name)| segment("state", key, name))
                .collect()
        } else if req.giros.len() >= 2 {
            // «diferencia entre limpieza y seguridad en CDMX»: one segment per giro, each
            // in the place named.
            req.giros
                .iter()
                .take(5)
                .map(|(key, label)| {
                    let mut filters = Map::new();
                    filters.insert("giro".into(), json!(key));
                    if let Some((state, _)) = &req.state {
                        filters.insert("state".into(), json!(state));
                    }
                    json!({"filters": filters, "label": label})
                })
                .collect()
        } else if let [from, to, ..] = years(&input.turn.message)[..] {
            // «compara 2023 contra 2024 en insumos médicos»: one segment per year.
            [from, to]
                .iter()
                .map(|y| {
                    let mut filters = Map::new();
                    if let Some(g) = &giro {
                        filters.insert("giro".into(), json!(g));
                    }
                    if let Some((state, _)) = &req.state {
                        filters.insert("state".into(), json!(state));
                    }
                    filters.insert("date_from".into(), json!(y.to_string()));
                    filters.insert("date_to".into(), json!(y.to_string()));
                    json!({"filters": filters, "label": y.to_string()})
                })
                .collect()
        } else {
            return final_(
                TurnIntent::Encuadre {
                    criterio: describe(req),
                    pregunta: None,
                },
                "Dime qué quieres poner lado a lado: dos estados (Jalisco contra Nuevo León) o dos compradores (el IMSS y el ISSSTE).",
            );
        };
        let Some(done) = calls_of(t, "market_compare").last().copied() else {
            if !input.tools.iter().any(|tool| tool.name == "market_compare") {
                return final_(
                    TurnIntent::Limite {
                        falta: Falta {
                            tipo: FaltaTipo::Operacion,
                            detalle: "Comparar segmentos".into(),
                        },
                    },
                    "En este momento no puedo comparar segmentos desde el chat.",
                );
            }
            return ModelStep::Tools(vec![call("market_compare", json!({"segments": segments}))]);
        };
        let rows = ok_rows(done);
        if rows.len() < 2 {
            return final_(
                TurnIntent::Responder {},
                "No pude comparar esos segmentos con la cobertura que tengo.",
            );
        }
        let c = &done.call;
        let sides: Vec<String> = rows
            .iter()
            .filter_map(|r| r.get("ref").and_then(Value::as_str))
            .map(|r| format!("[[{r}]]"))
            .collect();
        let suppliers: Vec<String> = (0..rows.len())
            .map(|i| format!("[[evidence:{c}.{i}.suppliers]]"))
            .collect();
        final_(
            TurnIntent::Responder {},
            format!(
                "Lado a lado, en Adjudicaciones: {}. Compiten {} Proveedores distintos, respectivamente.",
                sides.join("; "),
                suppliers.join(" y ")
            ),
        )
    }

    /// Risk screening (`market_screen`) of `refs` (`company:<id>`): the call, then the
    /// answer (which a search appends to its own narration).
    fn screen(&self, input: &ModelInput, refs: &[&str]) -> ModelStep {
        let t = &input.transcript;
        let Some(done) = calls_of(t, "market_screen").last().copied() else {
            let rfcs: Vec<&str> = refs
                .iter()
                .filter_map(|r| r.strip_prefix("company:"))
                .take(50)
                .collect();
            if rfcs.is_empty() || !input.tools.iter().any(|tool| tool.name == "market_screen") {
                return final_(
                    TurnIntent::Responder {},
                    "No tengo empresas que revisar todavía: primero armemos una selección.",
                );
            }
            return ModelStep::Tools(vec![call("market_screen", json!({"rfcs": rfcs}))]);
        };
        let rows = ok_rows(done);
        let flagged: Vec<String> = rows
            .iter()
            .filter(|r| r.get("risk_level").and_then(Value::as_str) == Some("con_marcas"))
            .filter_map(|r| r.get("ref").and_then(Value::as_str))
            .filter(|r| r.starts_with("company:"))
            .take(3)
            .map(|r| format!("[[{r}]]"))
            .collect();
        let c = &done.call;
        let sentence = if rows.is_empty() {
            "No pude revisar las marcas de riesgo de esas empresas.".to_owned()
        } else if flagged.is_empty() {
            format!("Revisé las marcas de riesgo de [[evidence:{c}.shown]] empresas: ninguna tiene marcas de riesgo vigentes (listas del SAT o proveedores sancionados).")
        } else {
            format!(
                "Revisé las marcas de riesgo de [[evidence:{c}.shown]] empresas; con marcas vigentes: {}. Puedes quitarlas de la selección.",
                flagged.join(", ")
            )
        };
        final_(TurnIntent::Responder {}, sentence)
    }

    /// «guárdalos» with a selection already on the board: look up the collection, then
    /// preview the save (a level-1 card; nothing is written before the tap).
    fn save_selection(&self, input: &ModelInput) -> Option<ModelStep> {
        let t = &input.transcript;
        let visible = |name: &str| input.tools.iter().any(|tool| tool.name == name);
        if !visible("crm_collections") || !visible("crm_save_companies") {
            return None;
        }
        let Some(lookup) = calls_of(t, "crm_collections").last().copied() else {
            return Some(ModelStep::Tools(vec![call("crm_collections", json!({}))]));
        };
        let rows = ok_rows(lookup);
        let collection = rows
            .iter()
            .find(|r| r.get("ref_label").and_then(Value::as_str) == Some(PREFERRED_COLLECTION))
            .or_else(|| rows.first())
            .and_then(|r| r.get("ref").and_then(Value::as_str))?;
        let Some(save) = calls_of(t, "crm_save_companies").last().copied() else {
            return Some(ModelStep::Tools(vec![call(
                "crm_save_companies",
                json!({"collection_id": collection, "source": "selection", "conflict_policy": "skip"}),
            )]));
        };
        let pid = ok_rows(save)
            .iter()
            .find_map(|r| r.get("proposal_id").and_then(Value::as_str))?;
        Some(final_(
            TurnIntent::ProponerDecision {
                decision: DecisionDraft::GuardarEnCrm {
                    proposal_id: pid.to_owned(),
                },
            },
            "Te dejo la tarjeta para guardar tu selección en el CRM; nada se escribe hasta que la confirmes.",
        ))
    }

    /// A step of a long research run: the search the brief asks for (framing), the
    /// current search changed by the person's steering, or the anchored write-up.
    fn research_step(&self, input: &ModelInput, step: &ResearchStep) -> ModelStep {
        match step.task {
            ResearchTask::Encuadre => {
                let req = parse(&step.brief, &CatalogVocabulary);
                ModelStep::Tools(vec![call(
                    "market_search",
                    json!({"kind": "suppliers", "filters": supplier_filters(&req)}),
                )])
            }
            ResearchTask::Ajuste => {
                let mut filters = step.filters.as_object().cloned().unwrap_or_default();
                for text in &input.turn.steering {
                    let r = parse(text, &CatalogVocabulary);
                    if let Some((key, _)) = &r.giro {
                        filters.insert("giro".into(), json!(key));
                    }
                    if let Some((name, _)) = &r.state {
                        filters.insert("state".into(), json!(name));
                    }
                    if let Some(buyer) = r.buyers.first() {
                        filters.insert("buyer".into(), json!(buyer));
                        filters.remove("has_awards");
                    }
                }
                ModelStep::Tools(vec![call(
                    "market_search",
                    json!({"kind": "suppliers", "filters": filters}),
                )])
            }
            // The director writes the result the way the code would: every name and
            // figure an anchor into what the run read.
            ResearchTask::Informe => final_(
                TurnIntent::Cierre {
                    variante: CierreVariante::Completo,
                    salidas: vec![],
                },
                crate::agent::research::writeup::markup(&input.transcript, &step.criterion),
            ),
        }
    }

    fn plan(&self, input: &ModelInput) -> ModelStep {
        if let Some(step) = &input.turn.research {
            return self.research_step(input, step);
        }
        let req = parse(&input.turn.message, &CatalogVocabulary);
        // A follow-up refines the session's request: the fields it does not name come
        // from the ledger.
        let ask = super::kinds::read(&input.turn.message, today());
        // A ranking or a question about records is its own request, never a refinement.
        let req = if ask.rank.is_none() && ask.kind == super::kinds::RecordKind::Suppliers {
            let constraint = ask.size_band.is_some()
                || ask.amount_min.is_some()
                || ask.amount_max.is_some()
                || ask.date_from.is_some();
            super::memory::recall(&req, &input.turn.facts, &input.turn.message, constraint)
                .unwrap_or(req)
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
        if !req.has_criterion() && !input.turn.board.selection.is_empty() {
            if req.risk_screen {
                let refs: Vec<&str> = input
                    .turn
                    .board
                    .selection
                    .iter()
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
                return self.contacts(input, top);
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
                .and_then(|r| r.get("ref").and_then(Value::as_str))
                .map(str::to_owned)
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
            if let Some(collection_id) = &collection {
                return ModelStep::Tools(vec![call(
                    "crm_save_companies",
                    json!({"collection_id": collection_id, "source": "selection", "conflict_policy": "skip"}),
                )]);
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
