//! Outreach by the local director: quoting the contacts of the best companies and
//! drafting an email sequence over the saved list; both end in a card, nothing is
//! charged or sent from here.

use serde_json::{json, Value};

use super::{call, calls_of, final_, ok_rows, LocalDirector, PREFERRED_COLLECTION};
use crate::agent::contract::gateway::{ModelInput, ModelStep};
use crate::agent::contract::intent::{CierreVariante, DecisionDraft, Falta, FaltaTipo, TurnIntent};
use crate::base::catalog::text::fold;

/// The director's sequence steps: (day, subject, body), personalised with variables.
const SEQUENCE_TEMPLATES: [(u32, &str, &str); crate::sequences::model::MAX_STEPS] = [
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
        "Una idea para {{empresa}} en {{estado}}",
        "Hola {{nombre}}, si en algún momento buscan nuevos compradores en {{estado}}, aquí estoy.\n\n{{remitente}}",
    ),
    (
        21,
        "Lo que vemos en el mercado, {{nombre}}",
        "Hola {{nombre}}, seguimos viendo compras de gobierno en su giro. Si les sirve, les comparto lo que estamos viendo para {{empresa}}.\n\n{{remitente}}",
    ),
    (
        30,
        "Cierro el tema, {{nombre}}",
        "Hola {{nombre}}, no vuelvo a escribir sobre esto. Si más adelante {{empresa}} quiere platicar, responde a este correo.\n\n{{remitente}}",
    ),
];

/// What Luna says when the contacts asked for were all revealed before.
const ALREADY_REVEALED: &str =
    "Esos contactos ya los revelaste: los tienes en la ficha de cada empresa, sin costo nuevo.";

/// Most companies whose contacts one turn quotes (the auto lock is 10 per turn too).
const MAX_CONTACT_COMPANIES: usize = 10;

/// Whose contacts a request asks for, in the selection's order (priorities first).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Whose {
    /// «el correo de los 10 mejores»: the first N.
    First(u32),
    /// «el cel del director de la primera», «la número 3»: that one company.
    Nth(u32),
}

impl Whose {
    /// What `req` asks for, when it asks for contacts.
    pub(super) fn of(req: &crate::agent::director::grammar::Request) -> Option<Whose> {
        let top = req.contacts_top?;
        Some(req.one.map_or(Whose::First(top), Whose::Nth))
    }
}

impl LocalDirector {
    /// «consígueme el correo de los 10 mejores» over the board's selection: find the
    /// people of the priority companies, quote the most senior one of each, and leave
    /// the `revelar_contactos` card (nothing is charged before the person accepts, or
    /// the auto budget covers it). `None` when every contact asked for was revealed
    /// before: nothing to reveal, so no card (see `contacts_or_next`).
    pub(super) fn contacts(&self, input: &ModelInput, whose: Whose) -> Option<ModelStep> {
        let t = &input.transcript;
        let visible = |name: &str| input.tools.iter().any(|tool| tool.name == name);
        if !visible("people_search") || !visible("people_quote") {
            return Some(final_(
                TurnIntent::Limite {
                    falta: Falta {
                        tipo: FaltaTipo::Operacion,
                        detalle: "Conseguir correos de contacto".into(),
                    },
                },
                "Todavía no puedo conseguir correos de contacto desde este chat.",
            ));
        }
        let board = &input.turn.board.selection;
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
        match whose {
            Whose::First(top) => targets.truncate((top as usize).clamp(1, MAX_CONTACT_COMPANIES)),
            Whose::Nth(k) => {
                let Some(one) = (k as usize)
                    .checked_sub(1)
                    .and_then(|i| targets.get(i))
                    .copied()
                else {
                    return Some(final_(
                        TurnIntent::Responder {},
                        format!(
                            "Tu selección tiene {} empresas; dime cuál de ellas quieres.",
                            targets.len()
                        ),
                    ));
                };
                targets = vec![one];
            }
        }
        let searches = calls_of(t, "people_search");
        if searches.is_empty() {
            return Some(ModelStep::Tools(
                targets
                    .iter()
                    .map(|r| call("people_search", json!({"company_ref": r})))
                    .collect(),
            ));
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
                return Some(final_(
                    TurnIntent::Cierre {
                        variante: CierreVariante::SinCobertura,
                        salidas: vec![],
                    },
                    "No encontré contactos para esas empresas en el directorio de personas.",
                ));
            }
            return Some(ModelStep::Tools(vec![call(
                "people_quote",
                json!({"handles": handles}),
            )]));
        }
        // Every one of them was revealed before: nothing to reveal, so no card.
        let nothing_new = quotes.last().is_some_and(|q| {
            ok_rows(q).first().is_some_and(|r| {
                r.get("to_reveal").and_then(Value::as_u64) == Some(0)
                    && r.get("already_revealed")
                        .and_then(Value::as_u64)
                        .unwrap_or(0)
                        > 0
            })
        });
        if nothing_new {
            return None;
        }
        Some(match quotes.last().and_then(|q| {
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
        })
    }

    /// The contacts part of a request; when every contact asked for was revealed
    /// before, the part after it — the sequence the same request asked for (`then`:
    /// steps and stage), over the saved list — runs at once, its answer saying the
    /// contacts were already on file; with no such part Luna just says so.
    pub(super) fn contacts_or_next(
        &self,
        input: &ModelInput,
        whose: Whose,
        then: Option<(u32, Option<&str>)>,
    ) -> ModelStep {
        if let Some(step) = self.contacts(input, whose) {
            return step;
        }
        match then.filter(|_| input.turn.board.saved_collection.is_some()) {
            Some((n, stage)) => match self.sequence(input, n, stage) {
                ModelStep::Final(mut out) => {
                    out.narracion = format!("{ALREADY_REVEALED} {}", out.narracion);
                    ModelStep::Final(out)
                }
                step => step,
            },
            None => final_(TurnIntent::Responder {}, ALREADY_REVEALED),
        }
    }

    /// «ármame una secuencia de tres correos» over the saved list: draft it (inert),
    /// preview it, and leave the `revisar_secuencia` card; nothing is sent from here.
    pub(super) fn sequence(&self, input: &ModelInput, n: u32, stage: Option<&str>) -> ModelStep {
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
            let drafted = format!("Dejé el borrador de [[evidence:{d}.0.steps]] correos, pero todavía nadie lo recibiría: primero hay que revelar el correo de las empresas de la lista.");
            let can_quote = ["people_search", "people_quote"]
                .iter()
                .all(|name| input.tools.iter().any(|tool| tool.name == *name));
            if input.turn.board.selection.is_empty() || !can_quote {
                return final_(
                    TurnIntent::Cierre {
                        variante: CierreVariante::Parcial,
                        salidas: vec![],
                    },
                    drafted,
                );
            }
            // The next step the person needs: the contacts of the list, on their card.
            return match self
                .contacts(input, Whose::First(MAX_CONTACT_COMPANIES as u32))
                .unwrap_or_else(|| final_(TurnIntent::Responder {}, ALREADY_REVEALED))
            {
                ModelStep::Final(mut out) => {
                    out.narracion = format!(
                        "{drafted} {} Cuando estén revelados, pídeme la secuencia otra vez y te la dejo para autorizar paso por paso.",
                        out.narracion
                    );
                    ModelStep::Final(out)
                }
                step => step,
            };
        }
        final_(
            TurnIntent::ProponerDecision { decision: DecisionDraft::RevisarSecuencia { sequence_id } },
            format!(
                "Armé un borrador de [[evidence:{d}.0.steps]] correos para [[evidence:{p}.0.recipients]] destinatarios. Nada se envía hasta que autorices cada paso en la tarjeta."
            ),
        )
    }
}
