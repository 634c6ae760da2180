//! The market operations behind the eight tools: search (sealed cursors), get by ref,
//! exact counts per state, aggregates, RFC history, segment comparison and RFC
//! screening. Each validates its input into typed errors before touching SQL.

use std::collections::HashMap;

use luna_protocol::error::{ErrorBody, ErrorCode};
use sqlx::any::AnyArguments;

use crate::base::store::{Backend, Db, DbRow};
use sqlx::Row;

use super::filters::{invalid, where_for, Resolved, Val, Where};
use super::rows::{self, AWARD_COLS, OPP_COLS, PERMIT_COLS, RISK_COLS, SUPPLIER_COLS};
use super::types::*;
use super::{cursor, Market, DEFAULT_LIMIT, MAX_COUNT_STATES, MAX_LIMIT, MAX_SCREEN_RFCS};
use crate::base::catalog::rfc;
use crate::base::catalog::states::{State, StateContext};
use crate::base::catalog::text;
use crate::base::error::{EngineError, EngineResult};

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
        let sql = format!(
            "select {cols} from {from} where {} order by {order} limit ? offset ?",
            w.sql()
        );
        let sql = crate::base::store::numbered(&sql);
        let rows = bind(sqlx::query(&sql), &w.binds)
            .bind(i64::from(page) + 1)
            .bind(offset as i64)
            .fetch_all(self.store.pool())
            .await?;
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
        let placeholders = vec!["?"; rfcs.len()].join(",");
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
            return Ok(GetResult {
                branch: GetBranch::Supplier,
                record: MarketRecord::Supplier(Box::new(SupplierDetail {
                    supplier,
                    awards,
                    marks,
                    permits,
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

    async fn count_resolved(&self, kind: MarketKind, r: &Resolved) -> EngineResult<u64> {
        let (from, _, _) = table(kind);
        let w = where_for(kind, r, None, self.store.backend());
        let sql = format!("select count(*) from {from} where {}", w.sql());
        let sql = crate::base::store::numbered(&sql);
        let row = bind(sqlx::query(&sql), &w.binds)
            .fetch_one(self.store.pool())
            .await?;
        let n: i64 = row.try_get(0)?;
        Ok(n.max(0) as u64)
    }

    /// `market_count`: the exact number of records matching `filters`, per state when
    /// `states` is given (each state on its own; `total: null` if any failed).
    pub async fn count(&self, args: &CountArgs) -> EngineResult<CountResult> {
        let kind = args.kind.unwrap_or(MarketKind::Suppliers);
        if args.states.len() > MAX_COUNT_STATES {
            return Err(invalid(
                format!(
                    "`states` admite hasta {MAX_COUNT_STATES} estados; recibimos {}.",
                    args.states.len()
                ),
                "Divide la consulta en varias llamadas de hasta 5 estados.",
            ));
        }
        let resolved = args.filters.resolve(kind)?;
        if args.states.is_empty() {
            let total = self.count_resolved(kind, &resolved).await?;
            return Ok(CountResult {
                kind,
                states: Vec::new(),
                total: Some(total),
            });
        }
        if args.filters.state.is_some() {
            return Err(invalid(
                "Usa `filters.state` o `states`, no los dos.",
                "Para contar por estado pon los estados en `states` y quita `state` de los filtros.",
            ));
        }
        if !super::filters::allowed_keys(kind).contains(&"state") {
            return Err(EngineError::Typed(
                ErrorBody::new(
                    ErrorCode::InvalidArgument,
                    format!("{} no se puede contar por estado.", kind.label()),
                    "Quita `states` de la consulta.",
                )
                .with_allowed_values(
                    MarketKind::ALL
                        .iter()
                        .filter(|k| super::filters::allowed_keys(**k).contains(&"state"))
                        .map(|k| k.key().to_string()),
                ),
            ));
        }
        let mut seen: Vec<State> = Vec::new();
        let mut out = Vec::with_capacity(args.states.len());
        let mut all_ok = true;
        let mut total = 0u64;
        for input in &args.states {
            let state = State::normalize(input, StateContext::Filter).and_then(|s| {
                if seen.contains(&s) {
                    Err(invalid(
                        format!("{} aparece más de una vez en `states`.", s.name()),
                        "Escribe cada estado una sola vez.",
                    ))
                } else {
                    seen.push(s);
                    Ok(s)
                }
            });
            let counted = match state {
                Ok(s) => {
                    let mut r = resolved.clone();
                    r.state = Some(s);
                    self.count_resolved(kind, &r).await.map(|n| (s, n))
                }
                Err(e) => Err(e),
            };
            match counted {
                Ok((s, n)) => {
                    total += n;
                    out.push(StateCount {
                        input: input.clone(),
                        state: Some(s.name().to_string()),
                        r#ref: Some(format!("record:state:{:02}", s.code())),
                        ref_label: format!("{} en {}: {n}", kind.label(), s.name()),
                        count: Some(n),
                        error: None,
                    });
                }
                Err(e) => {
                    all_ok = false;
                    out.push(StateCount {
                        input: input.clone(),
                        state: None,
                        r#ref: None,
                        ref_label: format!("«{}» no se pudo contar", input.trim()),
                        count: None,
                        error: Some(e.body()),
                    });
                }
            }
        }
        Ok(CountResult {
            kind,
            states: out,
            total: all_ok.then_some(total),
        })
    }

    /// `market_aggregate`: Adjudicaciones grouped by supplier, buyer, state or year.
    pub async fn aggregate(&self, args: &AggregateArgs) -> EngineResult<AggregateResult> {
        let limit = check_limit(args.limit)?;
        let mut resolved = args.filters.resolve(MarketKind::Awards)?;
        super::filters::resolve_states(&args.states, &mut resolved)?;
        let w = where_for(MarketKind::Awards, &resolved, None, self.store.backend());
        // Group on indexed columns only (a covering index answers it), then fetch a
        // label for the few groups returned, not for every row scanned.
        // `sup` (distinct suppliers) is 1 per supplier group: counting it there would
        // make PostgreSQL sort every row instead of hashing the groups.
        let (key, label, order) = match args.group_by {
            GroupBy::Supplier => (
                "a.supplier_id",
                "coalesce((select s.name from mk_suppliers s where s.id = g.k), \
                 (select x.supplier_name from mk_awards x where x.supplier_id = g.k limit 1))",
                "g.amt desc, g.k",
            ),
            GroupBy::Buyer => (
                "a.buyer",
                "(select coalesce(x.buyer_name, x.buyer) from mk_awards x where x.buyer = g.k limit 1)",
                "g.amt desc, g.k",
            ),
            GroupBy::State => ("a.state_code", "''", "g.amt desc, g.k"),
            GroupBy::Year => ("a.year", "''", "g.k desc"),
        };
        let sql = format!(
            "select g.k as k, {label} as l, g.n as n, g.amt as amt, g.sup as sup from ( \
             select {key} as k, count(*) as n, \
             coalesce(sum(case when a.currency = 'MXN' then a.amount end), 0.0) as amt, \
             {sup} as sup \
             from mk_awards a where {} group by {key} \
             ) g order by {order} limit ?",
            w.sql(),
            sup = match args.group_by {
                GroupBy::Supplier => "cast(1 as bigint)",
                _ => "count(distinct a.supplier_id)",
            },
        );
        let sql = crate::base::store::numbered(&sql);
        let rows = bind(sqlx::query(&sql), &w.binds)
            .bind(i64::from(limit) + 1)
            .fetch_all(self.store.pool())
            .await?;
        let has_more = rows.len() > limit as usize;
        let mut groups = Vec::new();
        for row in rows.iter().take(limit as usize) {
            let n: i64 = row.try_get("n")?;
            let amount: f64 = row.try_get("amt")?;
            let suppliers: i64 = row.try_get("sup")?;
            let (key, r, label) = match args.group_by {
                GroupBy::Supplier => {
                    let id: String = row.try_get("k")?;
                    let name: String = row.try_get("l")?;
                    (id.clone(), rows::company_ref(&id), name)
                }
                GroupBy::Buyer => {
                    let b: String = row.try_get("k")?;
                    let name: String = row.try_get("l")?;
                    (b.clone(), format!("record:buyer:{b}"), name)
                }
                GroupBy::State => {
                    let code: Option<i64> = row.try_get("k")?;
                    let state = code
                        .and_then(|c| u8::try_from(c).ok())
                        .and_then(State::from_code);
                    match state {
                        Some(s) => (
                            s.name().to_string(),
                            format!("record:state:{:02}", s.code()),
                            s.name().to_string(),
                        ),
                        None => (
                            "sin_estado".into(),
                            "record:state:00".into(),
                            "Sin estado registrado".into(),
                        ),
                    }
                }
                GroupBy::Year => {
                    let y: Option<i64> = row.try_get("k")?;
                    let y = y.unwrap_or(0);
                    (
                        y.to_string(),
                        format!("record:year:{y}"),
                        format!("Año {y}"),
                    )
                }
            };
            groups.push(AggregateGroup {
                r#ref: r,
                ref_label: format!(
                    "{label}: {n} adjudicaciones por {}",
                    rows::money(amount, "MXN")
                ),
                key,
                awards: n.max(0) as u64,
                amount_mxn: amount,
                suppliers: suppliers.max(0) as u64,
            });
        }
        let totals_sql = format!(
            "select count(*), coalesce(sum(case when a.currency = 'MXN' then a.amount end), 0.0) from mk_awards a where {}",
            w.sql()
        );
        let totals_sql = crate::base::store::numbered(&totals_sql);
        let t = bind(sqlx::query(&totals_sql), &w.binds)
            .fetch_one(self.store.pool())
            .await?;
        let total_awards: i64 = t.try_get(0)?;
        Ok(AggregateResult {
            group_by: args.group_by,
            shown: groups.len(),
            groups,
            has_more,
            total_awards: total_awards.max(0) as u64,
            total_amount_mxn: t.try_get(1)?,
        })
    }

    /// `market_history`: one RFC over time — awards per year, recent awards, marks and
    /// registrations. A failing check digit is a warning, not a rejection.
    pub async fn history(&self, args: &HistoryArgs) -> EngineResult<HistoryResult> {
        let check = rfc::check(&args.rfc);
        if !check.format_ok {
            return Err(invalid(
                format!("«{}» no tiene formato de RFC.", args.rfc.trim()),
                "Un RFC de persona moral tiene 12 caracteres (3 letras, fecha AAMMDD y homoclave); de persona física, 13.",
            ));
        }
        let key = check.normalized.clone();
        let mut warnings = Vec::new();
        if !check.check_digit_ok {
            warnings.push(check_digit_warning());
        }
        let sql = format!(
            "select {SUPPLIER_COLS} from mk_suppliers s where s.id = ? or s.rfc = ? limit 1"
        );
        let sql = crate::base::store::numbered(&sql);
        let supplier = match sqlx::query(&sql)
            .bind(&key)
            .bind(&key)
            .fetch_optional(self.store.pool())
            .await?
        {
            Some(row) => Some(rows::supplier(&row)?),
            None => None,
        };
        let supplier_id = supplier
            .as_ref()
            .map(|s| s.id.clone())
            .unwrap_or(key.clone());
        let by_year_rows = sqlx::query(
            "select a.year, count(*), coalesce(sum(case when a.currency = 'MXN' then a.amount end), 0.0) \
             from mk_awards a where a.supplier_id = $1 group by a.year order by a.year",
        )
        .bind(&supplier_id)
        .fetch_all(self.store.pool())
        .await?;
        let mut by_year = Vec::new();
        for row in &by_year_rows {
            let year: Option<i64> = row.try_get(0)?;
            let n: i64 = row.try_get(1)?;
            by_year.push(YearStat {
                year: year.unwrap_or(0),
                awards: n.max(0) as u64,
                amount_mxn: row.try_get(2)?,
            });
        }
        let awards = self.awards_of(&supplier_id, 20).await?;
        let marks = self
            .marks_for(std::slice::from_ref(&key))
            .await?
            .remove(&key)
            .unwrap_or_default();
        let permits = self.permits_for(&key).await?;
        if supplier.is_none() && awards.is_empty() && marks.is_empty() && permits.is_empty() {
            warnings.push("No hay Adjudicaciones, Registros ni marcas de riesgo para este RFC en la cobertura cargada.".into());
        }
        let name = supplier
            .as_ref()
            .map(|s| s.name.clone())
            .or_else(|| marks.first().map(|m| m.name.clone()))
            .unwrap_or_else(|| key.clone());
        Ok(HistoryResult {
            r#ref: supplier
                .as_ref()
                .map(|s| s.r#ref.clone())
                .unwrap_or_else(|| rows::company_ref(&key)),
            ref_label: format!("Historial de {name}"),
            rfc: key,
            check_digit_ok: check.check_digit_ok,
            warnings,
            supplier,
            by_year,
            awards,
            marks,
            permits,
        })
    }

    /// `market_compare`: 2 to 5 segments of Adjudicaciones side by side.
    pub async fn compare(&self, args: &CompareArgs) -> EngineResult<CompareResult> {
        if !(2..=5).contains(&args.segments.len()) {
            return Err(invalid(
                format!(
                    "`segments` admite de 2 a 5 segmentos; recibimos {}.",
                    args.segments.len()
                ),
                "Compara entre 2 y 5 segmentos por llamada.",
            ));
        }
        let mut out = Vec::new();
        for seg in &args.segments {
            let label = seg.label.trim();
            if label.is_empty() {
                return Err(invalid(
                    "Cada segmento necesita una etiqueta (`label`).",
                    "Nombra cada segmento, por ejemplo «Jalisco 2023».",
                ));
            }
            let r = seg.filters.resolve(MarketKind::Awards)?;
            let w = where_for(MarketKind::Awards, &r, None, self.store.backend());
            let sql = format!(
                "select count(*), coalesce(sum(case when a.currency = 'MXN' then a.amount end), 0.0), count(distinct a.supplier_id) from mk_awards a where {}",
                w.sql()
            );
            let sql = crate::base::store::numbered(&sql);
            let row = bind(sqlx::query(&sql), &w.binds)
                .fetch_one(self.store.pool())
                .await?;
            let n: i64 = row.try_get(0)?;
            let amount: f64 = row.try_get(1)?;
            let suppliers: i64 = row.try_get(2)?;
            let sql = format!(
                "select a.buyer, count(*), coalesce(sum(case when a.currency = 'MXN' then a.amount end), 0.0) as amt from mk_awards a where {} group by a.buyer order by amt desc limit 3",
                w.sql()
            );
            let sql = crate::base::store::numbered(&sql);
            let buyers = bind(sqlx::query(&sql), &w.binds)
                .fetch_all(self.store.pool())
                .await?;
            let mut top_buyers = Vec::new();
            for b in &buyers {
                let c: i64 = b.try_get(1)?;
                top_buyers.push(BuyerShare {
                    buyer: b.try_get(0)?,
                    awards: c.max(0) as u64,
                    amount_mxn: b.try_get(2)?,
                });
            }
            out.push(SegmentStats {
                label: label.to_string(),
                awards: n.max(0) as u64,
                amount_mxn: amount,
                avg_amount_mxn: (n > 0).then(|| amount / n as f64),
                suppliers: suppliers.max(0) as u64,
                top_buyers,
            });
        }
        Ok(CompareResult { segments: out })
    }

    /// `market_screen`: risk marks for 1..=50 RFCs. Bad check digits and bad formats
    /// are flagged per row as warnings; only the list size is a hard error.
    pub async fn screen(&self, args: &ScreenArgs) -> EngineResult<ScreenResult> {
        if args.rfcs.is_empty() || args.rfcs.len() > MAX_SCREEN_RFCS {
            return Err(invalid(
                format!(
                    "`rfcs` admite de 1 a {MAX_SCREEN_RFCS} RFC; recibimos {}.",
                    args.rfcs.len()
                ),
                "Revisa hasta 50 RFC por llamada y divide listas más largas.",
            ));
        }
        let checks: Vec<rfc::RfcCheck> = args.rfcs.iter().map(|r| rfc::check(r)).collect();
        let keys: Vec<String> = checks
            .iter()
            .filter(|c| c.format_ok)
            .map(|c| c.normalized.clone())
            .collect();
        let marks = self.marks_for(&keys).await?;
        let mut known = std::collections::HashSet::new();
        if !keys.is_empty() {
            let placeholders = vec!["?"; keys.len()].join(",");
            let sql = format!(
                "select coalesce(rfc, id) from mk_suppliers where rfc in ({placeholders}) or id in ({placeholders})"
            );
            let sql = crate::base::store::numbered(&sql);
            let mut q = sqlx::query(&sql);
            for k in keys.iter().chain(keys.iter()) {
                q = q.bind(k.as_str());
            }
            for row in q.fetch_all(self.store.pool()).await? {
                let k: String = row.try_get(0)?;
                known.insert(k);
            }
        }
        let mut results = Vec::new();
        let mut with_marks = 0;
        for (input, c) in args.rfcs.iter().zip(checks) {
            let mut warnings = Vec::new();
            if !c.format_ok {
                warnings.push("El RFC no tiene un formato válido; no se pudo revisar.".to_string());
            } else if !c.check_digit_ok {
                warnings.push(check_digit_warning());
            }
            let m = if c.format_ok {
                marks.get(&c.normalized).cloned().unwrap_or_default()
            } else {
                Vec::new()
            };
            let adverse = m
                .iter()
                .any(|x| MarkKind::from_key(&x.mark_kind).is_some_and(MarkKind::is_adverse));
            let risk_level = if !c.format_ok {
                "no_verificable"
            } else if adverse {
                "con_marcas"
            } else if !m.is_empty() {
                "con_marcas_no_vigentes"
            } else {
                "sin_marcas"
            };
            if !m.is_empty() {
                with_marks += 1;
            }
            let label = match risk_level {
                "con_marcas" => format!("{}: con marcas de riesgo vigentes", c.normalized),
                "con_marcas_no_vigentes" => {
                    format!("{}: marcas de riesgo no vigentes", c.normalized)
                }
                "no_verificable" => format!("{}: formato de RFC inválido", c.normalized),
                _ => format!("{}: sin marcas de riesgo", c.normalized),
            };
            results.push(ScreenRow {
                r#ref: rows::company_ref(&c.normalized),
                ref_label: label,
                input: input.clone(),
                known_supplier: known.contains(&c.normalized),
                rfc: c.normalized,
                format_ok: c.format_ok,
                check_digit_ok: c.check_digit_ok,
                warnings,
                risk_level: risk_level.into(),
                marks: m,
            });
        }
        Ok(ScreenResult {
            results,
            with_marks,
        })
    }
}

fn check_digit_warning() -> String {
    "El dígito verificador del RFC no coincide; puede ser un error de captura en la fuente. Se revisó de todos modos.".into()
}
