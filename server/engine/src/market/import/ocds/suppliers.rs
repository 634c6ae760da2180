//! The Proveedores side of an OCDS import: each supplier a release names, written once
//! per run (or its empty state and claimed RFC filled), and the award count, total and
//! last date of the suppliers a batch touched. Runs inside the caller's transaction.

use std::collections::{HashMap, HashSet};

use super::fields::Party;
use super::release::Ctx;
use crate::base::error::EngineResult;
use crate::base::store::Conn;
use crate::market::import::ImportReport;

/// Bounds [`Ctx::known`] (about 100 bytes an entry).
const KNOWN_MAX: usize = 200_000;

/// What a batch changes in its suppliers' award count, total and last date. New
/// awards add to the stored figures (one statement per supplier and batch, whatever
/// the supplier's size); a supplier one of whose awards a newer release changed is
/// recomputed from its awards.
#[derive(Debug, Default)]
pub(super) struct Totals {
    /// Supplier → (new awards, their MXN total, their latest date).
    add: HashMap<String, (i64, f64, Option<String>)>,
    pub(super) recompute: HashSet<String>,
}

impl Totals {
    pub(super) fn added(
        &mut self,
        supplier: &str,
        amount: Option<f64>,
        currency: &str,
        date: Option<&str>,
    ) {
        let e = self.add.entry(supplier.to_string()).or_default();
        e.0 += 1;
        if currency == "MXN" {
            e.1 += amount.unwrap_or(0.0);
        }
        if let Some(d) = date {
            if e.2.as_deref().is_none_or(|old| d > old) {
                e.2 = Some(d.to_string());
            }
        }
    }
}

/// Inserts a supplier, or fills the state of the one already there.
pub(super) async fn write_supplier(
    conn: &mut Conn,
    ctx: &mut Ctx,
    party: &Party,
    report: &mut ImportReport,
) -> EngineResult<()> {
    let inserted = sqlx::query(
        "insert into mk_suppliers (id, rfc, rfc_valid, name, state_code, municipality, source, created_at, rfc_claimed, name_key) values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) on conflict do nothing",
    )
    .bind(&party.key)
    .bind(&party.rfc)
    .bind(i64::from(party.rfc_valid))
    .bind(&party.name)
    .bind(party.state.map(|s| i64::from(s.code())))
    .bind(&party.locality)
    .bind(&ctx.source)
    .bind(ctx.now)
    .bind(&party.rfc_claimed)
    .bind(crate::market::entities::name_key(&party.name))
    .execute(&mut *conn)
    .await?
    .rows_affected();
    if inserted > 0 {
        report.inserted.suppliers += 1;
    } else {
        if let Some(claimed) = &party.rfc_claimed {
            sqlx::query(
                "update mk_suppliers set rfc_claimed = $1 where id = $2 and rfc is null and rfc_claimed is null",
            )
            .bind(claimed)
            .bind(&party.key)
            .execute(&mut *conn)
            .await?;
        }
        if let Some(st) = party.state {
            let filled = sqlx::query(
                "update mk_suppliers set state_code = $1 where id = $2 and state_code is null",
            )
            .bind(i64::from(st.code()))
            .bind(&party.key)
            .execute(&mut *conn)
            .await?
            .rows_affected();
            report.updated += filled;
        }
    }
    if ctx.known.len() >= KNOWN_MAX {
        ctx.known.clear();
    }
    ctx.known.insert(party.key.clone(), party.state.is_some());
    Ok(())
}

/// Brings the batch's suppliers' award count, total and last date up to date.
pub(super) async fn refresh_suppliers(conn: &mut Conn, totals: Totals) -> EngineResult<()> {
    for (id, (n, total, last)) in &totals.add {
        if totals.recompute.contains(id) {
            continue;
        }
        sqlx::query(
            "update mk_suppliers set awards_count = awards_count + $1, awards_total = awards_total + cast($2 as double precision), \
             last_award = case when last_award is null or last_award < $3 then $3 else last_award end where id = $4",
        )
        .bind(*n)
        .bind(*total)
        .bind(last)
        .bind(id)
        .execute(&mut *conn)
        .await?;
    }
    let ids: Vec<&String> = totals.recompute.iter().collect();
    for chunk in ids.chunks(400) {
        let placeholders = crate::base::store::marks(chunk.len());
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
        q.execute(&mut *conn).await?;
    }
    Ok(())
}
