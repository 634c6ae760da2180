//! The market operations behind the eight tools: search (sealed cursors), get by ref,
//! exact counts per state, aggregates, RFC history, segment comparison and RFC
//! screening. Each validates its input into typed errors before touching SQL.

use std::collections::HashMap;

use luna_protocol::error::{ErrorBody, ErrorCode};
use sqlx::any::AnyArguments;

use crate::base::store::{Backend, Db, DbRow};

use super::filters::{invalid, where_for, Resolved, Val, Where};
use super::rows::{self, AWARD_COLS, OPP_COLS, PERMIT_COLS, RISK_COLS, SUPPLIER_COLS};
use super::types::*;
use super::{cursor, Market, DEFAULT_LIMIT, MAX_COUNT_STATES, MAX_LIMIT, MAX_SCREEN_RFCS};
use crate::base::catalog::rfc;
use crate::base::catalog::states::{State, StateContext};
use crate::base::catalog::text;
use crate::base::error::{EngineError, EngineResult};

mod counts;
mod history;

type Query<'q> = sqlx::query::Query<'q, Db, AnyArguments<'q>>;

fn bind<'q>(mut q: Query<'q>, vals: &'q [Val]) -> Query<'q> {
    for v in vals {
        q = match v {
            Val::Text(s) => q.bind(s.as_str()),
            Val::Int(i) => q.bind(*i),
            Val::Real(f) => q.bind(*f),
        };
    }
    q
}

fn table(kind: MarketKind) -> (&'static str, &'static str, &'static str) {
    // (from clause, columns, order by)
    match kind {
        MarketKind::Suppliers => ("mk_suppliers s", SUPPLIER_COLS, "s.awards_total desc, s.id"),
        MarketKind::Awards => ("mk_awards a", AWARD_COLS, "a.date desc, a.id desc"),
        MarketKind::Opportunities => (
            "mk_opportunities o",
            OPP_COLS,
            "o.published desc, o.id desc",
        ),
        MarketKind::Permits => ("mk_permits p", PERMIT_COLS, "p.date desc, p.id desc"),
        MarketKind::Risks => ("mk_risks r", RISK_COLS, "r.date desc, r.id desc"),
    }
}

/// Rows [`Market::recent_awards_matching`] reads before it falls back to the index
/// of the text.
const RECENT_WINDOW: u32 = 2_000;

fn check_limit(limit: Option<u32>) -> EngineResult<u32> {
    let limit = limit.unwrap_or(DEFAULT_LIMIT);
    if limit == 0 || limit > MAX_LIMIT {
        return Err(EngineError::Typed(ErrorBody::new(
            ErrorCode::InvalidArgument,
            format!("`limit` debe estar entre 1 y {MAX_LIMIT}; recibimos {limit}."),
            "Pide hasta 50 filas por página y usa el cursor para seguir; para saber cuántos hay usa market_count.",
        )));
    }
    Ok(limit)
}

fn now_secs() -> i64 {
    crate::base::clock::now_ms() / 1000
}

impl Market {
    /// `market_search`. `page_cap` pushes an output budget down to the page size
    /// (the page is never cut after the query; the cursor stays consistent).
    pub async fn search(
        &self,
        args: &SearchArgs,
        page_cap: Option<u32>,
    ) -> EngineResult<SearchPage> {
        self.search_at(args, page_cap, now_secs()).await
    }

    /// Adjudicaciones matching free text on PostgreSQL, read from the most recent rows
    /// of the other filters first. PostgreSQL finds text through its GIN index in no
    /// order and then sorts every match by date, so a word in a tenth of the rows
    /// («material») costs tens of milliseconds (docs/BENCH.md, «OCDS import at scale»);
    /// the [`RECENT_WINDOW`] newest rows, read in date order through the state, buyer
    /// or date index, hold a full page of such a word's matches. The page is exact
    /// when the window yields it in full (its matches are the first matches of the
    /// whole ordered set); otherwise `None`, and the caller runs the plain query.
    /// SQLite reads FTS5 in date order already.
    async fn recent_awards_matching(
        &self,
        resolved: &Resolved,
        query: &str,
        page: u32,
        offset: u64,
    ) -> EngineResult<Option<Vec<DbRow>>> {
        let backend = self.store.backend();
        // The window cannot fill a page that ends past it: go straight to the plain
        // query.
        if backend != Backend::Postgres || offset + u64::from(page) + 1 > u64::from(RECENT_WINDOW) {
            return Ok(None);
        }
        let Some((text, term)) = super::fulltext::condition(
            backend,
            super::fulltext::Target::Awards,
            query,
            resolved.state,
        ) else {
            return Ok(None);
        };
        let inner = where_for(MarketKind::Awards, resolved, None, backend);
        let sql = crate::base::store::numbered(&format!(
            "select {AWARD_COLS} from (select a.* from mk_awards a where {} \
             order by a.date desc, a.id desc limit {RECENT_WINDOW}) a \
             where {text} order by a.date desc, a.id desc limit ? offset ?",
            inner.sql()
        ));
        let rows = bind(sqlx::query(&sql), &inner.binds)
            .bind(term)
            .bind(i64::from(page) + 1)
            .bind(offset as i64)
            .fetch_all(self.store.pool())
            .await?;
        Ok((rows.len() > page as usize).then_some(rows))
    }

    /// [`Market::search`] at an explicit clock (unix seconds), for tests.
    pub async fn search_at(
        &self,
        args: &SearchArgs,
        page_cap: Option<u32>,
        now: i64,
    ) -> EngineResult<SearchPage> {
        let limit = check_limit(args.limit)?;
        let page = limit.min(page_cap.unwrap_or(limit).max(1));
        let kind = args.kind;
        let mut resolved = args.filters.resolve(kind)?;
        super::filters::resolve_states(&args.states, &mut resolved)?;
        let query = args.query.as_deref().filter(|q| !text::fold(q).is_empty());
        let (mut from, cols, mut order) = table(kind);
        let fts = query.and_then(super::fulltext::fts_query).is_some();
        if kind == MarketKind::Awards && fts && self.store.backend() == Backend::Sqlite {
            (from, order) = super::fulltext::AWARDS_FROM;
        }
        let canonical = serde_json::json!({
            "kind": kind.key(),
            "query": query.map(|q| text::terms(q, 8)),
            "filters": &resolved,
            "order": order,
        })
        .to_string();
        let hash = cursor::query_hash(&canonical);
        let offset = match &args.cursor {
            Some(c) => cursor::open(&self.cursor_secret, c, kind.key(), &hash, now)?,
            None => 0,
        };
        let w = where_for(kind, &resolved, query, self.store.backend());
        let recent = match query.filter(|_| kind == MarketKind::Awards && fts) {
            Some(q) => {
                self.recent_awards_matching(&resolved, q, page, offset)
                    .await?
            }
            None => None,
        };
        let rows = match recent {
            Some(rows) => rows,
            None => {
                let sql = format!(
                    "select {cols} from {from} where {} order by {order} limit ? offset ?",
                    w.sql()
                );
                let sql = crate::base::store::numbered(&sql);
                bind(sqlx::query(&sql), &w.binds)
                    .bind(i64::from(page) + 1)
                    .bind(offset as i64)
                    .fetch_all(self.store.pool())
                    .await?
            }
        };
        let has_more = rows.len() > page as usize;
        let rows = &rows[..rows.len().min(page as usize)];
        let mut results = Vec::with_capacity(rows.len());
        match kind {
            MarketKind::Suppliers => {
                let mut out = Vec::with_capacity(rows.len());
                for r in rows {
                    out.push(rows::supplier(r)?);
                }
                self.attach_supplier_evidence(&mut out, &resolved).await?;
                results.extend(out.into_iter().map(MarketRow::Supplier));
            }
            MarketKind::Awards => {
                let mut out = Vec::with_capacity(rows.len());
                for r in rows {
                    out.push(rows::award(r)?);
                }
                let ids: Vec<String> = out.iter().map(|a| a.supplier_id.clone()).collect();
                let marks = self.marks_for(&ids).await?;
                for a in &mut out {
                    if let Some(m) = marks.get(&a.supplier_id) {
                        a.evidence.extend(m.iter().map(rows::risk_evidence));
                    }
                }
                results.extend(out.into_iter().map(MarketRow::Award));
            }
            MarketKind::Opportunities => {
                for r in rows {
                    results.push(MarketRow::Opportunity(rows::opportunity(r)?));
                }
            }
            MarketKind::Permits => {
                for r in rows {
                    let mut p = rows::permit(r)?;
                    p.evidence.push(rows::permit_evidence(&p));
                    results.push(MarketRow::Permit(p));
                }
            }
            MarketKind::Risks => {
                for r in rows {
                    let mut m = rows::risk(r)?;
                    m.evidence.push(rows::risk_evidence(&m));
                    results.push(MarketRow::Risk(m));
                }
            }
        }
        let cursor = if has_more {
            Some(cursor::seal(
                &self.cursor_secret,
                kind.key(),
                &hash,
                offset + u64::from(page),
                now,
            )?)
        } else {
            None
        };
        Ok(SearchPage {
            kind,
            shown: results.len(),
            results,
            has_more,
            cursor,
        })
    }

    /// Evidence for supplier rows: their largest awards within the buyer/date filters
    /// (up to 3) and every risk mark on their RFC.
    async fn attach_supplier_evidence(
        &self,
        suppliers: &mut [SupplierRow],
        r: &Resolved,
    ) -> EngineResult<()> {
        let mut side = Where::default();
        side.push("a.supplier_id = ?", []);
        if let Some(b) = &r.buyer {
            let (c, b) = super::filters::buyer_clause("a.buyer", "a.buyer_name", b);
            side.push(c, b);
        }
        if let Some(d) = &r.date_from {
            side.push("a.date >= ?", [Val::Text(d.clone())]);
        }
        if let Some(d) = &r.date_to {
            side.push("a.date <= ?", [Val::Text(d.clone())]);
        }
        let sql = format!(
            "select {AWARD_COLS} from mk_awards a where {} order by a.amount desc limit 3",
            side.sql()
        );
        let sql = crate::base::store::numbered(&sql);
        for s in suppliers.iter_mut() {
            let rows = bind(sqlx::query(&sql).bind(s.id.as_str()), &side.binds)
                .fetch_all(self.store.pool())
                .await?;
            for row in &rows {
                s.evidence.push(rows::award_evidence(&rows::award(row)?));
            }
        }
        let keys: Vec<String> = suppliers
            .iter()
            .map(|s| s.rfc.clone().unwrap_or_else(|| s.id.clone()))
            .collect();
        let marks = self.marks_for(&keys).await?;
        for (s, key) in suppliers.iter_mut().zip(&keys) {
            if let Some(m) = marks.get(key) {
                s.evidence.extend(m.iter().map(rows::risk_evidence));
            }
        }
        Ok(())
    }

    /// Risk marks for a set of RFCs, keyed by RFC.
    async fn marks_for(&self, rfcs: &[String]) -> EngineResult<HashMap<String, Vec<RiskRow>>> {
        let mut out: HashMap<String, Vec<RiskRow>> = HashMap::new();
        if rfcs.is_empty() {
            return Ok(out);
        }
        let placeholders = crate::base::store::marks(rfcs.len());
        let sql = format!(
            "select {RISK_COLS} from mk_risks r where r.rfc in ({placeholders}) order by r.date desc"
        );
        let sql = crate::base::store::numbered(&sql);
        let mut q = sqlx::query(&sql);
        for r in rfcs {
            q = q.bind(r.as_str());
        }
        for row in q.fetch_all(self.store.pool()).await? {
            let m = rows::risk(&row)?;
            out.entry(m.rfc.clone()).or_default().push(m);
        }
        Ok(out)
    }

    async fn permits_for(&self, rfc: &str) -> EngineResult<Vec<PermitRow>> {
        let sql = format!(
            "select {PERMIT_COLS} from mk_permits p where p.holder_rfc = ? or p.holder_id = ? order by p.date desc limit 50"
        );
        let sql = crate::base::store::numbered(&sql);
        let rows = sqlx::query(&sql)
            .bind(rfc)
            .bind(rfc)
            .fetch_all(self.store.pool())
            .await?;
        rows.iter().map(rows::permit).collect()
    }

    async fn awards_of(&self, supplier_id: &str, limit: i64) -> EngineResult<Vec<AwardRow>> {
        let sql = format!(
            "select {AWARD_COLS} from mk_awards a where a.supplier_id = ? order by a.date desc, a.id desc limit ?"
        );
        let sql = crate::base::store::numbered(&sql);
        let rows = sqlx::query(&sql)
            .bind(supplier_id)
            .bind(limit)
            .fetch_all(self.store.pool())
            .await?;
        rows.iter().map(rows::award).collect()
    }

    async fn one(&self, sql: &str, id: Val) -> EngineResult<Option<DbRow>> {
        let binds = [id];
        Ok(bind(sqlx::query(sql), &binds)
            .fetch_optional(self.store.pool())
            .await?)
    }

    /// `market_get`: a supplier (`company:<id>`) or a record (`record:<kind>:<id>`).
    /// The returned `branch` tells billing which action ran.
    pub async fn get(&self, args: &GetArgs) -> EngineResult<GetResult> {
        let r = args.record_ref.trim();
        let bad_ref = || {
            EngineError::Typed(
                ErrorBody::new(
                    ErrorCode::InvalidArgument,
                    format!("«{r}» no es una referencia de registro."),
                    "Usa la `ref` de una fila: company:<id> o record:<tipo>:<id>.",
                )
                .with_allowed_values([
                    "company:",
                    "record:opportunity:",
                    "record:award:",
                    "record:permit:",
                    "record:risk:",
                ]),
            )
        };
        if let Some(id) = r.strip_prefix("company:") {
            let sql = format!("select {SUPPLIER_COLS} from mk_suppliers s where s.id = ?");
            let sql = crate::base::store::numbered(&sql);
            let row = self
                .one(&sql, Val::Text(id.to_string()))
                .await?
                .ok_or_else(|| EngineError::not_found("ese proveedor"))?;
            let mut supplier = rows::supplier(&row)?;
            let key = supplier.rfc.clone().unwrap_or_else(|| supplier.id.clone());
            let marks = self
                .marks_for(std::slice::from_ref(&key))
                .await?
                .remove(&key)
                .unwrap_or_default();
            let permits = self.permits_for(&key).await?;
            let awards = if args.include_awards {
                Some(self.awards_of(&supplier.id, 50).await?)
            } else {
                None
            };
            let top = self.awards_of(&supplier.id, 3).await?;
            supplier
                .evidence
                .extend(top.iter().map(rows::award_evidence));
            supplier
                .evidence
                .extend(marks.iter().map(rows::risk_evidence));
            supplier
                .evidence
                .extend(permits.iter().map(rows::permit_evidence));
            let (identities, belongs_to) =
                crate::market::entities::identities_of(&self.store, &supplier.id).await?;
            return Ok(GetResult {
                branch: GetBranch::Supplier,
                record: MarketRecord::Supplier(Box::new(SupplierDetail {
                    supplier,
                    awards,
                    marks,
                    permits,
                    identities,
                    belongs_to,
                })),
            });
        }
        let rest = r.strip_prefix("record:").ok_or_else(bad_ref)?;
        let (kind, id) = rest.split_once(':').ok_or_else(bad_ref)?;
        let id: i64 = id.parse().map_err(|_| bad_ref())?;
        let missing = || EngineError::not_found("ese registro");
        let result = match kind {
            "opportunity" => {
                let sql = format!("select {OPP_COLS} from mk_opportunities o where o.id = ?");
                let sql = crate::base::store::numbered(&sql);
                let row = self.one(&sql, Val::Int(id)).await?.ok_or_else(missing)?;
                GetResult {
                    branch: GetBranch::Opportunity,
                    record: MarketRecord::Opportunity(rows::opportunity(&row)?),
                }
            }
            "award" => {
                let sql = format!("select {AWARD_COLS} from mk_awards a where a.id = ?");
                let sql = crate::base::store::numbered(&sql);
                let row = self.one(&sql, Val::Int(id)).await?.ok_or_else(missing)?;
                let mut a = rows::award(&row)?;
                let marks = self.marks_for(std::slice::from_ref(&a.supplier_id)).await?;
                if let Some(m) = marks.get(&a.supplier_id) {
                    a.evidence.extend(m.iter().map(rows::risk_evidence));
                }
                GetResult {
                    branch: GetBranch::Award,
                    record: MarketRecord::Award(a),
                }
            }
            "permit" => {
                let sql = format!("select {PERMIT_COLS} from mk_permits p where p.id = ?");
                let sql = crate::base::store::numbered(&sql);
                let row = self.one(&sql, Val::Int(id)).await?.ok_or_else(missing)?;
                GetResult {
                    branch: GetBranch::Permit,
                    record: MarketRecord::Permit(rows::permit(&row)?),
                }
            }
            "risk" => {
                let sql = format!("select {RISK_COLS} from mk_risks r where r.id = ?");
                let sql = crate::base::store::numbered(&sql);
                let row = self.one(&sql, Val::Int(id)).await?.ok_or_else(missing)?;
                GetResult {
                    branch: GetBranch::Risk,
                    record: MarketRecord::Risk(rows::risk(&row)?),
                }
            }
            _ => return Err(bad_ref()),
        };
        Ok(result)
    }
}
