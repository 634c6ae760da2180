//! One OCDS release into the market tables: the tender as a Licitación, each award —
//! or, in publications without `awards[]` (the federal administration's compiled
//! releases), each contract — as an Adjudicación per supplier, and each supplier as a
//! Proveedor (`suppliers`). Runs inside the caller's transaction.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::fields::{
    budget_amount, date_of, party_identity, procedure_of, s, stamp_of, value_of, Party, Role,
};
use super::history::{update_award, update_opportunity, Figures, Origin};
use super::suppliers::{write_supplier, Totals};
use crate::base::error::EngineResult;
use crate::base::store::{opt_real, Conn};
use crate::market::import::ImportReport;

/// What every release of one import shares.
pub(super) struct Ctx {
    /// `ocds:<publisher>`, part of every natural key.
    pub source: String,
    /// The buyer of last resort.
    pub publisher: String,
    pub now: i64,
    /// The import run (`mk_import_runs`) every row this run writes points to.
    pub run_id: i64,
    /// Suppliers this run has written, and whether their state is known: a supplier
    /// appears in many releases, and each statement saved counts at national scale.
    pub known: HashMap<String, bool>,
    /// Suppliers this run wrote since the last entity resolution (`market::entities`),
    /// resolved at the end of the run or once [`TOUCHED_MAX`] of them gathered.
    pub touched: HashSet<String>,
}

/// Bounds [`Ctx::touched`]: past it the import resolves what it gathered.
pub(super) const TOUCHED_MAX: usize = 50_000;

/// One adjudication to write: an award, or a contract standing for one.
struct Grant {
    id: String,
    suppliers: Vec<Value>,
    amount: Option<(f64, String)>,
    date: Option<String>,
    title: String,
}

/// The parties of a release by id (roles merged), and the first buyer.
fn parties_of(
    release: &Value,
    warnings: &mut Vec<String>,
) -> (HashMap<String, Party>, Option<Party>) {
    let mut parties: HashMap<String, Party> = HashMap::new();
    let mut buyer: Option<Party> = None;
    for p in release
        .get("parties")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let Some(party) = party_identity(p, warnings) else {
            continue;
        };
        if party.roles.contains(&Role::Buyer) && buyer.is_none() {
            buyer = Some(party.clone());
        }
        if let Some(id) = s(p.get("id")) {
            // Same party listed twice (once per role): merge roles.
            parties
                .entry(id)
                .and_modify(|e| e.roles.extend(party.roles.clone()))
                .or_insert(party);
        }
    }
    (parties, buyer)
}

fn array(v: Option<&Value>) -> &[Value] {
    v.and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// The awards of a release, or its contracts when it publishes no awards.
fn grants(
    release: &Value,
    ocid: &str,
    tender_title: Option<String>,
    report: &mut ImportReport,
) -> Vec<Grant> {
    let awards = array(release.get("awards"));
    let contracts = array(release.get("contracts"));
    let release_date = date_of(release.get("date"));
    let fallback_title = tender_title.unwrap_or_else(|| ocid.to_string());
    let mut out = Vec::new();
    if awards.is_empty() && contracts.is_empty() {
        report.skip(
            ocid,
            "La entrega no trae adjudicaciones ni contratos (solo se importó la licitación, si la hay).",
        );
        return out;
    }
    for award in awards {
        let id = s(award.get("id")).unwrap_or_else(|| "sin-id".into());
        let item = format!("{ocid} / {id}");
        let status = s(award.get("status")).unwrap_or_default();
        if matches!(status.as_str(), "unsuccessful" | "cancelled") {
            report.skip(
                &item,
                &format!("Adjudicación con estatus «{status}» (no se asignó a nadie)."),
            );
            continue;
        }
        let contract = contracts
            .iter()
            .find(|c| s(c.get("awardID")).as_deref() == Some(id.as_str()));
        let mut amount = value_of(award.get("value"))
            .or_else(|| contract.and_then(|c| value_of(c.get("valueWithTax"))))
            .or_else(|| contract.and_then(|c| value_of(c.get("value"))));
        if amount.is_none() {
            amount = budget_amount(release);
            if amount.is_some() {
                report.warn(format!(
                    "{item}: sin monto adjudicado; se usó el presupuesto de la planeación."
                ));
            }
        }
        out.push(Grant {
            suppliers: array(award.get("suppliers")).to_vec(),
            amount,
            date: date_of(award.get("date"))
                .or_else(|| contract.and_then(|c| date_of(c.get("dateSigned"))))
                .or_else(|| release_date.clone()),
            title: s(award.get("title"))
                .or_else(|| s(award.get("description")))
                .unwrap_or_else(|| fallback_title.clone()),
            id,
        });
    }
    if !awards.is_empty() {
        return out;
    }
    // No awards: each contract stands for its award (federal compiled releases).
    for contract in contracts {
        let id = s(contract.get("awardID"))
            .or_else(|| s(contract.get("id")))
            .unwrap_or_else(|| "sin-id".into());
        let item = format!("{ocid} / {id}");
        let status = s(contract.get("status")).unwrap_or_default();
        if status == "cancelled" {
            report.skip(&item, "Contrato cancelado.");
            continue;
        }
        let mut amount =
            value_of(contract.get("valueWithTax")).or_else(|| value_of(contract.get("value")));
        if amount.is_none() && contracts.len() == 1 {
            amount = budget_amount(release);
            if amount.is_some() {
                report.warn(format!(
                    "{item}: el contrato no trae monto; se usó el presupuesto de la planeación."
                ));
            }
        }
        out.push(Grant {
            suppliers: array(contract.get("suppliers")).to_vec(),
            amount,
            date: date_of(contract.get("dateSigned"))
                .or_else(|| {
                    contract
                        .get("period")
                        .and_then(|p| date_of(p.get("startDate")))
                })
                .or_else(|| release_date.clone()),
            title: s(contract.get("title"))
                .or_else(|| s(contract.get("description")))
                .unwrap_or_else(|| fallback_title.clone()),
            id,
        });
    }
    out
}

/// What a release's tender and its grants both read, taken from it once.
pub(super) struct Head<'r> {
    release: &'r Value,
    ocid: String,
    parties: HashMap<String, Party>,
    buyer: String,
    buyer_name: Option<String>,
    buyer_state: Option<crate::base::catalog::states::State>,
    tender: Option<&'r Value>,
    procedure: Option<crate::market::types::Procedure>,
    stamp: Option<String>,
    origin: Origin,
}

/// Reads what the tender and the grants of `release` share; `None` (the release
/// skipped, with its reason) when it has no ocid. The parties' warnings go to `report`.
pub(super) fn head<'r>(
    ctx: &Ctx,
    release: &'r Value,
    report: &mut ImportReport,
) -> Option<Head<'r>> {
    let Some(ocid) = s(release.get("ocid")) else {
        report.skip("entrega", "La entrega no trae ocid.");
        return None;
    };
    let mut warnings = Vec::new();
    let (parties, buyer_party) = parties_of(release, &mut warnings);
    for w in warnings {
        report.warn(w);
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
        .unwrap_or_else(|| ctx.publisher.clone());
    let buyer_ref = buyer_obj
        .and_then(|b| s(b.get("id")))
        .and_then(|id| parties.get(&id))
        .or(buyer_party.as_ref());
    let buyer_name = buyer_ref.map(|p| p.name.clone());
    let buyer_state = buyer_ref.and_then(|p| p.state);
    let tender = release.get("tender").filter(|t| t.is_object());
    Some(Head {
        release,
        procedure: procedure_of(tender),
        stamp: stamp_of(release.get("date")),
        origin: Origin {
            release_id: s(release.get("id")),
            run: ctx.run_id,
        },
        ocid,
        parties,
        buyer,
        buyer_name,
        buyer_state,
        tender,
    })
}

/// Writes one release: its tender, then its grants (the order a release is read in).
pub(super) async fn write_release(
    conn: &mut Conn,
    ctx: &mut Ctx,
    release: &Value,
    report: &mut ImportReport,
    totals: &mut Totals,
) -> EngineResult<()> {
    let Some(head) = head(ctx, release, report) else {
        return Ok(());
    };
    let source = ctx.source.clone();
    write_tender(conn, &source, &head, report).await?;
    write_grants(conn, ctx, &head, report, totals).await
}

/// The tender of a release as a Licitación: inserted, updated by a newer release of
/// its process, or filled where empty by an older one.
pub(super) async fn write_tender(
    conn: &mut Conn,
    source: &str,
    head: &Head<'_>,
    report: &mut ImportReport,
) -> EngineResult<()> {
    let Head {
        release,
        ocid,
        buyer,
        buyer_name,
        buyer_state,
        tender,
        procedure,
        stamp,
        origin,
        ..
    } = head;
    let (release, procedure, buyer_state) = (*release, *procedure, *buyer_state);
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
            "insert into mk_opportunities (ocid, title, description, buyer, buyer_name, procedure, state_code, amount, currency, published, closes, status, source, release_date, release_id, import_run) values ($1, $2, $3, $4, $5, $6, $7, cast($8 as double precision), $9, $10, $11, $12, $13, $14, $15, $16) on conflict do nothing",
        )
        .bind(ocid)
        .bind(&title)
        .bind(s(t.get("description")))
        .bind(buyer)
        .bind(buyer_name)
        .bind(procedure.map(|p| p.key()))
        .bind(buyer_state.map(|s| i64::from(s.code())))
        .bind(opt_real(amount))
        .bind(&currency)
        .bind(&published)
        .bind(&closes)
        .bind(&status)
        .bind(source)
        .bind(stamp)
        .bind(&origin.release_id)
        .bind(origin.run)
        .execute(&mut *conn)
        .await?
        .rows_affected();
        if inserted > 0 {
            report.inserted.opportunities += 1;
        } else if !update_opportunity(
            conn,
            ocid,
            stamp.as_deref(),
            Figures {
                amount,
                currency: currency.clone(),
                status: status.clone(),
                date: None,
                closes: closes.clone(),
            },
            origin,
            report,
        )
        .await?
        {
            // An older (or undated) release of the same process fills what is empty.
            let filled = sqlx::query(
                "update mk_opportunities set amount = coalesce(amount, cast($1 as double precision)), closes = coalesce(closes, $2), procedure = coalesce(procedure, $3), status = coalesce(status, $4) \
                 where ocid = $5 and ((amount is null and $6 is not null) or (closes is null and $7 is not null) or (procedure is null and $8 is not null) or (status is null and $9 is not null))",
            )
            .bind(opt_real(amount))
            .bind(&closes)
            .bind(procedure.map(|p| p.key()))
            .bind(&status)
            .bind(ocid)
            .bind(opt_real(amount))
            .bind(&closes)
            .bind(procedure.map(|p| p.key()))
            .bind(&status)
            .execute(&mut *conn)
            .await?
            .rows_affected();
            if filled > 0 {
                report.updated += 1;
            } else {
                report.unchanged += 1;
            }
        }
    }

    Ok(())
}

/// The awards of a release (or its contracts standing for them) as Adjudicaciones,
/// each supplier written first as a Proveedor.
pub(super) async fn write_grants(
    conn: &mut Conn,
    ctx: &mut Ctx,
    head: &Head<'_>,
    report: &mut ImportReport,
    totals: &mut Totals,
) -> EngineResult<()> {
    let Head {
        release,
        ocid,
        parties,
        buyer,
        buyer_name,
        tender,
        procedure,
        stamp,
        origin,
        ..
    } = head;
    let (release, procedure) = (*release, *procedure);
    let source = ctx.source.clone();
    let source = source.as_str();
    let mut warnings = Vec::new();
    let tender_title = tender.and_then(|t| s(t.get("title")));
    let supplier_parties: Vec<&Party> = parties
        .values()
        .filter(|p| p.roles.contains(&Role::Supplier))
        .collect();
    let grants = grants(release, ocid, tender_title, report);
    let single = grants.len() == 1;
    for grant in grants {
        let item = format!("{ocid} / {}", grant.id);
        let mut suppliers: Vec<Party> = Vec::new();
        for sup in &grant.suppliers {
            let sup_id = s(sup.get("id"));
            if let Some(p) = sup_id.as_ref().and_then(|id| parties.get(id)) {
                suppliers.push(p.clone());
                continue;
            }
            let inline = serde_json::json!({
                "id": sup.get("id"),
                "name": sup.get("name"),
                "identifier": {"id": sup_id.clone().map(|i| i.trim_start_matches("RFC-").to_string())},
            });
            match party_identity(&inline, &mut warnings) {
                Some(p) => suppliers.push(p),
                None => report.skip(&item, "Proveedor sin identificador."),
            }
        }
        if grant.suppliers.is_empty() && single {
            // The supplier is named only among the parties (role supplier).
            suppliers.extend(supplier_parties.iter().map(|p| (*p).clone()));
            suppliers.sort_by(|a, b| a.key.cmp(&b.key));
        }
        if grant.suppliers.is_empty() && suppliers.is_empty() {
            report.skip(&item, "La adjudicación no nombra proveedor.");
            continue;
        }
        for party in suppliers {
            if party.rfc.is_some() && !party.rfc_valid {
                warnings.push(format!(
                    "El RFC {} no pasa el dígito verificador; se importó de todos modos.",
                    party.key
                ));
            }
            if !ctx.touched.contains(&party.key) {
                ctx.touched.insert(party.key.clone());
            }
            // A supplier this run already wrote (with its state) needs no statement.
            let known = ctx.known.get(&party.key).copied();
            if known != Some(true) && !(known == Some(false) && party.state.is_none()) {
                write_supplier(conn, ctx, &party, report).await?;
            }
            let (amt, currency) = grant
                .amount
                .clone()
                .map(|(a, c)| (Some(a), c))
                .unwrap_or((None, "MXN".into()));
            let key = format!("{source}:{ocid}:{}:{}", grant.id, party.key);
            let done = sqlx::query(
                "insert into mk_awards (award_key, ocid, supplier_id, supplier_name, buyer, buyer_name, title, amount, currency, date, year, procedure, state_code, scian, source, release_date, release_id, import_run) \
                 select $1, $2, $3, $4, $5, $6, $7, cast($8 as double precision), $9, $10, $11, $12, s.state_code, s.scian, $13, $15, $16, $17 from mk_suppliers s where s.id = $14 on conflict do nothing",
            )
            .bind(&key)
            .bind(ocid)
            .bind(&party.key)
            .bind(&party.name)
            .bind(buyer)
            .bind(buyer_name)
            .bind(&grant.title)
            .bind(opt_real(amt))
            .bind(&currency)
            .bind(&grant.date)
            .bind(grant.date.as_deref().and_then(|d| d.get(..4)).and_then(|y| y.parse::<i64>().ok()))
            .bind(procedure.map(|p| p.key()))
            .bind(source)
            .bind(&party.key)
            .bind(stamp)
            .bind(&origin.release_id)
            .bind(origin.run)
            .execute(&mut *conn)
            .await?
            .rows_affected();
            if done > 0 {
                report.inserted.awards += 1;
                totals.added(&party.key, amt, &currency, grant.date.as_deref());
            } else if update_award(
                conn,
                &key,
                stamp.as_deref(),
                Figures {
                    amount: amt,
                    currency,
                    status: None,
                    date: grant.date.clone(),
                    closes: None,
                },
                origin,
            )
            .await?
            {
                report.updated += 1;
                totals.recompute.insert(party.key.clone());
            } else {
                report.unchanged += 1;
            }
        }
    }
    for w in warnings {
        report.warn(w);
    }
    Ok(())
}
