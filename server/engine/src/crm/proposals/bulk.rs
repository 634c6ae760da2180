//! `crm_bulk_update` as a proposal: the preview that checks every change against the
//! records and stores it, and the execution the decision card runs once.

use super::*;

/// Un cambio de una actualización masiva.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BulkChange {
    /// `record:…` de collection_query.
    #[schemars(length(max = crate::base::bounds::ID_MAX))]
    pub record_id: String,
    /// La versión que leíste; si falta, la de la vista previa.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<i64>,
    /// Etapa nueva (cualquier etapa de la colección).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = crate::base::bounds::NAME_MAX))]
    pub stage: Option<String>,
    /// Valores de campos a cambiar; los campos bloqueados se descartan.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    #[schemars(schema_with = "crate::base::bounds::field_values")]
    pub fields: Map<String, Value>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct BulkItem {
    record_id: String,
    version: i64,
    stage: Option<String>,
    fields: Map<String, Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BulkRejected {
    pub record_id: String,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct BulkPreview {
    pub proposal_id: String,
    pub collection_name: String,
    pub will_change: usize,
    pub unchanged: usize,
    pub rejected: Vec<BulkRejected>,
    /// (record id, locked fields dropped)
    pub dropped_fields: Vec<(String, Vec<String>)>,
    /// Up to 10 changes: (record title, stage from→to or field changes).
    pub sample: Vec<(String, Value)>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct BulkExecution {
    pub proposal_id: String,
    pub updated: Vec<SavedRecord>,
    /// Records changed by someone else since the preview: left untouched.
    pub conflicts: Vec<String>,
    pub undo_token: Option<String>,
    #[serde(default)]
    pub already_executed: bool,
}

pub async fn preview_bulk(
    store: &Store,
    actor: &Actor,
    collection_id: &str,
    changes: &[BulkChange],
) -> EngineResult<BulkPreview> {
    if changes.is_empty() || changes.len() > MAX_BULK_UPDATE {
        return Err(invalid(
            format!("Un cambio masivo lleva de 1 a {MAX_BULK_UPDATE} cambios."),
            "Divide el lote en partes más pequeñas.",
        ));
    }
    let collection = collections::get_in(store, &actor.workspace_id, collection_id).await?;
    collection.ensure_writable()?;
    let mut conn = store.pool().acquire().await?;
    let mut preview = BulkPreview {
        proposal_id: String::new(),
        collection_name: collection.name.clone(),
        will_change: 0,
        unchanged: 0,
        rejected: Vec::new(),
        dropped_fields: Vec::new(),
        sample: Vec::new(),
    };
    let mut items = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for ch in changes {
        let id = record_id(&ch.record_id).to_owned();
        let reject = |reason: String| BulkRejected {
            record_id: ch.record_id.clone(),
            reason,
        };
        if !seen.insert(id.clone()) {
            preview
                .rejected
                .push(reject("El registro aparece dos veces en el lote.".into()));
            continue;
        }
        let record = match records::load(&mut conn, &actor.workspace_id, &id).await {
            Ok(r) if r.collection_id == collection.id => r,
            Ok(_) | Err(_) => {
                preview
                    .rejected
                    .push(reject("No existe en esta colección.".into()));
                continue;
            }
        };
        if let Some(v) = ch.version.filter(|v| *v != record.version) {
            preview.rejected.push(reject(format!(
                "Cambió mientras tanto: leíste la versión {v} y va en la {}.",
                record.version
            )));
            continue;
        }
        let stage = match ch
            .stage
            .as_deref()
            .map(|s| collection.check_stage(s))
            .transpose()
        {
            Ok(s) => s,
            Err(e) => {
                preview.rejected.push(reject(e.body().message));
                continue;
            }
        };
        let (fields, dropped) = match collection.check_fields(&ch.fields, false) {
            Ok(x) => x,
            Err(e) => {
                preview.rejected.push(reject(e.body().message));
                continue;
            }
        };
        if !dropped.is_empty() {
            preview.dropped_fields.push((ch.record_id.clone(), dropped));
        }
        let mut diff = Map::new();
        if let Some(s) = stage.as_ref().filter(|s| **s != record.stage) {
            diff.insert(
                "stage".into(),
                crate::crm::records::StageChange::json(Some(&record.stage), s),
            );
        }
        for (k, v) in &fields {
            let before = record.fields.get(k).cloned().unwrap_or(Value::Null);
            if &before != v {
                diff.insert(k.clone(), serde_json::json!({"from": before, "to": v}));
            }
        }
        if diff.is_empty() {
            preview.unchanged += 1;
            continue;
        }
        preview.will_change += 1;
        if preview.sample.len() < 10 {
            preview
                .sample
                .push((record.title.clone(), Value::Object(diff)));
        }
        items.push(BulkItem {
            record_id: record.id,
            version: record.version,
            stage,
            fields,
        });
    }
    drop(conn);
    preview.proposal_id = store_proposal(store, actor, BULK_KIND, &collection.id, &items).await?;
    Ok(preview)
}

pub async fn execute_bulk(
    store: &Store,
    caller: &Caller,
    proposal_id: &str,
) -> EngineResult<BulkExecution> {
    let mut tx = store
        .begin_write_in(Scope::Workspace(&caller.workspace_id))
        .await?;
    let p = load_proposal(&mut tx, &caller.workspace_id, BULK_KIND, proposal_id).await?;
    if let Some(done) = p.result {
        let mut out: BulkExecution = serde_json::from_str(&done).map_err(internal)?;
        out.already_executed = true;
        return Ok(out);
    }
    let collection = collections::get(&mut tx, &caller.workspace_id, &p.collection_id).await?;
    collection.ensure_writable()?;
    let items: Vec<BulkItem> = serde_json::from_str(&p.payload).map_err(internal)?;
    let actor = Actor::new(caller, surface_of(&p.surface));
    let token = undo::new_token();
    let mut out = BulkExecution {
        proposal_id: proposal_id.to_owned(),
        ..BulkExecution::default()
    };
    let mut seq = 0;
    for item in items {
        let record = match records::load(&mut tx, &caller.workspace_id, &item.record_id).await {
            Ok(r) if r.version == item.version => r,
            _ => {
                out.conflicts.push(item.record_id);
                continue;
            }
        };
        let before = record.state();
        if let Some(next) = records::apply(
            &mut tx,
            &actor,
            &collection,
            &record,
            item.stage,
            &item.fields,
            "update",
        )
        .await?
        {
            undo::record_step(
                &mut tx,
                &token,
                seq,
                &caller.workspace_id,
                "record",
                &next.id,
                Some(next.version),
                Some(&before),
            )
            .await?;
            seq += 1;
            out.updated.push(SavedRecord {
                record_id: next.id,
                title: next.title,
                entity_id: next.entity_id,
            });
        }
    }
    if seq > 0 {
        out.undo_token = Some(token);
    }
    mark_executed(&mut tx, proposal_id, &out).await?;
    tx.commit().await?;
    Ok(out)
}
