//! `crm_record`: add, update, history, a follow-up activity or a small level-0 bulk
//! (a larger change is the «cambios masivos» card a person confirms).

use super::*;
fn need<T>(v: Option<T>, what: &str, op: &str) -> EngineResult<T> {
    v.ok_or_else(|| {
        invalid(
            format!("op {op} necesita {what}."),
            format!("Agrega {what} a la llamada."),
        )
    })
}

/// A bulk through `crm_record` beyond `RECORD_BULK_MAX`: a change of that size is the
/// «cambios masivos» card a person confirms, never a level-0 write.
fn too_many_for_level_zero(n: usize, surface: Surface) -> crate::base::error::EngineError {
    let hint = match surface {
        Surface::Mcp => "Un cambio masivo lo confirma una persona: pídelo en Luna, que prepara \
                         la tarjeta «cambios masivos» (crm_bulk_update)."
            .to_owned(),
        Surface::Luna | Surface::Ui => format!(
            "Usa crm_bulk_update: prepara la tarjeta de cambio masivo que una persona confirma \
             (hasta 1000 registros). crm_record cambia como máximo {RECORD_BULK_MAX}."
        ),
    };
    invalid(
        format!("crm_record cambia como máximo {RECORD_BULK_MAX} registros a la vez; pediste {n}."),
        hint,
    )
}

fn write_row(out: &records::WriteOutcome) -> ResultRow {
    out.record
        .to_row(&[])
        .with("created", out.created)
        .with("changed", out.undo_token.is_some())
        .with("undo_token", &out.undo_token)
        .with("dropped_fields", &out.dropped_fields)
}

pub(super) async fn crm_record(ctx: ToolCtx, args: CrmRecordArgs) -> EngineResult<ToolOutput> {
    let store = ctx.engine.crm.store().clone();
    let actor = Actor::new(&ctx.caller, ctx.surface);
    let env = match args.op {
        RecordOp::Add => {
            let collection_id = need(args.collection_id, "collection_id", "add")?;
            let out = records::add(
                &store,
                &actor,
                NewRecord {
                    collection_id,
                    entity_id: args.entity_id,
                    stage: args.stage,
                    fields: args.fields.unwrap_or_default(),
                },
                false,
            )
            .await?;
            Envelope::rows(vec![write_row(&out)])
        }
        RecordOp::Update => {
            let record = need(args.record_id, "record_id", "update")?;
            let version = need(
                args.version,
                "version (la que leíste con collection_query)",
                "update",
            )?;
            let out = records::update(
                &store,
                &actor,
                Patch {
                    record_id: record,
                    version,
                    stage: args.stage,
                    fields: args.fields.unwrap_or_default(),
                },
            )
            .await?;
            Envelope::rows(vec![write_row(&out)])
        }
        RecordOp::Bulk => {
            let collection_id = need(args.collection_id, "collection_id", "bulk")?;
            let changes = need(args.changes, "changes", "bulk")?;
            if changes.len() > RECORD_BULK_MAX {
                return Err(too_many_for_level_zero(changes.len(), ctx.surface));
            }
            let mut patches = Vec::new();
            for c in changes {
                let version = need(c.version, "version en cada cambio", "bulk")?;
                patches.push(Patch {
                    record_id: c.record_id,
                    version,
                    stage: c.stage,
                    fields: c.fields,
                });
            }
            let out = records::bulk(&store, &actor, &collection_id, patches).await?;
            let rows = out
                .records
                .iter()
                .map(|r| {
                    let dropped: Vec<String> = out
                        .dropped_fields
                        .iter()
                        .find(|(id, _)| *id == r.id)
                        .map(|(_, d)| d.clone())
                        .unwrap_or_default();
                    r.to_row(&[])
                        .with("undo_token", &out.undo_token)
                        .with("dropped_fields", dropped)
                })
                .collect();
            Envelope::rows(rows)
        }
        RecordOp::ScheduleActivity => {
            let record = need(args.record_id, "record_id", "schedule_activity")?;
            let due = need(args.due_at, "due_at", "schedule_activity")?;
            let reason = need(args.reason, "reason", "schedule_activity")?;
            let (act, token) =
                records::schedule_activity(&store, &actor, &record, &due, &reason).await?;
            Envelope::rows(vec![ResultRow::new(
                format!("record:{}", act.record_id),
                format!("Seguimiento: {}", act.reason),
            )
            .with("activity_id", &act.id)
            .with("due_at", &act.due_at)
            .with("reason", &act.reason)
            .with("status", &act.status)
            .with("undo_token", token)
            .with("dropped_fields", Vec::<String>::new())])
        }
        RecordOp::History => {
            let record = need(args.record_id, "record_id", "history")?;
            let limit = args.limit.unwrap_or(20).clamp(1, 50);
            let (r, entries, activities) =
                records::history(&store, &ctx.caller.workspace_id, record_id(&record), limit)
                    .await?;
            let mut rows = vec![r.to_row(&[]).with("open_activities", &activities)];
            for e in entries {
                rows.push(
                    ResultRow::new(r.ref_(), format!("{} · versión {}", r.title, e.version))
                        .with("version", e.version)
                        .with("action", &e.action)
                        .with("by", e.actor_name.as_deref().unwrap_or(&e.actor_id))
                        .with("surface", &e.surface)
                        .with("changes", &e.changes)
                        .with("at", crate::crm::model::ms_to_iso(e.at)),
                );
            }
            Envelope::rows(rows)
        }
    };
    Ok(env.into())
}
