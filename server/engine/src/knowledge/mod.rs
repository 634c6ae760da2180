//! Cerebro (CONTRACT §11): the team's knowledge. Topics (area, title, body, file
//! patterns, freshness, status `en_revision` | `knowledge`) and proposals (notes and
//! suggested edits with a unified diff). The `context_*` tools in [`tools`] wrap it.
//!
//! **Invariants.**
//! * Every read and write is scoped to the caller's workspace; another workspace's
//!   topic or proposal is `NOT_FOUND`.
//! * Knowledge changes only through [`Knowledge::merge`], which only an owner or admin
//!   may call (`FORBIDDEN` otherwise) and which is audited. Tools only create notes
//!   born "en revisión" and proposals; an update to a Knowledge topic becomes a
//!   suggested edit.
//! * A proposal Luna previews is a `borrador` until the person taps
//!   ([`Knowledge::apply_draft`]); only then does it reach the reviewers.

pub mod demo;
pub mod diff;
pub mod glob;
pub mod limits;
mod proposals;
pub mod retrieve;
pub mod review;
mod topics;

#[cfg(test)]
mod limits_tests;
#[cfg(test)]
mod tests;

use crate::base::store::DbRow;
use luna_protocol::error::ErrorCode;
use serde_json::json;
use sqlx::Row;

use crate::accounts::{audit_in, Caller};
use crate::base::catalog::text::fold_letters;
use crate::base::clock::now_ms;
use crate::base::error::{EngineError, EngineResult};
use crate::base::ids::new_id;
use crate::base::store::{Scope, Store};

pub use retrieve::{Hit, RetrieveQuery};

use limits::{check_area, check_body, check_new, check_patterns, check_summary, check_title};

/// A topic not updated in this long is stale (besides an explicit mark).
pub const STALE_AFTER_MS: i64 = 180 * 24 * 3_600_000;
const DAY_MS: i64 = 24 * 3_600_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TopicStatus {
    EnRevision,
    Knowledge,
}

impl TopicStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            TopicStatus::EnRevision => "en_revision",
            TopicStatus::Knowledge => "knowledge",
        }
    }
    pub fn label(self) -> &'static str {
        match self {
            TopicStatus::EnRevision => "en revisión",
            TopicStatus::Knowledge => "Knowledge",
        }
    }
    fn parse(s: &str) -> TopicStatus {
        if s == "knowledge" {
            TopicStatus::Knowledge
        } else {
            TopicStatus::EnRevision
        }
    }
}

#[derive(Debug, Clone)]
pub struct Topic {
    pub id: String,
    pub slug: String,
    pub area: String,
    pub title: String,
    pub body: String,
    pub patterns: Vec<String>,
    pub status: TopicStatus,
    pub stale_marked: bool,
    pub created_at: i64,
    pub updated_at: i64,
    pub updated_by: String,
}

impl Topic {
    pub fn ref_(&self) -> String {
        format!("topic:{}", self.slug)
    }
    pub fn is_stale(&self, now: i64) -> bool {
        self.stale_marked || now - self.updated_at > STALE_AFTER_MS
    }
    /// "al día · actualizado hace 3 días", "desactualizado · hace 7 meses".
    pub fn badge(&self, now: i64) -> String {
        let days = ((now - self.updated_at) / DAY_MS).max(0);
        let ago = match days {
            0 => "actualizado hoy".to_owned(),
            1 => "actualizado ayer".to_owned(),
            2..=59 => format!("actualizado hace {days} días"),
            _ => format!("actualizado hace {} meses", days / 30),
        };
        let state = if self.is_stale(now) {
            "desactualizado"
        } else if days <= 30 {
            "al día"
        } else {
            "vigente"
        };
        format!("{state} · {ago}")
    }
}

/// A new topic or note.
#[derive(Debug, Clone)]
pub struct NewTopic {
    pub title: String,
    pub area: String,
    pub body: String,
    pub patterns: Vec<String>,
}

/// Changes to a topic; `None` leaves a field as it is.
#[derive(Debug, Clone, Default)]
pub struct TopicChanges {
    pub title: Option<String>,
    pub area: Option<String>,
    pub body: Option<String>,
    pub patterns: Option<Vec<String>>,
    pub stale: Option<bool>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProposalKind {
    Note,
    Edit,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProposalStatus {
    Borrador,
    Pendiente,
    Fusionada,
    Rechazada,
}

impl ProposalStatus {
    fn parse(s: &str) -> ProposalStatus {
        match s {
            "borrador" => ProposalStatus::Borrador,
            "fusionada" => ProposalStatus::Fusionada,
            "rechazada" => ProposalStatus::Rechazada,
            _ => ProposalStatus::Pendiente,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            ProposalStatus::Borrador => "borrador",
            ProposalStatus::Pendiente => "pendiente",
            ProposalStatus::Fusionada => "fusionada",
            ProposalStatus::Rechazada => "rechazada",
        }
    }
}

/// A note or a suggested edit, as the review page shows it.
#[derive(Debug, Clone)]
pub struct Proposal {
    pub id: String,
    pub kind: ProposalKind,
    /// The note's topic (once applied) or the edited topic.
    pub topic_id: Option<String>,
    pub topic_slug: Option<String>,
    pub title: String,
    pub area: String,
    pub summary: String,
    /// Note: its content. Edit: the proposed body (`None`: a question to the reviewer).
    pub body: Option<String>,
    pub patterns: Vec<String>,
    pub diff: Option<String>,
    pub status: ProposalStatus,
    pub proposed_by: String,
    /// The proposer's display name ("Integración" for an API key without a person).
    pub proposed_by_name: String,
    pub created_at: i64,
}

/// What `context_update` did.
#[derive(Debug, Clone)]
pub enum UpdateOutcome {
    /// The topic (en revisión, or only its stale mark) changed.
    Applied(Topic),
    /// The topic is Knowledge: the change waits for an owner/admin as a suggested edit.
    Proposed(Proposal),
}

#[derive(Clone, Debug)]
pub struct Knowledge {
    store: Store,
}

const TOPIC_COLS: &str = "id, slug, area, title, body, patterns, status, stale_marked, created_at, updated_at, updated_by";
const PROPOSAL_COLS: &str = "p.id, p.kind, p.topic_id, t.slug as topic_slug, p.title, p.area, p.summary, p.body, p.patterns, p.patch, p.diff, p.status, p.proposed_by, coalesce(u.display_name, 'Integración') as proposed_by_name, p.created_at";
/// The joins every `PROPOSAL_COLS` read uses.
const PROPOSAL_FROM: &str = "kn_proposals p left join kn_topics t on t.id = p.topic_id
     left join users u on u.id = p.proposed_by";

fn topic_from(r: &DbRow) -> Topic {
    let patterns: String = r.get("patterns");
    Topic {
        id: r.get("id"),
        slug: r.get("slug"),
        area: r.get("area"),
        title: r.get("title"),
        body: r.get("body"),
        patterns: serde_json::from_str(&patterns).unwrap_or_default(),
        status: TopicStatus::parse(r.get("status")),
        stale_marked: r.get::<i64, _>("stale_marked") != 0,
        created_at: r.get("created_at"),
        updated_at: r.get("updated_at"),
        updated_by: r.get("updated_by"),
    }
}

fn proposal_from(r: &DbRow) -> Proposal {
    let kind: String = r.get("kind");
    let kind = if kind == "edit" {
        ProposalKind::Edit
    } else {
        ProposalKind::Note
    };
    let patterns: String = r.get("patterns");
    Proposal {
        id: r.get("id"),
        kind,
        topic_id: r.get("topic_id"),
        topic_slug: r.get("topic_slug"),
        title: r.get("title"),
        area: r.get("area"),
        summary: r.get("summary"),
        body: match kind {
            ProposalKind::Note => r.get("body"),
            ProposalKind::Edit => r.get("patch"),
        },
        patterns: serde_json::from_str(&patterns).unwrap_or_default(),
        diff: r.get("diff"),
        status: ProposalStatus::parse(r.get("status")),
        proposed_by: r.get("proposed_by"),
        proposed_by_name: r.get("proposed_by_name"),
        created_at: r.get("created_at"),
    }
}

/// A topic argument: `topic:<slug>` or the bare slug.
pub fn topic_slug(topic: &str) -> &str {
    let t = topic.trim();
    t.strip_prefix("topic:").unwrap_or(t).trim()
}

/// The area as stored: trimmed, folded, lower case ("Gobierno" → "gobierno").
pub fn normalize_area(area: &str) -> String {
    fold_letters(area.trim())
}

fn slugify(title: &str) -> String {
    let folded = fold_letters(title);
    let mut out = String::new();
    for c in folded.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    let out: String = out.trim_matches('-').chars().take(60).collect();
    let out = out.trim_matches('-').to_owned();
    if out.is_empty() {
        "tema".into()
    } else {
        out
    }
}

fn to_json(v: &impl serde::Serialize) -> EngineResult<String> {
    serde_json::to_string(v).map_err(|e| EngineError::Internal(e.to_string()))
}

fn require_reviewer(caller: &Caller) -> EngineResult<()> {
    if caller.api_key.is_some() {
        // Whatever its scopes: merging Knowledge stays a person's act in the app.
        return Err(EngineError::forbidden(
            "Una llave de API no puede fusionar ni rechazar cambios a Knowledge.",
        ));
    }
    if caller.role.can_administer() {
        Ok(())
    } else {
        Err(EngineError::forbidden(
            "Solo el dueño o un administrador puede fusionar o rechazar cambios a Knowledge.",
        ))
    }
}

impl Knowledge {
    pub fn new(store: Store) -> Self {
        Knowledge { store }
    }

    pub(crate) fn store(&self) -> &Store {
        &self.store
    }

    /// A topic of the caller's workspace by `topic:<slug>` or slug, else `NOT_FOUND`.
    pub async fn get(&self, caller: &Caller, topic: &str) -> EngineResult<Topic> {
        let row = sqlx::query(&format!(
            "select {TOPIC_COLS} from kn_topics where workspace_id = $1 and slug = $2"
        ))
        .bind(&caller.workspace_id)
        .bind(topic_slug(topic))
        .fetch_optional(self.store.pool())
        .await?;
        row.map(|r| topic_from(&r))
            .ok_or_else(|| EngineError::not_found("ese tema de Cerebro"))
    }
}
