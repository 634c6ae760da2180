//! `market_count` and `market_aggregate`: exact counts per state and grouped sums of
//! Adjudicaciones.

use super::*;

impl Market {
    async fn count_resolved(&self, kind: MarketKind, r: &Resolved) -> EngineResult<u64> {
        let (from, _, _) = table(kind);
        let w = where_for(kind, r, None, self.store.backend());
        let sql = format!("select count(*) from {from} where {}", w.sql());
        let sql = crate::base::store::numbered(&sql);
        let row = bind(sqlx::query(&sql), &w.binds)
            .fetch_one(self.store.pool())
            .await?;
        let (n,): (i64,) = sqlx::FromRow::from_row(&row)?;
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
        if !crate::market::filters::allowed_keys(kind).contains(&"state") {
            return Err(EngineError::Typed(
                ErrorBody::new(
                    ErrorCode::InvalidArgument,
                    format!("{} no se puede contar por estado.", kind.label()),
                    "Quita `states` de la consulta.",
                )
                .with_allowed_values(
                    MarketKind::ALL
                        .iter()
                        .filter(|k| crate::market::filters::allowed_keys(**k).contains(&"state"))
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
        crate::market::filters::resolve_states(&args.states, &mut resolved)?;
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
            let Group {
                n,
                amt: amount,
                sup: suppliers,
            } = sqlx::FromRow::from_row(row)?;
            // The key's type depends on the grouping; it and the label come first.
            let (key, r, label) = match args.group_by {
                GroupBy::Supplier => {
                    let (id, name): (String, String) = sqlx::FromRow::from_row(row)?;
                    (id.clone(), rows::company_ref(&id), name)
                }
                GroupBy::Buyer => {
                    let (b, name): (String, String) = sqlx::FromRow::from_row(row)?;
                    (b.clone(), format!("record:buyer:{b}"), name)
                }
                GroupBy::State => {
                    let (code,): (Option<i64>,) = sqlx::FromRow::from_row(row)?;
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
                    let (y,): (Option<i64>,) = sqlx::FromRow::from_row(row)?;
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
        let (total_awards, total_amount_mxn): (i64, f64) = sqlx::FromRow::from_row(&t)?;
        Ok(AggregateResult {
            group_by: args.group_by,
            shown: groups.len(),
            groups,
            has_more,
            total_awards: total_awards.max(0) as u64,
            total_amount_mxn,
        })
    }
}

/// A group's figures in `market_aggregate` (its key and label are read by position).
#[derive(sqlx::FromRow)]
struct Group {
    n: i64,
    amt: f64,
    sup: i64,
}
