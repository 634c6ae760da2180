//! Reads and direct actions of the screen (CONTRACT §13), each one engine call behind a
//! thin server function: the evidence drawer's company file, the saved collection as
//! a board, moving a card between stages, "quitar" on a selection card and "deshacer".
//!
//! Whatever is a tool goes through `registry::pipeline::call` as the `ui` surface, so
//! the drawer's market read is metered and the writes leave the same receipts, history
//! and undo tokens as when Luna makes them.
//!
//! Writes made from a session's screen are also told to that session's log: a move
//! refreshes the saved list's stage counts on the board (`board.patched`), and
//! "deshacer" appends `undo.applied`, so every tab and every reload shows the same.

use std::collections::BTreeMap;

use luna_protocol::crm::{BoardRecord, CollectionBoard, Column, Moved, UndoReceipt};
use luna_protocol::error::ErrorCode;
use luna_protocol::event::{SessionEvent, UndoApplied};
use luna_protocol::evidence::{
    AmountBucket, AwardLine, CompanyFile, CrmEntry, CrmTimeline, MarkLine, PermitLine,
};
use luna_protocol::tool::{Envelope, ResultRow};
use serde::de::DeserializeOwned;
use serde_json::{json, Value};

use crate::accounts::Caller;
use crate::base::error::{EngineError, EngineResult};
use crate::crm::records::{HistoryChanges, StageChange};
use crate::crm::{collections, records};
use crate::market::types::{AwardRow, MarkKind, PermitRow, RiskRow};
use crate::registry::typed;
use crate::registry::{Surface, ToolRequest};
use crate::tools::board::SelectionTotals;
use crate::Engine;

/// Buyers the chart names one by one; the rest are summed as "Otros".
pub const TOP_BUYERS: usize = 6;
/// Most records the board reads from a saved collection.
pub const BOARD_LIMIT: u32 = 200;

/// Runs a tool as the `ui` surface and returns its envelope or its typed error.
async fn call(
    engine: &Engine,
    caller: &Caller,
    name: &str,
    args: Value,
    session_id: Option<&str>,
) -> EngineResult<Envelope> {
    let mut request = ToolRequest::new(name, args, Surface::Ui);
    request.session_id = session_id.map(str::to_owned);
    engine
        .call_tool(caller, request)
        .await
        .outcome
        .map_err(EngineError::Typed)
}

/// A row's field decoded into its type: absent (or null) is the type's default, but a
/// value of the wrong shape is an internal error naming the field — a drift between a
/// tool's output and the screen never shows up as an empty drawer.
fn field<T: DeserializeOwned + Default>(row: &ResultRow, key: &str) -> EngineResult<T> {
    match row.fields.get(key) {
        None | Some(Value::Null) => Ok(T::default()),
        Some(v) => serde_json::from_value(v.clone()).map_err(|e| {
            EngineError::Internal(format!(
                "the screen cannot read «{key}» of {}: {e}",
                row.ref_
            ))
        }),
    }
}

fn text(row: &ResultRow, key: &str) -> Option<String> {
    row.fields
        .get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// The drawer's file for `company:<id>`: the supplier read through `market_get`
/// (with its awards; 1 read, 1 intelligence credit), plus the workspace's CRM history
/// of the same company when it was saved.
pub async fn company_file(
    engine: &Engine,
    caller: &Caller,
    company_ref: &str,
) -> EngineResult<CompanyFile> {
    let company_ref = company_ref.trim();
    if !company_ref.starts_with("company:") || company_ref.len() <= "company:".len() {
        return Err(EngineError::typed(
            ErrorCode::InvalidArgument,
            format!("«{company_ref}» no es una empresa."),
            "Abre el expediente desde una tarjeta o un dato de una empresa.",
        ));
    }
    let env = call(
        engine,
        caller,
        "market_get",
        json!({"record_ref": company_ref, "include_awards": true}),
        None,
    )
    .await?;
    let row = env
        .results
        .first()
        .ok_or_else(|| EngineError::not_found("esa empresa"))?;
    let awards: Vec<AwardRow> = field(row, "awards")?;
    let marks: Vec<RiskRow> = field(row, "marks")?;
    let permits: Vec<PermitRow> = field(row, "permits")?;
    let rfc = text(row, "rfc");
    let id = text(row, "id").unwrap_or_else(|| company_ref["company:".len()..].to_owned());
    let place = match (text(row, "municipality"), text(row, "state")) {
        (Some(m), Some(s)) => Some(format!("{m}, {s}")),
        (m, s) => m.or(s),
    };
    let mut entity_ids = vec![id];
    entity_ids.extend(rfc.clone());
    entity_ids.dedup();
    let crm = crm_timelines(engine, caller, &entity_ids).await?;
    Ok(CompanyFile {
        reference: company_ref.to_owned(),
        name: text(row, "name").unwrap_or_else(|| row.ref_label.clone()),
        rfc,
        place,
        activity: text(row, "scian_name"),
        awards_count: u32::try_from(field::<i64>(row, "awards_count")?).unwrap_or(0),
        awards_total_mxn: field(row, "awards_total_mxn")?,
        awards_truncated: field(row, "awards_truncated")?,
        by_year: by_year(&awards),
        by_buyer: by_buyer(&awards, TOP_BUYERS),
        awards: {
            let ids: Vec<i64> = awards.iter().filter_map(|a| award_id(&a.r#ref)).collect();
            let mut found = crate::market::provenance::of(
                engine.market.store(),
                crate::market::provenance::Of::Award,
                &ids,
            )
            .await?;
            awards
                .iter()
                .map(|a| {
                    let mut line = award_line(a);
                    line.provenance = award_id(&a.r#ref).and_then(|id| found.remove(&id));
                    line
                })
                .collect()
        },
        marks: marks.iter().map(mark_line).collect(),
        permits: permits.iter().map(permit_line).collect(),
        crm,
    })
}

fn award_line(a: &AwardRow) -> AwardLine {
    AwardLine {
        reference: a.r#ref.clone(),
        title: a.title.clone(),
        buyer: buyer_of(a),
        amount_mxn: mxn_amount(a),
        date: a.date.clone(),
        provenance: None,
    }
}

/// The row id of a `record:award:<id>` ref.
fn award_id(reference: &str) -> Option<i64> {
    reference.strip_prefix("record:award:")?.parse().ok()
}

fn mark_line(r: &RiskRow) -> MarkLine {
    let kind = MarkKind::from_key(&r.mark_kind);
    MarkLine {
        reference: r.r#ref.clone(),
        label: if r.mark_label.is_empty() {
            kind.map(MarkKind::label)
                .unwrap_or("marca de riesgo")
                .to_owned()
        } else {
            r.mark_label.clone()
        },
        adverse: kind.is_none_or(MarkKind::is_adverse),
        source: r.source.clone(),
        date: r.date.clone(),
    }
}

fn permit_line(p: &PermitRow) -> PermitLine {
    PermitLine {
        reference: p.r#ref.clone(),
        permit_type: p.permit_type.clone(),
        number: p.number.clone(),
        status: p.status.clone(),
        date: p.date.clone(),
    }
}

fn buyer_of(a: &AwardRow) -> String {
    a.buyer_name
        .clone()
        .filter(|n| !n.trim().is_empty())
        .unwrap_or_else(|| a.buyer.clone())
}

/// Amounts in another currency stay out of MXN sums (never converted silently).
fn mxn_amount(a: &AwardRow) -> Option<f64> {
    a.amount.filter(|_| a.currency.eq_ignore_ascii_case("MXN"))
}

/// Sums awards by the year of their date, oldest first; undated ones are left out.
pub fn by_year(awards: &[AwardRow]) -> Vec<AmountBucket> {
    let mut years: BTreeMap<String, (f64, u32)> = BTreeMap::new();
    for a in awards {
        let Some(year) = a.date.as_deref().and_then(|d| d.get(..4)) else {
            continue;
        };
        if !year.chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        let slot = years.entry(year.to_owned()).or_default();
        slot.0 += mxn_amount(a).unwrap_or(0.0);
        slot.1 += 1;
    }
    years
        .into_iter()
        .map(|(label, (amount_mxn, count))| AmountBucket {
            label,
            amount_mxn,
            count,
        })
        .collect()
}

/// Sums awards by buyer, largest first; beyond `top` buyers the rest is "Otros".
pub fn by_buyer(awards: &[AwardRow], top: usize) -> Vec<AmountBucket> {
    let mut buyers: BTreeMap<String, (f64, u32)> = BTreeMap::new();
    for a in awards {
        let slot = buyers.entry(buyer_of(a)).or_default();
        slot.0 += mxn_amount(a).unwrap_or(0.0);
        slot.1 += 1;
    }
    let mut all: Vec<AmountBucket> = buyers
        .into_iter()
        .map(|(label, (amount_mxn, count))| AmountBucket {
            label,
            amount_mxn,
            count,
        })
        .collect();
    all.sort_by(|a, b| {
        b.amount_mxn
            .total_cmp(&a.amount_mxn)
            .then_with(|| a.label.cmp(&b.label))
    });
    if all.len() > top {
        let rest = all.split_off(top);
        all.push(AmountBucket {
            label: "Otros".into(),
            amount_mxn: rest.iter().map(|b| b.amount_mxn).sum(),
            count: rest.iter().map(|b| b.count).sum(),
        });
    }
    all
}

async fn crm_timelines(
    engine: &Engine,
    caller: &Caller,
    entity_ids: &[String],
) -> EngineResult<Vec<CrmTimeline>> {
    let store = engine.crm.store();
    let mut out = Vec::new();
    for (record, collection) in records::by_entity(store, &caller.workspace_id, entity_ids).await? {
        let (_, entries, _) = records::history(store, &caller.workspace_id, &record.id, 15).await?;
        out.push(CrmTimeline {
            record_ref: record.ref_(),
            collection,
            stage: record.stage.clone(),
            entries: entries
                .iter()
                .map(|e| {
                    Ok(CrmEntry {
                        at: e.at,
                        who: who(e.actor_name.as_deref(), &e.surface),
                        what: what(&e.action, &e.changes)?,
                    })
                })
                .collect::<EngineResult<_>>()?,
        });
    }
    Ok(out)
}

fn who(name: Option<&str>, surface: &str) -> String {
    match (surface, name) {
        ("luna", Some(n)) => format!("Luna (por {n})"),
        ("luna", None) => "Luna".into(),
        ("mcp", Some(n)) => format!("{n} (agente externo)"),
        (_, Some(n)) => n.to_owned(),
        (_, None) => "Alguien del equipo".into(),
    }
}

/// One history row in Spanish. The stage change is decoded into the type the CRM
/// writes (`records::StageChange`); a row that drifted from it is a typed error.
pub fn what(action: &str, changes: &Value) -> EngineResult<String> {
    Ok(match action {
        "stage" => {
            let read: HistoryChanges = serde_json::from_value(changes.clone()).map_err(|e| {
                tracing::error!(error = %e, "a CRM history row's stage change does not decode");
                EngineError::typed(
                    ErrorCode::Internal,
                    "No pude leer el historial de este registro.",
                    "Es un error de Luna, no de tus datos: vuelve a intentarlo y, si se repite, avísanos.",
                )
            })?;
            match read.stage {
                Some(StageChange {
                    from: Some(from),
                    to,
                }) => format!("Pasó de «{from}» a «{to}»"),
                Some(StageChange { from: None, to }) => format!("Pasó a «{to}»"),
                None => "Cambió de etapa".into(),
            }
        }
        "activity" => "Agendó un seguimiento".into(),
        "undo" => "Deshizo un cambio".into(),
        "add" | "save" | "create" | "insert" => "Se guardó en el CRM".into(),
        _ => {
            let n = changes.as_object().map_or(0, |m| m.len());
            match n {
                0 => "Actualizó el registro".into(),
                1 => "Actualizó 1 dato".into(),
                n => format!("Actualizó {n} datos"),
            }
        }
    })
}

/// The saved collection with its stages and live records (up to [`BOARD_LIMIT`]).
pub async fn collection_board(
    engine: &Engine,
    caller: &Caller,
    collection_ref: &str,
) -> EngineResult<CollectionBoard> {
    let store = engine.crm.store();
    let collection = collections::get_in(store, &caller.workspace_id, collection_ref).await?;
    let (found, truncated) =
        records::in_collection(store, &caller.workspace_id, &collection.id, BOARD_LIMIT).await?;
    let columns: Vec<Column> = collection
        .fields
        .iter()
        .filter(|f| f.key != collection.primary_field)
        .map(|f| Column {
            key: f.key.clone(),
            label: f.label.clone(),
        })
        .collect();
    let records = found
        .iter()
        .map(|r| BoardRecord {
            record_ref: r.ref_(),
            title: r.title.clone(),
            stage: r.stage.clone(),
            version: r.version,
            company_ref: r.entity_id.as_ref().map(|e| format!("company:{e}")),
            values: columns
                .iter()
                .map(|c| match r.fields.get(&c.key) {
                    None | Some(Value::Null) => String::new(),
                    Some(Value::String(s)) => s.clone(),
                    Some(v) => v.to_string(),
                })
                .collect(),
            updated_at: r.updated_at,
        })
        .collect();
    Ok(CollectionBoard {
        collection_id: collection.id.clone(),
        name: collection.name.clone(),
        stages: collection.stages.clone(),
        columns,
        records,
        truncated,
    })
}

/// Moves a record to another stage through `crm_record` (level 0): history row,
/// undo token, and `VERSION_CONFLICT` when it changed since `version` was read. From
/// a session, the board's saved-list counts follow.
pub async fn move_record(
    engine: &Engine,
    caller: &Caller,
    session_id: Option<&str>,
    record_ref: &str,
    version: i64,
    stage: &str,
) -> EngineResult<Moved> {
    let session = match session_id {
        Some(id) => Some(engine.sessions.get(caller, id).await?.id),
        None => None,
    };
    let env = call(
        engine,
        caller,
        "crm_record",
        json!({"op": "update", "record_id": record_ref, "version": version, "stage": stage}),
        None,
    )
    .await?;
    let row = env
        .results
        .first()
        .ok_or_else(|| EngineError::Internal("crm_record returned no row".into()))?;
    if let Some(session) = session {
        tell_session(engine, caller, &session, None).await?;
    }
    Ok(Moved {
        record_ref: row.ref_.clone(),
        stage: text(row, "stage").unwrap_or_else(|| stage.to_owned()),
        version: field(row, "version")?,
        undo_token: text(row, "undo_token"),
    })
}

/// Appends to the session what a screen write changed: `undo.applied` when given,
/// then the saved list's fresh stage counts if they moved. The CRM write already
/// committed; the counts are derived and re-read on the next write if this fails.
async fn tell_session(
    engine: &Engine,
    caller: &Caller,
    session_id: &str,
    undone: Option<UndoApplied>,
) -> EngineResult<()> {
    let view = engine
        .sessions
        .snapshot_at_latest(caller, session_id)
        .await?
        .view;
    let mut events: Vec<SessionEvent> = undone.into_iter().map(SessionEvent::UndoApplied).collect();
    events.extend(crate::tools::board::saved_refresh(engine, caller, &view.board, None).await?);
    if !events.is_empty() {
        engine.sessions.append_all(session_id, &events).await?;
    }
    Ok(())
}

/// "quitar" on a selection card: `selection_update` with `op: remove` as the person,
/// which appends the new selection to the session log. Returns how many remain.
pub async fn remove_from_selection(
    engine: &Engine,
    caller: &Caller,
    session_id: &str,
    company_ref: &str,
) -> EngineResult<u32> {
    let env = call(
        engine,
        caller,
        "selection_update",
        json!({"op": "remove", "items": [{"ref": company_ref, "why": "Quitada por la persona desde el tablero"}]}),
        Some(session_id),
    )
    .await?;
    let totals: SelectionTotals = typed::first(&env)?;
    Ok(u32::try_from(totals.total).unwrap_or(u32::MAX))
}

/// "deshacer" on a tool line: restores the state before the write, or fails with
/// `VERSION_CONFLICT` (said plainly, with what to do from the screen). From a session,
/// the line shows what was undone for every tab (`undo.applied`) and the board's
/// saved-list counts follow.
pub async fn undo(
    engine: &Engine,
    caller: &Caller,
    session_id: Option<&str>,
    token: &str,
) -> EngineResult<UndoReceipt> {
    let session = match session_id {
        Some(id) => Some(engine.sessions.get(caller, id).await?.id),
        None => None,
    };
    let outcome = crate::tools::crm::undo(engine, caller, token.trim())
        .await
        .map_err(|e| match e {
            EngineError::Typed(body) if body.code == ErrorCode::VersionConflict => {
                EngineError::typed(
                    ErrorCode::VersionConflict,
                    "No se puede deshacer: alguien cambió ese registro después.",
                    "Abre la empresa para ver su historial y corrige a mano lo que haga falta.",
                )
            }
            other => other,
        })?;
    let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    let (restored, removed, cancelled) = (
        count(outcome.restored.len()),
        count(outcome.removed.len()),
        count(outcome.cancelled_activities.len()),
    );
    let receipt = UndoReceipt {
        restored,
        removed,
        cancelled,
        summary: undo_summary(restored, removed, cancelled),
    };
    if let Some(session) = session {
        let applied = UndoApplied {
            undo_token: token.trim().to_owned(),
            summary: receipt.summary.clone(),
        };
        tell_session(engine, caller, &session, Some(applied)).await?;
    }
    Ok(receipt)
}

/// "Listo: …" in Spanish with what the undo put back.
pub fn undo_summary(restored: u32, removed: u32, cancelled: u32) -> String {
    let plural = |n: u32, one: &str, many: &str| {
        if n == 1 {
            format!("1 {one}")
        } else {
            format!("{n} {many}")
        }
    };
    let mut parts = Vec::new();
    if restored > 0 {
        parts.push(format!(
            "{} como estaba",
            plural(restored, "registro quedó", "registros quedaron")
        ));
    }
    if removed > 0 {
        parts.push(format!(
            "{} del CRM",
            plural(removed, "registro salió", "registros salieron")
        ));
    }
    if cancelled > 0 {
        parts.push(plural(
            cancelled,
            "seguimiento cancelado",
            "seguimientos cancelados",
        ));
    }
    if parts.is_empty() {
        "Deshecho: no había nada que cambiar.".into()
    } else {
        format!("Deshecho: {}.", parts.join(", "))
    }
}

#[cfg(test)]
mod tests;
