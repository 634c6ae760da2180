//! `market_history`, `market_compare` and `market_screen`: one RFC over time, segments
//! of Adjudicaciones side by side, and a list of RFCs screened for risk marks.

use super::*;

impl Market {
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
        let by_year_rows: Vec<(Option<i64>, i64, f64)> = sqlx::query_as(
            "select a.year, count(*), coalesce(sum(case when a.currency = 'MXN' then a.amount end), 0.0) \
             from mk_awards a where a.supplier_id = $1 group by a.year order by a.year",
        )
        .bind(&supplier_id)
        .fetch_all(self.store.pool())
        .await?;
        let mut by_year = Vec::new();
        for (year, n, amount_mxn) in by_year_rows {
            by_year.push(YearStat {
                year: year.unwrap_or(0),
                awards: n.max(0) as u64,
                amount_mxn,
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
            let (n, amount, suppliers): (i64, f64, i64) = sqlx::FromRow::from_row(&row)?;
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
                let (buyer, c, amount_mxn): (String, i64, f64) = sqlx::FromRow::from_row(b)?;
                top_buyers.push(BuyerShare {
                    buyer,
                    awards: c.max(0) as u64,
                    amount_mxn,
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
            let placeholders = crate::base::store::marks(keys.len());
            let sql = format!(
                "select coalesce(rfc, id) from mk_suppliers where rfc in ({placeholders}) or id in ({placeholders})"
            );
            let sql = crate::base::store::numbered(&sql);
            let mut q = sqlx::query(&sql);
            for k in keys.iter().chain(keys.iter()) {
                q = q.bind(k.as_str());
            }
            for row in q.fetch_all(self.store.pool()).await? {
                let (k,): (String,) = sqlx::FromRow::from_row(&row)?;
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
