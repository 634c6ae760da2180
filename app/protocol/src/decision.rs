//! Decision cards (CONTRACT §7.2, §8): the typed, person-resolved proposals that stand
//! between Luna and anything that costs money, leaves the workspace, sends email or
//! changes Knowledge. The card is client-safe: it never carries quote tokens or
//! idempotency keys, only what the person needs to decide.

use crate::json::FromJson;
use serde::{Deserialize, Serialize};

/// The `DecisionDraft` kinds of CONTRACT §7.2.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, FromJson)]
#[serde(rename_all = "snake_case")]
pub enum DecisionKind {
    GuardarEnCrm,
    CambiosMasivos,
    DejarNota,
    SugerirEdicion,
    Investigar,
    RevelarContactos,
    RevisarSecuencia,
    FusionarConocimiento,
}

impl DecisionKind {
    pub const ALL: [DecisionKind; 8] = [
        DecisionKind::GuardarEnCrm,
        DecisionKind::CambiosMasivos,
        DecisionKind::DejarNota,
        DecisionKind::SugerirEdicion,
        DecisionKind::Investigar,
        DecisionKind::RevelarContactos,
        DecisionKind::RevisarSecuencia,
        DecisionKind::FusionarConocimiento,
    ];

    /// The wire name (`guardar_en_crm`…), also stored in the database.
    pub fn as_str(self) -> &'static str {
        match self {
            DecisionKind::GuardarEnCrm => "guardar_en_crm",
            DecisionKind::CambiosMasivos => "cambios_masivos",
            DecisionKind::DejarNota => "dejar_nota",
            DecisionKind::SugerirEdicion => "sugerir_edicion",
            DecisionKind::Investigar => "investigar",
            DecisionKind::RevelarContactos => "revelar_contactos",
            DecisionKind::RevisarSecuencia => "revisar_secuencia",
            DecisionKind::FusionarConocimiento => "fusionar_conocimiento",
        }
    }

    pub fn parse(s: &str) -> Option<DecisionKind> {
        DecisionKind::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// Spanish name of the class, for settings and receipts.
    pub fn label(self) -> &'static str {
        match self {
            DecisionKind::GuardarEnCrm => "Guardar en el CRM",
            DecisionKind::CambiosMasivos => "Cambios masivos",
            DecisionKind::DejarNota => "Dejar una nota",
            DecisionKind::SugerirEdicion => "Sugerir una edición",
            DecisionKind::Investigar => "Investigaciones largas",
            DecisionKind::RevelarContactos => "Revelar contactos",
            DecisionKind::RevisarSecuencia => "Autorizar secuencias",
            DecisionKind::FusionarConocimiento => "Fusionar en el conocimiento",
        }
    }

    /// Whether auto mode may ever run this class without a card (CONTRACT §8: never
    /// sending a sequence, never merging into Knowledge).
    pub fn auto_capable(self) -> bool {
        !matches!(
            self,
            DecisionKind::RevisarSecuencia | DecisionKind::FusionarConocimiento
        )
    }

    /// The authorization level (CONTRACT §8): 1 = one tap, 2 = pending decision.
    pub fn level(self) -> u8 {
        match self {
            DecisionKind::GuardarEnCrm
            | DecisionKind::CambiosMasivos
            | DecisionKind::DejarNota
            | DecisionKind::SugerirEdicion
            | DecisionKind::Investigar => 1,
            DecisionKind::RevelarContactos
            | DecisionKind::RevisarSecuencia
            | DecisionKind::FusionarConocimiento => 2,
        }
    }

    /// Where the card is resolved. Knowledge merges belong to owners/admins on the
    /// review page; everything else is resolved in the chat.
    pub fn resolves_in(self) -> ResolvesIn {
        match self {
            DecisionKind::FusionarConocimiento => ResolvesIn::RevisionConocimiento,
            _ => ResolvesIn::Chat,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, FromJson)]
#[serde(rename_all = "snake_case")]
pub enum ResolvesIn {
    Chat,
    RevisionConocimiento,
}

/// Which ledger an amount belongs to (CONTRACT §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, FromJson)]
#[serde(rename_all = "snake_case")]
pub enum Ledger {
    /// Créditos de inteligencia (monthly allowance).
    Inteligencia,
    /// Créditos de contacto (prepaid; revealing a person costs 2).
    Contacto,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, FromJson)]
pub struct Credits {
    pub amount: u32,
    pub ledger: Ledger,
}

/// One line of a card's preview ("12 se crearán", a recipient, a sequence step…).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, FromJson)]
pub struct PreviewLine {
    pub label: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// A client-safe ref (`company:…`) the line points at, if any.
    #[serde(default, rename = "ref", skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
}

/// A decision waiting for the person.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, FromJson)]
pub struct DecisionCard {
    pub id: String,
    pub kind: DecisionKind,
    pub title: String,
    #[serde(default)]
    pub preview: Vec<PreviewLine>,
    /// What accepting costs, if anything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price: Option<Credits>,
    /// The balance of the ledger the price is charged to, when the card was issued.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub balance: Option<Credits>,
    /// Unix milliseconds after which the card can no longer be accepted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<i64>,
    /// What happens on accept, in one Spanish sentence.
    pub consequence: String,
    pub resolves_in: ResolvesIn,
    /// `revisar_secuencia`: one line per step, each authorized by its own checkbox.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<StepLine>,
    /// `revisar_secuencia`: how many recipients the person can page through; each one's
    /// rendered email is fetched on demand (`RecipientEmail`), so the card stays small
    /// whatever the audience.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recipients: Option<u32>,
    /// What this version of the card shows, sealed by the server when it offers the
    /// card (and again when an edit or a re-quote issues it anew under the same id). A
    /// person's click sends back the fingerprint of the card they looked at; a stale
    /// one is `VERSION_CONFLICT` and nothing happens.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub fingerprint: String,
}

/// One recipient's email as the server renders it, for the review card's pager
/// («Destinatario 3 de 10»).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, FromJson)]
pub struct RecipientEmail {
    /// 1-based position in the audience.
    pub position: u32,
    pub total: u32,
    pub email: String,
    /// Why this recipient will be skipped (es-MX), when suppressed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    /// Every step as this recipient would read it.
    #[serde(default)]
    pub steps: Vec<RenderedStep>,
}

/// A step rendered for one recipient.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, FromJson)]
pub struct RenderedStep {
    pub subject: String,
    pub body: String,
}

/// A step of a sequence on its review card.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, FromJson)]
pub struct StepLine {
    /// 0-based step index, what the person's checkbox sends back.
    pub index: u32,
    /// "Paso 1 · día 0 · Asunto…"
    pub label: String,
    /// The step as the first recipient would read it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, FromJson)]
#[serde(rename_all = "snake_case")]
pub enum DecisionOutcome {
    Accepted,
    Declined,
    Expired,
}

/// What resolving a decision produced, for the chat line and the board.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, FromJson)]
pub struct DecisionResult {
    pub summary: String,
    #[serde(default)]
    pub refs: Vec<String>,
}

/// What the person does with a card.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, FromJson)]
#[serde(rename_all = "snake_case")]
pub enum Resolution {
    Accept,
    Decline,
}

/// The answer to resolving a card. `already`: it had been resolved before (another
/// tab, the auto policy, an earlier click); nothing ran this time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, FromJson)]
pub struct DecisionResolution {
    pub decision_id: String,
    pub outcome: DecisionOutcome,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<DecisionResult>,
    pub already: bool,
}
