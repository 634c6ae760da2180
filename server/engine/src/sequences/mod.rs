//! Email sequences (CONTRACT §9): drafts Luna writes and a person authorizes step by step.
//!
//! A draft is inert. Authorizing (the `revisar_secuencia` card, from a person's
//! session only) freezes the audience of the current version, stores one immutable
//! authorization per chosen step — a SHA-256 fingerprint over sender + audience +
//! rendered content — schedules one send per (step, recipient) and activates the
//! sequence. Any later edit bumps the version: old authorizations stop matching and
//! pending sends of the old version are blocked; the card must be issued again.
//! The dispatcher (`dispatch`) sends due steps after re-checking the fingerprint and
//! the suppressions, inside the workspace's sending window in the recipient's time zone
//! (`window`, `zones`). Luna has no send tool.

mod audience;
mod authorization;
mod board;
#[cfg(test)]
mod delivery_tests;
pub mod dispatch;
pub mod drafts;
#[cfg(test)]
mod drafts_tests;
pub mod model;
pub mod replies;
mod rows;
pub mod suppressions;
pub mod template;
#[cfg(test)]
mod tests;
pub mod transport;
pub mod unsubscribe;
pub mod window;
#[cfg(test)]
mod window_tests;
pub mod zones;

use std::collections::BTreeMap;
use std::sync::Arc;

use luna_protocol::error::ErrorCode;

use crate::accounts::Caller;
use crate::base::clock::now_ms;
use crate::base::error::{EngineError, EngineResult};
use crate::base::ids::new_id;
use crate::base::store::Scope;

pub use audience::{preview, recipients, Preview, RecipientPreview, GAPS};
pub use authorization::{authorize, Authorized};
pub use board::{card, card_at, publish_board};
pub use model::{Audience, Recipient, Sequence, Status, Step};
pub use transport::{Mailer, Outbox, Smtp};

const DAY_MS: i64 = 86_400_000;

/// What sequences need of the other services. The composition root implements it for
/// `Engine`; the domain never names the services struct above it.
pub trait Deps: Send + Sync {
    fn store(&self) -> &crate::base::store::Store;
    fn crm(&self) -> &crate::crm::Crm;
    fn market(&self) -> &crate::market::Market;
    fn sessions(&self) -> &crate::session::Sessions;
    fn sequences(&self) -> &Sequences;
}

/// The sequences service: where messages go, how fast, when by default, and where
/// unsubscribe links point.
#[derive(Clone)]
pub struct Sequences {
    pub mailer: Arc<dyn Mailer>,
    /// Most messages a workspace sends per minute.
    pub rate_per_minute: i64,
    /// The server's public base URL (`LUNA_PUBLIC_URL`, else the bind address): the
    /// unsubscribe links of every message start with it.
    pub public_url: String,
    /// The sending window of a workspace that has not set one (`window`).
    pub default_window: window::Window,
    /// The per-install key that signs unsubscribe links (`unsubscribe::key`).
    pub(crate) unsubscribe_key: Arc<tokio::sync::OnceCell<Vec<u8>>>,
}

impl std::fmt::Debug for Sequences {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the signing key.
        f.debug_struct("Sequences")
            .field("mailer", &self.mailer)
            .field("rate_per_minute", &self.rate_per_minute)
            .field("public_url", &self.public_url)
            .field("default_window", &self.default_window)
            .finish_non_exhaustive()
    }
}

impl Sequences {
    pub fn new(mailer: Arc<dyn Mailer>) -> Self {
        Sequences {
            mailer,
            rate_per_minute: 30,
            public_url: "http://127.0.0.1:3000".into(),
            default_window: window::Window::business(),
            unsubscribe_key: Arc::new(tokio::sync::OnceCell::new()),
        }
    }
}

fn invalid(message: impl Into<String>, hint: impl Into<String>) -> EngineError {
    EngineError::typed(ErrorCode::InvalidArgument, message, hint)
}

fn check_steps(steps: &[Step]) -> EngineResult<()> {
    if steps.is_empty() || steps.len() > model::MAX_STEPS {
        return Err(invalid(
            format!("Una secuencia lleva de 1 a {} pasos.", model::MAX_STEPS),
            "Pasa steps con delay_days, subject y body.",
        ));
    }
    let mut last = None;
    for (i, s) in steps.iter().enumerate() {
        let n = i + 1;
        if s.subject.trim().is_empty() || s.subject.chars().count() > model::MAX_SUBJECT {
            return Err(invalid(
                format!("El asunto del paso {n} está vacío o es demasiado largo."),
                format!(
                    "Escribe un asunto de 1 a {} caracteres.",
                    model::MAX_SUBJECT
                ),
            ));
        }
        if s.body.trim().is_empty() || s.body.chars().count() > model::MAX_BODY {
            return Err(invalid(
                format!("El cuerpo del paso {n} está vacío o es demasiado largo."),
                format!("Escribe un cuerpo de 1 a {} caracteres.", model::MAX_BODY),
            ));
        }
        if s.delay_days > model::MAX_DELAY_DAYS || last.is_some_and(|l| s.delay_days <= l) {
            return Err(invalid(
                format!(
                    "El paso {n} debe ir después del anterior y a más tardar el día {}.",
                    model::MAX_DELAY_DAYS
                ),
                "Usa días crecientes, por ejemplo 0, 3 y 7.",
            ));
        }
        last = Some(s.delay_days);
    }
    Ok(())
}

async fn check_audience(
    engine: &impl Deps,
    caller: &Caller,
    a: &Audience,
) -> EngineResult<Audience> {
    let c = crate::crm::collections::get_in(
        engine.crm().store(),
        &caller.workspace_id,
        a.collection_id.trim().trim_start_matches("collection:"),
    )
    .await?;
    if let Some(stage) = &a.stage {
        if !c.stages.contains(stage) {
            return Err(EngineError::Typed(
                luna_protocol::error::ErrorBody::new(
                    ErrorCode::InvalidArgument,
                    format!("La colección «{}» no tiene la etapa «{stage}».", c.name),
                    "Usa una de sus etapas.",
                )
                .with_allowed_values(c.stages.clone()),
            ));
        }
    }
    Ok(Audience {
        collection_id: c.id,
        record_ids: a.record_ids.as_ref().map(|ids| {
            ids.iter()
                .map(|r| r.trim().trim_start_matches("record:").to_owned())
                .collect()
        }),
        stage: a.stage.clone(),
    })
}

/// The default sender: the person who drafts it, at the workspace.
fn sender_of(caller: &Caller) -> String {
    format!(
        "{} <{}>",
        caller.display_name.replace(['<', '>', '"'], ""),
        caller.email
    )
}

/// `sequence_draft`: an inert draft.
pub async fn draft(
    engine: &impl Deps,
    caller: &Caller,
    session_id: Option<&str>,
    name: &str,
    audience: &Audience,
    steps: &[Step],
) -> EngineResult<Sequence> {
    if name.trim().is_empty() || name.chars().count() > 120 {
        return Err(invalid(
            "El nombre de la secuencia debe tener de 1 a 120 caracteres.",
            "Ponle un nombre corto.",
        ));
    }
    check_steps(steps)?;
    let audience = check_audience(engine, caller, audience).await?;
    let id = new_id("seq");
    let mut tx = engine
        .store()
        .begin_write_in(Scope::Workspace(&caller.workspace_id))
        .await?;
    rows::insert(
        &mut tx,
        &rows::NewSequence {
            id: &id,
            workspace_id: &caller.workspace_id,
            session_id,
            name: name.trim(),
            audience: &audience,
            steps,
            sender: &sender_of(caller),
            created_by: &caller.user_id,
        },
    )
    .await?;
    tx.commit().await?;
    let s = get(engine, caller, &id).await?;
    publish_board(engine, &s).await?;
    Ok(s)
}

pub async fn get(engine: &impl Deps, caller: &Caller, id: &str) -> EngineResult<Sequence> {
    let mut conn = engine.store().pool().acquire().await?;
    rows::find(&mut conn, &caller.workspace_id, id)
        .await?
        .ok_or_else(|| EngineError::not_found("esa secuencia"))
}

pub async fn list(
    engine: &impl Deps,
    caller: &Caller,
    status: Option<Status>,
) -> EngineResult<Vec<Sequence>> {
    let mut conn = engine.store().pool().acquire().await?;
    rows::list(&mut conn, &caller.workspace_id, status).await
}

/// What an edit changes; `None` keeps the field.
#[derive(Debug, Clone, Default)]
pub struct Edit {
    pub name: Option<String>,
    pub audience: Option<Audience>,
    pub steps: Option<Vec<Step>>,
}

/// The outcome of an edit: the new version and how many scheduled sends it stopped.
#[derive(Debug, Clone)]
pub struct Edited {
    pub sequence: Sequence,
    pub invalidated_sends: u64,
    pub was_active: bool,
}

/// `sequence_update_draft`: any edit makes a new version back in `borrador`; the
/// authorizations of the old version no longer match and its pending sends stop.
pub async fn update(
    engine: &impl Deps,
    caller: &Caller,
    id: &str,
    edit: &Edit,
) -> EngineResult<Edited> {
    let current = get(engine, caller, id).await?;
    if current.status == Status::Terminada {
        return Err(EngineError::typed(
            ErrorCode::ProtectedResource,
            "Esa secuencia ya terminó y no se puede editar.",
            "Crea una secuencia nueva.",
        ));
    }
    let mut next = current.clone();
    if let Some(n) = &edit.name {
        if n.trim().is_empty() {
            return Err(invalid(
                "El nombre no puede ir vacío.",
                "Ponle un nombre corto.",
            ));
        }
        next.name = n.trim().to_owned();
    }
    if let Some(a) = &edit.audience {
        next.audience = check_audience(engine, caller, a).await?;
    }
    if let Some(steps) = &edit.steps {
        check_steps(steps)?;
        next.steps = steps.clone();
    }
    let mut tx = engine
        .store()
        .begin_write_in(Scope::Workspace(&caller.workspace_id))
        .await?;
    if !rows::update_content(&mut tx, &next, current.version).await? {
        return Err(EngineError::typed(
            ErrorCode::VersionConflict,
            "La secuencia cambió mientras la editabas.",
            "Vuelve a leerla con sequence_get y aplica el cambio otra vez.",
        ));
    }
    let invalidated = rows::block_stale_sends(&mut tx, &current.id, current.version + 1).await?;
    tx.commit().await?;
    let sequence = get(engine, caller, id).await?;
    publish_board(engine, &sequence).await?;
    Ok(Edited {
        sequence,
        invalidated_sends: invalidated,
        was_active: current.status == Status::Activa,
    })
}

/// Stops all future sends to `email` in the workspace and cancels its pending steps
/// (the engine's own path: the unsubscribe link and bounces use `suppressions`).
pub async fn suppress(
    engine: &impl Deps,
    caller: &Caller,
    email: &str,
    reason: &str,
) -> EngineResult<()> {
    let Some(reason) = suppressions::Reason::parse(reason) else {
        return Err(invalid(
            "Motivo de supresión desconocido.",
            "Usa unsubscribed, bounced, complained o manual.",
        ));
    };
    let mut tx = engine
        .store()
        .begin_write_in(Scope::Workspace(&caller.workspace_id))
        .await?;
    suppressions::suppress_in(&mut tx, &caller.workspace_id, email, reason, None, None).await?;
    tx.commit().await?;
    Ok(())
}
