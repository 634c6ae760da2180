//! Long research by the local director: previewing a run («investiga…», «análisis
//! profundo») and playing the model inside a run's steps (framing, steering, write-up).

use serde_json::{json, Value};

use super::{call, calls_of, final_, ok_rows, LocalDirector};
use crate::agent::contract::gateway::{ModelInput, ModelStep};
use crate::agent::contract::input::{ResearchStep, ResearchTask};
use crate::agent::contract::intent::{CierreVariante, DecisionDraft, Falta, FaltaTipo, TurnIntent};
use crate::agent::director::criteria::supplier_filters;
use crate::agent::director::grammar::parse;
use crate::agent::director::vocab::CatalogVocabulary;

/// The run's brief: the person's words, and when they name no giro and no place
/// («investiga a fondo ese mercado») the session's criteria after them, so the run
/// frames the market the conversation was about.
fn brief_of(input: &ModelInput) -> String {
    use crate::agent::contract::intent::FactField;
    use crate::agent::director::memory::value;
    let message: String = input.turn.message.chars().take(1_800).collect();
    let req = parse(&message, &CatalogVocabulary);
    if req.giro.is_some() || req.query.is_some() || req.state.is_some() {
        return message;
    }
    let facts = &input.turn.facts;
    let mut context = Vec::new();
    if let Some(giro) = value(facts, FactField::Giro) {
        context.push(format!("proveedores de {giro}"));
    }
    if let Some(states) = value(facts, FactField::Estado) {
        context.push(format!("en {states}"));
    }
    if let Some(buyer) = value(facts, FactField::Comprador) {
        context.push(format!("que le venden a {buyer}"));
    }
    if context.is_empty() {
        return message;
    }
    format!(
        "{message} (contexto de la conversación: {})",
        context.join(" ")
    )
}

impl LocalDirector {
    /// «investiga … y dime quién domina»: preview a long research run and leave the
    /// `investigar` card; nothing runs before the person accepts it.
    pub(super) fn research(&self, input: &ModelInput) -> ModelStep {
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
            return ModelStep::Tools(vec![call(
                "research_start",
                json!({"brief": brief_of(input)}),
            )]);
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

    /// A step of a long research run: the search the brief asks for (framing), the
    /// current search changed by the person's steering, or the anchored write-up.
    pub(super) fn research_step(&self, input: &ModelInput, step: &ResearchStep) -> ModelStep {
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
                crate::agent::director::writeup::markup(&input.transcript, &step.criterion),
            ),
        }
    }
}
