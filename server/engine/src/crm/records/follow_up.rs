//! Follow-ups on a record: scheduling an activity and filing a revealed person onto it,
//! each with its history row and undo token like every other write.

use super::*;

/// Schedules a follow-up (due date and reason) on a record.
pub async fn schedule_activity(
    store: &Store,
    actor: &Actor,
    record_ref: &str,
    due_at: &str,
    reason: &str,
) -> EngineResult<(Activity, String)> {
    let due = due_at.trim();
    let valid_due = chrono::NaiveDate::parse_from_str(due, "%Y-%m-%d").is_ok()
        || chrono::DateTime::parse_from_rfc3339(due).is_ok();
    if !valid_due {
        return Err(invalid(
            "La fecha del seguimiento no es válida.",
            "Usa AAAA-MM-DD o fecha y hora ISO 8601, por ejemplo 2026-10-05.",
        ));
    }
    let reason = reason.trim();
    if reason.is_empty() {
        return Err(invalid(
            "Falta el motivo del seguimiento.",
            "Di en una frase para qué es el seguimiento.",
        ));
    }
    let mut tx = store
        .begin_write_in(Scope::Workspace(&actor.workspace_id))
        .await?;
    let record = load(&mut tx, &actor.workspace_id, record_ref).await?;
    let collection = collections::get(&mut tx, &actor.workspace_id, &record.collection_id).await?;
    collection.ensure_writable()?;
    let id = new_id("act");
    sqlx::query(
        "insert into crm_activities (id, workspace_id, record_id, due_at, reason, status, created_by, surface, created_at)
         values ($1, $2, $3, $4, $5, 'open', $6, $7, $8)",
    )
    .bind(&id)
    .bind(&actor.workspace_id)
    .bind(&record.id)
    .bind(due)
    .bind(reason)
    .bind(&actor.user_id)
    .bind(actor.surface.as_str())
    .bind(now_ms())
    .execute(&mut *tx)
    .await?;
    history_row(
        &mut tx,
        actor,
        &record.id,
        record.version,
        "activity",
        &json!({"activity": {"from": null, "to": {"due_at": due, "reason": reason}}}),
    )
    .await?;
    let token = undo::new_token();
    undo::record_step(
        &mut tx,
        &token,
        0,
        &actor.workspace_id,
        "activity",
        &id,
        None,
        None,
    )
    .await?;
    tx.commit().await?;
    Ok((
        Activity {
            id,
            record_id: record.id,
            due_at: due.to_owned(),
            reason: reason.to_owned(),
            status: "open".into(),
        },
        token,
    ))
}

/// Files a person onto a record (`people_file`): appends `person` (which carries its
/// `ref`) to the record's [`PEOPLE_FIELD`] list, with its history row and undo token.
/// A person already on the record is a no-op (`undo_token: None`).
pub async fn file_person(
    store: &Store,
    actor: &Actor,
    record_ref: &str,
    person: Map<String, Value>,
) -> EngineResult<WriteOutcome> {
    let mut tx = store
        .begin_write_in(Scope::Workspace(&actor.workspace_id))
        .await?;
    let record = load(&mut tx, &actor.workspace_id, record_ref).await?;
    let collection = collections::get(&mut tx, &actor.workspace_id, &record.collection_id).await?;
    collection.ensure_writable()?;
    let mut people = match record.fields.get(PEOPLE_FIELD) {
        Some(Value::Array(list)) => list.clone(),
        _ => Vec::new(),
    };
    if people.iter().any(|p| p.get("ref") == person.get("ref")) {
        tx.commit().await?;
        return Ok(WriteOutcome {
            record,
            dropped_fields: Vec::new(),
            undo_token: None,
            created: false,
        });
    }
    people.push(Value::Object(person));
    let mut change = Map::new();
    change.insert(PEOPLE_FIELD.to_owned(), Value::Array(people));
    let before = snapshot(&record);
    let Some(next) = apply(
        &mut tx,
        actor,
        &collection,
        &record,
        None,
        &change,
        "persona",
    )
    .await?
    else {
        return Err(EngineError::Internal(
            "filing a person changed nothing".into(),
        ));
    };
    let token = undo::new_token();
    undo::record_step(
        &mut tx,
        &token,
        0,
        &actor.workspace_id,
        "record",
        &next.id,
        Some(next.version),
        Some(&before),
    )
    .await?;
    tx.commit().await?;
    Ok(WriteOutcome {
        record: next,
        dropped_fields: Vec::new(),
        undo_token: Some(token),
        created: false,
    })
}
