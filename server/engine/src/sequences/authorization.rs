//! Authorizing steps (the `revisar_secuencia` card): one fingerprinted authorization
//! per chosen step, one scheduled send per (step, recipient) in the recipient's zone.

use super::*;
/// What authorizing did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Authorized {
    pub steps: Vec<usize>,
    pub recipients: usize,
    pub scheduled: usize,
    /// Recipients on the suppression list: nothing is scheduled for them.
    pub skipped: usize,
}

/// Authorizes `steps` (0-based) of the sequence's current `version` and activates it.
/// Only from a person's session (never an API key, never auto mode).
pub async fn authorize(
    engine: &impl Deps,
    caller: &Caller,
    id: &str,
    version: i64,
    steps: &[usize],
) -> EngineResult<Authorized> {
    if caller.api_key.is_some() {
        return Err(EngineError::forbidden(
            "Una secuencia solo la autoriza una persona desde la aplicación.",
        ));
    }
    let s = get(engine, caller, id).await?;
    if s.version != version {
        return Err(EngineError::typed(
            ErrorCode::VersionConflict,
            "La secuencia cambió después de que se preparó la tarjeta.",
            "Pídele a Luna la tarjeta de revisión otra vez.",
        ));
    }
    if s.status != Status::Borrador {
        return Err(EngineError::typed(
            ErrorCode::Conflict,
            "Esa secuencia ya está autorizada.",
            "Si necesitas cambiarla, edítala y vuelve a autorizarla.",
        ));
    }
    if let Some(bad) = steps.iter().find(|i| **i >= s.steps.len()) {
        return Err(invalid(
            format!("La secuencia no tiene un paso {}.", bad + 1),
            format!("Tiene {} pasos; marca solo esos.", s.steps.len()),
        ));
    }
    let mut chosen: Vec<usize> = steps.to_vec();
    chosen.sort_unstable();
    chosen.dedup();
    if chosen.is_empty() {
        return Err(invalid(
            "Marca al menos un paso para autorizar.",
            "Cada paso se autoriza con su casilla.",
        ));
    }
    let audience = recipients(engine, &s).await?;
    if audience.is_empty() {
        return Err(invalid(
            "Nadie recibiría esta secuencia.",
            "Revela primero el contacto de las empresas de la audiencia.",
        ));
    }
    let now = now_ms();
    let mut tx = engine
        .store()
        .begin_write_in(Scope::Workspace(&caller.workspace_id))
        .await?;
    if !rows::activate(&mut tx, &s.id, s.version, now).await? {
        return Err(EngineError::typed(
            ErrorCode::VersionConflict,
            "La secuencia cambió mientras la autorizabas.",
            "Pídele a Luna la tarjeta de revisión otra vez.",
        ));
    }
    let mut skipped = std::collections::HashSet::new();
    for r in &audience {
        rows::insert_audience(&mut tx, &s.id, s.version, r).await?;
        if suppressions::find(&mut tx, &caller.workspace_id, &r.email)
            .await?
            .is_some()
            || rows::replied(&mut tx, &s.id, &r.email).await?
        {
            skipped.insert(r.email.clone());
        }
    }
    let mut scheduled = 0;
    let w = window::load(
        &mut tx,
        &caller.workspace_id,
        engine.sequences().default_window,
    )
    .await?;
    for &i in &chosen {
        let step = &s.steps[i];
        let fp = template::fingerprint(&s.sender, i, step, &audience);
        rows::insert_authorization(&mut tx, &s.id, s.version, i, &fp, &caller.user_id).await?;
        let day = now + i64::from(step.delay_days) * DAY_MS;
        for r in audience.iter().filter(|r| !skipped.contains(&r.email)) {
            // Inside the sending window in the recipient's zone (`dispatch` checks again).
            let due = w.send_time(day, recipient_zone(r, &w));
            if rows::insert_send(
                &mut tx,
                &new_id("snd"),
                &caller.workspace_id,
                &s.id,
                s.version,
                i,
                &r.email,
                due,
            )
            .await?
            {
                scheduled += 1;
            }
        }
    }
    crate::accounts::audit_in(
        &mut tx,
        caller,
        "sequence.authorize",
        &serde_json::json!({"sequence": s.id, "version": s.version, "steps": chosen, "recipients": audience.len(), "skipped": skipped.len()}),
    )
    .await?;
    tx.commit().await?;
    let s = get(engine, caller, id).await?;
    publish_board(engine, &s).await?;
    Ok(Authorized {
        steps: chosen,
        recipients: audience.len(),
        scheduled,
        skipped: skipped.len(),
    })
}

/// The zone a recipient's steps are timed in: theirs, else the workspace's.
fn recipient_zone(r: &Recipient, w: &window::Window) -> chrono_tz::Tz {
    r.time_zone
        .as_deref()
        .and_then(zones::parse)
        .unwrap_or(w.time_zone)
}
