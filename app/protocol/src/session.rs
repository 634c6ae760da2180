//! The work session as the browser sees it: its stage (CONTRACT §7.4), its mode and
//! budget (CONTRACT §8), and the summary returned by the session server functions.

use crate::json::FromJson;
use serde::{Deserialize, Serialize};

use crate::view::SessionView;

/// Where the conversation stands; decides which tools Luna sees (CONTRACT §7.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, FromJson)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    SinCriterio,
    Buscando,
    ConSeleccion,
    ConListaGuardada,
    /// A sequence draft waits for its review: editing it is the job at hand.
    ConBorrador,
    DecisionPendiente,
}

impl Stage {
    pub const ALL: [Stage; 6] = [
        Stage::SinCriterio,
        Stage::Buscando,
        Stage::ConSeleccion,
        Stage::ConListaGuardada,
        Stage::ConBorrador,
        Stage::DecisionPendiente,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Stage::SinCriterio => "sin_criterio",
            Stage::Buscando => "buscando",
            Stage::ConSeleccion => "con_seleccion",
            Stage::ConListaGuardada => "con_lista_guardada",
            Stage::ConBorrador => "con_borrador",
            Stage::DecisionPendiente => "decision_pendiente",
        }
    }

    pub fn parse(s: &str) -> Option<Stage> {
        Stage::ALL.into_iter().find(|st| st.as_str() == s)
    }
}

/// How level-1/2 actions run (CONTRACT §8): ask every time, auto inside a budget, or per class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, FromJson)]
#[serde(rename_all = "snake_case")]
pub enum SessionMode {
    #[default]
    Preguntar,
    Automatico,
    AjusteFino,
}

impl SessionMode {
    pub fn as_str(self) -> &'static str {
        match self {
            SessionMode::Preguntar => "preguntar",
            SessionMode::Automatico => "automatico",
            SessionMode::AjusteFino => "ajuste_fino",
        }
    }

    pub fn parse(s: &str) -> Option<SessionMode> {
        [
            SessionMode::Preguntar,
            SessionMode::Automatico,
            SessionMode::AjusteFino,
        ]
        .into_iter()
        .find(|m| m.as_str() == s)
    }

    /// Spanish label for the mode selector.
    pub fn label(self) -> &'static str {
        match self {
            SessionMode::Preguntar => "Preguntar",
            SessionMode::Automatico => "Automático con presupuesto",
            SessionMode::AjusteFino => "Ajuste fino",
        }
    }
}

/// The auto-mode budget of one session and what has been spent against it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, FromJson)]
pub struct SessionBudget {
    pub credit_cap: u32,
    pub contact_cap: u32,
    pub credits_spent: u32,
    pub contacts_spent: u32,
}

/// A work session's row, safe to show to its workspace's members.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, FromJson)]
pub struct SessionInfo {
    pub id: String,
    pub stage: Stage,
    pub mode: SessionMode,
    pub budget: SessionBudget,
    /// Unix milliseconds.
    pub created_at: i64,
    /// The seq of the newest event (0 when the log is empty).
    pub last_seq: u64,
}

/// The projection of a session at `seq`: what `session_snapshot` returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, FromJson)]
pub struct SessionSnapshot {
    pub seq: u64,
    pub view: SessionView,
}

/// The answer to submitting a message: the turn it started, or the running turn it
/// steered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, FromJson)]
pub struct TurnAck {
    pub turn_id: String,
    /// True when the message steered a turn that was already running.
    pub steering: bool,
}

/// The workspace's auto-mode policy, set by an owner/admin in Ajustes (CONTRACT §8).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, FromJson)]
pub struct AutoPolicy {
    /// Whether members may turn on auto mode at all (paid plans only).
    pub allowed: bool,
    /// The budget a session starts with when the person names none.
    pub default_credit_cap: u32,
    pub default_contact_cap: u32,
    /// The ceilings: the highest budget a member may set for one session (a request
    /// above them is refused, naming them). Never below the defaults.
    pub max_credit_cap: u32,
    pub max_contact_cap: u32,
    /// Decision classes auto mode may run in this workspace.
    pub classes: Vec<crate::decision::DecisionKind>,
}

impl Default for AutoPolicy {
    fn default() -> Self {
        AutoPolicy {
            allowed: true,
            default_credit_cap: 50,
            default_contact_cap: 10,
            // The engine's own limits (`decisions::auto::MAX_CREDIT_CAP`, `MAX_CONTACT_CAP`).
            max_credit_cap: 10_000,
            max_contact_cap: 500,
            classes: crate::decision::DecisionKind::ALL
                .into_iter()
                .filter(|k| k.auto_capable())
                .collect(),
        }
    }
}

/// The person's choice of mode for one session. Caps default to the workspace's;
/// `classes` matters only for `ajuste_fino` (auto uses every allowed class).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, FromJson)]
pub struct ModeRequest {
    pub mode: SessionMode,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credit_cap: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contact_cap: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub classes: Option<Vec<crate::decision::DecisionKind>>,
}

/// The workspace's commercial profile, set by an owner/admin in Ajustes (CONTRACT §7.1):
/// what the team sells and to whom. Luna reads it every turn; its fields are `perfil`
/// facts of the ledger, so Luna never asks what the profile already says. Every field
/// defaults: the browser's form encoding leaves an empty list out.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, FromJson)]
pub struct CommercialProfile {
    /// What the team sells («empaque corrugado y etiquetas»).
    #[serde(default)]
    pub oferta: String,
    /// The giros of the companies it sells to.
    #[serde(default)]
    pub giros: Vec<String>,
    /// Its territory: state names as the catalogue writes them.
    #[serde(default)]
    pub estados: Vec<String>,
    /// The government buyers it targets (IMSS, CFE…).
    #[serde(default)]
    pub compradores: Vec<String>,
    /// A typical deal, in pesos.
    #[serde(default)]
    pub ticket_mxn: Option<u64>,
    /// Whom not to look for.
    #[serde(default)]
    pub exclusiones: String,
}
