//! What the board and the review card do with a draft: edit one step (subject, body,
//! delay) through the sequence's one edit path (`update`, the same as
//! `sequence_update_draft`: a new version, old authorizations void, pending sends
//! blocked), and render one recipient's email on demand for the review card's pager,
//! so the card stays small whatever the audience.

use luna_protocol::decision::{RecipientEmail, RenderedStep};
use luna_protocol::error::ErrorCode;

use super::{get, invalid, model, recipients, suppressions, template, update, Deps, Edit, Edited};
use crate::accounts::Caller;
use crate::base::error::{EngineError, EngineResult};

/// One step as the person rewrote it on the board. The delay arrives as typed, so that
/// a negative number is a Spanish refusal instead of a transport error.
#[derive(Debug, Clone)]
pub struct StepEdit {
    /// 0-based step index.
    pub index: usize,
    pub delay_days: i64,
    pub subject: String,
    pub body: String,
}

fn stale() -> EngineError {
    EngineError::typed(
        ErrorCode::VersionConflict,
        "La secuencia cambió mientras la editabas.",
        "El tablero ya muestra la versión actual; vuelve a aplicar tu cambio.",
    )
}

/// Edits step `e.index` of version `version` of the sequence.
pub async fn edit_step(
    engine: &impl Deps,
    caller: &Caller,
    id: &str,
    version: i64,
    e: &StepEdit,
) -> EngineResult<Edited> {
    let s = get(engine, caller, id).await?;
    if s.version != version {
        return Err(stale());
    }
    let Some(old) = s.steps.get(e.index) else {
        return Err(invalid(
            format!("La secuencia no tiene un paso {}.", e.index + 1),
            format!("Tiene {} pasos.", s.steps.len()),
        ));
    };
    let n = e.index + 1;
    if e.delay_days < 0 {
        return Err(invalid(
            format!("Los días de espera del paso {n} no pueden ser negativos."),
            "Usa 0 para el mismo día de la autorización, o más.",
        ));
    }
    let delay_days = u32::try_from(e.delay_days)
        .ok()
        .filter(|d| *d <= model::MAX_DELAY_DAYS)
        .ok_or_else(|| {
            invalid(
                format!(
                    "El paso {n} va a más tardar el día {}.",
                    model::MAX_DELAY_DAYS
                ),
                format!("Usa de 0 a {} días.", model::MAX_DELAY_DAYS),
            )
        })?;
    let step = model::Step {
        delay_days,
        subject: e.subject.trim().to_owned(),
        body: e.body.trim().to_owned(),
    };
    if step == *old {
        // Nothing changed: no new version, the authorization stands.
        return Ok(Edited {
            was_active: false,
            invalidated_sends: 0,
            sequence: s,
        });
    }
    let mut steps = s.steps.clone();
    steps[e.index] = step;
    let edit = Edit {
        steps: Some(steps),
        ..Edit::default()
    };
    update(engine, caller, id, &edit).await
}

/// Recipient `position` (1-based) of version `version`, every step rendered for them.
pub async fn recipient_email(
    engine: &impl Deps,
    caller: &Caller,
    id: &str,
    version: i64,
    position: u32,
) -> EngineResult<RecipientEmail> {
    let s = get(engine, caller, id).await?;
    if s.version != version {
        return Err(EngineError::typed(
            ErrorCode::VersionConflict,
            "La secuencia cambió después de que se preparó la tarjeta.",
            "Pídele a Luna la tarjeta de revisión otra vez.",
        ));
    }
    let all = recipients(engine, &s).await?;
    let total = u32::try_from(all.len()).unwrap_or(u32::MAX);
    let Some(r) = position
        .checked_sub(1)
        .and_then(|i| all.get(usize::try_from(i).ok()?))
    else {
        return Err(invalid(
            format!("No hay destinatario {position}: la secuencia tiene {total}."),
            format!("Elige un número de 1 a {total}."),
        ));
    };
    let skipped = {
        let mut conn = engine.store().pool().acquire().await?;
        suppressions::find(&mut conn, &caller.workspace_id, &r.email)
            .await?
            .map(|x| x.reason.label().to_owned())
    };
    Ok(RecipientEmail {
        position,
        total,
        email: r.email.clone(),
        skipped,
        steps: s
            .steps
            .iter()
            .map(|st| {
                let out = template::render(st, r);
                RenderedStep {
                    subject: out.subject,
                    body: out.body,
                }
            })
            .collect(),
    })
}
