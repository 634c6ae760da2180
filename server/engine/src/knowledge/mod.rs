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
pub mod retrieve;
pub mod review;

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

    async fn free_slug(
        &self,
        conn: &mut crate::base::store::Conn,
        ws: &str,
        title: &str,
    ) -> EngineResult<String> {
        let base = slugify(title);
        let mut slug = base.clone();
        let mut n = 2;
        loop {
            let taken: Option<i64> =
                sqlx::query_scalar("select 1 from kn_topics where workspace_id = $1 and slug = $2")
                    .bind(ws)
                    .bind(&slug)
                    .fetch_optional(&mut *conn)
                    .await?;
            if taken.is_none() {
                return Ok(slug);
            }
            slug = format!("{base}-{n}");
            n += 1;
        }
    }

    async fn insert_topic(
        &self,
        conn: &mut crate::base::store::Conn,
        workspace_id: &str,
        user_id: &str,
        t: &NewTopic,
        status: TopicStatus,
        now: i64,
    ) -> EngineResult<String> {
        let id = new_id("tpc");
        let slug = self.free_slug(conn, workspace_id, &t.title).await?;
        sqlx::query(
            "insert into kn_topics (id, workspace_id, slug, area, title, body, patterns, status,
                                    created_by, updated_by, created_at, updated_at)
             values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
        )
        .bind(&id)
        .bind(workspace_id)
        .bind(&slug)
        .bind(&t.area)
        .bind(&t.title)
        .bind(&t.body)
        .bind(to_json(&t.patterns)?)
        .bind(status.as_str())
        .bind(user_id)
        .bind(user_id)
        .bind(now)
        .bind(now)
        .execute(&mut *conn)
        .await?;
        Ok(slug)
    }

    /// A note born "en revisión" (`context_create`, `context_note` executed): the
    /// topic plus a pending proposal for the reviewers.
    pub async fn create_note(
        &self,
        caller: &Caller,
        topic: &NewTopic,
        summary: &str,
        surface: &str,
    ) -> EngineResult<(Topic, Proposal)> {
        let t = check_new(topic)?;
        let now = now_ms();
        let mut tx = self
            .store
            .begin_write_in(Scope::Workspace(&caller.workspace_id))
            .await?;
        let slug = self
            .insert_topic(
                &mut tx,
                &caller.workspace_id,
                &caller.user_id,
                &t,
                TopicStatus::EnRevision,
                now,
            )
            .await?;
        let topic_id: String =
            sqlx::query_scalar("select id from kn_topics where workspace_id = $1 and slug = $2")
                .bind(&caller.workspace_id)
                .bind(&slug)
                .fetch_one(&mut *tx)
                .await?;
        let pid = self
            .insert_proposal(
                &mut tx,
                caller,
                ProposalKind::Note,
                Some(&topic_id),
                &t,
                summary,
                None,
                None,
                None,
                ProposalStatus::Pendiente,
                surface,
                now,
            )
            .await?;
        tx.commit().await?;
        Ok((
            self.get(caller, &slug).await?,
            self.proposal(caller, &pid).await?,
        ))
    }

    /// A note Luna previewed: a `borrador` proposal, nothing visible until the tap.
    pub async fn draft_note(
        &self,
        caller: &Caller,
        topic: &NewTopic,
        surface: &str,
    ) -> EngineResult<Proposal> {
        let t = check_new(topic)?;
        let now = now_ms();
        let mut tx = self
            .store
            .begin_write_in(Scope::Workspace(&caller.workspace_id))
            .await?;
        let summary = format!("Nota nueva: {}", t.title);
        let pid = self
            .insert_proposal(
                &mut tx,
                caller,
                ProposalKind::Note,
                None,
                &t,
                &summary,
                None,
                None,
                None,
                ProposalStatus::Borrador,
                surface,
                now,
            )
            .await?;
        tx.commit().await?;
        self.proposal(caller, &pid).await
    }

    #[allow(clippy::too_many_arguments)]
    async fn insert_proposal(
        &self,
        conn: &mut crate::base::store::Conn,
        caller: &Caller,
        kind: ProposalKind,
        topic_id: Option<&str>,
        t: &NewTopic,
        summary: &str,
        patch: Option<&str>,
        diff: Option<&str>,
        base_updated_at: Option<i64>,
        status: ProposalStatus,
        surface: &str,
        now: i64,
    ) -> EngineResult<String> {
        let id = new_id("prp");
        sqlx::query(
            "insert into kn_proposals (id, workspace_id, kind, topic_id, title, area, summary, body,
                                       patterns, patch, diff, base_updated_at, status, proposed_by,
                                       surface, created_at)
             values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)",
        )
        .bind(&id)
        .bind(&caller.workspace_id)
        .bind(match kind {
            ProposalKind::Note => "note",
            ProposalKind::Edit => "edit",
        })
        .bind(topic_id)
        .bind(&t.title)
        .bind(&t.area)
        .bind(summary.trim())
        .bind(match kind {
            ProposalKind::Note => Some(t.body.as_str()),
            ProposalKind::Edit => None,
        })
        .bind(to_json(&t.patterns)?)
        .bind(patch)
        .bind(diff)
        .bind(base_updated_at)
        .bind(status.as_str())
        .bind(&caller.user_id)
        .bind(surface)
        .bind(now)
        .execute(&mut *conn)
        .await?;
        Ok(id)
    }

    /// A proposal of the caller's workspace, else `NOT_FOUND`.
    pub async fn proposal(&self, caller: &Caller, id: &str) -> EngineResult<Proposal> {
        let id = id.trim().trim_start_matches("proposal:");
        let row = sqlx::query(&format!(
            "select {PROPOSAL_COLS} from {PROPOSAL_FROM} where p.workspace_id = $1 and p.id = $2"
        ))
        .bind(&caller.workspace_id)
        .bind(id)
        .fetch_optional(self.store.pool())
        .await?;
        row.map(|r| proposal_from(&r))
            .ok_or_else(|| EngineError::not_found("esa propuesta"))
    }

    /// A suggested edit to a topic (`context_suggest_edit`, or `context_update` on a
    /// Knowledge topic). `patch` is the proposed body; without it the proposal is a
    /// question to the reviewer. `draft`: Luna's preview, awaiting the person's tap.
    pub async fn suggest_edit(
        &self,
        caller: &Caller,
        topic: &str,
        summary: &str,
        changes: &TopicChanges,
        draft: bool,
        surface: &str,
    ) -> EngineResult<Proposal> {
        check_summary(summary)?;
        let current = self.get(caller, topic).await?;
        if let Some(t) = &changes.title {
            check_title(t)?;
        }
        if let Some(a) = &changes.area {
            check_area(&normalize_area(a))?;
        }
        if let Some(b) = &changes.body {
            check_body(b)?;
        }
        if let Some(p) = &changes.patterns {
            check_patterns(p)?;
        }
        let proposed = NewTopic {
            title: changes
                .title
                .as_deref()
                .map(str::trim)
                .unwrap_or(&current.title)
                .to_owned(),
            area: changes
                .area
                .as_deref()
                .map(normalize_area)
                .unwrap_or_else(|| current.area.clone()),
            body: current.body.clone(),
            patterns: changes
                .patterns
                .as_ref()
                .map(|ps| ps.iter().map(|p| p.trim().to_owned()).collect())
                .unwrap_or_else(|| current.patterns.clone()),
        };
        let patch = changes.body.as_deref().map(str::trim);
        let diff = match patch {
            // Bounded (bodies are capped, the diff has a deadline) but still CPU work:
            // it runs on the blocking pool, not on an async worker.
            Some(p) => {
                let (name, old, new) = (current.ref_(), current.body.clone(), p.to_owned());
                let d = tokio::task::spawn_blocking(move || diff::unified(&name, &old, &new))
                    .await
                    .map_err(EngineError::internal)??;
                Some(d)
            }
            None => None,
        };
        let now = now_ms();
        let mut tx = self
            .store
            .begin_write_in(Scope::Workspace(&caller.workspace_id))
            .await?;
        let status = if draft {
            ProposalStatus::Borrador
        } else {
            ProposalStatus::Pendiente
        };
        let pid = self
            .insert_proposal(
                &mut tx,
                caller,
                ProposalKind::Edit,
                Some(&current.id),
                &proposed,
                summary,
                patch,
                diff.as_deref(),
                Some(current.updated_at),
                status,
                surface,
                now,
            )
            .await?;
        tx.commit().await?;
        self.proposal(caller, &pid).await
    }

    /// The one-tap card of `context_note` / `context_suggest_edit`: turns Luna's
    /// `borrador` into a note en revisión / a pending edit. Applying twice is a no-op.
    pub async fn apply_draft(&self, caller: &Caller, proposal_id: &str) -> EngineResult<Proposal> {
        let p = self.proposal(caller, proposal_id).await?;
        if p.status != ProposalStatus::Borrador {
            return Ok(p);
        }
        let now = now_ms();
        let mut tx = self
            .store
            .begin_write_in(Scope::Workspace(&caller.workspace_id))
            .await?;
        let still: Option<String> = sqlx::query_scalar(
            "select status from kn_proposals where workspace_id = $1 and id = $2",
        )
        .bind(&caller.workspace_id)
        .bind(&p.id)
        .fetch_optional(&mut *tx)
        .await?;
        if still.as_deref() != Some("borrador") {
            tx.rollback().await?;
            return self.proposal(caller, &p.id).await;
        }
        let mut topic_id = p.topic_id.clone();
        if p.kind == ProposalKind::Note {
            let t = NewTopic {
                title: p.title.clone(),
                area: p.area.clone(),
                body: p.body.clone().unwrap_or_default(),
                patterns: p.patterns.clone(),
            };
            let slug = self
                .insert_topic(
                    &mut tx,
                    &caller.workspace_id,
                    &caller.user_id,
                    &t,
                    TopicStatus::EnRevision,
                    now,
                )
                .await?;
            topic_id = sqlx::query_scalar(
                "select id from kn_topics where workspace_id = $1 and slug = $2",
            )
            .bind(&caller.workspace_id)
            .bind(&slug)
            .fetch_optional(&mut *tx)
            .await?;
        }
        sqlx::query("update kn_proposals set status = 'pendiente', topic_id = $1 where workspace_id = $2 and id = $3")
            .bind(&topic_id)
            .bind(&caller.workspace_id)
            .bind(&p.id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        self.proposal(caller, &p.id).await
    }

    /// Updates a topic (`context_update`). En revisión: applied. Knowledge: only the
    /// stale mark applies directly; any other change becomes a pending suggested edit.
    pub async fn update(
        &self,
        caller: &Caller,
        topic: &str,
        changes: &TopicChanges,
        surface: &str,
    ) -> EngineResult<UpdateOutcome> {
        let current = self.get(caller, topic).await?;
        let content_change = changes.title.is_some()
            || changes.area.is_some()
            || changes.body.is_some()
            || changes.patterns.is_some();
        if current.status == TopicStatus::Knowledge && content_change {
            let summary = "Cambio propuesto desde una integración".to_owned();
            return self
                .suggest_edit(caller, topic, &summary, changes, false, surface)
                .await
                .map(UpdateOutcome::Proposed);
        }
        let next = check_new(&NewTopic {
            title: changes.title.clone().unwrap_or(current.title.clone()),
            area: changes.area.clone().unwrap_or(current.area.clone()),
            body: changes.body.clone().unwrap_or(current.body.clone()),
            patterns: changes.patterns.clone().unwrap_or(current.patterns.clone()),
        })?;
        let stale = changes
            .stale
            .unwrap_or(current.stale_marked && !content_change);
        let now = now_ms();
        sqlx::query(
            "update kn_topics set title = $1, area = $2, body = $3, patterns = $4, stale_marked = $5,
                                  updated_at = $6, updated_by = $7
              where workspace_id = $8 and id = $9",
        )
        .bind(&next.title)
        .bind(&next.area)
        .bind(&next.body)
        .bind(to_json(&next.patterns)?)
        .bind(i64::from(stale))
        .bind(if content_change {
            now
        } else {
            current.updated_at
        })
        .bind(&caller.user_id)
        .bind(&caller.workspace_id)
        .bind(&current.id)
        .execute(self.store.pool())
        .await?;
        Ok(UpdateOutcome::Applied(
            self.get(caller, &current.slug).await?,
        ))
    }

    /// Deletes a topic (`context_delete`). A Knowledge topic only by an owner/admin;
    /// a note en revisión by any member. Audited.
    pub async fn delete(&self, caller: &Caller, topic: &str) -> EngineResult<Topic> {
        let current = self.get(caller, topic).await?;
        if current.status == TopicStatus::Knowledge && !caller.role.can_administer() {
            return Err(EngineError::forbidden(
                "Solo el dueño o un administrador puede borrar un tema de Knowledge.",
            ));
        }
        let mut tx = self
            .store
            .begin_write_in(Scope::Workspace(&caller.workspace_id))
            .await?;
        sqlx::query("delete from kn_proposals where workspace_id = $1 and topic_id = $2")
            .bind(&caller.workspace_id)
            .bind(&current.id)
            .execute(&mut *tx)
            .await?;
        sqlx::query("delete from kn_topics where workspace_id = $1 and id = $2")
            .bind(&caller.workspace_id)
            .bind(&current.id)
            .execute(&mut *tx)
            .await?;
        audit_in(
            &mut tx,
            caller,
            "knowledge.delete",
            &json!({"topic": current.ref_(), "title": current.title}),
        )
        .await?;
        tx.commit().await?;
        Ok(current)
    }

    /// Notes and suggested edits awaiting an owner/admin, oldest first, with diffs.
    pub async fn pending(&self, caller: &Caller) -> EngineResult<Vec<Proposal>> {
        // Proposals made in one millisecond keep the order they were made in.
        let made = self.store.backend().insertion_order();
        let rows = sqlx::query(&format!(
            "select {PROPOSAL_COLS} from {PROPOSAL_FROM}
              where p.workspace_id = $1 and p.status = 'pendiente' order by p.created_at, p.{made}"
        ))
        .bind(&caller.workspace_id)
        .fetch_all(self.store.pool())
        .await?;
        Ok(rows.iter().map(proposal_from).collect())
    }

    /// The proposal to resolve as `target`: `Ok(None)` when it is pending, `Ok(Some)`
    /// when it already has that outcome (resolving twice is a no-op), else a typed
    /// error. Owner/admin only.
    async fn resolvable(
        &self,
        caller: &Caller,
        id: &str,
        target: ProposalStatus,
    ) -> EngineResult<Option<Proposal>> {
        require_reviewer(caller)?;
        let p = self.proposal(caller, id).await?;
        match p.status {
            ProposalStatus::Pendiente => Ok(None),
            s if s == target => Ok(Some(p)),
            ProposalStatus::Borrador => Err(EngineError::typed(
                ErrorCode::Conflict,
                "Esa propuesta todavía no se envía a revisión.",
                "Quien la propuso debe confirmarla primero.",
            )),
            ProposalStatus::Fusionada | ProposalStatus::Rechazada => Err(EngineError::typed(
                ErrorCode::Conflict,
                "Esa propuesta ya se resolvió de otra forma.",
                "Revisa la lista de pendientes.",
            )),
        }
    }

    /// `fusionar_conocimiento`: a note becomes Knowledge, or a suggested edit is
    /// applied (`VERSION_CONFLICT` if the topic changed since it was proposed; a
    /// question without patch is marked resolved). Owner/admin only; audited once:
    /// merging an already merged proposal is a no-op.
    pub async fn merge(&self, caller: &Caller, id: &str) -> EngineResult<Proposal> {
        let p = match self
            .resolvable(caller, id, ProposalStatus::Fusionada)
            .await?
        {
            Some(done) => return Ok(done),
            None => self.proposal(caller, id).await?,
        };
        let now = now_ms();
        let mut tx = self
            .store
            .begin_write_in(Scope::Workspace(&caller.workspace_id))
            .await?;
        if !self
            .claim(&mut tx, caller, &p, ProposalStatus::Fusionada, now)
            .await?
        {
            // Resolved by someone else meanwhile: same rules as a second call.
            tx.rollback().await?;
            return Box::pin(self.merge(caller, id)).await;
        }
        let Some(topic_id) = p.topic_id.as_deref() else {
            return Err(EngineError::not_found("el tema de esa propuesta"));
        };
        match p.kind {
            ProposalKind::Note => {
                sqlx::query(
                    "update kn_topics set status = 'knowledge', updated_at = $1, updated_by = $2
                      where workspace_id = $3 and id = $4",
                )
                .bind(now)
                .bind(&caller.user_id)
                .bind(&caller.workspace_id)
                .bind(topic_id)
                .execute(&mut *tx)
                .await?;
            }
            ProposalKind::Edit => {
                let base: Option<i64> = sqlx::query_scalar(
                    "select base_updated_at from kn_proposals where workspace_id = $1 and id = $2",
                )
                .bind(&caller.workspace_id)
                .bind(&p.id)
                .fetch_one(&mut *tx)
                .await?;
                let current: Option<i64> = sqlx::query_scalar(
                    "select updated_at from kn_topics where workspace_id = $1 and id = $2",
                )
                .bind(&caller.workspace_id)
                .bind(topic_id)
                .fetch_optional(&mut *tx)
                .await?;
                let Some(current) = current else {
                    return Err(EngineError::not_found("el tema de esa propuesta"));
                };
                if base != Some(current) {
                    return Err(EngineError::typed(
                        ErrorCode::VersionConflict,
                        "El tema cambió después de que se propuso esta edición.",
                        "Recházala y pide una edición nueva sobre la versión actual.",
                    ));
                }
                sqlx::query(
                    "update kn_topics set title = $1, area = $2, patterns = $3, body = coalesce($4, body),
                            stale_marked = 0, updated_at = $5, updated_by = $6
                      where workspace_id = $7 and id = $8",
                )
                .bind(&p.title)
                .bind(&p.area)
                .bind(to_json(&p.patterns)?)
                .bind(&p.body)
                .bind(now)
                .bind(&caller.user_id)
                .bind(&caller.workspace_id)
                .bind(topic_id)
                .execute(&mut *tx)
                .await?;
            }
        }
        audit_in(&mut tx, caller, "knowledge.merge", &Self::audit_detail(&p)).await?;
        tx.commit().await?;
        self.proposal(caller, &p.id).await
    }

    /// Rejects a pending note (its topic en revisión is removed) or edit. Owner/admin
    /// only; audited once: rejecting an already rejected proposal is a no-op.
    pub async fn reject(&self, caller: &Caller, id: &str) -> EngineResult<Proposal> {
        let p = match self
            .resolvable(caller, id, ProposalStatus::Rechazada)
            .await?
        {
            Some(done) => return Ok(done),
            None => self.proposal(caller, id).await?,
        };
        let now = now_ms();
        let mut tx = self
            .store
            .begin_write_in(Scope::Workspace(&caller.workspace_id))
            .await?;
        if !self
            .claim(&mut tx, caller, &p, ProposalStatus::Rechazada, now)
            .await?
        {
            tx.rollback().await?;
            return Box::pin(self.reject(caller, id)).await;
        }
        if let (ProposalKind::Note, Some(topic_id)) = (p.kind, p.topic_id.as_deref()) {
            sqlx::query(
                "update kn_proposals set topic_id = null where workspace_id = $1 and id = $2",
            )
            .bind(&caller.workspace_id)
            .bind(&p.id)
            .execute(&mut *tx)
            .await?;
            sqlx::query(
                "delete from kn_topics where workspace_id = $1 and id = $2 and status = 'en_revision'",
            )
            .bind(&caller.workspace_id)
            .bind(topic_id)
            .execute(&mut *tx)
            .await?;
        }
        audit_in(&mut tx, caller, "knowledge.reject", &Self::audit_detail(&p)).await?;
        tx.commit().await?;
        self.proposal(caller, &p.id).await
    }

    /// Marks a pending proposal resolved inside the write transaction. False when it
    /// was no longer pending (a concurrent resolution won).
    async fn claim(
        &self,
        conn: &mut crate::base::store::Conn,
        caller: &Caller,
        p: &Proposal,
        status: ProposalStatus,
        now: i64,
    ) -> EngineResult<bool> {
        let done = sqlx::query(
            "update kn_proposals set status = $1, resolved_by = $2, resolved_at = $3
              where workspace_id = $4 and id = $5 and status = 'pendiente'",
        )
        .bind(status.as_str())
        .bind(&caller.user_id)
        .bind(now)
        .bind(&caller.workspace_id)
        .bind(&p.id)
        .execute(&mut *conn)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    fn audit_detail(p: &Proposal) -> serde_json::Value {
        json!({"proposal": p.id, "kind": p.kind, "topic": p.topic_slug, "title": p.title})
    }
}
