//! `market_count`: each state admitted and charged on its own, a failing state a row
//! with its error, and the envelope with the total.

use super::*;
/// Admits one read and checks that one more crédito de inteligencia is available
/// (`pending` are already promised in this call).
async fn admit_one(ctx: &ToolCtx, pending: usize) -> EngineResult<()> {
    let now = now_ms();
    let billing = &ctx.engine.billing;
    let left = billing
        .admit_reads_and_balance(&ctx.caller, 1, now)
        .await?
        .left();
    let need = pending as i64 + 1;
    if left < need {
        return Err(crate::billing::insufficient(
            Ledger::Intelligence,
            1,
            left - pending as i64,
        ));
    }
    Ok(())
}

fn count_error_row(i: usize, input: &str, e: &EngineError) -> StateCount {
    StateCount {
        input: input.to_owned(),
        state: None,
        r#ref: Some(format!("record:count:{}", i + 1)),
        ref_label: format!("«{}» no se pudo contar", input.trim()),
        count: None,
        error: Some(e.body()),
    }
}

pub(super) async fn count(ctx: ToolCtx, args: CountArgs) -> EngineResult<ToolOutput> {
    let market = &ctx.engine.market;
    let kind = args.kind.unwrap_or(MarketKind::Suppliers);
    let mut charges = Vec::new();
    let result = if args.states.is_empty() || args.states.len() > MAX_COUNT_STATES {
        // One count (or the domain's typed error for too many states).
        if args.states.is_empty() {
            args.filters.resolve(kind)?;
            admit_one(&ctx, 0).await?;
        }
        let r = market.count(&args).await?;
        charges.push(intelligence("market_count", "total"));
        r
    } else {
        // Whole-call checks first (bad filters, `state` with `states`, a kind without
        // states): those fail the call before anything is admitted. The domain rejects
        // the last two before touching SQL.
        args.filters.resolve(kind)?;
        if args.filters.state.is_some() || !allowed_keys(kind).contains(&"state") {
            market.count(&args).await?;
            return Err(EngineError::Internal(
                "market_count accepted states it should reject".into(),
            ));
        }
        let mut seen: Vec<State> = Vec::new();
        let mut out = Vec::with_capacity(args.states.len());
        for (i, input) in args.states.iter().enumerate() {
            let state = State::normalize(input, StateContext::Filter).and_then(|s| {
                if seen.contains(&s) {
                    Err(market::filters::invalid(
                        format!("{} aparece más de una vez en `states`.", s.name()),
                        "Escribe cada estado una sola vez.",
                    ))
                } else {
                    seen.push(s);
                    Ok(s)
                }
            });
            let state = match state {
                Ok(s) => s,
                Err(e) => {
                    out.push(count_error_row(i, input, &e));
                    continue;
                }
            };
            if let Err(e) = admit_one(&ctx, charges.len()).await {
                out.push(count_error_row(i, input, &e));
                continue;
            }
            let one = CountArgs {
                kind: args.kind,
                filters: args.filters.clone(),
                states: vec![input.clone()],
            };
            match market.count(&one).await {
                Ok(mut r) if r.states.len() == 1 && r.states[0].count.is_some() => {
                    charges.push(intelligence(
                        "market_count",
                        format!("state:{:02}", state.code()),
                    ));
                    out.push(r.states.remove(0));
                }
                Ok(mut r) => {
                    if let Some(s) = r.states.pop() {
                        out.push(s);
                    }
                }
                Err(e) => out.push(count_error_row(i, input, &e)),
            }
        }
        let total = out.iter().map(|s| s.count).sum::<Option<u64>>();
        CountResult {
            kind,
            states: out,
            total,
        }
    };
    Ok(count_envelope(&result, charges))
}

fn count_envelope(r: &CountResult, charges: Vec<ChargeSpec>) -> ToolOutput {
    let label = match r.total {
        Some(n) => format!("{} que cumplen los filtros: {n}", r.kind.label()),
        None => format!(
            "{}: el total no está disponible porque un estado no se pudo contar",
            r.kind.label()
        ),
    };
    let mut rows = vec![ResultRow::new("record:count:total", label)
        .with("kind", r.kind)
        .with("total", r.total)];
    for s in &r.states {
        let mut row = ResultRow::new(
            s.r#ref
                .clone()
                .unwrap_or_else(|| "record:count:state".into()),
            s.ref_label.clone(),
        )
        .with("input", &s.input)
        .with("state", &s.state)
        .with("count", s.count);
        if let Some(e) = &s.error {
            row = row.with("error", e);
        }
        rows.push(row);
    }
    let mut env = Envelope::rows(rows);
    if r.total.is_none() {
        env.status = ResultStatus::Incomplete;
        env.next_action = Some(
            "Corrige o quita los estados con error y vuelve a contar; no afirmes un total.".into(),
        );
    }
    ToolOutput {
        envelope: env,
        charges,
    }
}
