//! OCDS 1.1 importer: release packages (`releases[]`), record packages (`records[]`
//! with `compiledRelease`, else the last embedded release) and bare releases.
//!
//! Real-world tolerance: Spanish role names ("Comprador", "Proveedor o contratista",
//! "Participante", "Entidad que realiza la contratación"), party ids like
//! `RFC-XXX…`, numeric identifiers, suppliers identified by a state registry
//! (`PROV-GOB-JAL`) instead of an RFC, hashed RFCs (32 hex chars), missing awards
//! (the tender still becomes a Licitación), unsuccessful awards (skipped with
//! reason), amounts only in contracts or in the planning budget (breakdowns), and a
//! `procurementMethodDetails` that contradicts `procurementMethod` (the Spanish
//! detail wins). Idempotent: awards keyed by ocid + award id + supplier.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::{log_import, ImportReport, Skipped};
use crate::base::catalog::rfc;
use crate::base::catalog::states::State;
use crate::base::catalog::text::fold;
use crate::base::error::{EngineError, EngineResult};
use crate::base::store::Store;
use crate::market::types::Procedure;

fn s(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(x) => {
            let t = x.trim();
            (!t.is_empty()).then(|| t.to_string())
        }
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn num(v: Option<&Value>) -> Option<f64> {
    match v? {
        Value::Number(n) => n.as_f64(),
        Value::String(x) => x.trim().replace(',', "").parse().ok(),
        _ => None,
    }
}

fn value_of(v: Option<&Value>) -> Option<(f64, String)> {
    let v = v?;
    let amount = num(v.get("amount"))?;
    let currency = s(v.get("currency")).unwrap_or_else(|| "MXN".into());
    Some((amount, currency))
}

fn date_of(v: Option<&Value>) -> Option<String> {
    let d = s(v)?;
    let day = d.get(..10)?;
    chrono::NaiveDate::parse_from_str(day, "%Y-%m-%d").ok()?;
    Some(day.to_string())
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Role {
    Buyer,
    Supplier,
    Procuring,
    Tenderer,
    Other,
}

fn role(r: &str) -> Role {
    match fold(r).replace(' ', "").as_str() {
        "buyer" | "comprador" => Role::Buyer,
        "supplier" | "proveedorocontratista" | "proveedor" | "contratista" => Role::Supplier,
        "procuringentity" | "entidadquerealizalacontratacion" => Role::Procuring,
        "tenderer" | "participante" | "licitante" => Role::Tenderer,
        _ => Role::Other,
    }
}

/// A supplier identity resolved from a party.
#[derive(Debug, Clone)]
struct Party {
    key: String,
    rfc: Option<String>,
    rfc_valid: bool,
    name: String,
    state: Option<State>,
    locality: Option<String>,
    roles: Vec<Role>,
}

fn is_hash(id: &str) -> bool {
    id.len() >= 32 && id.chars().all(|c| c.is_ascii_hexdigit())
}

fn party_identity(p: &Value, warnings: &mut Vec<String>) -> Option<Party> {
    let party_id = s(p.get("id"));
    let ident = p.get("identifier");
    let scheme = ident.and_then(|i| s(i.get("scheme"))).unwrap_or_default();
    let ident_id = ident.and_then(|i| s(i.get("id")));
    let raw = ident_id.clone().or_else(|| {
        party_id
            .clone()
            .map(|id| id.trim_start_matches("RFC-").to_string())
    })?;
    let check = rfc::check(&raw);
    let (key, rfc, rfc_valid) = if check.format_ok
        && (scheme.eq_ignore_ascii_case("RFC") || scheme.is_empty() || scheme.contains("RFC"))
    {
        (
            check.normalized.clone(),
            Some(check.normalized.clone()),
            check.check_digit_ok,
        )
    } else if is_hash(&raw) {
        warnings.push(format!(
            "Un proveedor publica su RFC cifrado ({}…); se guardó sin RFC.",
            &raw[..8]
        ));
        (format!("rfc-hash:{}", raw.to_lowercase()), None, false)
    } else if check.format_ok {
        (
            check.normalized.clone(),
            Some(check.normalized),
            check.check_digit_ok,
        )
    } else {
        let scheme = if scheme.is_empty() {
            "ID".to_string()
        } else {
            scheme
        };
        (format!("{scheme}:{raw}"), None, false)
    };
    let name = ident
        .and_then(|i| s(i.get("legalName")))
        .or_else(|| s(p.get("name")))
        .unwrap_or_else(|| key.clone());
    let address = p.get("address");
    let state = address
        .and_then(|a| s(a.get("region")))
        .and_then(|r| State::from_registry(&r));
    let locality = address.and_then(|a| s(a.get("locality")));
    let roles = p
        .get("roles")
        .and_then(Value::as_array)
        .map(|rs| rs.iter().filter_map(|r| r.as_str()).map(role).collect())
        .unwrap_or_default();
    Some(Party {
        key,
        rfc,
        rfc_valid,
        name,
        state,
        locality,
        roles,
    })
}

fn procedure_of(tender: Option<&Value>) -> Option<Procedure> {
    let t = tender?;
    if let Some(d) = s(t.get("procurementMethodDetails")) {
        let f = fold(&d);
        if f.contains("adjudicacion directa") {
            return Some(Procedure::Direct);
        }
        if f.contains("invitacion") {
            return Some(Procedure::Limited);
        }
        if f.contains("licitacion") {
            return Some(Procedure::Open);
        }
    }
    s(t.get("procurementMethod")).and_then(|m| Procedure::from_key(&m))
}

fn budget_amount(release: &Value) -> Option<(f64, String)> {
    let budget = release.get("planning")?.get("budget")?;
    if let Some(v) = value_of(budget.get("amount")) {
        return Some(v);
    }
    let parts = budget.get("budgetBreakdown")?.as_array()?;
    let mut total = 0.0;
    let mut currency = "MXN".to_string();
    let mut any = false;
    for p in parts {
        if let Some((a, c)) = value_of(p.get("amount")) {
            total += a;
            currency = c;
            any = true;
        }
    }
    any.then_some((total, currency))
}

/// Extracts releases from any OCDS shape; records without usable releases are skipped.
fn releases_of(doc: &Value, skipped: &mut Vec<Skipped>) -> Vec<Value> {
    let mut out = Vec::new();
    match doc {
        Value::Array(items) => {
            for i in items {
                out.extend(releases_of(i, skipped));
            }
        }
        Value::Object(obj) => {
            if let Some(rs) = obj.get("releases").and_then(Value::as_array) {
                for r in rs {
                    if r.get("ocid").is_some() {
                        out.push(r.clone());
                    } else {
                        skipped.push(Skipped {
                            item: s(r.get("url")).unwrap_or_else(|| "release".into()),
                            reason: "La entrega enlazada no trae datos (solo URL).".into(),
                        });
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
                        skipped.push(Skipped {
                            item: ocid,
                            reason: "El registro no trae compiledRelease ni entregas con datos."
                                .into(),
                        });
                    }
                }
            } else if obj.get("ocid").is_some() {
                out.push(doc.clone());
            } else {
                skipped.push(Skipped {
                    item: "documento".into(),
                    reason: "No es un paquete OCDS (faltan releases, records u ocid).".into(),
                });
            }
        }
        _ => skipped.push(Skipped {
            item: "documento".into(),
            reason: "No es un documento JSON de OCDS.".into(),
        }),
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
    let releases = releases_of(&doc, &mut report.skipped);
    let mut touched: HashSet<String> = HashSet::new();
    let now = crate::base::clock::now_ms();
    let mut tx = store.pool().begin().await?;
    for release in &releases {
        let Some(ocid) = s(release.get("ocid")) else {
            continue;
        };
        let mut warnings = Vec::new();
        let mut parties: HashMap<String, Party> = HashMap::new();
        let mut buyer_party: Option<Party> = None;
        for p in release
            .get("parties")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let Some(party) = party_identity(p, &mut warnings) else {
                continue;
            };
            if party.roles.contains(&Role::Buyer) && buyer_party.is_none() {
                buyer_party = Some(party.clone());
            }
            if let Some(id) = s(p.get("id")) {
                // Same party listed twice (once per role): merge roles.
                parties
                    .entry(id)
                    .and_modify(|e| e.roles.extend(party.roles.clone()))
                    .or_insert(party);
            }
        }
        let buyer_obj = release.get("buyer");
        let buyer = buyer_obj
            .and_then(|b| s(b.get("name")))
            .or_else(|| buyer_party.as_ref().map(|b| b.name.clone()))
            .or_else(|| {
                release
                    .get("tender")
                    .and_then(|t| t.get("procuringEntity"))
                    .and_then(|p| s(p.get("name")))
            })
            .unwrap_or_else(|| publisher.clone());
        let buyer_name = buyer_obj
            .and_then(|b| s(b.get("id")))
            .and_then(|id| parties.get(&id))
            .or(buyer_party.as_ref())
            .map(|p| p.name.clone());
        let buyer_state = buyer_obj
            .and_then(|b| s(b.get("id")))
            .and_then(|id| parties.get(&id))
            .or(buyer_party.as_ref())
            .and_then(|p| p.state);
        let tender = release.get("tender").filter(|t| t.is_object());
        let procedure = procedure_of(tender);
        let release_date = date_of(release.get("date"));

        // ---- the tender as a Licitación
        if let Some(t) = tender {
            let title = s(t.get("title"))
                .or_else(|| s(t.get("description")))
                .unwrap_or_else(|| ocid.clone());
            let (amount, currency) = value_of(t.get("value"))
                .or_else(|| value_of(t.get("minValue")))
                .or_else(|| budget_amount(release))
                .map(|(a, c)| (Some(a), c))
                .unwrap_or((None, "MXN".into()));
            let published = t
                .get("tenderPeriod")
                .and_then(|p| date_of(p.get("startDate")))
                .or_else(|| release_date.clone());
            let closes = t
                .get("tenderPeriod")
                .and_then(|p| date_of(p.get("endDate")));
            let status = s(t.get("status")).and_then(|st| match st.as_str() {
                "planning" | "planned" => Some("planning".to_string()),
                "active" => Some("active".into()),
                "complete" => Some("complete".into()),
                "cancelled" | "unsuccessful" | "withdrawn" => Some("cancelled".into()),
                _ => None,
            });
            let inserted = sqlx::query(
                "insert into mk_opportunities (ocid, title, description, buyer, buyer_name, procedure, state_code, amount, currency, published, closes, status, source) values ($1, $2, $3, $4, $5, $6, $7, cast($8 as double precision), $9, $10, $11, $12, $13) on conflict do nothing",
            )
            .bind(&ocid)
            .bind(&title)
            .bind(s(t.get("description")))
            .bind(&buyer)
            .bind(&buyer_name)
            .bind(procedure.map(|p| p.key()))
            .bind(buyer_state.map(|s| i64::from(s.code())))
            .bind(crate::base::store::opt_real(amount))
            .bind(&currency)
            .bind(&published)
            .bind(&closes)
            .bind(&status)
            .bind(&source)
            .execute(&mut *tx)
            .await?
            .rows_affected();
            if inserted > 0 {
                report.inserted.opportunities += 1;
            } else {
                // Later releases of the same process fill what earlier ones lacked.
                let filled = sqlx::query(
                    "update mk_opportunities set amount = coalesce(amount, cast($1 as double precision)), closes = coalesce(closes, $2), procedure = coalesce(procedure, $3), status = coalesce(status, $4) \
                     where ocid = $5 and ((amount is null and $6 is not null) or (closes is null and $7 is not null) or (procedure is null and $8 is not null) or (status is null and $9 is not null))",
                )
                .bind(crate::base::store::opt_real(amount))
                .bind(&closes)
                .bind(procedure.map(|p| p.key()))
                .bind(&status)
                .bind(&ocid)
                .bind(crate::base::store::opt_real(amount))
                .bind(&closes)
                .bind(procedure.map(|p| p.key()))
                .bind(&status)
                .execute(&mut *tx)
                .await?
                .rows_affected();
                if filled > 0 {
                    report.updated += 1;
                } else {
                    report.unchanged += 1;
                }
            }
        }

        // ---- awards
        let awards = release
            .get("awards")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        if awards.is_empty() {
            report.skipped.push(Skipped {
                item: ocid.clone(),
                reason:
                    "La entrega no trae adjudicaciones (solo se importó la licitación, si la hay)."
                        .into(),
            });
        }
        let contracts = release
            .get("contracts")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for award in &awards {
            let award_id = s(award.get("id")).unwrap_or_else(|| "sin-id".into());
            let item = format!("{ocid} / {award_id}");
            let status = s(award.get("status")).unwrap_or_default();
            if matches!(status.as_str(), "unsuccessful" | "cancelled") {
                report.skipped.push(Skipped {
                    item,
                    reason: format!("Adjudicación con estatus «{status}» (no se asignó a nadie)."),
                });
                continue;
            }
            let suppliers = award
                .get("suppliers")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            if suppliers.is_empty() {
                report.skipped.push(Skipped {
                    item,
                    reason: "La adjudicación no nombra proveedor.".into(),
                });
                continue;
            }
            let contract = contracts
                .iter()
                .find(|c| s(c.get("awardID")).as_deref() == Some(award_id.as_str()));
            let mut amount = value_of(award.get("value"));
            if amount.is_none() {
                amount = contract.and_then(|c| value_of(c.get("value")));
            }
            if amount.is_none() {
                amount = budget_amount(release);
                if amount.is_some() {
                    report.warnings.push(format!(
                        "{item}: sin monto adjudicado; se usó el presupuesto de la planeación."
                    ));
                }
            }
            let date = date_of(award.get("date"))
                .or_else(|| contract.and_then(|c| date_of(c.get("dateSigned"))))
                .or_else(|| release_date.clone());
            let title = s(award.get("title"))
                .or_else(|| s(award.get("description")))
                .or_else(|| tender.and_then(|t| s(t.get("title"))))
                .unwrap_or_else(|| ocid.clone());
            for sup in &suppliers {
                let sup_id = s(sup.get("id"));
                let party = sup_id.as_ref().and_then(|id| parties.get(id)).cloned();
                let party = match party {
                    Some(p) => p,
                    None => {
                        let inline = serde_json::json!({
                            "id": sup.get("id"),
                            "name": sup.get("name"),
                            "identifier": {"id": sup_id.clone().map(|i| i.trim_start_matches("RFC-").to_string())},
                        });
                        match party_identity(&inline, &mut warnings) {
                            Some(p) => p,
                            None => {
                                report.skipped.push(Skipped {
                                    item: item.clone(),
                                    reason: "Proveedor sin identificador.".into(),
                                });
                                continue;
                            }
                        }
                    }
                };
                if party.rfc.is_some() && !party.rfc_valid {
                    warnings.push(format!(
                        "El RFC {} no pasa el dígito verificador; se importó de todos modos.",
                        party.key
                    ));
                }
                let inserted = sqlx::query(
                    "insert into mk_suppliers (id, rfc, rfc_valid, name, state_code, municipality, source, created_at) values ($1, $2, $3, $4, $5, $6, $7, $8) on conflict do nothing",
                )
                .bind(&party.key)
                .bind(&party.rfc)
                .bind(i64::from(party.rfc_valid))
                .bind(&party.name)
                .bind(party.state.map(|s| i64::from(s.code())))
                .bind(&party.locality)
                .bind(&source)
                .bind(now)
                .execute(&mut *tx)
                .await?
                .rows_affected();
                if inserted > 0 {
                    report.inserted.suppliers += 1;
                } else if let Some(st) = party.state {
                    let filled = sqlx::query(
                        "update mk_suppliers set state_code = $1 where id = $2 and state_code is null",
                    )
                    .bind(i64::from(st.code()))
                    .bind(&party.key)
                    .execute(&mut *tx)
                    .await?
                    .rows_affected();
                    report.updated += filled;
                }
                let (amt, currency) = amount
                    .clone()
                    .map(|(a, c)| (Some(a), c))
                    .unwrap_or((None, "MXN".into()));
                let key = format!("{source}:{ocid}:{award_id}:{}", party.key);
                let done = sqlx::query(
                    "insert into mk_awards (award_key, ocid, supplier_id, supplier_name, buyer, buyer_name, title, amount, currency, date, year, procedure, state_code, scian, source) \
                     select $1, $2, $3, $4, $5, $6, $7, cast($8 as double precision), $9, $10, $11, $12, s.state_code, s.scian, $13 from mk_suppliers s where s.id = $14 on conflict do nothing",
                )
                .bind(&key)
                .bind(&ocid)
                .bind(&party.key)
                .bind(&party.name)
                .bind(&buyer)
                .bind(&buyer_name)
                .bind(&title)
                .bind(crate::base::store::opt_real(amt))
                .bind(&currency)
                .bind(&date)
                .bind(date.as_deref().and_then(|d| d.get(..4)).and_then(|y| y.parse::<i64>().ok()))
                .bind(procedure.map(|p| p.key()))
                .bind(&source)
                .bind(&party.key)
                .execute(&mut *tx)
                .await?
                .rows_affected();
                if done > 0 {
                    report.inserted.awards += 1;
                    touched.insert(party.key.clone());
                } else {
                    report.unchanged += 1;
                }
            }
        }
        for w in warnings {
            if !report.warnings.contains(&w) {
                report.warnings.push(w);
            }
        }
    }
    tx.commit().await?;
    if !touched.is_empty() {
        let ids: Vec<String> = touched.into_iter().collect();
        for chunk in ids.chunks(400) {
            let placeholders = vec!["?"; chunk.len()].join(",");
            let sql = format!(
                "update mk_suppliers set (awards_count, awards_total, last_award) = \
                 (select count(*), coalesce(sum(case when a.currency = 'MXN' then a.amount end), 0.0), max(a.date) \
                  from mk_awards a where a.supplier_id = mk_suppliers.id) where id in ({placeholders})"
            );
            let sql = crate::base::store::numbered(&sql);
            let mut q = sqlx::query(&sql);
            for id in chunk {
                q = q.bind(id.as_str());
            }
            q.execute(store.pool()).await?;
        }
    }
    log_import(
        store,
        &source,
        &format!("Contrataciones abiertas (OCDS): {publisher}"),
        "ocds",
        report.inserted.total(),
        report.skipped.len() as u64,
    )
    .await?;
    Ok(report)
}
