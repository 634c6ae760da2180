//! What the model may answer at the end of a turn: exactly one `TurnIntent` plus one
//! narration (CONTRACT §7.2), and the fact ledger the question governor checks.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The model's final answer for a turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TurnOutput {
    pub intent: TurnIntent,
    /// Spanish narration with every fact marked `[[kind:id]]`.
    pub narracion: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "tipo", rename_all = "snake_case", deny_unknown_fields)]
pub enum TurnIntent {
    Responder {},
    Encuadre {
        criterio: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pregunta: Option<Pregunta>,
    },
    ProponerDecision {
        decision: DecisionDraft,
    },
    Cierre {
        variante: CierreVariante,
        #[serde(default)]
        salidas: Vec<String>,
    },
    Limite {
        falta: Falta,
    },
}

impl TurnIntent {
    /// The name sent to the client in `turn.finished`.
    pub fn kind(&self) -> &'static str {
        match self {
            TurnIntent::Responder {} => "responder",
            TurnIntent::Encuadre { .. } => "encuadre",
            TurnIntent::ProponerDecision { .. } => "proponer_decision",
            TurnIntent::Cierre { .. } => "cierre",
            TurnIntent::Limite { .. } => "limite",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Pregunta {
    pub texto: String,
    /// The criterion the question asks about; it must be `faltante` in the ledger.
    pub campo: FactField,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opciones: Option<Vec<String>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CierreVariante {
    Completo,
    Parcial,
    SinCobertura,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Falta {
    pub tipo: FaltaTipo,
    pub detalle: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FaltaTipo {
    Operacion,
    Conector,
    Dato,
    Permiso,
    Credito,
}

/// A decision Luna proposes; the person resolves it (CONTRACT §7.2, §8).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "clase", rename_all = "snake_case", deny_unknown_fields)]
pub enum DecisionDraft {
    GuardarEnCrm {
        proposal_id: String,
    },
    CambiosMasivos {
        proposal_id: String,
    },
    DejarNota {
        draft: String,
    },
    SugerirEdicion {
        topic: String,
        summary: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        patch: Option<String>,
    },
    Investigar {
        proposal_id: String,
    },
    RevelarContactos {
        quote_id: String,
    },
    RevisarSecuencia {
        sequence_id: String,
    },
    FusionarConocimiento {
        topic: String,
    },
}

impl DecisionDraft {
    /// Authorization level: 1 = one tap, 2 = pending decision.
    pub fn level(&self) -> u8 {
        match self {
            DecisionDraft::GuardarEnCrm { .. }
            | DecisionDraft::CambiosMasivos { .. }
            | DecisionDraft::DejarNota { .. }
            | DecisionDraft::SugerirEdicion { .. }
            | DecisionDraft::Investigar { .. } => 1,
            DecisionDraft::RevelarContactos { .. }
            | DecisionDraft::RevisarSecuencia { .. }
            | DecisionDraft::FusionarConocimiento { .. } => 2,
        }
    }
}

/// The criteria Luna tracks for a commercial request.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum FactField {
    Giro,
    Estado,
    Cantidad,
    Comprador,
    Ventana,
    Oferta,
}

/// Where Luna knows a criterion from (CONTRACT §7.1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "fuente", rename_all = "snake_case")]
pub enum FactStatus {
    /// Said by the person, at a turn.
    Dicho {
        valor: String,
        turno: u32,
    },
    /// From the workspace's commercial profile.
    Perfil {
        valor: String,
    },
    /// Inferred from context, at a turn.
    Inferido {
        valor: String,
        turno: u32,
    },
    Faltante,
}

/// Every tracked criterion with its status; absent fields are `faltante`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FactLedger {
    pub fields: BTreeMap<FactField, FactStatus>,
}

impl FactLedger {
    pub fn status(&self, field: FactField) -> &FactStatus {
        self.fields.get(&field).unwrap_or(&FactStatus::Faltante)
    }

    pub fn set(&mut self, field: FactField, status: FactStatus) {
        self.fields.insert(field, status);
    }

    pub fn is_missing(&self, field: FactField) -> bool {
        matches!(self.status(field), FactStatus::Faltante)
    }
}

/// Why an intent was refused by the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IntentProblem {
    /// A question about a criterion that is already known (a blocking failure).
    AsksKnownField(FactField),
    /// A decision whose proposal/quote/sequence was not produced in this turn.
    UnknownProposal(String),
}

/// The question governor and proposal check. `proposals` holds the ids that tools
/// returned in this turn (`proposal_id`, `quote_id`, sequence ids).
pub fn check_intent(
    intent: &TurnIntent,
    ledger: &FactLedger,
    proposals: &[String],
) -> Result<(), IntentProblem> {
    match intent {
        TurnIntent::Encuadre {
            pregunta: Some(p), ..
        } if !ledger.is_missing(p.campo) => Err(IntentProblem::AsksKnownField(p.campo)),
        TurnIntent::ProponerDecision { decision } => {
            let id = match decision {
                DecisionDraft::GuardarEnCrm { proposal_id }
                | DecisionDraft::CambiosMasivos { proposal_id }
                | DecisionDraft::Investigar { proposal_id } => Some(proposal_id),
                DecisionDraft::RevelarContactos { quote_id } => Some(quote_id),
                DecisionDraft::RevisarSecuencia { sequence_id } => Some(sequence_id),
                _ => None,
            };
            match id {
                Some(id) if !proposals.iter().any(|p| p == id) => {
                    Err(IntentProblem::UnknownProposal(id.clone()))
                }
                _ => Ok(()),
            }
        }
        _ => Ok(()),
    }
}

/// The previous ledger with this message's fields laid over it: a field the message
/// names is replaced, every other field keeps its value and the turn it came from.
pub fn merge(previous: &FactLedger, said: &FactLedger) -> FactLedger {
    let mut ledger = previous.clone();
    for (field, status) in &said.fields {
        ledger.set(*field, status.clone());
    }
    ledger
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intents_parse_from_the_model_json_shape() {
        let raw = r#"{"intent":{"tipo":"proponer_decision","decision":{"clase":"revelar_contactos","quote_id":"q_1"}},"narracion":"Listo."}"#;
        let out: TurnOutput = serde_json::from_str(raw).unwrap();
        assert_eq!(out.intent.kind(), "proponer_decision");
        let bad = r#"{"intent":{"tipo":"responder","extra":1},"narracion":""}"#;
        assert!(serde_json::from_str::<TurnOutput>(bad).is_err());
    }

    #[test]
    fn the_governor_blocks_questions_about_known_fields() {
        let mut ledger = FactLedger::default();
        ledger.set(
            FactField::Estado,
            FactStatus::Dicho {
                valor: "Jalisco".into(),
                turno: 1,
            },
        );
        let ask = |campo| TurnIntent::Encuadre {
            criterio: "empaque".into(),
            pregunta: Some(Pregunta {
                texto: "¿?".into(),
                campo,
                opciones: None,
            }),
        };
        assert_eq!(
            check_intent(&ask(FactField::Estado), &ledger, &[]),
            Err(IntentProblem::AsksKnownField(FactField::Estado))
        );
        assert_eq!(check_intent(&ask(FactField::Giro), &ledger, &[]), Ok(()));
    }

    #[test]
    fn a_decision_must_cite_a_proposal_made_in_this_turn() {
        let intent = TurnIntent::ProponerDecision {
            decision: DecisionDraft::RevelarContactos {
                quote_id: "q_forged".into(),
            },
        };
        assert!(check_intent(&intent, &FactLedger::default(), &["q_real".into()]).is_err());
        assert!(check_intent(&intent, &FactLedger::default(), &["q_forged".into()]).is_ok());
        assert_eq!(
            DecisionDraft::RevelarContactos {
                quote_id: String::new()
            }
            .level(),
            2
        );
    }
}
