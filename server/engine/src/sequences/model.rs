//! The shapes of a sequence: its steps, its audience and the recipients it resolves to.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Most steps in one sequence, and the longest delay between the first and a step.
pub const MAX_STEPS: usize = 6;
pub const MAX_DELAY_DAYS: u32 = 90;
pub const MAX_SUBJECT: usize = 200;
pub const MAX_BODY: usize = 5_000;

/// Un correo de la secuencia, enviado `delay_days` días después de activarla.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// Días después de activar la secuencia (0 = el mismo día).
    pub delay_days: u32,
    /// Asunto; admite variables como {{nombre}} o {{empresa}}.
    #[schemars(length(max = MAX_SUBJECT))]
    pub subject: String,
    /// Cuerpo en texto plano; admite {{nombre}}, {{empresa}}, {{puesto}}, {{estado}}, {{adjudicacion}}, {{remitente}}.
    #[schemars(length(max = MAX_BODY))]
    pub body: String,
}

/// Quién la recibe: registros de una colección del CRM, por id o por etapa.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Audience {
    /// collection:… de la colección del CRM.
    #[schemars(length(max = crate::base::bounds::ID_MAX))]
    pub collection_id: String,
    /// Registros concretos (record:…); si falta, toda la colección (o la etapa).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = crate::base::bounds::LIST_MAX), inner(length(max = crate::base::bounds::ID_MAX)))]
    pub record_ids: Option<Vec<String>>,
    /// Solo los registros en esta etapa.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = crate::base::bounds::NAME_MAX))]
    pub stage: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Borrador,
    Activa,
    Terminada,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Borrador => "borrador",
            Status::Activa => "activa",
            Status::Terminada => "terminada",
        }
    }

    pub fn parse(s: &str) -> Option<Status> {
        [Status::Borrador, Status::Activa, Status::Terminada]
            .into_iter()
            .find(|x| x.as_str() == s)
    }
}

/// A stored sequence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sequence {
    pub id: String,
    pub workspace_id: String,
    pub session_id: Option<String>,
    pub name: String,
    pub audience: Audience,
    pub steps: Vec<Step>,
    pub sender: String,
    pub status: Status,
    pub version: i64,
    pub activated_at: Option<i64>,
}

impl Sequence {
    pub fn ref_(&self) -> String {
        format!("sequence:{}", self.id)
    }
}

/// A person who would receive the sequence: a revealed contact of a company in the
/// audience, with the variables that personalise it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Recipient {
    pub email: String,
    pub record_id: String,
    pub vars: BTreeMap<String, String>,
    /// The IANA zone of the recipient's company (`zones`); `None`: the workspace's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_zone: Option<String>,
}
