//! OCDS 1.1 importer: release packages (`releases[]`), record packages (`records[]`
//! with `compiledRelease`, else the last embedded release) and bare releases.
//!
//! Real-world tolerance: Spanish role names ("Comprador", "Proveedor o contratista",
//! "Participante", "Entidad que realiza la contratación"), party ids like
//! `RFC-XXX…`, numeric identifiers, suppliers identified by a state registry
//! (`PROV-GOB-JAL`) instead of an RFC, hashed RFCs (32 hex chars), missing awards
//! (the tender still becomes a Licitación; contracts stand for the awards, as in the
//! federal administration's compiled releases), unsuccessful awards (skipped with
//! reason), amounts only in contracts or in the planning budget (breakdowns), and a
//! `procurementMethodDetails` that contradicts `procurementMethod` (the Spanish
//! detail wins). Idempotent: awards keyed by ocid + award id + supplier.

mod fields;
mod release;

use std::collections::HashSet;

use serde_json::Value;

use super::{log_import, ImportReport};
use crate::base::catalog::text::fold;
use crate::base::error::{EngineError, EngineResult};
use crate::base::store::Store;
use fields::s;
use release::{refresh_suppliers, write_release, Ctx};

/// Extracts releases from any OCDS shape; records without usable releases are skipped.
fn releases_of(doc: &Value, report: &mut ImportReport) -> Vec<Value> {
    let mut out = Vec::new();
    match doc {
        Value::Array(items) => {
            for i in items {
                out.extend(releases_of(i, report));
            }
        }
        Value::Object(obj) => {
            if let Some(rs) = obj.get("releases").and_then(Value::as_array) {
                for r in rs {
                    if r.get("ocid").is_some() {
                        out.push(r.clone());
                    } else {
                        report.skip(
                            &s(r.get("url")).unwrap_or_else(|| "release".into()),
                            "La entrega enlazada no trae datos (solo URL).",
                        );
                    }
                }
            } else if let Some(records) = obj.get("records").and_then(Value::as_array) {
                for rec in records {
                    let ocid = s(rec.get("ocid")).unwrap_or_default();
                    if let Some(c) = rec.get("compiledRelease") {
                        out.push(c.clone());
                    } else if let Some(last) = rec
                        .get("releases")
                        .and_then(Value::as_array)
                        .and_then(|rs| rs.iter().rev().find(|r| r.get("ocid").is_some()))
                    {
                        out.push(last.clone());
                    } else {
                        report.skip(
                            &ocid,
                            "El registro no trae compiledRelease ni entregas con datos.",
                        );
                    }
                }
            } else if obj.get("ocid").is_some() {
                out.push(doc.clone());
            } else {
                report.skip(
                    "documento",
                    "No es un paquete OCDS (faltan releases, records u ocid).",
                );
            }
        }
        _ => report.skip("documento", "No es un documento JSON de OCDS."),
    }
    out
}

fn publisher_of(doc: &Value) -> Option<String> {
    doc.get("publisher")
        .or_else(|| doc.get("packageInfo").and_then(|p| p.get("publisher")))
        .and_then(|p| s(p.get("name")))
}

/// Imports one OCDS document (JSON bytes). Idempotent.
pub async fn import_ocds(store: &Store, bytes: &[u8]) -> EngineResult<ImportReport> {
    let doc: Value = serde_json::from_slice(bytes).map_err(|e| {
        EngineError::typed(
            luna_protocol::error::ErrorCode::InvalidArgument,
            format!("El archivo no es JSON válido ({e})."),
            "Sube un paquete de entregas o de registros OCDS en JSON.",
        )
    })?;
    let publisher = publisher_of(&doc).unwrap_or_else(|| "OCDS".into());
    let source = format!("ocds:{}", fold(&publisher).replace(' ', "-"));
    let mut report = ImportReport {
        source: source.clone(),
        ..Default::default()
    };
    let releases = releases_of(&doc, &mut report);
    let ctx = Ctx {
        source: source.clone(),
        publisher: publisher.clone(),
        now: crate::base::clock::now_ms(),
    };
    let mut touched: HashSet<String> = HashSet::new();
    let mut tx = store.pool().begin().await?;
    for release in &releases {
        write_release(&mut tx, &ctx, release, &mut report, &mut touched).await?;
    }
    refresh_suppliers(&mut tx, &touched).await?;
    tx.commit().await?;
    log_import(
        store,
        &source,
        &format!("Contrataciones abiertas (OCDS): {publisher}"),
        "ocds",
        report.inserted.total(),
        report.skipped_total,
    )
    .await?;
    Ok(report)
}
